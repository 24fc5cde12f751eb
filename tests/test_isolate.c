/*
 * Sweeps that survive failing and misbehaving policies (issue 4):
 * keep-going (a failed simulation is recorded, its cell summarised over
 * the seeds that succeeded, exit status 1), --isolate (a policy that
 * segfaults, aborts or hangs fails only its cell, named with the signal or
 * the time-out; every other cell is byte-identical to a run without it),
 * and the journal (a crash without --isolate keeps the cells done before
 * it; --resume finishes the sweep with the same bytes as a clean run).
 * The crashing policy is tests/plugins/crash.c (parameter `how`).
 * Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tmpdir.h"
#include "process_gone.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define CRASH WS_TEST_PLUGIN_DIR "/crash.so"
#define RUDE WS_TEST_PLUGIN_DIR "/rude.so"
/* Configs here name test plugins: their folder is allowed. */
#define ARGS " --traces " TRACES " --catalogue " CATALOGUE " --no-plot --allow-plugins " \
    WS_TEST_PLUGIN_DIR

static void mktmp(void) { tmpdir_make("/tmp/ws-test-isolate-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static char *slurp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *slurp(const char *fmt, ...)
{
    char path[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static int exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int exists(const char *fmt, ...)
{
    char path[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    struct stat st;
    return stat(path, &st) == 0;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* The lines of `text` that do not contain `skip`, joined. */
static char *lines_without(const char *text, const char *skip)
{
    char *out = calloc(strlen(text) + 1, 1), *o = out;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        char *line = strndup(p, len);
        if (!strstr(line, skip)) { memcpy(o, line, len); o += len; }
        free(line);
        p += len;
    }
    return out;
}

/* The CSV line of sweep.csv whose policy and workload columns match. */
static char *row(const char *csv, const char *policy, const char *workload)
{
    char key[128];
    snprintf(key, sizeof key, ",%s,v100,%s,", policy, workload);
    const char *p = strstr(csv, key);
    cr_assert_not_null(p, "no row %s in\n%s", key, csv);
    while (p > csv && p[-1] != '\n') p--;
    return strndup(p, strcspn(p, "\n"));
}

/* Field k (0-based) of a CSV line without quotes before it. */
static char *field(const char *line, int k)
{
    const char *p = line;
    for (int i = 0; i < k; i++) {
        p = strchr(p, ',');
        cr_assert_not_null(p);
        p++;
    }
    if (*p == '"') {                         /* quoted: up to the closing quote */
        const char *e = strchr(p + 1, '"');
        return strndup(p + 1, (size_t)(e - p - 1));
    }
    return strndup(p, strcspn(p, ",\n"));
}

/* sweep.csv columns (see ws_sweep_write_csv). */
enum { C_SEEDS_OK = 8, C_SEEDS_FAILED = 9, C_ENERGY = 11, C_SAVE_ENERGY = 26, C_ERROR = 35 };

/* Two workloads x 2 seeds x 20 recurrences, the crash plugin told `how`. */
static void write_config(const char *name, const char *how)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\nseed: 1..2\n"
               "recurrences: 20\nbso: {name: %s, params: {how: %s}}\nplo: jit\n", CRASH, how);
    fclose(f);
}

static void check_crash_cells(const char *how, int sig)
{
    char cfg[16];
    snprintf(cfg, sizeof cfg, "%s.yaml", how);
    write_config(cfg, how);
    /* The crashing pair isolated, two children at a time. */
    cr_assert_eq(run_shell(CLI " sweep %s/%s --policies zeus:jit," CRASH ":jit --isolate --threads 2"
                     ARGS " --out %s/iso-%s >%s/out.txt 2>%s/err-%s.txt",
                     tmp, cfg, tmp, how, tmp, tmp, how), 1);
    /* The same plan without it, in process, one thread. */
    cr_assert_eq(run_shell(CLI " sweep %s/%s --policies zeus:jit --threads 1" ARGS
                     " --out %s/ref-%s >/dev/null 2>&1", tmp, cfg, tmp, how), 0);
    /* Exactly one warning per crashed cell, naming the pair and the signal. */
    char *err = slurp("%s/err-%s.txt", tmp, how), want[256];
    cr_expect_eq(count_lines(err), 2, "%s", err);
    const char *work[2] = {"squad", "cifar100"};
    for (int w = 0; w < 2; w++) {
        snprintf(want, sizeof want, "wattsim: warning: crash_bs+jit v100/%s eta 0.5 beta 2:"
                 " policy process killed by signal %d (%s): bso crash_bs: predict crashed"
                 " (%s)\n", work[w], sig, strsignal(sig), sig == SIGSEGV ? "SIGSEGV" : "SIGABRT");
        cr_expect_not_null(strstr(err, want), "want %s in\n%s", want, err);
    }
    free(err);
    char *iso = slurp("%s/iso-%s/sweep.csv", tmp, how), *ref = slurp("%s/ref-%s/sweep.csv", tmp, how);
    for (int w = 0; w < 2; w++) {
        char *r = row(iso, "crash_bs+jit", work[w]);
        char *ok = field(r, C_SEEDS_OK), *bad = field(r, C_SEEDS_FAILED), *e = field(r, C_ERROR),
             *energy = field(r, C_ENERGY);
        cr_expect_str_eq(ok, "0");
        cr_expect_str_eq(bad, "2");
        cr_expect_str_empty(energy, "no number for a cell without a result: %s", energy);
        snprintf(want, sizeof want, "policy process killed by signal %d (%s): bso crash_bs:"
                 " predict crashed (%s)", sig, strsignal(sig), sig == SIGSEGV ? "SIGSEGV"
                 : "SIGABRT");
        cr_expect_str_eq(e, want);
        free(ok); free(bad); free(e); free(energy); free(r);
    }
    /* Every other cell, byte for byte. */
    char *rest = lines_without(iso, "crash_bs+jit");
    cr_expect_str_eq(rest, ref);
    free(rest);
    free(iso);
    free(ref);
}

Test(isolate, segfault_fails_only_its_cells, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    check_crash_cells("segv", SIGSEGV);
}

Test(isolate, abort_fails_only_its_cells, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    check_crash_cells("abort", SIGABRT);
}

/* The cell time-out of the hang test: 1 s, but 20 s under valgrind (its
 * preload library in LD_PRELOAD), where a cell that does not hang can
 * take longer than 1 s on a loaded machine and would be killed too. */
static int hang_timeout(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "vgpreload") ? 20 : 1;
}

Test(isolate, hanging_policy_is_killed_after_the_timeout, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    write_config("hang.yaml", "hang");
    const int limit = hang_timeout();
    cr_assert_eq(run_shell(CLI " sweep %s/hang.yaml --policies zeus:jit," CRASH ":jit --isolate"
                     " --cell-timeout %d --threads 2" ARGS " --out %s/h >/dev/null 2>%s/err.txt",
                     tmp, limit, tmp, tmp), 1);
    cr_assert_eq(run_shell(CLI " sweep %s/hang.yaml --policies zeus:jit" ARGS " --out %s/r"
                     " >/dev/null 2>&1", tmp, tmp), 0);
    char *err = slurp("%s/err.txt", tmp), want[2][160];
    snprintf(want[0], sizeof want[0], "wattsim: warning: crash_bs+jit v100/squad eta 0.5 beta 2:"
             " policy process timed out after %d s\n", limit);
    snprintf(want[1], sizeof want[1], "crash_bs+jit v100/cifar100 eta 0.5 beta 2: policy process"
             " timed out after %d s\n", limit);
    cr_expect_eq(count_lines(err), 2, "%s", err);
    cr_expect_not_null(strstr(err, want[0]), "%s", err);
    cr_expect_not_null(strstr(err, want[1]), "%s", err);
    free(err);
    char *csv = slurp("%s/h/sweep.csv", tmp), *ref = slurp("%s/r/sweep.csv", tmp);
    char *rest = lines_without(csv, "crash_bs+jit");
    cr_expect_str_eq(rest, ref);
    free(rest);
    free(csv);
    free(ref);
    /* A time-out only makes sense with a child to stop. */
    cr_expect_eq(run_shell(CLI " sweep %s/hang.yaml --cell-timeout 1" ARGS " --out %s/x >/dev/null"
                     " 2>&1", tmp, tmp), 2);
    cr_expect_eq(run_shell(CLI " sweep %s/hang.yaml --isolate --cell-timeout 0" ARGS " --out %s/x"
                     " >/dev/null 2>&1", tmp, tmp), 2);
    cr_expect(!exists("%s/x", tmp));
}

Test(isolate, crash_keeps_a_journal_and_resume_completes, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    write_config("c.yaml", "segv");
    /* In process, one thread, plan order: zeus+jit's 2 workloads x 2 seeds
     * finish, then the crash pair takes the process down. */
    /* The crash is deliberate: under ASan (scripts/test --asan) let the
     * signal kill the process without a sanitizer report, which that
     * script would count as a finding. */
    int st = run_shell("ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0\" "
                 CLI " sweep %s/c.yaml --policies zeus:jit," CRASH ":jit --threads 1" ARGS
                 " --out %s/s >/dev/null 2>&1", tmp, tmp);
    cr_assert_neq(st, 0);
    cr_assert_neq(st, 2, "a crash is not an input error");
    cr_expect(!exists("%s/s/sweep.csv", tmp), "no outputs from a crashed sweep");
    /* A 64-byte header, the u64 length of the fingerprint's parts and the
     * parts, then zeus+jit's 4 simulations' 64-byte records (indices 0..3
     * in plan order, the first u64 of each). */
    char path[600];
    snprintf(path, sizeof path, "%s/s/sweep.journal", tmp);
    FILE *jf = fopen(path, "rb");
    cr_assert_not_null(jf);
    static unsigned char j[1 << 16];
    size_t n = fread(j, 1, sizeof j, jf);
    fclose(jf);
    cr_assert_geq(n, 72u);
    cr_assert_eq(memcmp(j, "wattsim-jrnl-v3\n", 16), 0);
    unsigned long long parts;
    memcpy(&parts, j + 64, 8);
    const size_t at = 72 + (size_t)parts;
    cr_assert_eq(n, at + 4 * 64, "header + zeus+jit's 4 simulations, got %zu bytes", n);
    for (int i = 0; i < 4; i++) {
        unsigned long long idx;
        memcpy(&idx, j + at + 64 * i, 8);
        cr_expect_eq(idx, (unsigned long long)i, "record %d is of simulation %llu", i, idx);
    }
    /* A record cut short by the crash is ignored. */
    cr_assert_eq(run_shell("head -c 40 %s/s/sweep.journal >> %s/s/sweep.journal", tmp, tmp), 0);

    /* Without --resume (or --force) the journal is not thrown away. */
    cr_expect_eq(run_shell(CLI " sweep %s/c.yaml --policies zeus:jit," CRASH ":jit --isolate" ARGS
                     " --out %s/s >/dev/null 2>%s/e1.txt", tmp, tmp, tmp), 2);
    char *e = slurp("%s/e1.txt", tmp);
    cr_expect_eq(count_lines(e), 1, "%s", e);
    cr_expect_not_null(strstr(e, "sweep.journal: an interrupted sweep left this journal"), "%s", e);
    free(e);
    /* Another plan refuses the journal, leaving it as it is. */
    cr_expect_eq(run_shell(CLI " sweep %s/c.yaml --set seed=1..3 --policies zeus:jit," CRASH ":jit"
                     " --isolate --resume" ARGS " --out %s/s >/dev/null 2>%s/e2.txt",
                     tmp, tmp, tmp), 2);
    e = slurp("%s/e2.txt", tmp);
    cr_expect_eq(count_lines(e), 1, "%s", e);
    cr_expect_not_null(strstr(e, "sweep.journal: cannot resume: the seeds changed (2 seeds, 1 to 2"
                                 " in the journal; 3 seeds, 1 to 3 now)"), "%s", e);
    free(e);
    cr_expect(exists("%s/s/sweep.journal", tmp));
    cr_expect(!exists("%s/s/sweep.csv", tmp));

    /* Resume with the crash isolated: 4 simulations reused, the rest run. */
    cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --policies zeus:jit," CRASH ":jit --isolate --resume"
                     ARGS " --out %s/s >%s/o.txt 2>/dev/null", tmp, tmp, tmp), 1);
    char *o = slurp("%s/o.txt", tmp);
    cr_expect_not_null(strstr(o, "16 simulations (4 from the journal), 8 cells"), "%s", o);
    free(o);
    cr_expect(!exists("%s/s/sweep.journal", tmp), "the journal is removed once outputs are in place");
    /* The same bytes as a clean run. */
    cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --policies zeus:jit," CRASH ":jit --isolate" ARGS
                     " --out %s/clean >/dev/null 2>&1", tmp, tmp), 1);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md"};
    for (int i = 0; i < 3; i++) {
        char *a = slurp("%s/s/%s", tmp, files[i]), *b = slurp("%s/clean/%s", tmp, files[i]);
        cr_expect_str_eq(a, b, "%s differs after --resume", files[i]);
        free(a);
        free(b);
    }
}

Test(isolate, keep_going_records_failed_seeds, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    /* gts without pruning: on v100 librispeech seeds 4 and 5 end with
     * "recurrence 22 (27) did not reach the target metric in 20 tries", seed
     * 6 completes (a legitimate result of the policy, not a crash). */
    char path[600];
    snprintf(path, sizeof path, "%s/g.yaml", tmp);
    FILE *f = fopen(path, "w");
    fputs("gpu: v100\nworkload: [librispeech, squad]\neta: 0.5\nbeta: 2\nseed: 4..6\n"
          "recurrences: 30\n", f);
    fclose(f);
    cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --policies gts:jit,zeus:jit --threads 2" ARGS
                     " --out %s/g >/dev/null 2>%s/err.txt", tmp, tmp, tmp), 1);
    char *err = slurp("%s/err.txt", tmp);
    cr_expect_str_eq(err, "wattsim: note: librispeech on v100: default batch size b0 = 256"
                          " capped to 192, the largest batch size of v100's power trace for"
                          " the workload (as the paper's scripts do)\n"
                          "wattsim: warning: gts+jit v100/librispeech eta 0.5 beta 2: seed 4:"
                          " librispeech on v100: recurrence 22 did not reach the target metric"
                          " in 20 tries\n");
    free(err);
    char *csv = slurp("%s/g/sweep.csv", tmp);
    char *r = row(csv, "gts+jit", "librispeech");
    char *ok = field(r, C_SEEDS_OK), *bad = field(r, C_SEEDS_FAILED), *msg = field(r, C_ERROR);
    cr_expect_str_eq(ok, "1");
    cr_expect_str_eq(bad, "2");
    cr_expect_str_eq(msg, "seed 4: librispeech on v100: recurrence 22 did not reach the target"
                          " metric in 20 tries");
    /* By hand: the cell's numbers are seed 6's alone, its saving is against
     * default's seed 6 (the seeds where both succeeded). */
    cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --set seed=6 --set workload=librispeech --policies"
                     " gts:jit" ARGS " --out %s/one >/dev/null 2>&1", tmp, tmp), 0);
    char *one = slurp("%s/one/sweep.csv", tmp);
    char *r1 = row(one, "gts+jit", "librispeech"), *d1 = row(one, "default+default", "librispeech");
    char *e_all = field(r, C_ENERGY), *e_one = field(r1, C_ENERGY), *e_def = field(d1, C_ENERGY);
    cr_expect_str_eq(e_all, e_one);
    char *sv = field(r, C_SAVE_ENERGY);
    double want = 1.0 - strtod(e_one, NULL) / strtod(e_def, NULL);
    cr_expect(fabs(strtod(sv, NULL) - want) < 1e-15, "%s vs %.17g", sv, want);
    /* Every other cell is what a sweep without gts gives. */
    cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --policies zeus:jit" ARGS " --out %s/z >/dev/null"
                     " 2>&1", tmp, tmp), 0);
    char *z = slurp("%s/z/sweep.csv", tmp), *rest = lines_without(csv, "gts+jit");
    cr_expect_str_eq(rest, z);
    /* The other formats carry the counts too. */
    char *json = slurp("%s/g/sweep.json", tmp), *md = slurp("%s/g/sweep.md", tmp);
    cr_expect_not_null(strstr(json, "\"seeds_ok\": 1, \"seeds_failed\": 2, \"error\": \"seed 4:"));
    cr_expect_not_null(strstr(md, "| 1 | 2 | seed 4: librispeech on v100: recurrence 22"));
    cr_expect_not_null(strstr(md, "2 of 24 simulations failed"));
    /* The same failures, the same bytes, isolated. */
    cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --policies gts:jit,zeus:jit --isolate --threads 2"
                     ARGS " --out %s/gi >/dev/null 2>&1", tmp, tmp), 1);
    char *iso = slurp("%s/gi/sweep.csv", tmp);
    cr_expect_str_eq(iso, csv);
    free(iso); free(json); free(md); free(z); free(rest); free(sv); free(e_all); free(e_one);
    free(e_def); free(r1); free(d1); free(one); free(ok); free(bad); free(msg); free(r); free(csv);
}

Test(isolate, input_errors_stop_with_status_2_and_no_outputs, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    write_config("c.yaml", "segv");
    cr_expect_eq(run_shell(CLI " sweep %s/c.yaml --policies zeus:nosuch --isolate" ARGS " --out %s/a"
                     " >/dev/null 2>%s/e.txt", tmp, tmp, tmp), 2);
    char *e = slurp("%s/e.txt", tmp);
    cr_expect_eq(count_lines(e), 1, "%s", e);
    free(e);
    cr_expect(!exists("%s/a", tmp), "no folder, no journal");
    cr_expect_eq(run_shell(CLI " sweep %s/c.yaml --set workload=nosuch" ARGS " --out %s/b >/dev/null"
                     " 2>&1", tmp, tmp), 2);
    cr_expect(!exists("%s/b", tmp));
    cr_expect_eq(run_shell(CLI " sweep %s/c.yaml --traces /nonexistent --catalogue " CATALOGUE
                     " --no-plot --out %s/c --resume >/dev/null 2>&1", tmp, tmp), 2);
    cr_expect(!exists("%s/c", tmp));
}

/* ------------------------------------------------ process-group cleanup */

#define SPAWN WS_TEST_PLUGIN_DIR "/spawn.so"


/* The spawn plugin's pids (cell child, grandchild), once it wrote them. */
static void spawn_pids(long *child, long *grand)
{
    char path[600];
    snprintf(path, sizeof path, "%s/pids", tmp);
    FILE *f = NULL;
    for (int i = 0; i < 3000 && !(f = fopen(path, "r")); i++) usleep(10000);   /* 30 s: valgrind */
    cr_assert_not_null(f, "the spawn plugin never wrote its pids");
    cr_assert_eq(fscanf(f, "%ld %ld", child, grand), 2);
    fclose(f);
}

static void write_spawn_config(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/spawn.yaml", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\nrecurrences: 5\n"
               "bso: {name: %s, params: {pidfile: %s/pids}}\nplo: jit\n", SPAWN, tmp);
    fclose(f);
}

Test(isolate, grandchild_does_not_survive_the_timeout, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    write_spawn_config();
    cr_assert_eq(run_shell(CLI " sweep %s/spawn.yaml --isolate --cell-timeout 1" ARGS
                           " --out %s/o >/dev/null 2>%s/err.txt", tmp, tmp, tmp), 1);
    long child, grand;
    spawn_pids(&child, &grand);
    cr_expect(process_gone(child), "cell process %ld survived", child);
    cr_expect(process_gone(grand), "grandchild %ld survived the time-out", grand);
    if (!process_gone(grand)) kill((pid_t)grand, SIGKILL);
}

/* Start the spawn sweep, --isolate, wait until its cell runs, then send
 * sig: to wattsim, or with `session` to the whole process group of a new
 * session wattsim leads (setsid), as a hang-up of the terminal or ssh
 * session it was started from would. */
static void stop_parent_how(int sig, int want_status, int session)
{
    write_spawn_config();
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (session && setsid() < 0) _exit(126);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "exec " CLI " sweep %s/spawn.yaml --isolate" ARGS
                 " --out %s/o >/dev/null 2>%s/err.txt", tmp, tmp, tmp);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    long child, grand;
    char path[600];
    snprintf(path, sizeof path, "%s/pids", tmp);
    for (int i = 0; i < 3000 && access(path, F_OK); i++) usleep(10000);   /* 30 s: valgrind */
    if (access(path, F_OK)) kill(pid, SIGKILL);     /* not left running when it fails */
    spawn_pids(&child, &grand);
    cr_assert_eq(kill(session ? -pid : pid, sig), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == want_status, "wattsim ended with %#x", st);
    cr_expect(process_gone(child), "cell process %ld survived", child);
    cr_expect(process_gone(grand), "grandchild %ld survived", grand);
    if (!process_gone(child)) kill((pid_t)child, SIGKILL);
    if (!process_gone(grand)) kill((pid_t)grand, SIGKILL);
    char *err = slurp("%s/err.txt", tmp);
    cr_expect_eq(count_lines(err), 1, "%s", err);
    char want[64];
    snprintf(want, sizeof want, "interrupted by SIG%s;", sig == SIGINT ? "INT" : sig == SIGTERM
             ? "TERM" : sig == SIGHUP ? "HUP" : "QUIT");
    cr_expect_not_null(strstr(err, want), "%s", err);
    free(err);
}

static void stop_parent(int sig, int want_status) { stop_parent_how(sig, want_status, 0); }

Test(isolate, sigterm_leaves_no_policy_process, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    stop_parent(SIGTERM, 143);
}

Test(isolate, sigint_leaves_no_policy_process, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    stop_parent(SIGINT, 130);
}

/* An ssh session dropping: SIGHUP to the session's process group (the
 * cells, in groups of their own, get nothing from it). */
Test(isolate, sighup_of_the_session_leaves_no_policy_process, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    stop_parent_how(SIGHUP, 129, 1);
}

Test(isolate, sigquit_leaves_no_policy_process, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    stop_parent(SIGQUIT, 131);
}

/* ------------------------------------------------ --cell-memory */

#define HOSTILE WS_TEST_PLUGIN_DIR "/hostile.so"

/* A policy allocating (and writing) 128 MiB in create, without checking
 * for NULL: with --cell-memory 32M the allocation fails in its cell, which
 * fails saying the limit was in force; the rest of the sweep is as
 * without the limit, and 1 GiB is room enough. */
Test(isolate, cell_memory_contains_an_allocation, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    if (strstr(WS_TEST_LINK_FLAGS, "sanitize"))
        cr_skip_test("ASan reserves terabytes of address space: no RLIMIT_AS under it");
    cr_assert_eq(run_shell("printf 'gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                           "recurrences: 10\n' >%s/m.yaml", tmp), 0);
    const char *pol = " --policies " HOSTILE ":hostile{mode=5,mib=128}:jit,zeus:jit";
    cr_assert_eq(run_shell(CLI " sweep %s/m.yaml%s --isolate --cell-memory 32M" ARGS
                           " --out %s/lim >/dev/null 2>%s/err.txt", tmp, pol, tmp, tmp), 1);
    char *err = slurp("%s/err.txt", tmp);
    cr_expect_eq(count_lines(err), 1, "%s", err);
    cr_expect_not_null(strstr(err, "wattsim: warning: hostile{mode=5,mib=128}+jit v100/squad eta"
                              " 0.5 beta 2: policy process killed by signal 11 (Segmentation"
                              " fault): bso hostile: create crashed (SIGSEGV) (it may add at"
                              " most 32 MiB to its memory: --cell-memory; an allocation past"
                              " that fails)"), "%s", err);
    free(err);
    cr_assert_eq(run_shell(CLI " sweep %s/m.yaml%s --isolate --cell-memory 1G" ARGS
                           " --out %s/room >/dev/null 2>&1", tmp, pol, tmp), 0);
    cr_assert_eq(run_shell(CLI " sweep %s/m.yaml --policies zeus:jit --isolate" ARGS
                           " --out %s/zeus >/dev/null 2>&1", tmp, tmp), 0);
    char *lim = slurp("%s/lim/sweep.csv", tmp), *z = slurp("%s/zeus/sweep.csv", tmp);
    char *rest = lines_without(lim, "hostile");
    cr_expect_str_eq(rest, z, "the other cells changed");
    free(rest);
    free(lim);
    free(z);
}

/* A child's stderr (the policy's log, its prints, to stderr or stdout) is
 * passed on with the cell in front; exit() in a call names the call. */
Test(isolate, stderr_forwarded_and_exit_named, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    char path[600];
    snprintf(path, sizeof path, "%s/r.yaml", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\nrecurrences: 2\n", f);
    fclose(f);
    cr_assert_eq(run_shell(CLI " sweep %s/r.yaml --policies " RUDE ":jit --isolate" ARGS
                           " --out %s/a >%s/out.txt 2>%s/err.txt", tmp, tmp, tmp, tmp), 0);
    char *err = slurp("%s/err.txt", tmp);
    cr_expect_not_null(strstr(err, "wattsim: rude+jit v100/squad eta 0.5 beta 2: bso rude"
                                   " [rude+jit v100/squad eta 0.5 beta 2, seed 1, recurrence 1"
                                   " try 1]: warning: observed\n"), "%s", err);
    cr_expect_not_null(strstr(err, "wattsim: rude+jit v100/squad eta 0.5 beta 2: rude: raw\n"),
                       "%s", err);
    free(err);
    char *out = slurp("%s/out.txt", tmp);
    cr_expect_null(strstr(out, "rude"), "%s", out);
    free(out);
    cr_assert_eq(run_shell(CLI " sweep %s/r.yaml --policies '" RUDE "{mode=1}:jit' --isolate"
                           ARGS " --out %s/b >/dev/null 2>%s/err2.txt", tmp, tmp, tmp), 1);
    err = slurp("%s/err2.txt", tmp);
    cr_expect_not_null(strstr(err, "wattsim: warning: rude{mode=1}+jit v100/squad eta 0.5 beta 2:"
                                   " policy process exited with status 1: bso rude: observe"
                                   " called exit(); a policy must return an error instead\n"),
                       "%s", err);
    free(err);
}
