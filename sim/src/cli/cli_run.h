/* wattsim run and simulate (cli_run.c), and the option codes they share
 * with pareto (cli.c). */
#ifndef WATTSIM_CLI_RUN_H
#define WATTSIM_CLI_RUN_H

#include "cli_common.h"

enum { OPT_SET = 1000, OPT_OUT, OPT_FORMAT, OPT_FORCE,
       OPT_GPU, OPT_WORKLOAD, OPT_ETA, OPT_BETA, OPT_SEED, OPT_RECURRENCES,
       OPT_BSO, OPT_PLO, OPT_BSO_PARAM, OPT_PLO_PARAM, OPT_KEEP_HISTORY };

int ws_cmd_run(int argc, char **argv, ws_cli_globals *g);
int ws_cmd_simulate(int argc, char **argv, ws_cli_globals *g);

#endif
