/*
 * Subcommands of the figures and the paper reproduction (sweep, curves,
 * potential, frontiers, report, pareto --plot), kept out of cli.c, which
 * only dispatches to them. Helpers shared by these files are here too.
 */
#ifndef WATTSIM_CLI_SWEEP_H
#define WATTSIM_CLI_SWEEP_H

#include "cli_common.h"
#include "wattsim/config.h"
#include "wattsim/error.h"
#include "wattsim/pareto.h"

/* `wattsim sweep` (curves = 0) and `wattsim curves` (curves = 1). */
int ws_cmd_sweep(int argc, char **argv, int curves, int merge);
/* `wattsim potential` and `wattsim frontiers`. */
int ws_cmd_potential(int argc, char **argv);
int ws_cmd_frontiers(int argc, char **argv);
/* `wattsim report DIR`. */
int ws_cmd_report(int argc, char **argv);

/* `wattsim pareto --plot FILE [--history FILE]`: draw the figure and, when
 * argc > 0, add it to its folder's manifest (argv: the whole command line;
 * `pareto --plot` writes none: the image goes where the user said, alone
 * with its .csv and .gp). `spec` and `cat` give the display names. */
int ws_cli_pareto_plot(const char *image, const char *history, const ws_workload_spec *spec,
                       const ws_catalogue *cat, const ws_job *job, const ws_pareto *p,
                       int argc, char **argv, ws_error *err);

#endif
