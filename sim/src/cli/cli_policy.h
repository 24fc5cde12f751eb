/* wattsim policy new|check (cli_policy.c). */
#ifndef WATTSIM_CLI_POLICY_H
#define WATTSIM_CLI_POLICY_H

int ws_cmd_policy(int argc, char **argv);

#endif
