/*
 * The library API (wattsim/api.h): calls, their options, the hooks, the
 * provenance and the JSON envelope. The commands are in api_commands.c,
 * what they ask of the call (options, hooks, provenance) in api_call.c.
 *
 * What the CLI does for a whole process, a call does for its own
 * duration and undoes: the calling thread formats numbers in the C
 * locale (uselocale, restored), policy log levels and allowed plugin
 * folders are set and reset, an output folder's lock is released
 * (ws_outfile_end). What the CLI's main installs (signal handlers, the
 * stdout and exit() guards) a call never does: ws_policy_guards(0).
 */
#define _GNU_SOURCE                /* dladdr, open_memstream */
#include "api_internal.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "wattsim/config_opts.h"
#include "wattsim/json_writer.h"
#include "wattsim/name.h"
#include "wattsim/outfile.h"
#include "wattsim/report.h"
#include "wattsim/sha256.h"
#include "wattsim/study.h"
#include "wattsim/trace.h"
#include "wattsim/version.h"

#ifndef WS_VERSION
#define WS_VERSION "0.0.0"
#endif
/* The data folder relative to the library's folder (set by the build). */
#ifndef WS_REL_LIB_DATA_DIR
#define WS_REL_LIB_DATA_DIR "../share/wattsim"
#endif

int ws_api_version(void) { return WS_API_VERSION; }
const char *ws_api_wattsim_version(void) { return WS_VERSION; }
void ws_api_free(void *p) { free(p); }

/* ------------------------------------------------------------ options */

#define TRACE_OPTS                                                          \
    {"traces", K_STR, NULL, 0}, {"catalogue", K_STR, NULL, 0},              \
    {"max-trace-bytes", K_STR, NULL, 0}, {"verbose", K_FLAG, NULL, 0}
#define WHATIF_OPT(id, name, key, slot) {name, K_WHATIF, key, slot},
#define WHATIF_OPTS WS_WHATIF_OPTIONS(WHATIF_OPT)
#define JOB_OPTS                                                            \
    {"job", K_STR, NULL, 0}, {"target", K_STR, NULL, 0},                    \
    {"max-epochs", K_STR, NULL, 0}, {"b0", K_STR, NULL, 0}
#define ALLOW_OPTS {"allow-plugins", K_LIST, NULL, 0}, {"allow-python", K_LIST, NULL, 0}
#define END_OPTS {NULL, K_STR, NULL, 0}

static const api_opt simulate_opts[] = {
    {"gpu", K_CFG, "gpu", 0}, {"workload", K_CFG, "workload", 0}, {"eta", K_CFG, "eta", 0},
    {"beta", K_CFG, "beta", 0}, {"seed", K_CFG, "seed", 0},
    {"recurrences", K_CFG, "recurrences", 0}, {"bso", K_CFG, "bso.name", 0},
    {"plo", K_CFG, "plo.name", 0}, {"bso-param", K_LIST, NULL, 0},
    {"plo-param", K_LIST, NULL, 0}, {"keep-history", K_FLAG, NULL, 0},
    JOB_OPTS, WHATIF_OPTS TRACE_OPTS, END_OPTS};
static const api_opt pareto_opts[] = {
    {"gpu", K_CFG, "gpu", 0}, {"workload", K_CFG, "workload", 0}, {"eta", K_CFG, "eta", 0},
    JOB_OPTS, WHATIF_OPTS TRACE_OPTS, END_OPTS};
static const api_opt plan_opts[] = {
    {"gpu", K_CFG, "gpu", 0}, {"workload", K_CFG, "workload", 0}, {"eta", K_CFG, "eta", 0},
    {"beta", K_CFG, "beta", 0}, {"recurrences", K_CFG, "recurrences", 0},
    {"seeds", K_STR, NULL, 0}, {"policies", K_STR, NULL, 0},
    {"demand-charge", K_STR, NULL, 0},
    JOB_OPTS, WHATIF_OPTS TRACE_OPTS, END_OPTS};
static const api_opt run_opts[] = {
    {"config", K_STR, NULL, 0}, {"set", K_LIST, NULL, 0}, {"keep-history", K_FLAG, NULL, 0},
    ALLOW_OPTS, JOB_OPTS, WHATIF_OPTS TRACE_OPTS, END_OPTS};
static const api_opt sweep_opts[] = {
    {"config", K_STR, NULL, 0}, {"set", K_LIST, NULL, 0}, {"policies", K_STR, NULL, 0},
    {"threads", K_STR, NULL, 0}, {"isolate", K_FLAG, NULL, 0},
    {"cell-timeout", K_STR, NULL, 0}, {"cell-memory", K_STR, NULL, 0},
    {"curves", K_FLAG, NULL, 0}, {"keep-history", K_FLAG, NULL, 0},
    /* the plan's axes without a config: --set gpu=..., as config keys */
    {"gpu", K_CFG, "gpu", 0}, {"workload", K_CFG, "workload", 0}, {"eta", K_CFG, "eta", 0},
    {"beta", K_CFG, "beta", 0}, {"seed", K_CFG, "seed", 0},
    {"recurrences", K_CFG, "recurrences", 0},
    ALLOW_OPTS, WHATIF_OPTS TRACE_OPTS, END_OPTS};
static const api_opt check_opts[] = {
    {"dir", K_STR, NULL, 0}, {"catalogue", K_STR, NULL, 0},
    {"max-trace-bytes", K_STR, NULL, 0}, END_OPTS};
static const api_opt power_opts[] = {
    {"gpu", K_STR, NULL, 0}, {"epochs", K_STR, NULL, 0}, {"nvidia-smi", K_STR, NULL, 0},
    {"dcgm", K_STR, NULL, 0}, {"zeus-monitor", K_STR, NULL, 0}, {"gpus", K_STR, NULL, 0},
    {"out", K_STR, NULL, 0}, {"force", K_FLAG, NULL, 0}, {"log-tz", K_STR, NULL, 0},
    {"max-gap", K_STR, NULL, 0}, {"match-tolerance", K_STR, NULL, 0},
    {"max-trace-bytes", K_STR, NULL, 0}, {"epochs-tz", K_STR, NULL, 0},
    {"window", K_STR, NULL, 0}, {"columns", K_STR, NULL, 0}, {"gpu-cycle", K_STR, NULL, 0},
    {"batch-size", K_STR, NULL, 0}, {"steps-per-epoch", K_STR, NULL, 0},
    {"profile-steps", K_STR, NULL, 0}, {"job", K_STR, NULL, 0}, END_OPTS};
static const api_opt train_opts[] = {
    {"runs", K_STR, NULL, 0}, {"target-metric", K_STR, NULL, 0},
    {"higher-is-better", K_FLAG, NULL, 0}, {"lower-is-better", K_FLAG, NULL, 0},
    {"out", K_STR, NULL, 0}, {"force", K_FLAG, NULL, 0},
    {"max-trace-bytes", K_STR, NULL, 0}, END_OPTS};
static const api_opt workloads_opts[] = {{"catalogue", K_STR, NULL, 0}, END_OPTS};
static const api_opt gpus_opts[] = {{"traces", K_STR, NULL, 0}, END_OPTS};
static const api_opt policies_opts[] = {{"plugin", K_LIST, NULL, 0}, END_OPTS};

static const api_command commands[] = {
    {"simulate", api_simulate, simulate_opts},
    {"run", api_run_config, run_opts},
    {"pareto", api_pareto, pareto_opts},
    {"plan", api_plan, plan_opts},
    {"sweep", api_sweep, sweep_opts},
    {"trace-check", api_trace_check, check_opts},
    {"trace-import-power", api_import_power, power_opts},
    {"trace-import-train", api_import_train, train_opts},
    {"workloads", api_workloads, workloads_opts},
    {"gpus", api_gpus, gpus_opts},
    {"policies", api_policies, policies_opts},
};

ws_api_call *ws_api_call_new(const char *command)
{
    if (!command) return NULL;
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(commands[i].name, command)) {
            ws_api_call *c = calloc(1, sizeof *c);
            if (c) c->cmd = &commands[i];
            return c;
        }
    return NULL;
}

static void forget_run(ws_api_call *c)
{
    ws_registry_free(c->reg);
    c->reg = NULL;
    free(c->traces_dir);
    c->traces_dir = NULL;
    for (size_t i = 0; i < c->n_gpus; i++) free(c->gpus[i]);
    free(c->gpus);
    c->gpus = NULL;
    c->n_gpus = 0;
    free(c->catalogue_path);
    c->catalogue_path = NULL;
    api_note_whatif(c, NULL);        /* the series' files, forgotten */
    for (size_t i = 0; i < c->n_pairs; i++) {
        api_pair_prov *p = &c->pairs[i];
        free(p->label); free(p->bso); free(p->plo); free(p->bso_params); free(p->plo_params);
    }
    free(c->pairs);
    c->pairs = NULL;
    c->n_pairs = 0;
    for (size_t i = 0; i < c->n_notes; i++) free(c->notes[i]);
    free(c->notes);
    c->notes = NULL;
    c->n_notes = c->notes_dropped = 0;
}

/* ws_line's sink while a call runs. Kept: the first API_MAX_NOTES lines
 * (a --verbose policy may log per try), then only their count. */
#define API_MAX_NOTES 1000
static void api_note_line(void *ctx, const char *line)
{
    ws_api_call *c = ctx;
    char **grown, *copy;
    if (c->n_notes >= API_MAX_NOTES
        || !(grown = realloc(c->notes, (c->n_notes + 1) * sizeof *grown))) {
        c->notes_dropped++;
        return;
    }
    c->notes = grown;
    if (!(copy = strdup(line))) {
        c->notes_dropped++;
        return;
    }
    c->notes[c->n_notes++] = copy;
}

static void write_notes(const ws_api_call *c, ws_jw *w)
{
    ws_jw_begin_array(w);
    for (size_t i = 0; i < c->n_notes; i++) ws_jw_string(w, c->notes[i]);
    if (c->notes_dropped) {
        char more[96];
        snprintf(more, sizeof more, "wattsim: %zu more lines not kept", c->notes_dropped);
        ws_jw_string(w, more);
    }
    ws_jw_end_array(w);
}

void ws_api_call_free(ws_api_call *c)
{
    if (!c) return;
    forget_run(c);
    for (size_t i = 0; i < c->n_v; i++) free(c->v[i].value);
    free(c->v);
    for (size_t i = 0; i < c->n_live; i++) {
        free(c->live[i].origin);
        free(c->live[i].sha256);
    }
    free(c->live);
    free(c);
}

const char *ws_api_error(const ws_api_call *c) { return c ? c->error : "no call"; }

int ws_api_set(ws_api_call *c, const char *option, const char *value)
{
    if (!c || !option || !value) return WS_API_MISUSE;
    const api_opt *o = c->cmd->opts;
    while (o->name && strcmp(o->name, option)) o++;
    if (!o->name) {
        snprintf(c->error, sizeof c->error, "%s: unknown option '%s'", c->cmd->name, option);
        return WS_API_MISUSE;
    }
    api_value *v = realloc(c->v, (c->n_v + 1) * sizeof *v);
    if (!v) return WS_API_NOMEM;
    c->v = v;
    if (!(v[c->n_v].value = strdup(value))) return WS_API_NOMEM;
    v[c->n_v++].opt = o;
    return WS_API_OK;
}

static int add_live(ws_api_call *c, int bso, const void *t, const char *origin,
                    const char *sha256, char *key, size_t key_size)
{
    if (!c || !t || !key || key_size < 32) return WS_API_MISUSE;
    api_live *l = realloc(c->live, (c->n_live + 1) * sizeof *l);
    if (!l) return WS_API_NOMEM;
    c->live = l;
    api_live *n = &l[c->n_live];
    memset(n, 0, sizeof *n);
    n->bso = bso;
    n->t = t;
    snprintf(n->key, sizeof n->key, "py:@live:%zu", c->n_live + 1);
    n->origin = strdup(origin ? origin : n->key);
    n->sha256 = strdup(sha256 ? sha256 : "");
    if (!n->origin || !n->sha256) {
        free(n->origin);
        free(n->sha256);
        return WS_API_NOMEM;
    }
    c->n_live++;
    snprintf(key, key_size, "%s", n->key);
    return WS_API_OK;
}

int ws_api_add_bso(ws_api_call *c, const ws_bso_type *t, const char *origin,
                   const char *sha256, char *key, size_t key_size)
{
    return add_live(c, 1, t, origin, sha256, key, key_size);
}

int ws_api_add_plo(ws_api_call *c, const ws_plo_type *t, const char *origin,
                   const char *sha256, char *key, size_t key_size)
{
    return add_live(c, 0, t, origin, sha256, key, key_size);
}

static void json_file_sha(ws_jw *w, const char *path)
{
    char sha[65];
    ws_error e;
    if (ws_sha256_file_cached(path, sha, &e)) ws_jw_string(w, "");
    else ws_jw_string(w, sha);
}

static void write_provenance(const ws_api_call *c, ws_jw *w)
{
    ws_jw_begin_object(w);
    ws_jw_kstring(w, "wattsim", WS_VERSION);
    /* the three versions sweep.json's "wattsim" records, and the API's */
    char abi[32];
    snprintf(abi, sizeof abi, "%d.%d", WS_ABI_MAJOR, WS_ABI_MINOR);
    ws_jw_kint(w, "api", WS_API_VERSION);
    ws_jw_kstring(w, "policy_abi", abi);
    ws_jw_kint(w, "random_streams", WATTSIM_RANDOM_STREAMS);
    ws_jw_kstring(w, "command", c->cmd->name);
    ws_jw_key(w, "options");
    ws_jw_begin_array(w);
    for (size_t i = 0; i < c->n_v; i++) {
        ws_jw_begin_array(w);
        ws_jw_string(w, c->v[i].opt->name);
        ws_jw_string(w, c->v[i].value);
        ws_jw_end_array(w);
    }
    ws_jw_end_array(w);
    if (c->traces_dir) {
        ws_jw_key(w, "traces");
        ws_jw_begin_object(w);
        ws_jw_kstring(w, "folder", c->traces_dir);
        ws_jw_key(w, "files");
        ws_jw_begin_object(w);
        ws_error e;
        for (size_t i = 0; i <= c->n_gpus; i++) {
            char name[128];
            if (i == 0 && !c->read_train) continue;
            if (i == 0) snprintf(name, sizeof name, "summary_train");
            else snprintf(name, sizeof name, "summary_power_%s", c->gpus[i - 1]);
            char *path = ws_trace_path(c->traces_dir, name, &e);
            if (!path) continue;
            const char *base = strrchr(path, '/');
            ws_jw_key(w, base ? base + 1 : path);
            json_file_sha(w, path);
            free(path);
        }
        ws_jw_end_object(w);
        ws_jw_end_object(w);
    }
    if (c->catalogue_path) {
        ws_jw_key(w, "catalogue");
        ws_jw_begin_object(w);
        ws_jw_kstring(w, "path", c->catalogue_path);
        ws_jw_key(w, "sha256");
        json_file_sha(w, c->catalogue_path);
        ws_jw_end_object(w);
    }
    if (c->whatif[0]) ws_jw_kstring(w, "whatif", c->whatif);
    /* The series files a what-if read, hashed as the traces are: a path
     * alone does not say which day/night series or tariff a result came
     * from. */
    static const char *const series_kind[2] = {"carbon", "price"};
    int n_series = 0;
    for (int k = 0; k < 2; k++) {
        if (!c->series[k]) continue;
        if (!n_series++) {
            ws_jw_key(w, "series");
            ws_jw_begin_object(w);
        }
        ws_jw_key(w, series_kind[k]);
        ws_jw_begin_object(w);
        ws_jw_key(w, "path");
        if (k == 0 && c->n_carbon_files > 1) {
            /* several files joined: a list of each, in the order given */
            ws_jw_begin_array(w);
            for (size_t i = 0; i < c->n_carbon_files; i++) ws_jw_string(w, c->carbon_files[i]);
            ws_jw_end_array(w);
            ws_jw_key(w, "sha256");
            ws_jw_begin_array(w);
            for (size_t i = 0; i < c->n_carbon_files; i++) json_file_sha(w, c->carbon_files[i]);
            ws_jw_end_array(w);
        } else {
            ws_jw_string(w, c->series[k]);
            ws_jw_key(w, "sha256");
            json_file_sha(w, c->series[k]);
        }
        ws_jw_end_object(w);
    }
    if (n_series) ws_jw_end_object(w);
    if (c->n_pairs) {
        ws_jw_key(w, "policies");
        ws_jw_begin_array(w);
        for (size_t i = 0; i < c->n_pairs; i++) {
            const api_pair_prov *p = &c->pairs[i];
            ws_jw_begin_object(w);
            ws_jw_kstring(w, "policy", p->label);
            /* bso_file, plo_file: the name every table uses (appended:
             * bso_origin, plo_origin stay, the full path) */
            const char *k[] = {"bso", "bso_params", "bso_sha256", "bso_origin", "plo",
                               "plo_params", "plo_sha256", "plo_origin", "bso_file",
                               "plo_file"};
            const char *v[] = {p->bso, p->bso_params, p->bso_sha256, p->bso_origin, p->plo,
                               p->plo_params, p->plo_sha256, p->plo_origin, p->bso_file,
                               p->plo_file};
            for (int j = 0; j < 10; j++) ws_jw_kstring(w, k[j], v[j]);
            ws_jw_end_object(w);
        }
        ws_jw_end_array(w);
    }
    ws_jw_allowed(w);
    ws_jw_end_object(w);
}

/* ------------------------------------------------------------ running */

/* One call at a time per process: options that are process-wide in the
 * layers below (allowed plugin folders, the policy log level, an output
 * folder's lock) belong to the call that runs. A second thread's call
 * waits for run_lock; a call from a thread that works for the running
 * call would wait for itself, and fails at once instead (nested()).
 *
 * fork(): a child has only the thread that forked. When another thread
 * was inside a call then, the child inherits run_lock held by a thread it
 * does not have (its first call would never return) and the layers' state
 * half-way through that call. The child handler (no prepare handler: one
 * taking run_lock would block every fork until the call ends, and
 * deadlock a policy or --isolate that forks during a call) makes the locks
 * new and marks the process, whose calls then fail at once. */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;
static int running;
static pthread_t running_thread;
static int forked_mid_call;         /* set in a child only (fork_child) */

static void fork_child(void)
{
    /* The child's only thread, before anything else runs in it: no lock
     * is needed to read `running`, and a lock another thread held is not
     * unlocked (its owner is not here) but replaced. When the forking
     * thread is the call's own (a policy's fork, --isolate's cells), the
     * child is still inside that call: run_lock stays its own, and a call
     * there is a nested one. */
    int own = running && pthread_equal(running_thread, pthread_self());
    if (running && !own) forked_mid_call = 1;
    if (!own) {
        running = 0;
        run_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    }
    owner_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* A process that calls the library keeps what it parsed: its traces and
 * their hashes, its policy plugins and catalogues (engine/plugin_cache.c,
 * io/catalogue_cache.c), WS_TRACE_CACHE_DEFAULT sets (or $WATTSIM_TRACE_CACHE, 0
 * to turn it off), so that a second call on the same traces reads
 * nothing (io/trace_cache.c). */
static void trace_cache_on(void)
{
    const char *e = getenv("WATTSIM_TRACE_CACHE");
    char *end;
    long n = e && *e ? strtol(e, &end, 10) : -1;
    const int on = n >= 0 && n <= 1024 && !*end;
    ws_trace_cache_set(on ? (size_t)n : WS_TRACE_CACHE_DEFAULT);
    /* and its policy plugins and parsed catalogues, the same way (0: off) */
    ws_plugin_cache_set(on && !n ? 0 : WS_PLUGIN_CACHE_DEFAULT);
    ws_catalogue_cache_set(on && !n ? 0 : WS_CATALOGUE_CACHE_DEFAULT);
}

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, fork_child); }

/* Whether this thread works for the call that runs: the thread that made
 * it (its policies and hooks run there), or any thread running policy code
 * now (a sweep's worker: wattsim/plugin.h's ws_policy_code_running). Such
 * a thread would wait for run_lock, which the call holds until that very
 * thread returns. A thread policy code started itself is not known here:
 * its call waits its turn (docs/safety.md). */
static int nested(void)
{
    pthread_mutex_lock(&owner_lock);
    int n = running && (pthread_equal(running_thread, pthread_self())
                        || ws_policy_code_running());
    pthread_mutex_unlock(&owner_lock);
    return n;
}

#ifdef WS_HAVE_HTTP_CLIENT
#include "serve.h"
static void install_http_client(void) { ws_serve_client_install(0); }
#endif

static locale_t the_c_locale;
static void make_c_locale(void) { the_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

int ws_api_run(ws_api_call *c, const ws_api_hooks *hooks, char **json)
{
    if (json) *json = NULL;
    if (!c || !json) return WS_API_MISUSE;
    if (c->ran) {
        snprintf(c->error, sizeof c->error, "%s: a call runs once; make a new one",
                 c->cmd->name);
        return WS_API_MISUSE;
    }
    static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
    pthread_once(&fork_once, install_fork_handler);
    if (forked_mid_call) {
        snprintf(c->error, sizeof c->error, "%s: this process was forked while another"
                 " thread was inside a wattsim call, so the library's state here is that"
                 " call's, half-way; make wattsim calls in the parent, or start this process"
                 " without fork (multiprocessing's 'spawn' or 'forkserver')", c->cmd->name);
        return WS_API_MISUSE;
    }
    if (nested()) {
        snprintf(c->error, sizeof c->error, "%s: called from inside another wattsim call (a"
                 " policy or hook of it, on any of its threads); make the call after it"
                 " returns", c->cmd->name);
        return WS_API_MISUSE;
    }
    pthread_mutex_lock(&run_lock);
    pthread_mutex_lock(&owner_lock);
    running = 1;
    running_thread = pthread_self();
    pthread_mutex_unlock(&owner_lock);

    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_c_locale);
    static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
    pthread_once(&cache_once, trace_cache_on);
#ifdef WS_HAVE_HTTP_CLIENT
    /* bso "http://HOST:PORT": a client of a batch-size optimizer server
     * (sim/src/serve/serve_client.c; loopback only, as the command line
     * without --allow-remote). */
    static pthread_once_t http_once = PTHREAD_ONCE_INIT;
    pthread_once(&http_once, install_http_client);
#endif
    locale_t old = the_c_locale ? uselocale(the_c_locale) : (locale_t)0;
    ws_policy_guards(0);             /* this process's descriptors stay its own */
    ws_line_sink(api_note_line, c);  /* and its stderr: notes go in the result */

    c->ran = 1;
    c->hooks = hooks && hooks->size >= offsetof(ws_api_hooks, ctx) + sizeof hooks->ctx
               ? hooks : NULL;
    c->last_tick = 0;
    c->error[0] = '\0';
    ws_error err = {{0}};
    int status = WS_API_OK;
    c->status = WS_API_INPUT;
    char *buf = NULL;
    size_t len = 0;
    FILE *res = open_memstream(&buf, &len);
    /* A cancel flag already set stops the call before any work, whatever
     * the command would have polled (a short sweep may end before its
     * first poll). */
    const int cancel_now = c->hooks && c->hooks->size >= offsetof(ws_api_hooks, cancel)
                           + sizeof c->hooks->cancel && c->hooks->cancel && *c->hooks->cancel;
    if (!res) {
        status = WS_API_NOMEM;
        ws_fail(&err, "out of memory");
    } else if (cancel_now) {
        c->cancelled = 1;
        status = WS_API_CANCELLED;
        ws_fail(&err, "cancelled");
    } else if (c->cmd->run(c, res, &err)) {
        status = c->cancelled ? WS_API_CANCELLED : c->status;
        if (status == WS_API_CANCELLED) ws_fail(&err, "cancelled");
        if (!strcmp(err.msg, "out of memory")) status = WS_API_NOMEM;
        if (!err.msg[0]) ws_fail(&err, "%s failed", c->cmd->name);
    } else if (c->cancelled) {
        status = WS_API_CANCELLED;
        ws_fail(&err, "cancelled");
    }
    ws_line_sink(NULL, NULL);
    int bad = res ? ferror(res) : 1;
    if (res && fclose(res)) bad = 1;
    if (status == WS_API_OK && (bad || !buf)) {
        status = WS_API_NOMEM;
        ws_fail(&err, "out of memory");
    }
    if (status == WS_API_OK) {
        char *env = NULL;
        size_t elen = 0;
        FILE *e = open_memstream(&env, &elen);
        int werr = 0;                           /* the writer's: a nesting or write error */
        if (e) {
            ws_jw w;
            ws_jw_init(&w, e);
            ws_jw_begin_object(&w);
            ws_jw_key(&w, "provenance");
            write_provenance(c, &w);
            ws_jw_key(&w, "notes");
            write_notes(c, &w);
            ws_jw_key(&w, "result");
            ws_jw_raw(&w, buf, len);            /* the command's JSON, as written */
            ws_jw_end_object(&w);
            ws_jw_newline(&w);
            werr = ws_jw_error(&w);
        }
        int ebad = !e;
        if (e) {
            ebad = ferror(e) || werr;
            if (fclose(e)) ebad = 1;
        }
        if (ebad || !env) {
            free(env);
            status = WS_API_NOMEM;
            ws_fail(&err, "out of memory");
        } else {
            *json = env;
        }
    }
    free(buf);
    if (status != WS_API_OK) {
        snprintf(c->error, sizeof c->error, "%s", err.msg);
        /* no result to carry them: where they went before */
        for (size_t i = 0; i < c->n_notes; i++) fprintf(stderr, "%s\n", c->notes[i]);
    }

    /* What the command set for the process, undone. */
    ws_outfile_end(status != WS_API_OK);
    ws_plugin_allow_reset();
    ws_policy_set_log_level(WS_LOG_WARN);
    forget_run(c);
    if (the_c_locale) uselocale(old);
    pthread_mutex_lock(&owner_lock);
    running = 0;
    pthread_mutex_unlock(&owner_lock);
    pthread_mutex_unlock(&run_lock);
    return status;
}
