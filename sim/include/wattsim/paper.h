/*
 * paper.md: wattsim's reproduction of the Zeus paper (NSDI'23) set beside
 * the paper's published numbers, computed from the outputs of
 * scripts/reproduce-paper in a folder DIR:
 *
 *   DIR/potential/potential.csv    energy-saving potential per GPU x workload
 *   DIR/comparison/savings.csv     savings of zeus+jit (totals, 95 % CI)
 *   DIR/comparison/sweep.csv       steady-state savings
 *   DIR/comparison/history.csv     every run (sweep --keep-history): the
 *                                  per-job savings under each estimator of
 *                                  wattsim/estimators.h, the cost at the
 *                                  sweep's eta and where exploration ends
 *
 * Each row names the metric (per-run knob landscape, totals over all
 * recurrences or the steady state; which GPUs), the paper's range, ours
 * and the difference in percentage points. Rows whose inputs are missing
 * are left out. The published numbers are constants here: 23.8 %-74.7 %
 * (motivation, V100) and 15.3 %-75.8 % (abstract).
 */
#ifndef WATTSIM_PAPER_H
#define WATTSIM_PAPER_H

#include <stdio.h>
#include "wattsim/config.h"
#include "wattsim/error.h"
#include "wattsim/estimators.h"

/* The most GPU x workload jobs paper.md shows estimator by estimator. */
#define WS_PAPER_MAX_JOBS 64

/* One GPU x workload job of history.csv: zeus+jit versus default. */
typedef struct ws_paper_job {
    char gpu[64], workload[64];        /* as in the files */
    double potential;                  /* potential.csv's saving_pct, or NAN */
    double est[WS_EST_N];              /* ETA saving %, estimator by estimator */
    ws_est_cost cost;
    size_t seeds;                      /* seeds both pairs have */
} ws_paper_job;

/* The key numbers, also for the top of the report. Fields are NAN when
 * their input is missing. */
typedef struct ws_paper_numbers {
    double pot_v100_lo, pot_v100_hi;   /* potential saving %, V100 */
    double pot_all_lo, pot_all_hi;     /* the same over every GPU */
    double eta_lo, eta_hi;             /* zeus+jit ETA saving vs default, totals, all */
    double eta_v100_lo, eta_v100_hi;   /* the same, V100 */
    double steady_lo, steady_hi;       /* steady-state ETA saving vs default, all */
    double tta_lo, tta_hi;             /* TTA saving vs default, totals, all */
    size_t n_jobs, n_gpus, seeds;      /* GPU x workload jobs in savings.csv */
    char policy[64];                   /* the subject pair, e.g. "zeus+jit" */
    char eta[32], beta[32];            /* of the figure's cells, as written */
    char smallest[2][WS_DISPLAY_MAX + 1];  /* workloads of the smallest mean ETA saving */
    double smallest_pct[2];            /* their mean over GPUs */
    int have_potential, have_savings, have_steady;
    /* from comparison/history.csv, when there */
    ws_paper_job jobs[WS_PAPER_MAX_JOBS];
    size_t n_est_jobs;                 /* jobs with both pairs' runs */
    size_t jobs_left_out;              /* beyond WS_PAPER_MAX_JOBS */
    size_t failed_sims;                /* failed simulations left out */
    int have_history;
    char gpu_display[WS_PAPER_MAX_JOBS][WS_DISPLAY_MAX + 1];
    char work_display[WS_PAPER_MAX_JOBS][WS_DISPLAY_MAX + 1];
} ws_paper_numbers;

/* Read DIR's outputs; workloads are named by `cat`'s display names (cat may
 * be NULL). Returns 0 (fields of missing inputs NAN / 0), -1 with err set
 * when an input exists but cannot be read. */
int ws_paper_numbers_read(const char *dir, const ws_catalogue *cat, ws_paper_numbers *out,
                          ws_error *err);

/* Whether DIR holds the reproduction's outputs (potential/potential.csv
 * or comparison/savings.csv): 1 or 0; -1 (err set) when one of them, or
 * its folder, is there but not a regular file reached without a symbolic
 * link. ws_paper_numbers_read checks its inputs the same way. */
int ws_paper_inputs(const char *dir, ws_error *err);

/* The comparison table as Markdown; text read from DIR's files (policy
 * labels, workload names) is escaped as Markdown text. */
void ws_paper_write_md(FILE *f, const ws_paper_numbers *n);

#endif
