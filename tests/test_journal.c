/*
 * The sweep journal (issue 10: 64-byte binary records with a checksum;
 * issue 7: journal trust). A journal is made the way users get one: a
 * sweep whose in-process plugin crashes (tests/plugins/crash.c) after
 * zeus+jit's 4 simulations, or a sweep killed with SIGKILL. Then:
 * every tampered field (NaN, inf, a negative total, a batch size or power
 * limit the job does not have, a wrong checksum, a rebuilt plugin) is
 * refused by --resume with one line naming the journal and the record,
 * and nothing is written; an untouched journal resumes to the same bytes
 * as a clean run. Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "run_cli.h"
#include "tmpdir.h"
#include "wattsim/sweep.h"
#include "../sim/src/study/sweep_run.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define CRASH WS_TEST_PLUGIN_DIR "/crash.so"
#define ARGS " --traces " TRACES " --catalogue " CATALOGUE " --no-plot"
/* A deliberate crash: no sanitizer report under scripts/test --asan. */
#define NOASAN "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0\" "

static void mktmp(void) { tmpdir_make("/tmp/ws-test-journal-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static char *slurp(const char *path) { return slurp_file(path); }

/* Where a journal's records start: after its 64-byte header, the u64
 * length of the fingerprint's parts and the parts (journal.c). */
static long records_at(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint64_t n = 0;
    int ok = fseek(f, 64, SEEK_SET) == 0 && fread(&n, 1, 8, f) == 8;
    fclose(f);
    return ok ? 64 + 8 + (long)n : -1;
}

/* Byte offset of record k (from 0) of the test's journal s/sweep.journal. */
static long rec_at(int k)
{
    char path[600];
    snprintf(path, sizeof path, "%s/s/sweep.journal", tmp);
    return records_at(path) + 64L * k;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (long)st.st_size;
}

/* A copy of the crash plugin in tmp (so a test may "rebuild" it), and a
 * config: 2 workloads x 2 seeds x 20 recurrences. */
static void make_world(void)
{
    cr_assert_eq(run_shell("cp " CRASH " %s/crash.so", tmp), 0);
    char text[1024];
    snprintf(text, sizeof text,
             "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\nseed: 1..2\n"
             "recurrences: 20\nbso: {name: %s/crash.so, params: {how: segv}}\nplo: jit\n", tmp);
    write_file("c.yaml", text);
}

#define POLICIES " --policies zeus:jit,%s/crash.so:jit"

/* Crash in process after zeus+jit's 4 simulations: a journal of 4 records. */
static void crashed_journal(void)
{
    make_world();
    int st = run_shell(NOASAN CLI " sweep %s/c.yaml" POLICIES " --threads 1" ARGS
                       " --out %s/s >/dev/null 2>&1", tmp, tmp, tmp);
    cr_assert(st != 0 && st != 2, "the sweep should have crashed (status %d)", st);
    cr_assert_eq(file_size(tp("s/sweep.journal")), rec_at(4));
}

/* Record k's 64 bytes, changed by `edit`, with the checksum recomputed
 * unless `keep_crc`. */
typedef void (*edit_fn)(unsigned char *rec);

static void tamper(int k, edit_fn edit, int keep_crc)
{
    FILE *f = fopen(tp("s/sweep.journal"), "r+b");
    cr_assert_not_null(f);
    unsigned char rec[64];
    cr_assert_eq(fseek(f, rec_at(k), SEEK_SET), 0);
    cr_assert_eq(fread(rec, 1, 64, f), 64u);
    edit(rec);
    if (!keep_crc) {
        uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), rec, 60);
        memcpy(rec + 60, &crc, 4);
    }
    cr_assert_eq(fseek(f, rec_at(k), SEEK_SET), 0);
    cr_assert_eq(fwrite(rec, 1, 64, f), 64u);
    cr_assert_eq(fclose(f), 0);
}

static void set_double(unsigned char *rec, int field, double x) { memcpy(rec + 8 + 8 * field, &x, 8); }
static void energy_nan(unsigned char *rec) { set_double(rec, 0, NAN); }
static void time_inf(unsigned char *rec) { set_double(rec, 1, INFINITY); }
static void cost_negative(unsigned char *rec) { set_double(rec, 2, -5); }
static void steady_nan(unsigned char *rec) { set_double(rec, 3, -NAN); }
static void bad_bs(unsigned char *rec) { int32_t bs = 12345; memcpy(rec + 48, &bs, 4); }
static void bad_pl(unsigned char *rec) { int32_t pl = 7; memcpy(rec + 52, &pl, 4); }
static void flip_energy(unsigned char *rec) { rec[9] ^= 1; }
static void bad_index(unsigned char *rec) { uint64_t i = 999; memcpy(rec, &i, 8); }

/* --resume must refuse with exactly `want` (after "wattsim: "), exit 2,
 * nothing written, the journal kept. */
static void expect_refused(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void expect_refused(const char *fmt, ...)
{
    char want[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    int st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                       " --out %s/s >%s/o.txt 2>%s/e.txt", tmp, tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 2);
    char *e = slurp(tp("e.txt")), *o = slurp(tp("o.txt"));
    char line[1024];
    snprintf(line, sizeof line, "wattsim: %s/s/sweep.journal: %s\n", tmp, want);
    cr_expect_str_eq(e, line);
    cr_expect_str_eq(o, "");
    cr_expect_eq(file_size(tp("s/sweep.csv")), -1, "no outputs");
    cr_expect_eq(file_size(tp("s/sweep.journal")), rec_at(4), "the journal is kept");
    free(e);
    free(o);
}

Test(journal, nan_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(1, energy_nan, 0);
    expect_refused("record 2 (byte %ld): simulation 1: energy is nan, not a finite number"
                   " >= 0", rec_at(1));
}

Test(journal, inf_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(0, time_inf, 0);
    expect_refused("record 1 (byte %ld): simulation 0: time is inf, not a finite number >="
                   " 0", rec_at(0));
}

Test(journal, negative_total_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(3, cost_negative, 0);
    expect_refused("record 4 (byte %ld): simulation 3: cost is -5, not a finite number >="
                   " 0", rec_at(3));
}

Test(journal, nan_steady_state_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(2, steady_nan, 0);
    expect_refused("record 3 (byte %ld): simulation 2: steady-state energy is -nan, not a finite"
                   " number >= 0", rec_at(2));
}

Test(journal, knob_outside_the_job_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(0, bad_bs, 0);
    expect_refused("record 1 (byte %ld): simulation 0: final batch size 12345 is not one of the"
                   " job's", rec_at(0));
}

Test(journal, power_limit_outside_the_job_is_refused, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    crashed_journal();
    /* squad's v100 batch sizes each have their own power limits; 7 W is none. */
    unsigned char rec[64];
    FILE *f = fopen(tp("s/sweep.journal"), "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, rec_at(0), SEEK_SET), 0);
    cr_assert_eq(fread(rec, 1, 64, f), 64u);
    fclose(f);
    int32_t bs;
    memcpy(&bs, rec + 48, 4);
    tamper(0, bad_pl, 0);
    expect_refused("record 1 (byte %ld): simulation 0: final power limit 7 W is not one of batch"
                   " size %d's in the trace", rec_at(0), (int)bs);
}

Test(journal, bad_checksum_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(2, flip_energy, 1);
    expect_refused("record 3 (byte %ld): bad checksum (the record was damaged or"
                   " edited)", rec_at(2));
}

Test(journal, index_outside_the_plan_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    tamper(1, bad_index, 0);
    expect_refused("record 2 (byte %ld): simulation 999 is not in this plan of 16", rec_at(1));
}

/* The sha256 of a file, by the system's sha256sum (not wattsim's). */
static void sha_of(const char *path, char hex[65])
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_eq(fscanf(p, "%64s", hex), 1);
    pclose(p);
}

/* --resume refused: exit 2, one line "cannot resume: WANT...; rerun
 * without --resume ...", the journal kept as it was. */
static void expect_changed(const char *extra, const char *want)
{
    static char line[1200];
    long before = file_size(tp("s/sweep.journal"));
    int st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS "%s"
                       " --out %s/s >/dev/null 2>%s/e.txt", tmp, tmp, extra, tmp, tmp);
    cr_expect_eq(st, 2);
    char *all = slurp(tp("e.txt")), *e = all;
    /* after any notes (a power cap's), the refusal */
    for (char *nl; (nl = strchr(e, '\n')) && nl[1];) e = nl + 1;
    char *head = line;
    const char *tail = "; rerun without --resume into a new folder, or pass --force without"
                       " --resume to start over\n";
    snprintf(head, sizeof line, "wattsim: %s/s/sweep.journal: cannot resume: %s", tmp, want);
    size_t n = strlen(e);
    cr_expect(!strncmp(e, head, strlen(head)), "%s\nnot:\n%s", e, head);
    cr_expect(n > strlen(tail) && !strcmp(e + n - strlen(tail), tail), "%s", e);
    cr_expect_eq(strchr(e, '\n') - e + 1, (long)n, "one line: %s", e);
    cr_expect_eq(file_size(tp("s/sweep.journal")), before, "the journal is kept");
    free(all);
}

Test(journal, rebuilt_plugin_is_another_plan, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    /* Same name, same parameters, other bytes: a rebuilt plugin. It still
     * loads (bytes appended to an ELF file change nothing it maps). The
     * refusal names the plugin and both hashes (12 digits of each). */
    char was[65], now[65], want[1400], so[600];
    snprintf(so, sizeof so, "%s/crash.so", tmp);
    sha_of(so, was);
    cr_assert_eq(run_shell("printf 'rebuilt' >> %s/crash.so", tmp), 0);
    sha_of(so, now);
    snprintf(want, sizeof want, "the plugin file of bso %s changed (sha256 %.12s... in the"
             " journal; sha256 %.12s... now)", so, was, now);
    expect_changed("", want);
    /* Policy parameters are part of the plan too: named with the pair's. */
    cr_assert_eq(run_shell("cp " CRASH " %s/crash.so", tmp), 0);
    snprintf(want, sizeof want, "the parameters of pair crash_bs+jit changed (%s{how=segv}+jit{}"
             " in the journal; %s{how=abort}+jit{} now)", so, so);
    expect_changed(" --set bso.params.how=abort", want);
    /* The original plugin and parameters: accepted, 4 reused. */
    int st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                       " --out %s/s >%s/o.txt 2>/dev/null", tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 1, "completed, the crash cells failed");
    char *o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "16 simulations (4 from the journal)"), "%s", o);
    free(o);
}

/* A what-if given on resume that the journal's run did not have, and a
 * trace whose numbers changed: each named. */
Test(journal, changed_whatif_and_trace_are_named, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    expect_changed(" --price 0.25", "the price (--price) changed (none in the journal; 0.25 $/kWh"
                   " now)");
    expect_changed(" --power-cap 200", "the what-if transforms (--power-cap, --job-power-cap,"
                   " --input-stall, --input-rate, --idle-power) changed (none in the journal;"
                   " power cap 200 W now)");
    /* A copy of the traces with one power reading of v100 changed. */
    cr_assert_eq(run_shell("cp -r " TRACES " %s/tr && cd %s/tr && f=$(ls summary_power_v100*)"
                           " && case $f in *.gz) gunzip $f; f=${f%%.gz};; esac"
                           " && awk -F, 'NR==2{$NF=$NF+1} {print}' OFS=, $f > x && mv x $f",
                           tmp, tmp), 0);
    char extra[700];
    snprintf(extra, sizeof extra, " --traces %s/tr", tmp);
    /* (the reading is one of cifar100's, a job of the same size) */
    expect_changed(extra, "the traces (or recurrences) of v100/cifar100 changed (20 recurrences,"
                   " 10 batch sizes, 70 knobs, hash ");
}

/* A journal of wattsim 0.3 (header "wattsim-jrnl-v2", no parts) still
 * resumes; a plan that differs from it is refused as before, without
 * naming the part (the journal does not have them). */
Test(journal, old_journal_without_parts, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    long at = rec_at(0);
    /* the v2 layout: the same 64 bytes, then the records */
    cr_assert_eq(run_shell("cd %s/s && head -c 64 sweep.journal | sed 's/jrnl-v3/jrnl-v2/' > v2"
                           " && tail -c +%ld sweep.journal >> v2 && mv v2 sweep.journal",
                           tmp, at + 1), 0);
    cr_assert_eq(file_size(tp("s/sweep.journal")), 64 + 4 * 64);
    cr_assert_eq(run_shell("printf 'rebuilt' >> %s/crash.so", tmp), 0);
    int st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                       " --out %s/s >/dev/null 2>%s/e.txt", tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 2);
    char *e = slurp(tp("e.txt"));
    cr_expect_not_null(strstr(e, "sweep.journal: the journal is of another plan"), "%s", e);
    cr_expect_eq(strchr(e, '\n') - e + 1, (long)strlen(e), "one line: %s", e);
    free(e);
    cr_assert_eq(run_shell("cp " CRASH " %s/crash.so", tmp), 0);
    st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                   " --out %s/s >%s/o.txt 2>/dev/null", tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 1, "completed, the crash cells failed");
    char *o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "16 simulations (4 from the journal)"), "%s", o);
    free(o);
}

/* The header's parts are checked too (their CRC): damaged, they only cost
 * a refusal its detail; a length past the file is not a journal. */
Test(journal, damaged_parts_are_not_trusted, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    crashed_journal();
    /* a byte inside the parts (past their count) flipped */
    FILE *f = fopen(tp("s/sweep.journal"), "r+b");
    cr_assert_not_null(f);
    unsigned char b;
    cr_assert_eq(fseek(f, 64 + 8 + 40, SEEK_SET), 0);
    cr_assert_eq(fread(&b, 1, 1, f), 1u);
    b ^= 0x20;
    cr_assert_eq(fseek(f, 64 + 8 + 40, SEEK_SET), 0);
    cr_assert_eq(fwrite(&b, 1, 1, f), 1u);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(run_shell("printf 'rebuilt' >> %s/crash.so", tmp), 0);
    int st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                       " --out %s/s >/dev/null 2>%s/e.txt", tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 2);
    char *e = slurp(tp("e.txt"));
    cr_expect_not_null(strstr(e, "sweep.journal: the journal is of another plan"), "%s", e);
    free(e);
    /* the plan is the same (the whole fingerprint decides): resumed */
    cr_assert_eq(run_shell("cp " CRASH " %s/crash.so", tmp), 0);
    st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                   " --out %s/s >%s/o.txt 2>/dev/null", tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 1, "completed, the crash cells failed");
    char *o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "16 simulations (4 from the journal)"), "%s", o);
    free(o);
    /* a parts length past the end of the file */
    cr_assert_eq(run_shell("rm -rf %s/s", tmp), 0);
    crashed_journal();
    f = fopen(tp("s/sweep.journal"), "r+b");
    cr_assert_not_null(f);
    uint64_t huge = (uint64_t)1 << 40;
    cr_assert_eq(fseek(f, 64, SEEK_SET), 0);
    cr_assert_eq(fwrite(&huge, 8, 1, f), 1u);
    cr_assert_eq(fclose(f), 0);
    st = run_shell(CLI " sweep %s/c.yaml" POLICIES " --isolate --resume" ARGS
                   " --out %s/s >/dev/null 2>%s/e.txt", tmp, tmp, tmp, tmp);
    cr_expect_eq(st, 2);
    e = slurp(tp("e.txt"));
    cr_expect_not_null(strstr(e, "sweep.journal: not a wattsim sweep journal"), "%s", e);
    free(e);
}

Test(journal, resume_after_sigkill_gives_the_same_bytes, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    /* Long enough (a few seconds on one thread) to be killed part-way. */
    write_file("k.yaml", "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..150\nrecurrences: 2000\nbso: zeus\nplo: jit\n");
    char cfg[600], out[600];              /* (tp() has one buffer) */
    snprintf(cfg, sizeof cfg, "%s/k.yaml", tmp);
    snprintf(out, sizeof out, "%s/s", tmp);
    char *const argv[] = {CLI, "sweep", cfg, "--threads", "2", "--traces", TRACES,
                          "--catalogue", CATALOGUE, "--no-plot", "--out", out, NULL};
    const pid_t pid = tmpdir_spawn_quiet(argv, NULL);
    /* Kill it once the journal holds at least 20 simulations. */
    char journal[600];
    snprintf(journal, sizeof journal, "%s/s/sweep.journal", tmp);
    for (int i = 0; i < 20000 && file_size(journal) < records_at(journal) + 20 * 64; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) cr_assert_fail("the sweep ended before it was killed");
        usleep(1000);
    }
    cr_assert_eq(kill(pid, SIGKILL), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSIGNALED(st), "the sweep ended before it was killed: make it longer");
    long size = file_size(journal);
    cr_assert_geq(size, records_at(journal) + 20 * 64);
    cr_assert_eq(run_shell(CLI " sweep %s/k.yaml --resume --threads 2" ARGS
                           " --out %s/s >%s/o.txt 2>&1", tmp, tmp, tmp), 0);
    char *o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "900 simulations ("), "%s", o);
    cr_expect_not_null(strstr(o, " from the journal), 6 cells"), "%s", o);
    free(o);
    cr_assert_eq(run_shell(CLI " sweep %s/k.yaml --threads 1" ARGS " --out %s/clean >/dev/null",
                           tmp, tmp), 0);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md"};
    for (int i = 0; i < 3; i++) {
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/s/%s", tmp, files[i]);
        snprintf(b, sizeof b, "%s/clean/%s", tmp, files[i]);
        char *x = slurp(a), *y = slurp(b);
        cr_expect_str_eq(x, y, "%s differs after a kill and --resume", files[i]);
        free(x);
        free(y);
    }
}

Test(journal, size_is_64_bytes_per_simulation, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    /* A journal's size does not depend on recurrences: the same 4
     * simulations with 20 and with 400 recurrences. */
    crashed_journal();
    long small = file_size(tp("s/sweep.journal"));
    cr_assert_eq(run_shell(NOASAN CLI " sweep %s/c.yaml --set recurrences=400" POLICIES
                           " --threads 1" ARGS " --out %s/big >/dev/null 2>&1", tmp, tmp, tmp),
                 128 + SIGSEGV);
    /* (the header's parts name the recurrences: compare the records) */
    char big[600];
    snprintf(big, sizeof big, "%s/big/sweep.journal", tmp);
    cr_expect_eq(file_size(big) - records_at(big), small - rec_at(0));
}

Test(progress, lines_when_not_a_terminal_nothing_with_quiet, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    /* A policy that hangs until --cell-timeout kills it (2 s): the sweep
     * outlasts the first second's silence however fast the machine. */
    make_world();
    char text[1024];
    snprintf(text, sizeof text,
             "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\nseed: 1..2\n"
             "recurrences: 20\nbso: {name: %s/crash.so, params: {how: hang}}\nplo: jit\n", tmp);
    write_file("h.yaml", text);
    cr_assert_eq(run_shell("WATTSIM_QUIET=0 " CLI " sweep %s/h.yaml" POLICIES " --isolate"
                           " --cell-timeout 2" ARGS " --out %s/a >/dev/null 2>%s/e.txt",
                           tmp, tmp, tmp, tmp), 1);
    char *e = slurp(tp("e.txt"));
    cr_expect_not_null(strstr(e, "/16 simulations ("), "a line after the first second:\n%s", e);
    cr_expect_not_null(strstr(e, "wattsim: 16/16 simulations (100 %), "),
                       "a last line when lines were printed:\n%s", e);
    free(e);
    cr_assert_eq(run_shell("WATTSIM_QUIET=0 " CLI " sweep %s/h.yaml" POLICIES " --isolate"
                           " --cell-timeout 2 --quiet" ARGS " --out %s/b >/dev/null 2>%s/e.txt",
                           tmp, tmp, tmp, tmp), 1);
    e = slurp(tp("e.txt"));
    cr_expect_null(strstr(e, "simulations ("), "--quiet: no progress:\n%s", e);
    cr_expect_not_null(strstr(e, "wattsim: warning: "), "the warnings stay:\n%s", e);
    free(e);
}

/* ------------------------------------------------------------ shards */

Test(shard, three_shards_merge_to_the_bytes_of_one_run, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    /* gts fails some librispeech seeds: failures must travel too. */
    write_file("g.yaml", "gpu: v100\nworkload: [librispeech, squad]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..6\nrecurrences: 30\n");
    cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --policies gts:jit,zeus:jit --threads 2" ARGS
                           " --out %s/one >/dev/null 2>&1", tmp, tmp), 1);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(run_shell(CLI " sweep %s/g.yaml --policies gts:jit,zeus:jit --shard %d/3"
                               " --threads 1" ARGS " --out %s/s%d >/dev/null 2>&1", tmp, k, tmp,
                               k) == 2, 0, "shard %d", k);
    /* A shard writes its journal, no outputs. */
    cr_expect_eq(file_size(tp("s1/sweep.csv")), -1);
    cr_expect_gt(file_size(tp("s1/sweep.journal")), 64);
    /* Merging two of the three: refused, nothing written. */
    cr_expect_eq(run_shell(CLI " merge sweep %s/g.yaml %s/s0 %s/s2 --policies gts:jit,zeus:jit"
                           ARGS " --out %s/m >/dev/null 2>%s/e.txt", tmp, tmp, tmp, tmp, tmp), 2);
    char *e0 = slurp(tp("e.txt")), *e = e0;
    /* after the plan's notes (b0 capped for librispeech), the error: one line */
    while (!strncmp(e, "wattsim: note: ", 15) && strchr(e, '\n')) e = strchr(e, '\n') + 1;
    cr_expect_not_null(strstr(e, "simulations are in none of the 2 journals"), "%s", e);
    cr_expect_eq(strchr(e, '\n') - e + 1, (long)strlen(e), "one line: %s", e);
    free(e0);
    cr_expect_eq(file_size(tp("m/sweep.csv")), -1);
    /* Merging with other policies than the shards ran: refused, with
     * advice for merge (not --resume/--force, which merge does not take). */
    cr_expect_eq(run_shell(CLI " merge sweep %s/g.yaml %s/s0 %s/s1 %s/s2 --policies zeus:jit"
                           ARGS " --out %s/m >/dev/null 2>%s/e.txt", tmp, tmp, tmp, tmp, tmp,
                           tmp), 2);
    e = slurp(tp("e.txt"));
    cr_expect_not_null(strstr(e, "s0/sweep.journal: cannot merge this shard: the policy pairs"
                                 " changed (gts+jit, zeus+jit, default+default, oracle+oracle in"
                                 " the shard's journal; zeus+jit, default+default, oracle+oracle"
                                 " now); merge with the config, --policies, traces and plugin"
                                 " files the shards ran with\n"), "%s", e);
    cr_expect_null(strstr(e, "--resume"), "%s", e);
    free(e);
    /* A shard given twice: refused. */
    cr_expect_eq(run_shell(CLI " merge sweep %s/g.yaml %s/s0 %s/s1 %s/s1 %s/s2 --policies"
                           " gts:jit,zeus:jit" ARGS " --out %s/m >/dev/null 2>%s/e.txt", tmp,
                           tmp, tmp, tmp, tmp, tmp, tmp), 2);
    e = slurp(tp("e.txt"));
    cr_expect_not_null(strstr(e, "is recorded twice"), "%s", e);
    free(e);
    /* All three: the bytes of the single run, exit status 1 as it had. */
    cr_assert_eq(run_shell(CLI " merge sweep %s/g.yaml %s/s0 %s/s1 %s/s2 --policies"
                           " gts:jit,zeus:jit" ARGS " --out %s/m >%s/o.txt 2>/dev/null", tmp,
                           tmp, tmp, tmp, tmp, tmp), 1);
    char *o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "48 simulations (from 3 shard journals), 8 cells"), "%s", o);
    free(o);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.csv"};
    tmpdir_expect_same_files("one", "m", files, 4);
}

/* Does folder `dir` of tmp hold a file whose name has "journal" in it? */
static int has_journal(const char *dir)
{
    DIR *d = opendir(tp(dir));
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));) found |= strstr(e->d_name, "journal") != NULL;
    if (d) closedir(d);
    return found;
}

/* Journals of an interrupted mpirun with 2 ranks (sweep.journal.K-of-2,
 * made here with --shard K/2) in a folder: a plain sweep refuses to start
 * over them silently, --resume reuses every one of their simulations and
 * removes them, --force removes them. (MPI builds: test_mpi.c resumes
 * them with another number of ranks.) */
Test(shard, resume_reuses_the_journals_of_another_sharding, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    write_file("c.yaml", "gpu: v100\nworkload: [squad, cifar100]\neta: 0.5\nbeta: 2\n"
                         "seed: 1..4\nrecurrences: 25\nbso: zeus\nplo: jit\n");
    cr_assert_eq(run_shell(CLI " sweep %s/c.yaml" ARGS " --out %s/one >/dev/null 2>&1", tmp,
                           tmp), 0);
    for (int k = 0; k < 2; k++)
        cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --shard %d/2" ARGS " --out %s/s%d"
                               " >/dev/null 2>&1 && mkdir -p %s/m %s/f && cp %s/s%d/sweep.journal"
                               " %s/m/sweep.journal.%d-of-2 && cp %s/s%d/sweep.journal"
                               " %s/f/sweep.journal.%d-of-2", tmp, k, tmp, k, tmp, tmp, tmp, k,
                               tmp, k, tmp, k, tmp, k), 0);
    cr_expect_eq(run_shell(CLI " sweep %s/c.yaml" ARGS " --out %s/m >/dev/null 2>%s/e.txt", tmp,
                           tmp, tmp), 2);
    char *e = slurp(tp("e.txt")), want[900];
    snprintf(want, sizeof want, "wattsim: %s/m/sweep.journal.0-of-2 (and 1 more): an interrupted"
             " sweep left this journal; pass --resume to continue it or --force to start over\n",
             tmp);
    cr_expect_str_eq(e, want);
    free(e);
    cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --resume" ARGS " --out %s/m >%s/o.txt 2>&1", tmp,
                           tmp, tmp), 0);
    char *o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "24 simulations (24 from the journal), 6 cells"), "%s", o);
    free(o);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md", "savings.csv"};
    tmpdir_expect_same_files("one", "m", files, 4);
    cr_expect(!has_journal("m"), "a journal is left");
    cr_assert_eq(run_shell(CLI " sweep %s/c.yaml --force" ARGS " --out %s/f >%s/o.txt 2>&1", tmp,
                           tmp, tmp), 0);
    o = slurp(tp("o.txt"));
    cr_expect_not_null(strstr(o, "24 simulations, 6 cells"), "--force reused: %s", o);
    free(o);
    cr_expect(!has_journal("f"), "a journal is left");
}

Test(shard, curves_merge_too, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..5\n"
                         "recurrences: 25\nbso: zeus\nplo: jit\n");
    cr_assert_eq(run_shell(CLI " curves %s/c.yaml" ARGS " --out %s/one >/dev/null 2>&1", tmp,
                           tmp), 0);
    for (int k = 0; k < 2; k++)
        cr_assert_eq(run_shell(CLI " curves %s/c.yaml --shard %d/2" ARGS " --out %s/s%d"
                               " >/dev/null 2>&1", tmp, k, tmp, k), 0);
    cr_assert_eq(run_shell(CLI " merge curves %s/c.yaml %s/s0 %s/s1" ARGS " --out %s/m"
                           " >/dev/null 2>&1", tmp, tmp, tmp, tmp), 0);
    const char *files[] = {"curves.csv"};
    tmpdir_expect_same_files("one", "m", files, 1);
}

/* ------------------------------------------------------------ memory */

/* Peak RSS (KiB) of `wattsim sweep` on c.yaml with `recurrences` set. */
static long sweep_peak_kib(long recurrences)
{
    char rec[64], cfg[600], out[600];
    snprintf(rec, sizeof rec, "recurrences=%ld", recurrences);
    snprintf(cfg, sizeof cfg, "%s/m.yaml", tmp);
    snprintf(out, sizeof out, "%s/m%ld", tmp, recurrences);
    char *const argv[] = {CLI, "sweep", cfg, "--set", rec, "--threads", "1",
                          "--traces", TRACES, "--catalogue", CATALOGUE, "--no-plot",
                          "--out", out, NULL};
    return tmpdir_peak_kib(argv, NULL);
}

Test(memory, a_sweep_does_not_grow_with_recurrences, .init = mktmp, .fini = rmtmp,
     .timeout = 600)
{
    /* 300 simulations. Keeping every recurrence (three doubles each) took
     * 300 x 20,000 x 24 bytes = 137 MiB more at 20,000 recurrences than at
     * 20; aggregated as they run, the two peaks are a few MiB apart. */
    write_file("m.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1..100\n"
                         "bso: zeus\nplo: jit\n");
    /* zeus keeps each simulation's rewards (numpy's variance needs them),
     * freed with it; under ASan freed memory would wait in a quarantine
     * and count. */
    cli_no_asan_quarantine();
    long small = sweep_peak_kib(20), big = sweep_peak_kib(20000);
    cr_expect_lt(big - small, 8 * 1024, "peak RSS %ld KiB at 20 recurrences, %ld KiB at 20,000",
                 small, big);
}

/* The header's readable parts end up in an error line on a terminal: a
 * journal carrying a control character (an escape sequence) in a part is
 * damaged, not echoed. A part encoded as the writer does decodes back. */
Test(journal, parts_with_control_characters_are_damaged)
{
    struct ws_sweep_fp_part part = {.what = "the eta values", .value = "0.5,1"};
    ws_sweep_fp fp = {.n = 1, .part = &part}, back;
    char *buf;
    size_t len;
    cr_assert_eq(ws_sweep_fp_encode(&fp, &buf, &len), 0);
    cr_assert_eq(ws_sweep_fp_decode(buf, len, &back), 0);
    cr_assert_eq(back.n, 1u);
    cr_assert_str_eq(back.part[0].what, "the eta values");
    cr_assert_str_eq(back.part[0].value, "0.5,1");
    ws_sweep_fp_free(&back);
    free(buf);
    const char *bad[] = {"\x1b[31mred", "tab\there", "del\x7f", "cr\r"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(part.value, sizeof part.value, "%s", bad[i]);
        cr_assert_eq(ws_sweep_fp_encode(&fp, &buf, &len), 0);
        cr_expect_eq(ws_sweep_fp_decode(buf, len, &back), -1, "value %zu decoded", i);
        free(buf);
    }
}
