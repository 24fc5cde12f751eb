/*
 * MPI (a -DWATTSIM_MPI=ON build, e.g. build-mpi/ of `scripts/test --mpi`):
 * `mpirun -n R wattsim sweep|curves` shards the simulations over the ranks
 * and reduces on rank 0 with bytes identical to one process, for R = 2
 * and 4, failing seeds included; per-rank journals are gone afterwards.
 * Skipped in a build without MPI or without mpirun.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define ARGS " --traces " TRACES " --catalogue " CATALOGUE " --no-plot --threads 1"
#define MPIRUN "mpirun --oversubscribe --allow-run-as-root -n "

static void mktmp(void) { tmpdir_make("/tmp/ws-test-mpi-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static char *slurp(const char *dir, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s/%s", tmp, dir, name);
    return slurp_file(path);
}

static void need_mpi(void)
{
#ifndef WS_HAVE_MPI
    cr_skip_test("not an MPI build (cmake -DWATTSIM_MPI=ON, or scripts/test --mpi)");
#endif
    if (run_shell("command -v mpirun >/dev/null 2>&1"))
        cr_skip_test("no mpirun (apt-get install openmpi-bin)");
}

Test(mpi, two_and_four_ranks_give_the_bytes_of_one_process, .init = mktmp, .fini = rmtmp,
     .timeout = 600)
{
    need_mpi();
    /* gts fails some librispeech seeds: failures cross ranks too. */
    write_file("g.yaml", "gpu: v100\nworkload: [librispeech, squad]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..6\nrecurrences: 30\n");
    cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --policies gts:jit,zeus:jit" ARGS
                           " --out %s/r1 >/dev/null 2>&1", tmp, tmp), 1);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.csv"};
    for (int r = 2; r <= 4; r += 2) {
        char dir[16];
        snprintf(dir, sizeof dir, "r%d", r);
        int st = run_shell(MPIRUN "%d " CLI " sweep %s/g.yaml --policies gts:jit,zeus:jit" ARGS
                           " --out %s/%s >%s/o%d.txt 2>&1", r, tmp, tmp, dir, tmp, r);
        cr_expect_neq(st, 0, "failed seeds: a nonzero status");
        for (int i = 0; i < 4; i++) {
            char *a = slurp("r1", files[i]), *b = slurp(dir, files[i]);
            cr_expect_str_eq(a, b, "%s differs with %d ranks", files[i], r);
            free(a);
            free(b);
        }
        cr_expect_eq(run_shell("ls %s/%s | grep -q journal", tmp, dir), 1,
                     "no journal is left with %d ranks", r);
    }
}

Test(mpi, curves_with_two_ranks, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    need_mpi();
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..5\n"
                         "recurrences: 25\nbso: zeus\nplo: jit\n");
    cr_assert_eq(run_shell(CLI " curves %s/c.yaml" ARGS " --out %s/one >/dev/null 2>&1", tmp,
                           tmp), 0);
    cr_assert_eq(run_shell(MPIRUN "2 " CLI " curves %s/c.yaml" ARGS " --out %s/two"
                           " >/dev/null 2>&1", tmp, tmp), 0);
    char *a = slurp("one", "curves.csv"), *b = slurp("two", "curves.csv");
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
}

Test(mpi, a_config_error_is_one_line_from_rank_zero, .init = mktmp, .fini = rmtmp,
     .timeout = 600)
{
    need_mpi();
    write_file("bad.yaml", "gpu: v100\nworkload: squad\neta: 7\n");
    run_shell(MPIRUN "2 " CLI " sweep %s/bad.yaml" ARGS " --out %s/x >/dev/null 2>%s/e.txt",
              tmp, tmp, tmp);
    char *e = slurp(".", "e.txt");
    cr_expect_not_null(strstr(e, "bad.yaml:3:"), "%s", e);
    char *second = strstr(e, "bad.yaml:3:");
    cr_expect_null(second ? strstr(second + 1, "bad.yaml:3:") : NULL, "printed once:\n%s", e);
    free(e);
}

Test(mpi, each_rank_resumes_its_own_journal, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    need_mpi();
    /* Each rank's journal is the journal of shard rank/size: make them with
     * --shard (as if each rank had been killed after finishing), put them
     * where the ranks look, and resume: nothing is run again, the outputs
     * are one process's bytes, the journals are gone. */
    write_file("c.yaml", "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..4\nrecurrences: 25\nbso: zeus\nplo: jit\n");
    cr_assert_eq(run_shell(CLI " sweep %s/c.yaml" ARGS " --out %s/one >/dev/null 2>&1", tmp,
                           tmp), 0);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --shard %d/2" ARGS " --out %s/s%d"
                               " >/dev/null 2>&1", tmp, k, tmp, k), 0);
        cr_assert_eq(run_shell("mkdir -p %s/m && cp %s/s%d/sweep.journal"
                               " %s/m/sweep.journal.%d-of-2", tmp, tmp, k, tmp, k), 0);
    }
    cr_assert_eq(run_shell(MPIRUN "2 " CLI " sweep %s/c.yaml --resume" ARGS " --out %s/m"
                           " >%s/o.txt 2>&1", tmp, tmp, tmp), 0);
    char *o = slurp(".", "o.txt");
    /* rank 0 reports its own share: 12 of the 24 simulations */
    cr_expect_not_null(strstr(o, "24 simulations (12 from the journal), 6 cells"), "%s", o);
    free(o);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md"};
    for (int i = 0; i < 3; i++) {
        char *a = slurp("one", files[i]), *b = slurp("m", files[i]);
        cr_expect_str_eq(a, b, "%s differs after a resume with 2 ranks", files[i]);
        free(a);
        free(b);
    }
    cr_expect_eq(run_shell("ls %s/m | grep -q journal", tmp), 1, "the rank journals are gone");
}

Test(mpi, groups_replay_with_two_and_three_ranks, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    need_mpi();
    cr_assert_eq(run_shell(CLI " groups synth --out %s/t.csv --groups 7 --jobs-per-group 10"
                           " >/dev/null", tmp), 0);
    const char *rep = " groups replay --trace %s/t.csv --traces " TRACES " --catalogue "
                      CATALOGUE;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s%s --out %%s/one >%%s/one.txt", CLI, rep);
    cr_assert_eq(run_shell(cmd, tmp, tmp, tmp), 0);
    const char *files[] = {"history.csv", "groups.csv", "groups.json"};
    for (int r = 2; r <= 3; r++) {
        char dir[16], txt[16];
        snprintf(dir, sizeof dir, "r%d", r);
        snprintf(txt, sizeof txt, "r%d.txt", r);
        snprintf(cmd, sizeof cmd, MPIRUN "%d %s%s --out %%s/%s >%%s/%s", r, CLI, rep, dir, txt);
        cr_assert_eq(run_shell(cmd, tmp, tmp, tmp), 0);
        for (int i = 0; i < 3; i++) {
            char *a = slurp("one", files[i]), *b = slurp(dir, files[i]);
            cr_expect_str_eq(a, b, "%s differs with %d ranks", files[i], r);
            free(a);
            free(b);
        }
        char *a = slurp(".", "one.txt"), *b = slurp(".", txt);
        cr_expect_str_eq(a, b, "stdout differs with %d ranks", r);
        free(a);
        free(b);
    }
}
