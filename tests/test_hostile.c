/*
 * Hostile folders, plugins and processes (issue 18): what the OS, a shared
 * results folder or a plugin sharing wattsim's process can do, and what
 * wattsim then still guarantees.
 *  - started with descriptors 0-2 closed (cron, daemons): the outputs are
 *    a normal start's bytes, nothing lands in the lock file;
 *  - past `ulimit -f`, started with SIGXFSZ at its default action: one
 *    line, exit 2, no temporary left (not death by SIGXFSZ);
 *  - its output's reader gone (a closed pipe, SIGPIPE at its default
 *    action): every output written, exit 141, nothing left over;
 *  - the output folder swapped for a symbolic link while the sweep runs,
 *    or a plugin's chdir(): every output, figures included, still goes to
 *    the folder that was locked;
 *  - a child a plugin forks (and leaves running) does not keep the folder
 *    locked;
 *  - a plugin's setlocale(LC_ALL, "") under de_DE.UTF-8 (a locale built
 *    with localedef into a temporary LOCPATH) changes no number written or
 *    read;
 *  - what a killed command left (NAME.tmpXXXXXX, .wattsim-plot-XXXXXX)
 *    goes with the next --force or --resume of that folder, and nothing
 *    else does, nor anything through a link;
 *  - messages: a folder another sweep is writing into names that sweep's
 *    pid; a journal whose whole fingerprint differs while no part does (an edited
 *    header, or a journal of wattsim 0.3) shows both fingerprints whole.
 * The plugin is tests/plugins/hostile.c. Needs the fetched Zeus traces
 * and gnuplot (figures are part of what must not move).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define HOSTILE WS_TEST_PLUGIN_DIR "/hostile.so"
#define SPAWN WS_TEST_PLUGIN_DIR "/spawn.so"
#define IN " --traces " TRACES " --catalogue " CATALOGUE
/* a config may name a plugin only from a folder the command line allows */
#define ALLOW " --allow-plugins " WS_TEST_PLUGIN_DIR

static void mktmp(void) { tmpdir_make("/tmp/ws-test-hostile-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* A small plan: 1 job x 2 seeds x 10 recurrences (6 simulations with the
 * references). */
static void small_config(void)
{
    write_file("s.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\n");
}

static int is_file(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in folder `dir` of tmp (not . and ..), one per line, sorted ("" if
 * there is no such folder). In C: a tool run here would run under valgrind
 * too (scripts/test --valgrind) and report its own leaks. */
static char *listing(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, dir);
    char **names = NULL, *out = NULL;
    size_t n = 0, len = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        names = realloc(names, (n + 1) * sizeof *names);
        cr_assert_not_null(names);
        names[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    FILE *m = open_memstream(&out, &len);
    cr_assert_not_null(m);
    for (size_t i = 0; i < n; i++) {
        fprintf(m, "%s\n", names[i]);
        free(names[i]);
    }
    fclose(m);
    free(names);
    return out;
}

static void expect_same(const char *a, const char *b, const char *const *files, int n)
{
    tmpdir_expect_same_files(a, b, files, n);
}

/* The lock file holds "PID HOST\n" and nothing else. */
static void expect_lock_is_a_pid(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s/.wattsim.lock", tmp, dir);
    char *s = slurp(path);
    char *end;
    long pid = strtol(s, &end, 10);
    cr_expect(pid > 0 && *end == ' ' && strchr(end, '\n') == s + strlen(s) - 1,
              "%s holds more than its holder's pid: '%s'", path, s);
    free(s);
}

/* ------------------------------------------------------------ the OS */

Test(process, closed_standard_descriptors_change_no_output, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    small_config();
    cr_assert_eq(run_shell("cd %s && " CLI " run s.yaml" IN " --out ref >/dev/null 2>&1", tmp), 0);
    /* stdin and stdout closed (cron), stdout only, all three */
    static const char *const redir[] = {"<&- >&- 2>/dev/null", ">&- 2>/dev/null", "<&- >&- 2>&-"};
    const char *files[] = {"history.csv", "summary.csv", "summary.json",
                           "pareto-v100-squad.csv"};
    for (int k = 0; k < 3; k++) {
        char out[16];
        snprintf(out, sizeof out, "c%d", k);
        cr_expect_eq(run_shell("cd %s && " CLI " run s.yaml" IN " --out %s %s", tmp, out,
                               redir[k]), 0, "%s", redir[k]);
        expect_same("ref", out, files, 4);
        expect_lock_is_a_pid(out);
    }
}

/* Start argv with stderr to tmp/err.txt, SIGXFSZ at its default action and
 * files limited to kib KiB; its exit status (128 + N for signal N). */
static int run_file_limited(char *const argv[], long kib)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_DFL);
        struct rlimit rl = {(rlim_t)kib * 1024, (rlim_t)kib * 1024};
        int e = open(tp("err.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int n = open("/dev/null", O_WRONLY);
        if (e < 0 || n < 0 || dup2(n, 1) < 0 || dup2(e, 2) < 0 || setrlimit(RLIMIT_FSIZE, &rl))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

Test(process, a_file_size_limit_is_one_line_not_sigxfsz, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    /* history.csv of 40 simulations of 30 recurrences is well over 8 KiB */
    write_file("h.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..20\n"
                         "recurrences: 30\nbso: zeus\nplo: jit\n");
    char cfg[600], out[600];
    snprintf(cfg, sizeof cfg, "%s/h.yaml", tmp);
    snprintf(out, sizeof out, "%s/o", tmp);
    char *const argv[] = {CLI, "run", cfg, "--traces", TRACES, "--catalogue", CATALOGUE,
                          "--out", out, NULL};
    int st = run_file_limited(argv, 8);
    cr_expect_eq(st, 2, "exit status %d (153: killed by SIGXFSZ)", st);
    char *e = slurp(tp("err.txt"));
    cr_expect(strstr(e, "/o/history.csv: write failed: File too large\n")
              && strchr(e, '\n') == e + strlen(e) - 1, "%s", e);
    free(e);
    char *l = listing("o");
    cr_expect(!strstr(l, ".tmp"), "a temporary is left:\n%s", l);
    free(l);
}

/* Start argv with stdout and stderr on a pipe nobody reads (its read end
 * closed before the start: `wattsim ... 2>&1 | head` once head has gone);
 * its exit status (128 + N for signal N). */
static int run_into_a_closed_pipe(char *const argv[])
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    close(p[0]);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);            /* as a shell starts it */
        if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0) _exit(127);
        close(p[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A reader that went away mid-run: the note on stderr before the first
 * simulation killed the sweep (SIGPIPE's default action) before it wrote
 * anything. Now every output is written, complete, and the command ends
 * with 141 (128 + SIGPIPE) as a pipeline's writer does, by exit, not by
 * the signal, with no temporary left. */
Test(process, a_reader_gone_loses_no_result, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    small_config();
    cr_assert_eq(run_shell("cd %s && " CLI " sweep s.yaml" IN " --set power_cap=200 --no-plot"
                           " --out ref >/dev/null 2>&1", tmp), 0);
    char cfg[600], out[600];
    snprintf(cfg, sizeof cfg, "%s/s.yaml", tmp);
    snprintf(out, sizeof out, "%s/o", tmp);
    char *const argv[] = {CLI, "sweep", cfg, "--traces", TRACES, "--catalogue", CATALOGUE,
                          "--set", "power_cap=200", "--no-plot", "--out", out, NULL};
    int st = run_into_a_closed_pipe(argv);
    cr_expect_eq(st, 141, "exit status %d", st);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.csv"};
    expect_same("ref", "o", files, 4);
    char *l = listing("o");
    cr_expect(!strstr(l, ".tmp") && !strstr(l, "journal"), "a temporary is left:\n%s", l);
    free(l);
}

/* ------------------------------------------------------------ the folder */

Test(outputs, a_folder_swapped_for_a_link_mid_run_keeps_every_output, .init = mktmp,
     .fini = rmtmp, .timeout = 120)
{
    small_config();
    /* The plugin renames o to o.moved and makes o a link to o.elsewhere
     * during the first simulation: after the lock, before any output. */
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --policies " HOSTILE ":hostile{mode=3,path=%s/o}"
                           ":jit" IN " --out %s/o >/dev/null 2>%s/err.txt", tmp, tmp, tmp, tmp),
                 0);
    struct stat st;
    cr_assert_eq(lstat(tp("o"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the plugin did not swap the folder");
    char *away = listing("o.elsewhere");
    cr_expect_str_eq(away, "", "outputs went through the link:\n%s", away);
    free(away);
    char *here = listing("o.moved");
    cr_expect_str_eq(here, ".wattsim.lock\nmanifest.tsv\nsavings.csv\nsavings.gp\nsavings.pdf\n"
                           "savings.png\nsavings.svg\nsteady-v100-squad.csv\n"
                           "steady-v100-squad.gp\nsteady-v100-squad.pdf\nsteady-v100-squad.png\n"
                           "steady-v100-squad.svg\nsweep.csv\nsweep.json\nsweep.md\n",
                     "not every output is in the locked folder (journal and temporaries gone):"
                     "\n%s", here);
    free(here);
    expect_lock_is_a_pid("o.moved");
}

/* The inputs' side of the same chdir(): `run` reads its traces again for
 * the figures, after the policies have run; named by a relative path they
 * must still be found (the policy guard leaves the working folder as it
 * found it). Exit 2 and no pareto figure before. */
Test(outputs, a_plugins_chdir_leaves_relative_inputs_readable, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    cr_assert_eq(mkdir(tp("away"), 0777), 0);
    cr_assert_eq(run_shell("cp -r " TRACES " %s/tr", tmp), 0);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..2\nrecurrences: 10\n"
             "bso: {name: %s, params: {mode: 2, path: %s/away}}\nplo: jit\n", HOSTILE, tmp);
    write_file("r.yaml", yaml);
    int st = run_shell("cd %s && " CLI " run r.yaml --traces tr --catalogue " CATALOGUE ALLOW
                       " --out o >/dev/null 2>err.txt", tmp);
    char *err = slurp_n(tp("err.txt"), NULL);
    cr_expect_eq(st, 0, "run after a plugin's chdir: exit %d: %s", st, err);
    free(err);
    char *l = listing("o");
    cr_expect_str_eq(l, ".wattsim.lock\nhistory.csv\npareto-v100-squad.csv\npareto-v100-squad.gp\n"
                        "pareto-v100-squad.png\nsummary.csv\nsummary.json\n",
                     "outputs after a plugin's chdir:\n%s", l);
    free(l);
    char *away = listing("away");
    cr_expect_str_eq(away, "", "outputs followed the plugin's chdir:\n%s", away);
    free(away);
}

Test(outputs, a_plugins_chdir_moves_no_output, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    small_config();
    cr_assert_eq(mkdir(tp("away"), 0777), 0);
    cr_assert_eq(run_shell("cd %s && " CLI " sweep s.yaml --policies " HOSTILE
                           ":hostile{mode=2,path=%s/away}:jit" IN " --out o >/dev/null"
                           " 2>err.txt", tmp, tmp), 0);
    char *away = listing("away");
    cr_expect_str_eq(away, "", "outputs followed the plugin's chdir:\n%s", away);
    free(away);
    static const char *const want[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.png",
                                       "savings.pdf", "steady-v100-squad.svg", "manifest.tsv"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char p[64];
        snprintf(p, sizeof p, "o/%s", want[i]);
        cr_expect(is_file(tp(p)), "%s is missing", p);
    }
    char *l = listing("o");
    cr_expect(!strstr(l, "journal") && !strstr(l, ".tmp") && !strstr(l, ".wattsim-plot"),
              "left over:\n%s", l);
    free(l);
}

Test(outputs, a_child_a_plugin_forks_keeps_no_lock, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    small_config();
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --no-plot --policies " HOSTILE
                           ":hostile{mode=4,path=%s/pid}:jit" IN " --out %s/o >/dev/null"
                           " 2>&1", tmp, tmp, tmp), 0);
    char *s = slurp(tp("pid"));
    long child = strtol(s, NULL, 10);
    free(s);
    cr_assert(child > 0 && kill((pid_t)child, 0) == 0, "the plugin's child is not running");
    /* wattsim has ended; its plugin's child lives on. The folder is free. */
    int st = run_shell(CLI " sweep %s/s.yaml --no-plot --force" IN " --out %s/o >/dev/null"
                       " 2>%s/err.txt", tmp, tmp, tmp);
    char *e = slurp(tp("err.txt"));
    kill((pid_t)child, SIGKILL);
    cr_expect_eq(st, 0, "the folder is still locked: %s", e);
    free(e);
}

/* ------------------------------------------------------------ the locale */

/* de_DE.UTF-8 built into tmp/loc; skips the test when it cannot be. */
static void german_locale(void)
{
    cr_assert_eq(mkdir(tp("loc"), 0777), 0);
    if (run_shell("localedef -i de_DE -f UTF-8 %s/loc/de_DE.UTF-8 >%s/localedef.txt 2>&1", tmp,
                  tmp)) {
        char *why = slurp(tp("localedef.txt"));
        cr_skip_test("cannot build de_DE.UTF-8 with localedef (Debian: apt-get install"
                     " locales): %s", why);
    }
}

/* The environment of run k: 0 the C locale, 1 de_DE.UTF-8 from tmp/loc. */
static const char *locale_env(int k)
{
    static char env[700];
    if (k == 0) return "LC_ALL=C ";
    snprintf(env, sizeof env, "LOCPATH=%s/loc LC_ALL=de_DE.UTF-8 ", tmp);
    return env;
}

Test(locale, a_plugins_setlocale_changes_no_number, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    german_locale();
    small_config();
    /* The plugin calls setlocale(LC_ALL, "") in create: under C nothing
     * changes; under de_DE.UTF-8 the process's locale has a decimal comma.
     * The outputs must be the same bytes. */
    for (int k = 0; k <= 1; k++)
        cr_assert_eq(run_shell("%s" CLI " sweep %s/s.yaml --no-plot --threads 2 --policies "
                               HOSTILE ":hostile{mode=1,path=%s/said}:jit" IN " --out %s/s%d"
                               " >/dev/null 2>&1", locale_env(k), tmp, tmp, tmp, k), 0);
    char *said = slurp(tp("said"));
    cr_assert_str_eq(said, "de_DE.UTF-8", "the plugin's setlocale did not take effect");
    free(said);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.csv"};
    expect_same("s0", "s1", files, 4);
    /* `run` reads the traces again after the policies ran (its figure):
     * numbers are parsed in the C locale too. */
    char cfg[900];
    snprintf(cfg, sizeof cfg, "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..2\n"
             "recurrences: 10\nbso: {name: %s, params: {mode: 1}}\nplo: jit\n", HOSTILE);
    write_file("r.yaml", cfg);
    for (int k = 0; k <= 1; k++)
        cr_assert_eq(run_shell("%s" CLI " run %s/r.yaml" IN ALLOW " --out %s/r%d >/dev/null"
                               " 2>%s/err%d.txt", locale_env(k), tmp, tmp, k, tmp, k), 0);
    const char *run_files[] = {"history.csv", "summary.csv", "summary.json",
                               "pareto-v100-squad.csv", "pareto-v100-squad.gp"};
    expect_same("r0", "r1", run_files, 5);
}

/* ------------------------------------------------------------ leftovers */

/* What a command killed with SIGKILL leaves, and what is not its to take:
 * files of the user's that look almost like temporaries, and links (of
 * wattsim's names) to things outside the folder. */
static void put(const char *rel, const char *text)
{
    FILE *f = fopen(tp(rel), "w");
    cr_assert_not_null(f, "cannot write %s", tp(rel));
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

static void plant(const char *dir)
{
    char p[300], q[600];
    static const char *const files[] = {"sweep.csv.tmpAbC123", ".sweep.journal.tmpZZ9zz9",
                                        "notes.tmp", "keep.tmp12345", "x.tmpAB-123"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        put(p, "");
    }
    snprintf(p, sizeof p, "%s/.wattsim-plot-Xy7890", dir);
    cr_assert_eq(mkdir(tp(p), 0700), 0);
    static const char *const inside[] = {"plot.gp", "out0.png", "gnuplot.log"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/.wattsim-plot-Xy7890/%s", dir, inside[i]);
        put(p, "x");
    }
    mkdir(tp("outside"), 0777);
    put("outside/file", "keep\n");
    put("outside.txt", "keep\n");
    snprintf(q, sizeof q, "%s/outside.txt", tmp);
    snprintf(p, sizeof p, "%s/savings.png.tmpQWERTY", dir);
    cr_assert_eq(symlink(q, tp(p)), 0);
    snprintf(q, sizeof q, "%s/outside", tmp);
    snprintf(p, sizeof p, "%s/.wattsim-plot-LINKED", dir);
    cr_assert_eq(symlink(q, tp(p)), 0);
}

static void expect_tidied(const char *dir, const char *after)
{
    char *l = listing(dir);
    cr_expect(!strstr(l, "sweep.csv.tmpAbC123") && !strstr(l, ".sweep.journal.tmpZZ9zz9")
              && !strstr(l, ".wattsim-plot-") && !strstr(l, "savings.png.tmpQWERTY"),
              "%s: leftovers are still there:\n%s", after, l);
    cr_expect(strstr(l, "notes.tmp\n") && strstr(l, "keep.tmp12345\n") && strstr(l, "x.tmpAB-123\n"),
              "%s: the user's files went:\n%s", after, l);
    free(l);
    cr_expect(is_file(tp("outside.txt")) && is_file(tp("outside/file")),
              "%s: a link was followed", after);
}

Test(leftovers, force_and_resume_remove_what_a_killed_run_left, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    small_config();
    /* A shard's folder keeps its journal: resumable. */
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --shard 0/2 --no-plot" IN " --out %s/o"
                           " >/dev/null 2>&1", tmp, tmp), 0);
    plant("o");
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --shard 0/2 --resume --no-plot" IN
                           " --out %s/o >/dev/null 2>&1", tmp, tmp), 0);
    expect_tidied("o", "--resume");
    cr_expect(is_file(tp("o/sweep.journal")), "the resumed shard's journal went");
    plant("o");
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --force --no-plot" IN " --out %s/o"
                           " >/dev/null 2>&1", tmp, tmp), 0);
    expect_tidied("o", "--force");
    cr_expect(is_file(tp("o/sweep.csv")));
}

Test(leftovers, a_command_without_force_removes_nothing, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    small_config();
    cr_assert_eq(mkdir(tp("o"), 0777), 0);
    plant("o");
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --no-plot" IN " --out %s/o >/dev/null 2>&1",
                           tmp, tmp), 0);
    cr_expect(exists(tp("o/sweep.csv.tmpAbC123")) && exists(tp("o/.wattsim-plot-Xy7890")),
              "a run without --force or --resume removed what it did not make");
    /* with --force, but in a folder no wattsim command locked before (no
     * lock file): nothing there can be wattsim's */
    cr_assert_eq(unlink(tp("o/.wattsim.lock")), 0);
    cr_assert_eq(unlink(tp("o/sweep.csv")), 0);
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --no-plot --force" IN " --out %s/o >/dev/null"
                           " 2>&1", tmp, tmp), 0);
    cr_expect(exists(tp("o/sweep.csv.tmpAbC123")) && exists(tp("o/.wattsim-plot-Xy7890")),
              "--force removed files in a folder wattsim had not written to");
}

/* ------------------------------------------------------------ messages */

Test(messages, a_running_sweep_is_named_with_its_pid, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    small_config();
    /* spawn hangs in predict (in process): the sweep runs until killed */
    char cfg[600], out[600], pol[900];
    snprintf(cfg, sizeof cfg, "%s/s.yaml", tmp);
    snprintf(out, sizeof out, "%s/o", tmp);
    snprintf(pol, sizeof pol, SPAWN ":spawn{pidfile=%s/pids}:jit", tmp);
    char *const argv[] = {CLI, "sweep", cfg, "--no-plot", "--threads", "1", "--policies", pol,
                          "--traces", TRACES, "--catalogue", CATALOGUE, "--out", out, NULL};
    /* in a process group of its own, which goes with what spawn forked */
    const pid_t first = fork();
    cr_assert_neq(first, -1);
    if (first == 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (setpgid(0, 0) || dn < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(first, first);
    FILE *f = NULL;
    for (int i = 0; i < 3000 && !(f = fopen(tp("pids"), "r")); i++) usleep(10000);
    if (!f) kill(-first, SIGKILL);
    cr_assert_not_null(f, "the first sweep never reached its policy");
    long self = 0, grand = 0;
    cr_assert_eq(fscanf(f, "%ld %ld", &self, &grand), 2);
    fclose(f);
    int st = run_shell(CLI " sweep %s/s.yaml --no-plot" IN " --out %s/o >/dev/null"
                       " 2>%s/err.txt", tmp, tmp, tmp);
    kill(-first, SIGKILL);
    kill((pid_t)grand, SIGKILL);
    waitpid(first, NULL, 0);
    cr_expect_eq(self, (long)first);
    cr_expect_eq(st, 2);
    char *e = slurp(tp("err.txt")), want[1200];
    snprintf(want, sizeof want, "wattsim: %s/o: another wattsim command (pid %ld) is running"
             " and writing into it (it holds %s/o/.wattsim.lock); wait for it to finish or use"
             " another folder\n", tmp, (long)first, tmp);
    cr_expect_str_eq(e, want);
    free(e);
}

Test(messages, a_journal_of_another_plan_shows_both_fingerprints, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    small_config();
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --shard 0/2 --no-plot" IN " --out %s/j"
                           " >/dev/null 2>&1", tmp, tmp), 0);
    /* one byte of the fingerprint flipped: its last (header bytes 32..63) */
    int fd = open(tp("j/sweep.journal"), O_RDWR);
    cr_assert_geq(fd, 0);
    unsigned char b;
    cr_assert_eq(pread(fd, &b, 1, 63), 1);
    b ^= 0xff;
    cr_assert_eq(pwrite(fd, &b, 1, 63), 1);
    close(fd);
    cr_assert_eq(run_shell(CLI " sweep %s/s.yaml --shard 0/2 --resume --no-plot" IN
                           " --out %s/j >/dev/null 2>%s/err.txt", tmp, tmp, tmp), 2);
    char *e = slurp(tp("err.txt"));
    char got[65] = "", mine[65] = "";
    const char *p = strstr(e, "(fingerprint "), *q = strstr(e, "; this sweep: ");
    cr_assert(p && q, "%s", e);
    cr_assert_eq(sscanf(p, "(fingerprint %64[0-9a-f],", got), 1, "%s", e);
    cr_assert_eq(sscanf(q, "; this sweep: %64[0-9a-f],", mine), 1, "%s", e);
    cr_expect_eq(strlen(got), 64, "%s", e);
    cr_expect_str_neq(got, mine, "the same fingerprint shown twice: %s", e);
    cr_expect_eq(strncmp(got, mine, 62), 0, "only the last byte differs: %s", e);
    free(e);
}
