/*
 * `sweep --keep-history` (issue 9): history.csv holds every run of every
 * simulation in plan order, with `run`'s history columns plus status and
 * error; a simulation that fails (tests/plugins/flaky.c: at recurrence 3,
 * for some seeds) keeps its runs up to the failure, then one 'failed' row.
 * The same bytes for 1 and 2 threads; the same runs as `wattsim run`
 * gives for that seed; refused (exit 2) where the runs cannot be kept.
 * Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define FLAKY WS_TEST_PLUGIN_DIR "/flaky.so"
#define ARGS " --traces " TRACES " --catalogue " CATALOGUE " --no-plot --quiet"
#define POLICIES " --policies 'zeus:jit," FLAKY "{p=0.5,at=3}:jit'"
#define FLAKY_LABEL "flaky{p=0.5,at=3}+jit"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-sweep-history-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* 4 pairs (zeus, flaky, default, oracle) x 2 workloads x 6 seeds x 5
 * recurrences. */
static void make_config(void)
{
    write_file("h.yaml", "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..6\nrecurrences: 5\n");
}

static int sweep(int threads, const char *out)
{
    return run_shell(CLI " sweep %s/h.yaml" POLICIES " --threads %d" ARGS
                     " --keep-history --out %s/%s >%s/%s.out 2>/dev/null",
                     tmp, threads, tmp, out, tmp, out);
}

Test(sweep_history, runs_up_to_the_failure_in_plan_order, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    make_config();
    cr_assert_eq(sweep(1, "t1"), 1);          /* some simulations failed */
    cr_assert_eq(sweep(2, "t2"), 1);
    char *a = slurp(tp("t1/history.csv")), *b = slurp(tp("t2/history.csv"));
    cr_expect_str_eq(a, b, "history.csv differs between 1 and 2 threads");
    free(a);
    free(b);
    char *said = slurp(tp("t1.out"));
    cr_expect(strstr(said, ", history.csv)\n"), "%s", said);
    free(said);

    table h = read_table(tp("t1/history.csv")), sw = read_table(tp("t1/sweep.csv"));
    cr_assert_str_eq(h.hdr[h.nh - 3], "policy");
    cr_assert_str_eq(h.hdr[h.nh - 2], "status");
    cr_assert_str_eq(h.hdr[h.nh - 1], "error");
    /* Walk the simulations (cell = the simulation's index in plan order). */
    size_t failed_sims = 0, ok_sims = 0;
    long last_index = -1;
    for (size_t r = 0; r < h.n;) {
        long idx = (long)num(&h, r, "simulation");
        cr_assert_gt(idx, last_index, "row %zu: simulations out of plan order", r);
        last_index = idx;
        const char *policy = str(&h, r, "policy");
        unsigned long seed = (unsigned long)num(&h, r, "seed");
        long expect_rec = 1, last_reached = 0;
        int failed = 0;
        for (; r < h.n && (long)num(&h, r, "simulation") == idx; r++) {
            cr_assert(!failed, "a row after the failed one (row %zu)", r);
            long rec = (long)num(&h, r, "recurrence");
            cr_assert_str_eq(str(&h, r, "policy"), policy);
            if (!strcmp(str(&h, r, "status"), "failed")) {
                failed = 1;
                /* flaky fails in predict at recurrence 3, its first try */
                cr_expect_eq(rec, 3, "simulation %ld failed in recurrence %ld", idx, rec);
                cr_expect_eq(num(&h, r, "try"), 1);
                cr_expect_str_eq(str(&h, r, "bs"), "");
                char want[128];
                snprintf(want, sizeof want, "seed %lu: bso flaky: predict failed", seed);
                cr_expect(strstr(str(&h, r, "error"), want), "%s", str(&h, r, "error"));
                cr_expect_eq(last_reached, 2, "simulation %ld: runs up to recurrence 2", idx);
                continue;
            }
            cr_assert_str_eq(str(&h, r, "status"), "ok");
            cr_assert_str_eq(str(&h, r, "error"), "");
            cr_assert(rec == expect_rec || rec == expect_rec + 1,
                      "simulation %ld: recurrence %ld after %ld", idx, rec, expect_rec);
            if (rec == expect_rec + 1) cr_assert_eq(last_reached, expect_rec);
            expect_rec = rec;
            if (num(&h, r, "reached") == 1) last_reached = rec;
        }
        if (failed) {
            cr_expect_str_eq(policy, FLAKY_LABEL, "only flaky fails");
            failed_sims++;
        } else {
            cr_expect_eq(last_reached, 5, "simulation %ld reached all 5 recurrences", idx);
            ok_sims++;
        }
    }
    cr_expect_eq(last_index, 47, "48 simulations");
    cr_expect_eq(failed_sims + ok_sims, 48);
    /* As many failures as sweep.csv counts. */
    double counted = 0;
    for (size_t r = 0; r < sw.n; r++) counted += num(&sw, r, "seeds_failed");
    cr_expect_eq((double)failed_sims, counted);
    cr_expect_gt(failed_sims, 0, "no simulation failed: the test proves nothing");
    free_table(&h);
    free_table(&sw);
}

/* zeus+jit's simulation for seed 4 on squad: the same runs as `wattsim run`
 * writes for it (every column from gpu to profiled). */
Test(sweep_history, same_runs_as_run, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    make_config();
    cr_assert_eq(sweep(2, "s"), 1);
    write_file("r.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 4\n"
                         "recurrences: 5\nbso: zeus\nplo: jit\n");
    cr_assert_eq(run_shell(CLI " run %s/r.yaml --traces " TRACES " --catalogue " CATALOGUE
                           " --out %s/run >/dev/null 2>&1", tmp, tmp), 0);
    table s = read_table(tp("s/history.csv")), r = read_table(tp("run/history.csv"));
    size_t first = col(&s, "gpu"), last = col(&s, "profiled");
    cr_assert_eq(col(&r, "gpu"), first);
    cr_assert_eq(col(&r, "profiled"), last);
    size_t k = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (strcmp(str(&s, i, "policy"), "zeus+jit") || strcmp(str(&s, i, "workload"), "squad")
            || num(&s, i, "seed") != 4)
            continue;
        cr_assert_lt(k, r.n, "more runs in the sweep than in run");
        for (size_t c = first; c <= last; c++)
            cr_expect_str_eq(s.rows[i][c], r.rows[k][c], "run %zu, column %s", k, s.hdr[c]);
        k++;
    }
    cr_expect_eq(k, r.n, "%zu runs in the sweep, %zu in run", k, r.n);
    cr_expect_gt(k, 4);
    free_table(&s);
    free_table(&r);
}

Test(sweep_history, refused_where_runs_are_not_kept, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    make_config();
    const char *opts[] = {"--isolate", "--shard 0/2", "--resume"};
    const char *want[] = {"--keep-history is not available with --isolate",
                          "--keep-history is not available with --shard",
                          "--keep-history is not available with --resume"};
    for (int i = 0; i < 3; i++) {
        int st = run_shell(CLI " sweep %s/h.yaml" POLICIES ARGS " --keep-history %s --out %s/x"
                           " >/dev/null 2>%s/x.err", tmp, opts[i], tmp, tmp);
        cr_expect_eq(st, 2, "%s", opts[i]);
        char *err = slurp(tp("x.err"));
        cr_expect(strstr(err, want[i]) && !strchr(err, '\n')[1], "%s", err);
        free(err);
        cr_expect_neq(access(tp("x"), F_OK), 0, "%s: the folder was made", opts[i]);
    }
}
