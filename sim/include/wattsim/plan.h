/*
 * wattsim plan: what to set for one recurring job, what it saves, and when
 * learning it pays off (docs/planning.md).
 *
 *  - Per knob, the expected run (over the recorded runs of its batch size,
 *    as wattsim pareto): TTA, ETA. Run N times back to back from the
 *    what-if start, each run's emissions, money and cost are those of its
 *    own interval on the series; the per-run figures are means over the N
 *    runs (without a series: exactly the pareto numbers).
 *  - recommended: the knob of least expected cost per run among the knobs
 *    every recorded run reaches; default: b0 at its highest limit.
 *  - eligible batch sizes: those every recorded run of which reaches the
 *    target (the others are listed with their reach); near ties: other
 *    eligible knobs whose expected cost is within tie_tolerance of the
 *    recommended one: max(1 %, the telemetry error), the telemetry error
 *    being the largest energy_error (trace import power's sampling-error
 *    bound) of the eligible knobs. One tolerance for all: any two
 *    eligible knobs' costs may each be off by that much, and a knob's
 *    cost error is at most its energy's (eta * E of the cost).
 *  - saving = default - recommended, per run and over N recurrences.
 *  - For each policy pair, `seeds` simulations of N recurrences (seeds
 *    1..S) and the default pair's on the same seeds; per seed, the
 *    break-even recurrence is the first r from which the policy's
 *    cumulative cost (exploration included) stays below the default's up
 *    to N, or never. Reported: the median and a 95 % interval (2.5th and
 *    97.5th percentiles, nearest rank) over all seeds, a seed that never
 *    breaks even counted as beyond the horizon (INFINITY, printed
 *    "never"), and how many never do; and the mean cumulative saving by recurrence with
 *    a 95 % confidence band (mean +- 1.96 sd / sqrt(S)). A policy that
 *    fails on a seed (its error, or a recurrence that never reaches) is
 *    reported with the first such seed's error and its figures are over
 *    the other seeds; failing on every seed is an error.
 *  - deferral's own saving (wi->defer > 0): the default pair on the same
 *    seeds and schedule without deferral, against with it: what waiting
 *    alone saves, in the deferral series' unit (g CO2eq or $; the
 *    objective's series under a carbon or price objective) and in the
 *    objective's cost, means over seeds, over N recurrences.
 */
#ifndef WATTSIM_PLAN_H
#define WATTSIM_PLAN_H

#include <stddef.h>
#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "wattsim/sweep.h"
#include "wattsim/whatif.h"

/* Expected per-run figures of one knob. */
typedef struct ws_plan_knob {
    int bs, pl;
    double tta_s, eta_j, cost, co2_g, usd;   /* means per run */
} ws_plan_knob;

typedef struct ws_plan_policy {
    char *label;                  /* "zeus+jit" */
    int n_seeds;                  /* seeds the figures are over: those on
                                     which the policy did not fail */
    int n_never;                  /* seeds that do not break even by N */
    double break_even_median;     /* recurrence over all seeds; INFINITY:
                                     never (beyond the horizon) */
    double break_even_lo, break_even_hi;
    double *saving_mean;          /* per recurrence r (index r - 1): */
    double *saving_lo, *saving_hi;/* cumulative cost saving vs default */
    double energy_saving_j;       /* mean over seeds, over N recurrences */
    double co2_saving_g, usd_saving;
    int n_failed;                 /* seeds on which the policy failed */
    int first_failed_seed;
    char *failure;                /* that seed's error; NULL when none */
    ws_study_pair identity;       /* names, default parameters as resolved,
                                     file and sha256 (as run records them) */
} ws_plan_policy;

/* A batch size and whether the recommendation may use it: eligible when
 * every recorded run of it reaches the target. */
typedef struct ws_plan_bs {
    int bs, runs, reached;
} ws_plan_bs;

#define WS_PLAN_MAX_TIES 8
#define WS_PLAN_TIE_TOLERANCE 0.01   /* the least near-tie tolerance */

typedef struct ws_plan {
    const ws_job *job;
    int max_power_summed;         /* ws_job_table.max_power_summed: set by
                                     the caller, for the report */
    long recurrences;             /* N */
    int seeds;                    /* S */
    ws_plan_knob recommended, dflt;
    int dflt_reached, dflt_runs;  /* recorded runs of b0 reaching / all:
                                     the default's figures are over the
                                     runs that reach */
    ws_plan_policy *policies;
    size_t n_policies;
    long wrapped;                 /* of the recommended knob's N runs, those
                                     reaching past a series' end */
    ws_plan_bs *bs;               /* every batch size, in table order */
    int n_bs, n_eligible;
    double tie_tolerance;         /* relative: max(1 %, tie_error) */
    double tie_error;             /* the largest energy_error of the
                                     eligible knobs; NAN: none recorded */
    int tie_error_bs, tie_error_pl;  /* the knob it is of */
    ws_plan_knob ties[WS_PLAN_MAX_TIES];  /* other eligible knobs within the
                                     tolerance of the recommended cost, by
                                     cost */
    int n_ties, n_ties_all;       /* listed, and all there were */
    int has_defer;                /* wi->defer > 0: the figures below set */
    int defer_carbon;             /* deferral minimises carbon (else price) */
    double defer_saving;          /* g or $ over N recurrences, mean over
                                     seeds: without deferral - with */
    double defer_base;            /* g or $ without deferral (for the %) */
    double defer_cost_saving, defer_cost_base;   /* the objective's cost */
} ws_plan;

/* Compute the plan of `job` (its eta/beta set; table what-ifs applied) with
 * what-ifs `wi` (may be NULL). knob_error (may be NULL) is each knob's
 * energy_error, NAN when not recorded (ws_job_table.knob_error). Policies
 * are resolved from `reg`; each pair runs with default parameters.
 * Returns 0 or -1 with err set. */
int ws_plan_compute(const ws_job *job, const double *knob_error,
                    const ws_whatif *wi, long recurrences,
                    int seeds, const ws_policy_pair *pairs, size_t n_pairs,
                    ws_registry *reg, ws_plan *out, ws_error *err);
void ws_plan_free(ws_plan *p);

/* Median, 2.5th and 97.5th percentiles (nearest rank) of the break-even
 * recurrences be[0..seeds) over all seeds, 0 (never) counted as INFINITY;
 * be is sorted in place. */
void ws_plan_break_even_stats(double *be, int seeds, double *median, double *lo,
                              double *hi);

/* The break-even recurrence of cumulative costs pol[0..n) against def[0..n)
 * (both cumulative): the first r (1-based) such that pol[q] < def[q] for
 * every q >= r - 1; 0 when pol[n-1] >= def[n-1]. */
long ws_plan_break_even(const double *pol, const double *def, long n);

#endif
