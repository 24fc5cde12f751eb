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
 * thread count, the order in which threads pick simulations, isolation
 * (--isolate) or resumption from a journal (--resume).
 *
 * Keep going: a simulation that fails (a policy error, a run that never
 * reaches the target, a crashed or timed-out policy process) is recorded
 * as failed with its one-line message and the sweep goes on; each cell is
 * summarised over its successful seeds. Only set-up errors (config, policy
 * names and parameters, traces) stop ws_sweep_run.
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
    char *bso, *plo;                 /* names as given (built-in, .so or
                                        FILE.so:NAME), without parameters */
    char *label;                     /* "bso+plo" by registered names, with
                                        the parameters given in --policies
                                        ("egreedy{epsilon=0.3}+jit"); the
                                        names as given when two builds of a
                                        policy would share a label */
    ws_policy_ref bso_ref, plo_ref;  /* parameters given in --policies */
    /* Provenance, set by the sweep: the resolved parameters
     * (ws_params_format) and the sha256 of each policy's .so. */
    char *bso_params, *plo_params;
    char bso_sha256[65], plo_sha256[65];
    /* The same with the registered names and the policies' files, as the
     * tables print a pair (ws_table_identity; sweep.md): set by the sweep,
     * NULL in a pair as parsed (ws_policy_pairs_parse). */
    ws_study_pair *identity;
} ws_policy_pair;

/* "zeus:jit,default:default" -> pairs. Either side may carry parameters,
 * NAME{KEY=VALUE,...} (e.g. "zeus{window=10}:jit"), and a policy may appear
 * several times with different parameters or from different files. */
int ws_policy_pairs_parse(const char *s, ws_policy_pair **out, size_t *n,
                          ws_error *err);
void ws_policy_pairs_free(ws_policy_pair *p, size_t n);
/* The config's pairs (ws_run_config_n_pairs), for a sweep without
 * --policies: a `policies:` list or bso/plo lists give each pair its
 * parameters (and label) as --policies would; a config with one pair gives
 * its names only (its parameters apply through cfg, see ws_sweep_run_opts).
 * In study_pairs.c. */
int ws_policy_pairs_from_config(const ws_run_config *cfg, ws_policy_pair **out, size_t *n,
                                ws_error *err);
/* The config's own plugin files and py: classes (every policy its file
 * names): allowed by --allow-plugins/--allow-python? (wattsim/plugin.h
 * ws_plugin_config_check). 0, or -1 with err naming the first refused.
 * In study_pairs.c. */
int ws_policy_config_allowed(const ws_run_config *cfg, ws_error *err);

/* One simulation of the plan, aggregated as it runs: its totals and its
 * steady state, never its recurrences (except the per-recurrence cost that
 * the learning curves need, kept only when asked for). A failed one has
 * all numbers zero (so that what a policy did before failing never leaks
 * into a summary); its message is kept only where the summaries show it,
 * as its cell's first failure (ws_sweep_cell_error). */
typedef struct ws_sweep_sim {
    double energy_j, time_s, cost;           /* totals over recurrences */
    double steady_energy, steady_time;       /* mean per recurrence over the
                                                steady window (ws_steady_count) */
    int final_bs, final_pl;                  /* knob of the last run that reached */
    double *rec_cost;         /* per recurrence, all tries; NULL unless curves */
    int failed;
    double co2_g, usd;        /* totals, with a carbon / price series */
} ws_sweep_sim;

/* Where a sweep keeps its simulations (sweep_store.c): in memory, or past
 * a number of them in a temporary file; read them with a cursor. */
typedef struct ws_sweep_store ws_sweep_store;

typedef struct ws_sweep {
    ws_policy_pair *pairs;   size_t n_pairs;
    size_t ref_default, ref_oracle;             /* pair indices */
    size_t n_gpus, n_work, n_etas, n_betas, n_seeds;
    char **gpus, **work;                         /* names */
    double *etas, *betas;
    unsigned long *seeds;
    ws_job_table *jobs;                          /* [gpu * n_work + work] */
    long *recurrences;                           /* per job, like jobs */
    int curves;                                  /* sims keep rec_cost */
    ws_sweep_store *store;   size_t n_sims;      /* plan order, seed fastest */
    size_t n_failed;                             /* simulations that failed */
    size_t n_reused;                             /* taken from the journal */
    size_t n_run;                                /* run by this process */
    const ws_whatif *whatif;                     /* env's what-ifs, or NULL */
} ws_sweep;

/* The plan (sweep_plan.c, which calls nothing above it): the index of a
 * simulation; the cell (all but seed) is index / n_seeds. */
size_t ws_sweep_index(const ws_sweep *s, size_t pair, size_t gpu, size_t work,
                      size_t eta, size_t beta, size_t seed);
/* Its axis indices (pair, gpu, workload, eta, beta, seed): the inverse. */
void ws_sweep_axes(const ws_sweep *s, size_t i, size_t ax[6]);

/* --keep-history: simulation i's runs (every try of every recurrence, as
 * far as it got), its totals (where it stopped, when it failed) and its
 * one-line error (NULL: it succeeded). */
typedef void (*ws_sweep_history_fn)(void *ctx, const ws_sweep *s, size_t i,
                                    const ws_run_record *runs, size_t n,
                                    const ws_sim_totals *tot, const char *error);

/* A sweep's fingerprint: `all` (sha256) covers everything that decides the
 * results; the parts hash the same bytes by what they are ("the eta
 * values", "policy zeus's plugin", "the traces of v100/squad ..."), each
 * with a readable value ("sha256 HEX", "0.25,0.5"), so that a journal's
 * header (which carries both), a shard or an MPI rank can say what
 * differs (fingerprint.c). */
typedef struct ws_sweep_fp {
    unsigned char all[32];
    size_t n;
    struct ws_sweep_fp_part {
        char what[128];
        unsigned char sha[32];
        char value[192];
    } *part;
} ws_sweep_fp;
void ws_sweep_fp_free(ws_sweep_fp *fp);

/* A step of a sweep's set-up that others may have to agree on (MPI
 * ranks): WS_SWEEP_PLANNED once the plan and its fingerprint are known,
 * before the journal is touched; WS_SWEEP_JOURNALED once the journal is
 * started (resumed), before anything runs. Returns 0 to go on, or -1 with
 * err set to stop. */
enum { WS_SWEEP_PLANNED = 1, WS_SWEEP_JOURNALED = 2 };
typedef int (*ws_sweep_step_fn)(void *ctx, int step, const ws_sweep_fp *fp, ws_error *err);

typedef struct ws_sweep_opts {
    int threads;            /* >= 1: worker threads, or children at a time */
    int isolate;            /* run each cell in a forked child (isolate.c) */
    double cell_timeout;    /* seconds a child may take; 0 = no limit */
    const char *journal;    /* append each finished simulation here; NULL = none */
    int resume;             /* reuse the journal's successful simulations */
    int curves;             /* keep each simulation's cost per recurrence
                               (ws_sweep_write_curves needs it) */
    unsigned long shard_k, shard_n;  /* n > 0: run only the simulations i with
                                        i % n == k (a job array's task k) */
    const char *const *merge;        /* n_merge > 0: run nothing; take every
                                        result from these shard journals */
    size_t n_merge;
    /* Past spill_sims simulations (0: WS_SPILL_SIMS) each one's numbers go
     * to an unlinked temporary file in spill_dir (NULL: $TMPDIR, else
     * /tmp), 64 bytes each, instead of memory (88 bytes each): memory does
     * not grow with the seeds. Outputs are the same bytes either way. */
    size_t spill_sims;
    const char *spill_dir;
    /* Not NULL: called for every simulation, in plan order whatever the
     * threads (a simulation's runs wait in memory until those before it
     * are out), one call at a time. Not with isolate, shards, merge or
     * resume (ws_sweep_run_opts refuses). */
    ws_sweep_history_fn history;
    void *history_ctx;
    /* With resume: journals of the same plan sharded otherwise (an
     * interrupted run with another number of MPI ranks), read after
     * `journal` for the simulations this run does. */
    const char *const *old_journals;
    size_t n_old_journals;
    /* Not NULL: called at each step of the set-up (ws_sweep_step_fn). */
    ws_sweep_step_fn step;
    void *step_ctx;
    /* With isolate: bytes of address space a cell's process may add to what
     * it inherits (RLIMIT_AS); 0 = no limit. */
    size_t cell_memory;
    /* A library caller's hook (wattsim/api.h); NULL for the CLI. Called on
     * the calling thread after each simulation and, while they run, at
     * least every 0.1 s, with the simulations done and to do; nonzero
     * cancels the rest (ws_sweep_run_opts then fails with "cancelled").
     * With a hook nothing installs signal handlers or exits the process
     * (isolate), and a Python policy is refused in forked children. */
    int (*tick)(void *ctx, size_t done, size_t total);
    void *tick_ctx;
} ws_sweep_opts;

/* A sweep's process options as typed (the CLI's flags, the library's
 * keyword options), into so. Each is 0, or -1 with err the usage message
 * ("--threads 'X' is not an integer in 1..256"). In sweep_opts.c. */
int ws_sweep_parse_threads(const char *s, ws_sweep_opts *so, ws_error *err);
int ws_sweep_parse_cell_timeout(const char *s, ws_sweep_opts *so, ws_error *err);
int ws_sweep_parse_cell_memory(const char *s, ws_sweep_opts *so, ws_error *err);
/* The default of --threads: the online CPUs, at least 1. */
int ws_sweep_default_threads(void);
/* Once the options are read: a cell limit needs isolate (only a child
 * process can be limited). 0, or -1 with err. */
int ws_sweep_check_limits(const ws_sweep_opts *so, ws_error *err);

#define WS_SPILL_SIMS ((size_t)1 << 18)

/* Reading a sweep's simulations: through a cursor, which holds up to
 * `chunk` (at most 4096) of them at a time when they are in a file and
 * none when they are in memory. The pointer ws_sweep_sim_at returns is
 * valid until the next call on the cursor. A read error (of the spill
 * file) gives a failed simulation and is kept for ws_sweep_io_error. */
typedef struct ws_sweep_cursor {
    const ws_sweep *s;
    size_t first, n, cap;          /* buf holds simulations [first, first + n) */
    ws_sweep_sim *buf;
} ws_sweep_cursor;
void ws_sweep_cursor_init(ws_sweep_cursor *c, const ws_sweep *s, size_t chunk);
const ws_sweep_sim *ws_sweep_sim_at(ws_sweep_cursor *c, size_t i);
void ws_sweep_cursor_free(ws_sweep_cursor *c);
/* Simulation i into *out (one read). */
void ws_sweep_sim_get(const ws_sweep *s, size_t i, ws_sweep_sim *out);
/* The message of a cell's first failed seed (in seed order), "" if none. */
const char *ws_sweep_cell_error(const ws_sweep *s, size_t cell);
/* 0, or -1 with err set to the first read or write error of the spill
 * file (one line naming it): every output written since is unreliable. */
int ws_sweep_io_error(const ws_sweep *s, ws_error *err);

/* Run the sweep. `pairs` are copied; default:default and oracle:oracle are
 * appended when missing. The config's policy params apply to a pair whose
 * names equal the config's bso / plo. Returns -1 only for set-up errors
 * (nothing run, no journal written) and journal I/O errors, -2 for an I/O
 * error of the spill file; failed simulations are counted in
 * out->n_failed and the call returns 0. */
int ws_sweep_run_opts(const ws_run_config *cfg, const ws_study_env *env,
                      const ws_policy_pair *pairs, size_t n_pairs,
                      const ws_sweep_opts *opts, ws_sweep *out, ws_error *err);
/* The same with only a thread count (threads >= 1), curves kept. */
int ws_sweep_run(const ws_run_config *cfg, const ws_study_env *env,
                 const ws_policy_pair *pairs, size_t n_pairs, int threads,
                 ws_sweep *out, ws_error *err);
void ws_sweep_free(ws_sweep *s);

/* MPI (built with -DWATTSIM_MPI=ON, WS_HAVE_MPI defined): whether this
 * process is one of several ranks (after MPI_Init), and its rank and size;
 * whether every rank passes ok (collective); rank 0 gathering and checking
 * every rank's results of a sweep each rank ran with shard rank/size
 * (collective; -1 with err on rank 0, or everywhere when a rank could not
 * send). */
int ws_mpi_active(int *rank, int *size);
int ws_mpi_all_ok(int ok);
/* Collective: 1 when every rank passes ok; else 0 and err holds the first
 * failing rank's message ("rank N: ..." for N > 0), for rank 0 to print. */
int ws_mpi_agree(int ok, ws_error *err);
int ws_sweep_gather(ws_sweep *s, int rank, int size, ws_error *err);
/* Collective: every rank's fingerprint against rank 0's. 0 when they are
 * the same; -1 on a rank whose plan differs, err naming the first part
 * that does ("its plan differs from rank 0's in the eta values: ..."),
 * for ws_mpi_agree to pass on. */
int ws_mpi_same_plan(const ws_sweep_fp *fp, ws_error *err);
/* Point to point, for a stream to rank 0 in an order both sides know
 * (groups replay): send len (< 2 GiB) bytes to rank 0, tagged ok or
 * failed, returning once rank 0 has begun to receive them (so that no
 * message waits in rank 0's memory); on rank 0, the next message from
 * rank `from` into *buf (grown as needed: *cap bytes; NUL-terminated),
 * its length in *len; returns its ok. */
void ws_mpi_send0(const void *buf, size_t len, int ok);
int ws_mpi_recv_from(int from, char **buf, size_t *cap, size_t *len);

/* Recurrences of simulation i (all of a job's simulations have as many). */
static inline long ws_sweep_recurrences(const ws_sweep *s, size_t i)
{
    size_t per_job = s->n_etas * s->n_betas * s->n_seeds;
    return s->recurrences[(i / per_job) % (s->n_gpus * s->n_work)];
}

/* The most frequent final knob of a cell's successful seeds (ties: the one
 * seen first in seed order); *n its count, 0 (and bs = pl = 0) when none. */
void ws_sweep_top_knob(const ws_sweep *s, size_t cell, int *bs, int *pl, size_t *n);

/* A final knob and how many of a cell's successful seeds ended there
 * (first: the first such seed). */
typedef struct ws_knob_count { int bs, pl; size_t n, first; } ws_knob_count;
/* Room ws_sweep_final_knobs needs: the most knobs of any job. */
size_t ws_sweep_knob_room(const ws_sweep *s);
/* The distinct final knobs of a cell's successful seeds into k, by count
 * (descending), then knob; returns how many. */
size_t ws_sweep_final_knobs(const ws_sweep *s, size_t cell, ws_knob_count *k);

/* "zeus+jit v100/squad eta 0.5 beta 2": a cell in messages. */
void ws_sweep_cell_name(const ws_sweep *s, size_t cell, char *buf, size_t n);

/* Mean and 95 % CI (t distribution, n - 1 degrees of freedom) of x[0..n);
 * lo = hi = NAN when n < 2. */
void ws_ci95(const double *x, size_t n, double *mean, double *lo, double *hi);
/* Its bounds from the mean and the sum of squared deviations from it of n
 * values, for callers that make the two passes over their own data. */
void ws_ci95_bounds(double mean, double ss, size_t n, double *lo, double *hi);

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
    size_t seeds_ok, seeds_failed;
    const char *error;                       /* first failure's, "" if none */
    /* Over the seeds that succeeded (NAN when none did). */
    ws_stat energy, time, cost;              /* totals over recurrences */
    ws_stat steady_energy, steady_time;      /* per recurrence, steady state */
    /* cost - oracle's cost, over the seeds where both succeeded */
    ws_stat regret;
    ws_stat co2, usd;                        /* totals (0 without a series) */
    /* 1 - ours / default's, of the sums over the seeds where both the
     * policy and default succeeded (NAN when there is none) */
    double save_energy, save_time, save_cost;
    double save_steady_energy, save_steady_time;
} ws_sweep_summary;

static inline size_t ws_sweep_n_cells(const ws_sweep *s)
{
    return s->n_seeds ? s->n_sims / s->n_seeds : 0;
}
void ws_sweep_summarise(const ws_sweep *s, size_t cell, ws_sweep_summary *out);

/* --keep-history's history CSV as a sweep's simulations end (a
 * ws_sweep_history_fn over a ws_sweep_history, in sweep_report.c): its
 * header written by ws_report_history_header_status first, the rows as
 * `run --keep-history` writes them, pairs labelled as in the summaries.
 * `oom` set when the labels could not be allocated; ws_sweep_history_free
 * frees them. */
typedef struct ws_sweep_history {
    FILE *f;
    const ws_whatif *wi;
    ws_study_pair *pairs;   /* labels; NULL: not yet */
    int oom;
} ws_sweep_history;
void ws_sweep_history_write(void *ctx, const ws_sweep *s, size_t i, const ws_run_record *runs,
                            size_t n, const ws_sim_totals *tot, const char *error);
void ws_sweep_history_free(ws_sweep_history *h);

/* Summaries, one row/object per cell in plan order. */
void ws_sweep_write_csv(FILE *f, const ws_sweep *s);
void ws_sweep_write_json(FILE *f, const ws_sweep *s);
/* Learning curves: per cell and recurrence, mean and CI over seeds of the
 * cumulative cost and of the regret versus oracle (needs s->curves). */
void ws_sweep_write_curves(FILE *f, const ws_sweep *s);
/* One recurrence r of those curves for the cell starting at simulation
 * `base` (oracle's cell at `oref`): cum and oc (2 * n_seeds each, the first
 * n_seeds zeroed before r = 0) carry the running sums; cost is over the
 * seeds that succeeded, regret over those where oracle succeeded too. */
void ws_sweep_curve_step(const ws_sweep *s, size_t base, size_t oref, long r, double *cum,
                         double *oc, ws_stat *cost, ws_stat *regret);

#endif
