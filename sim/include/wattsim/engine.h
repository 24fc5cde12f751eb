/*
 * The simulation engine: one recurring job, its recurrences run one after
 * another, knobs chosen by a BSO and a PLO (see docs/model.md).
 *
 * The engine works on the job's knob table (plain arrays) and never touches
 * strings or allocates in its loop. Each run it simulates is streamed to a
 * callback as a ws_run_record; totals are accumulated as it goes.
 */
#ifndef WATTSIM_ENGINE_H
#define WATTSIM_ENGINE_H

#include "wattsim/error.h"
#include "wattsim/plugin.h"
#include "wattsim/policy.h"
#include "wattsim/whatif.h"

#define WS_MAX_TRIES 20

/* Where the environment members of the policies' context (ws_ctx
 * carbon_intensity, price) come from. The engine calls `at` at the start of
 * every recurrence with its 1-based index and the simulated time since the
 * first recurrence started (s); it leaves NAN in what `at` does not set. */
typedef struct ws_env_source {
    void (*at)(void *self, long recurrence, double t_s, double *carbon_intensity,
               double *price);
    void *self;
} ws_env_source;

/* One phase of a drifting job (docs/model.md, "Data drift"): from
 * recurrence `from` on, runs, profiling and their costs come from `table`'s
 * knob times, powers and recorded runs. The table has the job's batch
 * sizes and power limits (bs, knob_start, knob_pl: ws_study_job_drift
 * checks); its eta, beta and other scalars are not read. */
typedef struct ws_drift_phase {
    long from;                 /* > 1, increasing over the phases */
    const ws_job *table;
} ws_drift_phase;

typedef struct ws_sim_params {
    long recurrences;          /* > 0 */
    unsigned long seed;        /* seeds the engine's run-drawing stream */
    const ws_env_source *env;  /* NULL: carbon intensity and price NAN */
    /* Appended (0 and NULL: off): per-recurrence sums the engine keeps
     * itself, for a caller that needs no record of each run (a sweep
     * without --keep-history) and so passes no sink. The sums are the
     * ones a sink would make from the records, in the same order, so the
     * results are the same bits. */
    long steady_from;          /* > 0: add the energy and time of every
                                  recurrence >= this one to the totals'
                                  steady_energy_j and steady_time_s */
    double *rec_cost;          /* non-NULL: [r - 1] = the cost of all the
                                  tries of recurrence r (recurrences
                                  entries) */
    /* Appended (NULL and 0: no drift): the job's later phases, in order.
     * The policies see the job (phase 1's table) throughout and the drift
     * only through what they observe; with drift_informed, a policy that
     * knows the traces (the oracle reference) is registered again with
     * each phase's table (the job's scalars, the phase's arrays) at its
     * first recurrence and sees that table in every call. */
    const ws_drift_phase *drift;
    int n_drift;
    int drift_informed;
} ws_sim_params;

/* One run of the job: a try of a recurrence that actually ran. */
typedef struct ws_run_record {
    long recurrence;           /* 1-based */
    int attempt;               /* try within the recurrence, 1-based */
    int bs, pl;
    double energy_j, time_s, cost;
    int epochs;                /* epochs trained */
    int reached, profiled;
    double co2_g, usd;         /* 0 without a carbon / price series */
    double start_s;            /* start on the simulated clock, s after
                                  the what-if's start (0 without) */
    int wrapped;               /* reached past the end of a series */
} ws_run_record;

typedef int (*ws_run_sink)(void *ctx, const ws_run_record *r);

typedef struct ws_sim_totals {
    double energy_j, time_s, cost;
    long runs;                 /* records emitted */
    long recurrences;
    long skipped;              /* tries that did not run (budget < 1 epoch) */
    int final_bs, final_pl;    /* knob of the last run that reached */
    double co2_g, usd;         /* totals of the runs' emissions and money */
    long wrapped;              /* runs that reached past a series' end */
    long fail_recurrence;      /* when the simulation failed: the recurrence */
    int fail_attempt;          /* and try it stopped in (0, 0: before the
                                  first, in register_job); else 0 */
    /* Appended: with ws_sim_params.steady_from, the energy and time of the
     * recurrences from that one on (each recurrence's tries summed first,
     * then added in order); else 0. */
    double steady_energy_j, steady_time_s;
    long late;                 /* recurrences that started after their
                                  --every time (the previous ran over) */
    double waited_s;           /* time recurrences waited (--defer-up-to) */
} ws_sim_totals;

/* Simulate. `sink` may be NULL. Returns 0, or -1 with err set (a policy
 * error, b0 not reaching the target, 20 tries without reaching, or a
 * nonzero return of sink, whose message the sink must have set). */
int ws_simulate(const ws_job *job, ws_bso *bso, ws_plo *plo,
                const ws_sim_params *p, ws_run_sink sink, void *ctx,
                ws_sim_totals *out, ws_error *err);
/* The same with what-ifs: carbon/price accounting on a simulated clock
 * and the objective's cost (whatif NULL: exactly ws_simulate). Table
 * transforms (cap, stall) are applied to `job` beforehand
 * (ws_whatif_apply). */
int ws_simulate_whatif(const ws_job *job, ws_bso *bso, ws_plo *plo,
                       const ws_sim_params *p, const ws_whatif *whatif,
                       ws_run_sink sink, void *ctx, ws_sim_totals *out,
                       ws_error *err);

/* Python's float floor division a // b (b > 0), which the published
 * simulator uses for the epoch budget. */
double ws_py_floordiv(double a, double b);

#endif
