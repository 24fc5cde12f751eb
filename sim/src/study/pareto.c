/* Knob landscape and Pareto frontier; see wattsim/pareto.h. */
#include "wattsim/pareto.h"
#include "wattsim/trace.h"
#include "wattsim/whatif.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Order of knob indices a, b by TTA, then ETA, then index. */
static int by_tta(const ws_knob_stat *base, int a, int b)
{
    const ws_knob_stat *x = &base[a], *y = &base[b];
    if (x->tta != y->tta) return x->tta < y->tta ? -1 : 1;
    if (x->eta != y->eta) return x->eta < y->eta ? -1 : 1;
    return a - b;
}

/* Merge sort with the base passed in, not a global (qsort has no context
 * argument in C17): keeps ws_pareto_compute re-entrant for threads, and
 * n log n for traces with many knobs. by_tta is a total order, so the
 * result is the one any correct sort gives. tmp has room for m. */
static void sort_by_tta(const ws_knob_stat *base, int *idx, int *tmp, int m)
{
    unsigned long long work = 0;
    for (int w = 1; w < m; w *= 2) {
        for (int lo = 0; lo < m; lo += 2 * w) {
            int mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
            int a = lo, b = mid, o = lo;
            while (a < mid && b < hi) {
                work++;
                tmp[o++] = by_tta(base, idx[a], idx[b]) <= 0 ? idx[a++] : idx[b++];
            }
            while (a < mid) tmp[o++] = idx[a++];
            while (b < hi) tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)m * sizeof *idx);
    }
    ws_join_work_add(work);
}

int ws_pareto_compute(const ws_job *job, ws_pareto *out, ws_error *err)
{
    memset(out, 0, sizeof *out);
    int n = job->knob_start[job->n_bs];
    out->knobs = calloc((size_t)n, sizeof *out->knobs);
    out->frontier = calloc((size_t)n, sizeof *out->frontier);
    if (!out->knobs || !out->frontier) return ws_fail(err, "out of memory");
    out->n = n;
    out->default_knob = out->best_knob = -1;
    for (int i = 0; i < job->n_bs; i++) {
        int k0 = job->knob_start[i], k1 = job->knob_start[i + 1];
        int r0 = job->run_start[i], r1 = job->run_start[i + 1];
        int reached = 0;
        double sum = 0;
        for (int r = r0; r < r1; r++)
            if (job->run_epoch[r] <= job->max_epochs) {
                reached++;
                sum += job->run_epoch[r];
            }
        int jit = -1;
        double jit_cost = INFINITY;
        for (int k = k1 - 1; k >= k0; k--) {
            double c = ws_job_epoch_cost(job, i, k);
            if (jit < 0 || jit_cost > c) { jit = k; jit_cost = c; }
        }
        for (int k = k0; k < k1; k++) {
            ws_knob_stat *s = &out->knobs[k];
            s->bs = job->bs[i];
            s->pl = job->knob_pl[k];
            s->runs = r1 - r0;
            s->reached = reached;
            s->time_per_epoch = job->knob_time[k];
            s->average_power = job->knob_power[k];
            s->all_reach = reached == s->runs && s->runs > 0;
            s->is_jit = k == jit;
            if (reached) {
                s->epochs = sum / reached;
                s->tta = s->epochs * s->time_per_epoch;
                s->eta = s->tta * s->average_power;
                s->cost = job->eta * s->eta + (1.0 - job->eta) * job->max_power * s->tta;
            } else {
                s->epochs = s->tta = s->eta = s->cost = NAN;
            }
            if (s->bs == job->b0 && k == k1 - 1) {
                s->is_default = 1;
                out->default_knob = k;
            }
            if (s->all_reach && (out->best_knob < 0 || s->cost < out->knobs[out->best_knob].cost))
                out->best_knob = k;
        }
    }
    if (out->best_knob >= 0) out->knobs[out->best_knob].is_best = 1;

    /* Frontier: all-reach knobs not dominated by another all-reach knob.
     * Sorted by TTA (then ETA), a knob is on it iff its ETA is below every
     * ETA before it, and an exact tie with the previous knob is kept out. */
    int m = 0;
    for (int k = 0; k < n; k++)
        if (out->knobs[k].all_reach) out->frontier[m++] = k;
    int *tmp = malloc((size_t)(m ? m : 1) * sizeof *tmp);
    if (!tmp) return ws_fail(err, "out of memory");
    sort_by_tta(out->knobs, out->frontier, tmp, m);
    free(tmp);
    int f = 0;
    double best_eta = INFINITY, best_tta = -INFINITY;
    for (int q = 0; q < m; q++) {
        ws_knob_stat *s = &out->knobs[out->frontier[q]];
        if (s->eta < best_eta) {
            /* Same TTA as a kept knob with lower ETA cannot happen here (it
             * would sort first); same TTA and ETA: dominated by neither. */
            s->frontier = 1;
            out->frontier[f++] = out->frontier[q];
            best_eta = s->eta;
            best_tta = s->tta;
        } else if (s->eta == best_eta && s->tta == best_tta) {
            s->frontier = 1;       /* an exact twin of a frontier knob */
            out->frontier[f++] = out->frontier[q];
        }
    }
    out->n_frontier = f;
    return 0;
}

void ws_knob_objective(const ws_job *job, const ws_knob_stat *s, const ws_whatif *wi,
                       long n, double *cost, double *co2_g, double *usd, long *wraps)
{
    *cost = s->cost;
    *co2_g = *usd = 0.0;
    if (!ws_whatif_accounts(wi) || !(n > 0)) return;
    double clock = wi->start, c_sum = 0, g_sum = 0, d_sum = 0;
    ws_demand_acc dem = {0};
    for (long r = 0; r < n; r++) {
        double g, d, c = s->cost;
        int wrapped;
        /* the engine's schedule: due at start + r x every, or later */
        if (wi->every > 0 && clock < wi->start + (double)r * wi->every)
            clock = wi->start + (double)r * wi->every;
        clock = ws_whatif_defer(wi, clock, s->tta);
        ws_whatif_run(wi, clock, s->eta, s->tta, job->eta, job->max_power, &g, &d, &c,
                      &wrapped);
        c_sum += c;
        *wraps += wrapped;
        g_sum += g;
        d_sum += d;
        /* plan --demand-charge include: the months the runs touch */
        if (wi->demand_charge && s->tta > 0)
            ws_whatif_demand_add(wi, &dem, clock, s->tta, s->eta / s->tta);
        clock += s->tta;
    }
    *cost = c_sum / (double)n;
    *co2_g = g_sum / (double)n;
    *usd = d_sum / (double)n;
    if (dem.usd > 0) {
        /* spread over the runs, in dollars and (price objective) cost */
        const double per_run = dem.usd / (double)n;
        *usd += per_run;
        if (wi->objective == WS_OBJ_PRICE) *cost += job->eta * per_run * wi->k;
    }
}

void ws_pareto_objective(const ws_job *job, const ws_whatif *wi, long n, ws_pareto *p)
{
    if (!wi || wi->objective == WS_OBJ_ENERGY || !ws_whatif_accounts(wi)) return;
    if (p->best_knob >= 0) p->knobs[p->best_knob].is_best = 0;
    p->best_knob = -1;
    p->objective_runs = n;
    for (int k = 0; k < p->n; k++) {
        ws_knob_stat *s = &p->knobs[k];
        if (!s->reached) continue;
        double g, d;
        long wraps = 0;
        ws_knob_objective(job, s, wi, n, &s->cost, &g, &d, &wraps);
        if (s->all_reach && (p->best_knob < 0 || s->cost < p->knobs[p->best_knob].cost))
            p->best_knob = k;
    }
    if (p->best_knob >= 0) p->knobs[p->best_knob].is_best = 1;
}

void ws_pareto_free(ws_pareto *p)
{
    free(p->knobs);
    free(p->frontier);
    memset(p, 0, sizeof *p);
}
