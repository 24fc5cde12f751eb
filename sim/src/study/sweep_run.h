/*
 * Internal (not installed): the parts of a sweep that sweep.c (set-up,
 * threads, summaries), isolate.c (cells in child processes) and journal.c
 * (the text record of a simulation, on disk and over a child's pipe) share.
 */
#ifndef WATTSIM_SWEEP_RUN_H
#define WATTSIM_SWEEP_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "wattsim/plugin.h"
#include "wattsim/sweep.h"

/* A policy pair resolved once before anything runs. */
typedef struct ws_sweep_policy {
    const ws_bso_type *bt;
    const ws_plo_type *pt;
    ws_value *bp, *pp;
} ws_sweep_policy;

/* Called when simulation i has its result (ok or failed). */
typedef void (*ws_sweep_done_fn)(void *ctx, size_t i);

/* Run simulation i into s->sims[i]; a failure is recorded there (message
 * "seed N: ..."). Returns 0, or -1 when it failed. Safe to call from
 * several threads for distinct i. */
int ws_sweep_run_sim(ws_sweep *s, const ws_sweep_policy *pol, size_t i);

/* Record simulation i as failed with msg: numbers zeroed, message copied. */
void ws_sweep_sim_fail(ws_sweep_sim *sim, const char *msg);

/* Run, for every cell, its simulations with todo[i] set in a forked child
 * (see isolate.c), up to `jobs` children at a time, each killed after
 * `timeout` seconds (0 = never). `done` runs in this process for each
 * simulation of a finished cell. Returns -1 only when a child cannot be
 * started (fork or pipe failing). */
int ws_sweep_run_isolated(ws_sweep *s, const ws_sweep_policy *pol,
                          const unsigned char *todo, int jobs, double timeout,
                          ws_sweep_done_fn done, void *ctx, ws_error *err);

/* ------------------------------------------------------------ records */

/* One line of text for simulation i, exact (doubles in %a):
 *   IDX ok ENERGY TIME COST RUNS RECURRENCES SKIPPED FINAL_BS FINAL_PL R
 *          E_1..E_R T_1..T_R C_1..C_R
 *   IDX failed MESSAGE
 * Returns the fprintf status (< 0 on an error). */
int ws_sweep_record_write(FILE *f, const ws_sweep *s, size_t i);

/* Parse one line (without its '\n'; the text is modified). On success
 * sets *idx and *ok and, when `apply`, stores the result in s->sims[*idx]
 * (a failure too). Returns 0, or -1 with err set (no "FILE:LINE:" prefix;
 * the caller adds it). */
int ws_sweep_record_parse(ws_sweep *s, char *line, int apply, size_t *idx,
                          int *ok, ws_error *err);

/* ------------------------------------------------------------ journal */

/* A fingerprint of everything that decides the results: pairs and their
 * parameters, axes, seeds, recurrences and the job tables' numbers. */
uint64_t ws_sweep_fingerprint(const ws_sweep *s, const ws_run_config *cfg);

typedef struct ws_journal {
    FILE *f;                   /* append mode; NULL when none */
    const char *path;
} ws_journal;

/* Start the journal at `path`. With resume and an existing journal, its
 * header must carry `fp` (else -1 with a one-line error); its successful
 * simulations are stored into s and todo[i] cleared for them (failed ones
 * are run again), *n_reused counts them. The journal is then rewritten
 * atomically with the header and the reused lines, and opened for
 * appending. */
int ws_journal_start(ws_journal *j, const char *path, ws_sweep *s, uint64_t fp,
                     int resume, unsigned char *todo, size_t *n_reused,
                     ws_error *err);
/* Append simulation i's line and flush it to the kernel. */
int ws_journal_add(ws_journal *j, const ws_sweep *s, size_t i);
void ws_journal_close(ws_journal *j);

#endif
