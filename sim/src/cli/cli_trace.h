/* `wattsim trace`: import your own measurements, check a trace folder. */
#ifndef WATTSIM_CLI_TRACE_H
#define WATTSIM_CLI_TRACE_H

int ws_cli_trace(int argc, char **argv);

#endif
