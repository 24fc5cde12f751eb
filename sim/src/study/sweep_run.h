/*
 * Internal (not installed): the parts of a sweep that sweep.c (set-up,
 * threads), sweep_store.c (where results are kept), isolate.c (cells in
 * child processes) and journal.c (the binary record of a simulation, on
 * disk and over a child's pipe) share. sweep.c calls them all and none
 * calls it back: isolate.c gets the function that runs a simulation as an
 * argument, the plan (indices, axes, cell names) is sweep_plan.c's and
 * what the others read of a sweep is inline in wattsim/sweep.h.
 */
#ifndef WATTSIM_SWEEP_RUN_H
#define WATTSIM_SWEEP_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "wattsim/outfile.h"
#include "wattsim/plugin.h"
#include "wattsim/sweep.h"

/* A policy pair resolved once before anything runs. */
typedef struct ws_sweep_policy {
    const ws_bso_type *bt;
    const ws_plo_type *pt;
    ws_value *bp, *pp;
    int serial;                /* runs Python: one simulation at a time */
} ws_sweep_policy;

/* Called when simulation i has its result (ok or failed). */
typedef void (*ws_sweep_done_fn)(void *ctx, size_t i);

/* A simulation's runs, kept for --keep-history. */
typedef struct ws_sweep_hist {
    ws_run_record *runs;
    size_t n, cap;
    ws_sim_totals tot;
} ws_sweep_hist;

/* Run simulation i into the sweep's store; a failure is recorded there
 * (ws_sweep_sim_fail, message "seed N: ...") and, when why is not NULL,
 * copied into it. With hist, its runs and totals go there too (the
 * caller frees hist->runs). Returns 0, or -1 when it failed. Safe to call
 * from several threads for distinct i. */
int ws_sweep_run_sim(ws_sweep *s, const ws_sweep_policy *pol, size_t i, ws_error *why,
                     ws_sweep_hist *hist);

/* ------------------------------------------------------------ store */

/* The store for s->n_sims simulations (sweep_store.c): in memory up to
 * spill_sims (0: WS_SPILL_SIMS), else in an unlinked file in dir; with
 * s->curves, each simulation's cost per recurrence in memory. Needs the
 * axes and recurrences set. Returns 0, or -1 with err. */
int ws_sweep_store_open(ws_sweep *s, size_t spill_sims, const char *dir, ws_error *err);
void ws_sweep_store_free(ws_sweep *s);
/* Store simulation i's numbers (not its rec_cost: that is written in
 * place, at ws_sweep_store_rec). Distinct i from several threads. */
void ws_sweep_store_put(ws_sweep *s, size_t i, const ws_sweep_sim *m);
/* Simulation i's cost per recurrence; NULL without curves. */
double *ws_sweep_store_rec(const ws_sweep *s, size_t i);
/* Zero a simulation's numbers (and its r per-recurrence costs, when kept);
 * record simulation i as failed with msg: numbers zeroed, and msg kept
 * when it is its cell's first failure in seed order so far. */
void ws_sweep_sim_reset(ws_sweep_sim *sim, long r);
void ws_sweep_sim_fail(ws_sweep *s, size_t i, const char *msg);
/* Simulation i's message when it is its cell's first failure, else "". */
const char *ws_sweep_sim_error(const ws_sweep *s, size_t i);

/* How a child runs simulation i (ws_sweep_run_sim): passed in, so that
 * isolate.c never calls back into sweep.c by name. */
typedef int (*ws_sweep_run_fn)(ws_sweep *s, const ws_sweep_policy *pol, size_t i,
                               ws_error *why, ws_sweep_hist *hist);

/* Run, for every cell, its simulations with todo[i] set in a forked child
 * (see isolate.c), up to `jobs` children at a time, each killed after
 * `timeout` seconds (0 = never) and allowed `memory` bytes of address
 * space beyond what it inherits (0 = no limit). `done` runs in this
 * process for each simulation of a finished cell. With `tick` (a library
 * caller's), no signal handler is installed: tick(ctx) runs at least every
 * 0.1 s and a nonzero return stops every child and fails with
 * "cancelled". Returns -1 when a child cannot be started (fork or pipe
 * failing) or when cancelled. */
int ws_sweep_run_isolated(ws_sweep *s, const ws_sweep_policy *pol,
                          const unsigned char *todo, int jobs, double timeout, size_t memory,
                          ws_sweep_run_fn run, ws_sweep_done_fn done, int (*tick)(void *),
                          void *ctx, ws_error *err);

/* ------------------------------------------------------------ records */

/* A simulation's binary record (layout in journal.c): 64 bytes, then a
 * trailer (a failure's message; with curves, the cost per recurrence). */
#define WS_RECORD_SIZE 64

/* Write simulation i's record: its numbers m (NULL: read from the store)
 * and, when it failed, msg (NULL: ws_sweep_sim_error). Returns 0, or -1
 * on a write error. */
int ws_sweep_record_write(FILE *f, const ws_sweep *s, size_t i, const ws_sweep_sim *m,
                          const char *msg);

/* The whole length of the record whose first WS_RECORD_SIZE bytes are at
 * rec, or 0 when no record of this sweep can be that long. */
size_t ws_sweep_record_len(const ws_sweep *s, const unsigned char *rec);

/* Check the record at rec (ws_sweep_record_len bytes): checksum, index,
 * every number finite and >= 0, the final knob one of the job's. On
 * success sets *idx and *ok and, when `apply`, stores the result in
 * the sweep's store (a failure too). Returns 0, or -1 with err set (no file
 * prefix; the caller adds it). */
int ws_sweep_record_parse(ws_sweep *s, const unsigned char *rec, int apply, size_t *idx,
                          int *ok, ws_error *err);

/* ------------------------------------------------------------ journal */

/* The fingerprint (fp->all, sha256) of everything that decides the
 * results: pairs, their parameters and the sha256 of each policy's file,
 * axes, seeds, recurrences, curves or not, and the job tables' numbers;
 * and the same in named parts (ws_sweep_fp). -1 when a policy file cannot
 * be read. Free with ws_sweep_fp_free. */
int ws_sweep_fingerprint(const ws_sweep *s, const ws_run_config *cfg, const ws_registry *reg,
                         const ws_sweep_policy *pol, ws_sweep_fp *fp, ws_error *err);

/* The parts (not `all`) as bytes (layout in fingerprint.c), malloc'd into
 * *buf: 0, or -1 out of memory. Decoded back by ws_sweep_fp_decode,
 * which trusts nothing: -1 (fp empty) unless the bytes check. */
int ws_sweep_fp_encode(const ws_sweep_fp *fp, char **buf, size_t *len);
int ws_sweep_fp_decode(const void *buf, size_t len, ws_sweep_fp *fp);
/* What differs between two fingerprints' parts, as one phrase into buf:
 * "policy zeus's plugin changed (sha256 ab12... THEN_WHERE; sha256
 * cd34... NOW_WHERE)"; returns 1, or 0 when no part names it. */
int ws_sweep_fp_diff(const ws_sweep_fp *then, const ws_sweep_fp *now, const char *then_where,
                     const char *now_where, char *buf, size_t size);

/* The journal's batches: at most this many bytes wait in memory, and no
 * record waits longer than this (checked as records are added). */
#define WS_JOURNAL_BATCH ((size_t)1 << 16)
#define WS_JOURNAL_SECONDS 1.0

typedef struct ws_journal {
    int open;
    ws_batchfile b;            /* appended to in batches */
    const char *path;
} ws_journal;

/* Start the journal at `path`, for the simulations with todo[i] set.
 * With resume, the journal at `path` and then the n_others at `others`
 * (journals this folder has from runs sharded otherwise), those that
 * exist, are read: each header must carry `fp` (else -1 with a one-line
 * error) and every record must check (else -1 naming the record); the
 * successful simulations among todo's are stored into s and todo[i]
 * cleared for them (failed ones are run again, others' are ignored),
 * *n_reused counts them. The journal is then rewritten atomically with the
 * header and the reused records, and opened for appending. */
int ws_journal_start(ws_journal *j, const char *path, const char *const *others,
                     size_t n_others, ws_sweep *s, const ws_sweep_fp *fp, int resume,
                     unsigned char *todo, size_t *n_reused, ws_error *err);
/* Take every record (successes and failures) of a shard's journal at
 * `path` into s, clearing todo[i] for each; the journal must carry `fp`
 * and every record must check; a simulation recorded twice (here or in
 * another journal merged before) is an error. *n_got counts them. */
int ws_journal_merge(const char *path, ws_sweep *s, const ws_sweep_fp *fp,
                     unsigned char *todo, size_t *n_got, ws_error *err);
/* Append simulation i's record (a failure too, with msg, NULL as for
 * ws_sweep_record_write: a shard's journal must hold every result), to
 * the current batch: handed to the kernel when WS_JOURNAL_BATCH bytes
 * wait, or when the last batch went WS_JOURNAL_SECONDS ago. */
int ws_journal_add(ws_journal *j, const ws_sweep *s, size_t i, const char *msg);
/* Hand over what waits: 0, or -1 on a write error. */
int ws_journal_flush(ws_journal *j);
void ws_journal_close(ws_journal *j);

#endif
