/*
 * Loading policy plugins (dlopen) and running policy instances.
 *
 * A registry holds the plugins loaded so far: those in the built-in policy
 * folder and any file the user names. Loading checks the ABI version and
 * that every required function is present, and names the file and what is
 * missing when it fails. A plugin runs with the user's rights: only paths
 * the user names and the built-in folder are ever loaded.
 *
 * An instance (ws_bso / ws_plo) is one descriptor plus its state, its own
 * seeded random stream and its resolved parameters. Every call through an
 * instance is checked: an error return, or an answer outside the job's
 * table, becomes a one-line error naming the policy and the call.
 */
#ifndef WATTSIM_PLUGIN_H
#define WATTSIM_PLUGIN_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/error.h"
#include "wattsim/params.h"
#include "wattsim/policy.h"

typedef struct ws_registry ws_registry;

/* For a program that runs policies: when the process dies of a signal (a
 * policy's crash, or SIGINT, SIGTERM, SIGHUP), remove its unfinished
 * outputs (ws_outfile_abandon), say in one line what happened, naming the
 * policy and call when it died inside one, and still die of that signal
 * (the previous action, a sanitizer's say, runs after). */
void ws_host_signals_install(void);

/* For a forked child that runs policy code for a parent watching it (sweep
 * --isolate, policy check), first thing after the fork: a crash in a
 * policy call, an exit() in one and, with timeout > 0 (seconds), that much
 * real time passing are each told in one line on `fd` naming the policy
 * and call ("wattsim: bso NAME: predict crashed (SIGSEGV)", "... called
 * exit(); ...", "... did not return within 2 s"), then the child dies of
 * the signal by its default action (exits 1 after exit()). */
void ws_host_child_init(int fd, double timeout);

/* The guards of a program that runs policies (on by default): the working
 * folder restored after policy code changed it, and an exit() inside a
 * policy call turned into one line and status 1 (an atexit handler).
 * Off for a library caller (wattsim/api.h), whose process wattsim must
 * not change; set before any instance exists. (A policy's output on
 * stdout is kept from the results by the program: ws_stdout_private.) */
void ws_policy_guards(int on);

/* Whether the calling thread is inside policy code now (a policy's call,
 * or a plugin or Python module being loaded or unloaded): a thread that
 * works for the running call, whichever thread it is (a sweep's worker
 * too). The library's nesting check (api.c) asks it. */
int ws_policy_code_running(void);

ws_registry *ws_registry_new(void);
void ws_registry_free(ws_registry *r);

/* Keep loaded policy plugins across registries in this process: up to n
 * files (0: off, the default; every kept one closed), each known by its
 * path, device, inode, size and mtime in ns, so that a later registry
 * naming an unchanged file opens nothing and a rebuilt or replaced file
 * is loaded again (engine/plugin_cache.c). The library API turns it on. */
#define WS_PLUGIN_CACHE_DEFAULT 32
void ws_plugin_cache_set(size_t n);
/* How many plugins are kept; *files_opened (if not NULL): how many times
 * a plugin file was opened (not found kept) since the process began. */
size_t ws_plugin_cache_count(unsigned long long *files_opened);

/* The built-in policy folder, next to the executable (build tree:
 * build/policies; install tree: PREFIX/lib/wattsim/policies). Returns a
 * static string or NULL. $WATTSIM_POLICY_DIR (folders separated by ':')
 * adds folders to it for name lookups. */
const char *ws_policy_dir(void);

/*
 * A config runs no code. A policy a config names as a file (NAME.so, a
 * path, FILE.so:NAME; a bare name is looked up in the policy folders) is
 * loaded only from the policy folders (built-in, $WATTSIM_POLICY_DIR) or
 * a folder the command line allows with --allow-plugins DIR: the .so,
 * symbolic links resolved, must be in one of them. What the user types on
 * the command line (--bso, --policies, --set) may name any .so.
 *
 * ws_plugin_allow_dir adds DIR (as its real path) to the allowed folders
 * of this process, which forked children (--isolate) inherit; -1 with
 * err set when it is not a folder. ws_plugin_allowed lists them, in the
 * order given (for the outputs' provenance). ws_plugin_config_check is
 * the check, made before anything is loaded: 0 when `name` may be
 * loaded, else -1 with err "WHERE: KIND 'NAME' is a plugin file, ...
 * pass --allow-plugins FOLDER". ws_plugin_allow_reset forgets them.
 */
int ws_plugin_allow_dir(const char *dir, ws_error *err);
size_t ws_plugin_allowed(const char *const **dirs);
int ws_plugin_config_check(const char *name, const char *kind, const char *where,
                           ws_error *err);
void ws_plugin_allow_reset(void);
/*
 * The same for Python: a config's `py:MODULE:CLASS` runs Python code, so
 * it is refused unless the command line allows its package with
 * --allow-python PACKAGE (MODULE is PACKAGE or below it; repeatable,
 * recorded in the JSON outputs as `allow_python`). ws_plugin_allow_python
 * adds one (-1 with err when it is not a dotted Python name);
 * ws_plugin_allowed_python lists them; ws_plugin_allow_reset forgets them
 * too.
 */
int ws_plugin_allow_python(const char *package, ws_error *err);
size_t ws_plugin_allowed_python(const char *const **packages);

/* Load one plugin file; its descriptors join the registry. Policy names
 * are unique among the policy folders' plugins; a plugin named by path may
 * share a name with another plugin named by path, not with a folder's. */
int ws_registry_load_file(ws_registry *r, const char *path, ws_error *err);
/* Load every *.so in dir, in name order; fail at the first that fails. */
int ws_registry_load_dir(ws_registry *r, const char *dir, ws_error *err);
/* Load the policy folders (built-in, then $WATTSIM_POLICY_DIR), once. A
 * plugin there that fails to load is skipped and counted: see
 * ws_registry_broken (the first one's error in *first). */
int ws_registry_scan(ws_registry *r, ws_error *err);
size_t ws_registry_broken(const ws_registry *r, const char **first);

/* Find a BSO/PLO by name: a bare name (the policy folders are loaded on
 * the first miss; a name two plugins define is an error), a path to a .so
 * (contains a '/' or ends in ".so"), which is then loaded and must define
 * exactly one BSO (resp. PLO) or one named after the file's stem,
 * FILE.so:NAME, the policy NAME of that file, or py:MODULE:CLASS, a
 * Python class served by the Python bridge (docs/python.md): the
 * interpreter of this process, or one started in it (WATTSIM_PYTHON). */
const ws_bso_type *ws_registry_bso(ws_registry *r, const char *name, ws_error *err);
const ws_plo_type *ws_registry_plo(ws_registry *r, const char *name, ws_error *err);

size_t ws_registry_n_bso(const ws_registry *r);
size_t ws_registry_n_plo(const ws_registry *r);
const ws_bso_type *ws_registry_bso_at(const ws_registry *r, size_t i);
const ws_plo_type *ws_registry_plo_at(const ws_registry *r, size_t i);
const char *ws_registry_bso_file(const ws_registry *r, size_t i);
const char *ws_registry_plo_file(const ws_registry *r, size_t i);
/* The policy ABI version of the plugin defining policy i (1.0 is 100). */
int ws_registry_bso_abi(const ws_registry *r, size_t i);
int ws_registry_plo_abi(const ws_registry *r, size_t i);

/* The sha256 (64 hex digits) of the .so file that defines descriptor `t`
 * (a ws_bso_type or ws_plo_type of this registry), computed once per file;
 * for a Python policy the sha256 of its module's source file ("" when it
 * has none); "" for a descriptor the registry did not load (one built into
 * wattsim). */
int ws_registry_sha256(ws_registry *r, const void *t, char out[65], ws_error *err);

/*
 * Policies no .so defines ("provided"): a library caller's live objects
 * (wattsim/api.h) and the Python bridge's classes. `key` is the name
 * lookups use ("py:MODULE:CLASS", or "py:@live:N" for a live object);
 * `origin` what provenance shows; `sha256` of its source ("" when none).
 * They are found by key only, never by a bare name. The descriptor must
 * outlive the registry. -1 with err (a bad descriptor, a key taken).
 */
int ws_registry_add_bso(ws_registry *r, const char *key, const ws_bso_type *t,
                        const char *origin, const char *sha256, ws_error *err);
int ws_registry_add_plo(ws_registry *r, const char *key, const ws_plo_type *t,
                        const char *origin, const char *sha256, ws_error *err);
/* Add the Python class `spec` ("py:MODULE:CLASS") as whichever kind it
 * is (for `policy check`). */
int ws_registry_load_python(ws_registry *r, const char *spec, ws_error *err);
/* A BSO named by a server's URL, "http://HOST:PORT" (a client of Zeus's
 * batch-size optimizer API), is provided by a layer above the engine
 * (sim/src/serve, which the CLI installs): fn returns a descriptor for the
 * spec that lives as long as the process, or NULL with err. Such a BSO is
 * added under its spec as a provided one (serial, like Python's). Without
 * one installed, an http:// spec is an error naming the build option. */
typedef const ws_bso_type *(*ws_http_bso_fn)(const char *spec, ws_error *err);
void ws_registry_set_http_bso(ws_http_bso_fn fn);
/* Nonzero when descriptor t runs Python (provided): its calls must not
 * run in two threads at once, and a sweep serialises its simulations. */
int ws_registry_serial(const ws_registry *r, const void *t);
/* Where descriptor t comes from: its .so's path, or a provided one's
 * origin ("MODULE.CLASS from FILE"); "" when t is not this registry's. */
const char *ws_registry_origin(const ws_registry *r, const void *t);

/* ------------------------------------------------------------ instances */

typedef struct ws_bso ws_bso;
typedef struct ws_plo ws_plo;

/* Where a pair of instances runs ("v100/squad eta 0.5 beta 2"), for the
 * policies' log lines: "wattsim: bso NAME [WHERE, seed S, recurrence R try
 * A]: LEVEL: MESSAGE". Either instance may be NULL. */
void ws_policy_log_where(ws_bso *b, ws_plo *p, const char *where);

/* The series ws_host.forecast reads for both instances (either may be
 * NULL), on a clock whose 0 is Unix time `origin`: the engine binds the
 * what-if's series for a simulation and unbinds them (NULLs) after it, so
 * that a forecast outside a simulation is NAN, never a stale series. */
struct ws_series;
void ws_policy_set_forecast(ws_bso *b, ws_plo *p, const struct ws_series *carbon,
                            const struct ws_series *price, double origin);

/* Log level for policies' host->log (default WS_LOG_WARN, to stderr). */
void ws_policy_set_log_level(int level);

/* Create an instance whose random stream is seeded from `seed`. */
ws_bso *ws_bso_new(const ws_bso_type *t, const ws_value *params,
                   unsigned long seed, ws_error *err);
void ws_bso_free(ws_bso *b);
/* "bso NAME" / "plo NAME", for messages. */
const char *ws_bso_who(const ws_bso *b);
const char *ws_plo_who(const ws_plo *p);
ws_plo *ws_plo_new(const ws_plo_type *t, const ws_value *params,
                   unsigned long seed, ws_error *err);
void ws_plo_free(ws_plo *p);
/* Random draws an instance has made through its host so far (Gaussian;
 * uniform and uniform-integer): what the benchmark's floor replays. */
void ws_bso_draws(const ws_bso *b, unsigned long *gaussian, unsigned long *uniform);
void ws_plo_draws(const ws_plo *p, unsigned long *gaussian, unsigned long *uniform);
/* The guards are entered while an instance exists (the working folder
 * noted, ws_policy_guards); a caller that creates many instances in a row
 * (a sweep) holds them for the whole run, so that each instance does not
 * note and restore the folder (three system calls) again. Calls nest;
 * release once per hold. */
void ws_policy_hold(void);
void ws_policy_release(void);

/* Checked calls. Return 0, or -1 with err naming policy and call. The
 * predict calls return the batch-size index (resp. knob index) of the
 * answer; *knob = -1 for WS_PL_UNKNOWN. `ctx` is passed on to a version-2
 * plugin (a version-1 plugin is called without it). */
int ws_bso_register(ws_bso *b, const ws_job *job, const ws_ctx *ctx, ws_error *err);
int ws_bso_predict(ws_bso *b, const ws_job *job, const ws_ctx *ctx, int *bs_index,
                   ws_error *err);
int ws_bso_observe(ws_bso *b, const ws_job *job, const ws_ctx *ctx, int bs,
                   double cost, int reached, ws_error *err);
int ws_plo_register(ws_plo *p, const ws_job *job, const ws_ctx *ctx, ws_error *err);
int ws_plo_predict(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs_index,
                   int *knob, ws_error *err);
int ws_plo_observe_profile(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs,
                           int pl, double epoch_cost, ws_error *err);
int ws_plo_observe_run(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs,
                       int pl, double cost, int reached, ws_error *err);

/* A context for a simulation of `recurrences` planned recurrences: this
 * host's version and size, position 0, no run, carbon intensity and price
 * NAN, no clock (now_s and due_s NAN, every_s and defer_s 0). */
void ws_ctx_init(ws_ctx *c, long recurrences);
/* Reset the run and profile members (to 0 / NAN) before the next call. */
void ws_ctx_clear_run(ws_ctx *c);

#endif
