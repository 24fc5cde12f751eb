/*
 * Internal (not installed): a run's policy pairs resolved before anything
 * runs (study_pairs.c), for study.c and plan.c.
 */
#ifndef WATTSIM_STUDY_PAIRS_H
#define WATTSIM_STUDY_PAIRS_H

#include "wattsim/plugin.h"
#include "wattsim/study.h"

/* What a pair's instances are made from. */
typedef struct ws_study_policy {
    const ws_bso_type *bt;
    const ws_plo_type *pt;
    ws_value *bp, *pp;
} ws_study_policy;

/* The config's n = ws_run_config_n_pairs pairs: types looked up, parameters
 * resolved, labels and provenance into pairs[n], instances' inputs into
 * pol[n] (zeroed by the caller; free with ws_study_policies_free, also
 * after a failure). Errors start with where the policy was named. */
int ws_study_pairs_resolve(const ws_run_config *cfg, ws_registry *reg, ws_study_pair *pairs,
                           ws_study_policy *pol, size_t n, ws_error *err);
void ws_study_policies_free(ws_study_policy *pol, size_t n);
/* q's names and identity (prov: parameters as resolved, file, sha256) from
 * r's types and resolved values; plan uses it for its pairs too. */
int ws_study_pair_identity(ws_registry *reg, const ws_study_policy *r, ws_study_pair *q,
                           ws_error *err);

#endif
