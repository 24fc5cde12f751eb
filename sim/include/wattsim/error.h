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
 * `return ws_fail(err, ...)`. err may be NULL. The message is escaped as
 * ws_text_escape does, so that it stays one line whatever it quotes. */
int ws_fail(ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int ws_vfail(ws_error *err, const char *fmt, va_list ap);

/* "s" unless n is 1, for a count in a message to agree with its noun:
 * ("%zu field%s", n, ws_s(n)): "1 field", "2 fields", "0 fields". */
static inline const char *ws_s(unsigned long long n) { return n == 1 ? "" : "s"; }

/* Prefix an existing message: "PREFIX: old message". Returns -1. */
int ws_fail_prefix(ws_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * The one place where text bound for a terminal is made safe: every byte
 * of src that is a control character (C0, DEL, or part of a C1 control
 * U+0080..U+009F), part of a Unicode bidirectional control (U+061C,
 * U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) or of U+2028/U+2029
 * (ws_text_unsafe), or not part of well-formed UTF-8 is written as \xHH
 * ("a\nb" becomes `a\x0Ab`, U+202E `\xE2\x80\xAE`), the rest as it is. A message quoting a name,
 * a path or a plugin's text so stays one line and cannot drive the
 * terminal. The result is cut at a whole character or escape to fit size
 * (> 0) bytes with its NUL; returns its length. Escaping twice changes
 * nothing.
 */
size_t ws_text_escape(char *dst, size_t size, const char *src);
/* Is the well-formed UTF-8 sequence of n bytes at s one that
 * ws_text_escape escapes (and names refuse: wattsim/name.h)? */
int ws_text_unsafe(const unsigned char *s, size_t n);
/* Length of the well-formed UTF-8 sequence at s (no overlongs, no
 * surrogates, at most U+10FFFF), or 0 if there is none. */
size_t ws_utf8_len(const unsigned char *s);

/* Print one line on stderr: the printf-formatted text, escaped as above,
 * and a newline, in one write. Every message, warning and note of wattsim
 * that is not a ws_error goes through here (a ws_error is escaped when it
 * is set). */
void ws_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ws_vline(const char *fmt, va_list ap);

/* Where those lines go instead, for a library call (api.c): fn receives
 * each line, escaped, without its newline, one at a time (under a lock:
 * sweep threads may note at once), in the process that set it only (a
 * forked child's lines go to its stderr, which its parent reads). fn NULL:
 * stderr again. */
typedef void (*ws_line_sink_fn)(void *ctx, const char *line);
void ws_line_sink(ws_line_sink_fn fn, void *ctx);

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
