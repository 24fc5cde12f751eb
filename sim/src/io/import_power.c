/*
 * Power rows from telemetry and EPOCHS.csv (see wattsim/import.h for the
 * formulas).
 *
 * EPOCHS.csv: dataset,network,optimizer,batch_size,power_limit,epoch,start,end
 * one row per measured epoch. start/end are Unix seconds or ISO 8601; a
 * time with a zone (or Unix) is an instant and is moved onto the log's
 * clock with tz_offset, a time without one is read on the log's clock.
 *
 * For each epoch: every selected GPU must have samples before start and
 * after end (else the epoch is not covered), and no interval between
 * samples overlapping the epoch may exceed max_gap median intervals; the
 * energies of the GPUs are summed. Knobs are then the groups of epochs with
 * the same (dataset, network, optimizer, batch_size, power_limit).
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/name.h"
#include "wattsim/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct epoch_row {
    const char *dataset, *network, *optimizer;   /* interned */
    int bs, pl;
    long epoch;
    double start, end;      /* log clock */
    double energy;          /* J, all GPUs */
    long line;
} epoch_row;

enum { E_DATASET, E_NETWORK, E_OPT, E_BS, E_PL, E_EPOCH, E_START, E_END, E_N };

/* An epoch's key (its knob and number); names are interned, so compared
 * by pointer. */
typedef struct rows_ref {
    epoch_row *const *rows;
} rows_ref;

static uint64_t epoch_hash(const epoch_row *e)
{
    const void *p[3] = {e->dataset, e->network, e->optimizer};
    const long k[3] = {e->bs, e->pl, e->epoch};
    return ws_hash(k, sizeof k, ws_hash(p, sizeof p, 0));
}

static int same_epoch(const void *ctx, size_t a, size_t b)
{
    const epoch_row *x = &(*((const rows_ref *)ctx)->rows)[a];
    const epoch_row *y = &(*((const rows_ref *)ctx)->rows)[b];
    return x->dataset == y->dataset && x->network == y->network
        && x->optimizer == y->optimizer && x->bs == y->bs && x->pl == y->pl
        && x->epoch == y->epoch;
}

/* Every row of EPOCHS.csv, names interned into `names`. An epoch listed
 * twice is refused as soon as it is read (a file of one row repeated
 * fails on its second row, in constant memory), and so is an epoch
 * shorter than 1 ms or longer than a year (the bounds of a trace row's
 * time_per_epoch, wattsim/trace.h). */
static int read_epochs(const ws_power_import *in, ws_imp_names *names, epoch_row **out,
                       size_t *n_out, ws_error *err)
{
    const char *path = in->epochs_path;
    ws_imp_col cols[E_N] = {
        {"dataset", 1, -1}, {"network", 1, -1}, {"optimizer", 1, -1},
        {"batch_size", 1, -1}, {"power_limit", 1, -1}, {"epoch", 1, -1},
        {"start", 1, -1}, {"end", 1, -1},
    };
    *out = NULL;
    *n_out = 0;
    ws_csv *c = ws_csv_open(path, in->lim, err);
    if (!c) return -1;
    epoch_row *rows = NULL;
    size_t n = 0, cap = 0, nf;
    int rc = -1, r = -1;
    ws_hindex seen = {0};
    const rows_ref ref = {&rows};
    if (ws_imp_header(c, path, "the header dataset,network,optimizer,"
                      "batch_size,power_limit,epoch,start,end", cols, E_N, err))
        goto out;
    nf = ws_csv_nfields(c);
    while ((r = ws_csv_next(c, err)) == 1) {
        long line = ws_csv_line(c);
        if (ws_imp_row_width(c, path, nf, err)) goto out;
        epoch_row *grown = ws_imp_grow(rows, &cap, n, sizeof *rows, 64, err);
        if (!grown) goto out;
        rows = grown;
        epoch_row *e = &rows[n];
        memset(e, 0, sizeof *e);
        e->line = line;
        n++;
        const char *f[E_N];
        for (int k = 0; k < E_N; k++) f[k] = ws_csv_field(c, (size_t)cols[k].index);
        for (int k = E_DATASET; k <= E_OPT; k++) {
            if (!*f[k]) {
                ws_fail(err, "%s:%ld: %s: must not be empty", path, line, cols[k].name);
                goto out;
            }
            if (ws_imp_check_name(path, line, cols[k].name, f[k], k == E_DATASET, err))
                goto out;
        }
        long bs, pl;
        if (ws_imp_posint(f[E_BS], 1L << 30, &bs)) {
            ws_fail(err, "%s:%ld: batch_size: must be a positive integer, got \"%s\"",
                    path, line, f[E_BS]);
            goto out;
        }
        if (ws_imp_posint(f[E_PL], WS_MAX_POWER_LIMIT, &pl)) {
            char shown[64];
            ws_fail(err, "%s:%ld: power_limit: must be a whole number of W from 1 to %d,"
                    " got \"%s\"", path, line, WS_MAX_POWER_LIMIT,
                    ws_name_show(f[E_PL], shown, sizeof shown));
            goto out;
        }
        if (ws_imp_posint(f[E_EPOCH], 1L << 30, &e->epoch)) {
            ws_fail(err, "%s:%ld: epoch: must be a positive integer, got \"%s\"",
                    path, line, f[E_EPOCH]);
            goto out;
        }
        e->bs = (int)bs;
        e->pl = (int)pl;
        for (int k = E_START; k <= E_END; k++) {
            int zoned;
            double *t = k == E_START ? &e->start : &e->end;
            if (ws_parse_instant(f[k], t, &zoned)) {
                ws_fail(err, "%s:%ld: %s: expected Unix seconds or an ISO 8601 time"
                        " (2023-11-01T12:00:00[.fff][Z|+HH:MM]), got \"%s\"", path,
                        line, cols[k].name, f[k]);
                goto out;
            }
            if (zoned) *t += in->tz_offset;
        }
        if (!(e->end > e->start)) {
            ws_fail(err, "%s:%ld: end must be later than start", path, line);
            goto out;
        }
        if (!(e->end - e->start >= WS_MIN_TIME_PER_EPOCH
              && e->end - e->start <= WS_MAX_TIME_PER_EPOCH)) {
            ws_fail(err, "%s:%ld: the epoch lasts %.6g s; an epoch lasts from 1 ms to a"
                    " year (are start and end in seconds, on one clock?)", path, line,
                    e->end - e->start);
            goto out;
        }
        if (!(e->dataset = ws_imp_intern(names, f[E_DATASET]))
            || !(e->network = ws_imp_intern(names, f[E_NETWORK]))
            || !(e->optimizer = ws_imp_intern(names, f[E_OPT]))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        size_t first = ws_hindex_add(&seen, epoch_hash(e), same_epoch, &ref, n - 1);
        if (first == WS_HNOMEM) {
            ws_fail(err, "out of memory");
            goto out;
        }
        if (first != WS_HNONE) {
            ws_fail(err, "%s:%ld: epoch %ld of batch_size %d at %d W is listed twice"
                    " (also line %ld)", path, line, e->epoch, e->bs, e->pl, rows[first].line);
            goto out;
        }
    }
    if (r < 0) goto out;
    if (n == 0) {
        ws_fail(err, "%s:2: no epochs after the header", path);
        goto out;
    }
    rc = 0;
out:
    ws_csv_close(c);
    ws_hindex_free(&seen);
    if (rc) free(rows);
    else { *out = rows; *n_out = n; }
    return rc;
}

static int cmp_epoch(const void *a, const void *b)
{
    ws_join_work_add(1);
    const epoch_row *x = a, *y = b;
    int d;
    if ((d = strcmp(x->dataset, y->dataset))) return d;
    if ((d = strcmp(x->network, y->network))) return d;
    if ((d = strcmp(x->optimizer, y->optimizer))) return d;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    if (x->pl != y->pl) return x->pl < y->pl ? -1 : 1;
    if (x->epoch != y->epoch) return x->epoch < y->epoch ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

static int same_knob(const epoch_row *x, const epoch_row *y)
{
    return !strcmp(x->dataset, y->dataset) && !strcmp(x->network, y->network)
        && !strcmp(x->optimizer, y->optimizer) && x->bs == y->bs && x->pl == y->pl;
}

/* The energy of one epoch from power or counter series. */
static int series_energy(const ws_power_import *in, epoch_row *e, ws_error *err)
{
    const ws_telemetry *t = in->tel;
    char a[32], b[32], lo[32], hi[32];
    e->energy = 0;
    for (size_t k = 0; k < t->n_gpu; k++) {
        const ws_tel_gpu *g = &t->gpu[k];
        double first = g->s[0].t, last = g->s[g->n - 1].t;
        if (e->start < first || e->end > last) {
            ws_imp_fmt_time(e->start, a, sizeof a);
            ws_imp_fmt_time(e->end, b, sizeof b);
            ws_imp_fmt_time(first, lo, sizeof lo);
            ws_imp_fmt_time(last, hi, sizeof hi);
            return ws_fail(err, "%s:%ld: epoch %ld (%s to %s) is not covered by the"
                           " samples of GPU %s in %s (%s to %s); are both on the same"
                           " clock? (see --log-tz)", in->epochs_path, e->line, e->epoch,
                           a, b, g->id, t->path, lo, hi);
        }
        double gap;
        long gap_line;
        e->energy += ws_tel_energy(g, t->kind, e->start, e->end, &gap, &gap_line);
        if (gap > in->max_gap * g->interval) {
            char at[512];
            return ws_fail(err, "%s: GPU %s has no sample for %.3g s before this one,"
                           " more than %g sample intervals (%.3g s), during the epoch"
                           " at %s:%ld; pass --max-gap N to accept longer gaps",
                           ws_imp_where(t->path, gap_line, g->id, at, sizeof at), g->id,
                           gap, in->max_gap, g->interval, in->epochs_path, e->line);
        }
    }
    return 0;
}

/* Windows by start time (an index: the energies of window k stay at k). */
typedef struct win_ref {
    double start;
    size_t k;
} win_ref;

static int cmp_win(const void *a, const void *b)
{
    const win_ref *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* The energy of window k summed over the GPUs (NAN when one is empty). */
static double window_joules(const ws_telemetry *t, size_t k)
{
    double sum = 0;
    for (size_t g = 0; g < t->n_gpu; g++) sum += t->gpu[g].s[k].v;
    return sum;
}

/* The energy of one epoch from the ZeusMonitor window that starts within
 * the tolerance of it (binary search in `order`, the windows by start).
 * Two such windows are refused, with their count: which one timed the
 * epoch cannot be told (nested windows, or a tolerance wider than the
 * spacing of epochs), and picking the closest would be a guess. */
static int window_energy(const ws_power_import *in, const win_ref *order, epoch_row *e,
                         long *used_by, size_t *n_elapsed_off, ws_error *err)
{
    const ws_telemetry *t = in->tel;
    const double tol = in->match_tolerance;
    size_t lo = 0, hi = t->n_win;                 /* first start >= e->start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (order[mid].start < e->start) lo = mid + 1; else hi = mid;
    }
    size_t a = lo, b = lo;                        /* the matches: order[a, b) */
    while (a > 0 && order[a - 1].start >= e->start - tol) a--;
    while (b < t->n_win && order[b].start <= e->start + tol) b++;
    if (a == b) {
        char when[32];
        ws_imp_fmt_time(e->start, when, sizeof when);
        return ws_fail(err, "%s:%ld: no window in %s starts within %g s of epoch %ld's"
                       " start (%s UTC); pass --match-tolerance S to widen the match",
                       in->epochs_path, e->line, t->path, tol, e->epoch, when);
    }
    if (b - a > 1) {
        char when[32];
        ws_imp_fmt_time(e->start, when, sizeof when);
        size_t x = order[a].k, y = order[a + 1].k;
        if (t->win[y].line < t->win[x].line) { size_t z = x; x = y; y = z; }
        return ws_fail(err, "%s:%ld: %zu windows in %s start within %g s of epoch %ld's"
                       " start (%s UTC), e.g. lines %ld (%.6g J) and %ld (%.6g J): which"
                       " one timed the epoch cannot be told; keep one window per epoch in"
                       " the log, or pass a smaller --match-tolerance", in->epochs_path,
                       e->line, b - a, t->path, tol, e->epoch, when, t->win[x].line,
                       window_joules(t, x), t->win[y].line, window_joules(t, y));
    }
    size_t best = order[a].k;
    if (used_by[best])
        return ws_fail(err, "%s:%ld: the window at %s:%ld is also the closest to the"
                       " epoch at line %ld", in->epochs_path, e->line, t->path,
                       t->win[best].line, used_by[best]);
    used_by[best] = e->line;
    if (fabs(t->win[best].elapsed - (e->end - e->start)) > tol)
        (*n_elapsed_off)++;
    e->energy = 0;
    for (size_t k = 0; k < t->n_gpu; k++) {
        double v = t->gpu[k].s[best].v;
        if (isnan(v))
            return ws_fail(err, "%s:%ld: gpu%s_energy is empty, but the epoch at %s:%ld"
                           " uses this window", t->path, t->win[best].line,
                           t->gpu[k].id, in->epochs_path, e->line);
        const double secs = t->win[best].elapsed;
        if (v > WS_MAX_GPU_POWER * secs)
            return ws_fail(err, "%s:%ld: gpu%s_energy: %.6g J in a window of %.6g s is"
                           " %.6g W, more than any GPU draws (%g W): a broken reading or"
                           " not joules", t->path, t->win[best].line, t->gpu[k].id, v,
                           secs, v / secs, WS_MAX_GPU_POWER);
        e->energy += v;
    }
    return 0;
}

/* Epochs by start time, for the overlap check. */
static int cmp_start(const void *a, const void *b)
{
    ws_join_work_add(1);
    const epoch_row *x = *(epoch_row *const *)a, *y = *(epoch_row *const *)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Every epoch ran on the same GPUs (the selected ones): two that overlap
 * in time would count the joules of the overlap twice, once per knob, so
 * they are refused. Sorted by start, an epoch overlaps an earlier one iff
 * it starts before the latest end so far. Epochs may touch (one ends where
 * the next starts). */
static int check_overlaps(const ws_power_import *in, epoch_row *rows, size_t n,
                          ws_error *err)
{
    epoch_row **by = malloc((n + 1) * sizeof *by);
    if (!by) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) by[i] = &rows[i];
    qsort(by, n, sizeof *by, cmp_start);
    const epoch_row *last = NULL;                 /* the latest end so far */
    for (size_t i = 0; i < n; i++) {
        const epoch_row *e = by[i];
        if (last && e->start < last->end) {
            const epoch_row *x = last->line < e->line ? last : e, *y = x == e ? last : e;
            char a[32], b[32], c[32], d[32];
            ws_imp_fmt_time(y->start, a, sizeof a);
            ws_imp_fmt_time(y->end, b, sizeof b);
            ws_imp_fmt_time(x->start, c, sizeof c);
            ws_imp_fmt_time(x->end, d, sizeof d);
            free(by);
            return ws_fail(err, "%s:%ld: epoch %ld of batch_size %d at %d W (%s to %s)"
                           " overlaps epoch %ld of batch_size %d at %d W at line %ld (%s to"
                           " %s): both would be measured on the same GPUs, counting the"
                           " same joules twice; import each run's epochs from its own log"
                           " or GPUs (--gpus)", in->epochs_path, y->line, y->epoch, y->bs,
                           y->pl, a, b, x->epoch, x->bs, x->pl, x->line, c, d);
        }
        if (!last || e->end > last->end) last = e;
    }
    free(by);
    return 0;
}

int ws_import_power(const ws_power_import *in, ws_power_table *out,
                    ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    epoch_row *rows;
    size_t n;
    ws_imp_names names = {0};
    if (read_epochs(in, &names, &rows, &n, err)) {
        ws_imp_names_free(&names);
        return -1;
    }
    int rc = -1;
    long *used_by = NULL;
    size_t elapsed_off = 0;
    win_ref *order = NULL;
    if (check_overlaps(in, rows, n, err)) goto out;
    if (in->tel->kind == WS_TEL_WINDOWS) {
        used_by = calloc(in->tel->n_win + 1, sizeof *used_by);
        order = malloc((in->tel->n_win + 1) * sizeof *order);
        if (!used_by || !order) {
            ws_fail(err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < in->tel->n_win; i++)
            order[i] = (win_ref){in->tel->win[i].start, i};
        qsort(order, in->tel->n_win, sizeof *order, cmp_win);
    }
    for (size_t i = 0; i < n; i++)
        if (in->tel->kind == WS_TEL_WINDOWS
                ? window_energy(in, order, &rows[i], used_by, &elapsed_off, err)
                : series_energy(in, &rows[i], err))
            goto out;
    if (elapsed_off)
        ws_warn(w, "%s: %zu of %zu epochs differ from their ZeusMonitor window's"
                " elapsed_time by more than %g s; EPOCHS.csv's durations are used",
                in->epochs_path, elapsed_off, n, in->match_tolerance);
    qsort(rows, n, sizeof *rows, cmp_epoch);
    /* Every epoch's energy sums the selected GPUs: the job's GPUs. */
    out->gpus = (int)in->tel->n_gpu;
    if (!(out->rows = calloc(n, sizeof *out->rows))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n;) {        /* an epoch listed twice was refused */
        size_t j = i + 1;
        while (j < n && same_knob(&rows[i], &rows[j])) j++;
        double time = 0, energy = 0;
        for (size_t k = i; k < j; k++) {
            time += rows[k].end - rows[k].start;
            energy += rows[k].energy;
        }
        ws_power_out_row *o = &out->rows[out->n++];
        o->bs = rows[i].bs;
        o->pl = rows[i].pl;
        o->epochs = (int)(j - i);
        o->time_per_epoch = time / (double)(j - i);
        o->average_power = energy / time;
        /* Each reading is at most WS_MAX_GPU_POWER, so the average is
         * finite; it must also be a power a trace row may hold (wattsim/
         * trace.h), or no command could read the file written. */
        if (!(o->average_power >= WS_MIN_AVERAGE_POWER
              && o->average_power <= WS_MAX_AVERAGE_POWER)) {
            if (o->average_power == 0)
                ws_fail(err, "%s:%ld: batch_size %d at %d W: the GPUs drew no energy"
                        " during its epochs (its readings are all 0); check the log and"
                        " --gpus", in->epochs_path, rows[i].line, o->bs, o->pl);
            else
                ws_fail(err, "%s:%ld: batch_size %d at %d W: the GPUs drew %.6g W on"
                        " average during its epochs, outside the %g W to %g W a trace"
                        " row may hold; check the log's units and --gpus",
                        in->epochs_path, rows[i].line, o->bs, o->pl, o->average_power,
                        WS_MIN_AVERAGE_POWER, WS_MAX_AVERAGE_POWER);
            goto out;
        }
        if (!(o->dataset = strdup(rows[i].dataset)) || !(o->network = strdup(rows[i].network))
            || !(o->optimizer = strdup(rows[i].optimizer))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        i = j;
    }
    rc = 0;
out:
    free(used_by);
    free(order);
    free(rows);
    ws_imp_names_free(&names);
    if (rc) ws_power_table_free(out);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    ws_join_work_add(1);
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The number of distinct values among v[0..n) (sorts v). */
static size_t distinct(int *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_int);
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += i == 0 || v[i] != v[i - 1];
    return d;
}

int ws_power_table_summary(const ws_power_table *t, size_t *n_bs, size_t *n_pl,
                           long *n_epochs)
{
    /* Counted sorted: a scan of the earlier knobs per knob was quadratic
     * in the knobs (160k knobs took 19.5 s). */
    int *bs = malloc((t->n + 1) * sizeof *bs), *pl = malloc((t->n + 1) * sizeof *pl);
    if (!bs || !pl) {
        free(bs);
        free(pl);
        return -1;
    }
    *n_epochs = 0;
    for (size_t i = 0; i < t->n; i++) {
        bs[i] = t->rows[i].bs;
        pl[i] = t->rows[i].pl;
        *n_epochs += t->rows[i].epochs;
    }
    *n_bs = distinct(bs, t->n);
    *n_pl = distinct(pl, t->n);
    free(bs);
    free(pl);
    return 0;
}

void ws_power_table_free(ws_power_table *t)
{
    for (size_t i = 0; t && i < t->n; i++) {
        free(t->rows[i].dataset);
        free(t->rows[i].network);
        free(t->rows[i].optimizer);
    }
    if (t) free(t->rows);
    if (t) memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ output */

int ws_imp_open_out(ws_outfile *o, const char *path, ws_error *err)
{
    struct stat st;
    char gz[4096];
    snprintf(gz, sizeof gz, "%s.gz", path);
    if (stat(gz, &st) == 0)
        return ws_fail(err, "%s: exists; wattsim would then find both %s and %s"
                       " (remove one)", gz, path, gz);
    return ws_outfile_open(o, path, err);
}

int ws_power_table_write(const ws_power_table *t, const char *path, ws_error *err)
{
    ws_outfile o;
    if (ws_imp_open_out(&o, path, err)) return -1;
    fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,"
          "average_power,gpus_per_job\n", o.f);
    for (size_t i = 0; i < t->n; i++) {
        const ws_power_out_row *r = &t->rows[i];
        ws_csv_str(o.f, r->dataset);
        fputc(',', o.f);
        ws_csv_str(o.f, r->network);
        fprintf(o.f, ",%d,", r->bs);
        ws_csv_str(o.f, r->optimizer);
        fprintf(o.f, ",%d,%.17g,%.17g,%d\n", r->pl, r->time_per_epoch, r->average_power,
                t->gpus);
    }
    return ws_outfile_commit(&o, err);
}
