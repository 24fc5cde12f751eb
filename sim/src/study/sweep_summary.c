/*
 * A sweep's statistics (see wattsim/sweep.h): the 95 % CI of a mean, the
 * steady-state window, the per-cell summaries over seeds (means and CIs in
 * two passes over the cell's seeds, savings versus default and regret
 * versus oracle seed by seed), the final-knob tally and one step of the
 * learning curves. Nothing here runs a simulation or writes a file.
 */
#define _POSIX_C_SOURCE 200809L
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
    double sd = sqrt(ss / (double)(n - 1));
    double half = t975((double)(n - 1)) * sd / sqrt((double)n);
    *lo = m - half;
    *hi = m + half;
}

long ws_steady_count(long recurrences)
{
    long k = (long)ceil(0.1 * (double)recurrences);
    if (k < 5) k = 5;
    return k < recurrences ? k : recurrences;
}

/* ------------------------------------------------------------ summary */

static double saving(double ours, double ref)
{
    return ref > 0 ? 1.0 - ours / ref : NAN;
}

/* A per-seed quantity of a cell's summary: whether seed i has one (its
 * simulation succeeded; for regret, oracle's too) and its value. */
enum { F_ENERGY, F_TIME, F_COST, F_STEADY_E, F_STEADY_T, F_CO2, F_USD, F_REGRET };

static int seed_value(const ws_sweep *s, size_t base, size_t oref, size_t i, int f, double *x)
{
    const ws_sweep_sim *m = &s->sims[base + i];
    if (m->failed) return 0;
    switch (f) {
    case F_ENERGY: *x = m->energy_j; return 1;
    case F_TIME: *x = m->time_s; return 1;
    case F_COST: *x = m->cost; return 1;
    case F_STEADY_E: *x = m->steady_energy; return 1;
    case F_STEADY_T: *x = m->steady_time; return 1;
    case F_CO2: *x = m->co2_g; return 1;
    case F_USD: *x = m->usd; return 1;
    default:
        if (s->sims[oref + i].failed) return 0;
        *x = m->cost - s->sims[oref + i].cost;
        return 1;
    }
}

/* ws_ci95 of quantity f over the seeds that have it, read in place in two
 * passes instead of copied out: the same additions in the same order, so
 * the same bits, without n doubles of scratch per quantity. */
static void seed_ci95(const ws_sweep *s, size_t base, size_t oref, int f, ws_stat *st)
{
    size_t n = s->n_seeds, k = 0;
    double m = 0, x;
    for (size_t i = 0; i < n; i++)
        if (seed_value(s, base, oref, i, f, &x)) { m += x; k++; }
    m = k ? m / (double)k : NAN;
    st->mean = m;
    if (k < 2) { st->lo = st->hi = NAN; return; }
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (seed_value(s, base, oref, i, f, &x)) ss += (x - m) * (x - m);
    double sd = sqrt(ss / (double)(k - 1));
    double half = t975((double)(k - 1)) * sd / sqrt((double)k);
    st->lo = m - half;
    st->hi = m + half;
}

void ws_sweep_summarise(const ws_sweep *s, size_t cell, ws_sweep_summary *o)
{
    size_t ax[6], n = s->n_seeds, base = cell * n;
    ws_sweep_axes(s, base, ax);
    memset(o, 0, sizeof *o);
    o->pair = ax[0]; o->gpu = ax[1]; o->work = ax[2]; o->eta = ax[3]; o->beta = ax[4];
    o->recurrences = ws_sweep_recurrences(s, base);
    o->error = "";
    size_t dref = ws_sweep_index(s, s->ref_default, ax[1], ax[2], ax[3], ax[4], 0);
    size_t oref = ws_sweep_index(s, s->ref_oracle, ax[1], ax[2], ax[3], ax[4], 0);
    /* Our sums and default's over the seeds where both succeeded. */
    double oe = 0, ot = 0, oc = 0, ose = 0, ost = 0;
    double de = 0, dt = 0, dc = 0, dse = 0, dst = 0;
    size_t kd = 0;
    for (size_t i = 0; i < n; i++) {
        const ws_sweep_sim *m = &s->sims[base + i], *d = &s->sims[dref + i];
        if (m->failed) {
            if (!o->seeds_failed++ && m->error) o->error = m->error;
            continue;
        }
        o->seeds_ok++;
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
    ws_stat *stats[8] = {&o->energy, &o->time, &o->cost, &o->steady_energy, &o->steady_time,
                         &o->co2, &o->usd, &o->regret};
    for (int f = F_ENERGY; f <= F_REGRET; f++) seed_ci95(s, base, oref, f, stats[f]);
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
    for (size_t i = 0; i < s->n_seeds; i++) {
        const ws_sweep_sim *x = &s->sims[cell * s->n_seeds + i];
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
    for (size_t i = 0; i < n; i++) {
        const ws_sweep_sim *m = &s->sims[base + i], *q = &s->sims[oref + i];
        cum[i] += m->rec_cost[r];
        oc[i] += q->rec_cost[r];
        if (m->failed) continue;
        a[k++] = cum[i];
        if (!q->failed) g[kr++] = cum[i] - oc[i];
    }
    ws_ci95(a, k, &cost->mean, &cost->lo, &cost->hi);
    ws_ci95(g, kr, &regret->mean, &regret->lo, &regret->hi);
}
