/*
 * Group traces and their replay: recurring jobs whose submissions may
 * overlap (a new submission arrives while an earlier one still runs), as
 * in the Alibaba-cluster experiment of the Zeus paper.
 *
 * A group trace is a CSV file with the header
 *     group,start_time,end_time,dataset,runtime_ratio
 * (columns in any order; no others). One group is one recurring job: its
 * workload is the catalogue entry of its dataset, with the paper defaults.
 * Rows of a group need not be contiguous (they are grouped as pandas'
 * groupby does: groups in name order, rows in file order), but within a
 * group they must be in start order.
 *
 * The replay reproduces Simulator.simulate_one_alibaba_group of the
 * published Zeus simulator (zeus._legacy.simulate); see ws_group_simulate.
 */
#ifndef WATTSIM_GROUP_H
#define WATTSIM_GROUP_H

#include <stddef.h>
#include <stdio.h>
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/engine.h"
#include "wattsim/error.h"
#include "wattsim/plugin.h"
#include "wattsim/whatif.h"

/* One submission of a group as the trace records it. */
typedef struct ws_group_row {
    double start, end;         /* seconds; end >= start */
    double ratio;              /* runtime_ratio, > 0 */
    long line;                 /* line in the trace file */
} ws_group_row;

typedef struct ws_group {
    char *name;
    const ws_workload_spec *spec;  /* the catalogue's entry for its dataset */
    ws_group_row *rows;        /* start order */
    size_t n;
} ws_group;

typedef struct ws_group_trace {
    char *path;
    ws_group *groups;          /* sorted by name (strcmp) */
    size_t n;
    size_t n_rows;
} ws_group_trace;

/* Bounds of a group row, so that scaled energies, times and costs stay
 * finite: |start_time|, |end_time| <= 1e15 s, runtime_ratio in (0, 1e6]. */
#define WS_GROUP_MAX_TIME 1e15
#define WS_GROUP_MAX_RATIO 1e6

/* Parse and validate a group trace (plain or gzip). Every error names
 * FILE:LINE: a missing, unknown or duplicate column, a value that is not a
 * finite number or is outside the bounds above, end_time before
 * start_time, runtime_ratio <= 0, a dataset
 * not in the catalogue, a group whose rows name two datasets, a row that
 * starts before the previous row of its group. */
int ws_group_trace_load(const char *path, const ws_catalogue *cat,
                        const ws_csv_limits *lim, ws_group_trace *out,
                        ws_error *err);
void ws_group_trace_free(ws_group_trace *t);

/* The group's seed in the paper's script: zlib.adler32(name). */
unsigned long ws_group_seed(const char *name);

/* One simulated run of a group, emitted when it completes (history order
 * is completion order, as in the published simulator). run.recurrence is
 * the 1-based trace row that started the chain of retries, run.attempt
 * the submission within that chain. Energy, time and cost are scaled by
 * the row's runtime_ratio. */
typedef struct ws_group_record {
    ws_run_record run;
    double start, end;         /* wall-clock interval of the submission */
    double ratio;
    int concurrent;            /* started while others were in flight */
} ws_group_record;

typedef int (*ws_group_sink)(void *ctx, const ws_group_record *r);

typedef struct ws_group_totals {
    double energy_j, time_s, cost;  /* scaled by runtime_ratio */
    long submissions;          /* rows + retries, including skipped ones */
    long runs;                 /* records emitted */
    long retries;              /* resubmissions after a failure */
    long skipped;              /* submissions that never ran (budget 0) */
    long concurrent;           /* submissions started with best-known knobs */
    int final_bs, final_pl;    /* knob of the last completion that reached */
    double co2_g, usd;         /* with a carbon / price series (else 0) */
    long wrapped;              /* runs that reached past a series' end */
} ws_group_totals;

/*
 * The environment of a replay: the what-if carbon and price series (wi
 * NULL, or without a series: policies see NAN carbon_intensity / price and
 * runs carry no grams or dollars). Trace time t0 (the earliest start_time
 * of the whole trace, so that the groups of a cluster share one clock) is
 * series time wi->start; a submission that starts at trace time t is at
 * wi->start + (t - t0). Policies see the rates at the start of the
 * submission they choose for (submit) or learn from (complete); a run's
 * grams and dollars integrate its scaled energy over its scaled duration
 * from its start, as the engine does (ws_whatif_run). Only the energy
 * objective is supported: the replay's costs (and the best batch size that
 * concurrent submissions use) stay energy costs.
 */
typedef struct ws_group_env {
    const ws_whatif *wi;
    double t0;
} ws_group_env;

/*
 * Replay one group. Policies see a copy of *job with concurrent = 1; the
 * replay's random stream is np.random.default_rng(seed) and the policies'
 * are seeded from seed, as in ws_simulate (the paper's script seeds the
 * simulator and the BSO of a group with zlib.adler32 of its name). `env` and `sink` may be NULL. Returns 0, or -1 with err set
 * (a policy error, a chain of WS_MAX_TRIES submissions without reaching
 * the target — the published simulator would retry forever — an objective
 * other than energy, or a nonzero sink).
 */
int ws_group_simulate(const ws_job *job, ws_bso *bso, ws_plo *plo,
                      const ws_group *g, unsigned long seed, const ws_group_env *env,
                      ws_group_sink sink, void *ctx, ws_group_totals *out,
                      ws_error *err);

/* The earliest start_time of the trace (0 for an empty one): its t0. */
double ws_group_trace_t0(const ws_group_trace *t);

/*
 * A SYNTHETIC group trace (the Alibaba group file of the paper is not
 * public). Group k (1-based, named synth-%04d) takes datasets[(k-1) % n].
 * Arrivals are a Poisson process (exponential gaps of mean mean_gap_s);
 * each submission overlaps the next one (the next starts before it ends)
 * with probability `overlap`: its duration is then 1.1 to 2 times the gap
 * to the next arrival, else 0.1 to 0.9 times it (uniform). runtime_ratio is
 * log-normal with mean 1, exp(N(-sigma^2/2, sigma^2)). Times are whole
 * milliseconds. Group k draws from its own stream, numpy's
 * Generator(PCG64(SeedSequence(seed, spawn_key=(16 + k - 1,)))), so a group
 * does not depend on how many others there are: the arrival gaps are
 * mean_gap_s * 1000 * rng.standard_exponential(method="inv") ms, the
 * overlap and duration draws rng.random(), the ratio rng.lognormal().
 */
typedef struct ws_group_synth_params {
    long groups, jobs_per_group;   /* >= 1 */
    double overlap;                /* in [0, 1] */
    double ratio_sigma;            /* >= 0 */
    double mean_gap_s;             /* > 0 */
    unsigned long seed;
    const char *const *datasets;   /* n_datasets >= 1 names */
    size_t n_datasets;
} ws_group_synth_params;

/* Write the trace (header and rows) to f. *overlapping (may be NULL)
 * receives how many consecutive pairs of a group overlap. */
int ws_group_synth(FILE *f, const ws_group_synth_params *p, long *overlapping,
                   ws_error *err);

#endif
