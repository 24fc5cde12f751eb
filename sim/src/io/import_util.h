/*
 * Helpers private to the importers (sim/src/io/import_*.c).
 */
#ifndef WATTSIM_IMPORT_UTIL_H
#define WATTSIM_IMPORT_UTIL_H

#include <stddef.h>
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/hash.h"
#include "wattsim/outfile.h"

/* Strip blanks and tabs at both ends, in place. */
char *ws_imp_trim(char *s);
/* A finite decimal number ([+-]digits[.digits][e[+-]digits]); 0 or -1. */
int ws_imp_decimal(const char *s, double *v);
/* A positive integer <= max written with digits only; 0 or -1. */
int ws_imp_posint(const char *s, long max, long *v);

/* A header column looked up by name (trimmed). */
typedef struct ws_imp_col {
    const char *name;
    int required;
    int index;             /* -1 when absent */
} ws_imp_col;

/* Map the current record (the header) onto cols. strict: an unknown
 * column is an error; else it is ignored. */
int ws_imp_columns(ws_csv *c, ws_imp_col *cols, size_t n, int strict,
                   ws_error *err);

/* Read the header of a CSV table into cols (strictly): an empty file is
 * "PATH:1: empty file (expected EXPECT)". 0 or -1. */
int ws_imp_header(ws_csv *c, const char *path, const char *expect,
                  ws_imp_col *cols, size_t n, ws_error *err);
/* The current record has the header's nf fields. 0 or -1 ("PATH:LINE"). */
int ws_imp_row_width(ws_csv *c, const char *path, size_t nf, ws_error *err);
/* Room for element n of arr (elements of `size` bytes, *cap of them),
 * doubling from `first`: the array, moved or not, or NULL when out of
 * memory (arr is then left as it was, still to be freed). */
void *ws_imp_grow(void *arr, size_t *cap, size_t n, size_t size, size_t first,
                  ws_error *err);

/* The warning for a log whose last line, at `cut` (0: none), was skipped
 * as cut short, and for one ending in NUL bytes (ws_csv_allow_nul_tail):
 * a logger killed mid-write. */
struct ws_warnings;
void ws_imp_cut_warning(const ws_csv *c, const char *path, long cut,
                        struct ws_warnings *w);

/* What a telemetry file is, by its first line (import_prom.c). */
typedef enum ws_imp_format {
    WS_IMP_OTHER, WS_IMP_JSON, WS_IMP_PROM, WS_IMP_NVSMI_DMON, WS_IMP_DCGMI_DMON,
    WS_IMP_NVSMI_CSV, WS_IMP_ZEUSMON
} ws_imp_format;
ws_imp_format ws_imp_sniff(const char *path);
/* Whether the file starts with zeus_monitor's header "Time,Power". */
int ws_imp_sniff_zemo(const char *path);
/* nvidia-smi dmon output: refused with the command that converts it
 * (built from its header) or records what can be read. Always -1. */
int ws_imp_refuse_dmon(const char *path, const ws_csv_limits *lim, ws_error *err);
/* dcgmi dmon output: refused (it has no timestamps). Always -1. */
#define WS_IMP_DCGMI_ADVICE "dcgmi dmon output has no timestamps: it cannot be placed" \
    " against the epochs; record DCGM_FI_DEV_POWER_USAGE through dcgm-exporter and" \
    " Prometheus (the JSON of /api/v1/query_range, --dcgm), or with nvidia-smi" \
    " --query-gpu=timestamp,index,power.draw --format=csv -lms 1000 (--nvidia-smi)"

/* Whether the current record (a header) is zeus_monitor's Time,Power. */
int ws_imp_is_zemo(ws_csv *c);

/* "YYYY-MM-DD HH:MM:SS.mmm" of t (seconds read as UTC wall time). */
void ws_imp_fmt_time(double t, char *buf, size_t size);
/* nvidia-smi's "YYYY/MM/DD HH:MM:SS[.fff]", read as if UTC. 0 or -1. */
int ws_imp_nvsmi_time(const char *s, double *t);

/* Where sample `line` of GPU `gpu` in `path` was read: "path:LINE" for
 * CSV logs, "path: gpu G values[K]" for JSON (line = -K-1). */
const char *ws_imp_where(const char *path, long line, const char *gpu,
                         char *buf, size_t size);

/* Distinct strings of an import (dataset, network, ... of every row),
 * each kept once: rows hold pointers into the table, equal names are
 * equal pointers, and lookup is a hash (wattsim/hash.h). */
typedef struct ws_imp_names {
    char **s;
    size_t n, cap;
    ws_hindex index;
} ws_imp_names;

/* The table's copy of s (added when new), or NULL when out of memory;
 * *at (when not NULL) is its index in t->s. */
const char *ws_imp_intern_at(ws_imp_names *t, const char *s, size_t *at);
const char *ws_imp_intern(ws_imp_names *t, const char *s);
void ws_imp_names_free(ws_imp_names *t);

/* Where a dataset, network or optimizer named in an imported row is not a
 * label (wattsim/name.h), or the dataset not a safe name (--job D/N/O
 * names the job after it): "PATH:LINE: COLUMN: what is wrong", -1; else 0. */
int ws_imp_check_name(const char *path, long line, const char *column,
                      const char *value, int is_dataset, ws_error *err);

/* The opening of a row of a per-job table (import power's EPOCHS.csv,
 * import train's METRICS.csv), whose first four columns are dataset,
 * network, optimizer and batch_size: the record has the header's nf
 * fields; f[k] = the field of cols[k] (n of them); the three names are
 * non-empty and pass ws_imp_check_name; *bs = the batch size, a positive
 * integer below 2^30. 0, or -1 with err naming PATH:LINE and the column. */
int ws_imp_job_row(ws_csv *c, const char *path, size_t nf, const ws_imp_col *cols,
                   size_t n, const char **f, long *bs, ws_error *err);

/* Open `path` for an atomic write (ws_outfile_open); its .gz twin
 * existing is an error: the trace reader would find both. */
int ws_imp_open_out(ws_outfile *o, const char *path, ws_error *err);

#endif
