/* wattsim serve (cli_serve.c). */
#ifndef WATTSIM_CLI_SERVE_H
#define WATTSIM_CLI_SERVE_H

int ws_cmd_serve(int argc, char **argv);

#endif
