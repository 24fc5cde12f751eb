/*
 * Configuration files (YAML, read with libyaml): the workload catalogue
 * (configs/workloads.yaml) and run configs (configs/default.yaml, ...).
 *
 * Parsing validates everything it can without traces or plugins: types,
 * ranges, unknown and duplicate keys. Errors name FILE:LINE:COL (1-based, as
 * libyaml marks them) and what to do. Policy parameters stay raw strings
 * here, each with its location, because only the loaded plugin knows their
 * types (see ws_params_resolve in params.h).
 */
#ifndef WATTSIM_CONFIG_H
#define WATTSIM_CONFIG_H

#include <stddef.h>
#include "wattsim/error.h"

/* One phase of a drifting workload (docs/model.md, "Data drift"): from
 * recurrence `from` on, the job's runs come from these rows. What is not
 * given is the job's own. */
typedef struct ws_drift_spec {
    long from;            /* first recurrence of the phase: > 1, each phase
                             later than the one before */
    char *traces;         /* trace folder, or NULL: the run's */
    char *dataset;        /* train/power trace columns, or NULL: the job's */
    char *network;
    char *optimizer;
    double target_metric; /* NAN: the job's */
    char *where;          /* "FILE:LINE:COL" of the phase */
} ws_drift_spec;

/* The most phases one workload may drift through. */
#define WS_MAX_DRIFT_PHASES 64

/* One workload: which train-trace rows form the job and its defaults. */
typedef struct ws_workload_spec {
    char *name;           /* catalogue key, e.g. "librispeech" */
    char *dataset;        /* train/power trace columns */
    char *network;
    char *optimizer;
    double target_metric;
    int max_epochs;       /* > 0 */
    int b0;               /* paper default batch size, > 0 */
    char *where;          /* "FILE:LINE:COL" of its definition, or NULL;
                             errors about the workload start with it */
    char *display;        /* name in figures and reports ("DeepSpeech2 /
                             LibriSpeech"), or NULL: use `name` */
    int gpus_per_job;     /* GPUs the power rows sum, 1..WS_MAX_GPUS_PER_JOB;
                             0: not given (the power trace's column, else 1).
                             Given here and in the trace, they must agree. */
    char *metric;         /* the target metric's name ("accuracy", "WER"), or
                             NULL: not given. For people only (list workloads):
                             the train trace's rows say when it was reached */
    int better;           /* +1: a higher metric is better, -1: lower, 0: not
                             given */
    ws_drift_spec *drift; /* `drift:` the phases after the first (the job
                             itself, from recurrence 1), in order; NULL: */
    size_t n_drift;       /* the job's rows throughout */
} ws_workload_spec;

/* Longest display name, in bytes. */
#define WS_DISPLAY_MAX 80

typedef struct ws_catalogue {
    ws_workload_spec *items;
    size_t n;
    char **gpus;          /* GPU names listed under `gpus:` */
    size_t n_gpus;
    char **gpu_display;   /* n_gpus display names from `gpu_display:` (an
                             entry, or the whole array, may be NULL) */
} ws_catalogue;

/* Read a catalogue:
 *   gpus: [v100, a40, p100, rtx6000]
 *   workloads:
 *     cifar100: {dataset: cifar100, network: shufflenetv2,
 *                optimizer: adadelta, target_metric: 0.6,
 *                max_epochs: 100, b0: 1024,
 *                display: "ShuffleNet-v2 / CIFAR-100"}     (optional)
 *   gpu_display: {v100: "V100", ...}                       (optional)
 * A display name has no control characters and at most WS_DISPLAY_MAX
 * bytes; GPUs in gpu_display must be listed in gpus.
 */
int ws_catalogue_load(const char *path, ws_catalogue *out, ws_error *err);
const ws_workload_spec *ws_catalogue_find(const ws_catalogue *c,
                                          const char *name);
void ws_catalogue_free(ws_catalogue *c);
/* A deep copy of src into *dst: 0, or -1 (out of memory; *dst empty). */
int ws_catalogue_copy(const ws_catalogue *src, ws_catalogue *dst);
/* ws_catalogue_load, through the process's cache of parsed catalogues
 * (io/catalogue_cache.c): up to n files (0: off, the default), each known
 * by its path, device, inode, size and mtime in ns; a hit is a deep copy
 * (free it as always), a file rewritten or replaced is read again. The
 * library API turns it on. */
#define WS_CATALOGUE_CACHE_DEFAULT 4
void ws_catalogue_cache_set(size_t n);
int ws_catalogue_load_cached(const char *path, ws_catalogue *out, ws_error *err);
/* Parses done by ws_catalogue_load_cached since the process began. */
unsigned long long ws_catalogue_cache_parses(void);
/* Display names for figures and reports; the name itself when the
 * catalogue (which may be NULL) has none. */
const char *ws_catalogue_workload_display(const ws_catalogue *c, const char *name);
const char *ws_catalogue_gpu_display(const ws_catalogue *c, const char *name);

/* A raw policy parameter: key, scalar text and where it was written. */
typedef struct ws_param_raw {
    char *key;
    char *value;
    char *where;          /* "FILE:LINE:COL" or "--set" */
} ws_param_raw;

typedef struct ws_policy_ref {
    char *name;           /* built-in policy name, or a path to a .so */
    char *where;          /* location of the name */
    ws_param_raw *params;
    size_t n_params;
    int in_file;          /* named in a config file (not on the command
                             line): a .so must pass ws_plugin_config_check */
} ws_policy_ref;

/* One pair of a config's `policies:` list. */
typedef struct ws_policy_pair_ref {
    ws_policy_ref bso, plo;
    char *where;          /* location of the entry */
} ws_policy_pair_ref;

/* One policy as written on a command line: NAME or NAME{KEY=VALUE,...}
 * (NAME a built-in name, a path, or FILE.so:NAME), from s[0, len). `where`
 * names the option in errors ("--policies"). Free with ws_policy_ref_free. */
int ws_policy_ref_parse(const char *s, size_t len, const char *where, ws_policy_ref *out,
                        ws_error *err);
void ws_policy_ref_free(ws_policy_ref *p);

/*
 * What-if transforms of a run config (docs/model.md): keys
 * power_cap, input_stall, idle_power, carbon, start, price, objective,
 * price_tz, price_label, every, defer_up_to, job_power_cap, input_rate,
 * samples_per_epoch, carbon_basis, price_adjustments.
 * Scalars, not axes. where[] says where each was given ("FILE:LINE:COL",
 * "--set" or the option the user typed); NULL = not given.
 */
enum { WS_WI_POWER_CAP, WS_WI_INPUT_STALL, WS_WI_IDLE_POWER, WS_WI_CARBON,
       WS_WI_START, WS_WI_PRICE, WS_WI_OBJECTIVE, WS_WI_PRICE_TZ, WS_WI_PRICE_LABEL,
       WS_WI_EVERY, WS_WI_DEFER, WS_WI_JOB_POWER_CAP, WS_WI_INPUT_RATE,
       WS_WI_SAMPLES_PER_EPOCH, WS_WI_CARBON_BASIS, WS_WI_PRICE_ADJ, WS_WI_COUNT };

/* The what-ifs as options, one list for every front end (the CLI's
 * getopt table, the library's keyword options of wattsim/api.h), so that
 * a what-if added here is an option of both: X(ID, "option-name",
 * "config_key", WS_WI_*), ID naming the CLI's WS_OPT_ID. */
#define WS_WHATIF_OPTIONS(X)                                               \
    X(POWER_CAP, "power-cap", "power_cap", WS_WI_POWER_CAP)                \
    X(INPUT_STALL, "input-stall", "input_stall", WS_WI_INPUT_STALL)        \
    X(IDLE_POWER, "idle-power", "idle_power", WS_WI_IDLE_POWER)            \
    X(CARBON, "carbon", "carbon", WS_WI_CARBON)                            \
    X(START, "start", "start", WS_WI_START)                                \
    X(PRICE, "price", "price", WS_WI_PRICE)                                \
    X(OBJECTIVE, "objective", "objective", WS_WI_OBJECTIVE)                \
    X(PRICE_TZ, "price-tz", "price_tz", WS_WI_PRICE_TZ)                    \
    X(PRICE_LABEL, "price-label", "price_label", WS_WI_PRICE_LABEL)        \
    X(DEFER, "defer-up-to", "defer_up_to", WS_WI_DEFER)                    \
    X(EVERY, "every", "every", WS_WI_EVERY)                                \
    X(JOB_POWER_CAP, "job-power-cap", "job_power_cap", WS_WI_JOB_POWER_CAP) \
    X(INPUT_RATE, "input-rate", "input_rate", WS_WI_INPUT_RATE)            \
    X(SAMPLES_PER_EPOCH, "samples-per-epoch", "samples_per_epoch",         \
      WS_WI_SAMPLES_PER_EPOCH)                                             \
    X(CARBON_BASIS, "carbon-basis", "carbon_basis", WS_WI_CARBON_BASIS)    \
    X(PRICE_ADJ, "price-adjustments", "price_adjustments", WS_WI_PRICE_ADJ)
/* The input pipeline's bounds: an epoch waiting for input
 * (samples_per_epoch / input_rate) is at most a year, as a trace row's
 * time (wattsim/trace.h WS_MAX_TIME_PER_EPOCH). */
#define WS_MAX_INPUT_RATE 1e12          /* samples/s */
#define WS_MAX_SAMPLES_PER_EPOCH 1e15
typedef struct ws_whatif_spec {
    double power_cap;             /* W per GPU, > 0 */
    double input_stall;           /* fraction of wall time, in [0, 1) */
    double idle_power;            /* W one GPU draws while stalled, >= 0 */
    char *carbon;                 /* carbon-intensity series file */
    char **carbon_more;           /* more files joined with it (a list, or
                                     --carbon repeated), n_carbon_more */
    size_t n_carbon_more;
    int carbon_basis;             /* ws_carbon_basis: 0 lifecycle, direct */
    int price_adjustments;        /* 1: an OpenEI tier's adj is added */
    char *start;                  /* ISO 8601 time of the first recurrence */
    double price_value;           /* $/kWh when price is a number, else NAN */
    char *price;                  /* the price as given: number or file */
    char *objective;              /* "energy", "carbon" or "price" */
    char *price_tz;               /* an OpenEI tariff's time zone (NULL: UTC) */
    char *price_label;            /* an OpenEI tariff's item label */
    double every;                 /* s between scheduled recurrences; 0: back
                                     to back */
    double defer_up_to;           /* s a recurrence may wait; 0: none */
    double job_power_cap;         /* W for all the job's GPUs, > 0 */
    double input_rate;            /* samples/s the input pipeline delivers */
    double samples_per_epoch;     /* samples in one epoch */
    char *where[WS_WI_COUNT];
} ws_whatif_spec;

/*
 * A run config. Every axis is a list (a scalar in YAML is a list of one);
 * the run plan is their cross product: gpu x workload x eta x beta x seed.
 */
/* The most recurrences a plan may ask for: a bound on run time (and on a
 * learning curve's memory), not on a simulation's memory. */
#define WS_MAX_RECURRENCES 10000000L
/* The most simulations one run plan may hold (policy pairs x gpus x
 * workloads x etas x betas x seeds): a sweep keeps a byte per simulation
 * in memory and 64 per simulation in its journal and spill file, `run` a
 * result per simulation; past this a plan is refused before anything is
 * allocated for it. */
#define WS_MAX_PLAN_SIMS 1000000000UL

typedef struct ws_run_config {
    char *path;                   /* file it came from ("" for none) */
    char **gpus;        size_t n_gpus;
    char **workloads;   size_t n_workloads;  /* names in the catalogue */
    ws_workload_spec *jobs; size_t n_jobs;   /* inline `job:` entries */
    double *etas;       size_t n_etas;       /* each in [0, 1] */
    double *betas;      size_t n_betas;      /* each > 0; .inf = off */
    unsigned long *seeds; size_t n_seeds;
    long recurrences;             /* 0 = default 2*|B|*|P|; at most
                                     WS_MAX_RECURRENCES */
    ws_policy_ref bso;            /* `bso:` as one policy (default zeus); */
    ws_policy_ref plo;            /* name NULL when `bso:` is a list */
    /* The policy axis (docs/commands.md, "Policy pairs in a config"): `bso:` and `plo:`
     * as YAML lists, whose cross product (bso-major) is the pairs, or
     * `policies:`, a list of pairs (not with bso: or plo:). NULL/0 when not
     * given. Read the pairs through ws_run_config_n_pairs/_pair. */
    ws_policy_ref *bsos;          size_t n_bsos;
    ws_policy_ref *plos;          size_t n_plos;
    ws_policy_pair_ref *pairs;    size_t n_pairs;
    char *where_bsos, *where_plos, *where_pairs;  /* where each list was
                                     given ("FILE:LINE:COL", "--set") */
    char *out_dir;                /* NULL = none given */
    char *traces;                 /* NULL = none given */
    char *format;                 /* "table", "csv" or "json"; NULL = table */
    char *where_gpus;             /* where the gpu and workload axes were */
    char *where_workloads;        /* given ("FILE:LINE:COL", "--set"), or
                                     NULL for the defaults */
    ws_whatif_spec whatif;        /* what-if transforms; none by default */
    char *where_out;              /* "FILE:LINE:COL" of a config file's
                                     `out`; NULL when none or from --set */
    char *style;                  /* the figures' style (wattsim/style.h),
                                     checked; NULL = the default */
} ws_run_config;

/* Defaults used when a key is absent. */
void ws_run_config_init(ws_run_config *cfg);
int ws_run_config_load(const char *path, ws_run_config *cfg, ws_error *err);
/* Apply one `--set key=value` override (value parsed as a YAML scalar or
 * flow sequence, e.g. "eta=[0.3,0.5]", "bso.params.window=5",
 * "seeds=1..100"). */
int ws_run_config_set(ws_run_config *cfg, const char *assignment,
                      ws_error *err);
/* The config's policy pairs: the `policies:` list, else the cross product
 * of bso x plo (a single policy is a list of one), bso-major. At least 1. */
size_t ws_run_config_n_pairs(const ws_run_config *cfg);
void ws_run_config_pair(const ws_run_config *cfg, size_t i, const ws_policy_ref **bso,
                        const ws_policy_ref **plo);
/* Where the config's policy axis was given (for "one pair only" errors),
 * or NULL when it has one pair. */
const char *ws_run_config_pairs_where(const ws_run_config *cfg);

/* The output folder: opt (--out, typed by the user: any folder) when
 * given, else the config's `out` (NULL when neither). A config file's `out`
 * must stay below the current folder: an absolute path or a `..`
 * component is refused (-1, err "FILE:LINE:COL: ..."); --set out=... may
 * be anything. */
int ws_run_config_out(const ws_run_config *cfg, const char *opt, const char **out,
                      ws_error *err);

/* The plan's size with n_pairs policy pairs, into *sims (may be NULL;
 * SIZE_MAX when it overflows): 0, or -1 with err "CONFIG: the run plan is
 * N simulations (...), more than the WS_MAX_PLAN_SIMS one plan may hold;
 * ..." when it is larger. ws_run_config_validate checks the config's own
 * pairs; a sweep checks again with --policies and its reference pairs. */
int ws_run_config_plan_size(const ws_run_config *cfg, size_t n_pairs, size_t *sims,
                            ws_error *err);

/* Check what needs every key at once (e.g. a workload or job given). */
int ws_run_config_validate(const ws_run_config *cfg, ws_error *err);
/* Nonzero when cfg is one simulation (one GPU, workload or job, eta,
 * beta and seed), what `simulate` runs; else 0 with err set to why, the
 * text simulate's usage error gives on the CLI and in the library. */
int ws_run_config_one_simulation(const ws_run_config *cfg, ws_error *err);
void ws_run_config_free(ws_run_config *cfg);
/* What no single what-if key can check: input_stall with idle_power,
 * objective carbon with a carbon series, and so on. */
int ws_whatif_spec_validate(const ws_whatif_spec *w, ws_error *err);

#endif
