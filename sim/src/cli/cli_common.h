/*
 * What every wattsim subcommand shares: where traces and the workload
 * catalogue come from, and the one-line error convention (exit status 2).
 */
#ifndef WATTSIM_CLI_COMMON_H
#define WATTSIM_CLI_COMMON_H

#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/error.h"

#define WS_EXIT_USAGE 2

/* Set by the build (sim/CMakeLists.txt); these are fallbacks. */
#ifndef WS_DEFAULT_TRACES
#define WS_DEFAULT_TRACES "traces/fetched/zeus-nsdi23"
#endif
#ifndef WS_DEFAULT_CATALOGUE
#define WS_DEFAULT_CATALOGUE "configs/workloads.yaml"
#endif

/* The trace folder: the option, else the config's `traces`, else
 * $WATTSIM_TRACES, else the fetched traces of this build. */
const char *ws_cli_traces(const char *opt, const ws_run_config *cfg);
/* Load the workload catalogue: the option, else $WATTSIM_CATALOGUE, else
 * the source tree's configs/workloads.yaml, else the installed copy
 * (bin/../share/wattsim/workloads.yaml). */
int ws_cli_catalogue(const char *opt, ws_catalogue *cat, ws_error *err);
/* Trace size limits: `opt` (the --max-trace-bytes value, N with an
 * optional K/M/G suffix), else $WATTSIM_MAX_TRACE_BYTES, else the reader's
 * default (1 GiB, as zeros). */
int ws_cli_limits(const char *opt, ws_csv_limits *out, ws_error *err);
/* Print "wattsim: MESSAGE"; returns WS_EXIT_USAGE. */
int ws_cli_die(const ws_error *err);
/* Print "wattsim CMD: <fmt with arg> (see 'wattsim CMD --help')"; returns
 * WS_EXIT_USAGE. */
int ws_cli_usage(const char *cmd, const char *fmt, const char *arg);
/* getopt_long's unknown option or missing value, as a usage error. */
int ws_cli_bad_option(const char *cmd, char **argv, int c);
/* A --plot FILE option: its base name must end in .png or .svg and its
 * stem be a safe name (wattsim/name.h), as it names the .csv and .gp too.
 * Prints the usage error and returns WS_EXIT_USAGE, or returns 0. */
int ws_cli_check_plot_name(const char *cmd, const char *plot);
/* "v100,a40" -> the config key `key` set to [v100, a40]. */
int ws_cli_set_list(ws_run_config *cfg, const char *key, const char *list, ws_error *err);

#endif
