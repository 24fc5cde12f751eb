/*
 * Power rows from telemetry and EPOCHS.csv (see wattsim/import.h for the
 * formulas).
 *
 * EPOCHS.csv: dataset,network,optimizer,batch_size,power_limit,epoch,start,end
 * one row per measured epoch. start/end are Unix seconds or ISO 8601; a
 * time with a zone (or Unix) is an instant and is moved onto the log's
 * clock with tz_offset, a time without one is read on the log's clock
 * (in the log's IANA zone, log_zone, when it has one: the log is then UTC).
 *
 * For each epoch: every selected GPU must have samples before start and
 * after end (else the epoch is not covered), and no interval between
 * samples overlapping the epoch may exceed max_gap median intervals; the
 * energies of the GPUs are summed, each with its error estimate
 * (ws_tel_energy_bound), and a power limit the log read during the epoch
 * must be the epoch's. ZeusMonitor: the window of the chosen name that
 * starts with the epoch, and lasts as long (choose_window, window_energy).
 * Knobs are then the groups of epochs with the same (dataset, network,
 * optimizer, batch_size, power_limit); no GPU may average more than
 * WS_SENSOR_TOLERANCE above the knob's limit, and knobs whose
 * energy_error passes WS_ENERGY_ERROR_WARN get one warning. Before that:
 * GPUs of different models give the job's MaxPower as the sum of their own
 * limits, each read as far as its model goes (mixed_models), a GPU idle through
 * every epoch is named (idle_gpus), and gaps --max-gap let through count
 * in the error (ws_tel_hole_bound).
 *
 * Last section: Zeus's GlobalPowerLimitOptimizer profile (ws_import_plo),
 * whose windows are the knobs themselves, scaled from steps to an epoch
 * by the options or by EPOCHS.csv (read as above).
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/name.h"
#include "wattsim/trace.h"

#include <errno.h>
#include <fnmatch.h>
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
    int zoned;              /* start was written as an instant (Unix or a zone) */
    size_t id;              /* row of EPOCHS.csv, from 0: its GPUs' energies are
                               gpu_e[id * n_gpu + k] */
    double bound;           /* J, the integration error bound, all GPUs */
} epoch_row;

enum { E_DATASET, E_NETWORK, E_OPT, E_BS, E_PL, E_EPOCH, E_START, E_END, E_N };
_Static_assert(E_DATASET == 0 && E_NETWORK == 1 && E_OPT == 2 && E_BS == 3,
               "ws_imp_job_row reads the job's names and batch size from columns 0-3");

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
    int rc = -1, r = -1, zone_set = 0;
    ws_zone_saved zsaved = {0};
    ws_hindex seen = {0};
    const rows_ref ref = {&rows};
    if (ws_imp_header(c, path, "the header dataset,network,optimizer,"
                      "batch_size,power_limit,epoch,start,end", cols, E_N, err))
        goto out;
    nf = ws_csv_nfields(c);
    while ((r = ws_csv_next(c, err)) == 1) {
        long line = ws_csv_line(c);
        const char *f[E_N];
        long bs, pl;
        if (ws_imp_job_row(c, path, nf, cols, E_N, f, &bs, err)) goto out;
        epoch_row *grown = ws_imp_grow(rows, &cap, n, sizeof *rows, 64, err);
        if (!grown) goto out;
        rows = grown;
        epoch_row *e = &rows[n];
        memset(e, 0, sizeof *e);
        e->line = line;
        e->id = n;
        n++;
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
            /* A wall time in the log's IANA zone (the log was made UTC):
             * its instant, unless the hour a fall back repeats leaves two. */
            if (!zoned && !in->epochs_tz_set && in->log_zone) {
                double u[2];
                if (!zone_set) {
                    if (ws_zone_set(in->log_zone, &zsaved, err)) goto out;
                    zone_set = 1;
                }
                const int nu = ws_zone_instants(*t, u);
                if (nu != 1) {
                    ws_fail(err, "%s:%ld: %s: %s %s in %s (--log-tz): write the time"
                            " with its UTC offset (e.g. 2025-11-02T01:30:00-04:00) or in"
                            " Unix seconds", path, line, cols[k].name, f[k],
                            nu ? "comes twice (the hour a fall back repeats)"
                               : "does not exist (the clock springs forward over it)",
                            in->log_zone);
                    goto out;
                }
                *t = u[0];
            }
            /* An instant moves onto the log's clock; so does a wall time
             * once --epochs-tz says its zone. */
            if (!zoned && in->epochs_tz_set) *t -= in->epochs_tz;
            if (zoned || in->epochs_tz_set) *t += in->tz_offset;
            if (k == E_START) e->zoned = zoned;
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
    if (zone_set) ws_zone_restore(&zsaved);
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

/* "+HH:MM" of s seconds. */
static void fmt_zone(double s, char *buf, size_t size)
{
    const long m = lround(fabs(s) / 60);
    snprintf(buf, size, "%c%02ld:%02ld", s < 0 ? '-' : '+', m / 60, m % 60);
}

/* What to do about an epoch [e->start, e->end] outside a log spanning
 * [first, last]: when a whole number of quarter hours (up to 26 h) would
 * bring it inside, a clock zone is off, and the option that says it is
 * named with its value -- the log's zone (--log-tz) when nvidia-smi's
 * wall clock meets an instant, else EPOCHS.csv's (--epochs-tz: its times
 * written without a zone, against a log in Unix time or on another wall
 * clock). Else the log does not cover the run. An epoch partly inside
 * the log is not a zone's doing that any shift would tell (in a long log
 * some shift always fits): the logger started late or stopped early, or
 * the last line was cut; say by how much, and name no option. */
static void clock_hint(const ws_power_import *in, const epoch_row *e, double first,
                       double last, char *buf, size_t size)
{
    if (e->end > first && e->start < last) {
        const int late = e->start < first;
        snprintf(buf, size, "; the log %s %.4g s %s the epoch %s: it does not cover the"
                 " whole epoch", late ? "starts" : "ends",
                 late ? first - e->start : e->end - last, late ? "after" : "before",
                 late ? "starts" : "ends");
        return;
    }
    /* The shifts that fit: [lo, hi], not 0 (the epoch is outside), so the
     * quarter hours in it all have one sign; the smallest. */
    const double lo = fmax(first - e->start, -26 * 3600.0);
    const double hi = fmin(last - e->end, 26 * 3600.0);
    const double a = ceil(lo / 900), b = floor(hi / 900);
    const double q = a > b ? NAN : a > 0 ? a * 900 : b * 900;
    char z[48];
    if (isnan(q)) {
        snprintf(buf, size, "; the log does not cover the run");
    } else if (in->log_has_clock && e->zoned) {
        fmt_zone(in->tz_offset + q, z, sizeof z);
        snprintf(buf, size, "; shifted %+.4g h it would be: is the log's clock in another"
                 " zone? pass --log-tz with its IANA name (e.g. America/New_York), which"
                 " follows its changes of offset; --log-tz %s only if the clock kept that"
                 " offset throughout the log", q / 3600, z);
    } else if (e->zoned) {
        snprintf(buf, size, "; the log does not cover the run (both are in UTC)");
    } else {
        fmt_zone((!in->epochs_tz_set ? in->log_has_clock ? in->tz_offset : 0
                                       : in->epochs_tz) - q, z, sizeof z);
        snprintf(buf, size, "; shifted %+.4g h it would be: are EPOCHS.csv's times in"
                 " another zone? pass --epochs-tz %s (or write the zone in them)",
                 q / 3600, z);
    }
}

/* The energy of one epoch from power or counter series (each GPU's into
 * gpu_e), its error bound, and the power limit the log read during it. */
static int series_energy(const ws_power_import *in, epoch_row *e, double *gpu_e,
                         const double *gmax, ws_error *err)
{
    const ws_telemetry *t = in->tel;
    char a[32], b[32], lo[32], hi[32];
    e->energy = e->bound = 0;
    for (size_t k = 0; k < t->n_gpu; k++) {
        const ws_tel_gpu *g = &t->gpu[k];
        double first = g->s[0].t, last = g->s[g->n - 1].t;
        if (e->start < first || e->end > last) {
            ws_imp_fmt_time(e->start, a, sizeof a);
            ws_imp_fmt_time(e->end, b, sizeof b);
            ws_imp_fmt_time(first, lo, sizeof lo);
            ws_imp_fmt_time(last, hi, sizeof hi);
            char hint[512];
            clock_hint(in, e, first, last, hint, sizeof hint);
            return ws_fail(err, "%s:%ld: epoch %ld (%s to %s) is not covered by the"
                           " samples of GPU %s in %s (%s to %s)%s", in->epochs_path,
                           e->line, e->epoch, a, b, g->id, t->path, lo, hi, hint);
        }
        double gap;
        long gap_line;
        const double joules = ws_tel_energy(g, t->kind, e->start, e->end, &gap, &gap_line);
        gpu_e[k] = joules;
        e->energy += joules;
        e->bound += ws_tel_energy_bound(g, t->kind, e->start, e->end);
        /* Gaps longer than the default --max-gap, let through by a larger
         * one: not sampled, so counted in the error at their worst. */
        e->bound += ws_tel_hole_bound(g, t->kind, e->start, e->end,
                                      WS_DEFAULT_MAX_GAP * g->interval);
        /* on a node of mixed models, the knob as far as this GPU goes */
        const double pl = gmax[k] > 0 && gmax[k] < e->pl ? gmax[k] : e->pl;
        const ws_tel_sample *off = ws_tel_limit_off(g, e->start, e->end, pl);
        if (off && pl < e->pl)
            return ws_fail(err, "%s:%ld: power_limit is %d W, above the largest limit GPU"
                           " %s reads (%.6g W), which it should then read, but %s:%ld reads"
                           " %.6g W on it during this epoch: the epoch is labelled with"
                           " another knob's limit (rows swapped?); correct EPOCHS.csv",
                           in->epochs_path, e->line, e->pl, g->id, pl, t->path, off->line,
                           off->lim);
        if (off)
            return ws_fail(err, "%s:%ld: power_limit is %d W, but %s:%ld reads a power"
                           " limit of %.6g W on GPU %s during this epoch: the epoch is"
                           " labelled with another knob's limit (rows swapped?); correct"
                           " EPOCHS.csv", in->epochs_path, e->line, e->pl, t->path,
                           off->line, off->lim, g->id);
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

/* The windows in order[a, b) (by start) that start within the tolerance
 * of e's start. */
static void candidates(const ws_power_import *in, const win_ref *order, const epoch_row *e,
                       size_t *a_out, size_t *b_out)
{
    const ws_telemetry *t = in->tel;
    const double tol = in->match_tolerance;
    size_t lo = 0, hi = t->n_win;                 /* first start >= e->start - tol */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (order[mid].start < e->start - tol) lo = mid + 1; else hi = mid;
    }
    size_t b = lo;
    while (b < t->n_win && order[b].start <= e->start + tol) b++;
    *a_out = lo;
    *b_out = b;
}

/* The window name that times the epochs: --window NAME, else the name
 * whose windows start with and last as long as the most epochs (both
 * within the tolerance). ZeusMonitor's documented pattern nests "step"
 * windows inside an "epoch" window: the first step starts with the epoch
 * too, but lasts a fraction of it. Each epoch costs its candidates (the
 * windows starting within the tolerance of it). */
/* Whether window name `name` is one --window names: a comma-separated
 * list of names or shell patterns ("epoch", "train_*,eval_*"). */
static int window_selected(const char *list, const char *name)
{
    char buf[256];
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
        if (*buf && fnmatch(buf, name, 0) == 0) return 1;
        if (!comma) return 0;
        p = comma + 1;
    }
}

static int choose_window(const ws_power_import *in, const win_ref *order,
                         const epoch_row *rows, size_t n, unsigned char *sel,
                         const char **label, ws_error *err)
{
    const ws_telemetry *t = in->tel;
    const double tol = in->match_tolerance;
    if (in->window) {
        int any = 0;
        for (size_t i = 0; i < t->n_win_name; i++)
            any |= sel[i] = (unsigned char)window_selected(in->window, t->win_name[i]);
        *label = in->window;
        if (any) return 0;
        char list[256] = "";
        for (size_t i = 0; i < t->n_win_name && strlen(list) < 200; i++) {
            if (list[0]) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, t->win_name[i], sizeof list - strlen(list) - 1);
        }
        return ws_fail(err, "--window: %s has no window named '%s' (it has %s)", t->path,
                       in->window, list);
    }
    sel[0] = 1;
    *label = t->n_win_name ? t->win_name[0] : "";
    if (t->n_win_name <= 1) return 0;
    size_t *fit = calloc(2 * t->n_win_name, sizeof *fit), *near = fit + t->n_win_name;
    if (!fit) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        size_t a, b;
        candidates(in, order, &rows[i], &a, &b);
        for (size_t k = a; k < b; k++) {
            const ws_tel_window *w = &t->win[order[k].k];
            near[w->name]++;
            fit[w->name] += fabs(w->elapsed - (rows[i].end - rows[i].start)) <= tol;
        }
    }
    size_t best = 0, second = SIZE_MAX;
    for (size_t i = 1; i < t->n_win_name; i++) {
        if (fit[i] > fit[best] || (fit[i] == fit[best] && near[i] > near[best])) {
            second = best;
            best = i;
        } else if (second == SIZE_MAX || fit[i] > fit[second]
                   || (fit[i] == fit[second] && near[i] > near[second])) {
            second = i;
        }
    }
    int tie = second != SIZE_MAX && fit[second] == fit[best] && near[second] == near[best]
              && near[best] > 0;
    size_t nb = fit[best];
    free(fit);
    /* One name for every epoch can work only if it times them all; else
     * the epochs are timed by several names (epoch_1, epoch_2, ...). */
    if (tie && nb < n)
        return ws_fail(err, "%s: windows named '%s' and '%s' each start with and last as"
                       " long as %zu of the %zu epochs of %s (within %g s): no one name"
                       " times them all; pass --window with every name that does, or a"
                       " pattern (e.g. --window 'epoch_*')", t->path, t->win_name[best],
                       t->win_name[second], nb, n, in->epochs_path, in->match_tolerance);
    if (tie)
        return ws_fail(err, "%s: windows named '%s' and '%s' both start with and last as"
                       " long as %zu epoch%s of %s (within %g s): which name times the"
                       " epochs cannot be told; pass --window NAME", t->path,
                       t->win_name[best], t->win_name[second], nb, nb == 1 ? "" : "s",
                       in->epochs_path, in->match_tolerance);
    sel[0] = 0;
    sel[best] = 1;
    *label = t->win_name[best];
    return 0;
}

/* For the hint of an epoch that no window matches: the smallest whole
 * number of quarter hours (up to 26 h, not 0) by which a window that could
 * have timed it -- of any name (the name was chosen on the unshifted
 * times), lasting as long as the epoch within the tolerance -- starts
 * away from it (a zone); NAN when none does. Any window would not do:
 * 'step' windows every second sit within the tolerance of nearly every
 * shift of a long log. */
static double zone_shift(const ws_power_import *in, const epoch_row *e)
{
    const ws_telemetry *t = in->tel;
    const double tol = in->match_tolerance, dur = e->end - e->start;
    double q = NAN;
    for (size_t k = 0; k < t->n_win; k++) {
        const ws_tel_window *w = &t->win[k];
        if (fabs(w->elapsed - dur) > tol) continue;
        const double d = w->start - e->start, n = round(d / 900);
        if (n == 0 || fabs(n) > 26 * 4 || fabs(d - 900 * n) > tol) continue;
        if (isnan(q) || fabs(900 * n) < fabs(q)) q = 900 * n;
    }
    return q;
}

/* The energy of one epoch from the window named `name` that starts within
 * the tolerance of it (binary search in `order`, the windows by start).
 * Two such windows are refused, with their count: which one timed the
 * epoch cannot be told, and picking the closest would be a guess. A window
 * whose elapsed time differs from the epoch's by more than the tolerance
 * did not time it (a step window, or the wrong end time): refused for that
 * epoch. The window's mean power is taken over the epoch's duration:
 * e->energy = window energy * epoch duration / elapsed. */
static int window_energy(const ws_power_import *in, const win_ref *order,
                         const unsigned char *sel, const char *wn,
                         epoch_row *e, double *gpu_e, long *used_by, ws_error *err)
{
    const ws_telemetry *t = in->tel;
    const double tol = in->match_tolerance;
    size_t a, b, match = SIZE_MAX, second = SIZE_MAX, count = 0;
    candidates(in, order, e, &a, &b);
    for (size_t k = a; k < b; k++) {
        if (!sel[t->win[order[k].k].name]) continue;
        if (!count++) match = order[k].k;
        else if (count == 2) second = order[k].k;
    }
    char when[32];
    ws_imp_fmt_time(e->start, when, sizeof when);
    if (!count) {
        /* A whole number of quarter hours away: a zone, not a tolerance. */
        const double q = zone_shift(in, e);
        if (!isnan(q)) {
            char z[48];
            fmt_zone((!in->epochs_tz_set ? 0 : in->epochs_tz) - q, z, sizeof z);
            return ws_fail(err, "%s:%ld: no window in %s starts within %g s of epoch %ld's"
                           " start (%s UTC), but one starts %+.4g h from it: are"
                           " EPOCHS.csv's times in another zone? pass --epochs-tz %s (or"
                           " write the zone in them)", in->epochs_path, e->line, t->path,
                           tol, e->epoch, when, q / 3600, z);
        }
        /* After every window of the name, with the log's last line cut
         * short (and no zone, above): that line was most likely this
         * epoch's window (ZeusMonitor writes it when the window ends,
         * after its steps). */
        int after = t->cut_line > 0;
        for (size_t k = 0; k < t->n_win && after; k++)
            if (sel[t->win[k].name] && t->win[k].start > e->start - tol) after = 0;
        if (after)
            return ws_fail(err, "%s:%ld: no window named '%s' in %s starts within %g s of"
                           " epoch %ld's start (%s UTC); the log's last line, %s:%ld, cut"
                           " short, was skipped: if it timed this epoch, leave the epoch out"
                           " of %s", in->epochs_path, e->line, wn, t->path, tol, e->epoch,
                           when, t->path, t->cut_line, in->epochs_path);
        return ws_fail(err, "%s:%ld: no window named '%s' in %s starts within %g s of"
                       " epoch %ld's start (%s UTC); pass --match-tolerance S to widen the"
                       " match, or --window with the names (or a pattern) of the windows"
                       " that time the epochs", in->epochs_path,
                       e->line, wn, t->path, tol, e->epoch, when);
    }
    if (count > 1) {
        size_t x = match, y = second;
        if (t->win[y].line < t->win[x].line) { size_t z = x; x = y; y = z; }
        return ws_fail(err, "%s:%ld: %zu windows named '%s' in %s start within %g s of"
                       " epoch %ld's start (%s UTC), e.g. lines %ld (%.6g J) and %ld"
                       " (%.6g J): which one timed the epoch cannot be told; keep one"
                       " window per epoch in the log, or pass a smaller --match-tolerance",
                       in->epochs_path, e->line, count, wn, t->path, tol, e->epoch, when,
                       t->win[x].line, window_joules(t, x), t->win[y].line,
                       window_joules(t, y));
    }
    const ws_tel_window *w = &t->win[match];
    const double dur = e->end - e->start;
    if (used_by[match])
        return ws_fail(err, "%s:%ld: the window at %s:%ld is also the closest to the"
                       " epoch at line %ld", in->epochs_path, e->line, t->path,
                       w->line, used_by[match]);
    used_by[match] = e->line;
    if (fabs(w->elapsed - dur) > tol)
        return ws_fail(err, "%s:%ld: epoch %ld lasts %.6g s, but the window '%s' that"
                       " starts with it (%s:%ld) lasts %.6g s, more than %g s apart: it"
                       " did not time this epoch; check the epoch's end, or pass --window"
                       " NAME for the windows that time whole epochs", in->epochs_path,
                       e->line, e->epoch, dur, t->win_name[w->name], t->path, w->line,
                       w->elapsed, tol);
    /* The window's mean power stands for the epoch's: off by at most the
     * slivers where they differ, if the power there is within [0, twice the
     * mean]. */
    const double sliver = fabs(w->start - e->start)
                          + fabs(w->start + w->elapsed - e->end);
    e->energy = e->bound = 0;
    for (size_t k = 0; k < t->n_gpu; k++) {
        double v = t->gpu[k].s[match].v;
        if (isnan(v))
            return ws_fail(err, "%s:%ld: gpu%s_energy is empty, but the epoch at %s:%ld"
                           " uses this window", t->path, w->line,
                           t->gpu[k].id, in->epochs_path, e->line);
        const double secs = w->elapsed;
        if (v > WS_MAX_GPU_POWER * secs)
            return ws_fail(err, "%s:%ld: gpu%s_energy: %.6g J in a window of %.6g s is"
                           " %.6g W, more than any GPU draws (%g W): a broken reading or"
                           " not joules", t->path, w->line, t->gpu[k].id, v,
                           secs, v / secs, WS_MAX_GPU_POWER);
        gpu_e[k] = v * dur / secs;
        e->energy += gpu_e[k];
        e->bound += v / secs * sliver;
    }
    return 0;
}

/* One warning for the knobs whose energy may be off by more than
 * WS_ENERGY_ERROR_WARN, with the worst. */
static void sampling_warning(const ws_power_import *in, const ws_power_table *t,
                             ws_warnings *w)
{
    size_t over = 0;
    const ws_power_out_row *worst = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const ws_power_out_row *r = &t->rows[i];
        if (r->energy_error > WS_ENERGY_ERROR_WARN) over++;
        if (!worst || r->energy_error > worst->energy_error) worst = r;
    }
    if (!over) return;
    const ws_telemetry *tel = in->tel;
    double interval = 0;
    for (size_t k = 0; k < tel->n_gpu; k++)
        if (tel->gpu[k].interval > interval) interval = tel->gpu[k].interval;
    char how[160];
    if (tel->kind == WS_TEL_WINDOWS)
        snprintf(how, sizeof how, "ZeusMonitor windows and epochs start or end apart");
    else
        snprintf(how, sizeof how, "samples every %.3g s against epochs of %.3g s", interval,
                 worst->time_per_epoch);
    /* The remedy of each: windows are not sampled, they are misaligned. */
    ws_warn(w, "%s:%ld: the energy of %zu of %zu knob%s may be off by more than %g %% (%s),"
            " worst batch_size %d at %d W: up to %.3g %%; %s", in->epochs_path, worst->line,
            over, t->n, ws_s(t->n), 100 * WS_ENERGY_ERROR_WARN, how, worst->bs, worst->pl,
            100 * worst->energy_error, tel->kind == WS_TEL_WINDOWS
            ? "open and close each window where its epoch starts and ends (begin_window and"
              " end_window next to the epoch's own timing), or check EPOCHS.csv's times"
            : "sample more often, or measure longer epochs");
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A selected GPU that stays idle through every epoch -- in each, its mean
 * power under a third of the median of the other GPUs' -- did not run the
 * job: summed in, it adds its idle draw to every epoch and its limit to
 * the job's MaxPower. Named in one warning, with the --gpus that leaves
 * the idle ones out. -1 out of memory. */
static int idle_gpus(const ws_power_import *in, const epoch_row *rows, size_t n,
                     const double *gpu_e, ws_warnings *w)
{
    const ws_telemetry *t = in->tel;
    const size_t ng = t->n_gpu;
    if (ng < 2 || !n) return 0;
    unsigned char *idle = malloc(ng);
    double *other = malloc(ng * sizeof *other), *mean = calloc(ng, sizeof *mean);
    if (!idle || !other || !mean) {
        free(idle);
        free(other);
        free(mean);
        return -1;
    }
    memset(idle, 1, ng);
    double busy_min = INFINITY, busy_max = 0, time = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = rows[i].end - rows[i].start;
        const double *e = &gpu_e[rows[i].id * ng];
        time += d;
        for (size_t g = 0; g < ng; g++) {
            size_t m = 0;
            for (size_t h = 0; h < ng; h++)
                if (h != g) other[m++] = e[h] / d;
            qsort(other, m, sizeof *other, cmp_double);
            const double med = m % 2 ? other[m / 2] : (other[m / 2 - 1] + other[m / 2]) / 2;
            if (!(e[g] / d < med / 3)) idle[g] = 0;
            mean[g] += e[g];
        }
    }
    size_t n_idle = 0;
    char ids[256] = "", keep[256] = "";
    for (size_t g = 0; g < ng; g++) {
        mean[g] /= time;
        char *to = idle[g] ? ids : keep;
        if (strlen(to) + strlen(t->gpu[g].id) + 2 < sizeof ids)
            snprintf(to + strlen(to), sizeof ids - strlen(to), "%s%s", *to ? "," : "",
                     t->gpu[g].id);
        if (idle[g]) {
            n_idle++;
        } else {
            busy_min = fmin(busy_min, mean[g]);
            busy_max = fmax(busy_max, mean[g]);
        }
    }
    if (n_idle && n_idle < ng) {
        double idle_w = 0;
        for (size_t g = 0; g < ng; g++) idle_w += idle[g] ? mean[g] : 0;
        ws_warn(w, "%s: GPU%s %s stay%s idle through every epoch (%.4g W in all, against"
                " %.4g to %.4g W for each other GPU): did the job run on %s? Summed in, %s"
                " add%s %.4g W to every knob and %zu GPU%s to gpus_per_job (MaxPower);"
                " --gpus %s leaves %s out", t->path, n_idle == 1 ? "" : "s", ids,
                n_idle == 1 ? "s" : "", idle_w, busy_min, busy_max,
                n_idle == 1 ? "it" : "them", n_idle == 1 ? "it" : "they",
                n_idle == 1 ? "s" : "", idle_w, n_idle, n_idle == 1 ? "" : "s", keep,
                n_idle == 1 ? "it" : "them");
    }
    free(idle);
    free(other);
    free(mean);
    return 0;
}

/* The highest power limit the log read on GPU g, 0 when none. */
double ws_tel_gpu_limit(const ws_tel_gpu *g)
{
    double m = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->s[i].lim > m) m = g->s[i].lim;
    return m;
}

/* GPUs of different models (nvidia-smi's `name`) in one job: each runs at
 * its own limits, so the job's MaxPower is the sum of each GPU's own
 * largest limit the log read (an A100 of 400 W and a V100 of 300 W: 700 W,
 * not 2 x 400 W), written to the trace's max_power column; and during an
 * epoch at power_limit P a GPU reads P, or its own largest limit where
 * that is lower (the knob as far as its model goes): gmax[k], else 0.
 * wattsim has no table of models' limits, so without the limit column the
 * sum is not known: refused, asking for the column. *max_power is 0 for a
 * node of one model. */
static int mixed_models(const ws_telemetry *t, double *gmax, double *max_power,
                        ws_error *err)
{
    const ws_tel_gpu *a = NULL, *b = NULL;
    *max_power = 0;
    for (size_t k = 0; k < t->n_gpu; k++) gmax[k] = 0;
    for (size_t k = 0; k < t->n_gpu && !b; k++) {
        const ws_tel_gpu *g = &t->gpu[k];
        if (!g->model) continue;
        if (!a) a = g;
        else if (strcmp(a->model, g->model)) b = g;
    }
    if (!b) return 0;
    double sum = 0;
    for (size_t k = 0; k < t->n_gpu; k++) {
        const ws_tel_gpu *g = &t->gpu[k];
        if (!(gmax[k] = ws_tel_gpu_limit(g)))
            return ws_fail(err, "%s: GPUs of different models in one job (GPU %s is %.48s,"
                           " GPU %s %.48s), and GPU %s has no power limit in the log: the"
                           " job's MaxPower is the sum of its GPUs' own limits, which"
                           " wattsim cannot know without them (it has no table of models'"
                           " limits); log them (nvidia-smi --query-gpu=timestamp,index,name,"
                           "power.draw,power.limit ...)", t->path, a->id, a->model, b->id,
                           b->model, g->id);
        sum += gmax[k];
    }
    *max_power = sum;
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
    size_t ng = in->tel->n_gpu;
    unsigned char *sel = NULL;
    const char *label = "";
    win_ref *order = NULL;
    double *gpu_e = NULL, *gmax = NULL;
    if (!(gmax = calloc(ng + 1, sizeof *gmax))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    if (mixed_models(in->tel, gmax, &out->max_power, err)
        || check_overlaps(in, rows, n, err))
        goto out;
    if (!(gpu_e = calloc(n * ng + 1, sizeof *gpu_e))) {
        ws_fail(err, "out of memory");
        goto out;
    }
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
        if (!(sel = calloc(in->tel->n_win_name + 1, 1))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        if (choose_window(in, order, rows, n, sel, &label, err)) goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (in->tel->kind == WS_TEL_WINDOWS
                ? window_energy(in, order, sel, label, &rows[i], &gpu_e[i * ng], used_by, err)
                : series_energy(in, &rows[i], &gpu_e[i * ng], gmax, err))
            goto out;
    if (idle_gpus(in, rows, n, gpu_e, w)) {
        ws_fail(err, "out of memory");
        goto out;
    }
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
        double time = 0, energy = 0, bound = 0;
        for (size_t k = i; k < j; k++) {
            time += rows[k].end - rows[k].start;
            energy += rows[k].energy;
            bound += rows[k].bound;
        }
        /* Physically possible: no GPU draws more than its limit on average
         * over the knob's epochs, beyond what a sensor may be off (5 %). */
        for (size_t g = 0; g < ng; g++) {
            double eg = 0;
            for (size_t k = i; k < j; k++) eg += gpu_e[rows[k].id * ng + g];
            const double pg = eg / time;
            if (pg > rows[i].pl * (1 + WS_SENSOR_TOLERANCE)) {
                ws_fail(err, "%s:%ld: batch_size %d at %d W: GPU %s drew %.6g W on average"
                        " during its %zu epoch%s, %.3g %% above its power limit (a power"
                        " sensor is off by at most %g %%): is power_limit the limit these"
                        " epochs ran at (rows swapped?), and the log's unit watts?",
                        in->epochs_path, rows[i].line, rows[i].bs, rows[i].pl,
                        in->tel->gpu[g].id, pg, j - i, j - i == 1 ? "" : "s",
                        100 * (pg / rows[i].pl - 1), 100 * WS_SENSOR_TOLERANCE);
                goto out;
            }
        }
        ws_power_out_row *o = &out->rows[out->n++];
        o->bs = rows[i].bs;
        o->pl = rows[i].pl;
        o->epochs = (int)(j - i);
        o->time_per_epoch = time / (double)(j - i);
        o->average_power = energy / time;
        o->energy_error = energy > 0 ? bound / energy : 0;
        o->line = rows[i].line;
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
    sampling_warning(in, out, w);
    rc = 0;
out:
    free(sel);
    free(gmax);
    free(gpu_e);
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
    /* max_power only for a node of mixed models: the job's MaxPower is
     * then not the largest limit x gpus_per_job */
    fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,"
          "average_power,energy_error,gpus_per_job", o.f);
    fputs(t->max_power > 0 ? ",max_power\n" : "\n", o.f);
    for (size_t i = 0; i < t->n; i++) {
        const ws_power_out_row *r = &t->rows[i];
        ws_csv_str(o.f, r->dataset);
        fputc(',', o.f);
        ws_csv_str(o.f, r->network);
        fprintf(o.f, ",%d,", r->bs);
        ws_csv_str(o.f, r->optimizer);
        fprintf(o.f, ",%d,%.17g,%.17g,%.6g,%d", r->pl, r->time_per_epoch, r->average_power,
                r->energy_error, t->gpus);
        if (t->max_power > 0) fprintf(o.f, ",%.17g", t->max_power);
        fputc('\n', o.f);
    }
    return ws_outfile_commit(&o, err);
}

/* ------------------------------------------- Zeus's power limit profile */

/* The limit W of a window named WS_PLO_WINDOW<W>, else 0. */
static long plo_limit(const char *name)
{
    const size_t n = strlen(WS_PLO_WINDOW);
    long w;
    if (strncmp(name, WS_PLO_WINDOW, n) || ws_imp_posint(name + n, WS_MAX_POWER_LIMIT, &w))
        return 0;
    return w;
}

int ws_plo_detect(const ws_telemetry *t)
{
    for (size_t i = 0; t->kind == WS_TEL_WINDOWS && i < t->n_win_name; i++)
        if (plo_limit(t->win_name[i])) return 1;
    return 0;
}

/* The profile's windows: index k of t->win per limit, one each. */
typedef struct plo_win {
    long pl;
    size_t k;
} plo_win;

static int cmp_plo(const void *a, const void *b)
{
    const plo_win *x = a, *y = b;
    return (x->pl > y->pl) - (x->pl < y->pl);
}

int ws_import_plo(const ws_plo_import *in, ws_power_table *out, ws_warnings *w,
                  ws_error *err)
{
    memset(out, 0, sizeof *out);
    const ws_telemetry *t = in->tel;
    const size_t ng = t->n_gpu;
    plo_win *pw = calloc(t->n_win + 1, sizeof *pw);
    epoch_row *rows = NULL;
    size_t np = 0, n = 0;
    ws_imp_names names = {0};
    int rc = -1;
    if (!pw) return ws_fail(err, "out of memory");
    for (size_t k = 0; k < t->n_win; k++) {
        const long pl = plo_limit(t->win_name[t->win[k].name]);
        if (!pl) continue;
        for (size_t j = 0; j < np; j++)
            if (pw[j].pl == pl) {
                ws_fail(err, "%s:%ld: a second profile window for %ld W (the first at line"
                        " %ld): which one measured the limit cannot be told; keep one",
                        t->path, t->win[k].line, pl, t->win[pw[j].k].line);
                goto out;
            }
        pw[np++] = (plo_win){pl, k};
    }
    if (!np) {
        ws_fail(err, "%s: no window named " WS_PLO_WINDOW "<W> (a GlobalPowerLimitOptimizer"
                " profile)", t->path);
        goto out;
    }
    qsort(pw, np, sizeof *pw, cmp_plo);
    const char *dataset = in->dataset, *network = in->network, *optimizer = in->optimizer;
    int bs = in->bs;
    double scale;
    if (in->epochs) {
        /* One workload and batch size; the epochs at profiled limits say
         * how long the profiled steps are against an epoch. */
        if (read_epochs(in->epochs, &names, &rows, &n, err)) goto out;
        double dur = 0, prof = 0;
        for (size_t i = 0; i < n; i++) {
            const epoch_row *e = &rows[i];
            if (e->dataset != rows[0].dataset || e->network != rows[0].network
                || e->optimizer != rows[0].optimizer || e->bs != rows[0].bs) {
                ws_fail(err, "%s:%ld: %s/%s/%s at batch size %d, but line %ld is %s/%s/%s at"
                        " %d: a GlobalPowerLimitOptimizer profile measures one workload at"
                        " one batch size; give the epochs of the profiled run only",
                        in->epochs->epochs_path, e->line, e->dataset, e->network,
                        e->optimizer, e->bs, rows[0].line, rows[0].dataset,
                        rows[0].network, rows[0].optimizer, rows[0].bs);
                goto out;
            }
            for (size_t j = 0; j < np; j++)
                if (pw[j].pl == e->pl) {
                    dur += e->end - e->start;
                    prof += t->win[pw[j].k].elapsed;
                }
        }
        if (!(prof > 0)) {
            ws_fail(err, "%s: no epoch ran at a profiled limit (%ld W to %ld W): the time of"
                    " an epoch cannot be told from the profile's steps; list epochs that"
                    " ran wholly at one of them", in->epochs->epochs_path, pw[0].pl,
                    pw[np - 1].pl);
            goto out;
        }
        scale = dur / prof;
        dataset = rows[0].dataset;
        network = rows[0].network;
        optimizer = rows[0].optimizer;
        bs = rows[0].bs;
    } else {
        if (!(in->steps_per_epoch > 0)) {
            ws_fail(err, "%s: each profile window times %g training steps (--profile-steps),"
                    " not an epoch: pass --steps-per-epoch S (the steps of one epoch at"
                    " batch size %d), or --epochs with the run's epochs", t->path,
                    in->profile_steps, bs);
            goto out;
        }
        scale = in->steps_per_epoch / in->profile_steps;
    }
    out->gpus = (int)ng;
    size_t n_over = 0;
    long over_line = 0, worst_pl = 0;
    double worst_over = 0, worst_w = 0;
    const char *worst_gpu = NULL;
    if (!(out->rows = calloc(np, sizeof *out->rows))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t j = 0; j < np; j++) {
        const ws_tel_window *win = &t->win[pw[j].k];
        double energy = 0;
        for (size_t g = 0; g < ng; g++) {
            const double v = t->gpu[g].s[pw[j].k].v;
            if (isnan(v)) {
                ws_fail(err, "%s:%ld: gpu%s_energy is empty in the profile window for %ld W",
                        t->path, win->line, t->gpu[g].id, pw[j].pl);
                goto out;
            }
            /* Zeus names the window after the limit it set: a GPU above it
             * does not hold that limit (low limits often are not), which
             * is measured, not mislabelled: warned, with the worst. */
            const double over = v / win->elapsed / (double)pw[j].pl - 1;
            if (over > WS_SENSOR_TOLERANCE && !n_over++) over_line = win->line;
            if (over > WS_SENSOR_TOLERANCE && (!worst_gpu || over > worst_over)) {
                worst_over = over;
                worst_gpu = t->gpu[g].id;
                worst_pl = pw[j].pl;
                worst_w = v / win->elapsed;
            }
            energy += v;
        }
        ws_power_out_row *o = &out->rows[out->n++];
        o->bs = bs;
        o->pl = (int)pw[j].pl;
        o->epochs = 0;
        for (size_t i = 0; i < n; i++) o->epochs += rows[i].pl == o->pl;
        o->time_per_epoch = win->elapsed * scale;
        o->average_power = energy / win->elapsed;
        o->energy_error = 0;        /* the window's own counter: no integration */
        o->line = win->line;
        if (!(o->time_per_epoch >= WS_MIN_TIME_PER_EPOCH
              && o->time_per_epoch <= WS_MAX_TIME_PER_EPOCH)
            || !(o->average_power >= WS_MIN_AVERAGE_POWER
                 && o->average_power <= WS_MAX_AVERAGE_POWER)) {
            ws_fail(err, "%s:%ld: the profile window for %ld W gives %.6g s per epoch at"
                    " %.6g W, outside what a trace row may hold (%g s to %g s, %g W to"
                    " %g W); check --steps-per-epoch and the log's units", t->path,
                    win->line, pw[j].pl, o->time_per_epoch, o->average_power,
                    WS_MIN_TIME_PER_EPOCH, WS_MAX_TIME_PER_EPOCH, WS_MIN_AVERAGE_POWER,
                    WS_MAX_AVERAGE_POWER);
            goto out;
        }
        if (!(o->dataset = strdup(dataset)) || !(o->network = strdup(network))
            || !(o->optimizer = strdup(optimizer))) {
            ws_fail(err, "out of memory");
            goto out;
        }
    }
    if (n_over)
        ws_warn(w, "%s:%ld: %zu GPU reading%s of the profile above the window's limit by more"
                " than %g %% (the first here), worst GPU %s at %.6g W in the window for %ld W"
                " (%.3g %% above): the GPU did not hold that limit; the rows keep the power"
                " measured", t->path, over_line, n_over, n_over == 1 ? "" : "s",
                100 * WS_SENSOR_TOLERANCE, worst_gpu, worst_w, worst_pl, 100 * worst_over);
    rc = 0;
out:
    free(pw);
    free(rows);
    ws_imp_names_free(&names);
    if (rc) ws_power_table_free(out);
    return rc;
}
