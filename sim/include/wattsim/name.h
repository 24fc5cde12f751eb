/*
 * Safe names. Every name that becomes part of a file name (workload, GPU
 * and job names from configs, catalogues and options; the base name of a
 * --plot image) must be 1 to WS_NAME_MAX characters from [A-Za-z0-9._+-]
 * and must not start with a dot: no separators, no hidden files, no "." or
 * "..", nothing a shell or gnuplot would read as syntax. Readers refuse
 * other names where they meet them (FILE:LINE:COL, or the option).
 */
#ifndef WATTSIM_NAME_H
#define WATTSIM_NAME_H

#include <stddef.h>

#define WS_NAME_MAX 64

/* The rule, for messages. */
#define WS_NAME_RULE "use 1-64 characters from A-Z a-z 0-9 . _ + -, not starting with '.'"

/* 0 when `s` is a safe name; else -1 with what is wrong in `why` (e.g.
 * "contains '/'"; at most `size` bytes). */
int ws_name_check(const char *s, char *why, size_t size);

/*
 * Labels: the dataset, network and optimizer of a trace row (which need
 * not name a file, but are printed in tables, CSV and messages, and typed
 * as --job DATASET/NETWORK/OPTIMIZER): 1 to WS_LABEL_MAX bytes, no control
 * character (C0, DEL, C1, a Unicode bidirectional control, U+2028 or
 * U+2029: nothing that moves a terminal's cursor, splits a line or
 * reorders it), no '/' (the --job separator), ',', '"' or backslash (so
 * that a label reads the same in CSV, JSON and a message as typed).
 * 0, or -1 with what is wrong in `why`.
 */
#define WS_LABEL_MAX 128
#define WS_LABEL_RULE "use 1-128 bytes without control characters, '/', ',', '\"' or '\\'"
int ws_label_check(const char *s, char *why, size_t size);

/*
 * Paths of outputs (--out, a config's `out:`, --plot and the like): any
 * folder a user may name, so '/', blanks and non-ASCII letters are fine,
 * but the path is printed ("outputs in DIR/") and becomes a folder's name:
 * 1 to WS_PATH_MAX bytes of well-formed UTF-8 with no control character
 * (as labels: C0, DEL, C1, a Unicode bidirectional control, U+2028 or
 * U+2029). 0, or -1 with what is wrong in `why`.
 */
#define WS_PATH_MAX 4095
#define WS_PATH_RULE "use well-formed UTF-8 without control characters (C0, DEL, C1) or" \
                     " Unicode bidirectional controls"
int ws_path_check(const char *s, char *why, size_t size);

/* Nonzero when s holds a control character (C0, DEL, C1, a Unicode
 * bidirectional control, U+2028 or U+2029). */
int ws_has_control(const char *s);

/* Text from an input, made safe to print in a message or a table: as
 * ws_text_escape (wattsim/error.h) into buf, cut to size. Returns buf. */
const char *ws_name_show(const char *s, char *buf, size_t size);

#endif
