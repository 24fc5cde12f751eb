/*
 * A JSON file given as input (a DCGM query_range result, an Electricity
 * Maps history, an OpenEI tariff): opened as every input is (regular, not
 * symlinked out: wattsim/input.h), refused above max_bytes before it is
 * read, noted so that no output of the command may replace it, parsed
 * strictly (duplicate keys refused); a syntax error is FILE:LINE:COL.
 */
#ifndef WATTSIM_JSON_INPUT_H
#define WATTSIM_JSON_INPUT_H

#include <jansson.h>
#include <stddef.h>

#include "wattsim/error.h"

/* The document, or NULL with err set. max_bytes 0: no limit. */
json_t *ws_json_input_load(const char *path, size_t max_bytes, ws_error *err);

#endif
