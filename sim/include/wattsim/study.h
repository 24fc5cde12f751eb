/*
 * A study: the run plan of a config (cells: policy pair x gpu x workload x
 * eta x beta x seed) and its execution. Traces are loaded once per pair
 * and GPU, job tables once per (pair, GPU, workload), policies resolved
 * once; each cell gets fresh policy instances seeded from its seed alone,
 * so a cell's result does not depend on which other cells (or pairs) run
 * or in which order.
 */
#ifndef WATTSIM_STUDY_H
#define WATTSIM_STUDY_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "wattsim/trace.h"
#include "wattsim/whatif.h"

/* Provenance of a policy pair: resolved parameters (ws_params_format)
 * and the sha256 of each .so. */
typedef struct ws_policy_prov {
    char bso_params[1024], plo_params[1024];
    char bso_sha256[65], plo_sha256[65];
    /* where each policy came from: "built-in" (the built-in policy
     * folder), else its .so's path or a provided policy's origin */
    char bso_file[1024], plo_file[1024];
} ws_policy_prov;

/* One policy pair of a run, resolved before anything runs. */
typedef struct ws_study_pair {
    char bso[72], plo[72];             /* registered names */
    char label[600];                   /* "zeus{window=10}+jit": the names and
                                          the parameters given, as sweep.csv
                                          labels pairs (the names as given when
                                          two builds would share a label) */
    ws_policy_prov prov;
} ws_study_pair;

typedef struct ws_cell {
    size_t index;                      /* position in the run plan */
    const char *gpu;
    const char *workload;
    double eta, beta;
    unsigned long seed;
    size_t pair;                       /* index of its policy pair */
    const ws_study_pair *policy;       /* that pair; NULL outside a run */
} ws_cell;

typedef struct ws_cell_result {
    ws_cell cell;
    int b0;
    int n_bs;
    long recurrences;
    ws_sim_totals tot;
    double max_power;          /* the job's MaxPower, W (limit x gpus_per_job,
                                  or a mixed node's sum of its GPUs' own) */
    int gpus_per_job;
    int max_power_summed;      /* ws_job_table.max_power_summed */
} ws_cell_result;

/* Called for every run of every cell, in plan order. */
typedef int (*ws_cell_sink)(void *ctx, const ws_cell *cell,
                            const ws_run_record *r, ws_error *err);

/* A simulation of the plan that failed (a policy error, a recurrence that
 * never reached its target, a failing sink): its cell, and in res.tot the
 * totals of its runs before the failure and where it stopped
 * (fail_recurrence, fail_attempt). */
typedef struct ws_study_failure {
    int failed;                        /* 0: no simulation failed */
    ws_cell_result res;                /* res.cell.policy points to pair */
    ws_study_pair pair;
} ws_study_failure;

typedef struct ws_study_env {
    const char *traces_dir;
    const ws_catalogue *catalogue;
    ws_registry *registry;
    const ws_csv_limits *limits;       /* NULL = defaults */
    int progress;                      /* print a progress line on stderr */
    const ws_whatif *whatif;           /* the config's what-ifs, loaded
                                          (ws_whatif_load); NULL = none */
} ws_study_env;

/* Run every cell: the plan is policy pair x gpu x workload x eta x beta x
 * seed, the pairs those of ws_run_config_n_pairs. *out (malloc'd, *n_out
 * entries) holds the results, followed in the same allocation by the pairs
 * their cells point to: free(*out) frees both. */
int ws_study_run(const ws_run_config *cfg, const ws_study_env *env,
                 ws_cell_sink sink, void *ctx, ws_cell_result **out,
                 size_t *n_out, ws_error *err);
/* The same; when a simulation fails, *failure (may be NULL) says which
 * and where (errors before any simulation starts leave it 0). */
int ws_study_run_failure(const ws_run_config *cfg, const ws_study_env *env,
                         ws_cell_sink sink, void *ctx, ws_cell_result **out,
                         size_t *n_out, ws_study_failure *failure, ws_error *err);

/* The workload spec for a name: inline jobs of cfg first, then the
 * catalogue; NULL with err set if unknown (the message starts with where
 * the config named the workload). */
const ws_workload_spec *ws_study_workload(const ws_run_config *cfg,
                                          const ws_catalogue *cat,
                                          const char *name, ws_error *err);

/* The knob table of `spec` on loaded traces with the table what-ifs of
 * `wi` (power cap, input stall; may be NULL) applied. With `note`, what
 * the cap changed goes to stderr as "wattsim: note: ...". */
int ws_study_job(const ws_whatif *wi, const ws_traces *tr,
                 const ws_workload_spec *spec, double eta, double beta,
                 ws_job_table *jt, int note, ws_error *err);

/* ws_study_job for a workload that may drift (spec->drift): the job's
 * table, and in jt->phase one table per later phase, each built from the
 * phase's traces (its `traces:` folder for tr->gpu, loaded with `lim`,
 * else tr) and rows (the job's dataset, network, optimizer and target
 * metric unless the phase gives its own), with the same what-ifs. Every
 * phase must have the job's batch sizes, power limits and GPUs per job:
 * else -1 with err "FILE:LINE:COL: drift phase N of 'job' on GPU (from
 * recurrence R): ..." naming the first difference. ws_study_job refuses
 * a drifting workload (the commands that simulate drift call this). */
int ws_study_job_drift(const ws_whatif *wi, const ws_traces *tr, const ws_csv_limits *lim,
                       const ws_workload_spec *spec, double eta, double beta,
                       ws_job_table *jt, int note, ws_error *err);

/* The engine's phases of a drifting table (ws_sim_params.drift), into
 * out[WS_MAX_DRIFT_PHASES]; returns their number (0: no drift). -1 with
 * err when a phase starts after the run's last recurrence R (it would
 * never run: say so rather than simulate a drift that does not happen). */
int ws_study_drift_phases(const ws_job_table *jt, const ws_workload_spec *spec, long R,
                          ws_drift_phase *out, ws_error *err);

/* Note the trace folders of the drift phases of cfg's workloads (its
 * inline jobs, and with cat its catalogue workloads) as input folders
 * (ws_input_dir_note): never the output folder. */
void ws_study_note_drift_inputs(const ws_run_config *cfg, const ws_catalogue *cat);

/* Nonzero when a policy pair is the oracle on both sides: the reference
 * that knows the traces, told of each drift phase (drift_informed). */
int ws_study_pair_informed(const char *bso, const char *plo);

/* Print "wattsim: note: ..." on stderr when runs wrapped around the end of
 * a series (tot->wrapped > 0). */
void ws_study_wrap_note(const ws_whatif *wi, long wrapped);

/* Load the traces of `gpu` with env's folder and limits; an unknown GPU's
 * message starts with where the config named the GPUs. */
/* Where policy type t came from, as outputs' bso_file/plo_file say it:
 * "built-in" for the built-in policy folder, else its origin (the .so's
 * path, or a Python policy's MODULE.CLASS from FILE). */
void ws_study_policy_file(const ws_registry *reg, const void *t, char *buf, size_t n);

int ws_study_traces(const ws_run_config *cfg, const ws_study_env *env,
                    const char *gpu, ws_traces *tr, ws_error *err);

#endif
