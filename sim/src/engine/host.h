/*
 * The policy host's instances and its per-try calls, inline (private to
 * the engine layer), with host.c (their out-of-line parts). plugin.c,
 * on top, owns instances (create, free, the host's draws and log) and
 * exports every call as a function (wattsim/plugin.h);
 * the engine's loop calls the inline ones below instead, because every
 * try of every simulation makes a BSO predict and observe and a PLO
 * predict: inlined, they cost no call, no stack frame and no spilling of
 * the loop's state, about a fifth of the engine's own work per try.
 *
 * Kept short for that:
 *  - an answer is mapped to its index through a small memo (a batch size's
 *    index by a hash of the size, a power limit's knob per batch-size
 *    index) that is checked against the job's table before it is trusted:
 *    a stale or colliding entry only costs the search, never a wrong index,
 *    and an answer outside the table is still found missing by the search;
 *  - error reporting is out of line (cold, noinline, in host.c), and a
 *    missing optional call is a test.
 */
#ifndef WATTSIM_ENGINE_HOST_H
#define WATTSIM_ENGINE_HOST_H

#include <math.h>

#include "wattsim/plugin.h"
#include "wattsim/rng.h"
#include "guard.h"

typedef struct host_ctx {
    ws_rng rng;                /* the instance's stream (see ws_host),
                                  seeded at its first draw (plugin.c) */
    int rng_ready;             /* rng is seeded */
    unsigned rng_role;         /* how it is seeded (plugin.c) */
    unsigned long n_gaussian, n_uniform;   /* normals and bounded integers
                                              drawn (for the benchmark) */
    const char *who;           /* "bso zeus" */
    char where[128];           /* the cell, set by ws_policy_log_where */
    unsigned long seed;
    const ws_ctx *call;        /* the context of the call in progress */
    char last_error[256];      /* last WS_LOG_ERROR message, for the error
                                  line of a failing call */
    /* What ws_host.forecast reads (ws_policy_set_forecast); NULL: none. */
    const struct ws_series *fc_carbon, *fc_price;
    double fc_origin;          /* Unix s of the clock's 0 */
} host_ctx;

typedef struct instance {
    host_ctx hc;
    ws_host host;
    void *state;               /* in the same block, after the instance */
    char who[80];
    int created;
    int guarded;               /* holds the stdout guard (stdout_enter) */
} instance;

/* The version-1 signatures, for calling plugins built against them. */
typedef int (*v1_register_fn)(void *, const ws_job *);
typedef int (*v1_bso_predict_fn)(void *, const ws_job *, int *);
typedef int (*v1_bso_observe_fn)(void *, const ws_job *, int, double, int);
typedef int (*v1_plo_predict_fn)(void *, const ws_job *, int, int *);
typedef int (*v1_plo_profile_fn)(void *, const ws_job *, int, int, double);
typedef int (*v1_plo_run_fn)(void *, const ws_job *, int, int, double, int);
#define V1(fn_type, f) ((fn_type)(void (*)(void))(f))

/* The memos of answer -> index (see above). Entries are only guesses,
 * checked before use; zero-filled is a valid start. */
#define BS_MEMO_BITS 5
#define KNOB_MEMO 64u           /* per batch-size index modulo this */

struct ws_bso {
    instance in;
    const ws_bso_type *t;
    int v1;                    /* call through the version-1 signatures */
    int bs_memo[1 << BS_MEMO_BITS];    /* batch size -> index, by hash */
};

struct ws_plo {
    instance in;
    const ws_plo_type *t;
    int v1;
    int knob_memo[KNOB_MEMO];  /* batch-size index -> knob last answered */
};

/* The error lines, out of line (host.c); they return -1, which the
 * inline callers return themselves (so the compiler sees the -1). */
int ws_host_failed(instance *in, const char *call, int rc, ws_error *err)
    __attribute__((cold, noinline));
int ws_host_bad_bs(const ws_bso *b, const ws_job *job, int bs, ws_error *err)
    __attribute__((cold, noinline));
int ws_host_bad_pl(const ws_plo *p, const ws_job *job, int i, int pl, ws_error *err)
    __attribute__((cold, noinline));
/* The PLO's observe_run when it has one (host.c): out of line, so that
 * a PLO without it (jit) costs the loop a test. */
int ws_host_plo_observe_run(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs,
                            int pl, double cost, int reached, ws_error *err);

static inline int host_bso_predict(ws_bso *b, const ws_job *job, const ws_ctx *ctx,
                                   int *bs_index, ws_error *err)
{
    int bs = 0;
    ws_guard_call_enter(b->in.who, "predict");
    b->in.hc.call = ctx;
    int rc = b->v1 ? V1(v1_bso_predict_fn, b->t->predict)(b->in.state, job, &bs)
                   : b->t->predict(b->in.state, job, ctx, &bs);
    ws_guard_call_leave();
    if (rc) { ws_host_failed(&b->in, "predict", rc, err); return -1; }
    /* The memo's guess for bs, checked; else the search (and the memo
     * learns its answer). */
    const unsigned slot = ((unsigned)bs * 0x9E3779B1u) >> (32 - BS_MEMO_BITS);
    int i = b->bs_memo[slot];
    if ((unsigned)i >= (unsigned)job->n_bs || job->bs[i] != bs) {
        if ((i = ws_job_bs_index(job, bs)) < 0) { ws_host_bad_bs(b, job, bs, err); return -1; }
        b->bs_memo[slot] = i;
    }
    *bs_index = i;
    return 0;
}

static inline int host_bso_observe(ws_bso *b, const ws_job *job, const ws_ctx *ctx,
                                   int bs, double cost, int reached, ws_error *err)
{
    ws_guard_call_enter(b->in.who, "observe");
    b->in.hc.call = ctx;
    int rc = b->v1 ? V1(v1_bso_observe_fn, b->t->observe)(b->in.state, job, bs, cost, reached)
                   : b->t->observe(b->in.state, job, ctx, bs, cost, reached);
    ws_guard_call_leave();
    return rc ? ws_host_failed(&b->in, "observe", rc, err) : 0;
}

/* *knob = the knob of the limit the PLO predicts for batch-size index i,
 * or -1 when it has none yet (WS_PL_UNKNOWN). */
static inline int host_plo_predict(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int i,
                                   int *knob, ws_error *err)
{
    int pl = -1;
    const int bs = job->bs[i];
    ws_guard_call_enter(p->in.who, "predict");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_plo_predict_fn, p->t->predict)(p->in.state, job, bs, &pl)
                   : p->t->predict(p->in.state, job, ctx, bs, &pl);
    ws_guard_call_leave();
    if (rc) { ws_host_failed(&p->in, "predict", rc, err); return -1; }
    if (pl == WS_PL_UNKNOWN) { *knob = -1; return 0; }
    /* The knob last answered for i, checked; else the search. */
    const int k0 = job->knob_start[i], k1 = job->knob_start[i + 1];
    int *const memo = &p->knob_memo[(unsigned)i % KNOB_MEMO];
    int k = *memo;
    if (k < k0 || k >= k1 || job->knob_pl[k] != pl) {
        for (k = k0; k < k1 && job->knob_pl[k] != pl; k++) {}
        if (k == k1) { ws_host_bad_pl(p, job, i, pl, err); return -1; }
        *memo = k;
    }
    *knob = k;
    return 0;
}

static inline int host_plo_observe_run(ws_plo *p, const ws_job *job, const ws_ctx *ctx,
                                       int bs, int pl, double cost, int reached,
                                       ws_error *err)
{
    if (!p->t->observe_run) return 0;
    return ws_host_plo_observe_run(p, job, ctx, bs, pl, cost, reached, err);
}

/* A try's run fields, unknown until the run is drawn. */
static inline void host_ctx_clear_run(ws_ctx *c)
{
    c->run_started = c->run_epochs = c->run_early_stopped = 0;
    c->run_epoch_budget = c->run_time_s = c->run_energy_j = NAN;
    c->profile_time_s = c->profile_power_w = NAN;
}

#endif
