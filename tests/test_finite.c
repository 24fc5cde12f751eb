/*
 * "Never inf or nan in an output": a battery of commands run the ways that
 * make numbers undefined (a policy that fails every seed, so a cell has no
 * successful seed; one seed, so a CI has no width; what-ifs; a group
 * replay; the report over it all), then every data file they wrote (CSV,
 * JSON, Markdown, TSV, HTML) and their stdout are searched for a nan or
 * inf token. Undefined values must be written as empty fields or `null`,
 * as docs/outputs.md documents. β is finite throughout: β = ∞ (early stopping
 * off) is an input, written `inf` in CSV and `null` in JSON on purpose.
 * Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define COMMON " --traces " TRACES " --catalogue " CATALOGUE
#define FAILS WS_TEST_PLUGIN_DIR "/fail_observe.so"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-finite-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* Run a command (printf-style, %s is the temp folder) that must exit 0,
 * or `want`. */
#define RUN(want, ...) cr_assert_eq(run_shell(__VA_ARGS__), want, "%s", #__VA_ARGS__)

Test(finite, no_nan_or_inf_in_any_output, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    write_file("one.yaml", "gpu: [v100, a40]\nworkload: [cifar100, squad]\neta: [0, 0.5, 1]\n"
                           "beta: [2, 3]\nseed: 1\nrecurrences: 40\n");
    write_file("two.yaml", "gpu: v100\nworkload: librispeech\neta: 0.5\nbeta: 2\nseed: 1..3\n"
                           "recurrences: 30\npower_cap: 200\ninput_stall: 0.2\nidle_power: 60\n"
                           "price: 0.1\n");
    /* every seed of fail_observe fails: cells with no successful seed */
    RUN(1, CLI " sweep %s/one.yaml" COMMON " --policies zeus:jit," FAILS ":jit --out %s/s1"
           " --quiet > %s/s1.stdout 2>/dev/null", tmp, tmp, tmp);
    RUN(0, CLI " sweep %s/two.yaml" COMMON " --policies zeus:jit,grid:grid --out %s/s2"
           " --quiet > %s/s2.stdout 2>/dev/null", tmp, tmp, tmp);
    RUN(1, CLI " curves %s/one.yaml" COMMON " --policies zeus:jit," FAILS ":jit --out %s/c1"
           " --quiet > %s/c1.stdout 2>/dev/null", tmp, tmp, tmp);
    RUN(0, CLI " run %s/two.yaml" COMMON " --format csv --out %s/r1 > %s/r1.stdout"
           " 2>/dev/null", tmp, tmp, tmp);
    RUN(0, CLI " run %s/two.yaml" COMMON " --format json --out %s/r2 > %s/r2.stdout"
           " 2>/dev/null", tmp, tmp, tmp);
    RUN(0, CLI " plan --gpu v100 --workload squad" COMMON " --seeds 5 --format json"
           " > %s/plan.json 2>/dev/null", tmp);
    RUN(0, CLI " plan --gpu a40 --workload cifar100" COMMON " --power-cap 120 --seeds 5"
           " --out %s/p1 > %s/plan.stdout 2>/dev/null", tmp, tmp);
    RUN(0, CLI " pareto --gpu p100 --workload imagenet" COMMON " --format csv"
           " > %s/pareto.csv 2>/dev/null", tmp);
    RUN(0, CLI " pareto --gpu p100 --workload imagenet" COMMON " --format json --input-stall 0.3"
           " --idle-power 50 > %s/pareto.json 2>/dev/null", tmp);
    RUN(0, CLI " groups synth --catalogue " CATALOGUE " --groups 3 --jobs-per-group 4"
           " --datasets cifar100,squad --out %s/g/groups.csv > /dev/null", tmp);
    RUN(0, CLI " groups replay" COMMON " --trace %s/g/groups.csv --out %s/g/out"
           " > %s/g.stdout 2>/dev/null", tmp, tmp, tmp);
    RUN(0, CLI " report %s/s2 > /dev/null 2>&1", tmp);
    /* Every data file and every stdout: not one nan or inf token. */
    RUN(0, "cd %s && find . -type f \\( -name '*.csv' -o -name '*.json' -o -name '*.md'"
           " -o -name '*.tsv' -o -name '*.html' -o -name '*.stdout' \\) > files.txt"
           " && test -s files.txt", tmp);
    run_shell("cd %s && xargs grep -IiwnE -- '-?(nan|inf|infinity)' < files.txt"
              " > hits.txt 2> errors.txt", tmp);
    char *h = slurp(tp("hits.txt")), *e = slurp(tp("errors.txt")), *files = slurp(tp("files.txt"));
    cr_expect_str_empty(e, "grep: %s", e);
    cr_expect_str_empty(h, "nan or inf in outputs:\n%.2000s", h);
    cr_expect_geq(strlen(files), 400, "too few outputs searched:\n%s", files);
    free(h);
    free(e);
    free(files);
    /* The battery did make undefined values: an empty CI field. */
    char *csv = slurp(tp("s1/sweep.csv"));
    cr_expect(strstr(csv, ",,"), "no empty field in s1/sweep.csv");
    free(csv);
}
