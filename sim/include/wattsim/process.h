/*
 * What a process must settle before it does anything else, because the
 * environment it was started in (cron, a daemon, a shell with `ulimit -f`)
 * or a plugin sharing it could otherwise change what it writes:
 *  - closed standard descriptors: a file opened later would get 0, 1 or 2
 *    and receive what was meant for stdout or stderr;
 *  - SIGXFSZ: past `ulimit -f` its default action kills the process with
 *    half-written temporaries left; ignored, the write fails with EFBIG and
 *    is reported as any write error;
 *  - SIGPIPE: a reader that went away (`wattsim sweep ... 2>&1 | head`)
 *    would kill the process mid-run by its default action; ignored, the
 *    write fails with EPIPE, the command completes its outputs and ends
 *    with 128 + SIGPIPE (ws_cli_exit);
 *  - the locale: a plugin calling setlocale(LC_ALL, "") would make printf
 *    write, and strtod expect, a decimal comma in every thread. Each thread
 *    of wattsim uses the C locale of its own (uselocale), which setlocale
 *    does not change;
 *  - stdout: policy code shares the process's descriptor 1 and stdio's
 *    `stdout` -- its printf, a Python policy's print, a progress bar or a
 *    logging thread it started, at any time, from any thread -- and would
 *    write into the results. A command-line program writes its results to
 *    a private duplicate of the descriptor it was given as stdout, and
 *    points descriptor 1 at stderr for the whole run (ws_stdout_private).
 *    The library (wattsim/api.h) leaves the descriptors of the program
 *    that embeds it alone.
 */
#ifndef WATTSIM_PROCESS_H
#define WATTSIM_PROCESS_H

#include <stdio.h>

/* First thing in main: open /dev/null on any of descriptors 0-2 that is
 * closed, ignore SIGXFSZ and SIGPIPE, and put this thread in the C locale
 * (ws_thread_c_locale). Returns 0, or -1 when a closed descriptor could not
 * be filled (the caller cannot even report that reliably: it exits). */
int ws_process_init(void);

/* The calling thread formats and parses numbers in the C locale whatever
 * the process's locale (setlocale) becomes: for every thread wattsim
 * starts, first thing. */
void ws_thread_c_locale(void);

/* For a command-line program, after ws_process_init: a stream for its
 * results on a duplicate of descriptor 1 (close-on-exec: no child gets
 * it), then descriptor 1 pointed at stderr, so that anything else written
 * to stdout (stdio's `stdout`, fd 1) goes to stderr from now on. Returns
 * the stream, or NULL with errno set (nothing changed). */
FILE *ws_stdout_private(void);

/* A module's lock that a process forked while another thread held it
 * must find free: the child has only the forking thread, so the lock
 * would stay held for ever. WS_FORK_SAFE_MUTEX(name) defines the static
 * mutex `name` and registers it when the library loads; a pthread_atfork
 * child handler gives each registered lock back unheld. What the lock
 * guards must be whole whenever it is free (a child of a fork mid-update
 * sees the table as the holder left it: the modules that use this keep
 * only caches, which a child may lose). */
#include <pthread.h>
void ws_mutex_fork_safe(pthread_mutex_t *m);
#define WS_FORK_SAFE_MUTEX(name)                                                   \
    static pthread_mutex_t name = PTHREAD_MUTEX_INITIALIZER;                       \
    __attribute__((constructor)) static void name##_fork_safe(void) { ws_mutex_fork_safe(&name); }

#endif
