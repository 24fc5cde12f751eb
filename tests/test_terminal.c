/*
 * What the command line shows a person on a terminal: help texts (each
 * command's own, at most 80 columns, a usage that names every option the
 * text describes, optional options in brackets) and tables (no line ending
 * in blanks, so that a transcript in the manual is the bytes the command
 * prints). docs/commands.md; tests/check_man.sh checks the man page made
 * from these texts.
 */
#include "run_cli.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"

static const char *const HELPS[][4] = {
    {"wattsim", "--help"}, {"run", "--help"}, {"simulate", "--help"}, {"plan", "--help"},
    {"pareto", "--help"}, {"list", "--help"}, {"sweep", "--help"}, {"curves", "--help"},
    {"merge", "sweep", "--help"}, {"potential", "--help"}, {"frontiers", "--help"},
    {"report", "--help"}, {"groups", "synth", "--help"}, {"groups", "replay", "--help"},
    {"trace", "import", "power", "--help"}, {"trace", "import", "train", "--help"},
    {"trace", "check", "--help"}, {"policy", "--help"}, {"policy", "new", "--help"},
    {"policy", "check", "--help"}, {"serve", "--help"}};

/* The help of HELPS[i] (malloc'd; the test fails if the command does). */
static char *help_of(size_t i)
{
    const char *argv[6] = {"wattsim"};
    size_t n = 1;
    for (size_t k = 0; k < 4 && HELPS[i][k]; k++)
        if (strcmp(HELPS[i][k], "wattsim")) argv[n++] = HELPS[i][k];
    argv[n] = NULL;
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "%s %s: exit %d", HELPS[i][0], HELPS[i][1], r.status);
    /* on stdout, where a pager or `| less` finds it */
    cr_assert(cli_lines(r.out) >= 3, "%s %s --help: not on stdout (stderr: %.200s)",
              HELPS[i][0], HELPS[i][1], r.err);
    free(r.err);
    return r.out;
}

/* The usage lines: from the start to the first blank line. */
static char *usage_of(const char *help)
{
    const char *end = strstr(help, "\n\n");
    size_t n = end ? (size_t)(end - help) : strlen(help);
    char *u = strndup(help, n);
    cr_assert(u);
    return u;
}

Test(terminal, help_lines_fit_80_columns)
{
    for (size_t i = 0; i < sizeof HELPS / sizeof *HELPS; i++) {
        char *h = help_of(i);
        for (const char *p = h; *p;) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            cr_expect(len <= 80, "%s %s --help: a line of %zu columns: %.*s", HELPS[i][0],
                      HELPS[i][1], len, (int)len, p);
            cr_expect(len == 0 || (p[len - 1] != ' ' && p[len - 1] != '\t'),
                      "%s %s --help: a line ends in a blank: %.*s", HELPS[i][0], HELPS[i][1],
                      (int)len, p);
            p = nl ? nl + 1 : p + len;
        }
        free(h);
    }
}

/* --gpu has a default (v100): the usage shows it optional. */
Test(terminal, gpu_is_optional_in_the_usage)
{
    static const char *const cmds[] = {"simulate", "pareto", "plan"};
    for (size_t i = 0; i < 3; i++) {
        cli_result r = cli_run((const char *[]){"wattsim", cmds[i], "--help", NULL});
        char *u = usage_of(r.out);
        cr_expect(strstr(u, "[--gpu G]"), "%s's usage shows --gpu as required: %s", cmds[i], u);
        cr_expect(strstr(r.out, "default v100"), "%s --help: no default GPU", cmds[i]);
        free(u);
        cli_free(&r);
    }
}

/* Every option a command's text describes (a line "  --NAME") before its
 * what-if and common options is in its usage lines. */
static void usage_names_described_options(const char *const *argv)
{
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "%s %s --help", argv[1], argv[2]);
    char *u = usage_of(r.out);
    const char *stop = strstr(r.out, "What-if options");
    if (!stop) stop = strstr(r.out, "Common options");
    if (!stop) stop = r.out + r.out_len;
    int described = 0;
    for (const char *p = r.out; (p = strstr(p, "\n  --")) && p < stop; p++) {
        char name[64];
        size_t n = strcspn(p + 3, " \n=");
        cr_assert(n < sizeof name);
        memcpy(name, p + 3, n);
        name[n] = '\0';
        described++;
        if (!strcmp(name, "--help")) continue;
        cr_expect(strstr(u, name), "%s %s: the usage lacks %s, which the text describes: %s",
                  argv[1], argv[2], name, u);
    }
    cr_expect(described > 0, "%s %s --help describes no option", argv[1], argv[2]);
    if (strstr(r.out, "What-if options"))
        cr_expect(strstr(u, "[WHAT-IF OPTIONS]"), "%s: the usage lacks [WHAT-IF OPTIONS]",
                  argv[1]);
    free(u);
    cli_free(&r);
}

Test(terminal, usage_names_every_described_option)
{
    usage_names_described_options((const char *[]){"wattsim", "run", "--help", NULL});
    usage_names_described_options((const char *[]){"wattsim", "simulate", "--help", NULL});
    usage_names_described_options((const char *[]){"wattsim", "pareto", "--help", NULL});
    usage_names_described_options((const char *[]){"wattsim", "policy", "new", "--help", NULL});
    usage_names_described_options((const char *[]){"wattsim", "policy", "check", "--help",
                                                    NULL});
    /* run's usage has --allow-python and --job (the two) */
    cli_result r = cli_run((const char *[]){"wattsim", "run", "--help", NULL});
    char *u = usage_of(r.out);
    cr_expect(strstr(u, "--allow-python PKG") && strstr(u, "--job D/N/O"), "%s", u);
    free(u);
    cli_free(&r);
}

/* `policy new` and `policy check` each describe their own options;
 * `policy --help` names both and sends to them. */
Test(terminal, policy_subcommands_have_their_own_help)
{
    cli_result n = cli_run((const char *[]){"wattsim", "policy", "new", "--help", NULL});
    cli_result c = cli_run((const char *[]){"wattsim", "policy", "check", "--help", NULL});
    cli_result p = cli_run((const char *[]){"wattsim", "policy", "--help", NULL});
    cr_expect_str_neq(n.out, c.out, "policy new --help and policy check --help are one text");
    cr_expect(!strncmp(n.out, "usage: wattsim policy new ", 26), "%.60s", n.out);
    cr_expect(!strncmp(c.out, "usage: wattsim policy check ", 28), "%.60s", c.out);
    cr_expect(strstr(n.out, "\n  --kind ") && !strstr(n.out, "--jobs"), "%s", n.out);
    cr_expect(strstr(c.out, "\n  --jobs ") && strstr(c.out, "\n  --policy ") &&
              strstr(c.out, "\n  --param ") && strstr(c.out, "\n  --timeout ") &&
              !strstr(c.out, "--kind"), "%s", c.out);
    cr_expect(strstr(p.out, "policy new --help") && strstr(p.out, "policy check --help"),
              "%s", p.out);
    cli_free(&n);
    cli_free(&c);
    cli_free(&p);
}

/* `list` runs no policy and shows no progress: it neither advertises nor
 * takes --verbose and --quiet. */
Test(terminal, list_has_no_verbose_or_quiet)
{
    cli_result r = cli_run((const char *[]){"wattsim", "list", "--help", NULL});
    cr_expect(!strstr(r.out, "--verbose") && !strstr(r.out, "--quiet"), "%s", r.out);
    cr_expect(strstr(r.out, "--traces") && strstr(r.out, "--catalogue"), "%s", r.out);
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "list", "gpus", "--quiet", NULL});
    cr_expect_eq(r.status, 2, "list --quiet: exit %d", r.status);
    cr_expect(strstr(r.err, "--quiet"), "%s", r.err);
    cli_free(&r);
}

/* An int parameter's bounds print as integers: flaky's `at` is
 * 1..1000000, which %g wrote 1..1e+06; so do the errors naming them. */
Test(terminal, integer_bounds_print_as_integers)
{
    cli_result r = cli_run((const char *[]){"wattsim", "list", "policies", "--plugin",
                                            WS_BUILD_DIR "/examples/flaky.so", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "at (int, default 3, 1..1000000): "), "%s", r.out);
    cr_expect(!strstr(r.out, "e+"), "%s", r.out);
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--workload",
                                 "squad", "--bso", WS_BUILD_DIR "/examples/flaky.so",
                                 "--bso-param", "at=0", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "must be in [1, 1000000], got 0"), "%s", r.err);
    cli_free(&r);
}

/* simulate's table: a run that was not profiled has a blank `profiled`
 * column, which ends the line (no 9 trailing blanks); no line of the
 * output ends in a blank. */
Test(terminal, simulate_table_has_no_trailing_blanks, .timeout = 60)
{
    cli_result r = cli_run((const char *[]){"wattsim", "simulate", "--traces", TRACES,
                                            "--workload", "squad", "--seed", "3", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    int profiled = 0, not_profiled = 0;
    for (const char *p = r.out; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        cr_expect(len == 0 || (p[len - 1] != ' ' && p[len - 1] != '\t'),
                  "a line ends in a blank: '%.*s'", (int)len, p);
        /* a run's row: rec try bs pl epochs energy_kJ time_min cost reached
         * [profiled] */
        int fields = 0;
        char row[256];
        if (len < sizeof row && len && p[len - 1] != ':') {
            memcpy(row, p, len);
            row[len] = '\0';
            char *save, *tok = strtok_r(row, " ", &save);
            if (tok && strspn(tok, "0123456789") == strlen(tok))
                for (; tok; tok = strtok_r(NULL, " ", &save)) fields++;
        }
        if (fields == 10) {
            cr_expect(len > 4 && !memcmp(p + len - 4, " yes", 4), "%.*s", (int)len, p);
            profiled++;
        } else if (fields == 9) {
            not_profiled++;
        }
        p = nl ? nl + 1 : p + len;
    }
    cr_expect(profiled > 0 && not_profiled > 0, "profiled rows %d, others %d: %s", profiled,
              not_profiled, r.out);
    cli_free(&r);
}

/* `list workloads` gives each target with its metric's name and which way
 * it improves (the catalogue's `metric` and `better`); a `better` that is
 * neither higher nor lower is refused with its place. */
Test(terminal, list_workloads_names_the_metric_and_its_direction)
{
    cli_result r = cli_run((const char *[]){"wattsim", "list", "workloads", "--catalogue",
                                            WS_SOURCE_DIR "/configs/workloads.yaml", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\ncifar100       cifar100       shufflenetv2       adadelta"
                            "   accuracy >= 0.6         100   1024\n"), "%s", r.out);
    cr_expect(strstr(r.out, " WER <= 40 ") && strstr(r.out, " F1 >= 84 ") &&
              strstr(r.out, " NDCG >= 0.41 "), "%s", r.out);
    cli_free(&r);
    char dir[] = "/tmp/wsterm.XXXXXX", path[64];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpus: [g1]\nworkloads:\n  w: {dataset: d, network: n, optimizer: o,"
          " target_metric: 1, max_epochs: 2, b0: 3,\n      better: up}\n", f);
    cr_assert_eq(fclose(f), 0);
    r = cli_run((const char *[]){"wattsim", "list", "workloads", "--catalogue", path, NULL});
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "c.yaml:4:15: workloads.w.better must be higher or lower"),
              "%s", r.err);
    cli_free(&r);
    /* without them, the number alone */
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpus: [g1]\nworkloads:\n  w: {dataset: d, network: n, optimizer: o,"
          " target_metric: 1, max_epochs: 2, b0: 3}\n", f);
    cr_assert_eq(fclose(f), 0);
    r = cli_run((const char *[]){"wattsim", "list", "workloads", "--catalogue", path, NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\nw              d              n                  o          1 "),
              "%s", r.out);
    cli_free(&r);
    unlink(path);
    rmdir(dir);
}
