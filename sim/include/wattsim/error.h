/*
 * Error reporting: every failure in wattsim becomes one line of text that
 * names where it happened (FILE:LINE[:COL], or the policy and call) and what
 * is wrong. Library functions fill a ws_error and return nonzero; only the
 * CLI prints it and picks the exit status (2).
 */
#ifndef WATTSIM_ERROR_H
#define WATTSIM_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define WS_ERROR_MAX 512

typedef struct ws_error {
    char msg[WS_ERROR_MAX];
} ws_error;

/* Set err->msg from a printf format; always returns -1 so callers can
 * `return ws_fail(err, ...)`. err may be NULL. Newlines are replaced by
 * spaces so the message stays one line, and other control characters by
 * \xNN (ws_error_one_line). */
int ws_fail(ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int ws_vfail(ws_error *err, const char *fmt, va_list ap);

/* Make the text at s (a buffer of `size` bytes) one printable line in
 * place, as every message is: line ends become blanks, other control
 * characters \xNN (never echoed raw to a terminal), cut to fit. */
void ws_error_one_line(char *s, size_t size);

/* Prefix an existing message: "PREFIX: old message". Returns -1. */
int ws_fail_prefix(ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Numbers in outputs are finite (README "Output formats"): a value that is
 * undefined by design (a confidence interval of one seed, a mean over no
 * successful seed) is written as an empty field, null or a dash, and beta
 * = inf (early stopping off) as itself; any other inf or nan reaching a
 * writer is a bug. The writers (wattsim/report.h) record it here instead
 * of printing it; every output file's commit (ws_outfile_commit) and the
 * command's exit (status 70) check the record. Thread safe.
 */
#define WS_EXIT_INTERNAL 70            /* EX_SOFTWARE */
void ws_output_bad_number(double x);
/* 0, or -1 with err: "internal error: OUTPUT: a computed number is inf
 * ..." once any writer met a non-finite number. */
int ws_output_check(const char *output, ws_error *err);

#endif
