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
 * A plugin is a shared object exporting one symbol, WS_PLUGIN_ENTRY_NAME
 * (ws_plugin_entry_v2), a function that receives the host's ABI version and
 * returns a ws_plugin listing its BSO and PLO descriptors.
 *
 * Calls return 0 on success. Any other value is a policy error: the host
 * stops the run and reports the policy and the call by name. Answers are
 * checked too (a batch size outside the job's set, a power limit not
 * measured for that batch size) and reported the same way.
 *
 * A plugin runs inside the host process with the user's rights; the host
 * only loads plugins from paths the user names or its own policy folder.
 */

/*
 * Which ABI a source is written against. Version 2.0 changed the
 * signature of every callback that gets the job (the call context became
 * the third argument), so a version-1 source does not compile against the
 * version-2 declarations: it fails on its definition of ws_plugin_entry,
 * version 1's entry point, which the declaration below names as the
 * opt-in. With
 *
 *     #define WS_ABI_REQUEST 1
 *
 * before the #include, this header gives the version-1 declarations
 * instead (wattsim/policy_v1.h, installed with it) and the source builds,
 * unchanged, as a version-1 plugin that 2.x hosts keep loading. Undefined,
 * or 2: the declarations below. The rule since 2.0 (SQLite's): an existing
 * signature or member never changes again; new calls and members are
 * appended, and a plugin tests the version before it uses them.
 */
#if defined(WS_ABI_REQUEST) && WS_ABI_REQUEST == 1
#include "policy_v1.h"
#elif defined(WS_ABI_REQUEST) && WS_ABI_REQUEST != 2
#error "WS_ABI_REQUEST: define it as 1 (the version-1 declarations) or 2, or leave it undefined"
#elif !defined(WATTSIM_POLICY_H)
#define WATTSIM_POLICY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Versions. An ABI version is MAJOR * 100 + MINOR (2.0 is 200); the
 * version-1 ABI wrote plain 1, which means 1.0. Within a major version,
 * members are only appended, so a plugin built against a newer minor
 * version loads in an older host as long as it does not need anything
 * newer (it says so in ws_plugin.requires_version, and it can adapt to the
 * host's version, which the host passes to the entry point). A host of
 * major version 2 also loads version-1 plugins and calls them through the
 * version-1 signatures, with the same results.
 *
 * Version 2.0 added: the call context (ws_ctx) as the third argument of
 * every callback that gets the job; the entry point
 * ws_plugin_entry_v2(host_version); ws_plugin.requires_version; the
 * descriptors' param_spec_size and value_size.
 *
 * Version 2.1 added: the host's draws are numpy's Generator, draw for draw
 * (every instance's stream is seeded as ws_host describes); ws_host.normal,
 * .choice and .permutation; ws_job.profile_power, .profile_time,
 * .first_epoch_energy and .first_epoch_time (what just-in-time profiling
 * reports and charges, computed as the published simulator does), which
 * ws_job_epoch_cost uses. Read the ws_job members only when
 * job->abi_version >= WS_ABI_VERSION_OF(2, 1) and they are not NULL, the
 * ws_host ones when host->abi_version >= WS_ABI_VERSION_OF(2, 1).
 *
 * Version 2.2 added: ws_job.gpus_per_job, the number of GPUs a job's
 * knob_power rows are for (a data-parallel job's power is the sum over
 * its GPUs; knob_pl stays one GPU's limit), and max_power became the
 * job's: the GPU's largest limit times gpus_per_job. ws_job_epoch_cost
 * weighs time by maxPL(bs) * gpus_per_job; a plugin built against 2.1
 * computes it with one GPU's limit (exact for a one-GPU job; rebuild it
 * for jobs of more GPUs). Read the count through ws_job_gpus(job).
 *
 * Version 2.3 added: the schedule in the call context (ws_ctx.now_s,
 * .due_s, .every_s, .defer_s: the simulated clock) and the series as a
 * perfect forecast on that clock (ws_host.forecast, .forecast_next), the
 * simulation's seed (ws_host.seed), and the workload's definition
 * (ws_job.dataset, .network, .optimizer, .target_metric). Read them when
 * WS_CTX_HAS(ctx, now_s), host->abi_version and job->abi_version >=
 * WS_ABI_VERSION_OF(2, 3); a 2.2 plugin is called exactly as before.
 */
#define WS_ABI_MAJOR 2
#define WS_ABI_MINOR 3
#define WS_ABI_VERSION_OF(major, minor) ((major) * 100 + (minor))
#define WS_ABI_VERSION WS_ABI_VERSION_OF(WS_ABI_MAJOR, WS_ABI_MINOR)

/* The function a plugin exports, and its name for dlsym(). A host looks
 * for the version-2 entry first, then for the version-1 one
 * (`const ws_plugin *ws_plugin_entry(void)`). */
#define WS_PLUGIN_ENTRY_NAME "ws_plugin_entry_v2"
#define WS_PLUGIN_ENTRY_V1_NAME "ws_plugin_entry"

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
 *  - cost = eta * energy + (1 - eta) * max_power * time, max_power the
 *    job's: the largest limit of the GPU times gpus_per_job (2.2).
 *  - Version 2.1 (may be NULL in a job a program built by hand): what the
 *    host's just-in-time profiling of bs[i] reports and charges, from the
 *    trace table joined as the published simulator joins it (every power
 *    row once per recorded run of bs[i]): profile_power[k] and
 *    profile_time[k] are pandas' group means of knob k's rows (Kahan
 *    sums: not always bit for bit knob_power[k] and knob_time[k]);
 *    first_epoch_energy[i] and first_epoch_time[i] are the first epoch of
 *    a run that profiled, numpy's means of energy per epoch and time over
 *    all of bs[i]'s rows.
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
    double max_power;         /* MaxPower of the job, W: the GPU's largest
                                 limit x gpus_per_job (one GPU's before 2.2) */
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

    /* Version 2.1 (see above). */
    const double *profile_power;       /* per knob, W */
    const double *profile_time;        /* per knob, s */
    const double *first_epoch_energy;  /* per batch-size index, J */
    const double *first_epoch_time;    /* per batch-size index, s */

    /* Version 2.2: GPUs the job runs on (knob_power sums them; knob_pl is
     * one GPU's limit). Read it through ws_job_gpus(). */
    int gpus_per_job;

    /* Version 2.3: the workload's definition (the catalogue's entry or
     * the inline job:), the train and power traces' columns it selects:
     * what Zeus's Job carries. NULL (strings) or NAN (target_metric) where
     * the host does not know them (a generated job, a job a program built
     * by hand). The host keeps the strings alive as long as the job. Read
     * them when job->abi_version >= WS_ABI_VERSION_OF(2, 3). */
    const char *dataset;      /* e.g. "librispeech" */
    const char *network;      /* e.g. "deepspeech2" */
    const char *optimizer;    /* e.g. "adamw" */
    double target_metric;     /* the accuracy a run must reach */
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
 * Names are unique; a number's bounds are not NaN, min <= max and the
 * default lies within them: the host refuses a descriptor otherwise.
 *
 * Both structs may grow in a later minor version: the descriptor records
 * the sizes it was built with (param_spec_size, value_size), and the host
 * indexes the arrays with those, reading only the members it knows.
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

/* Which series ws_host.forecast reads (2.3). */
enum { WS_FORECAST_CARBON = 1,   /* carbon intensity, gCO2eq/kWh */
       WS_FORECAST_PRICE = 2 };  /* electricity price, $/kWh */

/*
 * Services the host hands each policy instance. Every instance has its own
 * random stream, numpy's Generator (PCG64) seeded from the simulation's
 * seed, so results are reproducible and independent of other policies'
 * draws. As the published Zeus simulator seeds them: a BSO's stream is
 * np.random.default_rng(seed), the same as the simulation's own (a
 * separate generator with the same start); a PLO's is
 * Generator(PCG64(SeedSequence(seed, spawn_key=(2,)))). The calls are
 * numpy's, draw for draw (rng being that Generator):
 *   uniform()          rng.random()
 *   uniform_int(n)     rng.integers(n) for n >= 1 (n = 1 draws nothing);
 *                      0 for n = 0, without a draw
 *   gaussian(sd)       rng.normal(0.0, sd)
 *   normal(loc, sd)    rng.normal(loc, sd), drawn also when sd is 0 (2.1)
 *   choice(n, k, out)  rng.choice(n, k, replace=False) into out[0..k) (2.1)
 *   permutation(n, out) rng.permutation(n) into out[0..n) (2.1)
 * choice and permutation return 0, or -1 for k > n, a negative count, n
 * of 2^32 or more for permutation, or no memory (nothing is drawn then).
 * Streams are stable across wattsim versions of the same major version.
 *
 * Version 2.3, the forecast: the carbon intensity and price series the
 * simulation accounts with (--carbon, --price), read on the simulation's
 * clock (seconds t as in ws_ctx.now_s: 0 is the first recurrence's
 * scheduled start, --start on the series). It is a PERFECT forecast: the
 * very numbers the host will charge each run with, known in advance.
 *   forecast(ctx, kind, t, dur)  the time-weighted mean rate of series
 *                     `kind` (WS_FORECAST_CARBON, _PRICE) over [t, t + dur],
 *                     exactly the rate a run drawing constant power over
 *                     that window is charged (grams or dollars = energy in
 *                     kWh x this); dur = 0: the rate at t
 *   forecast_next(ctx, kind, t)  the first time after t at which that
 *                     rate may change (the start of the next interval);
 *                     INFINITY for a constant (--price 0.12)
 * Both return NAN when that series is not given, in a group replay, in
 * create and destroy (no simulation), or for t < 0, a t or dur that is not
 * finite, or dur < 0. Past the series' end it repeats from its start, as
 * the host's accounting does (a long study replays the series), so every
 * t >= 0 has a value. Each call is a binary search over the series'
 * intervals: no allocation, no draw, deterministic, and safe from any
 * callback (create and destroy included).
 */
typedef struct ws_host {
    int abi_version;
    void *ctx;                                        /* pass to the calls */
    double (*uniform)(void *ctx);                     /* in [0, 1) */
    unsigned long (*uniform_int)(void *ctx, unsigned long n); /* [0, n) */
    double (*gaussian)(void *ctx, double sd);         /* N(0, sd^2) */
    void (*log)(void *ctx, int level, const char *msg);

    /* Version 2.1. */
    double (*normal)(void *ctx, double loc, double sd);       /* N(loc, sd^2) */
    int (*choice)(void *ctx, long n, long k, long *out);
    int (*permutation)(void *ctx, long n, long *out);

    /* Version 2.3: the series, a perfect forecast (see above). */
    double (*forecast)(void *ctx, int kind, double t, double dur);
    double (*forecast_next)(void *ctx, int kind, double t);

    /* Version 2.3: the seed of the simulation this instance belongs to
     * (--seed, a sweep cell's seed, `policy check`'s seed), the one its
     * stream above is seeded from; every instance has one. For a policy
     * that seeds a generator of its own, as Zeus's classes take
     * seed=... (the Python bridge passes it to a constructor with a
     * `seed` parameter). Read it when host->abi_version >=
     * WS_ABI_VERSION_OF(2, 3). */
    unsigned long long seed;
} ws_host;

/* ---------------------------------------------------------- call context */

/*
 * What the host knows at the moment of a call, passed to every callback
 * that gets the job (version 2.0 and later). The host owns it; the pointer
 * is valid only during the call, and its contents change between calls.
 *
 * It opens with the version and size of the host that filled it; members
 * are only ever appended. Before reading a member added after 2.0, check
 * that the host filled it: WS_CTX_HAS(ctx, member).
 *
 * Members that do not apply to a call are 0 (counts, flags) or NAN
 * (quantities), e.g. the run members outside observe/observe_run.
 */
typedef struct ws_ctx {
    int abi_version;          /* of the host that filled this struct */
    unsigned size;            /* sizeof(ws_ctx) in that host */

    /* Where in the simulation the call happens. */
    long recurrence;          /* 1-based; 0 in register_job. In a group
                                 replay: the submission's trace row */
    long recurrences;         /* planned recurrences (group: trace rows) */
    int attempt;              /* try within the recurrence, 1-based; 0 in
                                 register_job */

    /* observe and observe_run: the run just observed. */
    int run_started;          /* 0: not started, because even one epoch
                                 would exceed the early-stopping budget */
    int run_epochs;           /* epochs trained */
    int run_early_stopped;    /* stopped by the budget before reaching */
    double run_epoch_budget;  /* epochs the budget allowed (max_epochs
                                 when early stopping is off) */
    double run_time_s;        /* time to accuracy (or to the stop), s */
    double run_energy_j;      /* energy, J */

    /* observe_profile: the limit being reported, measured for one epoch. */
    double profile_time_s;    /* seconds per epoch at (bs, pl) */
    double profile_power_w;   /* average power at (bs, pl), W */

    /* The environment at the start of the current recurrence. */
    double carbon_intensity;  /* gCO2eq/kWh at the start of the current recurrence; NAN when no carbon series is given */
    double price;             /* $/kWh at the start of the current recurrence; NAN when no price is given */

    /* Version 2.3: the schedule, on the simulation's clock: seconds
     * after the first recurrence's scheduled start (where ws_host.forecast
     * reads the series: t = 0 is --start). Recurrences run back to back
     * unless --every is given; NAN where there is no clock (a group
     * replay, the concurrent check of `policy check`). */
    double now_s;             /* the time of this call. register_job: 0.
                                 predict and observe_profile: when the try
                                 is to start (a recurrence's first try:
                                 its due time, or when the previous one
                                 finished if that is later; under
                                 --defer-up-to the run may then wait up to
                                 defer_s for its cleanest start, chosen
                                 after predict). observe and observe_run:
                                 when the observed run ended (it ran
                                 run_time_s before), or, for a run not
                                 started, when it would have started */
    double due_s;             /* when the current recurrence was due:
                                 (recurrence - 1) x every_s with --every,
                                 else when the previous one finished (back
                                 to back); NAN in register_job */
    double every_s;           /* --every in s; 0: back to back */
    double defer_s;           /* --defer-up-to in s; 0: no deferral */
} ws_ctx;

/* Whether the host that filled `ctx` has `member` (for members appended
 * after the version a plugin needs at least). */
#define WS_CTX_HAS(ctx, member)                                               \
    (offsetof(ws_ctx, member) + sizeof((ctx)->member) <= (size_t)(ctx)->size)

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
    int (*register_job)(void *state, const ws_job *job, const ws_ctx *ctx);
    /* The batch size for the next run: one of job->bs. */
    int (*predict)(void *state, const ws_job *job, const ws_ctx *ctx, int *bs);
    /* The outcome of a run at `bs`: its cost and whether it reached the
     * target (its epochs, time and energy are in ctx). A run the host did
     * not start because even one epoch would exceed the early-stopping
     * budget is observed with a large cost, reached = 0 and
     * ctx->run_started = 0. */
    int (*observe)(void *state, const ws_job *job, const ws_ctx *ctx, int bs,
                   double cost, int reached);

    /* Version 2.0. The sizes this plugin was built with; 0 means those of
     * 2.0. The host indexes `params` and create()'s values with them. */
    size_t param_spec_size;
    size_t value_size;
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
    int (*predict)(void *state, const ws_job *job, const ws_ctx *ctx, int bs,
                   int *pl);
    /* Profiling result: the cost of one epoch at (bs, pl), reported for
     * every power limit of bs, highest first, after a WS_PL_UNKNOWN; the
     * epoch's time and power are in ctx->profile_time_s/profile_power_w. */
    int (*observe_profile)(void *state, const ws_job *job, const ws_ctx *ctx,
                           int bs, int pl, double epoch_cost);

    /* Optional (may be NULL). */
    int (*register_job)(void *state, const ws_job *job, const ws_ctx *ctx);
    /* The outcome of a whole run at (bs, pl) (epochs, time, energy in
     * ctx). Only runs that started are observed here. */
    int (*observe_run)(void *state, const ws_job *job, const ws_ctx *ctx,
                       int bs, int pl, double cost, int reached);

    /* Version 2.0: as in ws_bso_type. */
    size_t param_spec_size;
    size_t value_size;
} ws_plo_type;

/* --------------------------------------------------------------- plugin */

typedef struct ws_plugin {
    int abi_version;                   /* WS_ABI_VERSION built with */
    const char *name;                  /* e.g. "zeus" */
    const ws_bso_type *const *bso;     /* NULL-terminated; NULL = none */
    const ws_plo_type *const *plo;     /* NULL-terminated; NULL = none */
    /* Version 2.0: the oldest host ABI version this plugin can run in; 0
     * means WS_ABI_VERSION_OF(2, 0). A host older than this refuses it. */
    int requires_version;
} ws_plugin;

/* The entry point. `host_version` is the host's WS_ABI_VERSION: a plugin
 * may return descriptors suited to it, or NULL if it cannot run there. */
typedef const ws_plugin *(*ws_plugin_entry_fn)(int host_version);

/* What a plugin defines. Declared with default visibility so that it is
 * exported even when the plugin builds with -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define WS_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define WS_PLUGIN_EXPORT
#endif
WS_PLUGIN_EXPORT const ws_plugin *ws_plugin_entry_v2(int host_version);

/* ws_plugin_entry is version 1's entry point, not a function here: a
 * version-1 source that defines it stops on the declaration below, whose
 * line the compiler shows (conflicting types / redeclared as a different
 * kind of symbol) and which says what to do. A version-2 plugin never
 * names it. */
struct ws_abi1_entry_point_see_WS_ABI_REQUEST;
extern const struct ws_abi1_entry_point_see_WS_ABI_REQUEST ws_plugin_entry; /* An ABI-1 source (it defines ws_plugin_entry): build it as ABI 1 with `#define WS_ABI_REQUEST 1` before `#include <wattsim/policy.h>`, or port it to ABI 2: docs/writing-a-policy.md, "Migrating from ABI 1". */

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

/* GPUs the job runs on: job->gpus_per_job from a 2.2 host, else 1. */
static inline int ws_job_gpus(const ws_job *job)
{
    return job->abi_version >= WS_ABI_VERSION_OF(2, 2) && job->gpus_per_job > 0
               ? job->gpus_per_job : 1;
}

/* Cost of one epoch at knob k as the host's profiler reports it:
 * (eta * power + (1 - eta) * maxPL(bs) * gpus) * time, with the profiled
 * means of a 2.1 job (profile_power, profile_time), else the knob's
 * values; gpus = ws_job_gpus(job) (the job's power sums its GPUs, so the
 * price of its time does too). */
static inline double ws_job_epoch_cost(const ws_job *job, int i, int k)
{
    const int v21 = job->abi_version >= WS_ABI_VERSION_OF(2, 1) && job->profile_power
                    && job->profile_time;
    const double power = v21 ? job->profile_power[k] : job->knob_power[k];
    const double time = v21 ? job->profile_time[k] : job->knob_time[k];
    const double maxpl = (double)ws_job_max_pl(job, i) * (double)ws_job_gpus(job);
    return (job->eta * power + (1.0 - job->eta) * maxpl) * time;
}

#ifdef __cplusplus
}
#endif
#endif /* WS_ABI_REQUEST, WATTSIM_POLICY_H */
