/*
 * wattsim's library API: the commands of the `wattsim` CLI as calls that
 * return JSON, for programs in C and other languages. The Python package
 * (python/wattsim, docs/python.md) binds this and nothing else, with
 * ctypes. Built into libwattsim.so.
 *
 * A call is a command and its options, named and checked as on the command
 * line (`wattsim COMMAND --help`, docs/commands.md), without the dashes:
 *
 *     ws_api_call *c = ws_api_call_new("simulate");
 *     ws_api_set(c, "workload", "squad");
 *     ws_api_set(c, "eta", "0.3");
 *     char *json = NULL;
 *     if (ws_api_run(c, NULL, &json) == WS_API_OK) puts(json);
 *     else fprintf(stderr, "%s\n", ws_api_error(c));
 *     ws_api_free(json);
 *     ws_api_call_free(c);
 *
 * Commands, and what the result's "result" member holds (the CLI's own
 * JSON, docs/outputs.md, or its CSV as text where the CLI writes CSV):
 *   simulate            `wattsim simulate --format json`
 *   run                 {"cells": summary.json, "history_csv": history.csv}
 *                       (option "config", the CONFIG operand; no files are
 *                       written)
 *   pareto              `wattsim pareto --format json`
 *   plan                `wattsim plan --format json`
 *   sweep               {"summary": sweep.json, "curves_csv": curves.csv or
 *                       null, "history_csv": history.csv or null} (options
 *                       as `wattsim sweep`'s; "config" optional; "curves"
 *                       and "keep-history" flags; no files are written)
 *   trace-check         `wattsim trace check DIR --format json` (option "dir")
 *   trace-import-power  {"rows": [...], "gpus": [...], "warnings": [...],
 *   trace-import-train   "written": PATH or null}: the rows of the
 *                       summary_*.csv `wattsim trace import` writes (written
 *                       only with option "out")
 *   workloads, gpus, policies   what `wattsim list ...` lists
 * Options given more than once (set, bso-param, allow-plugins, ...) are
 * set once per value; a flag (keep-history, isolate, force, ...) takes "1"
 * (or "", "true") and "0" ("false").
 *
 * The JSON is one object: {"provenance": {...}, "notes": [...], "result":
 * ...}. "notes" are the lines the CLI would print on stderr besides its
 * error (notes, warnings, a --verbose policy's log; the first 1000, then
 * a count): a library call prints none of them (a failed call, having no
 * result, still prints them on stderr). The
 * provenance records what the CLI's outputs record and what a result in a
 * notebook needs to be traced back: the wattsim version, API, policy
 * ABI and random streams versions, the command and its options as given,
 * the trace folder and the sha256 of each trace file read, the catalogue
 * and its sha256, the what-ifs and the sha256 of a carbon or price series
 * ("series"), each policy pair (label, resolved
 * parameters, the sha256 of its .so or Python module, its origin, and
 * bso_file/plo_file as the outputs name it: "built-in" or the origin) and the
 * folders and packages --allow-plugins / --allow-python allowed.
 *
 * Errors: the status says what kind, ws_api_error() the one line the CLI
 * would print (without "wattsim: "). A call changes no state of the
 * process: no signal handler, no descriptor (a policy's stdout is not
 * redirected), no locale (the calling thread formats numbers in the C
 * locale during the call only), no exit(); files are written only where
 * an option says (trace import's "out"). Calls run one at a time per
 * process (a second thread's call waits); a call made from inside a
 * call's policy or hook fails with WS_API_MISUSE at once, on whichever
 * thread it runs (the calling thread, or a sweep's worker running policy
 * code); a thread policy code started itself is not known, and waits.
 * In a process forked while another thread was inside a call, every call
 * fails with WS_API_MISUSE at once (a pthread_atfork child handler: the
 * library's state there is that call's, half-way); a process forked
 * between calls calls as usual. See docs/safety.md, "Re-entrancy and fork".
 *
 * Stability: SQLite's rule. WS_API_VERSION grows when something is
 * added; functions, status codes, struct members, commands, options and
 * JSON fields are only ever appended, never changed or removed.
 */
#ifndef WATTSIM_API_H
#define WATTSIM_API_H

#include <stddef.h>

#include "wattsim/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WS_API_VERSION 1

/* The API version and the wattsim version ("0.1.0") of the library. */
int ws_api_version(void);
const char *ws_api_wattsim_version(void);

typedef enum ws_api_status {
    WS_API_OK = 0,
    WS_API_INPUT = 1,      /* bad input: what the CLI exits 2 for */
    WS_API_FAILED = 2,     /* a simulation failed, not by a policy's fault
                              (b0 never reaching the target, ...) */
    WS_API_POLICY = 3,     /* a policy failed: an error return, a wrong
                              answer, a Python exception; the message
                              names the policy and the call */
    WS_API_CANCELLED = 4,  /* a hook asked to stop */
    WS_API_MISUSE = 5,     /* unknown command or option, a call within a
                              call, a NULL argument */
    WS_API_NOMEM = 6,      /* out of memory */
    WS_API_IO = 7          /* writing an output failed */
} ws_api_status;

typedef struct ws_api_call ws_api_call;

/* A new call of `command` (see above); NULL when the command is unknown
 * or memory is short. */
ws_api_call *ws_api_call_new(const char *command);
void ws_api_call_free(ws_api_call *c);

/* Set option `option` (e.g. "eta", "bso-param", "power-cap") to `value`.
 * Most checks happen when the call runs, as the CLI makes them; an option
 * the command does not have is WS_API_MISUSE at once. */
int ws_api_set(ws_api_call *c, const char *option, const char *value);

/*
 * A policy the caller implements (a live object: the Python package's
 * adapters), through the plugin ABI's descriptor (wattsim/policy.h),
 * valid until the call is freed. Its name for the options ("bso", "plo",
 * "policies") is written into key (at least 32 bytes): "py:@live:N".
 * `origin` (what provenance shows, e.g. "mylab.policies.MyBSO") and
 * `sha256` (of its source, or "") may be NULL. Its calls are serialised
 * like those of Python policies: a sweep never runs two of its
 * simulations at once, and never in a forked child (isolate). Returns
 * WS_API_OK, or WS_API_INPUT when the descriptor is malformed (checked
 * when the call runs: the message names it).
 */
int ws_api_add_bso(ws_api_call *c, const ws_bso_type *t, const char *origin,
                   const char *sha256, char *key, size_t key_size);
int ws_api_add_plo(ws_api_call *c, const ws_plo_type *t, const char *origin,
                   const char *sha256, char *key, size_t key_size);

/*
 * What the library calls back while a call runs, always on the calling
 * thread: progress(ctx, done, total) after each simulation and, while
 * simulations run, about every 0.1 s (done and total count simulations,
 * or runs of a single simulation); a nonzero return stops the call
 * (WS_API_CANCELLED). `cancel`, when not NULL, is polled as often: a
 * nonzero value stops the call too (for a caller on another thread).
 * A policy that never returns is not stopped by either (in a sweep with
 * "isolate", "cell-timeout" stops it).
 */
typedef struct ws_api_hooks {
    unsigned size;                     /* sizeof(ws_api_hooks) of the caller */
    int (*progress)(void *ctx, double done, double total);
    void *ctx;
    const volatile int *cancel;
} ws_api_hooks;

/* Run the call (once). hooks may be NULL. On WS_API_OK, *json is the
 * result, to free with ws_api_free; otherwise *json is NULL and
 * ws_api_error() says why. */
int ws_api_run(ws_api_call *c, const ws_api_hooks *hooks, char **json);

/* The last error of the call: one line ("" when there was none). */
const char *ws_api_error(const ws_api_call *c);

void ws_api_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
