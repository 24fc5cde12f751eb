/* wattsim plan: recommendation, savings and break-even; see wattsim/plan.h. */
#include "wattsim/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/pareto.h"
#include "study_pairs.h"

long ws_plan_break_even(const double *pol, const double *def, long n)
{
    long r = n;
    while (r > 0 && pol[r - 1] < def[r - 1]) r--;
    return r == n ? 0 : r + 1;
}

/* The expected run of knob k, N times back to back from the what-if
 * start (ws_knob_objective: the figures pareto ranks by too). */
static void knob_plan(const ws_job *job, const ws_knob_stat *s, const ws_whatif *wi,
                      long n, ws_plan_knob *out, long *wraps)
{
    *out = (ws_plan_knob){s->bs, s->pl, s->tta, s->eta, s->cost, 0.0, 0.0};
    ws_knob_objective(job, s, wi, n, &out->cost, &out->co2_g, &out->usd, wraps);
}

/* One simulation's cumulative cost by recurrence and its totals. */
typedef struct cum_sink {
    double *cum;                  /* per recurrence, filled as runs arrive */
} cum_sink;

static int add_run(void *p, const ws_run_record *r)
{
    cum_sink *c = p;
    c->cum[r->recurrence - 1] += r->cost;
    return 0;
}

static int simulate_pair(const ws_job *job, const ws_whatif *wi, long n,
                         const ws_bso_type *bt, const ws_plo_type *pt, unsigned long seed,
                         double *cum, ws_sim_totals *tot, ws_error *err)
{
    ws_value *bp = NULL, *pp = NULL;
    char who[96];
    snprintf(who, sizeof who, "bso %s", bt->name);
    if (ws_params_resolve(bt->params, NULL, 0, who, &bp, err)) return -1;
    snprintf(who, sizeof who, "plo %s", pt->name);
    if (ws_params_resolve(pt->params, NULL, 0, who, &pp, err)) {
        ws_params_free(bt->params, bp);
        return -1;
    }
    ws_bso *b = ws_bso_new(bt, bp, seed, err);
    ws_plo *p = b ? ws_plo_new(pt, pp, seed, err) : NULL;
    memset(cum, 0, (size_t)n * sizeof *cum);
    cum_sink cs = {cum};
    ws_sim_params sp = {.recurrences = n, .seed = seed};
    int rc = !b || !p || ws_simulate_whatif(job, b, p, &sp, wi, add_run, &cs, tot, err);
    ws_plo_free(p);
    ws_bso_free(b);
    ws_params_free(bt->params, bp);
    ws_params_free(pt->params, pp);
    if (rc) {
        ws_fail_prefix(err, "%s+%s seed %lu", bt->name, pt->name, seed);
        return -1;
    }
    for (long r = 1; r < n; r++) cum[r] += cum[r - 1];
    return 0;
}

static int resolve(ws_registry *reg, const char *bso, const char *plo,
                   const ws_bso_type **bt, const ws_plo_type **pt, ws_error *err)
{
    if (!(*bt = ws_registry_bso(reg, bso, err))) return ws_fail_prefix(err, "--policies");
    if (!(*pt = ws_registry_plo(reg, plo, err))) return ws_fail_prefix(err, "--policies");
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile q in (0, 1] of sorted v[0..m). */
static double rank(const double *v, int m, double q)
{
    int i = (int)ceil(q * m) - 1;
    return v[i < 0 ? 0 : i >= m ? m - 1 : i];
}

void ws_plan_break_even_stats(double *be, int seeds, double *median, double *lo,
                              double *hi)
{
    /* Over all seeds: a seed that never breaks even is beyond the horizon,
     * above every recurrence (counted, not dropped: dropping them made a
     * policy that pays off on 11 seeds of 20 look as sure as one that
     * pays off on all). */
    for (int s = 0; s < seeds; s++)
        if (be[s] == 0) be[s] = INFINITY;
    qsort(be, (size_t)seeds, sizeof *be, cmp_double);
    *median = rank(be, seeds, 0.5);
    *lo = rank(be, seeds, 0.025);
    *hi = rank(be, seeds, 0.975);
}

int ws_plan_compute(const ws_job *job, const double *knob_error,
                    const ws_whatif *wi, long recurrences,
                    int seeds, const ws_policy_pair *pairs, size_t n_pairs,
                    ws_registry *reg, ws_plan *out, ws_error *err)
{
    memset(out, 0, sizeof *out);
    out->job = job;
    out->recurrences = recurrences;
    out->seeds = seeds;
    const long n = recurrences;
    /* Policies first: a misspelt name fails before any work. */
    const ws_bso_type *dbt = NULL, **bts = calloc(n_pairs + 1, sizeof *bts);
    const ws_plo_type *dpt = NULL, **pts = calloc(n_pairs + 1, sizeof *pts);
    if (!bts || !pts) {
        free(bts);
        free(pts);
        return ws_fail(err, "out of memory");
    }
    int bad = resolve(reg, "default", "default", &dbt, &dpt, err);
    for (size_t q = 0; q < n_pairs && !bad; q++) {
        if (pairs[q].bso_ref.n_params || pairs[q].plo_ref.n_params) {
            /* plan runs each policy with its defaults: say so, do not ignore. */
            bad = ws_fail(err, "--policies: plan runs policies with their default"
                          " parameters; drop the {...} after %s", pairs[q].bso_ref.n_params
                          ? pairs[q].bso : pairs[q].plo);
            break;
        }
        bad = resolve(reg, pairs[q].bso, pairs[q].plo, &bts[q], &pts[q], err);
    }
    /* Back to back, a slower policy's clock drifts hours from the
     * default's, and break-even would measure the time of day. */
    if (!bad && ws_whatif_accounts(wi) && !(wi->every > 0)) {
        const ws_series *s = wi->has_carbon && ws_series_varies(&wi->carbon) ? &wi->carbon
                           : wi->has_price && ws_series_varies(&wi->price) ? &wi->price : NULL;
        if (s)
            bad = ws_fail(err, "plan: %s varies over time: give a schedule, --every DURATION"
                          " (e.g. 24h), so that every policy runs on the same clock and"
                          " break-even measures learning, not the time of day", s->path);
    }
    ws_pareto par = {0};
    if (bad || ws_pareto_compute(job, &par, err)) {
        free(bts);
        free(pts);
        return -1;
    }
    int rc = -1;
    double *def_cum = NULL, *pol_cum = NULL, *sav = NULL, *be = NULL;
    ws_sim_totals *def_tot = NULL;

    /* The knobs: least expected cost per run among those every run reaches. */
    int best = -1;
    double best_cost = INFINITY;
    for (int k = 0; k < par.n; k++) {
        if (!par.knobs[k].all_reach) continue;
        ws_plan_knob kp;
        long wraps = 0;
        knob_plan(job, &par.knobs[k], wi, n, &kp, &wraps);
        if (kp.cost < best_cost) {
            out->wrapped = wraps;
            best_cost = kp.cost;
            best = k;
            out->recommended = kp;
        }
    }
    if (best < 0) {
        ws_fail(err, "%s on %s: no knob reaches the target in every recorded run",
                job->workload, job->gpu);
        goto out;
    }
    /* Which batch sizes could be recommended, and the knobs as good as the
     * recommended one within what the measurements can tell apart. */
    out->bs = malloc((size_t)job->n_bs * sizeof *out->bs);
    if (!out->bs) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < job->n_bs; i++) {
        const ws_knob_stat *ks = &par.knobs[job->knob_start[i]];
        out->bs[i] = (ws_plan_bs){ks->bs, ks->runs, ks->reached};
        out->n_eligible += ks->all_reach;
    }
    out->n_bs = job->n_bs;
    /* The telemetry's own error: costs closer than the worst eligible
     * knob's energy_error cannot be told apart (each cost may be off by
     * up to it), and never closer than 1 % (run-to-run noise). */
    out->tie_error = NAN;
    for (int k = 0; knob_error && k < par.n; k++)
        if (par.knobs[k].all_reach && !isnan(knob_error[k])
            && !(knob_error[k] <= out->tie_error)) {
            out->tie_error = knob_error[k];
            out->tie_error_bs = par.knobs[k].bs;
            out->tie_error_pl = par.knobs[k].pl;
        }
    out->tie_tolerance = isnan(out->tie_error) || out->tie_error < WS_PLAN_TIE_TOLERANCE
                       ? WS_PLAN_TIE_TOLERANCE : out->tie_error;
    for (int k = 0; k < par.n; k++) {
        if (!par.knobs[k].all_reach || k == best) continue;
        ws_plan_knob kp;
        long wraps = 0;
        knob_plan(job, &par.knobs[k], wi, n, &kp, &wraps);
        if (!(kp.cost - best_cost <= out->tie_tolerance * fabs(best_cost))) continue;
        out->n_ties_all++;
        /* keep the WS_PLAN_MAX_TIES cheapest, by cost (insertion) */
        int at = out->n_ties < WS_PLAN_MAX_TIES ? out->n_ties++ : WS_PLAN_MAX_TIES;
        if (at == WS_PLAN_MAX_TIES) {
            if (!(kp.cost < out->ties[WS_PLAN_MAX_TIES - 1].cost)) continue;
            at = WS_PLAN_MAX_TIES - 1;
        }
        while (at > 0 && out->ties[at - 1].cost > kp.cost) {
            out->ties[at] = out->ties[at - 1];
            at--;
        }
        out->ties[at] = kp;
    }
    /* The default knob is what people run, whether or not every recorded
     * run of b0 reaches: its figures are over the runs that do. */
    const ws_knob_stat *dk = par.default_knob >= 0 ? &par.knobs[par.default_knob] : NULL;
    if (!dk || !dk->reached) {
        ws_fail(err, "%s on %s: no recorded run of b0 %d reaches the target", job->workload,
                job->gpu, job->b0);
        goto out;
    }
    long dwraps = 0;
    knob_plan(job, dk, wi, n, &out->dflt, &dwraps);
    out->dflt_reached = dk->reached;
    out->dflt_runs = dk->runs;

    /* The default pair on every seed, then each policy on the same seeds. */
    def_cum = malloc((size_t)seeds * (size_t)n * sizeof *def_cum);
    pol_cum = malloc((size_t)n * sizeof *pol_cum);
    sav = malloc((size_t)seeds * (size_t)n * sizeof *sav);
    be = malloc((size_t)seeds * sizeof *be);
    def_tot = malloc((size_t)seeds * sizeof *def_tot);
    out->policies = calloc(n_pairs ? n_pairs : 1, sizeof *out->policies);
    if (!def_cum || !pol_cum || !sav || !be || !def_tot || !out->policies) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (int s = 0; s < seeds; s++)
        if (simulate_pair(job, wi, n, dbt, dpt, (unsigned long)s + 1,
                          def_cum + (size_t)s * (size_t)n, &def_tot[s], err))
            goto out;
    /* Waiting alone: the default pair on the same seeds and schedule
     * without deferral, so a user sees what deferral saves apart from
     * what learning saves. */
    if (wi && wi->defer > 0 && wi->defer_series) {
        ws_whatif now = *wi;
        now.defer = 0;
        out->has_defer = 1;
        out->defer_carbon = wi->defer_series == &wi->carbon;
        double base = 0, with = 0, cbase = 0, cwith = 0;
        for (int s = 0; s < seeds; s++) {
            ws_sim_totals tot;
            const double *dc = def_cum + (size_t)s * (size_t)n;
            if (simulate_pair(job, &now, n, dbt, dpt, (unsigned long)s + 1, pol_cum, &tot,
                              err))
                goto out;
            base += out->defer_carbon ? tot.co2_g : tot.usd;
            with += out->defer_carbon ? def_tot[s].co2_g : def_tot[s].usd;
            cbase += pol_cum[n - 1];
            cwith += dc[n - 1];
        }
        out->defer_base = base / seeds;
        out->defer_saving = (base - with) / seeds;
        out->defer_cost_base = cbase / seeds;
        out->defer_cost_saving = (cbase - cwith) / seeds;
    }
    for (size_t q = 0; q < n_pairs; q++) {
        const ws_bso_type *bt = bts[q];
        const ws_plo_type *pt = pts[q];
        ws_plan_policy *pp = &out->policies[out->n_policies++];
        char label[160];
        snprintf(label, sizeof label, "%s+%s", bt->name, pt->name);
        pp->label = strdup(label);
        /* plan runs defaults (refused otherwise): resolve them to record */
        ws_study_policy sp = {bt, pt, NULL, NULL};
        int idrc = ws_params_resolve(bt->params, NULL, 0, bt->name, &sp.bp, err)
                   || ws_params_resolve(pt->params, NULL, 0, pt->name, &sp.pp, err)
                   || ws_study_pair_identity(reg, &sp, &pp->identity, err);
        ws_study_policies_free(&sp, 1);
        if (idrc) goto out;
        pp->saving_mean = malloc((size_t)n * sizeof *pp->saving_mean);
        pp->saving_lo = malloc((size_t)n * sizeof *pp->saving_lo);
        pp->saving_hi = malloc((size_t)n * sizeof *pp->saving_hi);
        if (!pp->label || !pp->saving_mean || !pp->saving_lo || !pp->saving_hi) {
            ws_fail(err, "out of memory");
            goto out;
        }
        /* Seeds are compacted: a seed on which the policy fails (a policy
         * error, a recurrence that never reaches) is reported, and the
         * figures are over the others. */
        int m = 0, ok = 0;
        double e_sav = 0, g_sav = 0, d_sav = 0;
        for (int s = 0; s < seeds; s++) {
            ws_sim_totals tot;
            const double *dc = def_cum + (size_t)s * (size_t)n;
            if (simulate_pair(job, wi, n, bt, pt, (unsigned long)s + 1, pol_cum, &tot, err)) {
                if (!pp->n_failed++) {
                    pp->first_failed_seed = s + 1;
                    pp->failure = strdup(err->msg);
                    if (!pp->failure) {
                        ws_fail(err, "out of memory");
                        goto out;
                    }
                }
                err->msg[0] = 0;
                continue;
            }
            for (long r = 0; r < n; r++)
                sav[(size_t)ok * (size_t)n + (size_t)r] = dc[r] - pol_cum[r];
            long b = ws_plan_break_even(pol_cum, dc, n);
            be[ok++] = (double)b;
            m += b != 0;
            e_sav += def_tot[s].energy_j - tot.energy_j;
            g_sav += def_tot[s].co2_g - tot.co2_g;
            d_sav += def_tot[s].usd - tot.usd;
        }
        pp->n_seeds = ok;
        if (!ok) {
            ws_fail(err, "%s failed on every seed; the first: %s", pp->label, pp->failure);
            goto out;
        }
        pp->energy_saving_j = e_sav / ok;
        pp->co2_saving_g = g_sav / ok;
        pp->usd_saving = d_sav / ok;
        pp->n_never = ok - m;
        ws_plan_break_even_stats(be, ok, &pp->break_even_median, &pp->break_even_lo,
                                 &pp->break_even_hi);
        for (long r = 0; r < n; r++) {
            double sum = 0, sq = 0;
            for (int s = 0; s < ok; s++) sum += sav[(size_t)s * (size_t)n + (size_t)r];
            double mean = sum / ok;
            for (int s = 0; s < ok; s++) {
                double d = sav[(size_t)s * (size_t)n + (size_t)r] - mean;
                sq += d * d;
            }
            double half = ok > 1 ? 1.96 * sqrt(sq / (ok - 1)) / sqrt((double)ok) : 0;
            pp->saving_mean[r] = mean;
            pp->saving_lo[r] = mean - half;
            pp->saving_hi[r] = mean + half;
        }
    }
    rc = 0;
out:
    ws_pareto_free(&par);
    free(bts);
    free(pts);
    free(def_cum);
    free(pol_cum);
    free(sav);
    free(be);
    free(def_tot);
    if (rc) ws_plan_free(out);
    return rc;
}

void ws_plan_free(ws_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_policies; i++) {
        free(p->policies[i].label);
        free(p->policies[i].saving_mean);
        free(p->policies[i].saving_lo);
        free(p->policies[i].saving_hi);
        free(p->policies[i].failure);
    }
    free(p->policies);
    free(p->bs);
    memset(p, 0, sizeof *p);
}
