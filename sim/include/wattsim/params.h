/*
 * Policy parameters (io layer): a config's or command line's raw text
 * (ws_param_raw, see config.h) resolved against the spec a plugin declares
 * (ws_param_spec, policy.h) to typed values, bounds checked, and printed
 * back in one canonical line for outputs and fingerprints. The plugin host
 * calls this at set-up only; simulations see typed values.
 */
#ifndef WATTSIM_PARAMS_H
#define WATTSIM_PARAMS_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/error.h"
#include "wattsim/policy.h"

/* Typed parameter values for a descriptor's spec, from raw YAML strings.
 * `who` names the policy in errors ("bso zeus"). *out has one value per
 * spec entry (NULL when the spec is empty); free with ws_params_free. */
int ws_params_resolve(const ws_param_spec *spec, const ws_param_raw *raw,
                      size_t n_raw, const char *who, ws_value **out,
                      ws_error *err);
void ws_params_free(const ws_param_spec *spec, ws_value *values);
/* A policy's resolved parameters as one canonical line, in spec order:
 * "rounds=2,window=0" ("" when it has none); numbers printed so that they
 * read back exactly. For outputs and fingerprints (provenance). Returns 0,
 * or -1 when buf is too small. */
int ws_params_format(const ws_param_spec *spec, const ws_value *values, char *buf,
                     size_t len);
/* Number of entries of a spec (NULL = 0). */
size_t ws_params_count(const ws_param_spec *spec);

#endif
