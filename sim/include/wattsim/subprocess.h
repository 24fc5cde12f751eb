/*
 * Running a function in a child process that cannot take this one down:
 * fork, the child in a process group of its own with its stdout and
 * stderr on pipes and a third pipe for what it reports; the parent reads
 * all three as they come, kills the child's whole group when it overruns
 * its time, and reaps it. For `policy check`, where any check may crash,
 * hang or print in a plugin's code; nothing here knows about policies.
 */
#ifndef WATTSIM_SUBPROCESS_H
#define WATTSIM_SUBPROCESS_H

#include <stddef.h>
#include "wattsim/error.h"

/* One stream of the child: its first `cap` bytes (NUL-terminated) and how
 * many it wrote in all. */
typedef struct ws_sub_stream {
    char *data;
    size_t len;                /* bytes kept, <= cap */
    size_t total;              /* bytes written */
} ws_sub_stream;

typedef struct ws_sub_result {
    int status;                /* waitpid's status */
    int killed;                /* the parent killed it at its time limit */
    ws_sub_stream out, err;    /* its stdout and stderr */
    ws_sub_stream report;      /* what fn wrote to its report descriptor */
} ws_sub_result;

/* Runs in the child: write what it finds to `fd` (a pipe); the return
 * value is the child's exit status. */
typedef int (*ws_sub_fn)(void *arg, int fd);

/*
 * Run fn(arg, fd) in a forked child (stdin /dev/null, fd 1 and 2 each a
 * pipe to the parent, exit status fn's; its stdout and stderr flushed,
 * then _exit: no atexit handlers, and no other stream, whose buffer is a
 * copy of the parent's, flushed; the parent flushes its streams before the
 * fork). The
 * parent kills the child's process group `limit` seconds after the start
 * (0: never) and as soon as the child has ended (whatever it spawned goes
 * with it). Each stream keeps at most `cap` bytes. While the child runs,
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT are caught (wattsim/stopsig.h): on
 * one, the child's group is killed and reaped, the signal's earlier action
 * restored and the signal raised again (the CLI's handler ends the
 * process); should that return, -1 with err "interrupted by SIGTERM".
 * Returns 0 with *r filled (free with ws_sub_result_free), or -1 with err
 * when the child cannot be started.
 */
int ws_sub_run(ws_sub_fn fn, void *arg, double limit, size_t cap, ws_sub_result *r,
               ws_error *err);
void ws_sub_result_free(ws_sub_result *r);

/* How the child ended, for a message: "exited with status 3", "was killed
 * by signal 11 (SIGSEGV)", "was killed at its time limit of 2 s". "" when
 * it exited with status 0. */
void ws_sub_describe(const ws_sub_result *r, double limit, char *buf, size_t size);

/* "SIGSEGV" for 11, ..., "signal N" for one without a name here. */
const char *ws_signal_name(int sig, char buf[16]);

#endif
