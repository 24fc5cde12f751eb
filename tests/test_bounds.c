/*
 * Numbers judged before use and outputs that never hold inf or nan (issue
 * 18, items 9, 12, 13, 16), checked against hand-computed values:
 *  - an axis never meets log10(0): its ends stay finite and above 0 for
 *    any data (main's log_tics took log10(0), undefined behaviour);
 *  - an epoch's energy is integrated over its own samples: a reading of
 *    9999 W 3e4 years before it (a prefix sum of 5e15 J) changes nothing,
 *    to the last bits of an independent trapezoid;
 *  - a saving against a default whose cost is 0 (a carbon objective over a
 *    zero-carbon stretch) is "-" in sweep.md, not "nan %";
 *  - a writer that meets an infinity fails the output's commit and the
 *    command, naming the file;
 *  - a .csv.gz of one row repeated fails on its third line in a few MB,
 *    not after storing every row (peak RSS of the child, from wait4).
 * The bad-input catalogue holds the refusals themselves (csv_time_tiny,
 * import_nvsmi_absurd_reading, whatif_price_tiny, whatif_carbon_fifo, ...).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zlib.h>

#include "run_cli.h"
#include "tmpdir.h"
#include "wattsim/import.h"
#include "wattsim/outfile.h"
#include "wattsim/plot.h"
#include "wattsim/report.h"
#include "wattsim/json_writer.h"

#define FIXTURE WS_SOURCE_DIR "/tests/data/bad/_fixture"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-bounds-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* Fixture files into tmp (in C: a `cp` would run under valgrind too, and
 * report its own leaks). */
static void copy_fixture(const char *const *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char from[600];
        size_t len;
        snprintf(from, sizeof from, "%s/%s", FIXTURE, files[i]);
        FILE *f = fopen(from, "rb");
        cr_assert(f, "%s", from);
        char *text = cli_slurp(f, &len);
        fclose(f);
        write_file(files[i], text);
        free(text);
    }
}

/* Axes of any data (wattsim/plot.h): ends finite, the log axis' above 0,
 * at least two ticks, whatever the data -- 0 (an ETA that underflowed),
 * a subnormal, a range of 600 decades, a span that overflows a double. */
static void expect_sane(const ws_plot_axis *a, const char *what)
{
    cr_expect(isfinite(a->lo) && isfinite(a->hi) && a->hi > a->lo, "%s: [%g, %g]", what,
              a->lo, a->hi);
    if (a->log) cr_expect_gt(a->lo, 0, "%s: log axis from %g", what, a->lo);
    cr_expect(a->n >= 2 && a->n <= WS_PLOT_MAX_TICKS, "%s: %zu ticks", what, a->n);
}

Test(bounds, axes_of_absurd_data_stay_finite, .timeout = 10)
{
    const ws_plot_axis_opts o = {.len = 200, .font = 7, .pad0 = 6, .pad1 = 6,
                                 .min_span = WS_PLOT_MIN_SPAN};
    ws_plot_axis a;
    ws_plot_axis_log(&a, 0, 100, &o);
    expect_sane(&a, "log from 0");
    ws_plot_axis_log(&a, 1e-320, 1e300, &o);
    expect_sane(&a, "log over 620 decades");
    ws_plot_axis_log(&a, 1e-3, 7e21, &o);              /* the bounds' extremes */
    expect_sane(&a, "log over the bounded ETAs");
    /* a range a double holds, but not once padded, or whose ends' product
     * over- or underflows: ticks stepped forever past the array before */
    ws_plot_axis_log(&a, 1e-320, 1e-300, &o);
    expect_sane(&a, "log of subnormals");
    ws_plot_axis_log(&a, 1e200, 1e300, &o);
    expect_sane(&a, "log near the top of a double");
    ws_plot_axis_log(&a, 1e-200, 1e100, &o);
    expect_sane(&a, "log over 300 decades");
    ws_plot_axis_linear(&a, 0, 0, &o);
    expect_sane(&a, "linear at 0");
    ws_plot_axis_linear(&a, -1e308, 1e308, &o);
    expect_sane(&a, "linear over an overflowing span");
    ws_plot_axis_linear(&a, 4e-324, 1e-320, &o);
    expect_sane(&a, "linear over subnormals");
    ws_plot_axis_linear(&a, 1e300, 1.7e308, &o);
    expect_sane(&a, "linear near the top of a double");
    ws_plot_axis_linear(&a, 1e-320, 1e-300, &o);
    expect_sane(&a, "linear from a subnormal");
    /* an ordinary range is untouched by the guards: 1 to 100, log */
    ws_plot_axis_log(&a, 1, 100, &o);
    expect_sane(&a, "log 1..100");
    cr_expect_lt(a.lo, 1);
    cr_expect_gt(a.hi, 100);
}

/* The trapezoid over samples (t[i], p[i]) clipped to [a, b], written out
 * independently of the importer: the signal is linear between samples. */
static double trapezoid(const double *t, const double *p, int n, double a, double b)
{
    double e = 0;
    for (int i = 1; i < n; i++) {
        double lo = fmax(t[i - 1], a), hi = fmin(t[i], b);
        if (!(hi > lo)) continue;
        double slope = (p[i] - p[i - 1]) / (t[i] - t[i - 1]);
        double plo = p[i - 1] + slope * (lo - t[i - 1]), phi = p[i - 1] + slope * (hi - t[i - 1]);
        e += (hi - lo) * (plo + phi) / 2;
    }
    return e;
}

Test(bounds, window_energy_ignores_huge_readings_far_away)
{
    /* 9999 W at t = 0, then 1e12 s later a ramp sampled every second:
     * a prefix sum reaches 5e15 J before the epochs, whose energies are a
     * few hundred joules (ulp(5e15) = 1 J). */
    enum { N = 40 };
    double t[N], p[N];
    t[0] = 0;
    p[0] = 9999;
    for (int i = 1; i < N; i++) {
        t[i] = 1e12 + (i - 1);
        p[i] = 50 + 3.25 * (i % 7);
    }
    ws_telemetry tel = {0};
    ws_warnings w = {0};
    ws_error err = {{0}};
    tel.kind = WS_TEL_POWER;
    tel.path = strdup("log");
    for (int i = 0; i < N; i++)
        cr_assert_eq(ws_telemetry_add(&tel, "0", t[i], p[i], i + 2, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_telemetry_prepare(&tel, &w, &err), 0, "%s", err.msg);
    const double win[][2] = {{1e12 + 2, 1e12 + 12}, {1e12 + 2.25, 1e12 + 2.75},
                             {1e12 + 0.5, 1e12 + 37.5}, {1e12 + 30, 1e12 + 31}};
    for (size_t k = 0; k < sizeof win / sizeof *win; k++) {
        double gap;
        long line;
        double got = ws_tel_energy(&tel.gpu[0], WS_TEL_POWER, win[k][0], win[k][1], &gap,
                                   &line);
        double want = trapezoid(t, p, N, win[k][0], win[k][1]);
        cr_expect(fabs(got - want) <= 1e-12 * want, "window %zu: %.17g J, trapezoid %.17g J",
                  k, got, want);
        cr_expect_eq(gap, 1.0, "window %zu: gap %g", k, gap);
    }
    ws_telemetry_free(&tel);
    ws_warnings_free(&w);
}

Test(bounds, sweep_md_saving_against_zero_cost_is_a_dash, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    /* Carbon 0 for a year (the whole study), then 400 g/kWh for an hour:
     * the series' mean is above 0, so the carbon objective is allowed;
     * with eta = 1 every run's cost is 0, default's included, and a cost
     * saving against it is undefined. (Seeds whose first recurrence at b0
     * reaches the target on this tiny fixture.) */
    copy_fixture((const char *[]){"summary_power_g1.csv", "summary_train.csv",
                                  "workloads.yaml"}, 3);
    write_file("carbon.csv", "timestamp,duration,value\n2022-10-20T00:00:00Z,525600,0\n"
                             "2023-10-20T00:00:00Z,60,400\n");
    write_file("sw.yaml", "gpu: g1\nworkload: w\neta: 1\nbeta: 2\nseed: [1, 6, 9]\n"
                          "recurrences: 20\ncarbon: carbon.csv\nobjective: carbon\n");
    cr_assert_eq(run_shell("cd %s && " WS_CLI " sweep sw.yaml --traces . --catalogue"
                           " workloads.yaml --policies zeus:jit --no-plot --out o --quiet"
                           " > /dev/null", tmp), 0);
    char *md = NULL;
    size_t n = 0;
    FILE *f = fopen(tp("o/sweep.md"), "r");
    cr_assert(f);
    md = cli_slurp(f, &n);
    fclose(f);
    cr_expect(!strstr(md, "nan") && !strstr(md, "inf"), "%s", md);
    /* zeus+jit's row: ETA and TTA savings are numbers, the cost saving "-" */
    const char *row = strstr(md, "| zeus+jit | g1 | w | 1 | 2 | ");
    cr_assert(row, "%s", md);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row, "\n"), row);
    int bars = 0;
    const char *cell = line;
    for (const char *p = line; *p && bars < 12; p++)
        if (*p == '|' && ++bars == 11) cell = p + 1;       /* the cost saving */
    cr_expect(!strncmp(cell, " - |", 4), "cost saving cell: %s", line);
    cr_expect(strstr(line, " % | "), "no saving in percent: %s", line);
    free(md);
    /* sweep.csv: the undefined saving is an empty field */
    f = fopen(tp("o/sweep.csv"), "r");
    cr_assert(f);
    char *csv = cli_slurp(f, &n);
    fclose(f);
    cr_expect(!strstr(csv, "nan") && !strstr(csv, "inf"), "%s", csv);
    free(csv);
}

Test(bounds, an_infinity_met_by_a_writer_fails_the_output, .init = mktmp, .fini = rmtmp)
{
    /* What a bug would do: the file is not put in place, the message
     * names it, and later outputs are refused too (the record sticks). */
    ws_outfile o;
    ws_error err = {{0}};
    cr_assert_eq(ws_outfile_open(&o, tp("a.csv"), &err), 0, "%s", err.msg);
    fputs("x,y\n1,", o.f);
    ws_csv_num(o.f, 2.5);
    fputs("\n2,", o.f);
    ws_csv_num(o.f, INFINITY);
    fputc('\n', o.f);
    cr_expect_neq(ws_outfile_commit(&o, &err), 0);
    cr_expect(strstr(err.msg, "internal error: ") && strstr(err.msg, "/a.csv: a computed number"
                                                             " is inf"), "%s", err.msg);
    cr_expect(access(tp("a.csv"), F_OK) != 0, "a.csv was put in place");
    /* NAN is undefined by design: an empty field, no failure by itself */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    ws_csv_num(m, NAN);
    ws_jw_write_number(m, NAN);
    fclose(m);
    cr_expect_str_eq(buf, "null");
    free(buf);
}

/* Peak RSS (KiB) and exit status of `wattsim ARGS` run in tmp. */
static long child_rss(const char *const *argv, int *status)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (chdir(tmp) != 0) _exit(126);
        FILE *dn = freopen("/dev/null", "w", stdout);
        FILE *de = freopen("/dev/null", "w", stderr);
        (void)dn;
        (void)de;
        execv(WS_CLI, (char *const *)argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return ru.ru_maxrss;
}

/* `head` then `row` repeated to `bytes` bytes, gzip -1, into tmp/name. */
static void repeated_gz(const char *name, const char *head, const char *row, long bytes)
{
    gzFile g = gzopen(tp(name), "wb1");
    cr_assert(g);
    cr_assert_eq(gzputs(g, head), (int)strlen(head));
    static char block[1 << 16];
    size_t rl = strlen(row), per = sizeof block / rl;
    for (size_t i = 0; i < per; i++) memcpy(block + i * rl, row, rl);
    for (long done = 0; done < bytes; done += (long)(per * rl))
        cr_assert_eq(gzwrite(g, block, (unsigned)(per * rl)), (int)(per * rl));
    cr_assert_eq(gzclose(g), Z_OK);
}

Test(bounds, repeated_rows_of_a_gz_fail_early_in_little_memory, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    /* 300 MB of one train row once decompressed (about 1 MB compressed):
     * stored as rows, they took over 700 MB before the duplicate was
     * found; refused as read, the reader needs its buffers only. */
    /* valgrind's own memory would be measured too, and slowly */
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) cr_skip_test("under valgrind");
    copy_fixture((const char *[]){"summary_power_g1.csv", "workloads.yaml"}, 2);
    repeated_gz("summary_train.csv.gz",
                "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,"
                "target_epoch\n", "d,n,8,o,0.1,0,0.9,5\n", 300L << 20);
    int st;
    long rss = child_rss((const char *[]){"wattsim", "pareto", "--traces", ".", "--catalogue",
                                          "workloads.yaml", "--gpu", "g1", "--workload", "w",
                                          NULL}, &st);
    cr_expect_eq(st, 2);
    cr_expect_lt(rss, 150L * 1024, "peak RSS %ld KiB", rss);
    cr_log_info("repeated train rows: peak RSS %ld KiB", rss);
    /* An nvidia-smi log of one reading repeated: repeats are counted, not
     * stored; the log then has one sample time, refused at its end. */
    repeated_gz("nv.csv.gz", "timestamp, index, power.draw [W]\n",
                "2026/01/15 00:00:00.000, 0, 100.00 W\n", 40L << 20);
    write_file("epochs.csv", "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
                             "d,n,o,8,100,1,2026-01-15T00:00:00,2026-01-15T00:00:01\n");
    rss = child_rss((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g2",
                                     "--epochs", "epochs.csv", "--nvidia-smi", "nv.csv.gz",
                                     "--out", "out", NULL}, &st);
    cr_expect_eq(st, 2);
    cr_expect_lt(rss, 150L * 1024, "peak RSS %ld KiB", rss);
    cr_log_info("repeated nvidia-smi readings: peak RSS %ld KiB", rss);
}
