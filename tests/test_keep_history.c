/*
 * --keep-history on simulate and run: a simulation that fails keeps its
 * runs up to the failure, the failure is its last row, and the command
 * exits 1 with its one-line error; without the option nothing is written
 * and it exits 2 (tests/plugins/fail_at.c: a BSO whose predict fails at
 * recurrence `at`).
 *
 * The job is tests/fixture.h's with b0 32; fail_at answers b0 and the
 * default PLO the highest limit, so every run before the failure is
 * 32 @ 200 W for 5 epochs: 10 s * 5 = 50 s, 160 W * 50 s = 8000 J,
 * cost 0.5 * 8000 + 0.5 * 200 * 50 = 9000.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "run_cli.h"
#include "tmpdir.h"

#define FAIL_AT WS_TEST_PLUGIN_DIR "/fail_at.so"

static const char *traces;

static void setup(void)
{
    tmpdir_make("/tmp/wskeep.XXXXXX");
    traces = fixture_dir();
}

static void teardown(void)
{
    fixture_rmdir(traces);
    tmpdir_remove();
}

TestSuite(keep_history, .init = setup, .fini = teardown);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t len;
    char *s = cli_slurp(f, &len);
    fclose(f);
    return s;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

#define SIM(...)                                                                     \
    cli_run((const char *[]){"wattsim", "simulate", "--traces", traces, "--gpu", "g1", \
                             "--job", "d/n/o", "--target", "0.5", "--max-epochs", "10", \
                             "--b0", "32", "--bso", FAIL_AT, "--plo", "default",         \
                             "--recurrences", "5", __VA_ARGS__, NULL})

static const char *ERR =
    "wattsim: g1/d eta 0.5 beta 2 seed 1: bso fail_at: predict failed (returned -1)\n";

Test(keep_history, simulate_table_ends_with_the_failure)
{
    cli_result r = SIM("--bso-param", "at=3", "--keep-history");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_str_eq(r.err, ERR);
    /* The policies' identity lines (their hashes: test_provenance), then
     * the rest as it was. */
    char *id = strchr(r.out, '\n');
    cr_assert_not_null(id);
    const char *bso = "\nbso fail_at{at=3} " FAIL_AT " sha256 ", *plo = "plo default{} built-in sha256 ";
    cr_assert(!strncmp(id, bso, strlen(bso)), "%s", r.out);
    char *end = strchr(id + 1, '\n');
    cr_assert(end && !strncmp(end + 1, plo, strlen(plo)), "%s", r.out);
    end = strchr(end + 1, '\n');
    cr_assert_not_null(end);
    memmove(id, end, strlen(end) + 1);
    cr_assert_str_eq(r.out,
        "d on g1: bso fail_at, plo default, eta 0.5, beta 2, seed 1, b0 32, 5 recurrences\n"
        /* 9000 = 0.5 * 8000 J + 0.5 * 200 W * 50 s */
        "MaxPower 200 W: 1 GPU per job at 200 W\n"
        "\n"
        "  rec try     bs    pl epochs    energy_kJ     time_min           cost reached profiled\n"
        "    1   1     32   200      5          8.0         0.83         9000.0     yes\n"
        "    2   1     32   200      5          8.0         0.83         9000.0     yes\n"
        "\n"
        "total: 2 runs (0 not started), energy 0.0160 MJ, time 0.028 h, cost 18000;"
        " settled on bs 32 at 200 W\n"
        "failed in recurrence 3, try 1: g1/d eta 0.5 beta 2 seed 1: bso fail_at: predict"
        " failed (returned -1)\n");
    cli_free(&r);

    /* Failing in the first recurrence: no run, and nothing settled. */
    r = SIM("--bso-param", "at=1", "--keep-history");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.out, "\ntotal: 0 runs (0 not started), energy 0.0000 MJ, time 0.000 h,"
                            " cost 0; no run reached the target\nfailed in recurrence 1,"
                            " try 1: "), "%s", r.out);
    cli_free(&r);
}

Test(keep_history, simulate_json_has_status_and_error)
{
    cli_result r = SIM("--bso-param", "at=3", "--keep-history", "--format", "json");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_str_eq(r.err, ERR);
    cr_assert(strstr(r.out, "\"energy_j\": 16000, \"time_s\": 100, \"cost\": 18000, \"runs\": 2,"),
              "%s", r.out);
    cr_assert(strstr(r.out, ", \"status\": \"failed\", \"error\": \"g1/d eta 0.5 beta 2 seed 1:"
                            " bso fail_at: predict failed (returned -1)\", \"failed_recurrence\":"
                            " 3, \"failed_try\": 1, \"history\": [\n  {\"recurrence\": 1,"),
              "%s", r.out);
    cr_assert(strstr(r.out, "{\"recurrence\": 2, \"try\": 1, \"bs\": 32, \"pl\": 200, \"energy_j\":"
                            " 8000, \"time_s\": 50, \"cost\": 9000, \"epochs\": 5, \"reached\":"
                            " true, \"profiled\": false}\n]}\n"), "%s", r.out);
    cr_assert_null(strstr(r.out, "\"recurrence\": 3"), "%s", r.out);
    cli_free(&r);

    /* A simulation that succeeds says so. */
    r = SIM("--bso-param", "at=9", "--keep-history", "--format", "json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, ", \"status\": \"ok\", \"error\": null, \"history\": ["), "%s", r.out);
    cr_assert_str_eq(r.err, "");
    cli_free(&r);
}

/* A recurrence that never reaches its target: its 20 tries are kept, and
 * the failure is in recurrence 2, try 20. */
Test(keep_history, simulate_keeps_the_tries_of_a_recurrence_that_never_reaches)
{
    cli_result r = cli_run((const char *[]){
        "wattsim", "simulate", "--traces", traces, "--gpu", "g1", "--job", "d/n/o",
        "--target", "0.5", "--max-epochs", "10", "--b0", "32", "--bso", FAIL_AT ":stuck",
        "--plo", "default", "--recurrences", "3", "--keep-history", "--format", "json", NULL});
    cr_assert_eq(r.status, 1, "%s", r.err);
    const char *err = "wattsim: g1/d eta 0.5 beta 2 seed 1: d on g1: recurrence 2 did not"
                      " reach the target metric in 20 tries\n";
    cr_assert_str_eq(r.err, err);
    cr_assert(strstr(r.out, "\"runs\": 21,"), "%s", r.out);
    cr_assert(strstr(r.out, "\"failed_recurrence\": 2, \"failed_try\": 20,"), "%s", r.out);
    cr_assert(strstr(r.out, "{\"recurrence\": 2, \"try\": 20, \"bs\": 64, \"pl\": 200,"),
              "%s", r.out);
    cr_assert_null(strstr(r.out, "\"try\": 21"), "%s", r.out);
    cr_assert_null(strstr(r.out, "\"recurrence\": 3"), "%s", r.out);
    cli_free(&r);
}

Test(keep_history, simulate_without_it_prints_nothing)
{
    cli_result r = SIM("--bso-param", "at=3");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, ERR);
    cr_assert_eq(r.out_len, 0, "%s", r.out);
    cli_free(&r);
}

/* A config of two seeds; fail_at fails at recurrence `at` in every cell,
 * so the run stops in cell 0 (seed 1). */
static const char *config(int at)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/c.yaml", tmp);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "gpu: g1\n"
               "job: {dataset: d, network: n, optimizer: o, target_metric: 0.5,"
               " max_epochs: 10, b0: 32}\n"
               "seeds: [1, 2]\nrecurrences: 4\n"
               "bso: {name: %s, params: {at: %d}}\nplo: default\ntraces: %s\n",
            FAIL_AT, at, traces);
    cr_assert_eq(fclose(f), 0);
    return path;
}

Test(keep_history, run_keeps_history_csv_up_to_the_failure)
{
    char out[600], path[700];
    snprintf(out, sizeof out, "%s/out", tmp);
    const char *cfg = config(3);

    /* Without --keep-history: exit 2, the folder it made is gone. */
    cli_result r = cli_run((const char *[]){"wattsim", "run", cfg, "--out", out,
                                            "--allow-plugins", WS_TEST_PLUGIN_DIR, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, ERR);
    cr_assert_eq(r.out_len, 0);
    cr_assert(!exists(out), "a failed run left %s", out);
    cli_free(&r);

    r = cli_run((const char *[]){"wattsim", "run", cfg, "--out", out, "--keep-history",
                                 "--allow-plugins", WS_TEST_PLUGIN_DIR, NULL});
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert_str_eq(r.err, ERR);
    cr_assert_eq(r.out_len, 0, "%s", r.out);
    snprintf(path, sizeof path, "%s/history.csv", out);
    char *h = slurp(path);
    cr_assert_not_null(h, "no %s", path);
    cr_assert_str_eq(h,
        "simulation,gpu,workload,eta,beta,seed,recurrence,try,bs,pl,epochs,energy_j,time_s,cost,"
        "reached,profiled,policy,status,error\n"
        "0,g1,d,0.5,2,1,1,1,32,200,5,8000,50,9000,1,0,fail_at{at=3}+default,ok,\n"
        "0,g1,d,0.5,2,1,2,1,32,200,5,8000,50,9000,1,0,fail_at{at=3}+default,ok,\n"
        "0,g1,d,0.5,2,1,3,1,,,,,,,,,fail_at{at=3}+default,failed,g1/d eta 0.5 beta 2 seed 1:"
        " bso fail_at: predict failed (returned -1)\n");
    free(h);
    /* nothing else: no summary (the completion mark), no figure */
    const char *none[] = {"summary.csv", "summary.json", "pareto-g1-d.png"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", out, none[i]);
        cr_assert(!exists(path), "%s was written", path);
    }
    cli_free(&r);

    /* Again: the kept history is not replaced without --force. */
    r = cli_run((const char *[]){"wattsim", "run", cfg, "--out", out, "--keep-history",
                                 "--allow-plugins", WS_TEST_PLUGIN_DIR, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "history.csv: exists; pass --force"), "%s", r.err);
    cli_free(&r);
}

/* --force over a complete run, then a failure: the earlier summary (the
 * completion mark) goes with the history it described. */
Test(keep_history, run_force_over_a_complete_run_drops_its_summary)
{
    char out[600], path[700];
    snprintf(out, sizeof out, "%s/out", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "run", config(9), "--out", out,
                                            "--keep-history", "--allow-plugins",
                                            WS_TEST_PLUGIN_DIR, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    snprintf(path, sizeof path, "%s/history.csv", out);
    char *h = slurp(path);
    cr_assert_not_null(h);
    cr_assert_eq(cli_lines(h), 1 + 2 * 4, "%s", h);   /* two cells of 4 runs, all ok */
    cr_assert_null(strstr(h, "failed"), "%s", h);
    free(h);
    snprintf(path, sizeof path, "%s/summary.csv", out);
    cr_assert(exists(path));

    r = cli_run((const char *[]){"wattsim", "run", config(2), "--out", out, "--force",
                                 "--keep-history", "--allow-plugins", WS_TEST_PLUGIN_DIR,
                                 NULL});
    cr_assert_eq(r.status, 1, "%s", r.err);
    cli_free(&r);
    cr_assert(!exists(path), "the earlier summary.csv is still there");
    snprintf(path, sizeof path, "%s/summary.json", out);
    cr_assert(!exists(path), "the earlier summary.json is still there");
    snprintf(path, sizeof path, "%s/history.csv", out);
    h = slurp(path);
    cr_assert_eq(cli_lines(h), 3, "%s", h);            /* header, 1 run, the failure */
    cr_assert(strstr(h, "\n0,g1,d,0.5,2,1,2,1,,,,,,,,,fail_at{at=2}+default,failed,"), "%s",
              h);
    free(h);
}
