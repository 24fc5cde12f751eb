/*
 * The policy axis of a config end to end (docs/commands.md, "Policy pairs in a
 * config"): `wattsim run` over bso/plo lists gives each pair exactly the
 * numbers of a run of that pair alone, with the pair's label and
 * provenance on every row; a sweep's `policies:` list gives the same bytes
 * as the same pairs through --policies, which replaces it, and the same
 * journal fingerprint; errors exit 2 with FILE:LINE:COL.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "run_cli.h"
#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"

TestSuite(policy_axis, .timeout = 300);

static const char *BASE = "gpu: v100\nworkload: squad\nseed: [1, 2]\nrecurrences: 20\n";

/* A config BASE + extra, written as NAME. */
static void config(const char *name, const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s", BASE, extra);
    write_file(name, text);
}

/* wattsim CMD CFG --traces T --out OUT [--format csv | --no-plot]
 * [--policies P]. */
/* Folders whose plugins the configs may name (--allow-plugins). */
static char allow[2][600];

static cli_result wattsim(const char *cmd, const char *cfg, const char *out,
                          const char *policies)
{
    char c[600], o[600];
    snprintf(c, sizeof c, "%s", tp(cfg));
    snprintf(o, sizeof o, "%s", tp(out));
    const char *argv[16] = {"wattsim", cmd, c, "--traces", TRACES, "--out", o};
    size_t n = 7;
    if (!strcmp(cmd, "sweep")) argv[n++] = "--no-plot";
    else argv[n++] = "--format", argv[n++] = "csv";
    if (policies) argv[n++] = "--policies", argv[n++] = policies;
    for (int i = 0; i < 2; i++)
        if (allow[i][0]) argv[n++] = "--allow-plugins", argv[n++] = allow[i];
    return cli_run(argv);
}

static void run_ok(const char *cmd, const char *cfg, const char *out, const char *policies)
{
    cli_result r = wattsim(cmd, cfg, out, policies);
    cr_assert_eq(r.status, 0, "%s %s: %s", cmd, cfg, r.err);
    cli_free(&r);
}

/* Every column but those listed, row a of t against row b of u. */
static void expect_same_row(const table *t, size_t a, const table *u, size_t b,
                            const char *const *skip)
{
    cr_assert_eq(t->nh, u->nh);
    for (size_t c = 0; c < t->nh; c++) {
        int skipped = 0;
        for (size_t k = 0; skip[k]; k++) skipped |= !strcmp(t->hdr[c], skip[k]);
        if (skipped) continue;
        cr_expect_str_eq(t->rows[a][c], u->rows[b][c], "column %s, rows %zu and %zu",
                         t->hdr[c], a, b);
    }
}

Test(policy_axis, run_over_pairs_equals_single_runs)
{
    tmpdir_make("/tmp/wsaxis.XXXXXX");
    config("axis.yaml", "bso: zeus\nplo: [jit, {name: default}]\n");
    config("jit.yaml", "bso: zeus\nplo: jit\n");
    config("default.yaml", "bso: zeus\nplo: default\n");
    run_ok("run", "axis.yaml", "axis", NULL);
    run_ok("run", "jit.yaml", "jit", NULL);
    run_ok("run", "default.yaml", "default", NULL);

    table ax = read_table(tp("axis/summary.csv"));
    table one[2] = {read_table(tp("jit/summary.csv")), read_table(tp("default/summary.csv"))};
    /* Pair-major: 2 pairs x 2 seeds. */
    cr_assert_eq(ax.n, 4);
    static const char *const labels[2] = {"zeus+jit", "zeus+default"};
    static const char *const skip_cell[] = {"simulation", NULL};
    for (size_t p = 0; p < 2; p++) {
        cr_assert_eq(one[p].n, 2);
        for (size_t s = 0; s < 2; s++) {
            cr_expect_str_eq(str(&ax, 2 * p + s, "policy"), labels[p]);
            cr_expect_eq(num(&ax, 2 * p + s, "simulation"), (double)(2 * p + s));
            /* Names, parameters, hashes and numbers, byte for byte. */
            expect_same_row(&ax, 2 * p + s, &one[p], s, skip_cell);
        }
    }
    /* The pairs do differ, so the comparison above means something. */
    cr_expect_str_neq(str(&one[0], 0, "energy_j"), str(&one[1], 0, "energy_j"));

    /* history.csv: each pair's runs, in plan order, as its own run's. */
    table hax = read_table(tp("axis/history.csv"));
    table h[2] = {read_table(tp("jit/history.csv")), read_table(tp("default/history.csv"))};
    cr_assert_eq(hax.n, h[0].n + h[1].n);
    for (size_t i = 0; i < hax.n; i++) {
        size_t p = i < h[0].n ? 0 : 1, j = p ? i - h[0].n : i;
        cr_expect_str_eq(str(&hax, i, "policy"), labels[p]);
        expect_same_row(&hax, i, &h[p], j, skip_cell);
    }
    /* summary.json names each cell's pair. */
    char *json = slurp_file(tp("axis/summary.json"));
    cr_expect(strstr(json, "\"plo\": \"default\", \"policy\": \"zeus+default\""), "%s", json);
    free(json);
    free_table(&ax);
    free_table(&hax);
    for (int p = 0; p < 2; p++) {
        free_table(&one[p]);
        free_table(&h[p]);
    }
    tmpdir_remove();
}

Test(policy_axis, sweep_policies_list_equals_cli_policies)
{
    tmpdir_make("/tmp/wsaxis.XXXXXX");
    config("list.yaml", "policies:\n"
                        "  - {bso: zeus, plo: jit}\n"
                        "  - bso: {name: zeus, params: {window: 5}}\n"
                        "    plo: jit\n"
                        "  - {bso: gts, plo: default}\n");
    config("plain.yaml", "");
    run_ok("sweep", "list.yaml", "list", NULL);
    run_ok("sweep", "plain.yaml", "cli", "zeus:jit,zeus{window=5}:jit,gts:default");
    char *a = slurp_file(tp("list/sweep.csv")), *b = slurp_file(tp("cli/sweep.csv"));
    cr_expect_str_eq(a, b);
    cr_expect(strstr(a, "\nzeus,jit,zeus{window=5}+jit,"), "%s", a);
    free(a);
    free(b);
    a = slurp_file(tp("list/sweep.json"));
    b = slurp_file(tp("cli/sweep.json"));
    /* the same results; their provenance (config file, command) differs */
    char *pa = strstr(a, ", \"provenance\": "), *pb = strstr(b, ", \"provenance\": ");
    char *ca = strstr(a, ", \"cells\": ["), *cb = strstr(b, ", \"cells\": [");
    cr_assert(pa && pb && ca && cb && pa < ca && pb < cb, "%.400s", a);
    cr_expect(strstr(pa, "list.yaml\"") < ca && strstr(pb, "plain.yaml --traces") < cb,
              "%.600s", a);
    cr_expect_eq(pa - a, pb - b);
    cr_expect_eq(strncmp(a, b, (size_t)(pa - a)), 0);
    cr_expect_str_eq(ca, cb);
    free(a);
    free(b);

    /* The bso x plo lists of a sweep config are its pairs. */
    config("cross.yaml", "bso: [zeus, {name: zeus, params: {window: 5}}]\nplo: jit\n");
    run_ok("sweep", "cross.yaml", "cross", NULL);
    run_ok("sweep", "plain.yaml", "cross-cli", "zeus:jit,zeus{window=5}:jit");
    a = slurp_file(tp("cross/sweep.csv"));
    b = slurp_file(tp("cross-cli/sweep.csv"));
    cr_expect_str_eq(a, b);
    free(a);
    free(b);

    /* --policies replaces the config's list. */
    run_ok("sweep", "list.yaml", "replaced", "gts:jit");
    table t = read_table(tp("replaced/sweep.csv"));
    cr_assert_eq(t.n, 3);
    cr_expect_str_eq(str(&t, 0, "policy"), "gts+jit");
    cr_expect_str_eq(str(&t, 1, "policy"), "default+default");
    cr_expect_str_eq(str(&t, 2, "policy"), "oracle+oracle");
    free_table(&t);
    tmpdir_remove();
}

Test(policy_axis, errors_exit_2_with_location)
{
    tmpdir_make("/tmp/wsaxis.XXXXXX");
    config("dup.yaml", "bso: [zeus, gts, zeus]\n");
    cli_result r = wattsim("run", "dup.yaml", "o", NULL);
    char want[800];
    snprintf(want, sizeof want, "wattsim: %s:5:18: bso zeus is listed twice (first at 5:7)"
             " (give it other parameters, or list it once)\n", tp("dup.yaml"));
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, want);
    cli_free(&r);

    config("both.yaml", "plo: jit\npolicies: [{bso: zeus, plo: jit}]\n");
    r = wattsim("sweep", "both.yaml", "o", NULL);
    snprintf(want, sizeof want, "wattsim: %s:6:1: 'policies' and 'plo' (line 5) both say which"
             " policies run; give the pairs in 'policies' only, or drop it and give bso and"
             " plo (lists for an axis)\n", tp("both.yaml"));
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, want);
    cli_free(&r);

    /* A policy that does not resolve: where it was named. */
    config("unknown.yaml", "plo: [jit, nosuch]\n");
    r = wattsim("run", "unknown.yaml", "o", NULL);
    snprintf(want, sizeof want, "wattsim: %s:5:12: unknown plo policy 'nosuch'", tp("unknown.yaml"));
    cr_expect_eq(r.status, 2);
    cr_expect(!strncmp(r.err, want, strlen(want)), "%s", r.err);
    cli_free(&r);
    /* Nothing written. */
    cr_expect_neq(access(tp("o"), F_OK), 0);
    tmpdir_remove();
}

/* The journal's fingerprint: a shard journal of a `policies:` config
 * merges under the same pairs given by --policies, and is refused when a
 * pair's parameters differ. */
Test(policy_axis, journal_fingerprint_covers_config_pairs)
{
    tmpdir_make("/tmp/wsaxis.XXXXXX");
    config("list.yaml", "policies:\n"
                        "  - {bso: zeus, plo: jit}\n"
                        "  - {bso: {name: zeus, params: {window: 5}}, plo: jit}\n");
    config("plain.yaml", "");
    char cfg[600], shard[600], out[600];
    snprintf(cfg, sizeof cfg, "%s", tp("list.yaml"));
    snprintf(shard, sizeof shard, "%s", tp("shard"));
    cli_result r = cli_run((const char *[]){"wattsim", "sweep", cfg, "--traces", TRACES,
                                            "--shard", "0/1", "--out", shard, "--no-plot",
                                            NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    snprintf(cfg, sizeof cfg, "%s", tp("plain.yaml"));
    snprintf(out, sizeof out, "%s", tp("same"));
    r = cli_run((const char *[]){"wattsim", "merge", "sweep", cfg, "--traces", TRACES,
                                 "--policies", "zeus:jit,zeus{window=5}:jit", shard,
                                 "--out", out, "--no-plot", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    snprintf(out, sizeof out, "%s", tp("other"));
    r = cli_run((const char *[]){"wattsim", "merge", "sweep", cfg, "--traces", TRACES,
                                 "--policies", "zeus:jit,zeus{window=6}:jit", shard,
                                 "--out", out, "--no-plot", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "cannot merge this shard: the policy pairs changed (zeus+jit,"
                     " zeus{window=5}+jit, default+default, oracle+oracle in the shard's journal;"
                     " zeus+jit, zeus{window=6}+jit, default+default, oracle+oracle now)"),
              "%s", r.err);
    cli_free(&r);
    tmpdir_remove();
}

/* Two builds of one policy in a run: labelled by the names as given, as a
 * sweep labels them; the same file under two spellings is one pair. */
Test(policy_axis, run_two_builds)
{
    tmpdir_make("/tmp/wsaxis.XXXXXX");
    cr_assert_eq(run_shell("mkdir '%s/a' '%s/b' && cp '%s' '%s/a/' && cp '%s' '%s/b/'", tmp, tmp,
                           WS_TEST_PLUGIN_DIR "/egreedy.so", tmp,
                           WS_TEST_PLUGIN_DIR "/egreedy.so", tmp), 0);
    snprintf(allow[0], sizeof allow[0], "%s/a", tmp);
    snprintf(allow[1], sizeof allow[1], "%s/b", tmp);
    char extra[600];
    snprintf(extra, sizeof extra, "bso: [%s/a/egreedy.so, {name: %s/b/egreedy.so, params:"
             " {epsilon: 0.5}}, %s/b/egreedy.so]\n", tmp, tmp, tmp);
    config("builds.yaml", extra);
    run_ok("run", "builds.yaml", "o", NULL);
    table t = read_table(tp("o/summary.csv"));
    cr_assert_eq(t.n, 6);
    char want[1200];
    cr_expect_str_eq(str(&t, 0, "policy"), "egreedy+jit");
    cr_expect_str_eq(str(&t, 2, "policy"), "egreedy{epsilon=0.5}+jit");
    snprintf(want, sizeof want, "%s/b/egreedy.so+jit", tmp);
    cr_expect_str_eq(str(&t, 4, "policy"), want);
    cr_expect_str_eq(str(&t, 2, "bso_params"), "epsilon=0.5,decay=true,penalty=2");
    cr_expect_str_eq(str(&t, 4, "bso_params"), "epsilon=0.1,decay=true,penalty=2");
    free_table(&t);

    snprintf(extra, sizeof extra, "bso: [%s/a/egreedy.so, %s/a/./egreedy.so]\n", tmp, tmp);
    config("same.yaml", extra);
    cli_result r = wattsim("run", "same.yaml", "o2", NULL);
    snprintf(want, sizeof want, "wattsim: %s:5:%zu: policy pair %s/a/./egreedy.so:jit runs the"
             " same as pair 1 (egreedy+jit); list it once\n", tp("same.yaml"),
             strlen(tmp) + 22, tmp);
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, want);
    cli_free(&r);

    /* A default spelled out is the same pair too. */
    config("default.yaml", "bso: [zeus, {name: zeus, params: {window: 0}}]\n");
    r = wattsim("run", "default.yaml", "o3", NULL);
    snprintf(want, sizeof want, "wattsim: %s:5:20: policy pair zeus:jit runs the same as pair 1"
             " (zeus+jit); list it once\n", tp("default.yaml"));
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, want);
    cli_free(&r);
    tmpdir_remove();
}
