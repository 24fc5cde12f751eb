/*
 * Options that set config keys, as the front ends take them: the CLI's
 * flags (cli/) and the library's keyword options (api/) both call these,
 * so that an option means one thing, and its errors read the same,
 * whichever way it was given. Messages are the option's, without the
 * command's prefix: the front end adds "wattsim CMD: ... (see --help)"
 * or "CMD: ...".
 */
#ifndef WATTSIM_CONFIG_OPTS_H
#define WATTSIM_CONFIG_OPTS_H

#include "wattsim/config.h"
#include "wattsim/error.h"

/* An error of ws_run_config_set("KEY=..."), which reads "--set KEY: KEY
 * must be ...", rewritten to name the option the user typed: "OPT must
 * be ..." (or "OPT: ..."). Nothing changes when opt is NULL. */
void ws_config_relabel(ws_error *err, const char *key, const char *opt);
/* KEY=VALUE into the config from option `opt` (e.g. --eta; NULL: an
 * error names "--set KEY"). */
int ws_config_set_kv(ws_run_config *cfg, const char *key, const char *value, const char *opt,
                     ws_error *err);
/* A what-if option `opt` (e.g. "--carbon") setting config key `key`: the
 * value as a single-quoted YAML scalar (a file name is data), errors
 * naming the option, and whatif.where[slot] the option. 0 or -1. */
int ws_config_set_whatif(ws_run_config *cfg, const char *key, int slot, const char *opt,
                         const char *value, ws_error *err);
/* An axis given with --set (where "--set") now names `opt` (e.g.
 * "--gpu"). 0, or -1 when out of memory. */
int ws_config_relabel_axis(char **where, const char *opt, ws_error *err);
/* A policy given with --set (its where, and its parameters', "--set") now
 * names `opt` and `param_opt` (e.g. "--bso", "--bso-param"). 0, or -1
 * when out of memory. */
int ws_config_relabel_policy(ws_policy_ref *p, const char *opt, const char *param_opt,
                             ws_error *err);

/* --job DATASET/NETWORK/OPTIMIZER --target X --max-epochs N --b0 B (the
 * unparsed values, NULL when not given): a workload not in the catalogue,
 * the same as an inline `job:` of a config, named after its dataset,
 * appended to cfg->jobs. 0 (also when none of them is given); -1 with err
 * the usage error ("--job needs --target X"); -2 with err "out of
 * memory". */
int ws_config_add_job(ws_run_config *cfg, const char *job, const char *target,
                      const char *max_epochs, const char *b0, ws_error *err);

#endif
