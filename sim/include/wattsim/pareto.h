/*
 * The knob landscape of one job: every (batch size, power limit) with its
 * expected time- and energy-to-accuracy, the Pareto frontier of TTA versus
 * ETA, the default knob and the least-cost knob for a given eta.
 *
 * Definitions (as the reference figures of the published simulator):
 *  - runs: recorded runs at the batch size; reached: those whose target
 *    epoch is <= max_epochs; epochs: mean target epoch of the reaching runs;
 *    tta = epochs * time_per_epoch; eta = tta * average_power.
 *  - frontier: knobs that every run reaches and that no other such knob
 *    beats or ties on both TTA and ETA while beating it on one.
 *  - default: (b0, highest power limit of b0); best: least cost
 *    eta * ETA + (1 - eta) * MaxPower * TTA among knobs every run reaches.
 *  - under a carbon or price objective (ws_pareto_objective), cost is the
 *    objective's expected cost per run: the knob's expected run N times
 *    back to back from the what-if start, each priced on its own interval
 *    of the series, averaged (ws_knob_objective; the figures `wattsim
 *    plan` ranks by), and best is the least of that.
 *  - jit: the power limit the JIT profiler picks for the batch size (least
 *    epoch cost (eta * power + (1 - eta) * maxPL(bs)) * time, ties to the
 *    higher limit).
 */
#ifndef WATTSIM_PARETO_H
#define WATTSIM_PARETO_H

#include "wattsim/error.h"
#include "wattsim/policy.h"

typedef struct ws_knob_stat {
    int bs, pl;
    int runs, reached;
    double time_per_epoch, average_power;
    double epochs, tta, eta, cost;     /* NAN when no run reaches */
    int all_reach, frontier, is_default, is_best, is_jit;
} ws_knob_stat;

typedef struct ws_pareto {
    ws_knob_stat *knobs;               /* in knob-table order */
    int n;
    int default_knob, best_knob;       /* indices, -1 if none */
    int *frontier;                     /* knob indices by ascending TTA */
    int n_frontier;
    long objective_runs;               /* ws_pareto_objective's n; 0: cost is
                                          the energy objective's */
} ws_pareto;

int ws_pareto_compute(const ws_job *job, ws_pareto *out, ws_error *err);

/* Knob s's expected run n times from wi->start, on the engine's schedule
 * (back to back, or every wi->every; deferred when wi->defer): the mean per
 * run of the cost (the objective's), grams and dollars; *wraps counts the
 * runs reaching past a series' end. Without accounting (wi NULL or no
 * series) the cost is s->cost and the amounts 0. */
struct ws_whatif;
void ws_knob_objective(const ws_job *job, const ws_knob_stat *s,
                       const struct ws_whatif *wi, long n, double *cost,
                       double *co2_g, double *usd, long *wraps);

/* Rank p's knobs by wi's objective over n recurrences: cost becomes
 * ws_knob_objective's and best the least of it (first in knob order on a
 * tie, as ws_pareto_compute). Nothing changes under the energy objective. */
void ws_pareto_objective(const ws_job *job, const struct ws_whatif *wi, long n,
                         ws_pareto *p);
void ws_pareto_free(ws_pareto *p);

#endif
