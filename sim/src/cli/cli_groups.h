/* `wattsim groups` (cli_groups.c), dispatched from cli.c's main. argv[0]
 * is "groups". Returns the exit status. */
#ifndef WATTSIM_CLI_GROUPS_H
#define WATTSIM_CLI_GROUPS_H

int ws_cli_groups(int argc, char **argv);

#endif
