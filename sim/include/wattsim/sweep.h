/*
 * A sweep: a config's run plan (gpu x workload x eta x beta x seed) crossed
 * with several policy pairs, run on a pool of threads, then summarised per
 * cell (every axis but the seed) with means and 95 % confidence intervals
 * over seeds, steady state, final knobs, savings versus the `default`
 * policy and regret versus `oracle` (both always run as references).
 *
 * Determinism: a simulation depends only on its job and seed (policies and
 * the engine are seeded from it), results are stored by plan index and
 * summarised in plan order, so every output is byte-identical whatever the
 * thread count or the order in which threads pick simulations.
 */
#ifndef WATTSIM_SWEEP_H
#define WATTSIM_SWEEP_H

#include <stddef.h>
#include <stdio.h>
#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/study.h"
#include "wattsim/trace.h"

typedef struct ws_policy_pair {
    char *bso, *plo;                 /* names as given (built-in or .so) */
    char *label;                     /* "bso+plo" by registered names */
} ws_policy_pair;

/* "zeus:jit,default:default" -> pairs. */
int ws_policy_pairs_parse(const char *s, ws_policy_pair **out, size_t *n,
                          ws_error *err);
void ws_policy_pairs_free(ws_policy_pair *p, size_t n);

/* One simulation of the plan. */
typedef struct ws_sweep_sim {
    ws_sim_totals tot;
    long recurrences;
    double *rec_energy, *rec_time, *rec_cost;   /* per recurrence, all tries */
} ws_sweep_sim;

typedef struct ws_sweep {
    ws_policy_pair *pairs;   size_t n_pairs;
    size_t ref_default, ref_oracle;             /* pair indices */
    size_t n_gpus, n_work, n_etas, n_betas, n_seeds;
    char **gpus, **work;                         /* names */
    double *etas, *betas;
    unsigned long *seeds;
    ws_job_table *jobs;                          /* [gpu * n_work + work] */
    ws_sweep_sim *sims;      size_t n_sims;      /* plan order, seed fastest */
} ws_sweep;

/* Index of a simulation; the cell (all but seed) is index / n_seeds. */
size_t ws_sweep_index(const ws_sweep *s, size_t pair, size_t gpu, size_t work,
                      size_t eta, size_t beta, size_t seed);

/* Run the sweep. `pairs` are copied; default:default and oracle:oracle are
 * appended when missing. The config's policy params apply to a pair whose
 * names equal the config's bso / plo. threads >= 1. */
int ws_sweep_run(const ws_run_config *cfg, const ws_study_env *env,
                 const ws_policy_pair *pairs, size_t n_pairs, int threads,
                 ws_sweep *out, ws_error *err);
void ws_sweep_free(ws_sweep *s);

/* Mean and 95 % CI (t distribution, n - 1 degrees of freedom) of x[0..n);
 * lo = hi = NAN when n < 2. */
void ws_ci95(const double *x, size_t n, double *mean, double *lo, double *hi);

/* Recurrences that count as steady state: the last 10 %, at least 5 (all
 * when fewer). */
long ws_steady_count(long recurrences);

typedef struct ws_stat {
    double mean, lo, hi;             /* lo/hi: 95 % CI, NAN with one seed */
} ws_stat;

/* One cell (every axis but the seed) summarised over its seeds. */
typedef struct ws_sweep_summary {
    size_t pair, gpu, work, eta, beta;
    long recurrences;
    ws_stat energy, time, cost;              /* totals over recurrences */
    ws_stat steady_energy, steady_time;      /* per recurrence, steady state */
    ws_stat regret;                          /* cost - oracle's cost, total */
    /* 1 - ours / default's, of the means over seeds (same seeds) */
    double save_energy, save_time, save_cost;
    double save_steady_energy, save_steady_time;
} ws_sweep_summary;

size_t ws_sweep_n_cells(const ws_sweep *s);
void ws_sweep_summarise(const ws_sweep *s, size_t cell, ws_sweep_summary *out);

/* Summaries, one row/object per cell in plan order. */
void ws_sweep_write_csv(FILE *f, const ws_sweep *s);
void ws_sweep_write_json(FILE *f, const ws_sweep *s);
/* Learning curves: per cell and recurrence, mean and CI over seeds of the
 * cumulative cost and of the regret versus oracle. */
void ws_sweep_write_curves(FILE *f, const ws_sweep *s);

#endif
