/* wattsim plan (cli_plan.c). */
#ifndef WATTSIM_CLI_PLAN_H
#define WATTSIM_CLI_PLAN_H

int ws_cmd_plan(int argc, char **argv);

#endif
