/*
 * Internal (not installed): one submission of a recurring job, the part of
 * the engine that the sequential engine (engine.c) and the group replay
 * (group.c) share, so both compute a run's outcome with the same code and
 * the same random draws in the same order.
 */
#ifndef WATTSIM_RUN_H
#define WATTSIM_RUN_H

#include "wattsim/engine.h"
#include "wattsim/rng.h"

/* What one submission does, known as soon as it starts. */
typedef struct ws_outcome {
    int i, k;                  /* batch-size index, knob index */
    int bs, pl;
    int profiled;              /* first epoch spent profiling power limits */
    int ran;                   /* 0: even one epoch exceeds the budget */
    int reached;
    int epochs;                /* epochs trained (0 when !ran) */
    double energy_j, time_s;   /* 0 when !ran */
    double cost;               /* eta*E + (1-eta)*MaxPower*T; 0 when !ran */
    double budget;             /* epochs the early-stopping budget allowed */
} ws_outcome;

/* The power limit for batch-size index i: PLO predict and, when it has no
 * answer, just-in-time profiling of every limit of i (highest first) and a
 * second predict. *k is the knob index; *profiled says whether it profiled.
 * ctx carries each profiled limit's epoch time and power to the PLO. */
int ws_run_power_limit(const ws_job *job, ws_plo *plo, ws_ctx *ctx, int i,
                       int *k, int *profiled, ws_error *err);

/* Draw one recorded run of bs index i from rng (Zeus' df.sample(n=1,
 * random_state=rng), which is rng.choice(R, 1, replace=False) over bs's R
 * runs in trace order: rng.integers(R), no draw when R = 1) and compute
 * the outcome at knob k with the epoch budget from job->beta * min_cost
 * (Zeus' _run_job). min_cost and the budget are in the time-invariant
 * cost eta*E + (1-eta)*MaxPower*T under every objective (engine.c says
 * why). */
void ws_run_outcome(const ws_job *job, ws_rng *rng, int i, int k,
                    int profiled, double min_cost, ws_outcome *o);

/* Put what the policies may know about outcome o into ctx's run members. */
void ws_run_ctx(ws_ctx *ctx, const ws_job *job, const ws_outcome *o);

#endif
