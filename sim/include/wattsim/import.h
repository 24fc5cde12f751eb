/*
 * Importing your own measurements into Zeus-format traces.
 *
 * Power (`wattsim trace import power`): GPU telemetry -- an nvidia-smi CSV
 * log, a Prometheus range query of DCGM metrics or DCGM exporter scrapes,
 * a ZeusMonitor log, or Zeus's old zeus_monitor log -- is read into
 * per-GPU series (ws_telemetry); other tools' formats (nvidia-smi dmon,
 * dcgmi dmon) are named and refused. EPOCHS.csv says when each
 * measured epoch of each knob ran. Per (dataset, network, optimizer, batch
 * size, power limit):
 *
 *   time_per_epoch = mean over the knob's epochs of (end - start)
 *   average_power  = sum of the epochs' energies / sum of their durations
 *
 * where an epoch's energy is, summed over the selected GPUs,
 *   - power samples (nvidia-smi, DCGM_FI_DEV_POWER_USAGE): the trapezoidal
 *     integral of the piecewise-linear signal through the samples, clipped
 *     to [start, end] (the signal is interpolated at the window edges);
 *   - an energy counter (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ): the
 *     counter's increase over [start, end], linearly interpolated at the
 *     edges; a decrease is a counter reset (driver reload), after which the
 *     increase restarts from 0 (as Prometheus' increase());
 *   - ZeusMonitor windows: of the windows named --window (default: the
 *     name whose windows start with and last as long as the most epochs),
 *     the one whose start_time is within the tolerance of the epoch's
 *     start; its mean power times the epoch's duration. A window whose
 *     elapsed_time differs from the epoch's by more than the tolerance is
 *     an error for that epoch.
 *
 * Judged before use: a GPU of the log (or of --gpus) without a usable
 * reading, a power.limit read during an epoch other than its power_limit,
 * and a GPU drawing more than 5 % above its limit on average over a knob's
 * epochs are refused. Each knob's energy_error (ws_tel_energy_bound) is
 * written with it, and warned about above 1 %.
 *
 * Train (`wattsim trace import train`): per-epoch validation metrics of
 * each run become summary_train.csv rows with the first epoch at which the
 * metric reaches the target (empty when never).
 *
 * Errors name FILE:LINE (for DCGM JSON, FILE:LINE:COL of a syntax error or
 * the JSON path of a bad value); usable oddities (unsorted or repeated
 * samples, [N/A] readings, counter resets) are counted as warnings.
 */
#ifndef WATTSIM_IMPORT_H
#define WATTSIM_IMPORT_H

#include <stddef.h>
#include <stdio.h>
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/hash.h"

/* Warnings collected by an import (one line each). */
typedef struct ws_warnings {
    char **msg;
    size_t n, cap;
} ws_warnings;

void ws_warn(ws_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ws_warnings_free(ws_warnings *w);

/* --------------------------------------------------------- telemetry */

typedef enum ws_tel_kind {
    WS_TEL_POWER,        /* samples are W */
    WS_TEL_ENERGY,       /* samples are a cumulative counter in J */
    WS_TEL_WINDOWS       /* ZeusMonitor: energy per window */
} ws_tel_kind;

typedef struct ws_tel_sample {
    double t;            /* s, on the telemetry's clock */
    double v;            /* W or J (counter) */
    double inc;          /* J drawn since the previous sample (ws_telemetry_prepare) */
    long line;           /* where it was read (0 when not known) */
    double lim;          /* W, the power limit read with it (nvidia-smi
                            power.limit), NAN when not logged */
} ws_tel_sample;

typedef struct ws_tel_gpu {
    char *id;            /* as the log names it: index, bus id, uuid, label */
    ws_tel_sample *s;
    size_t n, cap;
    double interval;     /* median sample interval (ws_telemetry_prepare) */
    size_t repeats;      /* readings dropped as repeats of the previous one */
    long first_repeat;   /* the line of the first (0: none) */
    size_t missing;      /* readings without a value ([N/A], NaN) skipped */
    long first_line;     /* where the GPU first appears in the log */
    char *model;         /* nvidia-smi's `name` column, NULL when not logged */
} ws_tel_gpu;

/* ZeusMonitor: window k's energy on GPU g is gpu[g].s[k].v (J, NAN when
 * the field is empty), its start gpu[g].s[k].t. */
typedef struct ws_tel_window {
    double start, elapsed;   /* Unix s, s */
    long line;
    size_t name;             /* window_name: an index into ws_telemetry.win_name */
} ws_tel_window;

typedef struct ws_telemetry {
    char *path;
    ws_tel_kind kind;
    ws_tel_gpu *gpu;
    size_t n_gpu;
    ws_tel_window *win;      /* WS_TEL_WINDOWS only */
    size_t n_win;
    char **win_name;         /* the distinct window names, in order of appearance */
    size_t n_win_name;
    size_t n_missing;        /* [N/A] / [Not Supported] readings skipped */
    long cut_line;           /* a last line skipped as cut short; 0: none */
    int utc;                 /* a power log whose times are UTC instants
                                (zeus_monitor's): no --log-tz applies */
    size_t gpu_cap;          /* room in gpu */
    ws_hindex gpu_index;     /* gpu by id */
} ws_telemetry;

void ws_telemetry_free(ws_telemetry *t);

/* Add a sample to GPU `id` (created on first use). */
int ws_telemetry_add(ws_telemetry *t, const char *id, double time, double v,
                     long line, ws_error *err);
/* A reading of GPU `id` without a value ([N/A], [Not Supported], NaN):
 * counted on the GPU (created on first use), so that a GPU that appears
 * in the log only so is refused by ws_telemetry_prepare, never dropped. */
int ws_telemetry_missing(ws_telemetry *t, const char *id, long line, ws_error *err);
/* The model of GPU `id` (nvidia-smi's `name`), kept as first read. 0 or
 * -1 out of memory. */
int ws_telemetry_set_model(ws_telemetry *t, const char *id, const char *model);
/* The power limit read with the last sample added to GPU `id`. */
void ws_telemetry_set_limit(ws_telemetry *t, const char *id, double lim);
/* Nonzero when the log has GPU `id` (O(1): a hash index). */
int ws_telemetry_has_gpu(const ws_telemetry *t, const char *id);

/* The readers. `tz_offset` (nvidia-smi only) is the UTC offset of the clock
 * the log's timestamps were printed in, in seconds: a timestamp T means the
 * instant T - tz_offset UTC. Times are kept on the log's own clock. */
int ws_import_nvsmi(const char *path, const ws_csv_limits *lim,
                    ws_telemetry *out, ws_warnings *w, ws_error *err);
/* The same; `columns` (NULL: none) names the fields of a log without a
 * header in their order, as the --query-gpu list (--columns). */
int ws_import_nvsmi_columns(const char *path, const ws_csv_limits *lim, const char *columns,
                            ws_telemetry *out, ws_warnings *w, ws_error *err);
/* The nvidia-smi reader's options. */
typedef struct ws_nvsmi_opts {
    const char *columns;   /* as ws_import_nvsmi_columns; NULL: none */
    const char *zone;      /* IANA zone of the log's wall clock (--log-tz), NULL:
                              none: times are then kept on the log's clock.
                              With one they become UTC instants, the hour a fall
                              back repeats placed by the rows' order. */
    int gpu_cycle;         /* --gpu-cycle N, a log without a GPU column of N
                              GPUs (rows in order, one per GPU per sample);
                              0: none (such a log is then one GPU's) */
} ws_nvsmi_opts;
/* Also, on any log: a clock that goes back (a GPU's timestamp earlier, in
 * the file's order, than its last by more than jitter) is refused, naming
 * it and the line: a DST fall back or a clock reset. */
int ws_import_nvsmi_opts(const char *path, const ws_csv_limits *lim,
                         const ws_nvsmi_opts *o, ws_telemetry *out, ws_warnings *w,
                         ws_error *err);
/* Also reads DCGM exporter scrapes (Prometheus text, ws_import_prom), and
 * refuses nvidia-smi dmon / dcgmi dmon output by name. */
int ws_import_dcgm(const char *path, size_t max_bytes, ws_telemetry *out,
                   ws_warnings *w, ws_error *err);
/* DCGM exporter scrapes in Prometheus' text exposition format, with
 * timestamps (ms); see import_prom.c. */
int ws_import_prom(const char *path, size_t max_bytes, ws_telemetry *out,
                   ws_warnings *w, ws_error *err);
int ws_import_zeusmon(const char *path, const ws_csv_limits *lim,
                      ws_telemetry *out, ws_warnings *w, ws_error *err);
/* Zeus's old zeus_monitor log (Time,Power: UTC, mW; one GPU, "0"), a power
 * series; the nvidia-smi and ZeusMonitor readers hand such a file here. */
int ws_import_zemo(const char *path, const ws_csv_limits *lim, ws_telemetry *out,
                   ws_warnings *w, ws_error *err);

/* Keep only the GPUs in `ids` (n ids; n = 0 keeps all), in that order; a
 * GPU missing from the log is an error naming `option`. */
int ws_telemetry_select(ws_telemetry *t, char **ids, size_t n,
                        const char *option, ws_error *err);

/* The most one GPU can draw, W: seven times today's largest (1.4 kW).
 * A power reading above it, a counter rising faster, or a ZeusMonitor
 * window's energy over its duration above it, is refused naming the
 * reading: a broken sample or the wrong unit. */
#define WS_MAX_GPU_POWER 1e4

/* Sort every series by time (counting samples out of order), drop exact
 * repeats, refuse two different readings at one instant and readings above
 * WS_MAX_GPU_POWER, and compute the median interval and each interval's
 * energy. */
int ws_telemetry_prepare(ws_telemetry *t, ws_warnings *w, ws_error *err);

/* --------------------------------------------------------- times */

/* Unix seconds ("1700000000.5") or ISO 8601 ("2023-11-01T12:00:00[.fff]"
 * with 'T' or a space, then optionally "Z", "+HH:MM", "+HHMM" or "+HH").
 * *zoned = 1 when the text pins an instant (Unix or with a zone); then *t
 * is UTC seconds, else *t is the wall time read as if it were UTC. */
int ws_parse_instant(const char *s, double *t, int *zoned);

/* "+HH:MM" / "-HH:MM" / "Z" -> seconds east of UTC. */
int ws_parse_tz(const char *s, double *seconds);

/* --log-tz: "+HH:MM", "-HH:MM", "Z" or "UTC" (a fixed offset: *offset,
 * *zone = NULL), or an IANA name with a file in the system's tz database
 * (*zone = s, *offset = 0: the offset then depends on the date). 0 or -1. */
int ws_parse_log_tz(const char *s, double *offset, const char **zone);

/* TZ set to an IANA zone for ws_zone_instants, and put back as it was. */
typedef struct ws_zone_saved {
    char *old;
    int had;
} ws_zone_saved;
int ws_zone_set(const char *zone, ws_zone_saved *saved, ws_error *err);
void ws_zone_restore(ws_zone_saved *saved);
/* The UTC instants (ascending, in u) at which the zone set by ws_zone_set
 * shows wall time `wall` (seconds read as UTC): 1; 0 when a spring forward
 * skips it; 2 in the hour a fall back repeats (u[0] the first time round,
 * on summer time). */
int ws_zone_instants(double wall, double u[2]);

/* --------------------------------------------------------- power */

typedef struct ws_power_import {
    const char *epochs_path;
    ws_telemetry *tel;         /* read, selected and prepared */
    double tz_offset;          /* s; see ws_import_nvsmi */
    double max_gap;            /* in median sample intervals; default
                                  WS_DEFAULT_MAX_GAP */
    double match_tolerance;    /* s, ZeusMonitor window start; default 1 */
    const char *window;        /* ZeusMonitor window name, NULL: the one that
                                  covers the epochs best */
    double epochs_tz;          /* s east of UTC of EPOCHS.csv times without a
                                  zone, when epochs_tz_set; else they are on
                                  the log's clock */
    int epochs_tz_set;
    int log_has_clock;         /* nvidia-smi: the log's timestamps have no zone */
    const char *log_zone;      /* IANA zone of the nvidia-smi log (--log-tz), its
                                  times made UTC by the reader: EPOCHS.csv times
                                  without a zone are then read in it too, unless
                                  epochs_tz_set; NULL: none */
    const ws_csv_limits *lim;
} ws_power_import;

typedef struct ws_power_out_row {
    char *dataset, *network, *optimizer;
    int bs, pl;
    int epochs;
    double time_per_epoch, average_power;
    double energy_error;       /* relative bound on the energy's integration
                                  error (ws_tel_energy_bound): the column
                                  energy_error */
    long line;                 /* its first epoch in EPOCHS.csv */
} ws_power_out_row;

/* --max-gap's default; a longer gap it lets through counts in
 * energy_error (ws_tel_hole_bound). */
#define WS_DEFAULT_MAX_GAP 5
/* How far a GPU's power sensor may be off: an average above the power
 * limit by more is refused (the epochs ran at another limit). */
#define WS_SENSOR_TOLERANCE 0.05
/* An energy_error above it is warned about, with the figure. */
#define WS_ENERGY_ERROR_WARN 0.01

typedef struct ws_power_table {
    ws_power_out_row *rows;
    size_t n;
    int gpus;                  /* GPUs each row's power sums: gpus_per_job */
    double max_power;          /* W, the job's MaxPower where its GPUs are of
                                  mixed models (the sum of each one's own
                                  largest limit, the trace's max_power
                                  column); 0: the largest limit x gpus */
} ws_power_table;

int ws_import_power(const ws_power_import *in, ws_power_table *out,
                    ws_warnings *w, ws_error *err);

/* Zeus's GlobalPowerLimitOptimizer profile: a ZeusMonitor log whose
 * windows are named "__GlobalPowerLimitOptimizer_<W>" (W the power limit,
 * W), one per limit, each timing `profile_steps` training steps (start
 * times on any clock). A knob per window, at batch size bs:
 *   average_power  = its energy summed over the selected GPUs / elapsed
 *   time_per_epoch = elapsed * scale
 * where scale turns the profiled steps into an epoch: with EPOCHS.csv (the
 * run's epochs, each wholly at its power_limit; one workload and batch
 * size) the sum of the durations of its epochs at profiled limits over the
 * sum of those limits' elapsed times; else steps_per_epoch /
 * profile_steps. */
#define WS_PLO_WINDOW "__GlobalPowerLimitOptimizer_"
#define WS_PLO_PROFILE_STEPS 40   /* Zeus's default profile_steps */
typedef struct ws_plo_import {
    ws_telemetry *tel;         /* ZeusMonitor windows, GPUs selected */
    const ws_power_import *epochs;   /* EPOCHS.csv (epochs_path) and its zone
                                        options, or NULL: then the below */
    const char *dataset, *network, *optimizer;   /* --job D/N/O */
    int bs;                    /* --batch-size */
    double steps_per_epoch;    /* --steps-per-epoch; 0: not given */
    double profile_steps;      /* --profile-steps; WS_PLO_PROFILE_STEPS */
} ws_plo_import;
/* Nonzero when some window of t is named WS_PLO_WINDOW<W>. */
int ws_plo_detect(const ws_telemetry *t);
int ws_import_plo(const ws_plo_import *in, ws_power_table *out, ws_warnings *w,
                  ws_error *err);
/* The options of `trace import power` as typed, NULL where not given: one
 * definition for the CLI and the library API (io/import_args.c). */
enum { WS_LOG_NVSMI, WS_LOG_DCGM, WS_LOG_ZEUS };
typedef struct ws_power_args {
    const char *gpu, *epochs, *log, *gpus, *log_tz, *epochs_tz, *window, *columns,
               *gpu_cycle, *batch_size, *steps_per_epoch, *profile_steps, *job,
               *max_gap, *match_tolerance;
    int kind;                  /* WS_LOG_*, -1: no log given */
} ws_power_args;
/* What they ask for, and what the import made (ws_power_job_free). */
typedef struct ws_power_job {
    ws_power_import in;
    ws_plo_import plo;
    ws_telemetry tel;
    ws_power_table table;
    int is_plo;                /* the log was a GlobalPowerLimitOptimizer profile */
    int gpu_cycle;             /* --gpu-cycle, 0: not given */
    char **ids, *ids_copy, *job_copy;
    size_t n_ids;
} ws_power_job;
/* Judges every option before any file is read: 0, or -1 with err the
 * usage message (naming the option; the caller adds its command). */
int ws_power_args_judge(const ws_power_args *a, ws_power_job *j, ws_error *err);
/* Reads the log and imports its knobs into j->table: 0; -1 with err, the
 * input's fault; 1 with err, a usage error only the log could show (no
 * --epochs for a log that is not a GlobalPowerLimitOptimizer profile). */
int ws_power_args_import(const ws_power_args *a, ws_power_job *j, const ws_csv_limits *lim,
                         ws_warnings *w, ws_error *err);
void ws_power_job_free(ws_power_job *j);

/* summary_power_NAME.csv (Zeus column order), atomically; the rules of
 * wattsim/outfile.h apply (no replacing without --force). */
int ws_power_table_write(const ws_power_table *t, const char *path, ws_error *err);
void ws_power_table_free(ws_power_table *t);
/* Distinct batch sizes and power limits of the table, and its epochs
 * (n log n); 0, or -1 out of memory. */
int ws_power_table_summary(const ws_power_table *t, size_t *n_bs, size_t *n_pl,
                           long *n_epochs);

/* Energy in J of one GPU series over [a, b] (a <= b, both within the
 * series' span); *gap = the longest sample interval overlapping it. */
double ws_tel_energy(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b,
                     double *gap, long *gap_line);

/* An estimate of the integration error of ws_tel_energy over [a, b], J:
 * |E - E'|, the largest over the two series thinned to every other sample
 * (odd or even ones) of the difference between the energy E from all the
 * samples and E' from the thinned ones. It bounds the true error |e| of E
 * whenever thinning at least doubles the error (|e'| >= 2|e| gives
 * |E - E'| = |e' - e| >= |e|): the samples resolve the signal, so that
 * the error falls with the sample interval (as the trapezoid's does, by
 * its square, on a signal smooth at that scale; a step at an epoch's edge,
 * linearly). A signal that varies faster than the samples (aliased) can
 * break it. When the log has too few samples around [a, b] to thin, the
 * worst case when the power stays between consecutive readings (for a
 * counter: anything from none to all of an edge interval's increase).
 * Costs what ws_tel_energy costs. */
double ws_tel_energy_bound(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b);
/* What holes in a power series add to the error over [a, b], J: inside
 * an interval longer than `hole` s (a gap --max-gap let through) the
 * signal is not known, only assumed to stay within the range the GPU's
 * readings span around [a, b]; each such overlap times that range. 0 for
 * a counter (it measures through a hole). */
double ws_tel_hole_bound(const ws_tel_gpu *g, ws_tel_kind kind, double a, double b,
                         double hole);
/* The highest power limit the log read on GPU g, 0 when none. */
double ws_tel_gpu_limit(const ws_tel_gpu *g);
/* The first sample strictly inside (a, b) whose power limit differs from
 * pl by more than 1 W, or NULL. */
const ws_tel_sample *ws_tel_limit_off(const ws_tel_gpu *g, double a, double b, double pl);

/* --------------------------------------------------------- train */

typedef struct ws_train_import {
    const char *metrics_path;
    const char *target_text;   /* as typed, written verbatim */
    double target;
    int lower_is_better;
    const ws_csv_limits *lim;
} ws_train_import;

typedef struct ws_train_out_row {
    char *dataset, *network, *optimizer, *lr;
    int bs;
    long run;
    long target_epoch;         /* 0 = never */
} ws_train_out_row;

typedef struct ws_train_table {
    ws_train_out_row *rows;
    size_t n;
    const char *target_text;
} ws_train_table;

int ws_import_train(const ws_train_import *in, ws_train_table *out,
                    ws_warnings *w, ws_error *err);
int ws_train_table_write(const ws_train_table *t, const char *path, ws_error *err);
void ws_train_table_free(ws_train_table *t);

/* A finite decimal number (no hex, inf, nan or blanks); 0 or -1. */
int ws_parse_number(const char *s, double *v);

#endif
