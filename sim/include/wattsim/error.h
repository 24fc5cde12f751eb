/*
 * Error reporting: every failure in wattsim becomes one line of text that
 * names where it happened (FILE:LINE[:COL], or the policy and call) and what
 * is wrong. Library functions fill a ws_error and return nonzero; only the
 * CLI prints it and picks the exit status (2).
 */
#ifndef WATTSIM_ERROR_H
#define WATTSIM_ERROR_H

#include <stdarg.h>

#define WS_ERROR_MAX 512

typedef struct ws_error {
    char msg[WS_ERROR_MAX];
} ws_error;

/* Set err->msg from a printf format; always returns -1 so callers can
 * `return ws_fail(err, ...)`. err may be NULL. Newlines are replaced by
 * spaces so the message stays one line. */
int ws_fail(ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int ws_vfail(ws_error *err, const char *fmt, va_list ap);

/* Prefix an existing message: "PREFIX: old message". Returns -1. */
int ws_fail_prefix(ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
