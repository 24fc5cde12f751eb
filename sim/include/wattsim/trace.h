/*
 * Traces: parse and validate the train trace and one GPU's power trace,
 * then join them into the knob table of one job (wattsim/policy.h ws_job).
 *
 * Everything string-valued is resolved here, at the edge; the engine and
 * the policies only see arrays of numbers indexed by batch-size index and
 * knob index.
 *
 * Semantics follow the published Zeus simulator: the train rows are joined
 * with the power rows on (dataset, network, optimizer, batch_size); batch
 * sizes missing on either side drop out. B(job) is every batch size of the
 * job's (dataset, network, optimizer) in the joined table, whatever the
 * target metric; R(bs) the job's train rows at bs for its target metric.
 */
#ifndef WATTSIM_TRACE_H
#define WATTSIM_TRACE_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/hash.h"
#include "wattsim/policy.h"

typedef struct ws_train_row {
    int dataset, network, optimizer;   /* ids in the trace's name table */
    int bs;
    long run;
    double target_metric;
    double target_epoch;               /* >= 1; INFINITY when never reached */
    long line;
} ws_train_row;

/*
 * Physical bounds of a trace row, refused with FILE:LINE outside them. No
 * GPU, nor a job's GPUs together, can draw or run outside them, and within
 * them every derived quantity is a normal, finite double: a run costs at
 * least 1 ms x 1 W x 1 epoch = 1e-3 J (no ETA, TTA or cost underflows to 0,
 * so a log axis or a ratio never meets 0) and at most a year x 100 kW x
 * 2^31 epochs ~ 7e21 J, so totals over any number of recurrences and seeds
 * stay finite.
 *  - time_per_epoch: 1 ms to a (Julian) year;
 *  - average_power: 1 W (less than any GPU draws while it computes) to
 *    100 kW (a row may sum a job's GPUs: a rack of the densest ones);
 *  - power_limit: 1 to 100000 W, as average_power;
 *  - target_epoch: at least 1 (epochs count from 1), or never reached.
 */
#define WS_MIN_TIME_PER_EPOCH 1e-3     /* s */
#define WS_MAX_TIME_PER_EPOCH 31557600.0  /* s, 365.25 days */
#define WS_MIN_AVERAGE_POWER 1.0       /* W */
#define WS_MAX_AVERAGE_POWER 1e5       /* W */
#define WS_MAX_POWER_LIMIT 100000      /* W */

typedef struct ws_power_row {
    int dataset, network, optimizer;
    int bs;
    int pl;
    double time;                       /* s per epoch, in [WS_MIN_, WS_MAX_TIME_PER_EPOCH] */
    double power;                      /* W, in [WS_MIN_, WS_MAX_AVERAGE_POWER] */
    long line;
    double energy_error;               /* the optional column energy_error: a
                                          relative bound on the energy's
                                          integration error (trace import
                                          power); NAN when not recorded */
    int gpus;                          /* gpus_per_job: GPUs `power` sums
                                          (optional column, default 1; one
                                          value per dataset, network and
                                          optimizer) */
    double job_max_power;              /* max_power: the job's MaxPower, W,
                                          where its GPUs' limits differ (a
                                          node of mixed models: the sum of
                                          each GPU's own largest limit;
                                          optional column, written by trace
                                          import power; one value per job);
                                          0 when absent: then MaxPower is
                                          the largest limit x gpus */
} ws_power_row;

/* The most GPUs a job's power rows may sum: each draws at least 1 W
 * (WS_MIN_AVERAGE_POWER), and a row's power is at most WS_MAX_AVERAGE_POWER. */
#define WS_MAX_GPUS_PER_JOB 100000

/* Interned strings shared by both traces. */
typedef struct ws_names {
    char **s;
    size_t n, cap;
    ws_hindex index;                   /* s by content */
} ws_names;

typedef struct ws_traces {
    char *dir;
    ws_names names;
    char *train_path;
    ws_train_row *train;
    size_t n_train;
    char *gpu;
    char *power_path;
    ws_power_row *power;
    size_t n_power;
    double max_power;                  /* MaxPower of one GPU: highest
                                          joined limit (a job's is this
                                          times its gpus_per_job) */
    int has_gpus_column;               /* the power trace has gpus_per_job */
} ws_traces;

/* Path of trace NAME (e.g. "summary_train") in dir: NAME.csv or
 * NAME.csv.gz. Returns a malloc'd path, or NULL with err set. */
char *ws_trace_path(const char *dir, const char *name, ws_error *err);

/* GPUs that have a power trace in dir (summary_power_<gpu>.csv[.gz]),
 * sorted; returns the count or -1. *out is a malloc'd array of strings. */
int ws_trace_gpus(const char *dir, char ***out, ws_error *err);

/* Load the train trace and the power trace of `gpu` from dir. Returns 0,
 * or WS_TRACE_UNKNOWN_GPU when dir has other GPUs' power traces but not
 * this one (so callers can point at where the GPU was named), or -1. */
#define WS_TRACE_UNKNOWN_GPU (-2)
int ws_traces_load(ws_traces *t, const char *dir, const char *gpu,
                   const ws_csv_limits *lim, ws_error *err);
/* The same, always reading the files (ws_traces_load takes the process's
 * cache when it is on, else calls this). */
int ws_traces_load_uncached(ws_traces *t, const char *dir, const char *gpu,
                            const ws_csv_limits *lim, ws_error *err);

/*
 * The process's cache of loaded traces (io/trace_cache.c): off (0) until
 * set; then ws_traces_load keeps up to n trace sets (train + one GPU's
 * power trace, least recently used out), each keyed by the folder, GPU,
 * limits and both files' path, st_dev, st_ino, size and mtime (ns), and
 * hands out deep copies; a changed or replaced file is read again.
 * Also sets ws_sha256_cache_set(8 n) (wattsim/sha256.h): the files'
 * hashes, keyed the same way. Thread-safe. The library API turns it on (WS_TRACE_CACHE_DEFAULT
 * sets, or $WATTSIM_TRACE_CACHE). Stats: hits and misses of trace sets.
 */
#define WS_TRACE_CACHE_DEFAULT 8
void ws_trace_cache_set(size_t n);
size_t ws_trace_cache_capacity(void);
void ws_trace_cache_stats(unsigned long long *hits, unsigned long long *misses);
void ws_traces_free(ws_traces *t);

/* Once loaded, t->train is sorted by (dataset, network, optimizer,
 * target_metric, batch size, run) and t->power by (dataset, network,
 * optimizer, batch size, power limit), duplicates refused. The rows
 * [*lo, *hi) of one (dataset, network, optimizer), by binary search. */
void ws_traces_train_range(const ws_traces *t, int ds, int net, int opt, size_t *lo,
                           size_t *hi);
void ws_traces_power_range(const ws_traces *t, int ds, int net, int opt, size_t *lo,
                           size_t *hi);
/* The id of a dataset, network or optimizer name in the loaded traces, or
 * -1 when no row names it. */
int ws_traces_name_id(const ws_traces *t, const char *name);

/*
 * The knob table of one job on the loaded GPU. `job` is the view handed to
 * policies; the other members own its arrays. A batch size's recorded runs
 * (run_epoch) are in the train trace's row order, the order the published
 * simulator samples them in; its knobs are in ascending power limit, and
 * knob_line keeps each one's line in the power trace, whose order decides
 * the order of the sums the profiling figures are (ws_job_profile).
 */
typedef struct ws_job_table {
    ws_job job;
    char *workload;
    char *gpu;
    char *dataset, *network, *optimizer;   /* job.dataset... (2.3) */
    int *bs;
    int *knob_start;
    int *knob_pl;
    double *knob_time;
    double *knob_power;
    long *knob_line;                   /* power trace line of each knob */
    double *knob_error;                /* each knob's energy_error (relative;
                                          NAN: not recorded); host-only, not
                                          in the policy ABI */
    int *run_start;
    double *run_epoch;
    double *profile_power, *profile_time;           /* per knob */
    double *first_epoch_energy, *first_epoch_time;  /* per batch size */
    int b0_index;                      /* index of job.b0 in bs */
    int n_pl_distinct;                 /* |P|: distinct limits of the job */
    long default_recurrences;          /* 2 * |B| * |P| */
    int max_power_summed;              /* job.max_power is the trace's
                                          max_power column: the sum of mixed
                                          GPUs' own limits, not one limit
                                          times the GPUs */
    /* A drifting workload's later phases (ws_study_job_drift builds them;
     * ws_job_free frees them): phase[p]'s table from recurrence
     * phase_from[p] on, with this table's batch sizes and limits. */
    struct ws_job_table *phase;
    long *phase_from;
    size_t n_phases;
} ws_job_table;

/*
 * The join (io/trace_join.c): build the job table for `spec` from loaded
 * traces. b0 is spec->b0, capped
 * to the largest batch size the GPU's power trace has for the dataset (as
 * the paper's scripts do). eta and beta are copied into the view.
 */
int ws_job_build(ws_job_table *jt, const ws_traces *t,
                 const ws_workload_spec *spec, double eta, double beta,
                 ws_error *err);
void ws_job_free(ws_job_table *jt);

/*
 * (Re)compute the figures of just-in-time profiling from the table's
 * knobs and runs, as the published simulator computes them over its
 * joined table, where each of bs's R recorded runs is a row for every
 * power limit (in the power trace's order):
 *   profile_power[k], profile_time[k]   pandas' groupby(power_limit)
 *       .mean() over those rows: the Kahan-summed mean of R copies;
 *   first_epoch_energy[i], first_epoch_time[i]   numpy's mean of
 *       time * power and of time over all R x P rows of bs[i].
 * Points the job's version 2.1 members at them. ws_job_build calls it;
 * a transform of the table calls it again. Returns 0 or -1 (memory).
 */
int ws_job_profile(ws_job_table *jt, ws_error *err);

/* Work the joins and readers have done in this process (comparisons,
 * binary-search and scan steps of trace loading, job building, trace
 * check, the importers' sorts and the Pareto sort, plus hash-table
 * probes): a machine-independent measure for the tests that they grow as
 * n log n. */
unsigned long long ws_join_work(void);
void ws_join_work_add(unsigned long long n);

#endif
