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
 * character (C0, DEL or C1: nothing that moves a terminal's cursor or
 * splits a line), no '/' (the --job separator), ',', '"' or backslash (so
 * that a label reads the same in CSV, JSON and a message as typed).
 * 0, or -1 with what is wrong in `why`.
 */
#define WS_LABEL_MAX 128
#define WS_LABEL_RULE "use 1-128 bytes without control characters, '/', ',', '\"' or '\\'"
int ws_label_check(const char *s, char *why, size_t size);

/* Nonzero when s holds a control character (C0, DEL or C1). */
int ws_has_control(const char *s);

/* Text from an input, made safe to print in a message or a table: as
 * ws_text_escape (wattsim/error.h) into buf, cut to size. Returns buf. */
const char *ws_name_show(const char *s, char *buf, size_t size);

#endif
