/*
 * The output rules of every command (wattsim/outfile.h), through the CLI:
 * nothing existing is replaced without --force, an output is never an input
 * (even with --force), a failed command leaves no folder it made, a second
 * command on a locked folder fails at once, and a failed write to stdout is
 * exit 1 with one line. The issue-7 cases: `pareto --traces . --plot
 * summary_train.png`, `report DIR` twice, `groups replay --out DIR` over its
 * own DIR/groups.csv, two sweeps on one folder, `pareto > /dev/full`; and a
 * command that dies (a policy's crash or exit(), SIGTERM) leaves nothing
 * half-written.
 * Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define FIXTURE WS_SOURCE_DIR "/tests/data/bad/_fixture"
#define CRASH WS_TEST_PLUGIN_DIR "/crash.so"
#define RUDE WS_TEST_PLUGIN_DIR "/rude.so"
/* The configs below name test plugins: a config may load them only from
 * a folder the command line allows. */
#define ALLOW " --allow-plugins " WS_TEST_PLUGIN_DIR

static void mktmp(void) { tmpdir_make("/tmp/ws-test-outputs-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void expect_one_line(const char *name, const char *needle)
{
    char *e = slurp(tp(name));
    cr_expect(strstr(e, needle), "'%s' not in: %s", needle, e);
    cr_expect(*e && strchr(e, '\n') == e + strlen(e) - 1, "one line: %s", e);
    free(e);
}

/* The tiny trace folder of the bad-input catalogue, into tmp (in C: a
 * `cp` would be run under valgrind too, and report its own leaks). */
static void copy_fixture(void)
{
    static const char *files[] = {"run.yaml", "summary_power_g1.csv", "summary_train.csv",
                                  "workloads.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char from[600];
        snprintf(from, sizeof from, "%s/%s", FIXTURE, files[i]);
        char *s = slurp(from);
        write_file(files[i], s);
        free(s);
    }
}

#define PARETO_FIX CLI " pareto --traces . --catalogue workloads.yaml --gpu g1 --workload w"

/* The case: a plot named after a trace would replace the trace. */
Test(outputs, pareto_plot_never_replaces_an_input, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    copy_fixture();
    char *before = slurp(tp("summary_train.csv"));
    cr_expect_eq(run_shell("cd %s && " PARETO_FIX " --plot summary_train.png >/dev/null"
                           " 2>err.txt", tmp), 2);
    expect_one_line("err.txt", "summary_train.csv: is an input of this command");
    cr_expect_eq(run_shell("cd %s && " PARETO_FIX " --plot summary_train.png --force >/dev/null"
                           " 2>err.txt", tmp), 2);
    expect_one_line("err.txt", "summary_train.csv: is an input of this command");
    char *after = slurp(tp("summary_train.csv"));
    cr_expect_str_eq(after, before);
    cr_expect(!exists(tp("summary_train.gp")) && !exists(tp("summary_train.png")));
    free(before);
    free(after);
}

Test(outputs, pareto_plot_replaces_nothing_without_force, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    copy_fixture();
    cr_assert_eq(mkdir(tp("figs"), 0755), 0);
    write_file("figs/f.gp", "keep me\n");
    cr_expect_eq(run_shell("cd %s && " PARETO_FIX " --plot figs/f.png >/dev/null 2>err.txt",
                           tmp), 2);
    expect_one_line("err.txt", "figs/f.gp: exists; pass --force");
    char *gp = slurp(tp("figs/f.gp"));
    cr_expect_str_eq(gp, "keep me\n");
    free(gp);
    /* Checked before anything is written: not even the .csv. */
    cr_expect(!exists(tp("figs/f.csv")) && !exists(tp("figs/f.png")));
    cr_expect_eq(run_shell("cd %s && " PARETO_FIX " --plot figs/f.png --force >/dev/null", tmp), 0);
    cr_expect(exists(tp("figs/f.csv")) && exists(tp("figs/f.png")));
    /* The figure goes where the user said, with no manifest anywhere. */
    cr_expect(!exists(tp("figs/manifest.tsv")) && !exists(tp("manifest.tsv")));
}

Test(outputs, report_replaces_nothing_without_force, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    cr_assert_eq(run_shell("mkdir %s/r && " CLI " report %s/r >/dev/null", tmp, tmp), 0);
    write_file("r/REPORT.md", "edited by hand\n");
    cr_expect_eq(run_shell(CLI " report %s/r >/dev/null 2>%s/err.txt", tmp, tmp), 2);
    expect_one_line("err.txt", "REPORT.md: exists; pass --force");
    char *md = slurp(tp("r/REPORT.md"));
    cr_expect_str_eq(md, "edited by hand\n");
    free(md);
    cr_expect_eq(run_shell(CLI " report %s/r --force >/dev/null", tmp), 0);
    md = slurp(tp("r/REPORT.md"));
    cr_expect(strstr(md, "# wattsim report"), "%s", md);
    free(md);
}

Test(outputs, groups_replay_never_replaces_its_trace, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    cr_assert_eq(run_shell(CLI " groups synth --catalogue " CATALOGUE " --groups 2"
                           " --jobs-per-group 3 --datasets cifar100 --out %s/g/groups.csv"
                           " >/dev/null", tmp), 0);
    char *before = slurp(tp("g/groups.csv"));
    for (int force = 0; force < 2; force++) {
        cr_expect_eq(run_shell(CLI " groups replay --traces " TRACES " --catalogue " CATALOGUE
                               " --trace %s/g/groups.csv --out %s/g%s >/dev/null 2>%s/err.txt",
                               tmp, tmp, force ? " --force" : "", tmp), 2);
        expect_one_line("err.txt", force ? "groups.csv: is an input of this command"
                                         : "outputs of an earlier replay are there");
    }
    char *after = slurp(tp("g/groups.csv"));
    cr_expect_str_eq(after, before);
    cr_expect(!exists(tp("g/history.csv")) && !exists(tp("g/groups.json")));
    free(before);
    free(after);
}

/* A trace error found after the output folder was made: a/b/c all go. */
Test(outputs, failed_run_leaves_no_folders, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    copy_fixture();
    write_file("summary_power_g1.csv",
               "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
               "d,n,8,o,100,12.5,90\nd,n,8,o,150,10,130\nd,n,16,o,100,8,95\n"
               "d,n,16,o,150,6.5,-140\nd,n,32,o,100,6,98\nd,n,32,o,150,5,145\n");
    cr_expect_eq(run_shell("cd %s && " CLI " run run.yaml --traces . --catalogue workloads.yaml"
                           " --out a/b/c >/dev/null 2>err.txt", tmp), 2);
    expect_one_line("err.txt", "summary_power_g1.csv:5:");
    cr_expect(!exists(tp("a")), "run left a/ behind");
    /* A folder that was there stays, and so does what it held. */
    cr_assert_eq(run_shell("mkdir -p %s/keep && touch %s/keep/mine", tmp, tmp), 0);
    cr_expect_eq(run_shell("cd %s && " CLI " run run.yaml --traces . --catalogue workloads.yaml"
                           " --out keep/x >/dev/null 2>&1", tmp), 2);
    cr_expect(exists(tp("keep/mine")) && !exists(tp("keep/x")));
}

/* A command that dies mid-way -- a policy's crash (in process, without
 * --isolate), its exit(), SIGTERM -- leaves no temporary and no folder of
 * its own behind, and says so in one line. Before, `run --keep-history`
 * left OUT/history.csv.tmpXXXXXX and the folders. */
static void expect_nothing_left(const char *dir)
{
    cr_expect(!exists(tp(dir)), "%s left behind", dir);
    cr_expect_eq(run_shell("find %s -name '*.tmp*' | grep -q .", tmp), 1, "a temporary is left");
}

#define RUN_CFG "gpu: v100\nworkload: cifar100\neta: 0.5\nbeta: 2\nseed: 1..2\nrecurrences: 10\n" \
                "plo: jit\n"

Test(outputs, crash_in_a_policy_leaves_nothing_half_written, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    write_file("c.yaml", RUN_CFG "bso: " CRASH ":crash_bs\n");
    /* Under ASan, its SEGV handler would report this deliberate crash
     * after ours: off for this one command. */
    /* (exec ...): the shell's own "Segmentation fault" goes to /dev/null,
     * not into err.txt */
    cr_assert_eq(run_shell("cd %s && { (export ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:handle_segv=0\"; exec "
                           CLI " run c.yaml --traces " TRACES " --catalogue " CATALOGUE ALLOW
                           " --keep-history --out a/b >/dev/null 2>err.txt); echo $? > rc.txt; }"
                           " 2>/dev/null", tmp), 0);
    char *rc = slurp(tp("rc.txt"));
    cr_expect_eq(atoi(rc), 128 + SIGSEGV, "status %s", rc);
    free(rc);
    expect_one_line("err.txt", "wattsim: bso crash_bs: predict crashed (SIGSEGV); --isolate runs"
                               " each cell of a sweep in its own process; unfinished outputs"
                               " removed");
    expect_nothing_left("a");
}

Test(outputs, exit_in_a_policy_leaves_nothing_half_written, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    write_file("r.yaml", RUN_CFG "bso: {name: " RUDE ":rude, params: {mode: 1}}\n");
    cr_expect_eq(run_shell("cd %s && " CLI " run r.yaml --traces " TRACES " --catalogue "
                           CATALOGUE ALLOW " --keep-history --out a/b >/dev/null 2>err.txt", tmp),
                 1);
    char *e = slurp(tp("err.txt"));          /* after the policy's own "rude: raw" */
    cr_expect(strstr(e, "\nwattsim: bso rude: observe called exit(); a policy must return an"
                        " error instead\n"), "%s", e);
    free(e);
    expect_nothing_left("a");
}

Test(outputs, sigterm_leaves_nothing_half_written, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    /* The policy hangs in its first predict, with history.csv's temporary
     * open; the test waits for that temporary, then stops the command. */
    write_file("h.yaml", RUN_CFG "bso: {name: " CRASH ":crash_bs, params: {how: hang}}\n");
    cr_assert_eq(run_shell("cd %s && { " CLI " run h.yaml --traces " TRACES " --catalogue "
                           CATALOGUE ALLOW " --keep-history --out a/b >/dev/null 2>err.txt & "
                           "pid=$!; for i in $(seq 100); do ls a/b/history.csv.tmp* >/dev/null"
                           " 2>&1 && break; sleep 0.1; done; kill -TERM $pid; wait $pid;"
                           " echo $? > rc.txt; } 2>/dev/null", tmp), 0);
    char *rc = slurp(tp("rc.txt"));
    cr_expect_eq(atoi(rc), 128 + SIGTERM, "status %s", rc);
    free(rc);
    expect_one_line("err.txt", "wattsim: interrupted by SIGTERM; unfinished outputs removed");
    expect_nothing_left("a");
}

/* A sweep stopped mid-way keeps its journal (for --resume), so its folder
 * stays, with the lock file a finished command leaves too. */
Test(outputs, sigterm_keeps_a_sweeps_journal_and_lock, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    write_file("h.yaml", RUN_CFG "bso: {name: " CRASH ":crash_bs, params: {how: hang}}\n");
    cr_assert_eq(run_shell("cd %s && { " CLI " sweep h.yaml --traces " TRACES " --catalogue "
                           CATALOGUE " --policies 'zeus:jit," CRASH ":crash_bs{how=hang}:jit'"
                           " --threads 1 --no-plot"
                           " --quiet --out a/b >/dev/null 2>err.txt & pid=$!;"
                           " for i in $(seq 100); do test -s a/b/sweep.journal && break;"
                           " sleep 0.1; done; sleep 0.3; kill -TERM $pid; wait $pid;"
                           " echo $? > rc.txt; } 2>/dev/null", tmp), 0);
    char *rc = slurp(tp("rc.txt"));
    cr_expect_eq(atoi(rc), 128 + SIGTERM, "status %s", rc);
    free(rc);
    expect_one_line("err.txt", "wattsim: interrupted by SIGTERM; unfinished outputs removed");
    cr_expect(exists(tp("a/b/sweep.journal")), "the journal is gone");
    cr_expect(exists(tp("a/b/.wattsim.lock")), "the lock file is gone");
    cr_expect_eq(run_shell("find %s -name '*.tmp*' | grep -q .", tmp), 1, "a temporary is left");
}

/* Two sweeps on one folder: the first holds the lock for its whole run (a
 * policy that hangs until --cell-timeout keeps it busy); the second fails
 * at once with one line and touches nothing; the first then completes. */
Test(outputs, second_sweep_on_a_locked_folder_fails_at_once, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    char cfg[600];
    snprintf(cfg, sizeof cfg, "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                              "recurrences: 5\nbso: {name: %s, params: {how: hang}}\nplo: jit\n",
             CRASH);
    write_file("hang.yaml", cfg);
    pid_t first = fork();
    cr_assert_neq(first, -1);
    if (first == 0) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, CLI " sweep %s/hang.yaml --isolate --cell-timeout 6 --no-plot"
                 " --traces " TRACES " --catalogue " CATALOGUE ALLOW " --out %s/s >/dev/null"
                 " 2>/dev/null", tmp, tmp);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* Wait until the first holds the lock (it cannot finish within 6 s:
     * room for the second to start, under valgrind too). */
    int held = 0;
    for (int i = 0; i < 1000 && !held; i++) {     /* 10 s: slow under valgrind */
        int fd = open(tp("s/.wattsim.lock"), O_RDONLY);
        if (fd >= 0) {
            held = flock(fd, LOCK_EX | LOCK_NB) != 0;
            close(fd);
        }
        if (!held) usleep(10000);
    }
    cr_assert(held, "the first sweep never took the lock");
    char *journal = exists(tp("s/sweep.journal")) ? slurp(tp("s/sweep.journal")) : NULL;
    /* isolated too: should it wrongly get the lock, it ends (and fails) */
    cr_expect_eq(run_shell(CLI " sweep %s/hang.yaml --force --isolate --cell-timeout 3"
                           " --no-plot --traces " TRACES " --catalogue " CATALOGUE ALLOW
                           " --out %s/s >/dev/null 2>%s/err.txt", tmp, tmp, tmp), 2);
    expect_one_line("err.txt", "s: another wattsim command (pid ");
    expect_one_line("err.txt", ") is running and writing into it (it holds ");
    if (journal) {
        char *now = slurp(tp("s/sweep.journal"));
        cr_expect_str_eq(now, journal, "the second sweep touched the first's journal");
        free(now);
        free(journal);
    }
    int st;
    cr_assert_eq(waitpid(first, &st, 0), first);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "first sweep: status %d", st);
    cr_expect(exists(tp("s/sweep.csv")), "the first sweep did not complete");
}

Test(outputs, failed_stdout_is_exit_1_with_one_line, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    copy_fixture();
    cr_expect_eq(run_shell("cd %s && " PARETO_FIX " --format csv >/dev/full 2>err.txt", tmp), 1);
    expect_one_line("err.txt", "wattsim: standard output: write failed: No space left on device");
    cr_expect_eq(run_shell("cd %s && " CLI " list workloads --catalogue workloads.yaml"
                           " >/dev/full 2>err.txt", tmp), 1);
    expect_one_line("err.txt", "standard output: write failed");
}

/* A label with commas (a policy's parameters in braces) is one RFC 4180
 * field wherever a CSV holds it: savings.csv had a column too many per
 * comma, and the savings.png panel that read it was blank. Every row of
 * savings.csv and sweep.csv has as many fields as its header, and the
 * label reads back whole (Python's csv module, an RFC 4180 reader). */
Test(outputs, labels_with_commas_are_quoted_in_every_csv, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    cr_assert_eq(run_shell("printf 'gpu: v100\\nworkload: squad\\nseed: 1..2\\nrecurrences: 6\\n'"
                           " >%s/q.yaml", tmp), 0);
    cr_assert_eq(run_shell(CLI " sweep %s/q.yaml --policies '" WS_TEST_PLUGIN_DIR
                           "/flaky.so{p=0,at=1000}:jit,zeus:jit' --traces " TRACES
                           " --catalogue " CATALOGUE ALLOW " --no-plot --out %s/s >/dev/null",
                           tmp, tmp), 0);
    cr_expect_eq(run_shell("cd %s/s && /usr/bin/python3 -c \"import csv, sys\n"
                           "for name in ('savings.csv', 'sweep.csv'):\n"
                           "    rows = list(csv.reader(open(name)))\n"
                           "    bad = [r for r in rows if len(r) != len(rows[0])]\n"
                           "    labels = {x for r in rows for x in r if x.startswith('flaky')}\n"
                           "    if bad or 'flaky{p=0,at=1000}+jit' not in labels:\n"
                           "        sys.exit(name + ': ' + repr(bad[:1]) + repr(labels))\n\"",
                           tmp), 0);
    /* sweep.md names the code that ran, as sweep.csv does (the resolved
     * parameters, each plugin file's sha256) and as the tables of simulate
     * and run name a policy (ws_table_policy), in Markdown text: the
     * characters that start markup get a backslash (chr: no shell quoting). */
    cr_expect_eq(run_shell("cd %s/s && /usr/bin/python3 -c \"import csv, os, sys\n"
                           "esc = set(map(chr, (92, 96, 42, 95, 91, 93, 60, 62, 38, 124, 35,"
                           " 126, 33, 36)))\n"
                           "md = lambda t: ''.join(chr(92) + c if c in esc else c for c in t)\n"
                           "text = open('sweep.md').read()\n"
                           "for r in csv.DictReader(open('sweep.csv')):\n"
                           "    cells = []\n"
                           "    for side in ('bso', 'plo'):\n"
                           "        so = r[side].endswith('.so')\n"
                           "        name = os.path.basename(r[side])[:-3] if so else r[side]\n"
                           "        where = os.path.realpath(r[side]) if so else 'built-in'\n"
                           "        cells.append('%%s{%%s} %%s sha256 %%s' %% (name,"
                           " r[side + '_params'], where, r[side + '_sha256'][:12]))\n"
                           "    want = '| %%s | %%s | %%s |' %% tuple(map(md, [r['policy']] + cells))\n"
                           "    if len(r['bso_sha256']) != 64 or want not in text:\n"
                           "        sys.exit('not in sweep.md: ' + want)\n\"", tmp), 0);
}

/* The steady-state figure names every pair in its key, growing taller
 * for a long key (10 pairs clipped it: entries cut and missing), and past
 * what even the tallest holds says how many it names. Read from the
 * gnuplot script: a key entry per pair ("title tN"), the figure's height. */
static void steady_key(const char *out, int n_pairs, int *titled, int *note, double *h)
{
    char pol[2048] = "";
    for (int k = 0; k < n_pairs; k++)
        snprintf(pol + strlen(pol), sizeof pol - strlen(pol), "%szeus{rounds=%d}:jit",
                 k ? "," : "", k);
    cr_assert_eq(run_shell(CLI " sweep %s/k.yaml --policies '%s' --traces " TRACES
                           " --catalogue " CATALOGUE " --out %s/%s >/dev/null", tmp, pol, tmp,
                           out), 0);
    char path[700], line[4096];
    snprintf(path, sizeof path, "%s/%s/steady-v100-squad.gp", tmp, out);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    *titled = *note = 0;
    *h = 0;
    while (fgets(line, sizeof line, f)) {
        *titled += strstr(line, "with xyerrorbars") && strstr(line, " title t");
        *note += strstr(line, "keyentry") && strstr(line, " named (all: sweep.md)");
        const char *hp = strstr(line, "; H = ");
        if (!strncmp(line, "W = ", 4) && hp) *h = strtod(hp + 6, NULL);
    }
    fclose(f);
}

Test(outputs, steady_key_holds_ten_pairs_or_says_how_many, .init = mktmp, .fini = rmtmp,
     .timeout = 240)
{
    cr_assert_eq(run_shell("printf 'gpu: v100\\nworkload: squad\\nseed: 1\\nrecurrences: 5\\n'"
                           " >%s/k.yaml", tmp), 0);
    int titled, note;
    double h2, h10, h30;
    steady_key("two", 2, &titled, &note, &h2);
    cr_expect_eq(titled, 4);                    /* + default and oracle */
    cr_expect_eq(note, 0);
    steady_key("ten", 10, &titled, &note, &h10);
    cr_expect_eq(titled, 12, "every pair named: %d", titled);
    cr_expect_eq(note, 0);
    cr_expect_gt(h10, h2, "the figure grows for its key: %g <= %g", h10, h2);
    steady_key("thirty", 30, &titled, &note, &h30);
    cr_expect_lt(titled, 32);
    cr_expect_eq(note, 1, "the key says how many it names");
    cr_expect_leq(h30, 7.0 + 1e-9, "at most 7 in tall: %g", h30);
}
