/*
 * Policy pairs in a run config (sim/src/io/config_policies.c, config.c):
 * `bso:`/`plo:` as lists (their cross product, bso-major), `policies:` as
 * a list of pairs, each form parsed to the exact pairs and raw parameters
 * with their locations; every error with its exact FILE:LINE:COL message;
 * --set on the policy axis.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkstemp, fdopen */
#endif
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/config.h"

static char tmp_path[64];

static const char *write_tmp(const char *text)
{
    strcpy(tmp_path, "/tmp/ws_test_cfgpol_XXXXXX");
    int fd = mkstemp(tmp_path);
    cr_assert(fd >= 0, "mkstemp failed");
    FILE *f = fdopen(fd, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
    return tmp_path;
}

static void load_text(const char *yaml, ws_run_config *cfg)
{
    ws_error err = { "" };
    ws_run_config_init(cfg);
    const char *path = write_tmp(yaml);
    cr_assert_eq(ws_run_config_load(path, cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_run_config_validate(cfg, &err), 0, "%s", err.msg);
}

/* The load fails with "PATH" + rest, and leaves the defaults (zeus:jit). */
static void expect_error(const char *yaml, const char *rest)
{
    ws_run_config cfg;
    ws_error err = { "" };
    char want[WS_ERROR_MAX];
    ws_run_config_init(&cfg);
    const char *path = write_tmp(yaml);
    cr_expect_neq(ws_run_config_load(path, &cfg, &err), 0, "%s should fail", yaml);
    snprintf(want, sizeof want, "%s%s", path, rest);
    cr_expect_str_eq(err.msg, want);
    cr_expect_eq(ws_run_config_n_pairs(&cfg), 1);
    cr_expect_str_eq(cfg.bso.name, "zeus");
    cr_expect_eq(cfg.n_bsos + cfg.n_plos + cfg.n_pairs, 0);
    ws_run_config_free(&cfg);
    unlink(path);
}

/* "name{k=v,...}" of a raw reference, in the order given. */
static void ref_text(const ws_policy_ref *r, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", r->name);
    for (size_t i = 0; i < r->n_params; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", i ? "," : "{",
                                 r->params[i].key, r->params[i].value);
    if (r->n_params) snprintf(buf + used, len - used, "}");
}

/* The config's pairs, "bso:plo" each, joined by spaces. */
static void expect_pairs(const ws_run_config *cfg, const char *want)
{
    char got[1024] = "", b[128], p[128];
    size_t n = ws_run_config_n_pairs(cfg);
    for (size_t i = 0; i < n; i++) {
        const ws_policy_ref *bso, *plo;
        ws_run_config_pair(cfg, i, &bso, &plo);
        ref_text(bso, b, sizeof b);
        ref_text(plo, p, sizeof p);
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s:%s", i ? " " : "", b, p);
    }
    cr_expect_str_eq(got, want);
}

/* ---------------------------------------------------------- good forms */

Test(forms, single_pair_as_before)
{
    ws_run_config cfg;
    load_text("workload: w\nplo: jit\nbso: {name: zeus, params: {window: 5}}\n", &cfg);
    expect_pairs(&cfg, "zeus{window=5}:jit");
    cr_expect_null(ws_run_config_pairs_where(&cfg));
    cr_expect_str_eq(cfg.bso.name, "zeus");
    char want[128];
    snprintf(want, sizeof want, "%s:3:36", tmp_path);
    cr_expect_str_eq(cfg.bso.params[0].where, want);
    ws_run_config_free(&cfg);
}

Test(forms, bso_and_plo_lists_cross)
{
    ws_run_config cfg;
    load_text("workload: w\n"
              "bso: [zeus, {name: zeus, params: {window: 10}}, gts]\n"
              "plo: [jit, default]\n", &cfg);
    cr_assert_eq(ws_run_config_n_pairs(&cfg), 6);
    expect_pairs(&cfg, "zeus:jit zeus:default zeus{window=10}:jit zeus{window=10}:default"
                       " gts:jit gts:default");
    char want[128];
    snprintf(want, sizeof want, "%s:2:6", tmp_path);
    cr_expect_str_eq(ws_run_config_pairs_where(&cfg), want);
    /* The raw parameter remembers where it was written. */
    snprintf(want, sizeof want, "%s:2:43", tmp_path);
    cr_expect_str_eq(cfg.bsos[1].params[0].where, want);
    cr_expect_null(cfg.bso.name, "a list leaves no single bso");
    ws_run_config_free(&cfg);
}

Test(forms, one_side_a_list)
{
    ws_run_config cfg;
    load_text("workload: w\nplo:\n  - jit\n  - {name: grid, params: {step: 25}}\n", &cfg);
    expect_pairs(&cfg, "zeus:jit zeus:grid{step=25}");
    char want[128];
    snprintf(want, sizeof want, "%s:3:3", tmp_path);
    cr_expect_str_eq(ws_run_config_pairs_where(&cfg), want);
    ws_run_config_free(&cfg);

    /* A list of one is one pair. */
    load_text("workload: w\nbso: [gts]\n", &cfg);
    expect_pairs(&cfg, "gts:jit");
    cr_expect_null(ws_run_config_pairs_where(&cfg));
    ws_run_config_free(&cfg);
}

Test(forms, policies_list)
{
    ws_run_config cfg;
    load_text("workload: w\n"
              "policies:\n"
              "  - {bso: zeus, plo: jit}\n"
              "  - bso: {name: zeus, params: {window: 10, prior: 0.5}}\n"
              "    plo: jit\n"
              "  - {bso: ./a/zeus.so:zeus, plo: jit}\n"
              "  - {bso: zeus, plo: {name: jit, params: {rounds: 3}}}\n", &cfg);
    cr_assert_eq(ws_run_config_n_pairs(&cfg), 4);
    expect_pairs(&cfg, "zeus:jit zeus{window=10,prior=0.5}:jit ./a/zeus.so:zeus:jit"
                       " zeus:jit{rounds=3}");
    char want[128];
    snprintf(want, sizeof want, "%s:4:5", tmp_path);
    cr_expect_str_eq(cfg.pairs[1].where, want);
    snprintf(want, sizeof want, "%s:4:17", tmp_path);
    cr_expect_str_eq(cfg.pairs[1].bso.where, want);
    snprintf(want, sizeof want, "%s:4:51", tmp_path);
    cr_expect_str_eq(cfg.pairs[1].bso.params[1].where, want);
    snprintf(want, sizeof want, "%s:3:3", tmp_path);
    cr_expect_str_eq(ws_run_config_pairs_where(&cfg), want);
    ws_run_config_free(&cfg);
}

/* ---------------------------------------------------------- errors */

Test(errors, bad_entries)
{
    expect_error("workload: w\nbso: []\n",
                 ":2:6: bso must be a policy name, a mapping {name, params}, or a"
                 " non-empty list of them, got an empty list");
    expect_error("workload: w\nplo: [jit, [a]]\n",
                 ":2:12: plo must be a policy name or a mapping {name, params}, got a list");
    expect_error("workload: w\nbso: [zeus, {name: zeus, parms: {}}]\n",
                 ":2:26: unknown key 'parms' in bso (expected one of: name, params)");
    expect_error("workload: w\npolicies: zeus:jit\n",
                 ":2:11: policies must be a non-empty list of pairs {bso: ..., plo: ...},"
                 " got \"zeus:jit\"");
    expect_error("workload: w\npolicies: [zeus]\n",
                 ":2:12: policies: each entry must be a mapping {bso: ..., plo: ...},"
                 " got \"zeus\"");
    expect_error("workload: w\npolicies:\n  - {bso: zeus, plo: jit, eta: 1}\n",
                 ":3:27: unknown key 'eta' in policies entry (expected one of: bso, plo)");
    expect_error("workload: w\npolicies:\n  - {bso: zeus}\n",
                 ":3:5: policies entry is missing key 'plo'");
    expect_error("workload: w\npolicies:\n  - {bso: zeus, plo: {name: jit, params: {x: [1]}}}\n",
                 ":3:46: policies.plo.params.x must be a single value, got a list");
}

Test(errors, duplicates)
{
    expect_error("workload: w\nbso: [zeus, gts, zeus]\n",
                 ":2:18: bso zeus is listed twice (first at 2:7) (give it other"
                 " parameters, or list it once)");
    /* The same parameters in another order are the same policy. */
    expect_error("workload: w\nbso:\n  - {name: zeus, params: {a: 1, b: 2}}\n"
                 "  - {name: zeus, params: {b: 2, a: 1}}\n",
                 ":4:5: bso zeus{b=2,a=1} is listed twice (first at 3:5) (give it other"
                 " parameters, or list it once)");
    expect_error("workload: w\npolicies:\n  - {bso: zeus, plo: jit}\n"
                 "  - {bso: gts, plo: jit}\n  - {bso: zeus, plo: jit}\n",
                 ":5:5: policies: the pair zeus:jit is listed twice (first at 3:5)");
}

Test(errors, policies_with_bso_or_plo)
{
    expect_error("workload: w\nbso: zeus\npolicies:\n  - {bso: zeus, plo: jit}\n",
                 ":3:1: 'policies' and 'bso' (line 2) both say which policies run;"
                 " give the pairs in 'policies' only, or drop it and give bso and plo"
                 " (lists for an axis)");
    expect_error("workload: w\npolicies:\n  - {bso: zeus, plo: jit}\nplo: [jit, grid]\n",
                 ":2:1: 'policies' and 'plo' (line 4) both say which policies run;"
                 " give the pairs in 'policies' only, or drop it and give bso and plo"
                 " (lists for an axis)");
}

/* ---------------------------------------------------------- --set */

Test(set, policy_axis)
{
    ws_run_config cfg;
    ws_error err = { "" };
    load_text("workload: w\nbso: [zeus, gts]\n", &cfg);
    char want[WS_ERROR_MAX];
    snprintf(want, sizeof want, "--set bso.params.window: bso is a list (%s:2:6); set the"
             " whole list instead, e.g. --set 'bso=[zeus, gts]'", tmp_path);
    cr_expect_neq(ws_run_config_set(&cfg, "bso.params.window=5", &err), 0);
    cr_expect_str_eq(err.msg, want);
    cr_expect_neq(ws_run_config_set(&cfg, "bso.name=grid", &err), 0);
    /* The whole key replaces the list, as for any axis. */
    cr_assert_eq(ws_run_config_set(&cfg, "bso={name: grid, params: {step: 2}}", &err), 0,
                 "%s", err.msg);
    expect_pairs(&cfg, "grid{step=2}:jit");
    cr_assert_eq(ws_run_config_set(&cfg, "plo=[jit, default]", &err), 0, "%s", err.msg);
    expect_pairs(&cfg, "grid{step=2}:jit grid{step=2}:default");
    cr_expect_str_eq(ws_run_config_pairs_where(&cfg), "--set");
    snprintf(want, sizeof want, "--set policies: the config gives bso/plo (--set);"
             " policies would replace them: set bso and plo instead");
    cr_expect_neq(ws_run_config_set(&cfg, "policies=[{bso: zeus, plo: jit}]", &err), 0);
    cr_expect_str_eq(err.msg, want);
    ws_run_config_free(&cfg);

    load_text("workload: w\npolicies: [{bso: zeus, plo: jit}, {bso: gts, plo: jit}]\n", &cfg);
    snprintf(want, sizeof want, "--set bso: the config gives its policy pairs in"
             " 'policies' (%s:2:11); set policies instead, or pass --policies", tmp_path);
    cr_expect_neq(ws_run_config_set(&cfg, "bso=zeus", &err), 0);
    cr_expect_str_eq(err.msg, want);
    cr_expect_neq(ws_run_config_set(&cfg, "plo.params.x=1", &err), 0);
    cr_assert_eq(ws_run_config_set(&cfg, "policies=[{bso: zeus, plo: {name: jit,"
                                   " params: {r: 1}}}]", &err), 0, "%s", err.msg);
    expect_pairs(&cfg, "zeus:jit{r=1}");
    ws_run_config_free(&cfg);

    /* On the defaults, --set policies is the whole axis. */
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_set(&cfg, "policies=[{bso: gts, plo: jit}]", &err), 0,
                 "%s", err.msg);
    expect_pairs(&cfg, "gts:jit");
    ws_run_config_free(&cfg);
}
