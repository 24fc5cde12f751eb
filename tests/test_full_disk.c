/*
 * Writes that fail. The main commands (run, simulate, pareto --plot, sweep,
 * also with its results spilled to a file, curves, report, groups replay)
 * run with their outputs where writing stops short, at several points;
 * whatever happens, either the command succeeds with every output
 * complete, or it exits 1 or 2 with one line on stderr and no partial file
 * in place (no temporary, no private gnuplot folder, no truncated CSV,
 * JSON, Markdown, script or image).
 *
 * Two ways to run out of space:
 * - a 4 MiB tmpfs, filled to leave 0, 4, 16, 64 and 3072 KiB (needs root:
 *   the variant is skipped, saying so, where mount is refused);
 * - `ulimit -f` at 1, 8, 64 and 8192 KiB per file, wattsim started with
 *   SIGXFSZ at its default action (which would kill it: it ignores the
 *   signal itself, so a write past the limit is EFBIG): works anywhere.
 * The smallest room fails every command; the largest lets every one
 * succeed. Under valgrind (scripts/test --valgrind) only those two levels
 * run: each level runs every command, and the middle ones, at ~30x the
 * time, took the test past its limit on CI's two cores. Nor does the
 * ulimit variant's smallest level run there: the limit applies to
 * valgrind's own log as well (a regular file the same process writes),
 * and whether the log's last write crosses 1 KiB depends on the length of
 * the paths in its header: from a checkout with a longer path, valgrind
 * was killed by SIGXFSZ at exit (status 153), which says nothing about
 * wattsim. The tmpfs variant covers failed writes under valgrind.
 * stdout on /dev/full is in test_outputs.c (simulate writes only stdout).
 * WS_FULL_PRINT=1 prints each command's status and message.
 * Needs gnuplot and the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define IN " --traces " TRACES " --catalogue " CATALOGUE

/* Under valgrind its preload library is in LD_PRELOAD (as test_spill.c). */
static int under_valgrind(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "vgpreload");
}

static void mktmp(void) { tmpdir_make("/tmp/ws-test-full-XXXXXX"); }
static void rmtmp(void)
{
    umount2(tp("fs"), MNT_DETACH);          /* harmless when not mounted */
    tmpdir_remove();
}

static int ends_with(const char *s, size_t n, const char *tail, size_t k)
{
    return n >= k && !memcmp(s + n - k, tail, k);
}

/* Every file under `dir` is complete; no temporary is left. Returns the
 * number of files checked. */
static int check_tree(const char *dir, const char *what)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *name = e->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        cr_expect(!strstr(name, ".tmp"), "%s: temporary left: %s", what, path);
        cr_expect(strncmp(name, ".wattsim-plot-", 14), "%s: gnuplot folder left: %s", what, path);
        struct stat st;
        cr_assert_eq(lstat(path, &st), 0);
        if (S_ISDIR(st.st_mode)) { n += check_tree(path, what); continue; }
        size_t len;
        /* The lock holds its holder's pid; an interrupted sweep's journal is
         * resumable state, checked record by record, not an output. */
        if (!strcmp(name, ".wattsim.lock") || strstr(name, ".journal")) continue;
        char *s = slurp_n(path, &len);
        size_t k = strlen(name);
        int ok;
        if (k > 4 && !strcmp(name + k - 4, ".png"))
            ok = ends_with(s, len, "IEND\xae\x42\x60\x82", 8);
        else if (k > 4 && !strcmp(name + k - 4, ".svg"))
            ok = strstr(s, "</svg>") != NULL;
        else
            ok = ends_with(s, len, "\n", 1);          /* csv, json, md, gp, tsv, html */
        cr_expect(ok, "%s: %s is truncated (%zu bytes)", what, path, len);
        free(s);
        n++;
    }
    closedir(d);
    return n;
}

typedef struct command {
    const char *name;
    const char *fmt;         /* %1$s: tmp (inputs), %2$s: output folder */
} command;

static const command commands[] = {
    {"run", CLI " run %1$s/run.yaml" IN " --out %2$s/run"},
    {"pareto", CLI " pareto --workload squad" IN " --plot %2$s/p/pareto.png"},
    {"sweep", CLI " sweep %1$s/run.yaml --policies zeus:jit" IN " --threads 1 --out %2$s/sweep"},
    {"curves", CLI " curves %1$s/run.yaml --policies zeus:jit" IN " --threads 1 --out %2$s/curves"},
    /* every simulation in the spill file (sweep_store.c) */
    {"sweep spilled", "WATTSIM_SPILL_SIMS=1 " CLI " sweep %1$s/run.yaml --policies zeus:jit" IN
                      " --threads 1 --out %2$s/spill"},
    {"report", "cd %1$s && mkdir -p %2$s/rep && " CLI " report %2$s/rep"},
    {"groups", CLI " groups replay --trace %1$s/groups.csv" IN " --out %2$s/groups"},
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static void inputs(void)
{
    write_file("run.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                           "recurrences: 8\n");
    cr_assert_eq(run_shell(CLI " groups synth --catalogue " CATALOGUE " --groups 2"
                           " --jobs-per-group 3 --datasets squad --out %s/groups.csv"
                           " >/dev/null", tmp), 0);
}

/* Run every command with outputs in `out`, after `prefix` (shell); check
 * the outcome. Returns how many failed. */
static int run_all(const char *prefix, const char *out_, const char *label)
{
    char out[512];                     /* out_ may be tp()'s static buffer */
    snprintf(out, sizeof out, "%s", out_);
    int failed = 0;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char cmd[2048], what[128];
        snprintf(cmd, sizeof cmd, commands[i].fmt, tmp, out);
        snprintf(what, sizeof what, "%s, %s", commands[i].name, label);
        int st = run_shell("(%s %s) >/dev/null 2>%s/err.txt", prefix, cmd, tmp);
        char *e = slurp_n(tp("err.txt"), NULL);
        if (getenv("WS_FULL_PRINT")) fprintf(stderr, "%-32s %d %s", what, st, st ? e : "\n");
        if (st == 0) {
            cr_expect_str_eq(e, "", "%s: exit 0 with: %s", what, e);
        } else {
            failed++;
            cr_expect(st == 1 || st == 2, "%s: exit %d: %s", what, st, e);
            cr_expect(*e && strchr(e, '\n') == e + strlen(e) - 1, "%s: one line: %s", what, e);
            cr_expect(strstr(e, "wattsim"), "%s: %s", what, e);
        }
        free(e);
        int files = check_tree(out, what);
        if (st == 0) cr_expect_gt(files, 0, "%s: exit 0 but no output", what);
        run_shell("rm -rf %s/* %s/.[!.]*", out, out);
    }
    return failed;
}

Test(full_disk, file_size_limit, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    inputs();
    cr_assert_eq(run_shell("mkdir -p %s/out", tmp), 0);
    /* the default action, whatever this process was started with: the
     * shell and wattsim inherit it (a shell cannot undo an ignore) */
    signal(SIGXFSZ, SIG_DFL);
    static const int kib[] = {1, 8, 64, 8192};
    int failed_at_1k = 0, failed_at_max = -1;
    for (size_t l = 0; l < sizeof kib / sizeof *kib; l++) {
        if (under_valgrind() && l + 1 != sizeof kib / sizeof *kib) continue;
        char prefix[64], label[32];
        snprintf(prefix, sizeof prefix, "ulimit -f %d;", kib[l]);
        snprintf(label, sizeof label, "ulimit -f %d", kib[l]);
        int f = run_all(prefix, tp("out"), label);
        if (kib[l] == 1) failed_at_1k = f;
        if (kib[l] == 8192) failed_at_max = f;
    }
    cr_expect_eq(failed_at_max, 0, "8 MiB per file is room enough for every command");
    /* At 1 KiB per file every command has a file too large to write. */
    if (!under_valgrind()) cr_expect_eq(failed_at_1k, (int)N_COMMANDS);
}

Test(full_disk, small_tmpfs, .init = mktmp, .fini = rmtmp, .timeout = 600)
{
    inputs();
    cr_assert_eq(run_shell("mkdir -p %s/fs", tmp), 0);
    if (mount("tmpfs", tp("fs"), "tmpfs", 0, "size=4m") != 0) {
        cr_skip_test("cannot mount a tmpfs here (%s): the ulimit -f variant covers full"
                     " writes", strerror(errno));
    }
    static const int free_kib[] = {0, 4, 16, 64, 3072};
    int failed_at_0 = 0, failed_at_max = -1;
    for (size_t l = 0; l < sizeof free_kib / sizeof *free_kib; l++) {
        if (under_valgrind() && l != 0 && l + 1 != sizeof free_kib / sizeof *free_kib) continue;
        run_shell("rm -f %s/fs/fill; dd if=/dev/zero of=%s/fs/fill bs=1k count=%d 2>/dev/null",
                  tmp, tmp, 4096 - free_kib[l]);
        cr_assert_eq(run_shell("mkdir -p %s/fs/out", tmp), 0);
        char label[32];
        snprintf(label, sizeof label, "tmpfs, %d KiB free", free_kib[l]);
        int f = run_all("", tp("fs/out"), label);
        if (free_kib[l] == 0) failed_at_0 = f;
        if (free_kib[l] == 3072) failed_at_max = f;
    }
    cr_expect_eq(failed_at_max, 0, "3 MiB free is room enough for every command");
    cr_expect_eq(failed_at_0, (int)N_COMMANDS);
}
