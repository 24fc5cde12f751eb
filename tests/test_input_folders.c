/*
 * An output folder is never one of the command's input folders (issue 26,
 * item 1). `wattsim merge sweep CONFIG s0 s1 s2 --out s1 --force` merged
 * and then deleted s1/sweep.journal, one of its inputs: a second merge
 * found no journal there, and that shard's results were gone. Now every
 * spelling of an input folder as the output (the folder itself, a
 * symbolic link to it, a path through "..", the folder of a journal given
 * by name) is refused with or without --force, naming both folders, and
 * nothing in the input folder is written or removed (its listing and its
 * journal's bytes are those before). The same for the traces folder of
 * run, sweep, potential and plan (a copy, in case). A merge writes no
 * journal and so removes none: one in its output folder is refused, and
 * kept, whatever the options. Needs the fetched Zeus traces.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define ARGS " --traces " TRACES " --catalogue " CATALOGUE " --no-plot"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-infolders-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* Names and sizes of what folder `dir` of tmp holds, sorted, in one string
 * (hidden files too: the lock file must not appear or change). */
static char *listing(const char *dir)
{
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd '%s/%s' && stat -c '%%s %%y' . && ls -lA --time-style=+%%s.%%N"
             " | awk '{print $5, $6, $7}'", tmp, dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    cr_assert_not_null(m);
    char buf[512];
    while (fgets(buf, sizeof buf, p)) fputs(buf, m);
    pclose(p);
    fclose(m);
    return out;
}

/* Three shards of a small sweep in s0, s1, s2. */
static void three_shards(void)
{
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..4\n"
                         "recurrences: 20\nbso: zeus\nplo: jit\n");
    for (int k = 0; k < 3; k++)
        cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --shard %d/3" ARGS " --out %s/s%d"
                               " >/dev/null 2>&1", tmp, k, tmp, k), 0, "shard %d", k);
}

/* `merge ... --out OUT OPTS` is refused with exit 2 and one line naming
 * OUT and the input folder IN; s1 (or `in`) is as it was. */
static void expect_refused(const char *out, const char *in, const char *parts, const char *opts)
{
    char *before = listing(in), journal_before[600];
    snprintf(journal_before, sizeof journal_before, "%s/%s/sweep.journal", tmp, in);
    char *jb = slurp_file(journal_before);
    int rc = run_shell(CLI " merge sweep %s/c.yaml %s" ARGS " --out %s %s >%s/o.txt 2>%s/e.txt",
                       tmp, parts, out, opts, tmp, tmp);
    cr_expect_eq(rc, 2, "--out %s %s: exit %d", out, opts, rc);
    char *e = slurp_file(tp("e.txt")), want[1200];
    snprintf(want, sizeof want, "wattsim: %s: is the input folder %s/%s (the same folder); an"
             " output folder is never one of the command's input folders, even with --force"
             " or --resume: write elsewhere\n", out, tmp, in);
    cr_expect_str_eq(e, want);
    free(e);
    char *o = slurp_file(tp("o.txt"));
    cr_expect_str_eq(o, "", "nothing on stdout: %s", o);
    free(o);
    char *after = listing(in);
    cr_expect_str_eq(after, before, "the input folder changed");
    char *ja = slurp_file(journal_before);
    cr_expect_not_null(ja, "the journal is gone");
    cr_expect(ja && jb && !strcmp(ja, jb), "the journal changed");
    free(ja);
    free(jb);
    free(before);
    free(after);
}

Test(merge, an_input_folder_is_never_the_output, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    three_shards();
    char parts[600], out[600];
    snprintf(parts, sizeof parts, "%s/s0 %s/s1 %s/s2", tmp, tmp, tmp);
    snprintf(out, sizeof out, "%s/s1", tmp);
    expect_refused(out, "s1", parts, "");
    expect_refused(out, "s1", parts, "--force");
    /* through a symbolic link */
    cr_assert_eq(run_shell("ln -s s1 %s/link", tmp), 0);
    snprintf(out, sizeof out, "%s/link", tmp);
    expect_refused(out, "s1", parts, "--force");
    /* through ".." */
    snprintf(out, sizeof out, "%s/s0/../s2", tmp);
    expect_refused(out, "s2", parts, "--force");
    /* the folder of a journal given by name */
    snprintf(parts, sizeof parts, "%s/s0 %s/s1/sweep.journal %s/s2", tmp, tmp, tmp);
    snprintf(out, sizeof out, "%s/s1", tmp);
    expect_refused(out, "s1", parts, "--force");
    /* Every shard's results are still there: a merge elsewhere works, and
     * leaves its inputs' journals (a merge removes none). */
    snprintf(parts, sizeof parts, "%s/s0 %s/s1 %s/s2", tmp, tmp, tmp);
    cr_assert_eq(run_shell(CLI " merge sweep %s/c.yaml %s" ARGS " --out %s/m >%s/o.txt 2>&1",
                           tmp, parts, tmp, tmp), 0);
    char *o = slurp_file(tp("o.txt"));
    cr_expect_not_null(strstr(o, "12 simulations (from 3 shard journals), 3 cells"), "%s", o);
    free(o);
    struct stat st;
    for (int k = 0; k < 3; k++) {
        char j[64];
        snprintf(j, sizeof j, "s%d/sweep.journal", k);
        cr_expect_eq(stat(tp(j), &st), 0, "%s is gone", j);
    }
    cr_assert_eq(run_shell(CLI " merge sweep %s/c.yaml %s" ARGS " --out %s/m2 >/dev/null 2>&1",
                           tmp, parts, tmp), 0, "a second merge of the same shards");
}

Test(merge, a_journal_in_the_output_folder_is_kept, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    /* Not an input: another shard's, say. It was taken for "an interrupted
     * merge" and removed by --force. */
    three_shards();
    cr_assert_eq(run_shell("mkdir %s/m && cp %s/s2/sweep.journal %s/m/", tmp, tmp, tmp), 0);
    char *before = slurp_file(tp("m/sweep.journal"));
    for (int force = 0; force < 2; force++) {
        int rc = run_shell(CLI " merge sweep %s/c.yaml %s/s0 %s/s1 %s/s2" ARGS " --out %s/m %s"
                           " >/dev/null 2>%s/e.txt", tmp, tmp, tmp, tmp, tmp,
                           force ? "--force" : "", tmp);
        cr_expect_eq(rc, 2);
        char *e = slurp_file(tp("e.txt")), want[800];
        snprintf(want, sizeof want, "wattsim: %s/m/sweep.journal: a journal is in the output"
                 " folder; a merge neither reads nor removes it (merge its shard from the"
                 " folder it is in, if it is one): --out another folder\n", tmp);
        cr_expect_str_eq(e, want);
        free(e);
        char *after = slurp_file(tp("m/sweep.journal"));
        cr_expect(after && !strcmp(after, before), "the journal changed or went");
        free(after);
        struct stat st;
        cr_expect_neq(stat(tp("m/sweep.csv"), &st), 0, "outputs were written");
    }
    free(before);
}

/* The traces folder as the output of run, sweep, potential and plan: a
 * copy, so that a regression writes into no folder of the source tree. */
Test(traces, the_traces_folder_is_never_the_output, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    cr_assert_eq(run_shell("cp -r " TRACES " %s/tr && ln -s tr %s/trlink", tmp, tmp), 0);
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\n");
    char *before = listing("tr");
    const char *cmds[] = {
        "run %s/c.yaml --traces %s/tr --catalogue " CATALOGUE " --force --out %s/trlink",
        "sweep %s/c.yaml --traces %s/tr --catalogue " CATALOGUE " --no-plot --force --out %s/trlink",
        "potential %s/c.yaml --traces %s/tr --catalogue " CATALOGUE " --force --out %s/trlink",
        "plan --gpu v100 --workload squad --traces %s/tr --catalogue " CATALOGUE " --force"
        " --out %s/trlink",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char line[1024], cmd[2048];
        if (i < 3) snprintf(line, sizeof line, cmds[i], tmp, tmp, tmp);
        else snprintf(line, sizeof line, cmds[i], tmp, tmp);
        snprintf(cmd, sizeof cmd, CLI " %s >/dev/null 2>%s/e.txt", line, tmp);
        cr_expect_eq(run_shell("%s", cmd), 2, "%s", cmd);
        char *e = slurp_file(tp("e.txt")), want[800];
        snprintf(want, sizeof want, "wattsim: %s/trlink: is the input folder %s/tr (the same"
                 " folder); an output folder is never one of the command's input folders,"
                 " even with --force or --resume: write elsewhere\n", tmp, tmp);
        cr_expect_str_eq(e, want, "%s", cmd);
        free(e);
        char *after = listing("tr");
        cr_expect_str_eq(after, before, "%s: the traces folder changed", cmd);
        free(after);
    }
    free(before);
}
