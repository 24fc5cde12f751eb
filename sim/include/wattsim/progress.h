/*
 * Progress of a long command on stderr: on a terminal a bar redrawn in
 * place (done/total, rate, time left), otherwise a plain line every 10 s;
 * nothing at all in the first second (short commands stay silent), and
 * nothing with ws_progress_set_quiet(1) (--quiet) or WATTSIM_QUIET set to
 * anything but "" or "0" (the test suite sets it: checks of stderr must
 * not depend on how fast the machine is). Not thread-safe: a
 * caller with threads steps it under its own lock.
 */
#ifndef WATTSIM_PROGRESS_H
#define WATTSIM_PROGRESS_H

#include <stddef.h>

typedef struct ws_progress {
    const char *what;          /* "simulations" */
    size_t total, done;
    double t0, next;           /* start; when to draw next (monotonic s) */
    int mode;                  /* 0 silent, 1 terminal bar, 2 lines */
    int drawn;                 /* a bar is on the terminal */
} ws_progress;

/* Process-wide: 1 silences every progress display (--quiet). */
void ws_progress_set_quiet(int quiet);

void ws_progress_start(ws_progress *p, const char *what, size_t total);
/* n more units done. */
void ws_progress_step(ws_progress *p, size_t n);
/* Clear the bar (a terminal) or print the last line (when any was). */
void ws_progress_end(ws_progress *p);

#endif
