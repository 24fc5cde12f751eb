/*
 * The wattsim command line: the output contracts scripts rely on
 * (docs/outputs.md), determinism, help, and the error convention
 * (one line on stderr, exit status 2, nothing on stdout, no output files).
 * Runs on the fetched Zeus traces.
 */
#include <sys/stat.h>

#include "run_cli.h"
#include "wattsim/policy.h"
#include "wattsim/rng.h"
#include "wattsim/version.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"

static void expect_error(const char *const *argv, const char *msg)
{
    cli_result r = cli_run(argv);
    cr_expect_eq(r.status, 2, "%s: exit %d", argv[1], r.status);
    cr_expect_eq(r.out_len, 0, "%s: nothing on stdout, got: %s", argv[1], r.out);
    cr_expect_eq(cli_lines(r.err), 1, "%s: one line on stderr, got: %s", argv[1], r.err);
    cr_expect(strstr(r.err, msg), "%s: stderr lacks \"%s\": %s", argv[1], msg, r.err);
    cli_free(&r);
}

/* Every command's help is its own: it opens with its own usage line, whose
 * options include every option the text describes, and ends with the
 * options or notes, not mid-sentence. */
Test(cli, version_and_help_on_every_command)
{
    static const char *const cmds[][3] = {
        {"run", NULL}, {"simulate", NULL}, {"plan", NULL}, {"pareto", NULL}, {"list", NULL},
        {"sweep", NULL}, {"curves", NULL}, {"merge", NULL}, {"potential", NULL},
        {"frontiers", NULL}, {"report", NULL}, {"groups", "synth"}, {"groups", "replay"},
        {"trace", "check"}, {"policy", "new"}, {"policy", "check"}};
    cli_result r = cli_run((const char *[]){"wattsim", "--version", NULL});
    cr_expect_eq(r.status, 0);
    /* The three versions, each its own (wattsim/version.h): the ABI as
     * MAJOR.MINOR, as everywhere else, not 201. */
    char want[128], semver[32];
    snprintf(want, sizeof want, "wattsim %s (policy ABI %d.%d, random streams %d)\n",
             WATTSIM_VERSION, WS_ABI_MAJOR, WS_ABI_MINOR, WS_STREAM_VERSION);
    cr_expect_str_eq(r.out, want);
    snprintf(semver, sizeof semver, "%d.%d.%d", WATTSIM_VERSION_MAJOR, WATTSIM_VERSION_MINOR,
             WATTSIM_VERSION_PATCH);
    cr_expect_str_eq(semver, WATTSIM_VERSION);
    /* ABI 2 and the numpy streams came after 0.1.0 */
    cr_expect(WATTSIM_VERSION_MAJOR > 0 || WATTSIM_VERSION_MINOR >= 2);
    cli_free(&r);
    /* CITATION.cff cites this version. */
    FILE *f = fopen(WS_SOURCE_DIR "/CITATION.cff", "r");
    cr_assert_not_null(f);
    char line[256];
    int cited = 0;
    while (fgets(line, sizeof line, f)) cited |= !strcmp(line, "version: " WATTSIM_VERSION "\n");
    fclose(f);
    cr_expect(cited, "CITATION.cff does not say version: " WATTSIM_VERSION);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        const char *argv[] = {"wattsim", cmds[i][0], cmds[i][1] ? cmds[i][1] : "--help",
                              cmds[i][1] ? "--help" : NULL, NULL};
        r = cli_run(argv);
        char usage[64];
        snprintf(usage, sizeof usage, "usage: wattsim %s", cmds[i][0]);
        cr_expect_eq(r.status, 0, "%s --help", cmds[i][0]);
        cr_expect(!strncmp(r.out, usage, strlen(usage)), "%s --help opens with another"
                  " command's usage: %.80s", cmds[i][0], r.out);
        /* the last line is an option's, a note's, or a sentence's end */
        size_t n = strlen(r.out);
        cr_expect(n > 2 && r.out[n - 1] == '\n', "%s --help", cmds[i][0]);
        const char *last = r.out + n - 1;
        while (last > r.out && last[-1] != '\n') last--;
        cr_expect(strstr(last, "  --") == last || strchr(".)", r.out[n - 2]),
                  "%s --help ends mid-sentence: %s", cmds[i][0], last);
        cli_free(&r);
    }
    /* pareto's usage names the options its text describes */
    r = cli_run((const char *[]){"wattsim", "pareto", "--help", NULL});
    const char *opts_at = strstr(r.out, "\n\n");
    cr_assert(opts_at);
    const char *names[] = {"--plot", "--history", "--force", "--format", "--eta"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        cr_expect(strstr(r.out, names[k]) < opts_at, "pareto's usage lacks %s", names[k]);
    cli_free(&r);
    /* sweep's options come before its notes and exit status */
    r = cli_run((const char *[]){"wattsim", "sweep", "--help", NULL});
    const char *exit_at = strstr(r.out, "Exit status");
    cr_assert(exit_at, "%s", r.out);
    const char *last_opt = NULL;
    for (const char *p = r.out; (p = strstr(p, "\n  --")); p++) last_opt = p;
    cr_expect(last_opt && last_opt < exit_at, "sweep --help: an option after Exit status");
    cli_free(&r);
}

Test(cli, simulate_json_contract_and_totals, .timeout = 60)
{
    cli_result r = cli_run((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--gpu",
                                            "v100", "--workload", "squad", "--seed", "3",
                                            "--format", "json", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *keys[] = {"\"gpu\": \"v100\"", "\"workload\": \"squad\"", "\"eta\": 0.5",
                          "\"beta\": 2", "\"seed\": 3", "\"b0\": 32", "\"recurrences\": 98",
                          "\"energy_j\": ", "\"time_s\": ", "\"cost\": ", "\"runs\": ",
                          "\"history\": [", "\"recurrence\": 1", "\"try\": 1", "\"bs\": 32",
                          "\"pl\": ", "\"reached\": true", "\"profiled\": true"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_expect(strstr(r.out, keys[i]), "JSON lacks %s", keys[i]);
    /* runs counts the history entries; energy_j is their sum. */
    int entries = 0;
    double sum = 0;
    for (const char *p = strstr(r.out, "{\"recurrence\""); p; p = strstr(p + 1, "{\"recurrence\"")) {
        entries++;
        sum += atof(strstr(p, "\"energy_j\": ") + 12);
    }
    long runs = atol(strstr(r.out, "\"runs\": ") + 8);
    double energy = atof(strstr(r.out, "\"energy_j\": ") + 12);
    cr_expect_eq(runs, entries);
    cr_expect_float_eq(energy, sum, 1e-9 * energy);
    cli_free(&r);
}

Test(cli, same_inputs_same_bytes, .timeout = 60)
{
    const char *argv[] = {"wattsim", "simulate", "--traces", TRACES, "--workload", "cifar100",
                          "--seed", "11", "--format", "json", NULL};
    cli_result a = cli_run(argv), b = cli_run(argv);
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_expect_eq(a.out_len, b.out_len);
    cr_expect_eq(memcmp(a.out, b.out, a.out_len), 0, "two runs differ");
    cli_free(&a);
    cli_free(&b);
}

Test(cli, pareto_csv_contract, .timeout = 60)
{
    cli_result r = cli_run((const char *[]){"wattsim", "pareto", "--traces", TRACES, "--gpu",
                                            "v100", "--workload", "imagenet", "--format", "csv",
                                            NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *need[] = {"bs", "pl", "runs", "reached", "epochs", "tta_s", "eta_j", "cost",
                          "frontier", "default", "best"};
    char *nl = strchr(r.out, '\n');
    cr_assert(nl);
    *nl = '\0';
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        char field[32];
        snprintf(field, sizeof field, ",%s,", need[i]);
        char hdr[512];
        snprintf(hdr, sizeof hdr, ",%s,", r.out);
        cr_expect(strstr(hdr, field), "header lacks %s: %s", need[i], r.out);
    }
    *nl = '\n';
    /* 5 batch sizes x 7 limits on the V100; exactly one default and one best. */
    cr_expect_eq(cli_lines(r.out), 1 + 35);
    int defaults = 0, bests = 0;
    for (char *line = strchr(r.out, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        int f = 0;
        char *p = line;
        int vals[16] = {0};
        while (f < 12 && p) {
            vals[f++] = atoi(p);
            p = strchr(p, ',');
            if (p) p++;
        }
        defaults += vals[9];
        bests += vals[10];
    }
    cr_expect_eq(defaults, 1);
    cr_expect_eq(bests, 1);
    cli_free(&r);
}

Test(cli, run_writes_outputs_and_refuses_to_overwrite, .timeout = 60)
{
    char dir[] = "/tmp/ws-cli-XXXXXX", cfg[128], out[128], path[192];
    cr_assert(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(cfg, "w");
    fprintf(f, "workload: sentiment140\nseeds: 1..3\nbeta: [2, .inf]\n");
    fclose(f);
    const char *argv[] = {"wattsim", "run", cfg, "--traces", TRACES, "--out", out,
                          "--format", "csv", NULL};
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(cli_lines(r.out), 1 + 6, "2 betas x 3 seeds: %s", r.out);
    const char *files[] = {"summary.csv", "summary.json", "history.csv"};
    struct stat st;
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", out, files[i]);
        cr_expect_eq(stat(path, &st), 0, "%s missing", path);
    }
    cli_free(&r);
    r = cli_run(argv);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "pass --force"), "%s", r.err);
    cli_free(&r);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    cr_expect_eq(system(path), 0);
}

Test(cli, errors_are_one_line_with_status_2)
{
    expect_error((const char *[]){"wattsim", "frobnicate", NULL}, "unknown command 'frobnicate'");
    expect_error((const char *[]){"wattsim", "simulate", "--bogus", NULL}, "unknown option '--bogus'");
    expect_error((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--workload", "mnist",
                                  NULL}, "unknown workload 'mnist'");
    expect_error((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--workload", "squad",
                                  "--gpu", "h100", NULL}, "unknown GPU 'h100'");
    expect_error((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--workload", "squad",
                                  "--bso", "nope", NULL}, "unknown bso policy 'nope'");
    expect_error((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--workload", "squad",
                                  "--bso-param", "windw=3", NULL}, "has no parameter 'windw'");
    expect_error((const char *[]){"wattsim", "simulate", "--traces", "/nonexistent", "--workload",
                                  "squad", NULL}, "/nonexistent");
    expect_error((const char *[]){"wattsim", "run", "/nonexistent.yaml", NULL},
                 "/nonexistent.yaml");
}

/* A count of one takes the singular: "1 simulation, 1 cell" (run's
 * summary line), "Means over 1 seed" (sweep.md). Before, "1 simulations,
 * 1 cells" and "1 seeds". */
Test(cli, a_count_of_one_is_singular, .timeout = 60)
{
    char dir[] = "/tmp/ws-cli-XXXXXX", cfg[128], out[128], path[192];
    cr_assert(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fprintf(f, "workload: sentiment140\nseed: 1\nrecurrences: 3\n");
    fclose(f);
    snprintf(out, sizeof out, "%s/run", dir);
    const char *argv[] = {"wattsim", "run", cfg, "--traces", TRACES, "--out", out, NULL};
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\n1 simulation, 1 cell; outputs in "), "%s", r.out);
    cli_free(&r);
    snprintf(out, sizeof out, "%s/sweep", dir);
    const char *sweep[] = {"wattsim", "sweep", cfg, "--policies", "zeus:jit", "--traces", TRACES,
                           "--out", out, "--no-plot", NULL};
    r = cli_run(sweep);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    snprintf(path, sizeof path, "%s/sweep.md", out);
    f = fopen(path, "r");
    cr_assert(f, "%s", path);
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f)) found |= strstr(line, "Means over 1 seed ±") != NULL;
    fclose(f);
    cr_expect(found, "sweep.md: no \"Means over 1 seed\"");
    snprintf(path, sizeof path, "rm -rf %s", dir);
    cr_expect_eq(system(path), 0);
}
