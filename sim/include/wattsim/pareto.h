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
} ws_pareto;

int ws_pareto_compute(const ws_job *job, ws_pareto *out, ws_error *err);
void ws_pareto_free(ws_pareto *p);

#endif
