/*
 * Internal (not installed): what api.c (the public calls, the option
 * tables, the run lock, the JSON envelope), api_commands.c (one function
 * per command) and api_call.c (a call's options, hooks and provenance, as
 * the commands use them) share. The arrows run one way: api.c ->
 * api_commands.c -> api_call.c (and api.c -> api_call.c). The API is the
 * library's counterpart of the CLI: it sits on the study, report and io
 * layers as cli/ does, and neither calls the other.
 */
#ifndef WATTSIM_API_INTERNAL_H
#define WATTSIM_API_INTERNAL_H

#include <stdio.h>

#include "wattsim/api.h"
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/plugin.h"
#include "wattsim/whatif.h"

/* How an option is used (api.c's tables). */
typedef enum api_kind {
    K_CFG,          /* a config key (the option's `key`), as --gpu sets "gpu" */
    K_WHATIF,       /* a what-if (config key `key`, a quoted scalar) */
    K_STR,          /* kept as given, once */
    K_LIST,         /* kept as given, any number of times */
    K_FLAG          /* 1/0, true/false, "" */
} api_kind;

typedef struct api_opt {
    const char *name;          /* "eta", as the CLI's --eta */
    api_kind kind;
    const char *key;           /* K_CFG / K_WHATIF: the config key */
    int slot;                  /* K_WHATIF: WS_WI_* */
} api_opt;

typedef struct api_value {
    const api_opt *opt;
    char *value;
} api_value;

typedef struct api_live {
    int bso;
    const void *t;             /* ws_bso_type or ws_plo_type */
    char key[32];
    char *origin, *sha256;
} api_live;

/* One pair's provenance, for the envelope. */
typedef struct api_pair_prov {
    char *label, *bso, *plo, *bso_params, *plo_params;
    char bso_sha256[65], plo_sha256[65];
    const char *bso_origin, *plo_origin;   /* the registry's */
    char bso_file[4200], plo_file[4200];   /* as the CLI's outputs: built-in, or
                                              the origin */
} api_pair_prov;

struct ws_api_call {
    const struct api_command *cmd;
    api_value *v;
    size_t n_v;
    api_live *live;
    size_t n_live;
    char error[WS_ERROR_MAX];
    int ran;

    /* While it runs. */
    const ws_api_hooks *hooks;
    double last_tick;
    int cancelled;
    ws_registry *reg;
    /* Provenance gathered by the command. */
    char *traces_dir;
    char **gpus;               /* whose power traces were read */
    size_t n_gpus;
    char *catalogue_path;
    char whatif[1024];
    char *series[2];           /* the carbon and price files read, or NULL */
    char **carbon_files;       /* several carbon files joined (n > 1), else */
    size_t n_carbon_files;     /* NULL, 0 */
    api_pair_prov *pairs;
    size_t n_pairs;
    int read_train;            /* summary_train was read */
    int status;                /* a failure's kind beyond WS_API_INPUT */
    /* wattsim's notes and warnings (ws_line) while it runs: the result's
     * "notes", not the process's stderr, which a notebook does not show. */
    char **notes;
    size_t n_notes, notes_dropped;
    char traces_default[4200]; /* the data folder's traces, when used */
};

typedef int (*api_run_fn)(ws_api_call *c, FILE *out, ws_error *err);

typedef struct api_command {
    const char *name;
    api_run_fn run;
    const api_opt *opts;
} api_command;

/* ------------------------------------------------------------ api_call.c */

/* The value of option `name` (the last one given), or NULL. */
const char *api_get(const ws_api_call *c, const char *name);
/* The flag `name`: 0 unless given as 1, true or "". */
int api_flag(const ws_api_call *c, const char *name);
/* "COMMAND: MESSAGE": a usage error, as the CLI's "wattsim COMMAND: ...". */
int api_usage(const ws_api_call *c, ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The config options of the call (K_CFG, K_WHATIF, and job/target/
 * max-epochs/b0) applied to cfg in the order given, errors naming the
 * option as the CLI does ("--eta must be ..."); what-ifs last. */
int api_apply_config(const ws_api_call *c, ws_run_config *cfg, ws_error *err);
/* The job options, as --job/--target/--max-epochs/--b0 (0 when none). */
int api_apply_job(const ws_api_call *c, ws_run_config *cfg, ws_error *err);
/* Relabel "--set gpu" / "--set workload" to the option (as the CLI). */
int api_relabel_axes(ws_run_config *cfg, ws_error *err);

/* Where traces and the catalogue are (the option, the config, the
 * environment, then the data folder beside the library); the trace size
 * limit (option max-trace-bytes, else $WATTSIM_MAX_TRACE_BYTES). */
const char *api_traces(ws_api_call *c, const ws_run_config *cfg);
int api_catalogue(ws_api_call *c, ws_catalogue *cat, ws_error *err);
int api_limits(const ws_api_call *c, ws_csv_limits *lim, ws_error *err);

/* The registry of the run, with the call's live policies in it. */
ws_registry *api_registry(ws_api_call *c, ws_error *err);

/* The hook: nonzero to stop. force: call progress whatever the time. */
int api_tick(ws_api_call *c, double done, double total, int force);
/* Record a pair's provenance (the names as given, for its origin). */
int api_note_pair(ws_api_call *c, const char *label, const char *bso, const char *plo,
                  const char *bso_params, const char *plo_params, const char *bso_sha,
                  const char *plo_sha);
/* Record the trace folder and a GPU whose power trace was read. */
int api_note_traces(ws_api_call *c, const char *dir, const char *gpu);
void api_note_whatif(ws_api_call *c, const ws_whatif *wi);

/* The classification of a failed simulation's message: WS_API_POLICY
 * when it names one of the pair's policies and a call, else
 * WS_API_FAILED. */
int api_sim_status(const char *msg, const char *bso, const char *plo);

/* A CSV writer's text as the string member `name` of w's object. */
struct ws_jw;
int api_json_text(struct ws_jw *w, const char *name, void (*write)(FILE *, const void *),
                  const void *arg, ws_error *err);

/* ------------------------------------------------------------ api_commands.c */

int api_simulate(ws_api_call *c, FILE *out, ws_error *err);
int api_run_config(ws_api_call *c, FILE *out, ws_error *err);
int api_pareto(ws_api_call *c, FILE *out, ws_error *err);
int api_plan(ws_api_call *c, FILE *out, ws_error *err);
int api_sweep(ws_api_call *c, FILE *out, ws_error *err);
int api_trace_check(ws_api_call *c, FILE *out, ws_error *err);
int api_import_power(ws_api_call *c, FILE *out, ws_error *err);
int api_import_train(ws_api_call *c, FILE *out, ws_error *err);
int api_workloads(ws_api_call *c, FILE *out, ws_error *err);
int api_gpus(ws_api_call *c, FILE *out, ws_error *err);
int api_policies(ws_api_call *c, FILE *out, ws_error *err);

#endif
