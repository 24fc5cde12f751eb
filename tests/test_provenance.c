/*
 * Parameter studies and provenance: --policies takes parameters
 * (NAME{KEY=VALUE,...}), a policy may appear several times with different
 * parameters or from two builds, and every sweep output row names each
 * policy's resolved parameters and the sha256 of its .so.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <limits.h>
#include <stdlib.h>

#include "run_cli.h"
#include "tmpdir.h"
#include "wattsim/rng.h"
#include "wattsim/sha256.h"

#define PLUGIN(name) WS_TEST_PLUGIN_DIR "/" name ".so"
#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"

TestSuite(provenance, .init = NULL, .timeout = 120);

/* The line of sweep.csv whose `policy` column is `label`. */
static const char *row(const char *csv, const char *label)
{
    static char line[4096];
    for (const char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        const char *e = strchr(p + 1, '\n');
        size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
        snprintf(line, sizeof line, "%.*s", (int)n, p + 1);
        if (strstr(line, label)) return line;
    }
    return NULL;
}

/* `wattsim sweep` of the config `yaml` (written as c.yaml) with
 * --policies `policies`, no figures; its output folder into out[size]. */
static void sweep_with(const char *yaml, const char *policies, char *out, size_t size)
{
    char cfg[600];
    write_file("c.yaml", yaml);
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    snprintf(out, size, "%s/out", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "sweep", cfg, "--traces", TRACES,
                                            "--no-plot", "--out", out, "--policies", policies,
                                            NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
}

Test(provenance, policies_with_parameters_and_two_builds)
{
    tmpdir_make("/tmp/wsprov.XXXXXX");
    cr_assert_eq(run_shell("cp '%s' '%s/copy.so'", PLUGIN("egreedy"), tmp), 0);
    char policies[1200], out[600], csvpath[700];
    snprintf(policies, sizeof policies,
             "%s:egreedy:jit,%s{epsilon=0.5,decay=false}:jit,%s/copy.so:egreedy:jit,"
             "zeus{window=10}:jit", PLUGIN("egreedy"), PLUGIN("egreedy"), tmp);
    sweep_with("gpu: v100\nworkload: squad\nseed: 1..3\nrecurrences: 30\n", policies, out,
               sizeof out);
    snprintf(csvpath, sizeof csvpath, "%s/sweep.csv", out);
    FILE *f = fopen(csvpath, "r");
    cr_assert_not_null(f);
    char csv[1 << 16];
    csv[fread(csv, 1, sizeof csv - 1, f)] = '\0';
    fclose(f);
    cr_expect(strstr(csv, ",bso_params,bso_sha256,plo_params,plo_sha256\n"), "header");

    char h1[65];
    ws_error err = {{0}};
    cr_assert_eq(ws_sha256_file(PLUGIN("egreedy"), h1, &err), 0);
    /* The plain build, by its registered name. */
    const char *a = row(csv, ",egreedy+jit,");
    cr_assert_not_null(a, "%s", csv);
    char want[400];
    snprintf(want, sizeof want, ",\"epsilon=0.1,decay=true,penalty=2\",%s,,", h1);
    cr_expect(strstr(a, want), "row %s lacks %s", a, want);
    /* With parameters: its own label and its resolved values. */
    const char *b = row(csv, "\"egreedy{epsilon=0.5,decay=false}+jit\"");
    cr_assert_not_null(b, "%s", csv);
    cr_expect(strstr(b, ",\"epsilon=0.5,decay=false,penalty=2\","), "%s", b);
    /* The second build of the same policy: labelled by its path. */
    char lab[700];
    snprintf(lab, sizeof lab, ",%s/copy.so:egreedy+jit,", tmp);
    cr_expect_not_null(row(csv, lab), "no row %s in %s", lab, csv);
    /* A built-in with parameters: the built-in's file hash. */
    const char *z = row(csv, ",zeus{window=10}+jit,");
    cr_assert_not_null(z, "%s", csv);
    char hz[65];
    cr_assert_eq(ws_sha256_file(WS_POLICY_BUILD_DIR "/zeus.so", hz, &err), 0);
    snprintf(want, sizeof want, ",\"rounds=2,window=10\",%s,", hz);
    cr_expect(strstr(z, want), "row %s lacks %s", z, want);
    tmpdir_remove();
}

/* curves.csv carries the same provenance as sweep.csv, on every row; a
 * label with a comma is quoted. */
Test(provenance, curves_record_parameters_and_hashes)
{
    tmpdir_make("/tmp/wsprov.XXXXXX");
    write_file("c.yaml", "gpu: v100\nworkload: squad\nseed: 1..2\nrecurrences: 3\n");
    char cfg[600], out[600], path[700];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "curves", cfg, "--traces", TRACES,
                                            "--no-plot", "--out", out, "--policies",
                                            "zeus{window=10,rounds=3}:jit", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    snprintf(path, sizeof path, "%s/curves.csv", out);
    char *csv = slurp_file(path);
    cr_expect(!strncmp(csv, "policy,gpu,workload,eta,beta,recurrence,cum_cost,cum_cost_lo,"
                            "cum_cost_hi,regret,regret_lo,regret_hi,bso_params,bso_sha256,"
                            "plo_params,plo_sha256\n", 144), "header: %.200s", csv);
    char hz[65], hj[65], hd[65], want[400];
    ws_error err = {{0}};
    cr_assert_eq(ws_sha256_file(WS_POLICY_BUILD_DIR "/zeus.so", hz, &err), 0);
    cr_assert_eq(ws_sha256_file(WS_POLICY_BUILD_DIR "/jit.so", hj, &err), 0);
    cr_assert_eq(ws_sha256_file(WS_POLICY_BUILD_DIR "/default.so", hd, &err), 0);
    /* 3 pairs (ours, default, oracle) x 3 recurrences, each row with its
     * pair's provenance. */
    int rows = 0;
    for (char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        rows++;
        char *end = strchr(line + 1, '\n');
        cr_assert_not_null(end);
        *end = '\0';
        if (!strncmp(line + 1, "\"zeus{window=10,rounds=3}+jit\",", 31))
            snprintf(want, sizeof want, ",\"rounds=3,window=10\",%s,,%s", hz, hj);
        else if (!strncmp(line + 1, "default+default,", 16))
            snprintf(want, sizeof want, ",,%s,,%s", hd, hd);
        else
            snprintf(want, sizeof want, ",oracle");     /* checked by label only */
        size_t lw = strlen(want), ll = strlen(line + 1);
        if (want[1] != 'o')
            cr_expect(ll >= lw && !strcmp(line + 1 + ll - lw, want), "row %s lacks %s",
                      line + 1, want);
        *end = '\n';
    }
    cr_expect_eq(rows, 9, "%s", csv);
    free(csv);
    tmpdir_remove();
}

Test(provenance, bad_parameters_in_policies)
{
    static const struct { const char *pol, *msg; } cases[] = {
        {"zeus{window}:jit", "wattsim: --policies: 'window' is not KEY=VALUE in 'zeus{window}'\n"},
        {"zeus{window=1}x:jit", "wattsim: --policies: 'zeus{window=1}x': parameters must end with '}'\n"},
        {"zeus{window=1,window=2}:jit",
         "wattsim: --policies: parameter 'window' given twice in 'zeus{window=1,window=2}'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cli_result r = cli_run((const char *[]){"wattsim", "sweep",
                                                WS_SOURCE_DIR "/configs/default.yaml",
                                                "--policies", cases[i].pol, "--out",
                                                "/nonexistent/never", NULL});
        cr_expect_eq(r.status, 2, "%s: status %d", cases[i].pol, r.status);
        cr_expect_str_eq(r.err, cases[i].msg);
        cli_free(&r);
    }
}

/* `run`'s summary.csv and summary.json record the policies' resolved
 * parameters and their files' hashes. */
Test(provenance, run_summary_records_parameters_and_hashes)
{
    tmpdir_make("/tmp/wsprov.XXXXXX");
    char yaml[1024], cfg[600];
    snprintf(yaml, sizeof yaml, "gpu: v100\nworkload: squad\nseed: 1\nrecurrences: 10\n"
             "bso: {name: zeus, params: {window: 3}}\nplo: jit\n");
    write_file("c.yaml", yaml);
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "run", cfg, "--traces", TRACES,
                                            "--format", "csv", "--out", tp("out"), NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    char hz[65], hj[65], want[600];
    ws_error err = {{0}};
    cr_assert_eq(ws_sha256_file(WS_POLICY_BUILD_DIR "/zeus.so", hz, &err), 0);
    cr_assert_eq(ws_sha256_file(WS_POLICY_BUILD_DIR "/jit.so", hj, &err), 0);
    snprintf(want, sizeof want, ",\"rounds=2,window=3\",%s,,%s\n", hz, hj);
    char *csv = NULL;
    size_t len = 0;
    FILE *f = fopen(tp("out/summary.csv"), "r");
    cr_assert_not_null(f);
    cr_assert_gt(getdelim(&csv, &len, '\0', f), 0);
    fclose(f);
    cr_expect(strstr(csv, ",final_bs,final_pl,bso_params,bso_sha256,plo_params,plo_sha256\n"),
              "%s", csv);
    cr_expect(strstr(csv, want), "%s lacks %s", csv, want);
    /* --format csv on stdout is summary.csv, provenance included */
    cr_expect_str_eq(r.out, csv);
    cli_free(&r);
    free(csv);
    tmpdir_remove();
}

/* plan runs policies with their defaults: parameters there are refused,
 * not ignored. */
Test(provenance, plan_refuses_parameters)
{
    cli_result r = cli_run((const char *[]){"wattsim", "plan", "--traces", TRACES,
                                            "--workload", "squad", "--policies",
                                            "zeus{window=3}:jit", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "wattsim: --policies: plan runs policies with their default"
                            " parameters; drop the {...} after zeus\n");
    cli_free(&r);
}

/* The first 12 hex digits of `sha256sum FILE` (coreutils, not wattsim's
 * own sha256), into out[13]. */
static void sha256sum12(const char *file, char out[13])
{
    cr_assert_eq(run_shell("sha256sum '%s' | cut -c1-12 > '%s/sum'", file, tmp), 0);
    char *s = slurp_file(tp("sum"));
    cr_assert_eq(strlen(s), 13, "%s", s);
    snprintf(out, 13, "%.12s", s);
    free(s);
}

/* simulate's table names each policy as sweep.csv does: its parameters as
 * resolved, where it came from (built-in or its path) and its sha256. */
Test(provenance, simulate_table_names_policy_identity)
{
    tmpdir_make("/tmp/wsprov.XXXXXX");
    char h[13], want[1200];
    /* Built-ins, defaults resolved: zeus has rounds=2, window=0; jit none. */
    cli_result r = cli_run((const char *[]){"wattsim", "simulate", "--workload", "squad",
                                            "--recurrences", "2", "--seed", "1", "--traces",
                                            TRACES, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    sha256sum12(WS_POLICY_BUILD_DIR "/zeus.so", h);
    snprintf(want, sizeof want, "\nbso zeus{rounds=2,window=0} built-in sha256 %s\n", h);
    cr_expect(strstr(r.out, want), "no line %s in:\n%s", want, r.out);
    sha256sum12(WS_POLICY_BUILD_DIR "/jit.so", h);
    snprintf(want, sizeof want, "\nplo jit{} built-in sha256 %s\n", h);
    cr_expect(strstr(r.out, want), "no line %s in:\n%s", want, r.out);
    cli_free(&r);

    /* A plugin by path, a parameter given: its path, every value resolved. */
    r = cli_run((const char *[]){"wattsim", "simulate", "--workload", "squad",
                                 "--recurrences", "2", "--seed", "1", "--traces", TRACES,
                                 "--bso", PLUGIN("egreedy"), "--bso-param", "epsilon=0.5", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    sha256sum12(PLUGIN("egreedy"), h);
    snprintf(want, sizeof want, "\nbso egreedy{epsilon=0.5,decay=true,penalty=2} %s sha256 %s\n",
             PLUGIN("egreedy"), h);
    cr_expect(strstr(r.out, want), "no line %s in:\n%s", want, r.out);
    cli_free(&r);

    /* A string value with a comma, quotes and a blank: the word is quoted,
     * its quotes escaped, and the line stays one line. */
    r = cli_run((const char *[]){"wattsim", "simulate", "--workload", "squad",
                                 "--recurrences", "2", "--seed", "1", "--traces", TRACES,
                                 "--bso", PLUGIN("hostile"), "--bso-param",
                                 "path=a,b \"c\"", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    sha256sum12(PLUGIN("hostile"), h);
    snprintf(want, sizeof want,
             "\nbso \"hostile{mode=0,path=a,b \\\"c\\\",mib=1}\" %s sha256 %s\n",
             PLUGIN("hostile"), h);
    cr_expect(strstr(r.out, want), "no line %s in:\n%s", want, r.out);
    cli_free(&r);

    /* plan names the policies it learns with the same line. */
    r = cli_run((const char *[]){"wattsim", "plan", "--workload", "squad", "--recurrences", "3",
                                 "--seeds", "2", "--traces", TRACES, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    sha256sum12(WS_POLICY_BUILD_DIR "/zeus.so", h);
    snprintf(want, sizeof want, "\n  bso zeus{rounds=2,window=0} built-in sha256 %s\n", h);
    cr_expect(strstr(r.out, want), "no line %s in:\n%s", want, r.out);
    cli_free(&r);
    tmpdir_remove();
}

/* s as CommonMark text: a backslash before each character that starts
 * markup (the set docs/outputs.md names), into out. */
static void md_escaped(const char *s, char *out, size_t size)
{
    size_t k = 0;
    for (; *s && k + 3 < size; s++) {
        if (strchr("\\`*_[]<>&|#~!$", *s)) out[k++] = '\\';
        out[k++] = *s;
    }
    out[k] = '\0';
}

/* Cells of a Markdown table line: '|' not after a backslash, less one. */
static int md_cells(const char *line, size_t n)
{
    int bars = 0;
    for (size_t i = 0; i < n; i++) {
        if (line[i] == '\\') i++;
        else if (line[i] == '|') bars++;
    }
    return bars - 1;
}

/* sweep.md names each policy as the tables do (parameters as resolved,
 * built-in or its path, sha256 cut to 12), as Markdown text: a second
 * build in a folder named with a blank and a '|' is labelled by its path,
 * and no row of either table gains a cell from it. */
Test(provenance, sweep_md_names_policy_identity)
{
    tmpdir_make("/tmp/wsprov.XXXXXX");
    cr_assert_eq(run_shell("mkdir '%s/a b|c' && cp '%s' '%s/a b|c/capped.so'", tmp,
                           PLUGIN("capped"), tmp), 0);
    char policies[1200], out[600], md[700], copy[700];
    snprintf(copy, sizeof copy, "%s/a b|c/capped.so", tmp);
    snprintf(policies, sizeof policies, "zeus{window=3}:%s,zeus{window=3}:%s", PLUGIN("capped"),
             copy);
    sweep_with("gpu: v100\nworkload: squad\nseed: 1..2\nrecurrences: 5\n", policies, out,
               sizeof out);
    snprintf(md, sizeof md, "%s/sweep.md", out);
    char *text = slurp_file(md);
    cr_assert_not_null(text);

    char hz[13], hc[13], hd[13], ho[13], path[800], want[2400];
    sha256sum12(WS_POLICY_BUILD_DIR "/zeus.so", hz);
    sha256sum12(PLUGIN("capped"), hc);
    sha256sum12(WS_POLICY_BUILD_DIR "/default.so", hd);
    sha256sum12(WS_POLICY_BUILD_DIR "/oracle.so", ho);
    cr_expect(strstr(text, "\n| policy | bso | plo |\n|---|---|---|\n"), "%s", text);
    md_escaped(PLUGIN("capped"), path, sizeof path);
    snprintf(want, sizeof want, "\n| zeus{window=3}+capped | zeus{rounds=2,window=3} built-in"
             " sha256 %s | capped{max\\_watts=200} %s sha256 %s |\n", hz, path, hc);
    cr_expect(strstr(text, want), "no line %s in:\n%s", want, text);
    /* The copy: its label is its path, its file a quoted word (a blank). */
    char label[800], quoted[800];
    snprintf(quoted, sizeof quoted, "\"%s\"", copy);
    md_escaped(quoted, path, sizeof path);
    snprintf(quoted, sizeof quoted, "zeus{window=3}+%s", copy);
    md_escaped(quoted, label, sizeof label);
    snprintf(want, sizeof want, "\n| %s | zeus{rounds=2,window=3} built-in sha256 %s |"
             " capped{max\\_watts=200} %s sha256 %s |\n", label, hz, path, hc);
    cr_expect(strstr(text, want), "no line %s in:\n%s", want, text);
    snprintf(want, sizeof want, "\n| default+default | default{} built-in sha256 %s |"
             " default{} built-in sha256 %s |\n| oracle+oracle | oracle{} built-in sha256 %s |"
             " oracle{} built-in sha256 %s |\n", hd, hd, ho, ho);
    cr_expect(strstr(text, want), "no lines %s in:\n%s", want, text);
    snprintf(want, sizeof want, "\n| %s | v100 | squad | 0.5 | 2 | ", label);
    cr_expect(strstr(text, want), "no row %s in:\n%s", want, text);

    /* Every row has its table's header's cells. */
    int header = -1, tables = 0;
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        if (*l != '|') header = -1;
        else if (header < 0) { header = md_cells(l, n); tables++; }
        else cr_expect_eq(md_cells(l, n), header, "%.*s", (int)n, l);
        l += n + (l[n] != '\0');
    }
    cr_expect_eq(tables, 2, "%s", text);
    free(text);
    tmpdir_remove();
}

/* The provenance member of summary.json (each row) and sweep.json (the
 * top): the command that gives the results, the config's sha256 and each
 * trace file's. The options that change no result (--out, --force,
 * --format, --threads, abbreviated or not) are left out and the config is
 * named by its real path, so a sweep from another folder, with another
 * thread count and output folder, is the same bytes. */
Test(provenance, outputs_record_command_config_and_traces)
{
    tmpdir_make("/tmp/wsprov.XXXXXX");
    write_file("c.yaml", "gpu: v100\nworkload: squad\nseed: 1..2\nrecurrences: 5\n");
    char cfg[600], real[PATH_MAX], want[4 * PATH_MAX], hc[65], ht[65], hp[65];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    cr_assert_not_null(realpath(cfg, real));
    ws_error err = {{0}};
    cr_assert_eq(ws_sha256_file(cfg, hc, &err), 0);
    cr_assert_eq(ws_sha256_file(TRACES "/summary_train.csv", ht, &err), 0);
    cr_assert_eq(ws_sha256_file(TRACES "/summary_power_v100.csv", hp, &err), 0);
    char *traces = realpath(TRACES, NULL);
    cr_assert_not_null(traces);

    cli_result r = cli_run((const char *[]){"wattsim", "run", cfg, "--traces", TRACES,
                                            "--set", "eta=0.3", "--format", "json", "--out",
                                            tp("r"), "--force", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, ", \"provenance\": {\"command\": \"wattsim run %s --traces %s"
             " --set eta=0.3\", \"config\": {\"file\": \"%s\", \"sha256\": \"%s\"},"
             " \"traces\": {\"folder\": \"%s\", \"files\": {\"summary_train.csv\": \"%s\","
             " \"summary_power_v100.csv\": \"%s\"}}}, ", real, TRACES, real, hc, traces, ht, hp);
    char *json = slurp_file(tp("r/summary.json"));
    const char *first = strstr(json, want);
    cr_expect(first && strstr(first + 1, want), "summary.json's two rows lack %s:\n%s", want,
              json);
    cr_expect_str_eq(r.out, json, "--format json on stdout is summary.json");
    free(json);
    cli_free(&r);

    /* sweep: from the folder with a relative config, and from elsewhere */
    cr_assert_eq(run_shell("cd '%s' && '%s' sweep c.yaml --traces '%s' --no-plot --threads 2"
                           " --out a >/dev/null 2>&1", tmp, WS_CLI, TRACES), 0);
    cr_assert_eq(run_shell("cd / && '%s' sweep '%s' --traces '%s' --thr 1 --no-plot"
                           " --out '%s/b' --quiet >/dev/null 2>&1", WS_CLI, cfg, TRACES, tmp), 0);
    snprintf(want, sizeof want, "\"random_streams\": %d}, \"provenance\": {\"command\":"
             " \"wattsim sweep %s --traces %s\", \"config\": {\"file\": \"%s\", \"sha256\":"
             " \"%s\"}, \"traces\": {\"folder\": \"%s\", \"files\": {\"summary_train.csv\":"
             " \"%s\", \"summary_power_v100.csv\": \"%s\"}}}, \"cells\": [", WS_STREAM_VERSION,
             real, TRACES, real, hc, traces, ht, hp);
    json = slurp_file(tp("a/sweep.json"));
    cr_expect(strstr(json, want), "sweep.json lacks %s:\n%.600s", want, json);
    free(json);
    const char *files[] = {"sweep.json"};
    tmpdir_expect_same_files("a", "b", files, 1);
    free(traces);
    tmpdir_remove();
}
