/*
 * Telemetry series shared by the importers (see wattsim/import.h): adding
 * samples, selecting GPUs, putting a series in order, and the energy of a
 * series over a window.
 *
 * Energy over [a, b] is integrated directly over the window's own
 * samples: inc[i], the energy of interval (t[i-1], t[i]], summed over the
 * whole intervals inside the window, plus the two partial intervals at its
 * edges. For power samples inc[i] is the trapezoid
 * (t[i] - t[i-1]) * (p[i-1] + p[i]) / 2 and a partial interval integrates
 * the linear interpolation exactly:
 *   E(t[i], x) = (x - t[i]) * (p[i] + p(x)) / 2,
 *   p(x) = p[i] + (p[i+1] - p[i]) * (x - t[i]) / (t[i+1] - t[i]).
 * For an energy counter, inc[i] is the counter's increase (a decrease is a
 * reset: the counter restarted from 0, so the increase is the new value)
 * and a partial interval takes its share of it. Never a difference of
 * prefix sums: a huge reading far from the window cannot cancel it. Each
 * window costs O(log n + samples inside it). Readings are bounded first
 * (WS_MAX_GPU_POWER): a power above it, or a counter rising faster, is an
 * error naming the sample. The error estimate of an energy
 * (ws_tel_energy_bound) integrates the series thinned to every other
 * sample the same way and compares.
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/name.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ warnings */

void ws_warn(ws_warnings *w, const char *fmt, ...)
{
    if (!w) return;
    char buf[WS_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    char raw[WS_ERROR_MAX];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ws_text_escape(buf, sizeof buf, raw);       /* one line, no control characters */
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        char **m = realloc(w->msg, cap * sizeof *m);
        if (!m) return;
        w->msg = m;
        w->cap = cap;
    }
    if ((w->msg[w->n] = strdup(buf))) w->n++;
}

void ws_warnings_free(ws_warnings *w)
{
    for (size_t i = 0; w && i < w->n; i++) free(w->msg[i]);
    if (w) free(w->msg);
    if (w) memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------ helpers */

char *ws_imp_trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

int ws_imp_decimal(const char *s, double *v)
{
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    if (!(isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))))
        return -1;
    for (const char *q = p; *q; q++)
        if (!(isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E'
              || ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E'))))
            return -1;
    char *end;
    *v = strtod(s, &end);
    return *end || !isfinite(*v) ? -1 : 0;
}

int ws_parse_number(const char *s, double *v)
{
    return ws_imp_decimal(s, v);
}

int ws_imp_posint(const char *s, long max, long *v)
{
    if (!isdigit((unsigned char)*s)) return -1;
    long x = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s)) return -1;
        if (x > (max - (*s - '0')) / 10) return -1;
        x = 10 * x + (*s - '0');
    }
    if (x <= 0) return -1;
    *v = x;
    return 0;
}

int ws_imp_header(ws_csv *c, const char *path, const char *expect,
                  ws_imp_col *cols, size_t n, ws_error *err)
{
    int r = ws_csv_next(c, err);
    if (r < 0) return -1;
    if (r == 0) return ws_fail(err, "%s:1: empty file (expected %s)", path, expect);
    return ws_imp_columns(c, cols, n, 1, err);
}

int ws_imp_row_width(ws_csv *c, const char *path, size_t nf, ws_error *err)
{
    if (ws_csv_nfields(c) == nf) return 0;
    return ws_fail(err, "%s:%ld: %zu field%s, but the header has %zu", path,
                   ws_csv_line(c), ws_csv_nfields(c), ws_s(ws_csv_nfields(c)), nf);
}

void *ws_imp_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first,
                  ws_error *err)
{
    if (n < *cap) return arr;
    size_t ncap = *cap ? 2 * *cap : first;
    void *p = realloc(arr, ncap * size);
    if (!p) {
        ws_fail(err, "out of memory");
        return NULL;
    }
    *cap = ncap;
    return p;
}

int ws_imp_columns(ws_csv *c, ws_imp_col *cols, size_t n, int strict,
                   ws_error *err)
{
    const char *path = ws_csv_path(c);
    for (size_t k = 0; k < n; k++) cols[k].index = -1;
    for (size_t i = 0; i < ws_csv_nfields(c); i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", ws_csv_field(c, i));
        const char *h = ws_imp_trim(buf);
        size_t k;
        for (k = 0; k < n; k++)
            if (!strcmp(cols[k].name, h)) break;
        if (k == n) {
            if (!strict) continue;
            char want[256] = "";
            for (size_t j = 0; j < n; j++) {
                strncat(want, cols[j].name, sizeof want - strlen(want) - 1);
                if (j + 1 < n) strncat(want, ",", sizeof want - strlen(want) - 1);
            }
            return ws_fail(err, "%s:%ld: unknown column '%s' (expected %s)", path,
                           ws_csv_line(c), h, want);
        }
        if (cols[k].index >= 0)
            return ws_fail(err, "%s:%ld: column '%s' appears twice", path,
                           ws_csv_line(c), h);
        cols[k].index = (int)i;
    }
    for (size_t k = 0; k < n; k++)
        if (cols[k].required && cols[k].index < 0)
            return ws_fail(err, "%s:%ld: missing column '%s'", path, ws_csv_line(c),
                           cols[k].name);
    return 0;
}

void ws_imp_cut_warning(const ws_csv *c, const char *path, long cut, ws_warnings *w)
{
    size_t n;
    const long at = ws_csv_nul_tail(c, &n);
    if (at && cut)
        ws_warn(w, "%s:%ld: the last line is cut short by %zu NUL byte%s (a logger killed"
                " mid-write); skipped", path, cut, n, n == 1 ? "" : "s");
    else if (at)
        ws_warn(w, "%s:%ld: the file ends in %zu NUL byte%s where a line would be (a"
                " logger killed mid-write); ignored", path, at, n, n == 1 ? "" : "s");
    else if (cut)
        ws_warn(w, "%s:%ld: the last line is incomplete (the logger stopped mid-write?);"
                " skipped", path, cut);
}

const char *ws_imp_where(const char *path, long line, const char *gpu,
                         char *buf, size_t size)
{
    if (line > 0) snprintf(buf, size, "%s:%ld", path, line);
    else if (line < 0) snprintf(buf, size, "%s: gpu %s values[%ld]", path, gpu, -line - 1);
    else snprintf(buf, size, "%s", path);
    return buf;
}

typedef struct imp_probe {
    const ws_imp_names *t;
    const char *s;
} imp_probe;

static int same_imp_name(const void *ctx, size_t stored, size_t probe)
{
    (void)probe;
    const imp_probe *q = ctx;
    return !strcmp(q->t->s[stored], q->s);
}

const char *ws_imp_intern(ws_imp_names *t, const char *s)
{
    return ws_imp_intern_at(t, s, NULL);
}

const char *ws_imp_intern_at(ws_imp_names *t, const char *s, size_t *index)
{
    imp_probe q = {t, s};
    uint64_t h = ws_hash_str(s, 0);
    size_t at = ws_hindex_find(&t->index, h, same_imp_name, &q, 0);
    if (index) *index = at == WS_HNONE ? t->n : at;
    if (at != WS_HNONE) return t->s[at];
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **p = realloc(t->s, cap * sizeof *p);
        if (!p) return NULL;
        t->s = p;
        t->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy) return NULL;
    if (ws_hindex_add(&t->index, h, same_imp_name, &q, t->n) == WS_HNOMEM) {
        free(copy);
        return NULL;
    }
    return t->s[t->n++] = copy;
}

void ws_imp_names_free(ws_imp_names *t)
{
    for (size_t i = 0; t && i < t->n; i++) free(t->s[i]);
    if (t) free(t->s);
    if (t) ws_hindex_free(&t->index);
    if (t) memset(t, 0, sizeof *t);
}

int ws_imp_check_name(const char *path, long line, const char *column,
                      const char *value, int is_dataset, ws_error *err)
{
    char why[64], shown[160];
    if (is_dataset && ws_name_check(value, why, sizeof why) == 0) return 0;
    if (!is_dataset && ws_label_check(value, why, sizeof why) == 0) return 0;
    return ws_fail(err, "%s:%ld: %s \"%s\" %s (%s)", path, line, column,
                   ws_name_show(value, shown, sizeof shown), why,
                   is_dataset ? WS_NAME_RULE ": --job DATASET/NETWORK/OPTIMIZER names the"
                                " job after it" : WS_LABEL_RULE);
}

int ws_imp_job_row(ws_csv *c, const char *path, size_t nf, const ws_imp_col *cols,
                   size_t n, const char **f, long *bs, ws_error *err)
{
    if (ws_imp_row_width(c, path, nf, err)) return -1;
    const long line = ws_csv_line(c);
    for (size_t k = 0; k < n; k++) f[k] = ws_csv_field(c, (size_t)cols[k].index);
    for (size_t k = 0; k < 3; k++) {       /* dataset, network, optimizer */
        if (!*f[k]) return ws_fail(err, "%s:%ld: %s: must not be empty", path, line, cols[k].name);
        if (ws_imp_check_name(path, line, cols[k].name, f[k], k == 0, err)) return -1;
    }
    if (ws_imp_posint(f[3], 1L << 30, bs))
        return ws_fail(err, "%s:%ld: batch_size: must be a positive integer, got \"%s\"",
                       path, line, f[3]);
    return 0;
}

/* ------------------------------------------------------------ series */

void ws_telemetry_free(ws_telemetry *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_gpu; i++) {
        free(t->gpu[i].id);
        free(t->gpu[i].s);
        free(t->gpu[i].model);
    }
    free(t->gpu);
    free(t->win);
    for (size_t i = 0; i < t->n_win_name; i++) free(t->win_name[i]);
    free(t->win_name);
    free(t->path);
    ws_hindex_free(&t->gpu_index);
    memset(t, 0, sizeof *t);
}

/* GPUs by id: a hash index, so that a log naming many GPUs (or a hostile
 * one naming a new GPU on every line) costs O(1) per sample. */
typedef struct gpu_probe {
    const ws_telemetry *t;
    const char *id;
} gpu_probe;

static int same_gpu(const void *ctx, size_t stored, size_t probe)
{
    (void)probe;
    const gpu_probe *q = ctx;
    return !strcmp(q->t->gpu[stored].id, q->id);
}

static ws_tel_gpu *gpu_find(const ws_telemetry *t, const char *id)
{
    gpu_probe q = {t, id};
    size_t k = ws_hindex_find(&t->gpu_index, ws_hash_str(id, 0), same_gpu, &q, 0);
    return k == WS_HNONE ? NULL : &t->gpu[k];
}

static ws_tel_gpu *gpu_get(ws_telemetry *t, const char *id)
{
    ws_tel_gpu *g = gpu_find(t, id);
    if (g) return g;
    if (t->n_gpu == t->gpu_cap) {
        size_t cap = t->gpu_cap ? 2 * t->gpu_cap : 8;
        g = realloc(t->gpu, cap * sizeof *g);
        if (!g) return NULL;
        t->gpu = g;
        t->gpu_cap = cap;
    }
    g = &t->gpu[t->n_gpu];
    memset(g, 0, sizeof *g);
    if (!(g->id = strdup(id))) return NULL;
    gpu_probe q = {t, id};
    if (ws_hindex_add(&t->gpu_index, ws_hash_str(id, 0), same_gpu, &q, t->n_gpu)
        == WS_HNOMEM) {
        free(g->id);
        return NULL;
    }
    t->n_gpu++;
    return g;
}

int ws_telemetry_has_gpu(const ws_telemetry *t, const char *id)
{
    return gpu_find(t, id) != NULL;
}

int ws_telemetry_add(ws_telemetry *t, const char *id, double time, double v,
                     long line, ws_error *err)
{
    ws_tel_gpu *g = gpu_get(t, id);
    if (!g) return ws_fail(err, "%s: out of memory", t->path);
    if (!g->first_line) g->first_line = line;
    /* A reading at the previous one's instant is judged as it comes (the
     * rest wait for ws_telemetry_prepare's sort): the same value again is
     * a repeat, counted and not stored, so that a log of one line repeated
     * costs no memory; another value is an error at once. ZeusMonitor
     * windows may share a start (nested windows). */
    if (t->kind != WS_TEL_WINDOWS && g->n && g->s[g->n - 1].t == time) {
        const ws_tel_sample *p = &g->s[g->n - 1];
        if (p->v == v) {
            if (!g->repeats++) g->first_repeat = line;
            return 0;
        }
        char at[512];
        return ws_fail(err, "%s: GPU %s has two different readings (%g and %g) at the"
                       " same time", ws_imp_where(t->path, line, g->id, at, sizeof at),
                       g->id, v, p->v);
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        ws_tel_sample *s = realloc(g->s, cap * sizeof *s);
        if (!s) return ws_fail(err, "%s: out of memory", t->path);
        g->s = s;
        g->cap = cap;
    }
    g->s[g->n++] = (ws_tel_sample){time, v, 0, line, NAN};
    return 0;
}

int ws_telemetry_set_model(ws_telemetry *t, const char *id, const char *model)
{
    ws_tel_gpu *g = gpu_find(t, id);
    if (!g || g->model || !*model) return 0;
    return (g->model = strdup(model)) ? 0 : -1;
}

void ws_telemetry_set_limit(ws_telemetry *t, const char *id, double lim)
{
    ws_tel_gpu *g = gpu_find(t, id);
    if (g && g->n) g->s[g->n - 1].lim = lim;
}

int ws_telemetry_missing(ws_telemetry *t, const char *id, long line, ws_error *err)
{
    ws_tel_gpu *g = gpu_get(t, id);
    if (!g) return ws_fail(err, "%s: out of memory", t->path);
    if (!g->first_line) g->first_line = line;
    g->missing++;
    t->n_missing++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ws_telemetry_select(ws_telemetry *t, char **ids, size_t n,
                        const char *option, ws_error *err)
{
    if (t->n_gpu == 0) return ws_fail(err, "%s: no GPU samples", t->path);
    if (n == 0) return 0;
    /* Check every name first, so that nothing moves on error: a name
     * listed twice (neighbours once sorted), then each by the index. */
    char **sorted = malloc(n * sizeof *sorted);
    if (!sorted) return ws_fail(err, "out of memory");
    memcpy(sorted, ids, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(sorted[i - 1], sorted[i])) {
            ws_fail(err, "%s: GPU '%s' is listed twice", option, sorted[i]);
            free(sorted);
            return -1;
        }
    free(sorted);
    for (size_t i = 0; i < n; i++) {
        if (gpu_find(t, ids[i])) continue;
        char list[256] = "";
        for (size_t j = 0; j < t->n_gpu && strlen(list) < 200; j++) {
            if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, t->gpu[j].id, sizeof list - strlen(list) - 1);
        }
        return ws_fail(err, "%s: %s has no samples of GPU '%s' (it has %s)",
                       option, t->path, ids[i], list);
    }
    ws_tel_gpu *keep = calloc(n, sizeof *keep);
    unsigned char *kept = calloc(t->n_gpu, 1);
    if (!keep || !kept) {
        free(keep);
        free(kept);
        return ws_fail(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const ws_tel_gpu *g = gpu_find(t, ids[i]);
        keep[i] = *g;                           /* moved: id and samples */
        kept[g - t->gpu] = 1;
    }
    for (size_t k = 0; k < t->n_gpu; k++) {
        if (kept[k]) continue;
        free(t->gpu[k].id);
        free(t->gpu[k].s);
        free(t->gpu[k].model);
    }
    free(kept);
    free(t->gpu);
    ws_hindex_free(&t->gpu_index);
    t->gpu = keep;
    t->n_gpu = t->gpu_cap = n;
    for (size_t i = 0; i < n; i++) {               /* the index of what is left */
        gpu_probe q = {t, keep[i].id};
        if (ws_hindex_add(&t->gpu_index, ws_hash_str(keep[i].id, 0), same_gpu, &q, i)
            == WS_HNOMEM)
            return ws_fail(err, "out of memory");
    }
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    const ws_tel_sample *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One class of artefact over every GPU: how many, on how many GPUs, and
 * the first (the lowest line, else the first GPU's). One warning each,
 * however many GPUs a duplicated block of rows touches. */
typedef struct artefact {
    size_t count, gpus;
    long line;
    const char *gpu;
} artefact;

static void artefact_add(artefact *a, size_t count, long line, const char *gpu)
{
    if (!count) return;
    if (!a->gpus++ || (line > 0 && (a->line <= 0 || line < a->line))) {
        a->line = line;
        a->gpu = gpu;
    }
    a->count += count;
}

/* "PATH:LINE: N WHAT of GPU G ..." or "... N WHAT of K GPUs ... (GPU G)". */
static void artefact_warn(const ws_telemetry *t, ws_warnings *w, const artefact *a,
                          const char *what, const char *how)
{
    if (!a->count) return;
    char at[512];
    const char *where = ws_imp_where(t->path, a->line, a->gpu, at, sizeof at);
    if (a->gpus == 1)
        ws_warn(w, "%s: %zu %s%s of GPU %s %s (the first here)", where, a->count, what,
                a->count == 1 ? "" : "s", a->gpu, how);
    else
        ws_warn(w, "%s: %zu %ss of %zu GPUs %s (the first here, GPU %s)", where, a->count,
                what, a->gpus, how, a->gpu);
}

int ws_telemetry_prepare(ws_telemetry *t, ws_warnings *w, ws_error *err)
{
    if (t->kind == WS_TEL_WINDOWS) return 0;
    artefact unsorted_all = {0}, repeats_all = {0}, resets_all = {0};
    for (size_t k = 0; k < t->n_gpu; k++) {
        ws_tel_gpu *g = &t->gpu[k];
        char at[512];
        /* A GPU of the job without readings would be summed as 0 W: the
         * job's power silently halved on two GPUs. Refused, naming it. */
        if (g->n < 2 && g->missing)
            return ws_fail(err, "%s: GPU %s has %s usable reading (%zu of its readings"
                           " are [N/A], [Not Supported] or NaN): its energy cannot be"
                           " measured; if the job did not run on it, leave it out with"
                           " --gpus", ws_imp_where(t->path, g->first_line, g->id, at,
                           sizeof at), g->id, g->n ? "only one" : "no", g->missing);
        if (g->n < 2)
            return ws_fail(err, "%s: GPU %s has %zu usable sample%s; at least 2 are"
                           " needed to integrate", t->path, g->id, g->n,
                           g->n == 1 ? "" : "s");
        /* Out of order: marked (inc, computed below) before the sort, so
         * that one that only repeats an earlier sample -- a block of rows
         * written twice -- counts as a repeat, not also as unsorted. */
        size_t unsorted = 0;
        long first_unsorted = 0;
        for (size_t i = 0; i < g->n; i++) g->s[i].inc = 0;
        for (size_t i = 1; i < g->n; i++)
            if (g->s[i].t < g->s[i - 1].t) {
                if (!unsorted++) first_unsorted = g->s[i].line;
                g->s[i].inc = 1;
            }
        if (unsorted) qsort(g->s, g->n, sizeof *g->s, cmp_sample);
        size_t m = 1, repeats = g->repeats;
        long first_repeat = g->first_repeat;
        for (size_t i = 1; i < g->n; i++) {
            ws_tel_sample *p = &g->s[m - 1], *s = &g->s[i];
            if (s->t == p->t) {
                if (s->v != p->v) {
                    return ws_fail(err, "%s: GPU %s has two different readings (%g"
                                   " and %g) at the same time", ws_imp_where(t->path,
                                   s->line, g->id, at, sizeof at), g->id, s->v, p->v);
                }
                if (!repeats++ || (s->line > 0 && s->line < first_repeat))
                    first_repeat = s->line;
                if (s->inc == 1 && unsorted) {
                    unsorted--;
                    if (s->line == first_unsorted) first_unsorted = 0;
                }
                continue;
            }
            g->s[m++] = *s;
        }
        if (unsorted && !first_unsorted)      /* the first was a repeat: the next */
            for (size_t i = 0; i < m; i++)
                if (g->s[i].inc == 1 && (!first_unsorted || g->s[i].line < first_unsorted))
                    first_unsorted = g->s[i].line;
        artefact_add(&unsorted_all, unsorted, first_unsorted, g->id);
        artefact_add(&repeats_all, repeats, first_repeat, g->id);
        g->n = m;
        if (g->n < 2)
            return ws_fail(err, "%s: GPU %s has only one distinct sample time",
                           t->path, g->id);
        double *d = malloc((g->n - 1) * sizeof *d);
        if (!d) return ws_fail(err, "out of memory");
        for (size_t i = 1; i < g->n; i++) d[i - 1] = g->s[i].t - g->s[i - 1].t;
        qsort(d, g->n - 1, sizeof *d, cmp_double);
        g->interval = d[(g->n - 1) / 2];
        free(d);
        size_t resets = 0;
        long first_reset = 0;
        g->s[0].inc = 0;
        for (size_t i = 0; i < g->n; i++) {
            const ws_tel_sample *p = i ? &g->s[i - 1] : NULL;
            ws_tel_sample *s = &g->s[i];
            /* Judged before use: a reading no GPU can produce is a broken
             * sample or the wrong unit, and would swamp every epoch near
             * it (a 1e20 W glitch is 1e20 J per second of log). */
            if (t->kind == WS_TEL_POWER && s->v > WS_MAX_GPU_POWER)
                return ws_fail(err, "%s: GPU %s reads %.6g W, more than any GPU draws"
                               " (%g W): a broken reading or not watts; remove the"
                               " sample if it is a glitch", ws_imp_where(t->path, s->line,
                               g->id, at, sizeof at), g->id, s->v, WS_MAX_GPU_POWER);
            if (!p) continue;
            double inc;
            if (t->kind == WS_TEL_POWER) {
                inc = (s->t - p->t) * (p->v + s->v) / 2;
            } else if (s->v >= p->v) {
                inc = s->v - p->v;
            } else {
                inc = s->v;
                if (!resets++) first_reset = s->line;
            }
            if (t->kind == WS_TEL_ENERGY && inc > WS_MAX_GPU_POWER * (s->t - p->t))
                return ws_fail(err, "%s: energy counter of GPU %s rises by %.6g J in %.6g s"
                               " (%.6g W), more than any GPU draws (%g W): a broken reading%s;"
                               " remove the sample if it is a glitch", ws_imp_where(t->path,
                               s->line, g->id, at, sizeof at), g->id, inc, s->t - p->t,
                               inc / (s->t - p->t), WS_MAX_GPU_POWER,
                               s->v < p->v ? " (after a counter reset)" : "");
            s->inc = inc;
        }
        artefact_add(&resets_all, resets, first_reset, g->id);
    }
    artefact_warn(t, w, &unsorted_all, "sample", "out of time order, sorted");
    artefact_warn(t, w, &repeats_all, "repeated sample", "(same time, same value) dropped");
    artefact_warn(t, w, &resets_all, "energy counter reset",
                  "(the counter went down: a driver reload?), counted from 0 after each");
    return 0;
}

/* Index of the last sample with t <= x (x within the span). */
static size_t find(const ws_tel_gpu *g, double x)
{
    size_t lo = 0, hi = g->n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (g->s[mid].t <= x) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Energy from the start of interval i (samples i and i + 1) to x within
 * it: the trapezoid of the linear interpolation (power), or the share of
 * the interval's increase (counter). */
static double part(const ws_tel_gpu *g, ws_tel_kind kind, size_t i, double x)
{
    const ws_tel_sample *a = &g->s[i], *b = &g->s[i + 1];
    if (x <= a->t) return 0;
    if (x >= b->t) return b->inc;
    double f = (x - a->t) / (b->t - a->t);
    if (kind == WS_TEL_ENERGY) return f * b->inc;
    double px = a->v + f * (b->v - a->v);
    return (x - a->t) * (a->v + px) / 2;
}

double ws_tel_energy(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b,
                     double *gap, long *gap_line)
{
    size_t ia = find(g, a), ib = find(g, b);
    *gap = 0;
    *gap_line = 0;
    size_t last = ib + 1 < g->n && g->s[ib].t < b ? ib + 1 : ib;
    for (size_t i = ia + 1; i <= last; i++) {
        double d = g->s[i].t - g->s[i - 1].t;
        if (d > *gap) {
            *gap = d;
            *gap_line = g->s[i].line;
        }
    }
    if (ia + 1 >= g->n) return 0;              /* a = b = the last sample */
    if (ia == ib) return part(g, kind, ia, b) - part(g, kind, ia, a);
    /* The window's own samples, summed directly: [a, t(ia+1)], the whole
     * intervals up to t(ib), then [t(ib), b]. */
    double e = g->s[ia + 1].inc - part(g, kind, ia, a);
    for (size_t i = ia + 2; i <= ib; i++) e += g->s[i].inc;
    if (ib + 1 < g->n) e += part(g, kind, ib, b);
    return e;
}

/* The energy over [a, b] of the series thinned to every other sample,
 * those of index parity `off`: as ws_tel_energy, on intervals (j, j + 2).
 * -1 when the thinned series does not cover [a, b]. */
static double thinned(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b, size_t off)
{
    size_t ja = find(g, a), jb = find(g, b);
    if (g->s[jb].t < b) jb++;
    if (ja % 2 != off) {
        if (ja == 0) return -1;
        ja--;
    }
    if (jb % 2 != off) jb++;
    if (jb >= g->n) return -1;
    double e = 0;
    for (size_t j = ja; j + 2 <= jb; j += 2) {
        const ws_tel_sample *p = &g->s[j], *q = &g->s[j + 2];
        const double lo = p->t > a ? p->t : a, hi = q->t < b ? q->t : b;
        if (!(hi > lo)) continue;
        const double span = q->t - p->t;
        if (kind == WS_TEL_ENERGY) {
            e += (hi - lo) / span * (g->s[j + 1].inc + q->inc);
        } else {
            const double plo = p->v + (q->v - p->v) * (lo - p->t) / span;
            const double phi = p->v + (q->v - p->v) * (hi - p->t) / span;
            e += (hi - lo) * (plo + phi) / 2;
        }
    }
    return e;
}

double ws_tel_energy_bound(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b)
{
    if (g->n < 2 || !(b > a)) return 0;
    double gap;
    long gap_line;
    const double full = ws_tel_energy(g, kind, a, b, &gap, &gap_line);
    double est = -1;
    for (size_t off = 0; off < 2; off++) {
        const double half = thinned(g, kind, a, b, off);
        if (half >= 0 && fabs(full - half) > est) est = fabs(full - half);
    }
    if (est >= 0) return est;
    /* Too few samples around [a, b] to thin: the worst case when the power
     * stays between consecutive readings (the trapezoid is the midpoint of
     * every such integral over a whole interval; an edge's share may be off
     * by the interval's range), or for a counter anything from none to all
     * of an edge interval's increase. */
    size_t ia = find(g, a), ib = find(g, b);
    if (ib + 1 < g->n && g->s[ib].t < b) ib++;
    double bound = 0;
    for (size_t i = ia + 1; i <= ib && i < g->n; i++) {
        const ws_tel_sample *p = &g->s[i - 1], *s = &g->s[i];
        const double lo = p->t > a ? p->t : a, hi = s->t < b ? s->t : b;
        if (!(hi > lo)) continue;
        const int whole = p->t >= a && s->t <= b;
        if (kind == WS_TEL_POWER) {
            bound += (hi - lo) * fabs(s->v - p->v) * (whole ? 0.5 : 1.0);
        } else if (!whole) {
            const double f = (hi - lo) / (s->t - p->t);
            bound += (f > 1 - f ? f : 1 - f) * s->inc;
        }
    }
    return bound;
}

double ws_tel_hole_bound(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b,
                         double hole)
{
    if (kind != WS_TEL_POWER || g->n < 2 || !(b > a)) return 0;
    size_t ia = find(g, a), ib = find(g, b);
    if (ib + 1 < g->n && g->s[ib].t < b) ib++;
    double lo = INFINITY, hi = -INFINITY, holes = 0;
    for (size_t i = ia; i <= ib; i++) {
        lo = fmin(lo, g->s[i].v);
        hi = fmax(hi, g->s[i].v);
        if (i == ia || !(g->s[i].t - g->s[i - 1].t > hole)) continue;
        const double x = fmax(g->s[i - 1].t, a), y = fmin(g->s[i].t, b);
        if (y > x) holes += y - x;
    }
    return holes * (hi - lo);
}

const ws_tel_sample *ws_tel_limit_off(const ws_tel_gpu *g, double a, double b, double pl)
{
    for (size_t i = find(g, a); i < g->n && g->s[i].t < b; i++)
        if (g->s[i].t > a && fabs(g->s[i].lim - pl) > 1) return &g->s[i];
    return NULL;
}
