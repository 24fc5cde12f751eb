/*
 * Reading traces: a GPU's training and power CSVs, parsed, validated and
 * sorted for the join. See wattsim/trace.h for the semantics; the join
 * into a job's knob table is io/trace_join.c, which calls this file's
 * accessors (never the reverse).
 *
 * Map, in file order:
 *   names      dataset, network and optimizer names interned to ids (a
 *              hash table), so rows compare ints
 *   paths      where a GPU's two CSVs are (ws_trace_path) and which GPUs
 *              a folder has traces for (ws_trace_gpus)
 *   fields     a header mapped to the columns wanted; one field to a
 *              typed, range-checked value, the error naming FILE:LINE and
 *              column
 *   readers    the training and power CSVs into rows (read_rows; a key
 *              seen twice, a duplicate power row or run, is refused);
 *              ws_traces_load_uncached sorts them by key, finds MaxPower
 *              (max_joined_power) and checks one gpus_per_job per job;
 *              ws_traces_free; the join-work counter (ws_join_work)
 *   accessors  what the join and trace check read of loaded traces: the
 *              rows of one (dataset, network, optimizer)
 *              (ws_traces_train_range, ws_traces_power_range), a name's
 *              id (ws_traces_name_id)
 */
#include "wattsim/trace.h"
#include "wattsim/hash.h"
#include "wattsim/name.h"
#include "wattsim/npreduce.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ names */

/* Names are interned through a hash index (wattsim/hash.h): O(1) expected
 * per row, however many distinct names a trace has (a scan of the names
 * made reading a trace of 160k jobs quadratic). */
typedef struct name_probe {
    const ws_names *n;
    const char *s;
} name_probe;

static int same_name(const void *ctx, size_t stored, size_t probe)
{
    (void)probe;
    const name_probe *q = ctx;
    return strcmp(q->n->s[stored], q->s) == 0;
}

static int intern(ws_names *n, const char *s)
{
    name_probe q = {n, s};
    uint64_t h = ws_hash_str(s, 0);
    size_t at = ws_hindex_find(&n->index, h, same_name, &q, 0);
    if (at != WS_HNONE) return (int)at;
    if (n->n >= INT_MAX) return -1;
    if (n->n == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 16;
        char **p = realloc(n->s, cap * sizeof *p);
        if (!p) return -1;
        n->s = p;
        n->cap = cap;
    }
    if (!(n->s[n->n] = strdup(s))) return -1;
    if (ws_hindex_add(&n->index, h, same_name, &q, n->n) == WS_HNOMEM) {
        free(n->s[n->n]);
        return -1;
    }
    return (int)n->n++;
}

static int lookup(const ws_names *n, const char *s)
{
    name_probe q = {n, s};
    size_t at = ws_hindex_find(&n->index, ws_hash_str(s, 0), same_name, &q, 0);
    return at == WS_HNONE ? -1 : (int)at;
}

/* ------------------------------------------------------------ paths */

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* As ws_trace_path; *missing tells "neither file exists" apart from the
 * other failures. */
static char *find_trace(const char *dir, const char *name, int *missing, ws_error *err)
{
    *missing = 0;
    size_t len = strlen(dir) + strlen(name) + 16;
    char *plain = malloc(len), *gz = malloc(len);
    if (!plain || !gz) {
        free(plain); free(gz);
        ws_fail(err, "%s: out of memory", dir);
        return NULL;
    }
    snprintf(plain, len, "%s/%s.csv", dir, name);
    snprintf(gz, len, "%s/%s.csv.gz", dir, name);
    int a = exists(plain), b = exists(gz);
    if (a && b) {
        ws_fail(err, "%s: both %s.csv and %s.csv.gz exist; keep one", dir, name, name);
        free(plain); free(gz);
        return NULL;
    }
    if (!a && !b) {
        *missing = 1;
        ws_fail(err, "%s: no %s.csv or %s.csv.gz (run scripts/fetch-traces,"
                " or point --traces / WATTSIM_TRACES at the trace folder)",
                dir, name, name);
        free(plain); free(gz);
        return NULL;
    }
    if (a) { free(gz); return plain; }
    free(plain);
    return gz;
}

char *ws_trace_path(const char *dir, const char *name, ws_error *err)
{
    int missing;
    return find_trace(dir, name, &missing, err);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ws_trace_gpus(const char *dir, char ***out, ws_error *err)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return ws_fail(err, "%s: cannot open trace folder: %s (run"
                       " scripts/fetch-traces or pass --traces DIR)", dir,
                       strerror(errno));
    char **v = NULL;
    int n = 0;
    struct dirent *e;
    const char *pre = "summary_power_";
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        if (strncmp(s, pre, strlen(pre)) != 0) continue;
        s += strlen(pre);
        const char *dot = strstr(s, ".csv");
        if (!dot || dot == s || (strcmp(dot, ".csv") && strcmp(dot, ".csv.gz")))
            continue;
        char *name = strndup(s, (size_t)(dot - s));
        /* Only GPUs --gpu can name (safe names): a file name with control
         * characters in a received folder is never printed. */
        char why[64];
        if (name && ws_name_check(name, why, sizeof why)) { free(name); continue; }
        char **p = name ? realloc(v, (size_t)(n + 1) * sizeof *p) : NULL;
        if (!p) {
            free(name);
            for (int i = 0; i < n; i++) free(v[i]);
            free(v);
            closedir(d);
            return ws_fail(err, "%s: out of memory", dir);
        }
        v = p;
        v[n++] = name;
    }
    closedir(d);
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_str);
    int u = 0;                  /* NAME.csv and NAME.csv.gz: one GPU */
    for (int i = 0; i < n; i++) {
        if (u && !strcmp(v[u - 1], v[i])) free(v[i]);
        else v[u++] = v[i];
    }
    *out = v;
    return u;
}

/* ------------------------------------------------------------ fields */

/* A CSV header mapped onto the columns a trace needs. */
typedef struct column {
    const char *name;
    int required;
    int index;                 /* position in the file, -1 if absent */
} column;

static int map_header(ws_csv *c, column *cols, size_t ncols, ws_error *err)
{
    const char *path = ws_csv_path(c);
    int r = ws_csv_next(c, err);
    if (r < 0) return -1;
    if (r == 0) return ws_fail(err, "%s:1: empty file (expected a header line)", path);
    for (size_t k = 0; k < ncols; k++) cols[k].index = -1;
    size_t nf = ws_csv_nfields(c);
    for (size_t i = 0; i < nf; i++) {
        const char *h = ws_csv_field(c, i);
        size_t k;
        for (k = 0; k < ncols; k++)
            if (strcmp(cols[k].name, h) == 0) break;
        if (k == ncols) {
            char want[256] = "";
            for (size_t j = 0; j < ncols; j++) {
                strncat(want, cols[j].name, sizeof want - strlen(want) - 1);
                if (j + 1 < ncols) strncat(want, ", ", sizeof want - strlen(want) - 1);
            }
            return ws_fail(err, "%s:%ld: unknown column '%s' (expected: %s)",
                           path, ws_csv_line(c), h, want);
        }
        if (cols[k].index >= 0)
            return ws_fail(err, "%s:%ld: column '%s' appears twice", path,
                           ws_csv_line(c), h);
        cols[k].index = (int)i;
    }
    for (size_t k = 0; k < ncols; k++)
        if (cols[k].required && cols[k].index < 0)
            return ws_fail(err, "%s:%ld: missing column '%s'", path,
                           ws_csv_line(c), cols[k].name);
    return (int)nf;
}

static const char *field(ws_csv *c, const column *col)
{
    return ws_csv_field(c, (size_t)col->index);
}

static int bad(ws_csv *c, const column *col, const char *what, ws_error *err)
{
    char shown[160];
    return ws_fail(err, "%s:%ld: %s: %s, got \"%s\"", ws_csv_path(c),
                   ws_csv_line(c), col->name, what,
                   ws_name_show(field(c, col), shown, sizeof shown));
}

static int text_field(ws_csv *c, const column *col, ws_names *names, int *id,
                      ws_error *err)
{
    const char *s = field(c, col);
    if (!*s) return bad(c, col, "must not be empty", err);
    char why[64], what[160];
    if (ws_label_check(s, why, sizeof why)) {
        snprintf(what, sizeof what, "%s (" WS_LABEL_RULE ")", why);
        return bad(c, col, what, err);
    }
    if ((*id = intern(names, s)) < 0)
        return ws_fail(err, "%s:%ld: out of memory", ws_csv_path(c), ws_csv_line(c));
    return 0;
}

/* A finite number; *v = the value as pandas reads it (ws_pd_strtod: the
 * published simulator's numbers), after strtod's checks. */
static int num_field(ws_csv *c, const column *col, double *v, ws_error *err)
{
    const char *s = field(c, col);
    char *end;
    if (!strcasecmp(s, "nan") || !strcasecmp(s, "inf") || !strcasecmp(s, "-inf")
        || !strcasecmp(s, "infinity"))
        return bad(c, col, "must be a finite number", err);
    errno = 0;
    *v = strtod(s, &end);
    if (!ws_csv_is_decimal(s) || *end || end == s) return bad(c, col, "must be a number", err);
    if (!isfinite(*v)) return bad(c, col, "must be a finite number", err);
    if (errno == ERANGE) return bad(c, col, "is out of range", err);
    *v = ws_pd_strtod(s);
    if (!isfinite(*v)) return bad(c, col, "is out of range", err);
    return 0;
}

static int pos_num_field(ws_csv *c, const column *col, double *v, ws_error *err)
{
    if (num_field(c, col, v, err)) return -1;
    if (!(*v > 0)) return bad(c, col, "must be positive", err);
    return 0;
}

/* A positive integer (written without a fraction or exponent). */
static int pos_int_field(ws_csv *c, const column *col, int *v, ws_error *err)
{
    const char *s = field(c, col);
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!(*s >= '0' && *s <= '9') || *end || errno == ERANGE || x <= 0 || x > INT_MAX)
        return bad(c, col, "must be a positive integer", err);
    *v = (int)x;
    return 0;
}

/* ------------------------------------------------------------ readers */

enum { T_DATASET, T_NETWORK, T_BS, T_OPT, T_LR, T_RUN, T_METRIC, T_EPOCH, T_N };
enum { P_DATASET, P_NETWORK, P_BS, P_OPT, P_PL, P_TIME, P_POWER, P_ERROR, P_GPUS, P_MAXP, P_N };

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The rows of one trace file: the header mapped onto `cols`, then
 * parse_row() for every record, which fills row (a slot of `size` bytes
 * appended to *rows). Field counts and "no rows" are checked here, and
 * duplicates as the rows stream in (a hash of each row's key, `kind`):
 * a file of one row repeated fails on its second row, in constant memory,
 * rather than after a gigabyte of rows has been stored and sorted. */
typedef int (*row_parser)(ws_traces *t, ws_csv *c, const column *cols, void *row,
                          ws_error *err);

typedef struct row_kind {
    row_parser parse;
    uint64_t (*hash)(const void *row);
    int (*same)(const void *a, const void *b);
    /* The error for `later` repeating `earlier`'s key. */
    int (*dup)(const ws_traces *t, const char *path, const void *earlier,
               const void *later, ws_error *err);
} row_kind;

typedef struct rows_ref {
    void *const *rows;
    size_t size;
    const row_kind *kind;
} rows_ref;

static int same_row(const void *ctx, size_t a, size_t b)
{
    const rows_ref *r = ctx;
    const char *base = *r->rows;
    return r->kind->same(base + a * r->size, base + b * r->size);
}

static int read_rows(ws_traces *t, const char *path, const ws_csv_limits *lim,
                     column *cols, size_t ncols, void **rows, size_t *n,
                     size_t size, const row_kind *kind, ws_error *err)
{
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    ws_hindex seen = {0};
    const rows_ref ref = {rows, size, kind};
    int rc = -1, nf = map_header(c, cols, ncols, err);
    size_t cap = 0;
    if (nf < 0) goto out;
    for (;;) {
        int r = ws_csv_next(c, err);
        if (r < 0) goto out;
        if (r == 0) break;
        if ((int)ws_csv_nfields(c) != nf) {
            ws_fail(err, "%s:%ld: %zu field%s, but the header has %d", path,
                    ws_csv_line(c), ws_csv_nfields(c), ws_s(ws_csv_nfields(c)), nf);
            goto out;
        }
        if (grow(rows, &cap, *n, size)) {
            ws_fail(err, "%s: out of memory", path);
            goto out;
        }
        char *row = (char *)*rows + *n * size;
        /* padding too: loaded rows are a function of the files, byte for
         * byte (a cached copy compares equal to a fresh load) */
        memset(row, 0, size);
        if (kind->parse(t, c, cols, row, err)) goto out;
        size_t first = ws_hindex_add(&seen, kind->hash(row), same_row, &ref, *n);
        if (first == WS_HNOMEM) {
            ws_fail(err, "%s: out of memory", path);
            goto out;
        }
        if (first != WS_HNONE) {
            kind->dup(t, path, (char *)*rows + first * size, row, err);
            goto out;
        }
        (*n)++;
    }
    if (*n == 0) {
        ws_fail(err, "%s:2: no rows after the header", path);
        goto out;
    }
    rc = 0;
out:
    ws_hindex_free(&seen);
    ws_csv_close(c);
    return rc;
}

/* Keys: a power row's (dataset, network, optimizer, batch size, limit), a
 * train row's (dataset, network, optimizer, target metric, batch size,
 * run). */
static uint64_t power_hash(const void *p)
{
    const ws_power_row *r = p;
    const int k[5] = {r->dataset, r->network, r->optimizer, r->bs, r->pl};
    return ws_hash(k, sizeof k, 0);
}

static int power_same(const void *a, const void *b)
{
    const ws_power_row *x = a, *y = b;
    return x->dataset == y->dataset && x->network == y->network
        && x->optimizer == y->optimizer && x->bs == y->bs && x->pl == y->pl;
}

static int power_dup(const ws_traces *t, const char *path, const void *earlier,
                     const void *later, ws_error *err)
{
    (void)t;
    const ws_power_row *a = earlier, *b = later;
    return ws_fail(err, "%s:%ld: duplicate power row (same dataset, network, optimizer,"
                   " batch_size %d and power_limit %d as line %ld)", path,
                   b->line, b->bs, b->pl, a->line);
}

static uint64_t train_hash(const void *p)
{
    const ws_train_row *r = p;
    const int k[4] = {r->dataset, r->network, r->optimizer, r->bs};
    const double m = r->target_metric == 0 ? 0.0 : r->target_metric;   /* -0 is 0 */
    const long run = r->run;
    return ws_hash(&run, sizeof run, ws_hash(&m, sizeof m, ws_hash(k, sizeof k, 0)));
}

static int train_same(const void *a, const void *b)
{
    const ws_train_row *x = a, *y = b;
    return x->dataset == y->dataset && x->network == y->network
        && x->optimizer == y->optimizer && x->target_metric == y->target_metric
        && x->bs == y->bs && x->run == y->run;
}

static int train_dup(const ws_traces *t, const char *path, const void *earlier,
                     const void *later, ws_error *err)
{
    (void)t;
    const ws_train_row *a = earlier, *b = later;
    return ws_fail(err, "%s:%ld: duplicate run (same workload, batch_size %d, run %ld"
                   " and target_metric %g as line %ld)", path, b->line, b->bs, b->run,
                   b->target_metric, a->line);
}

/* A number within [lo, hi] (both finite and positive); outside, `what`
 * says the bounds and why they are there. */
static int bounded_field(ws_csv *c, const column *col, double lo, double hi,
                         const char *what, double *v, ws_error *err)
{
    if (pos_num_field(c, col, v, err)) return -1;
    return *v >= lo && *v <= hi ? 0 : bad(c, col, what, err);
}

static int train_row(ws_traces *t, ws_csv *c, const column *cols, void *p,
                     ws_error *err)
{
    ws_train_row *row = p;
    memset(row, 0, sizeof *row);       /* padding too, as power_row */
    double run;
    if (text_field(c, &cols[T_DATASET], &t->names, &row->dataset, err)
        || text_field(c, &cols[T_NETWORK], &t->names, &row->network, err)
        || text_field(c, &cols[T_OPT], &t->names, &row->optimizer, err)
        || pos_int_field(c, &cols[T_BS], &row->bs, err)
        || num_field(c, &cols[T_RUN], &run, err)
        || num_field(c, &cols[T_METRIC], &row->target_metric, err))
        return -1;
    if (run != floor(run) || fabs(run) > 1e15)
        return bad(c, &cols[T_RUN], "must be an integer", err);
    row->run = (long)run;
    /* Never reached: an empty field, or "nan" as pandas writes it (the
     * published traces use the latter). */
    const char *te = field(c, &cols[T_EPOCH]);
    if (*te == '\0' || strcasecmp(te, "nan") == 0)
        row->target_epoch = INFINITY;
    else if (pos_num_field(c, &cols[T_EPOCH], &row->target_epoch, err))
        return -1;
    else if (row->target_epoch < 1)
        return bad(c, &cols[T_EPOCH], "must be at least 1 (epochs count from 1; leave it"
                   " empty when the run never reaches the target)", err);
    row->line = ws_csv_line(c);
    return 0;
}

static int power_row(ws_traces *t, ws_csv *c, const column *cols, void *p,
                     ws_error *err)
{
    ws_power_row *row = p;
    /* padding too: rows are compared and copied as bytes (the trace cache,
     * its tests), and must be the same bytes for the same file */
    memset(row, 0, sizeof *row);
    if (text_field(c, &cols[P_DATASET], &t->names, &row->dataset, err)
        || text_field(c, &cols[P_NETWORK], &t->names, &row->network, err)
        || text_field(c, &cols[P_OPT], &t->names, &row->optimizer, err)
        || pos_int_field(c, &cols[P_BS], &row->bs, err)
        || pos_int_field(c, &cols[P_PL], &row->pl, err))
        return -1;
    if (row->pl > WS_MAX_POWER_LIMIT)
        return bad(c, &cols[P_PL], "must be at most 100000 W (no GPU, nor a rack of"
                   " them, is limited above it)", err);
    /* See WS_MIN_TIME_PER_EPOCH in wattsim/trace.h: physical bounds, so
     * that no time, energy or cost derived from a row underflows to 0 or
     * overflows. */
    if (bounded_field(c, &cols[P_TIME], WS_MIN_TIME_PER_EPOCH, WS_MAX_TIME_PER_EPOCH,
                      "must be from 0.001 s to 31557600 s (1 ms to a year: no epoch of"
                      " real training is shorter or longer)", &row->time, err)
        || bounded_field(c, &cols[P_POWER], WS_MIN_AVERAGE_POWER, WS_MAX_AVERAGE_POWER,
                         "must be from 1 W to 100000 W (no GPU computes on less than 1 W,"
                         " and 100 kW is a rack of them)", &row->power, err))
        return -1;
    /* Optional (written by trace import power); empty or absent: unknown. */
    row->energy_error = NAN;
    if (cols[P_ERROR].index >= 0 && *field(c, &cols[P_ERROR])) {
        if (num_field(c, &cols[P_ERROR], &row->energy_error, err)) return -1;
        if (!(row->energy_error >= 0 && row->energy_error <= 1000))
            return bad(c, &cols[P_ERROR], "must be from 0 to 1000 (a fraction of the"
                       " energy: 0.01 is 1 %)", err);
    }
    row->gpus = 1;
    if (cols[P_GPUS].index >= 0) {
        if (pos_int_field(c, &cols[P_GPUS], &row->gpus, err)) return -1;
        if (row->gpus > WS_MAX_GPUS_PER_JOB)
            return bad(c, &cols[P_GPUS], "must be at most 100000 (average_power sums"
                       " the job's GPUs, at least 1 W each, up to 100 kW)", err);
    }
    /* Optional (written by trace import power for a node of mixed models):
     * the job's MaxPower, at least its largest limit (one of its GPUs can
     * run at it) and at most 100 kW a GPU. */
    row->job_max_power = 0;
    if (cols[P_MAXP].index >= 0) {
        if (cols[P_GPUS].index < 0)
            return bad(c, &cols[P_MAXP], "needs the column gpus_per_job (max_power is"
                       " the sum of the limits of the job's GPUs: say how many)", err);
        if (num_field(c, &cols[P_MAXP], &row->job_max_power, err)) return -1;
        if (!(row->job_max_power >= row->pl
              && row->job_max_power <= (double)WS_MAX_POWER_LIMIT * row->gpus))
            return bad(c, &cols[P_MAXP], "must be from the row's power_limit to 100000 W"
                       " x gpus_per_job (the sum of the job's GPUs' own largest limits)",
                       err);
    }
    row->line = ws_csv_line(c);
    return 0;
}

static int read_train(ws_traces *t, const ws_csv_limits *lim, ws_error *err)
{
    column cols[T_N] = {
        {"dataset", 1, -1}, {"network", 1, -1}, {"batch_size", 1, -1},
        {"optimizer", 1, -1}, {"learning_rate", 0, -1}, {"run", 1, -1},
        {"target_metric", 1, -1}, {"target_epoch", 1, -1},
    };
    static const row_kind kind = {train_row, train_hash, train_same, train_dup};
    return read_rows(t, t->train_path, lim, cols, T_N, (void **)&t->train,
                     &t->n_train, sizeof *t->train, &kind, err);
}

static int read_power(ws_traces *t, const ws_csv_limits *lim, ws_error *err)
{
    column cols[P_N] = {
        {"dataset", 1, -1}, {"network", 1, -1}, {"batch_size", 1, -1},
        {"optimizer", 1, -1}, {"power_limit", 1, -1},
        {"time_per_epoch", 1, -1}, {"average_power", 1, -1},
        {"energy_error", 0, -1},
        {"gpus_per_job", 0, -1},
        {"max_power", 0, -1},
    };
    static const row_kind kind = {power_row, power_hash, power_same, power_dup};
    int rc = read_rows(t, t->power_path, lim, cols, P_N, (void **)&t->power,
                       &t->n_power, sizeof *t->power, &kind, err);
    /* a workload's own gpus_per_job must agree with the column, if any */
    t->has_gpus_column = cols[P_GPUS].index >= 0;
    return rc;
}

/* Order rows by key so that duplicates are neighbours and lookups can
 * binary-search. */
/* Work done by the joins (comparisons, search and scan steps), for the test
 * that checks they grow as n log n; relaxed: only a count. */
static _Atomic unsigned long long join_work;

unsigned long long ws_join_work(void) { return join_work + ws_hash_work(); }
void ws_join_work_add(unsigned long long n) { join_work += n; }

static int cmp_power(const void *a, const void *b)
{
    join_work++;
    const ws_power_row *x = a, *y = b;
    if (x->dataset != y->dataset) return x->dataset < y->dataset ? -1 : 1;
    if (x->network != y->network) return x->network < y->network ? -1 : 1;
    if (x->optimizer != y->optimizer) return x->optimizer < y->optimizer ? -1 : 1;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    if (x->pl != y->pl) return x->pl < y->pl ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Train rows by (dataset, network, optimizer, target metric, batch size),
 * a batch size's runs in file order (duplicate runs are refused as read). */
static int cmp_train_lines(const void *a, const void *b)
{
    join_work++;
    const ws_train_row *x = a, *y = b;
    if (x->dataset != y->dataset) return x->dataset < y->dataset ? -1 : 1;
    if (x->network != y->network) return x->network < y->network ? -1 : 1;
    if (x->optimizer != y->optimizer) return x->optimizer < y->optimizer ? -1 : 1;
    if (x->target_metric != y->target_metric)
        return x->target_metric < y->target_metric ? -1 : 1;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* (dataset, network, optimizer, batch size) of a train row, as a power
 * row's key, sorted and unique: the train side of the joins. */
static int cmp_key(const void *a, const void *b)
{
    join_work++;
    const ws_power_row *x = a, *y = b;
    if (x->dataset != y->dataset) return x->dataset < y->dataset ? -1 : 1;
    if (x->network != y->network) return x->network < y->network ? -1 : 1;
    if (x->optimizer != y->optimizer) return x->optimizer < y->optimizer ? -1 : 1;
    return (x->bs > y->bs) - (x->bs < y->bs);
}

/* MaxPower: the highest power limit of any power row that joins a train
 * row, by a binary search of each power row's key among the train keys:
 * n log n (it was a scan of the train rows per power row). */
static int max_joined_power(ws_traces *t)
{
    ws_power_row *keys = malloc((t->n_train + 1) * sizeof *keys);
    if (!keys) return -1;
    size_t n = 0;
    for (size_t j = 0; j < t->n_train; j++) {
        const ws_train_row *r = &t->train[j];
        keys[n++] = (ws_power_row){.dataset = r->dataset, .network = r->network, .optimizer = r->optimizer, .bs = r->bs};
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    t->max_power = 0;
    for (size_t i = 0; i < t->n_power; i++) {
        const ws_power_row *p = &t->power[i];
        if (p->pl > t->max_power && bsearch(p, keys, n, sizeof *keys, cmp_key))
            t->max_power = p->pl;
    }
    free(keys);
    return 0;
}

/* A job -- one (dataset, network, optimizer) -- runs on one number of
 * GPUs: its power rows (sorted by key, so one run of rows) all say the
 * same gpus_per_job. Of two that differ, the later line is the error,
 * against the job's first line in the file. One pass per job's rows. */
static int same_gpus_per_job(const ws_traces *t, ws_error *err)
{
    for (size_t a = 0, b; a < t->n_power; a = b) {
        const ws_power_row *first = &t->power[a], *bad_row = NULL;
        for (b = a; b < t->n_power && t->power[b].dataset == first->dataset
                    && t->power[b].network == first->network
                    && t->power[b].optimizer == first->optimizer; b++)
            if (t->power[b].line < first->line) first = &t->power[b];
        for (size_t i = a; i < b; i++) {
            const ws_power_row *r = &t->power[i];
            if ((r->gpus != first->gpus || r->job_max_power != first->job_max_power)
                && (!bad_row || r->line < bad_row->line))
                bad_row = r;
        }
        join_work += 2 * (b - a);
        if (bad_row && bad_row->gpus == first->gpus)
            return ws_fail(err, "%s:%ld: max_power is %.17g W, but line %ld says %.17g W"
                           " for the same dataset %s, network %s and optimizer %s (a job"
                           " runs on one set of GPUs: give every row of it the same"
                           " max_power)", t->power_path, bad_row->line,
                           bad_row->job_max_power, first->line, first->job_max_power,
                           t->names.s[first->dataset], t->names.s[first->network],
                           t->names.s[first->optimizer]);
        if (bad_row)
            return ws_fail(err, "%s:%ld: gpus_per_job is %d, but line %ld says %d for"
                           " the same dataset %s, network %s and optimizer %s (a job"
                           " runs on one number of GPUs: give every row of it the"
                           " same gpus_per_job)", t->power_path, bad_row->line,
                           bad_row->gpus, first->line, first->gpus,
                           t->names.s[first->dataset], t->names.s[first->network],
                           t->names.s[first->optimizer]);
    }
    return 0;
}

int ws_traces_load_uncached(ws_traces *t, const char *dir, const char *gpu,
                            const ws_csv_limits *lim, ws_error *err)
{
    memset(t, 0, sizeof *t);
    char name[256];
    if (strlen(gpu) > 200 || strchr(gpu, '/')) {
        ws_fail(err, "unknown GPU '%s'", gpu);
        return WS_TRACE_UNKNOWN_GPU;
    }
    snprintf(name, sizeof name, "summary_power_%s", gpu);
    if (!(t->dir = strdup(dir)) || !(t->gpu = strdup(gpu)))
        return ws_fail(err, "out of memory");
    if (!(t->train_path = ws_trace_path(dir, "summary_train", err))) return -1;
    int missing;
    if (!(t->power_path = find_trace(dir, name, &missing, err))) {
        if (!missing) return -1;
        char **gpus;
        int n = ws_trace_gpus(dir, &gpus, NULL);
        if (n > 0) {
            char list[256] = "";
            for (int i = 0; i < n; i++) {
                strncat(list, gpus[i], sizeof list - strlen(list) - 1);
                if (i + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
                free(gpus[i]);
            }
            free(gpus);
            ws_fail(err, "unknown GPU '%s': %s has power traces for %s", gpu,
                    dir, list);
            return WS_TRACE_UNKNOWN_GPU;
        }
        return -1;
    }
    if (read_train(t, lim, err) || read_power(t, lim, err)) return -1;

    /* Sorted by key (duplicates were refused as the rows came in): the
     * joins below binary-search and walk runs of rows. */
    qsort(t->power, t->n_power, sizeof *t->power, cmp_power);
    /* A batch size's runs in file order: pandas keeps it through the
     * join, and the published simulator's k-th path is the k-th row. */
    qsort(t->train, t->n_train, sizeof *t->train, cmp_train_lines);
    /* MaxPower: the highest power limit of any power row that joins a train
     * row (the published simulator takes the max over the merged table). */
    if (same_gpus_per_job(t, err)) return -1;
    if (max_joined_power(t)) return ws_fail(err, "out of memory");
    if (t->max_power == 0)
        return ws_fail(err, "%s: no power row matches any train row of %s"
                       " (dataset, network, optimizer, batch_size)",
                       t->power_path, t->train_path);
    return 0;
}

static void names_free(ws_names *n)
{
    for (size_t i = 0; i < n->n; i++) free(n->s[i]);
    free(n->s);
    ws_hindex_free(&n->index);
}

void ws_traces_free(ws_traces *t)
{
    if (!t) return;
    names_free(&t->names);
    free(t->dir);
    free(t->gpu);
    free(t->train_path);
    free(t->power_path);
    free(t->train);
    free(t->power);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ accessors */

/* Rows [*lo, *hi) of a table sorted by (dataset, network, optimizer)
 * first -- train and power rows both start with those three ids -- that
 * have the triple (ds, net, opt). */
static void triple_range(const void *rows, size_t size, size_t n, int ds, int net,
                         int opt, size_t *lo, size_t *hi)
{
    const int key[3] = {ds, net, opt};
    for (int upper = 0; upper < 2; upper++) {
        size_t a = 0, b = n;
        while (a < b) {
            join_work++;
            size_t mid = a + (b - a) / 2;
            const int *r = (const int *)(const void *)((const char *)rows + mid * size);
            int c = r[0] != key[0] ? (r[0] > key[0]) - (r[0] < key[0])
                  : r[1] != key[1] ? (r[1] > key[1]) - (r[1] < key[1])
                  : (r[2] > key[2]) - (r[2] < key[2]);
            if (c < 0 || (upper && c == 0)) a = mid + 1; else b = mid;
        }
        *(upper ? hi : lo) = a;
    }
}

void ws_traces_train_range(const ws_traces *t, int ds, int net, int opt, size_t *lo,
                           size_t *hi)
{
    triple_range(t->train, sizeof *t->train, t->n_train, ds, net, opt, lo, hi);
}

void ws_traces_power_range(const ws_traces *t, int ds, int net, int opt, size_t *lo,
                           size_t *hi)
{
    triple_range(t->power, sizeof *t->power, t->n_power, ds, net, opt, lo, hi);
}

int ws_traces_name_id(const ws_traces *t, const char *name)
{
    return lookup(&t->names, name);
}
