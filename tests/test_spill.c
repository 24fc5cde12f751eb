/*
 * A sweep's store (issue 10, sweep_store.c): past WATTSIM_SPILL_SIMS
 * simulations the results go to an unlinked file in the output folder
 * instead of memory. Made tiny here, it must change no byte of any output
 * (sweep.csv, sweep.json, sweep.md, savings.csv, curves.csv, the failure
 * warnings) for 1 and 2 threads, with seeds failing (tests/plugins/flaky.c),
 * with --isolate, --resume and shards merged; leave no file behind; and
 * keep the peak RSS flat as the seeds grow tenfold. Needs the fetched Zeus
 * traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define FLAKY WS_TEST_PLUGIN_DIR "/flaky.so"
#define ARGS " --traces " TRACES " --catalogue " CATALOGUE " --no-plot --quiet"
/* zeus, flaky failing half the seeds at recurrence 3, flaky failing a fifth
 * at recurrence 1; default and oracle are added: 5 pairs. */
#define POLICIES " --policies 'zeus:jit," FLAKY ":jit," FLAKY "{p=0.2,at=1}:jit'"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-spill-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* 5 pairs x 2 workloads x 40 seeds = 400 simulations. */
static void make_config(void)
{
    write_file("s.yaml", "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..40\nrecurrences: 12\n");
}

/* `wattsim CMD` with WATTSIM_SPILL_SIMS=spill into tmp/out (stderr kept in
 * tmp/out.err); its exit status. */
static int run(const char *cmd, long spill, int threads, const char *extra, const char *out)
{
    return run_shell("WATTSIM_SPILL_SIMS=%ld " CLI " %s %s/s.yaml" POLICIES " --threads %d" ARGS
                     " %s --out %s/%s >/dev/null 2>%s/%s.err",
                     spill, cmd, tmp, threads, extra, tmp, out, tmp, out);
}

/* No spill file (nor anything else unexpected) left in tmp/dir. */
static void expect_no_spill(const char *dir)
{
    DIR *d = opendir(tp(dir));
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));)
        cr_expect_null(strstr(e->d_name, "spill"), "%s/%s left behind", dir, e->d_name);
    closedir(d);
}

static const char *const SWEEP_FILES[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.csv",
                                          "mem.err"};

/* The reference (in memory: 400 < 10^6) has failed seeds: else the test
 * would prove nothing about failures. */
static void reference(const char *cmd, const char *extra)
{
    make_config();
    cr_assert_eq(run(cmd, 1000000, 1, extra, "mem"), 1);
    char *err = slurp_file(tp("mem.err"));
    cr_assert(strstr(err, "seed ") && strstr(err, "bso flaky: predict failed"), "%s", err);
    free(err);
}

Test(spill, sweep_same_bytes_threads_1_and_2, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    reference("sweep", "");
    /* every simulation spilled (1), and a threshold inside a cell (7) */
    const long spills[3] = {1, 1, 7};
    const int threads[3] = {1, 2, 2};
    for (int k = 0; k < 3; k++) {
        char out[16];
        snprintf(out, sizeof out, "sp%d", k);
        cr_assert_eq(run("sweep", spills[k], threads[k], "", out), 1);
        /* stderr (the warnings, first failure per cell) as a file in out/ */
        run_shell("mv %s/%s.err %s/%s/mem.err && cp %s/mem.err %s/mem/mem.err", tmp, out, tmp,
                  out, tmp, tmp);
        tmpdir_expect_same_files("mem", out, SWEEP_FILES, 5);
        expect_no_spill(out);
    }
}

Test(spill, curves_same_bytes, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    reference("curves", "");
    cr_assert_eq(run("curves", 1, 2, "", "sp"), 1);
    const char *files[] = {"curves.csv"};
    tmpdir_expect_same_files("mem", "sp", files, 1);
    expect_no_spill("sp");
}

Test(spill, isolate_same_bytes, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    reference("sweep", "");
    cr_assert_eq(run("sweep", 1, 2, "--isolate", "sp"), 1);
    tmpdir_expect_same_files("mem", "sp", SWEEP_FILES, 4);
}

Test(spill, resume_and_merge_same_bytes, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    reference("sweep", "");
    /* Two shards spilled, merged spilled. */
    cr_assert_eq(run("sweep", 1, 2, "--shard 0/2", "s0"), 1);
    cr_assert_eq(run("sweep", 3, 1, "--shard 1/2", "s1"), 1);
    cr_assert_eq(run_shell("WATTSIM_SPILL_SIMS=1 " CLI " merge sweep %s/s.yaml %s/s0 %s/s1"
                           POLICIES ARGS " --out %s/m >/dev/null 2>&1", tmp, tmp, tmp, tmp), 1);
    tmpdir_expect_same_files("mem", "m", SWEEP_FILES, 4);
    /* Shard 0's journal as an interrupted run's: --resume completes it. */
    cr_assert_eq(run_shell("mkdir %s/r && cp %s/s0/sweep.journal %s/r/", tmp, tmp, tmp), 0);
    cr_assert_eq(run("sweep", 1, 2, "--resume", "r"), 1);
    tmpdir_expect_same_files("mem", "r", SWEEP_FILES, 4);
    expect_no_spill("r");
}

Test(spill, bad_threshold_and_unwritable_spill, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    make_config();
    cr_assert_eq(run("sweep", 0, 1, "", "zero"), 2);
    char *err = slurp_file(tp("zero.err"));
    cr_expect_str_eq(err, "wattsim: WATTSIM_SPILL_SIMS='0' is not a number of simulations >= 1\n");
    free(err);
    cr_expect_neq(access(tp("zero"), F_OK), 0, "the folder was made");
    /* Files capped at 8 KiB: the spill file (400 x 64 bytes) cannot be
     * sized; one line naming it, nothing written. */
    signal(SIGXFSZ, SIG_DFL);                 /* wattsim must not need it ignored */
    cr_assert_eq(run_shell("ulimit -f 8; WATTSIM_SPILL_SIMS=1 " CLI
                           " sweep %s/s.yaml" POLICIES ARGS " --out %s/full >/dev/null"
                           " 2>%s/full.err", tmp, tmp, tmp), 2);
    err = slurp_file(tp("full.err"));
    cr_expect(strstr(err, "/full: cannot size the sweep's spill file to 400 simulations: File"
              " too large") && !strchr(err, '\n')[1], "%s", err);
    free(err);
    cr_expect_neq(access(tp("full"), F_OK), 0, "the folder (or the spill file) was left");
}

/* ------------------------------------------------------------ memory */

/* Peak RSS (KiB) of a sweep of one job with `seeds` seeds into tmp/NAME,
 * spilled past `spill` simulations. */
static long peak_kib(long seeds, const char *spill, const char *name)
{
    char set[64], cfg[600], out[600], env[64];
    snprintf(set, sizeof set, "seeds=1..%ld", seeds);
    snprintf(cfg, sizeof cfg, "%s/m.yaml", tmp);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    snprintf(env, sizeof env, "WATTSIM_SPILL_SIMS=%s", spill);
    char *const argv[] = {CLI, "sweep", cfg, "--set", set, "--threads", "1",
                          "--traces", TRACES, "--catalogue", CATALOGUE, "--no-plot",
                          "--quiet", "--out", out, NULL};
    return tmpdir_peak_kib(argv, env);
}

Test(memory, a_sweep_does_not_grow_with_seeds, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    /* 60,000 and 600,000 simulations (3 pairs). Measured: 10,100 and
     * 61,296 KiB with every simulation in memory (88 bytes each, and the
     * savings figure's per-seed arrays); 6,312 and 7,688 KiB spilled (what
     * still grows is a byte per simulation: which ones to run). Too slow
     * under valgrind (whose own memory would be measured too). */
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) cr_skip_test("under valgrind");
    write_file("m.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 5\nbso: zeus\nplo: jit\n");
    long small = peak_kib(20000, "4096", "small");
    /* A cell of 20,000 seeds is read in chunks of 4,096: the same bytes as
     * from memory. */
    peak_kib(20000, "1000000", "mem");
    tmpdir_expect_same_files("mem", "small", SWEEP_FILES, 4);
#ifdef __SANITIZE_ADDRESS__
    /* ASan holds freed blocks back (its quarantine, 256 MiB): the peak
     * grows with the number of allocations, whatever the sweep keeps. */
    cr_skip_test("the peak RSS under ASan measures its quarantine");
#endif
    long big = peak_kib(200000, "4096", "big");
    cr_expect_lt(big - small, 8 * 1024, "peak RSS %ld KiB at 2e4 seeds, %ld KiB at 2e5", small,
                 big);
}
