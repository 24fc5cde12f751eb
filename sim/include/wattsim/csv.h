/*
 * A strict CSV reader for trace files (RFC 4180 subset): comma-separated,
 * optional double quotes around a field ("" inside quotes is a quote), LF or
 * CRLF line ends, an optional UTF-8 byte-order mark. The file may be plain
 * or gzip-compressed; zlib reads both transparently.
 *
 * It guards against hostile input: a line longer than max_line bytes, more
 * than max_bytes decompressed, a truncated or corrupt gzip stream, NUL
 * bytes and invalid UTF-8 are errors naming FILE:LINE.
 */
#ifndef WATTSIM_CSV_H
#define WATTSIM_CSV_H

#include <stddef.h>
#include <stdio.h>
#include "wattsim/error.h"

typedef struct ws_csv_limits {
    size_t max_line;      /* bytes per record; default 1 MiB */
    size_t max_bytes;     /* decompressed bytes per file; default 1 GiB */
} ws_csv_limits;

#define WS_CSV_MAX_LINE_DEFAULT ((size_t)1 << 20)
#define WS_CSV_MAX_BYTES_DEFAULT ((size_t)1 << 30)

/* The limits a user sets: `opt` (--max-trace-bytes, or the library's
 * option of that name), else $WATTSIM_MAX_TRACE_BYTES, a positive number
 * of bytes with an optional K, M or G; neither: the defaults (0s). The
 * error names where the value came from. One parser for every front end. */
int ws_csv_limits_parse(const char *opt, ws_csv_limits *out, ws_error *err);

typedef struct ws_csv ws_csv;

/* Open `path`; lim may be NULL for the defaults. */
ws_csv *ws_csv_open(const char *path, const ws_csv_limits *lim, ws_error *err);
/* Read the next record: 1 = a record, 0 = end of file, -1 = error. Blank
 * lines are skipped. */
int ws_csv_next(ws_csv *c, ws_error *err);
size_t ws_csv_nfields(const ws_csv *c);
const char *ws_csv_field(const ws_csv *c, size_t i);
long ws_csv_line(const ws_csv *c);       /* line number of the record */
/* Whether the record ended with a line end (0: the file ended inside it,
 * as a logger killed mid-write leaves its last line). */
int ws_csv_ended(const ws_csv *c);
const char *ws_csv_path(const ws_csv *c);
/* Telemetry logs: a file that ends in NUL bytes (nothing else after the
 * first) ends there -- what a logger killed mid-write leaves -- instead of
 * being an error; the record they cut is not ended (ws_csv_ended). */
void ws_csv_allow_nul_tail(ws_csv *c);
/* The line where such a tail began (0: none), and its bytes in *count. */
long ws_csv_nul_tail(const ws_csv *c, size_t *count);
void ws_csv_close(ws_csv *c);

/* The value of decimal number s ([+-]digits[.digits][(e|E)[+-]digits],
 * checked by the caller) as pandas 1.5's pd.read_csv reads it by default,
 * which is not always the nearest double (io/pd_float.c): trace files are
 * read so, to compute with the published simulator's numbers. */
double ws_pd_strtod(const char *s);
/* Whether s looks like plain decimal notation, [-]digits[.digits][e[+-]
 * digits] (strtod alone would also take spaces, '+', hex and "inf"; the
 * caller still checks that strtod takes all of it). */
int ws_csv_is_decimal(const char *s);

/* Write s as one CSV field, quoted only when it needs it. */
void ws_csv_str(FILE *f, const char *s);

#endif
