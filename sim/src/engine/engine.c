/*
 * The sequential engine: a recurring job whose recurrences arrive one after
 * another, each as soon as the previous one reached its target. Within a
 * recurrence, up to WS_MAX_TRIES runs are tried, each with the knobs the
 * policies choose, until one reaches the target metric.
 *
 * This reproduces Simulator.simulate_one_job of the published Zeus
 * simulator (zeus._legacy.simulate), step for step:
 *   1. bs = BSO.predict, pl = PLO.predict(bs);
 *   2. no pl: profile every power limit of bs (highest first), ask again;
 *   3. draw one recorded training run of bs uniformly (df.sample(n=1,
 *      random_state=rng): rng.integers(R) over bs's R runs in trace order);
 *   4. epoch budget k from beta * min_cost (early stopping; see below for
 *      what the budget compares under a carbon or price objective);
 *   5. k = 0: the run is not started; the BSO sees a prohibitive cost;
 *   6.-8. energy, time and cost of the run; BSO (and PLO) observe it;
 *   9. reached: min_cost = min(min_cost, cost of this recurrence's tries).
 * The policies see a call context (ws_ctx, on the stack) that the loop
 * updates: recurrence, try, the run just observed, the profiled limit.
 * With what-ifs (p->whatif), a simulated clock starts at the what-if's
 * start and advances by each run's wall time; each run's emissions and
 * money integrate its energy over the series (ws_whatif_run), and a carbon
 * or price objective replaces the run's cost before the policies see it.
 * With --every, recurrence r is due at (r - 1) x every on that clock and
 * starts then or when r - 1 finished (late); with --defer-up-to, its
 * first try waits for the best start within the window
 * (ws_whatif_defer: a perfect forecast). The policies see that clock
 * (ws_ctx.now_s, due_s; ABI 2.3) and read the same series through
 * ws_host.forecast, bound for the simulation (ws_policy_set_forecast).
 * The early-stopping budget does not: it compares like with like in the
 * time-invariant cost eta*E + (1-eta)*MaxPower*T under every objective
 * (min_budget_cost below). Early stopping judges the knob -- does this
 * run converge within beta times the best known cost? -- and the knob's
 * worth does not change with the hour. A budget in the objective's cost
 * set in a clean hour starved every try of a dirty one (each epoch priced
 * at a rate several times the one that set the budget) until the
 * recurrence failed after 20 tries; with the invariant budget a series
 * can change which knobs the policies choose, never how far a run of a
 * given knob may go, and a constant series gives the energy objective's
 * histories run for run.
 * A drifting job (ws_sim_params.drift; docs/model.md, "Data drift")
 * changes tables at each phase's first recurrence: runs, their epochs and
 * profiling read the phase's knob times, powers and recorded runs, while
 * the policies keep seeing the job they registered with and learn of the
 * drift only from what they observe (the oracle reference, which knows
 * the traces, is told: drift_informed). min_cost carries over, as a
 * deployment's would.
 * The loop touches only the job's arrays: no allocation, no strings. The
 * policy calls are inline (host.h), so a try costs no call into the host,
 * only the policy's own predict and observe.
 *
 * Seed for seed with the published simulator: the simulation's stream is
 * np.random.default_rng(seed) (a ws_rng on the stack), and the arithmetic
 * is the Python's, operation for operation (the build has no FP
 * contraction): the epoch budget is Python's floor division
 * (ws_py_floordiv); a profiled run's first epoch costs the job's
 * first_epoch_energy and first_epoch_time (numpy's means over the joined
 * rows, ws_job_profile), and profiling reports ws_job_epoch_cost (pandas'
 * group means).
 */
#include "wattsim/engine.h"
#include "wattsim/rng.h"
#include "host.h"
#include "run.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

double ws_py_floordiv(double a, double b)
{
    /* Fast path: q = floor(a / b) is the exact quotient n when
     * 0 <= a - q*b < b, which fma tells exactly (the sign of a rounded
     * value is the sign of the exact one; rounding is monotonic, so
     * r < b implies a - q*b < b). For n < 1e9, CPython's result below is
     * n too: (a - mod) / b is n within a few ulps, far less than 0.5. */
    if (a >= 0 && b > 0 && a < INFINITY && b < INFINITY) {
        const double q = floor(a / b);
        if (q < 1e9) {
            const double r = fma(-q, b, a);
            if (r >= 0 && r < b) return q;
        }
    }
    /* CPython's float_floor_div (Objects/floatobject.c): exact where
     * floor(a / b) can be off by one after rounding. */
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
    double fl;
    if (div != 0.0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, a / b);
    }
    return fl;
}

/* Just-in-time profiling of every limit of i, highest first, and the
 * second predict. Out of line: once per batch size with jit, never with
 * most other PLOs. `tab` has the figures profiling measures (the phase's,
 * under drift); `pj` is the job the policy sees. */
static int run_profile(const ws_job *tab, const ws_job *pj, ws_plo *plo, ws_ctx *ctx,
                       int i, int *k, ws_error *err)
{
    const int bs = tab->bs[i];
    const int k0 = tab->knob_start[i], k1 = tab->knob_start[i + 1];
    for (int q = k1 - 1; q >= k0; q--) {
        ctx->profile_time_s = tab->knob_time[q];
        ctx->profile_power_w = tab->knob_power[q];
        if (ws_plo_observe_profile(plo, pj, ctx, bs, tab->knob_pl[q],
                                   ws_job_epoch_cost(tab, i, q), err))
            return -1;
    }
    ctx->profile_time_s = ctx->profile_power_w = NAN;
    if (host_plo_predict(plo, pj, ctx, i, k, err)) return -1;
    if (*k < 0)
        return ws_fail(err, "%s: predict(bs %d) still has no power limit after"
                       " profiling all %d of them", ws_plo_who(plo), bs, k1 - k0);
    return 0;
}

/* The run.h functions are static inline here and inlined into the
 * engine's loop (no call, no spilling of the job's constants per try);
 * the exported ones, for group.c and the conformance check, wrap them. */
static inline int run_power_limit(const ws_job *tab, const ws_job *pj, ws_plo *plo,
                                  ws_ctx *ctx, int i, int *k, int *profiled, ws_error *err)
{
    *profiled = 0;
    if (host_plo_predict(plo, pj, ctx, i, k, err)) return -1;
    if (*k >= 0) return 0;
    *profiled = 1;
    return run_profile(tab, pj, plo, ctx, i, k, err);
}

int ws_run_power_limit(const ws_job *job, ws_plo *plo, ws_ctx *ctx, int i,
                       int *k, int *profiled, ws_error *err)
{
    return run_power_limit(job, job, plo, ctx, i, k, profiled, err);
}

/* What the last try computed that the next one likely needs again. A try
 * depends on the previous one (its batch size on what the BSO observed),
 * and a division is a slow link in that chain: the epoch budget
 * floor(cost_ub / c_epoch) changes only when min_cost does (rarely: a
 * cheaper recurrence) or the knob does: most tries reuse it. */
typedef struct run_memo {
    double cost_ub, budget;
    int k;                      /* the knob; its epoch cost is a function
                                   of the job's figures and k alone */
} run_memo;

/* The first epoch of a profiled run of batch-size index i: the job's
 * figures (version 2.1), else, for a job built by hand, the plain mean
 * over i's limits. Out of line: once per batch size. */
static void first_epoch(const ws_job *job, int i, double *e1, double *t1)
{
    if (job->abi_version >= WS_ABI_VERSION_OF(2, 1) && job->first_epoch_energy
        && job->first_epoch_time) {
        *e1 = job->first_epoch_energy[i];
        *t1 = job->first_epoch_time[i];
        return;
    }
    const int k0 = job->knob_start[i], k1 = job->knob_start[i + 1];
    double e = 0, t = 0;
    for (int q = k0; q < k1; q++) {
        e += job->knob_time[q] * job->knob_power[q];
        t += job->knob_time[q];
    }
    *e1 = e / (k1 - k0);
    *t1 = t / (k1 - k0);
}

static inline void run_outcome(const ws_job *job, ws_rng *rng, int i, int k,
                               int profiled, double min_cost, run_memo *memo,
                               ws_outcome *o)
{
    const double eta = job->eta, beta = job->beta, max_power = job->max_power;
    const double max_epochs = (double)job->max_epochs;
    const int k1 = job->knob_start[i + 1];
    const double t = job->knob_time[k];
    const double e = t * job->knob_power[k];
    o->i = i;
    o->k = k;
    o->bs = job->bs[i];
    o->pl = job->knob_pl[k];
    o->profiled = profiled;

    /* Draw one recorded run of bs. */
    const int r0 = job->run_start[i], nr = job->run_start[i + 1] - r0;
    const double target = job->run_epoch[r0 + (int)ws_rng_integers(rng, (uint64_t)nr)];

    /* Epoch budget. */
    const double cost_ub = beta * min_cost;
    double budget = max_epochs;
    if (cost_ub != INFINITY) {
        /* The same knob and bound as the memo's: the same budget, without
         * computing the epoch cost again (positive costs: equal as doubles
         * means equal bits). */
        if (k == memo->k && cost_ub == memo->cost_ub) {
            budget = memo->budget;
            if (budget > max_epochs) budget = max_epochs;
        } else {
            /* maxPL(bs) of the job: one GPU's limit times its GPUs. */
            const double maxpl = (double)job->knob_pl[k1 - 1] * (double)ws_job_gpus(job);
            const double c_epoch = eta * e + (1.0 - eta) * maxpl * t;
            /* A cost of 0 (eta = 1 and a knob drawing no power: a
             * hand-made table) bounds nothing (and is not remembered). */
            if (c_epoch > 0 && cost_ub > 0) {
                memo->k = k;
                memo->cost_ub = cost_ub;
                memo->budget = ws_py_floordiv(cost_ub, c_epoch);
                budget = memo->budget;
                if (budget > max_epochs) budget = max_epochs;
            }
        }
    }
    o->budget = budget;
    if (budget == 0.0) {                /* never started */
        o->ran = o->reached = o->epochs = 0;
        o->energy_j = o->time_s = o->cost = 0.0;
        return;
    }

    const int reached = target <= budget;
    const double n = reached ? target : budget;
    double E, T;
    if (profiled) {
        /* The first epoch is spread evenly over the power limits. */
        double e1, t1;
        first_epoch(job, i, &e1, &t1);
        E = e1 + e * (n - 1);
        T = t1 + t * (n - 1);
    } else {
        E = e * n;
        T = t * n;
    }
    o->ran = 1;
    o->reached = reached;
    o->epochs = (int)n;
    o->energy_j = E;
    o->time_s = T;
    o->cost = eta * E + (1.0 - eta) * max_power * T;
}

void ws_run_outcome(const ws_job *job, ws_rng *rng, int i, int k,
                    int profiled, double min_cost, ws_outcome *o)
{
    run_memo memo = {NAN, NAN, -1};
    run_outcome(job, rng, i, k, profiled, min_cost, &memo, o);
}

static inline void run_ctx(ws_ctx *ctx, const ws_job *job, const ws_outcome *o)
{
    ctx->run_started = o->ran;
    ctx->run_epochs = o->epochs;
    ctx->run_early_stopped = !o->reached && o->budget < (double)job->max_epochs;
    ctx->run_epoch_budget = o->budget;
    ctx->run_time_s = o->time_s;
    ctx->run_energy_j = o->energy_j;
}

void ws_run_ctx(ws_ctx *ctx, const ws_job *job, const ws_outcome *o)
{
    run_ctx(ctx, job, o);
}

int ws_simulate(const ws_job *job, ws_bso *bso, ws_plo *plo,
                const ws_sim_params *p, ws_run_sink sink, void *ctx,
                ws_sim_totals *out, ws_error *err)
{
    return ws_simulate_whatif(job, bso, plo, p, NULL, sink, ctx, out, err);
}

/* The recurrences of one simulation. Inlined twice into ws_simulate_whatif,
 * with `accounts` a constant: without what-if accounting (most studies
 * and the benchmark) the loop carries no rates, carbon or money. */
static inline __attribute__((always_inline)) int
recurrences(const ws_job *job, ws_bso *bso, ws_plo *plo, const ws_sim_params *p,
            const ws_whatif *wi, const int accounts, ws_run_sink sink, void *ctx,
            ws_rng *rng, ws_ctx *pc, ws_sim_totals *tot, ws_error *err)
{
    const double beta = job->beta;
    double clock = 0.0;                 /* s after wi->start */
    double min_cost = INFINITY;         /* least cost, the objective's */
    double min_budget_cost = INFINITY;  /* the same run's, time-invariant */
    run_memo memo = {NAN, NAN, -1};
    /* Read once: the policies' calls might, for all the compiler knows,
     * change what p points to. */
    const long n_rec = p->recurrences;
    const ws_env_source *const env = p->env;
    const long steady_from = p->steady_from;
    double *const rec_cost = p->rec_cost;
    const double every = accounts ? wi->every : 0.0;
    const int defers = accounts && wi->defer > 0;
    /* Drift: `tab` is the table runs and profiling read, `pj` the job the
     * policies see. At a phase's first recurrence `view` takes the job's
     * scalars and the phase's arrays (the knobs agree) and `tab` points
     * at it: a few pointers copied per phase, nothing allocated. */
    const ws_drift_phase *const drift = p->drift;
    const int n_drift = drift ? p->n_drift : 0;
    const int informed = p->drift_informed;
    int next_phase = 0;
    ws_job view;
    const ws_job *tab = job, *pj = job;
    for (long rec = 1; rec <= n_rec; rec++) {
        double cost_acc = 0.0, e_acc = 0.0, t_acc = 0.0;   /* this recurrence's tries */
        double budget_acc = 0.0;
        int done = 0;
        pc->recurrence = rec;
        if (next_phase < n_drift && rec == drift[next_phase].from) {
            const ws_job *ph = drift[next_phase++].table;
            view = *job;
            view.knob_time = ph->knob_time;
            view.knob_power = ph->knob_power;
            view.run_start = ph->run_start;
            view.run_epoch = ph->run_epoch;
            view.profile_power = ph->profile_power;
            view.profile_time = ph->profile_time;
            view.first_epoch_energy = ph->first_epoch_energy;
            view.first_epoch_time = ph->first_epoch_time;
            tab = &view;
            memo = (run_memo){NAN, NAN, -1};    /* epoch costs changed */
            if (informed) {
                pj = &view;
                pc->attempt = 0;
                if (ws_bso_register(bso, pj, pc, err) || ws_plo_register(plo, pj, pc, err))
                    return -1;
            }
        }
        if (every > 0) {                /* due at (rec - 1) x every */
            const double due = (double)(rec - 1) * every;
            if (clock > due) tot->late++;
            else clock = due;
            pc->due_s = due;
        } else {
            pc->due_s = clock;
        }
        if (env) env->at(env->self, rec, tot->time_s, &pc->carbon_intensity, &pc->price);
        else if (accounts)      /* clock == tot->time_s */
            ws_whatif_rates(wi, wi->start + clock, &pc->carbon_intensity, &pc->price);
        for (int attempt = 1; attempt <= WS_MAX_TRIES && !done; attempt++) {
            int i, k, profiled;
            pc->attempt = attempt;
            pc->now_s = clock;
            host_ctx_clear_run(pc);
            if (host_bso_predict(bso, pj, pc, &i, err)) return -1;
            if (run_power_limit(tab, pj, plo, pc, i, &k, &profiled, err)) return -1;
            ws_outcome o;
            run_outcome(tab, rng, i, k, profiled, min_budget_cost, &memo, &o);
            const double budget_cost = o.cost;      /* before the objective */
            if (defers && attempt == 1 && o.ran) {
                /* Wait for the cleanest (cheapest) start within the window. */
                const double s = ws_whatif_defer(wi, wi->start + clock, o.time_s) - wi->start;
                tot->waited_s += s - clock;
                clock = s;
            }
            double co2 = 0.0, usd = 0.0;
            int wrapped = 0;
            if (accounts && o.ran)
                ws_whatif_run(wi, wi->start + clock, o.energy_j, o.time_s, job->eta,
                              job->max_power, &co2, &usd, &o.cost, &wrapped);
            run_ctx(pc, job, &o);
            pc->now_s = clock + o.time_s;       /* its end (not started: its start) */
            const int bs = o.bs, pl = o.pl;
            if (!o.ran) {
                tot->skipped++;
                if (host_bso_observe(bso, pj, pc, bs, 100.0 * beta * min_cost, 0, err))
                    return -1;
                continue;
            }
            const int reached = o.reached;
            const double E = o.energy_j, T = o.time_s, cost = o.cost;
            cost_acc += cost;
            e_acc += E;
            t_acc += T;
            budget_acc += budget_cost;
            if (host_bso_observe(bso, pj, pc, bs, cost, reached, err)
                || host_plo_observe_run(plo, pj, pc, bs, pl, cost, reached, err))
                return -1;

            tot->energy_j += E;
            tot->time_s += T;
            tot->cost += cost;
            tot->runs++;
            if (accounts) {
                tot->co2_g += co2;
                tot->usd += usd;
                tot->wrapped += wrapped;
            }
            if (sink) {
                ws_run_record r = {rec, attempt, bs, pl, E, T, cost, o.epochs,
                                   reached, profiled, co2, usd, clock, wrapped};
                if (sink(ctx, &r)) return -1;
            }
            clock += T;
            if (reached) {
                if (min_cost > cost_acc) min_cost = cost_acc;
                if (min_budget_cost > budget_acc) min_budget_cost = budget_acc;
                tot->final_bs = bs;
                tot->final_pl = pl;
                done = 1;
            } else if (rec == 1 && bs == job->b0) {
                /* The published simulator assumes b0 converges; a policy
                 * that starts elsewhere may fail and retry. */
                return ws_fail(err, "%s on %s: the default batch size %d did not reach"
                               " the target metric in the first recurrence (b0 must"
                               " reach it; choose another b0 or target)", job->workload,
                               job->gpu, bs);
            }
        }
        if (!done)
            return ws_fail(err, "%s on %s: recurrence %ld did not reach the target"
                           " metric in %d tries", job->workload, job->gpu, rec,
                           WS_MAX_TRIES);
        /* The sums a sink would make (ws_sim_params.steady_from, rec_cost). */
        if (rec_cost) rec_cost[rec - 1] = cost_acc;
        if (steady_from > 0 && rec >= steady_from) {
            tot->steady_energy_j += e_acc;
            tot->steady_time_s += t_acc;
        }
        tot->recurrences++;
    }
    return 0;
}

/* Out of line (also under link-time optimisation): the sweep, the study,
 * the plan and the benchmark all run this one copy of the loop, so what
 * wattsim-bench times is what a sweep runs, not a copy specialised for the
 * benchmark's constant arguments (no sink, no what-if). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))          /* nor cloned for constant arguments */
#else
__attribute__((noinline))
#endif
int ws_simulate_whatif(const ws_job *job, ws_bso *bso, ws_plo *plo,
                       const ws_sim_params *p, const ws_whatif *wi,
                       ws_run_sink sink, void *ctx, ws_sim_totals *out,
                       ws_error *err)
{
    ws_sim_totals tot = {0};
    tot.final_bs = tot.final_pl = -1;
    int rc = -1;

    ws_rng rng;                         /* np.random.default_rng(seed) */
    ws_rng_seed(&rng, p->seed);

    ws_ctx pc;
    ws_ctx_init(&pc, p->recurrences);
    /* The clock (ws_ctx 2.3): 0 at the first recurrence; with a series,
     * the policies' forecast reads it on the same clock as the
     * accounting, and only during this simulation. */
    const int accounts = ws_whatif_accounts(wi);
    pc.now_s = 0.0;
    if (accounts) {
        pc.every_s = wi->every;
        pc.defer_s = wi->defer;
        ws_policy_set_forecast(bso, plo, wi->has_carbon ? &wi->carbon : NULL,
                               wi->has_price ? &wi->price : NULL, wi->start);
    }
    if (!ws_bso_register(bso, job, &pc, err) && !ws_plo_register(plo, job, &pc, err))
        rc = accounts
            ? recurrences(job, bso, plo, p, wi, 1, sink, ctx, &rng, &pc, &tot, err)
            : recurrences(job, bso, plo, p, wi, 0, sink, ctx, &rng, &pc, &tot, err);
    if (accounts) ws_policy_set_forecast(bso, plo, NULL, NULL, 0.0);
    if (rc) {
        /* where it stopped, for a history kept up to the failure */
        tot.fail_recurrence = pc.recurrence;
        tot.fail_attempt = pc.attempt;
    }
    if (out) *out = tot;
    return rc;
}
