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

#endif
