/* One JSON writer: every JSON document wattsim writes (simulate, pareto,
 * plan, run, sweep's summary.json, the API's results) goes through it, so
 * quoting, numbers and nesting are right by construction.
 *
 *   ws_jw w; ws_jw_init(&w, f);
 *   ws_jw_begin_object(&w);
 *   ws_jw_key(&w, "gpu"); ws_jw_string(&w, "A40");
 *   ws_jw_key(&w, "runs"); ws_jw_int(&w, 3);
 *   ws_jw_end_object(&w);            -> {"gpu": "A40", "runs": 3}
 *
 * Layout (kept from the hand-written outputs, which tests and users diff):
 * members and elements are separated by ", ", a key by ": ". An array
 * opened with ws_jw_begin_array_lines puts each element on its own line,
 * indented by two blanks (w.indent), and its closing bracket on a line of its own
 * (when it has elements).
 *
 * Strings: escaped per RFC 8259: `"` and `\` with a backslash, control
 * bytes (< 0x20) as \u00XX; other bytes as they are (our strings are
 * UTF-8 names and paths).
 *
 * Numbers: finite doubles as %.17g, which reads back to the same double
 * (exact round trip; the shortest text would change every output).
 * Non-finite numbers never reach the output: NaN and +-inf are written
 * as null, and an infinity is reported through ws_output_bad_number (the
 * command then fails with one line, see wattsim/error.h). A NaN is the
 * house's "not defined" (e.g. the time to accuracy of a knob that never
 * reached it) and is null by design.
 *
 * Errors: ws_jw_error() is nonzero once a write failed or the nesting
 * was wrong (a key outside an object, an end without a begin, too deep);
 * the caller still checks fflush/fclose of its FILE as before. */
#ifndef WATTSIM_JSON_WRITER_H
#define WATTSIM_JSON_WRITER_H

#include <stdio.h>

#define WS_JW_MAX_DEPTH 32

typedef struct ws_jw {
    FILE *f;
    int depth;
    int err;
    const char *indent;                /* before an element of lines: "  " */
    int after_key;                     /* a key was written, its value is next */
    unsigned char n[WS_JW_MAX_DEPTH];  /* per level: 0 no member yet, 1 some */
    unsigned char kind[WS_JW_MAX_DEPTH]; /* '{', '[', 'L' (lines) or 'R' (rows) */
} ws_jw;

void ws_jw_init(ws_jw *w, FILE *f);
void ws_jw_begin_object(ws_jw *w);
void ws_jw_end_object(ws_jw *w);
void ws_jw_begin_array(ws_jw *w);
void ws_jw_begin_array_lines(ws_jw *w);
/* Elements on lines of their own as begin_array_lines, the closing
 * bracket right after the last (the API's lists, trace import's rows). */
void ws_jw_begin_array_rows(ws_jw *w);
void ws_jw_end_array(ws_jw *w);
void ws_jw_key(ws_jw *w, const char *key);
void ws_jw_string(ws_jw *w, const char *s);   /* NULL: null */
void ws_jw_number(ws_jw *w, double x);
/* Measured figures meant to be read (wattsim-bench's timings): x with
 * `decimals` digits after the point ("%.*f"), or %g's 6 significant
 * digits; non-finite as ws_jw_number does (null). */
void ws_jw_fixed(ws_jw *w, int decimals, double x);
void ws_jw_g(ws_jw *w, double x);
void ws_jw_int(ws_jw *w, long long x);
void ws_jw_uint(ws_jw *w, unsigned long long x);
/* A value already written as JSON by another writer (n bytes of text,
 * copied as they are): the API's envelope around a command's result. */
void ws_jw_raw(ws_jw *w, const char *text, size_t n);
void ws_jw_bool(ws_jw *w, int b);
void ws_jw_null(ws_jw *w);
/* Shorthands: key then value. */
void ws_jw_kstring(ws_jw *w, const char *key, const char *s);
void ws_jw_knumber(ws_jw *w, const char *key, double x);
void ws_jw_kint(ws_jw *w, const char *key, long long x);
void ws_jw_kbool(ws_jw *w, const char *key, int b);
/* Ends a document: a newline after the top-level value. */
void ws_jw_newline(ws_jw *w);
int ws_jw_error(const ws_jw *w);

/* The primitives alone, for a caller that writes its own layout. */
void ws_jw_write_string(FILE *f, const char *s);
void ws_jw_write_number(FILE *f, double x);

#endif
