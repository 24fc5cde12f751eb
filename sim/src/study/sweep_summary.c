/*
 * A sweep's statistics (see wattsim/sweep.h): the 95 % CI of a mean, the
 * per-cell summaries over seeds (means and CIs in
 * two passes over the cell's seeds, savings versus default and regret
 * versus oracle seed by seed), the final-knob tally and one step of the
 * learning curves. Nothing here runs a simulation or writes a file.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "wattsim/sweep.h"

/* ------------------------------------------------------------ stats */

/* The t quantile of a CI with df degrees of freedom, remembered for the
 * last df: every cell of a sweep has as many seeds, and every table asks
 * again (the incomplete-beta inversion is most of a summary's time). */
static double t975(double df)
{
    static _Thread_local double last_df = -1, last_t;
    if (df != last_df) {
        last_t = gsl_cdf_tdist_Pinv(0.975, df);
        last_df = df;
    }
    return last_t;
}

void ws_ci95(const double *x, size_t n, double *mean, double *lo, double *hi)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m += x[i];
    m = n ? m / (double)n : NAN;
    *mean = m;
    if (n < 2) { *lo = *hi = NAN; return; }
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    ws_ci95_bounds(m, ss, n, lo, hi);
}

void ws_ci95_bounds(double mean, double ss, size_t n, double *lo, double *hi)
{
    if (n < 2) { *lo = *hi = NAN; return; }
    double sd = sqrt(ss / (double)(n - 1));
    /* Equal values leave ss a few ulps above 0 (the mean's rounding: an
     * oracle's 20 equal totals printed "1145 ± 2.4e-13"); a spread within
     * that noise is none. */
    if (sd <= 4.0 * (double)n * DBL_EPSILON * fabs(mean)) sd = 0;
    double half = t975((double)(n - 1)) * sd / sqrt((double)n);
    *lo = mean - half;
    *hi = mean + half;
}

/* ------------------------------------------------------------ summary */

static double saving(double ours, double ref)
{
    return ref > 0 ? 1.0 - ours / ref : NAN;
}

/* The per-seed quantities of a cell's summary, and whether seed i has
 * them: every one when its simulation succeeded, regret only when
 * oracle's did too. */
enum { F_ENERGY, F_TIME, F_COST, F_STEADY_E, F_STEADY_T, F_CO2, F_USD, F_REGRET, N_F };

static int seed_values(const ws_sweep_sim *m, const ws_sweep_sim *q, double x[N_F], int has[N_F])
{
    if (m->failed) return 0;
    x[F_ENERGY] = m->energy_j;
    x[F_TIME] = m->time_s;
    x[F_COST] = m->cost;
    x[F_STEADY_E] = m->steady_energy;
    x[F_STEADY_T] = m->steady_time;
    x[F_CO2] = m->co2_g;
    x[F_USD] = m->usd;
    x[F_REGRET] = m->cost - q->cost;
    for (int f = 0; f < N_F; f++) has[f] = f != F_REGRET || !q->failed;
    return 1;
}

/* ws_ci95's last step, from the mean and the sum of squared deviations
 * over k values. */
static void ci_from(double m, double ss, size_t k, ws_stat *st)
{
    st->mean = m;
    ws_ci95_bounds(m, ss, k, &st->lo, &st->hi);
}

/* The simulations are read through cursors (they may be in a file), the
 * cell's, default's and oracle's at the same seeds, in two passes over the
 * seeds: the first sums every quantity (and the savings' sums), the second
 * the squared deviations from the means. Each quantity gets exactly
 * ws_ci95's additions in its order, so the same bits, without n doubles of
 * scratch per quantity. */
void ws_sweep_summarise(const ws_sweep *s, size_t cell, ws_sweep_summary *o)
{
    size_t ax[6], n = s->n_seeds, base = cell * n;
    ws_sweep_axes(s, base, ax);
    memset(o, 0, sizeof *o);
    o->pair = ax[0]; o->gpu = ax[1]; o->work = ax[2]; o->eta = ax[3]; o->beta = ax[4];
    o->recurrences = ws_sweep_recurrences(s, base);
    o->error = ws_sweep_cell_error(s, cell);
    size_t dref = ws_sweep_index(s, s->ref_default, ax[1], ax[2], ax[3], ax[4], 0);
    size_t oref = ws_sweep_index(s, s->ref_oracle, ax[1], ax[2], ax[3], ax[4], 0);
    ws_sweep_cursor cm, cd, co;
    ws_sweep_cursor_init(&cm, s, n);
    ws_sweep_cursor_init(&cd, s, n);
    ws_sweep_cursor_init(&co, s, n);
    /* Our sums and default's over the seeds where both succeeded. */
    double oe = 0, ot = 0, oc = 0, ose = 0, ost = 0;
    double de = 0, dt = 0, dc = 0, dse = 0, dst = 0;
    size_t kd = 0;
    double sum[N_F] = {0}, mean[N_F], ss[N_F] = {0}, x[N_F];
    size_t k[N_F] = {0};
    int has[N_F];
    for (size_t i = 0; i < n; i++) {
        const ws_sweep_sim *m = ws_sweep_sim_at(&cm, base + i);
        const ws_sweep_sim *q = ws_sweep_sim_at(&co, oref + i);
        if (!seed_values(m, q, x, has)) {
            o->seeds_failed++;
            continue;
        }
        for (int f = 0; f < N_F; f++)
            if (has[f]) { sum[f] += x[f]; k[f]++; }
        o->seeds_ok++;
        const ws_sweep_sim *d = ws_sweep_sim_at(&cd, dref + i);
        if (!d->failed) {
            kd++;
            oe += m->energy_j; ot += m->time_s; oc += m->cost;
            ose += m->steady_energy; ost += m->steady_time;
            de += d->energy_j;
            dt += d->time_s;
            dc += d->cost;
            dse += d->steady_energy;
            dst += d->steady_time;
        }
    }
    size_t most = 0;
    for (int f = 0; f < N_F; f++) {
        mean[f] = k[f] ? sum[f] / (double)k[f] : NAN;
        if (k[f] > most) most = k[f];
    }
    for (size_t i = 0; most >= 2 && i < n; i++)
        if (seed_values(ws_sweep_sim_at(&cm, base + i), ws_sweep_sim_at(&co, oref + i), x, has))
            for (int f = 0; f < N_F; f++)
                if (has[f]) ss[f] += (x[f] - mean[f]) * (x[f] - mean[f]);
    ws_sweep_cursor_free(&cm);
    ws_sweep_cursor_free(&cd);
    ws_sweep_cursor_free(&co);
    ws_stat *stats[N_F] = {&o->energy, &o->time, &o->cost, &o->steady_energy, &o->steady_time,
                           &o->co2, &o->usd, &o->regret};
    for (int f = 0; f < N_F; f++) ci_from(mean[f], ss[f], k[f], stats[f]);
    if (!kd) {
        o->save_energy = o->save_time = o->save_cost = NAN;
        o->save_steady_energy = o->save_steady_time = NAN;
    } else if (base == dref) {              /* exactly 0 for the reference itself */
        o->save_energy = o->save_time = o->save_cost = 0;
        o->save_steady_energy = o->save_steady_time = 0;
    } else {
        /* Ratios of sums over the same seeds = ratios of means. */
        o->save_energy = saving(oe, de);
        o->save_time = saving(ot, dt);
        o->save_cost = saving(oc, dc);
        o->save_steady_energy = saving(ose, dse);
        o->save_steady_time = saving(ost, dst);
    }
}

/* Final knobs over seeds: "bs:pl=count;..." by count (desc), then knob. */
static int by_knob(const void *a, const void *b)
{
    const ws_knob_count *x = a, *y = b;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    if (x->pl != y->pl) return x->pl < y->pl ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int by_count(const void *a, const void *b)
{
    const ws_knob_count *x = a, *y = b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    return by_knob(a, b);
}

/* Room tally_knobs needs: the most knobs of any job. */
size_t ws_sweep_knob_room(const ws_sweep *s)
{
    size_t most = 1;
    for (size_t j = 0; j < s->n_gpus * s->n_work; j++) {
        const ws_job *job = &s->jobs[j].job;
        if ((size_t)job->knob_start[job->n_bs] > most) most = (size_t)job->knob_start[job->n_bs];
    }
    return most;
}

/* The distinct final knobs of a cell's successful seeds into k (room for
 * ws_sweep_knob_room), each with its count and first seed, in (bs, pl) order: one
 * counter per knob of the job's table (sorted by batch size, then power
 * limit), so memory does not grow with seeds and time is linear in them. */
static size_t tally_knobs(const ws_sweep *s, size_t cell, ws_knob_count *k)
{
    size_t per_job = s->n_etas * s->n_betas * s->n_seeds;
    const ws_job *job = &s->jobs[(cell * s->n_seeds / per_job) % (s->n_gpus * s->n_work)].job;
    int nk = job->knob_start[job->n_bs];
    for (int b = 0; b < job->n_bs; b++)
        for (int q = job->knob_start[b]; q < job->knob_start[b + 1]; q++)
            k[q] = (ws_knob_count){job->bs[b], job->knob_pl[q], 0, 0};
    ws_sweep_cursor cur;
    ws_sweep_cursor_init(&cur, s, s->n_seeds);
    for (size_t i = 0; i < s->n_seeds; i++) {
        const ws_sweep_sim *x = ws_sweep_sim_at(&cur, cell * s->n_seeds + i);
        if (x->failed) continue;
        int lo = 0, hi = job->n_bs;                 /* the batch size, by bisection */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (job->bs[mid] < x->final_bs) lo = mid + 1; else hi = mid;
        }
        for (int q = lo < job->n_bs && job->bs[lo] == x->final_bs ? job->knob_start[lo] : nk;
             q < (lo < job->n_bs ? job->knob_start[lo + 1] : nk); q++)
            if (job->knob_pl[q] == x->final_pl) {
                if (!k[q].n++) k[q].first = i;
                break;
            }
    }
    ws_sweep_cursor_free(&cur);
    size_t m = 0;
    for (int q = 0; q < nk; q++)
        if (k[q].n) k[m++] = k[q];
    return m;
}

size_t ws_sweep_final_knobs(const ws_sweep *s, size_t cell, ws_knob_count *k)
{
    size_t m = tally_knobs(s, cell, k);
    qsort(k, m, sizeof *k, by_count);
    return m;
}

void ws_sweep_top_knob(const ws_sweep *s, size_t cell, int *bs, int *pl, size_t *n)
{
    *bs = *pl = 0;
    *n = 0;
    ws_knob_count *k = malloc(ws_sweep_knob_room(s) * sizeof *k);
    if (!k) return;
    size_t m = tally_knobs(s, cell, k), first = 0;
    for (size_t i = 0; i < m; i++)
        if (k[i].n > *n || (k[i].n == *n && k[i].first < first)) {
            *n = k[i].n;
            first = k[i].first;
            *bs = k[i].bs;
            *pl = k[i].pl;
        }
    free(k);
}


/* Cumulative cost (successful seeds) and regret versus oracle (seeds where
 * both succeeded) of cell `base`'s seeds up to recurrence r, advanced one
 * recurrence per call; cum/oc hold the running sums per seed. */
void ws_sweep_curve_step(const ws_sweep *s, size_t base, size_t oref, long r, double *cum,
                         double *oc, ws_stat *cost, ws_stat *regret)
{
    size_t n = s->n_seeds, k = 0, kr = 0;
    double *a = cum + n, *g = oc + n;        /* scratch after the running sums */
    ws_sweep_cursor cm, co;
    ws_sweep_cursor_init(&cm, s, n);
    ws_sweep_cursor_init(&co, s, n);
    for (size_t i = 0; i < n; i++) {
        const ws_sweep_sim *m = ws_sweep_sim_at(&cm, base + i), *q = ws_sweep_sim_at(&co, oref + i);
        if (m->rec_cost) cum[i] += m->rec_cost[r];
        if (q->rec_cost) oc[i] += q->rec_cost[r];
        if (m->failed) continue;
        a[k++] = cum[i];
        if (!q->failed) g[kr++] = cum[i] - oc[i];
    }
    ws_sweep_cursor_free(&cm);
    ws_sweep_cursor_free(&co);
    ws_ci95(a, k, &cost->mean, &cost->lo, &cost->hi);
    ws_ci95(g, kr, &regret->mean, &regret->lo, &regret->hi);
}
