/*
 * A run's policy pairs (see study_pairs.h). Each pair of the config's
 * policy axis (ws_run_config_pair) gets its policy types, its typed
 * parameters, its provenance (resolved parameters and .so hashes) and a
 * label made as the sweep makes them, so that a pair reads the same in
 * summary.csv and in sweep.csv: "NAME{given params}+NAME{given params}" by
 * registered names, or by the names as given (paths, FILE.so:NAME) when
 * two builds of a policy would share a label.
 */
#include "study_pairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/sweep.h"

/* "{k=v,...}" as given, or "" without parameters. */
static void given_params(const ws_policy_ref *ref, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ref->n_params && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s=%s", i ? "," : "{", ref->params[i].key,
                         ref->params[i].value);
        if (n < 0) return;
        used += (size_t)n;
    }
    if (ref->n_params && used + 1 < len) strcat(buf, "}");
}

/* Where a policy was named, as an error prefix; a built-in default was
 * named nowhere. */
static int fail_at_ref(const ws_policy_ref *ref, ws_error *err)
{
    if (ref->where && strcmp(ref->where, "default")) ws_fail_prefix(err, "%s", ref->where);
    return -1;
}

/* Where t came from, as provenance shows it (ws_policy_prov). */
void ws_study_policy_file(const ws_registry *reg, const void *t, char *buf, size_t n)
{
    const char *origin = ws_registry_origin(reg, t), *dir = ws_policy_dir();
    char real[4096];
    if (dir && !realpath(dir, real)) real[0] = '\0';
    size_t k = dir ? strlen(real) : 0;
    if (k && !strncmp(origin, real, k) && origin[k] == '/' && !strchr(origin + k + 1, '/'))
        snprintf(buf, n, "built-in");
    else
        snprintf(buf, n, "%s", origin);
}

static int resolve_one(const ws_policy_ref *bref, const ws_policy_ref *pref, ws_registry *reg,
                       ws_study_pair *q, ws_study_policy *r, ws_error *err)
{
    char who[96];
    if (!(r->bt = ws_registry_bso(reg, bref->name, err))) return fail_at_ref(bref, err);
    if (!(r->pt = ws_registry_plo(reg, pref->name, err))) return fail_at_ref(pref, err);
    snprintf(who, sizeof who, "bso %s", r->bt->name);
    if (ws_params_resolve(r->bt->params, bref->params, bref->n_params, who, &r->bp, err))
        return -1;
    snprintf(who, sizeof who, "plo %s", r->pt->name);
    if (ws_params_resolve(r->pt->params, pref->params, pref->n_params, who, &r->pp, err))
        return -1;
    return ws_study_pair_identity(reg, r, q, err);
}

int ws_study_pair_identity(ws_registry *reg, const ws_study_policy *r, ws_study_pair *q,
                           ws_error *err)
{
    snprintf(q->bso, sizeof q->bso, "%s", r->bt->name);
    snprintf(q->plo, sizeof q->plo, "%s", r->pt->name);
    if (ws_params_format(r->bt->params, r->bp, q->prov.bso_params, sizeof q->prov.bso_params)
        || ws_params_format(r->pt->params, r->pp, q->prov.plo_params,
                            sizeof q->prov.plo_params))
        return ws_fail(err, "policy pair %s:%s: parameters too long to record", r->bt->name,
                       r->pt->name);
    ws_study_policy_file(reg, r->bt, q->prov.bso_file, sizeof q->prov.bso_file);
    ws_study_policy_file(reg, r->pt, q->prov.plo_file, sizeof q->prov.plo_file);
    return ws_registry_sha256(reg, r->bt, q->prov.bso_sha256, err)
           || ws_registry_sha256(reg, r->pt, q->prov.plo_sha256, err) ? -1 : 0;
}

int ws_study_pairs_resolve(const ws_run_config *cfg, ws_registry *reg, ws_study_pair *pairs,
                           ws_study_policy *pol, size_t n, ws_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const ws_policy_ref *bref, *pref;
        ws_run_config_pair(cfg, i, &bref, &pref);
        ws_study_pair *q = &pairs[i];
        if (resolve_one(bref, pref, reg, q, &pol[i], err)) return -1;
        /* The same policies with the same values (one file under two
         * spellings, a default spelled out) would only run again. */
        for (size_t j = 0; j < i; j++)
            if (pol[j].bt == pol[i].bt && pol[j].pt == pol[i].pt
                && !strcmp(pairs[j].prov.bso_params, q->prov.bso_params)
                && !strcmp(pairs[j].prov.plo_params, q->prov.plo_params))
                return ws_fail(err, "%s: policy pair %s:%s runs the same as pair %zu (%s);"
                               " list it once", bref->where ? bref->where : cfg->path,
                               bref->name, pref->name, j + 1, pairs[j].label);
        char bg[256], pg[256];
        given_params(bref, bg, sizeof bg);
        given_params(pref, pg, sizeof pg);
        for (int as_given = 0; as_given < 2; as_given++) {
            int len = snprintf(q->label, sizeof q->label, "%s%s+%s%s",
                               as_given ? bref->name : q->bso, bg,
                               as_given ? pref->name : q->plo, pg);
            if (len < 0 || (size_t)len >= sizeof q->label)
                return ws_fail(err, "%s: policy pair %s:%s: its label (names and parameters)"
                               " is longer than %zu characters", bref->where ? bref->where
                               : cfg->path, bref->name, pref->name, sizeof q->label - 1);
            size_t j = 0;
            while (j < i && strcmp(pairs[j].label, q->label)) j++;
            if (j == i) break;
            if (as_given)   /* cannot happen: the config refuses such a pair */
                return ws_fail(err, "%s: policy pair %s:%s has the label of pair %zu (%s)",
                               bref->where ? bref->where : cfg->path, bref->name,
                               pref->name, j + 1, pairs[j].label);
        }
    }
    return 0;
}

void ws_study_policies_free(ws_study_policy *pol, size_t n)
{
    for (size_t i = 0; pol && i < n; i++) {
        if (pol[i].bt) ws_params_free(pol[i].bt->params, pol[i].bp);
        if (pol[i].pt) ws_params_free(pol[i].pt->params, pol[i].pp);
    }
}

static char *dup_or_null(const char *s, int *oom)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d) *oom = 1;
    return d;
}

/* A deep copy of a policy reference (into a zeroed *out). */
static int ref_copy(const ws_policy_ref *in, ws_policy_ref *out)
{
    int oom = 0;
    out->name = dup_or_null(in->name, &oom);
    out->where = dup_or_null(in->where, &oom);
    out->in_file = in->in_file;
    if (in->n_params && !(out->params = calloc(in->n_params, sizeof *out->params))) return -1;
    out->n_params = out->params ? in->n_params : 0;
    for (size_t i = 0; i < out->n_params; i++) {
        out->params[i].key = dup_or_null(in->params[i].key, &oom);
        out->params[i].value = dup_or_null(in->params[i].value, &oom);
        out->params[i].where = dup_or_null(in->params[i].where, &oom);
    }
    return oom ? -1 : 0;
}

int ws_policy_pairs_from_config(const ws_run_config *cfg, ws_policy_pair **out, size_t *n,
                                ws_error *err)
{
    size_t k = ws_run_config_n_pairs(cfg);
    /* One pair as ever: names only, so that its label and the journal's
     * fingerprint stay what they were before policy lists. */
    int with_refs = cfg->n_pairs || cfg->n_bsos || cfg->n_plos;
    ws_policy_pair *p = calloc(k, sizeof *p);
    if (!p) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < k; i++) {
        const ws_policy_ref *b, *q;
        ws_run_config_pair(cfg, i, &b, &q);
        if (!(p[i].bso = strdup(b->name)) || !(p[i].plo = strdup(q->name))
            || (with_refs && (ref_copy(b, &p[i].bso_ref) || ref_copy(q, &p[i].plo_ref)))) {
            ws_policy_pairs_free(p, k);
            return ws_fail(err, "out of memory");
        }
    }
    *out = p;
    *n = k;
    return 0;
}

static int config_ref(const ws_policy_ref *p, const char *kind, ws_error *err)
{
    return p->name && p->in_file
        ? ws_plugin_config_check(p->name, kind, p->where ? p->where : "config", err) : 0;
}

int ws_policy_config_allowed(const ws_run_config *cfg, ws_error *err)
{
    if (config_ref(&cfg->bso, "bso", err) || config_ref(&cfg->plo, "plo", err)) return -1;
    for (size_t i = 0; i < cfg->n_bsos; i++)
        if (config_ref(&cfg->bsos[i], "bso", err)) return -1;
    for (size_t i = 0; i < cfg->n_plos; i++)
        if (config_ref(&cfg->plos[i], "plo", err)) return -1;
    for (size_t i = 0; i < cfg->n_pairs; i++)
        if (config_ref(&cfg->pairs[i].bso, "bso", err)
            || config_ref(&cfg->pairs[i].plo, "plo", err))
            return -1;
    return 0;
}
