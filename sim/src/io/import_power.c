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

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct epoch_row {
    char *dataset, *network, *optimizer;
    int bs, pl;
    long epoch;
    double start, end;      /* log clock */
    double energy;          /* J, all GPUs */
    long line;
} epoch_row;

enum { E_DATASET, E_NETWORK, E_OPT, E_BS, E_PL, E_EPOCH, E_START, E_END, E_N };

static void rows_free(epoch_row *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].dataset);
        free(r[i].network);
        free(r[i].optimizer);
    }
    free(r);
}

static int read_epochs(const ws_power_import *in, epoch_row **out, size_t *n_out,
                       ws_error *err)
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
        for (int k = E_DATASET; k <= E_OPT; k++)
            if (!*f[k]) {
                ws_fail(err, "%s:%ld: %s: must not be empty", path, line, cols[k].name);
                goto out;
            }
        long bs, pl;
        if (ws_imp_posint(f[E_BS], 1L << 30, &bs)) {
            ws_fail(err, "%s:%ld: batch_size: must be a positive integer, got \"%s\"",
                    path, line, f[E_BS]);
            goto out;
        }
        if (ws_imp_posint(f[E_PL], 1L << 30, &pl)) {
            ws_fail(err, "%s:%ld: power_limit: must be a positive integer (W), got"
                    " \"%s\"", path, line, f[E_PL]);
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
        if (!(e->dataset = strdup(f[E_DATASET])) || !(e->network = strdup(f[E_NETWORK]))
            || !(e->optimizer = strdup(f[E_OPT]))) {
            ws_fail(err, "out of memory");
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
    if (rc) rows_free(rows, n);
    else { *out = rows; *n_out = n; }
    return rc;
}

static int cmp_epoch(const void *a, const void *b)
{
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

/* The energy of one epoch from the ZeusMonitor window starting closest to
 * it (binary search in `order`, the windows by start). */
static int window_energy(const ws_power_import *in, const win_ref *order, epoch_row *e,
                         long *used_by, size_t *n_elapsed_off, ws_error *err)
{
    const ws_telemetry *t = in->tel;
    size_t lo = 0, hi = t->n_win;                 /* first start >= e->start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (order[mid].start < e->start) lo = mid + 1; else hi = mid;
    }
    size_t best = t->n_win;
    double bd = INFINITY;
    for (size_t i = lo > 0 ? lo - 1 : 0; i <= lo && i < t->n_win; i++) {
        double d = fabs(order[i].start - e->start);
        if (d < bd) { bd = d; best = order[i].k; }
    }
    if (best == t->n_win || bd > in->match_tolerance) {
        char a[32];
        ws_imp_fmt_time(e->start, a, sizeof a);
        return ws_fail(err, "%s:%ld: no window in %s starts within %g s of epoch %ld's"
                       " start (%s UTC); pass --match-tolerance S to widen the match",
                       in->epochs_path, e->line, t->path, in->match_tolerance,
                       e->epoch, a);
    }
    if (used_by[best])
        return ws_fail(err, "%s:%ld: the window at %s:%ld is also the closest to the"
                       " epoch at line %ld", in->epochs_path, e->line, t->path,
                       t->win[best].line, used_by[best]);
    used_by[best] = e->line;
    if (fabs(t->win[best].elapsed - (e->end - e->start)) > in->match_tolerance)
        (*n_elapsed_off)++;
    e->energy = 0;
    for (size_t k = 0; k < t->n_gpu; k++) {
        double v = t->gpu[k].s[best].v;
        if (isnan(v))
            return ws_fail(err, "%s:%ld: gpu%s_energy is empty, but the epoch at %s:%ld"
                           " uses this window", t->path, t->win[best].line,
                           t->gpu[k].id, in->epochs_path, e->line);
        e->energy += v;
    }
    return 0;
}

int ws_import_power(const ws_power_import *in, ws_power_table *out,
                    ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    epoch_row *rows;
    size_t n;
    if (read_epochs(in, &rows, &n, err)) return -1;
    int rc = -1;
    long *used_by = NULL;
    size_t elapsed_off = 0;
    win_ref *order = NULL;
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
    if (!(out->rows = calloc(n, sizeof *out->rows))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        for (; j < n && same_knob(&rows[i], &rows[j]); j++)
            if (rows[j].epoch == rows[j - 1].epoch) {
                ws_fail(err, "%s:%ld: epoch %ld of batch_size %d at %d W is listed"
                        " twice (also line %ld)", in->epochs_path,
                        rows[j].line > rows[j - 1].line ? rows[j].line : rows[j - 1].line,
                        rows[j].epoch, rows[j].bs, rows[j].pl,
                        rows[j].line > rows[j - 1].line ? rows[j - 1].line : rows[j].line);
                goto out;
            }
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
        if (!(o->average_power > 0) || !isfinite(o->average_power)) {
            ws_fail(err, "%s:%ld: batch_size %d at %d W: the GPUs drew no energy"
                    " during its epochs (average power %g W)", in->epochs_path,
                    rows[i].line, o->bs, o->pl, o->average_power);
            goto out;
        }
        o->dataset = rows[i].dataset;
        o->network = rows[i].network;
        o->optimizer = rows[i].optimizer;
        rows[i].dataset = rows[i].network = rows[i].optimizer = NULL;
        i = j;
    }
    rc = 0;
out:
    free(used_by);
    free(order);
    rows_free(rows, n);
    if (rc) ws_power_table_free(out);
    return rc;
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
          "average_power\n", o.f);
    for (size_t i = 0; i < t->n; i++) {
        const ws_power_out_row *r = &t->rows[i];
        ws_csv_str(o.f, r->dataset);
        fputc(',', o.f);
        ws_csv_str(o.f, r->network);
        fprintf(o.f, ",%d,", r->bs);
        ws_csv_str(o.f, r->optimizer);
        fprintf(o.f, ",%d,%.17g,%.17g\n", r->pl, r->time_per_epoch, r->average_power);
    }
    return ws_outfile_commit(&o, err);
}
