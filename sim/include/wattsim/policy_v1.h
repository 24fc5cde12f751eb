/*
 * The policy ABI version 1 declarations, exactly as wattsim released them
 * (0.1), for building a version-1 source unchanged against this kit:
 *
 *     #define WS_ABI_REQUEST 1
 *     #include <wattsim/policy.h>
 *
 * (policy.h then includes this file instead of the version-2 ones). The
 * result is a version-1 plugin: wattsim 2.x hosts load it and call it
 * through the version-1 signatures, without the call context, with the
 * same results. To use the context and the 2.x host calls, port the
 * source (docs/writing-a-policy.md, "Migrating from ABI 1").
 *
 * Frozen: everything below this comment is the released version-1 header,
 * byte for byte, and its one copy: the tests build their version-1
 * plugins against it as the wattsim/policy.h of 0.1 (tests/CMakeLists.txt
 * writes it out; test_abi pins its sha256).
 */
/*
 * wattsim policy ABI: what a batch-size optimizer (BSO) or power-limit
 * optimizer (PLO) plugin implements, and what the host gives it.
 *
 * This header is self-contained (C17, no other wattsim or third-party
 * header) so that a policy written outside the wattsim tree builds against
 * the installed copy alone:
 *
 *     cc -std=c17 -fPIC -shared -o mypolicy.so mypolicy.c
 *
 * Design, after two C classics:
 *  - GSL's algorithm types (gsl_rng_type, gsl_min_fminimizer_type): a policy
 *    is a const *descriptor* holding its name, the size of its state and its
 *    functions. The host allocates and zeroes `state_size` bytes per instance
 *    and passes that block to every call; the plugin never allocates the
 *    instance itself (it may allocate inside it and free in destroy).
 *  - SQLite's sqlite3_vfs: every struct a plugin or host fills opens with an
 *    `abi_version`. New members are only ever appended, never reordered or
 *    removed, so a host reads just the members that the version promises.
 *
 * A plugin is a shared object exporting one symbol, WS_PLUGIN_ENTRY_NAME,
 * a function returning a ws_plugin that lists its BSO and PLO descriptors.
 *
 * Calls return 0 on success. Any other value is a policy error: the host
 * stops the run and reports the policy and the call by name. Answers are
 * checked too (a batch size outside the job's set, a power limit not
 * measured for that batch size) and reported the same way.
 *
 * A plugin runs inside the host process with the user's rights; the host
 * only loads plugins from paths the user names or its own policy folder.
 */
#ifndef WATTSIM_POLICY_H
#define WATTSIM_POLICY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 1: the members below. */
#define WS_ABI_VERSION 1

/* The function a plugin exports, and its name for dlsym(). */
#define WS_PLUGIN_ENTRY_NAME "ws_plugin_entry"

/* PLO answer meaning "no power limit known for this batch size yet": the
 * host then profiles every power limit of the batch size (observe_profile)
 * and asks again. */
#define WS_PL_UNKNOWN 0

/* ------------------------------------------------------------------ job */

/*
 * One recurring job and its knob table, read-only for plugins. All arrays
 * are indexed by *batch-size index* i in [0, n_bs) or by *knob index*.
 *
 *  - bs[i]: the batch sizes B, strictly ascending.
 *  - The knobs (power limits) of bs[i] are k in [knob_start[i],
 *    knob_start[i+1]), power limits strictly ascending within the range.
 *    knob_pl[k] in W, knob_time[k] seconds per epoch, knob_power[k] average
 *    W. Energy per epoch is knob_time[k] * knob_power[k].
 *  - The recorded training runs of bs[i] are r in [run_start[i],
 *    run_start[i+1]); run_epoch[r] is the epoch at which the run first
 *    reached the target metric, or INFINITY if it never did.
 *  - cost = eta * energy + (1 - eta) * max_power * time.
 *
 * Oracles may read the whole table; a realistic policy should only use what
 * it observed.
 */
typedef struct ws_job {
    int abi_version;          /* of the host that filled this struct */
    const char *workload;     /* workload name, e.g. "librispeech" */
    const char *gpu;          /* GPU name, e.g. "v100" */
    double eta;               /* cost weight in [0, 1] */
    double beta;              /* early-stopping factor; INFINITY = off */
    double max_power;         /* MaxPower of the GPU, W */
    int max_epochs;           /* epoch cap of one run */
    int b0;                   /* default batch size, one of bs[] */
    int concurrent;           /* nonzero when submissions may overlap:
                                 observations may arrive for sizes the
                                 policy did not just predict */
    int n_bs;
    const int *bs;
    const int *knob_start;    /* n_bs + 1 entries */
    const int *knob_pl;
    const double *knob_time;
    const double *knob_power;
    const int *run_start;     /* n_bs + 1 entries */
    const double *run_epoch;
} ws_job;

/* ----------------------------------------------------------- parameters */

typedef enum ws_param_kind {
    WS_PARAM_INT = 1,         /* value.i */
    WS_PARAM_DOUBLE = 2,      /* value.d */
    WS_PARAM_BOOL = 3,        /* value.b, 0 or 1 */
    WS_PARAM_STRING = 4       /* value.s, owned by the host, valid until
                                 destroy */
} ws_param_kind;

typedef union ws_value {
    long i;
    double d;
    int b;
    const char *s;
} ws_value;

/*
 * One parameter a policy accepts. A descriptor's `params` is an array
 * terminated by an entry whose name is NULL. The host fills create()'s
 * `values` in the same order, with the user's value (from YAML or --set,
 * converted to `kind` and checked against [min, max] for numbers) or the
 * default. An unknown parameter name is a user error the host reports.
 */
typedef struct ws_param_spec {
    const char *name;
    ws_param_kind kind;
    ws_value def;             /* default */
    double min, max;          /* inclusive bounds for INT and DOUBLE */
    const char *help;         /* one line */
} ws_param_spec;

/* ----------------------------------------------------------------- host */

enum { WS_LOG_ERROR = 0, WS_LOG_WARN = 1, WS_LOG_INFO = 2, WS_LOG_DEBUG = 3 };

/*
 * Services the host hands each policy instance. Every instance has its own
 * random stream, seeded from the simulation seed and the instance's role, so
 * results are reproducible and independent of other policies' draws.
 */
typedef struct ws_host {
    int abi_version;
    void *ctx;                                        /* pass to the calls */
    double (*uniform)(void *ctx);                     /* in [0, 1) */
    unsigned long (*uniform_int)(void *ctx, unsigned long n); /* [0, n) */
    double (*gaussian)(void *ctx, double sd);         /* N(0, sd^2) */
    void (*log)(void *ctx, int level, const char *msg);
} ws_host;

/* ------------------------------------------------------- BSO descriptor */

typedef struct ws_bso_type {
    int abi_version;          /* WS_ABI_VERSION the plugin was built with */
    const char *name;         /* unique among loaded BSOs, [a-z0-9_-] */
    const char *summary;      /* one line for `wattsim list policies` */
    size_t state_size;        /* bytes the host allocates (zeroed) */
    const ws_param_spec *params;   /* may be NULL: no parameters */

    /* Required. */
    int (*create)(void *state, const ws_value *params, const ws_host *host);
    void (*destroy)(void *state);
    /* The job and its batch sizes (job->bs). Called once, before predict. */
    int (*register_job)(void *state, const ws_job *job);
    /* The batch size for the next run: one of job->bs. */
    int (*predict)(void *state, const ws_job *job, int *bs);
    /* The outcome of a run at `bs`: its cost and whether it reached the
     * target. A run the host did not start because even one epoch would
     * exceed the early-stopping budget is observed with a large cost and
     * reached = 0. */
    int (*observe)(void *state, const ws_job *job, int bs, double cost,
                   int reached);
} ws_bso_type;

/* ------------------------------------------------------- PLO descriptor */

typedef struct ws_plo_type {
    int abi_version;
    const char *name;
    const char *summary;
    size_t state_size;
    const ws_param_spec *params;

    /* Required. */
    int (*create)(void *state, const ws_value *params, const ws_host *host);
    void (*destroy)(void *state);
    /* The power limit for `bs`, one measured for that batch size, or
     * WS_PL_UNKNOWN to have the host profile it just in time. */
    int (*predict)(void *state, const ws_job *job, int bs, int *pl);
    /* Profiling result: the cost of one epoch at (bs, pl), reported for
     * every power limit of bs, highest first, after a WS_PL_UNKNOWN. */
    int (*observe_profile)(void *state, const ws_job *job, int bs, int pl,
                           double epoch_cost);

    /* Optional (may be NULL). */
    int (*register_job)(void *state, const ws_job *job);
    /* The outcome of a whole run at (bs, pl). */
    int (*observe_run)(void *state, const ws_job *job, int bs, int pl,
                       double cost, int reached);
} ws_plo_type;

/* --------------------------------------------------------------- plugin */

typedef struct ws_plugin {
    int abi_version;
    const char *name;                  /* e.g. "zeus" */
    const ws_bso_type *const *bso;     /* NULL-terminated; NULL = none */
    const ws_plo_type *const *plo;     /* NULL-terminated; NULL = none */
} ws_plugin;

typedef const ws_plugin *(*ws_plugin_entry_fn)(void);

/* What a plugin defines. Declared with default visibility so that it is
 * exported even when the plugin builds with -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define WS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define WS_PLUGIN_EXPORT
#endif
WS_PLUGIN_EXPORT const ws_plugin *ws_plugin_entry(void);

/* Small helpers for plugins (static inline: no link dependency). */

/* Index of batch size `b` in job->bs, or -1. */
static inline int ws_job_bs_index(const ws_job *job, int b)
{
    int lo = 0, hi = job->n_bs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (job->bs[mid] == b) return mid;
        if (job->bs[mid] < b) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* Highest power limit measured for batch-size index i. */
static inline int ws_job_max_pl(const ws_job *job, int i)
{
    return job->knob_pl[job->knob_start[i + 1] - 1];
}

/* Cost of one epoch at knob k as the host's profiler reports it:
 * (eta * power + (1 - eta) * maxPL(bs)) * time. */
static inline double ws_job_epoch_cost(const ws_job *job, int i, int k)
{
    return (job->eta * job->knob_power[k]
            + (1.0 - job->eta) * (double)ws_job_max_pl(job, i))
           * job->knob_time[k];
}

#ifdef __cplusplus
}
#endif
#endif /* WATTSIM_POLICY_H */
