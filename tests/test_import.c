/*
 * `wattsim trace import power|train`, `trace check` and `--job`, through
 * the real CLI, on logs written here in the formats the tools print.
 *
 * The reference signal S (one GPU, a sample every second, t = 0..20 s):
 *   p(t) = 100 W for t <= 4, linear from 100 to 200 W over [4, 6], 200 W
 *   up to t = 10, then the mirror image: p(t) = p(20 - t) for t >= 10.
 * The samples lie on the knots, so the trapezoid is the exact integral:
 *   epoch [4.5, 8]: ramp 4.5..6 (125 -> 200 W) = 243.75 J, + 200 * 2 = 643.75 J
 *   epoch [1, 2.5]: 100 * 1.5 = 150 J
 *   => knob (bs 8, 100 W): time_per_epoch = (3.5 + 1.5) / 2 = 2.5 s,
 *      average_power = 793.75 J / 5 s = 158.75 W
 *   epoch [10, 20], the mirror of [0, 10]: 800 + 300 + 400 = 1500 J
 *   => knob (bs 8, 150 W): 10 s, 150 W
 * (Epochs never overlap: on the same GPUs that would count joules twice.)
 */
#include <math.h>
#include <sys/stat.h>

#include "run_cli.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"

TestSuite(import, .init = NULL, .fini = NULL);

static void setup(void) { tmpdir_make("/tmp/ws-import.XXXXXX"); }
static void teardown(void) { tmpdir_remove(); }

static double sig_s(double t)
{
    if (t > 10) t = 20 - t;
    if (t <= 4) return 100;
    if (t >= 6) return 200;
    return 100 + 50 * (t - 4);
}

static const char *EPOCHS =
    "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
    "d,n,o,8,200,1,2026-01-15T00:00:04.500,2026-01-15T00:00:08\n"
    "d,n,o,8,200,2,2026-01-15T00:00:01,2026-01-15T00:00:02.5\n"
    "d,n,o,8,250,1,2026-01-15T00:00:10,2026-01-15T00:00:20\n";

/* Append one nvidia-smi row (t seconds after 2026/01/15 00:00:00). */
static void nv_row(char *buf, size_t size, double t, int gpu, const char *value)
{
    size_t n = strlen(buf);
    int ms = (int)lround(t * 1000);
    snprintf(buf + n, size - n, "2026/01/15 %02d:%02d:%02d.%03d, %d, %s\n", ms / 3600000,
             ms / 60000 % 60, ms / 1000 % 60, ms % 1000, gpu, value);
}

/* S on GPU 0 (and 50 W on GPU 1 when two), with the power limit of the
 * epochs of EPOCHS (200 W before t = 10 s, 250 W from then); skip: sample
 * times to leave out (-1: none), and their mirror images (20 - t). */
static void nv_log(const char *name, int two, double skip_from, double skip_to)
{
    static char buf[1 << 16];
    strcpy(buf, "timestamp, index, power.draw [W], power.limit [W]\n");
    for (int t = 0; t <= 20; t++) {
        char v[64];
        if (!(t >= skip_from && t <= skip_to) && !(20 - t >= skip_from && 20 - t <= skip_to)) {
            snprintf(v, sizeof v, "%.2f W, %d.00 W", sig_s(t), t < 10 ? 200 : 250);
            nv_row(buf, sizeof buf, t, 0, v);
        }
        if (two)
            nv_row(buf, sizeof buf, t, 1, t == 5 ? "[N/A], 200.00 W" : t < 10 ? "50.00 W, 200.00 W"
                                                                              : "50.00 W, 250.00 W");
    }
    write_file(name, buf);
}

static cli_result import_power(const char *log_opt, const char *log, const char *extra1,
                               const char *extra2)
{
    char epochs[512], logp[512], out[512];
    snprintf(epochs, sizeof epochs, "%s/epochs.csv", tmp);
    snprintf(logp, sizeof logp, "%s/%s", tmp, log);
    snprintf(out, sizeof out, "%s/traces", tmp);
    return cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g",
                                    "--epochs", epochs, log_opt, logp, "--out", out,
                                    extra1, extra2, NULL});
}

/* gpus_per_job of the last row power_row() found. */
static int row_gpus;

/* time_per_epoch and average_power of (bs, pl) in traces/summary_power_g.csv. */
static void power_row(int bs, int pl, double *time, double *power)
{
    FILE *f = fopen(tp("traces/summary_power_g.csv"), "r");
    cr_assert(f, "no summary_power_g.csv");
    char line[512];
    cr_assert(fgets(line, sizeof line, f));
    cr_expect_str_eq(line, "dataset,network,batch_size,optimizer,power_limit,"
                           "time_per_epoch,average_power,energy_error,gpus_per_job\n");
    *time = *power = NAN;
    row_gpus = 0;
    while (fgets(line, sizeof line, f)) {
        int b, p, g;
        double t, w, e;
        if (sscanf(line, "d,n,%d,o,%d,%lf,%lf,%lf,%d", &b, &p, &t, &w, &e, &g) == 6 && b == bs
            && p == pl) {
            *time = t;
            *power = w;
            row_gpus = g;
        }
    }
    fclose(f);
}

/* energy_error of (bs, pl) in traces/summary_power_g.csv (NAN: no row). */
static double knob_error(int bs, int pl)
{
    FILE *f = fopen(tp("traces/summary_power_g.csv"), "r");
    cr_assert(f, "no summary_power_g.csv");
    char line[512];
    double e = NAN;
    while (fgets(line, sizeof line, f)) {
        int b, p;
        double t, w, x;
        if (sscanf(line, "d,n,%d,o,%d,%lf,%lf,%lf", &b, &p, &t, &w, &x) == 5 && b == bs
            && p == pl)
            e = x;
    }
    fclose(f);
    return e;
}

static void expect_knob(int bs, int pl, double time, double power)
{
    double t, w;
    power_row(bs, pl, &t, &w);
    cr_expect(fabs(t - time) < 1e-9 * time, "bs %d pl %d: time %.17g, want %.17g", bs, pl, t, time);
    cr_expect(fabs(w - power) < 1e-9 * power, "bs %d pl %d: power %.17g, want %.17g", bs, pl, w,
              power);
}

static void expect_fail(cli_result *r, const char *msg)
{
    cr_expect_eq(r->status, 2, "exit %d: %s", r->status, r->err);
    cr_expect_eq(r->out_len, 0, "stdout: %s", r->out);
    cr_expect_eq(cli_lines(r->err), 1, "one line: %s", r->err);
    cr_expect(strstr(r->err, msg), "stderr lacks \"%s\": %s", msg, r->err);
    cli_free(r);
}

Test(import, nvsmi_trapezoid_clipped_to_epochs, .init = setup, .fini = teardown)
{
    write_file("epochs.csv", EPOCHS);
    nv_log("nv.csv", 0, -1, -1);
    cli_result r = import_power("--nvidia-smi", "nv.csv", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "2 knobs (1 batch size, 2 power limits) from 3 epochs"), "%s", r.out);
    /* The error estimate: |E - E'|, E' from every other sample. Knob 200 W:
     * the even samples (4, 6, 8) trace S exactly; the odd ones (3: 100,
     * 5: 150, 7: 200) give [4.5, 5] 0.5 * (137.5 + 150) / 2 = 71.875 J,
     * [5, 7] 350 J and [7, 8] 200 J: 621.875 J for [4.5, 8], 21.875 J
     * short of 643.75; [1, 2.5] is flat. 21.875 / 793.75 = 2.756 %.
     * Knob 250 W: the even samples trace S; the odd ones end at 19 < 20. */
    cr_expect(strstr(r.err, "epochs.csv:2: the energy of 1 of 2 knobs may be off by more than"
                            " 1 % (samples every 1 s against epochs of 2.5 s), worst batch_size"
                            " 8 at 200 W: up to 2.76 %; sample more often, or measure longer"
                            " epochs"), "%s", r.err);
    cr_expect_eq(cli_lines(r.err), 1, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    expect_knob(8, 250, 10, 150);
    cr_expect(fabs(knob_error(8, 200) - 21.875 / 793.75) < 1e-6, "%.17g", knob_error(8, 200));
    cr_expect_eq(knob_error(8, 250), 0);
}

Test(import, nvsmi_two_gpus_summed_with_na, .init = setup, .fini = teardown)
{
    write_file("epochs.csv", EPOCHS);
    nv_log("nv.csv", 1, -1, -1);
    cli_result r = import_power("--nvidia-smi", "nv.csv", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "warning: ") && strstr(r.err, "1 reading without a power value"),
              "%s", r.err);
    cli_free(&r);
    /* GPU 1 draws 50 W throughout; its [N/A] at t = 5 is interpolated.
     * The rows sum two GPUs: gpus_per_job 2. */
    expect_knob(8, 200, 2.5, 208.75);
    cr_expect_eq(row_gpus, 2);
    expect_knob(8, 250, 10, 200);
    /* an existing trace is not replaced without --force */
    r = import_power("--nvidia-smi", "nv.csv", "--gpus", "0");
    expect_fail(&r, "summary_power_g.csv: exists; pass --force to replace it, or write elsewhere");
    expect_knob(8, 200, 2.5, 208.75);
    char epochs[512], log[512], out[512];
    snprintf(epochs, sizeof epochs, "%s/epochs.csv", tmp);
    snprintf(log, sizeof log, "%s/nv.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--nvidia-smi", log, "--out", out, "--gpus", "0",
                                 "--force", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    cr_expect_eq(row_gpus, 1, "--gpus 0: one GPU");
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--nvidia-smi", log, "--out", out, "--gpus", "0,3",
                                 "--force", NULL});
    expect_fail(&r, "--gpus: ");
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--nvidia-smi", log, "--out", out, "--gpus", "0,3",
                                 "--force", NULL});
    cr_expect(strstr(r.err, "no samples of GPU '3' (it has 0, 1)"), "%s", r.err);
    cli_free(&r);
}

Test(import, nvsmi_unsorted_and_repeated_rows, .init = setup, .fini = teardown)
{
    write_file("epochs.csv", EPOCHS);
    nv_log("nv.csv", 0, -1, -1);
    /* reverse the data rows, and repeat one */
    cr_assert_eq(run_shell("cd %s && (head -1 nv.csv; tail -n +2 nv.csv | tac; sed -n 4p nv.csv)"
                           " > rev.csv", tmp), 0);
    cli_result r = import_power("--nvidia-smi", "rev.csv", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "out of time order"), "%s", r.err);
    cr_expect(strstr(r.err, "1 repeated sample of GPU 0"), "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    expect_knob(8, 250, 10, 150);
    /* the same instant with another reading: line 6 (t = 3; after it, not
     * at the end of the log: that would be a clock going back 17 s) */
    cr_assert_eq(run_shell("cd %s && sed '5a 2026/01/15 00:00:03.000, 0, 99.00 W, 200.00 W'"
                           " nv.csv > dup.csv", tmp), 0);
    r = import_power("--nvidia-smi", "dup.csv", "--force", NULL);
    expect_fail(&r, "dup.csv:6: GPU 0 has two different readings (99 and 100) at the same time");
}

Test(import, nvsmi_gaps, .init = setup, .fini = teardown)
{
    write_file("epochs.csv", EPOCHS);
    nv_log("gap3.csv", 0, 5, 7);                  /* 3 s without samples: fine */
    cli_result r = import_power("--nvidia-smi", "gap3.csv", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    /* [4, 8] now one straight segment 100 -> 200 W (and its mirror [12, 16]):
     * [10, 20] = 400 + 600 + 400 */
    expect_knob(8, 250, 10, 140);
    nv_log("gap.csv", 0, 1, 7);           /* samples 0, 8-12, 20: two 8 s gaps */
    r = import_power("--nvidia-smi", "gap.csv", "--force", NULL);
    expect_fail(&r, "gap.csv:3: GPU 0 has no sample for 8 s before this one, more than 5 sample"
                    " intervals (1 s), during the epoch at ");
    char epochs[512], log[512], out[512];
    snprintf(epochs, sizeof epochs, "%s/epochs.csv", tmp);
    snprintf(log, sizeof log, "%s/gap.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--nvidia-smi", log, "--out", out, "--max-gap", "10",
                                 "--force", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    /* [10, 20]: 200 W to 12, then straight to (20, 100): 400 + 1200 J over 10 s */
    expect_knob(8, 250, 10, 160);
}

Test(import, clock_skewed_epochs, .init = setup, .fini = teardown)
{
    /* The log's clock is UTC+02:00; the epochs are instants (Z). */
    write_file("epochs.csv",
               "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
               "d,n,o,8,200,1,2026-01-14T22:00:04.5Z,2026-01-14T22:00:08Z\n"
               "d,n,o,8,200,2,2026-01-15T00:00:01+02:00,2026-01-15T00:00:02.5+0200\n"
               "d,n,o,8,250,1,1768428010,1768428020\n");
    nv_log("nv.csv", 0, -1, -1);
    cli_result r = import_power("--nvidia-smi", "nv.csv", NULL, NULL);
    expect_fail(&r, "epochs.csv:2: epoch 1 (2026-01-14 22:00:04.500 to 2026-01-14 22:00:08.000)"
                    " is not covered by the samples of GPU 0");
    r = import_power("--nvidia-smi", "nv.csv", "--log-tz", "+02:00");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    expect_knob(8, 250, 10, 150);
}

Test(import, nvsmi_truncated_and_noheader, .init = setup, .fini = teardown)
{
    write_file("epochs.csv", EPOCHS);
    nv_log("nv.csv", 0, -1, -1);
    cr_assert_eq(run_shell("cd %s && (cat nv.csv; printf '2026/01/15 00:00:1') > cut.csv &&"
                           " (cat nv.csv; printf '2026/01/15 00:0, 0, 100 W, 250 W\\n') > cut2.csv",
                           tmp), 0);
    /* a logger stopped mid-write: the last line is skipped, with a warning */
    cli_result r = import_power("--nvidia-smi", "cut.csv", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "cut.csv:23: the last line is incomplete (the logger stopped"
                            " mid-write?); skipped"), "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    r = import_power("--nvidia-smi", "cut2.csv", "--force", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "cut2.csv:23: the last line is incomplete"), "%s", r.err);
    cli_free(&r);
    /* Cut inside its value, the last line still parses ("100.00" cut to
     * "1", nounits): without its line end it is skipped all the same,
     * never read as 1 W at t = 20 s. The log then ends at 19 s, inside
     * the epoch [10, 20]: no clock zone would help, and none is named. */
    cr_assert_eq(run_shell("cd %s && tail -n +2 nv.csv | sed 's/ W, [0-9.]* W$//' | head -c -6"
                           " > cutval.csv && tail -c 4 cutval.csv | grep -q ', 1$'", tmp), 0);
    r = import_power("--nvidia-smi", "cutval.csv", "--force", NULL);
    expect_fail(&r, "epochs.csv:4: epoch 1 (2026-01-15 00:00:10.000 to 2026-01-15 00:00:20.000)"
                    " is not covered by the samples of GPU 0 in ");
    r = import_power("--nvidia-smi", "cutval.csv", "--force", NULL);
    cr_expect(strstr(r.err, "cutval.csv (2026-01-15 00:00:00.000 to 2026-01-15 00:00:19.000);"
                            " the log ends 1 s before the epoch ends: it does not cover the whole"
                            " epoch\n"), "%s", r.err);
    cli_free(&r);
    /* anywhere but last, a malformed line is an error */
    cr_assert_eq(run_shell("cd %s && (head -5 nv.csv; printf '2026/01/15 00:00:1\n';"
                           " tail -n +6 nv.csv) > mid.csv", tmp), 0);
    r = import_power("--nvidia-smi", "mid.csv", "--force", NULL);
    expect_fail(&r, "mid.csv:6: 1 field, but the header has 4 (a truncated line?)");
    /* a ZeusMonitor log cut short too */
    write_file("epochs.csv", "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
                             "d,n,o,8,200,1,1768435200,1768435210\n");
    write_file("zeus.csv", "start_time,window_name,elapsed_time,gpu0_energy\n"
                           "1768435200,epoch,10,1500\n1768435220,epo");
    r = import_power("--zeus-monitor", "zeus.csv", "--force", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "zeus.csv:3: the last line is incomplete"), "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 10, 150);
    /* Cut inside the energy of a window an epoch needs ("1200" to "12"),
     * the line still has its fields: skipped without its line end, so the
     * second epoch has no window, rather than 12 J over 10 s. */
    write_file("epochs.csv", "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
                             "d,n,o,8,200,1,1768435200,1768435210\n"
                             "d,n,o,8,200,2,1768435220,1768435230\n");
    write_file("zeus.csv", "start_time,window_name,elapsed_time,gpu0_energy\n"
                           "1768435200,epoch,10,1500\n1768435220,epoch,10,12");
    r = import_power("--zeus-monitor", "zeus.csv", "--force", NULL);
    expect_fail(&r, "epochs.csv:3: no window named 'epoch' in ");
    write_file("epochs.csv", EPOCHS);
    /* --format=csv,noheader,nounits with the query timestamp,index,power.draw */
    cr_assert_eq(run_shell("cd %s && tail -n +2 nv.csv | sed 's/ W, [0-9.]* W$//' > bare.csv", tmp), 0);
    r = import_power("--nvidia-smi", "bare.csv", "--force", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    /* --query-gpu=timestamp,index,name,power.draw,power.limit,temperature.gpu
     * --format=csv,noheader: six columns, named by --columns */
    cr_assert_eq(run_shell("cd %s && tail -n +2 nv.csv | awk -F', ' -v OFS=', '"
                           " '{print $1, $2, \"NVIDIA A100-SXM4-40GB\", $3, $4, \"41\"}'"
                           " > six.csv", tmp), 0);
    r = import_power("--nvidia-smi", "six.csv", "--force", NULL);
    expect_fail(&r, "six.csv:1: no header, and 6 fields: a log without a header (noheader) has"
                    " the columns timestamp, index, power.draw, or pass --columns with its"
                    " --query-gpu list");
    char epochs[512], log[512], out[512];
    snprintf(epochs, sizeof epochs, "%s/epochs.csv", tmp);
    snprintf(log, sizeof log, "%s/six.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--nvidia-smi", log, "--out", out, "--force", "--columns",
                                 "timestamp,index,name,power.draw,power.limit,temperature.gpu",
                                 NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    expect_knob(8, 250, 10, 150);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--nvidia-smi", log, "--out", out, "--force", "--columns",
                                 "timestamp,index,power.draw", NULL});
    expect_fail(&r, "six.csv:1: 6 fields, but --columns names 3; give the --query-gpu list the"
                    " log was written with");
    /* columns in another query order, found by name */
    cr_assert_eq(run_shell("cd %s && awk -F', ' -v OFS=', ' '{print $3, $2, $1}' nv.csv > swap.csv",
                           tmp), 0);
    r = import_power("--nvidia-smi", "swap.csv", "--force", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    expect_knob(8, 250, 10, 150);
}

/* The signal S as a Prometheus range query; counter: energy in mJ. */
static void dcgm_file(const char *name, int counter)
{
    static char buf[1 << 16];
    const char *metric = counter ? "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" : "DCGM_FI_DEV_POWER_USAGE";
    int n = snprintf(buf, sizeof buf, "{\"status\": \"success\", \"data\": {\"resultType\":"
                     " \"matrix\", \"result\": [{\"metric\": {\"__name__\": \"%s\", \"gpu\":"
                     " \"0\", \"Hostname\": \"h\"}, \"values\": [", metric);
    for (int t = 0; t <= 20; t++) {
        /* counter: 100 W from a large base; the driver reloads at t = 5.5,
         * so the sample at t = 6 reads 50 J */
        double v = counter ? (t <= 5 ? 9e9 + 1e5 * t : 1e5 * (t - 5.5)) : sig_s(t);
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s[%.3f, \"%.17g\"]", t ? ", " : "",
                      1768435200.0 + t, v);
    }
    snprintf(buf + n, sizeof buf - (size_t)n, "]}]}}\n");
    write_file(name, buf);
}

Test(import, dcgm_power_and_energy_counter, .init = setup, .fini = teardown)
{
    /* 2026-01-15T00:00:00Z = 1768435200 */
    write_file("epochs.csv",
               "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
               "d,n,o,8,200,1,1768435204.5,1768435208\n"
               "d,n,o,8,200,2,2026-01-15T00:00:01Z,2026-01-15T00:00:02.5Z\n"
               "d,n,o,8,250,1,2026-01-15T00:00:10,2026-01-15T00:00:20\n");
    dcgm_file("power.json", 0);
    cli_result r = import_power("--dcgm", "power.json", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 158.75);
    expect_knob(8, 250, 10, 150);
    /* Counter: 100 W except the reset interval [5, 6], which counts only
     * the 50 J after the reset: [4.5, 8] = 50 + 50 + 200 = 300 J; [10, 20]
     * is after it, 1000 J. */
    dcgm_file("energy.json", 1);
    r = import_power("--dcgm", "energy.json", "--force", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "1 energy counter reset of GPU 0 (the counter went down"), "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 2.5, 90);     /* (300 + 150) J / 5 s: [4.5, 8] spans it */
    expect_knob(8, 250, 10, 100);
    write_file("bad.json", "{\"status\": \"success\", \"data\": {\"resultType\": \"vector\","
                           " \"result\": []}}");
    r = import_power("--dcgm", "bad.json", "--force", NULL);
    expect_fail(&r, "bad.json: data.resultType: expected \"matrix\"");
    write_file("syntax.json", "{\"status\": \"success\",\n \"data\": {\"resultType\" \"matrix\"}}");
    r = import_power("--dcgm", "syntax.json", "--force", NULL);
    expect_fail(&r, "syntax.json:2:");
}

Test(import, zeus_monitor_windows, .init = setup, .fini = teardown)
{
    write_file("epochs.csv",
               "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
               "d,n,o,8,200,1,1768435200.2,1768435210.2\n"
               "d,n,o,8,200,2,1768435220,1768435230\n"
               "d,n,o,16,200,1,1768435240,1768435245\n");
    /* windows need not be in order */
    write_file("zeus.csv", "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy\n"
                           "1768435220.5,epoch,10.0,1200,600\n"
                           "1768435239.9,epoch,5.0,700,\n"
                           "1768435200.0,epoch,10.0,1000,500\n");
    cli_result r = import_power("--zeus-monitor", "zeus.csv", "--gpus", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 200, 10, 110);       /* (1000 + 1200) / 20 */
    expect_knob(16, 200, 5, 140);
    r = import_power("--zeus-monitor", "zeus.csv", "--force", NULL);
    expect_fail(&r, "zeus.csv:3: gpu1_energy is empty, but the epoch at ");
    char epochs[512], log[512], out[512];
    snprintf(epochs, sizeof epochs, "%s/epochs.csv", tmp);
    snprintf(log, sizeof log, "%s/zeus.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--zeus-monitor", log, "--out", out, "--gpus", "0",
                                 "--match-tolerance", "0.1", "--force", NULL});
    expect_fail(&r, "epochs.csv:2: no window named 'epoch' in ");
}

Test(import, train_first_epoch_reaching, .init = setup, .fini = teardown)
{
    write_file("m.csv", "dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric\n"
                        "d,n,o,8,0.1,1,1,0.5\n"
                        "d,n,o,8,0.1,1,3,0.95\n"      /* out of order on purpose */
                        "d,n,o,8,0.1,1,2,0.9\n"
                        "d,n,o,8,0.1,2,1,0.2\n"
                        "d,n,o,8,0.1,2,2,0.3\n"
                        "d,n,o,16,0.1,1,1,0.91\n");
    char m[512], out[512];
    snprintf(m, sizeof m, "%s/m.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "trace", "import", "train", "--runs", m,
                                            "--target-metric", "0.9", "--out", out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "3 runs, 2 reach >= 0.9"), "%s", r.out);
    cli_free(&r);
    FILE *f = fopen(tp("traces/summary_train.csv"), "r");
    char text[1024] = "";
    cr_assert(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_expect_str_eq(text,
                     "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
                     "d,n,8,o,0.1,1,0.9,2\n"
                     "d,n,8,o,0.1,2,0.9,\n"
                     "d,n,16,o,0.1,1,0.9,1\n");
    r = cli_run((const char *[]){"wattsim", "trace", "import", "train", "--runs", m,
                                 "--target-metric", "0.3", "--lower-is-better", "--out", out,
                                 "--force", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "3 runs, 1 reaches <= 0.3"), "%s", r.out);
    cli_free(&r);
}

/* The folder a user builds: import both, check, simulate with --job. */
Test(import, check_and_job_on_imported_traces, .init = setup, .fini = teardown, .timeout = 60)
{
    cr_assert_eq(run_shell("%s/scripts/make-example-telemetry %s/ex > /dev/null", WS_SOURCE_DIR,
                           tmp), 0);
    char dir[512], m[512], e[512], l[512];
    snprintf(dir, sizeof dir, "%s/ex/traces", tmp);
    snprintf(m, sizeof m, "%s/ex/metrics.csv", tmp);
    snprintf(e, sizeof e, "%s/ex/epochs.csv", tmp);
    snprintf(l, sizeof l, "%s/ex/nvidia-smi.csv", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "toygpu",
                                            "--epochs", e, "--nvidia-smi", l, "--out", dir, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "9 knobs (3 batch sizes, 3 power limits) from 18 epochs, GPUs 0+1"),
              "%s", r.out);
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "train", "--runs", m,
                                 "--target-metric", "0.85", "--out", dir, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "trace", "check", dir, "--format", "json", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "{\"bs\": 128, \"runs\": 3, \"reached\": 2, \"reach_rate\": "
                            "0.66666666666666663, \"power_limits\": [150, 200, 250], \"energy_error\": "
                            "[0.0084688599999999999, 0.0084753499999999996, 0.0107584]}"), "%s", r.out);
    cr_expect(strstr(r.out, "batch size 128 has 3 runs (fewer than 4"), "%s", r.out);
    /* 1 s samples of 55 W idle and busy GPUs: the steps at the epochs'
     * edges cost up to 1.08 % at 128 at 250 W */
    cr_expect(strstr(r.out, "the energy of 1 knob on toygpu may be off by more than 1 %"
                            " (energy_error: telemetry sampled coarsely for its epochs), worst"
                            " batch size 128 at 250 W: up to 1.08 %"), "%s", r.out);
    cr_expect(strstr(r.out, "\"n_warnings\": 2}"), "%s", r.out);
    cli_free(&r);
    /* pareto --job reads the imported folder; its frontier is check's */
    r = cli_run((const char *[]){"wattsim", "pareto", "--traces", dir, "--gpu", "toygpu", "--job",
                                 "toy/mlp/adam", "--target", "0.85", "--max-epochs", "30", "--b0",
                                 "64", "--format", "csv", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\n64,150,4,4,"), "%s", r.out);
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "simulate", "--traces", dir, "--gpu", "toygpu", "--job",
                                 "toy/mlp/adam", "--target", "0.85", "--max-epochs", "30", "--b0",
                                 "64", "--recurrences", "5", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "toy on toygpu: bso zeus, plo jit"), "%s", r.out);
    cli_free(&r);
}

/* --job with the catalogue's definition of a workload is that workload. */
Test(import, job_option_equals_catalogue_workload, .timeout = 60)
{
    cli_result a = cli_run((const char *[]){"wattsim", "pareto", "--traces", TRACES, "--gpu", "v100",
                                            "--workload", "imagenet", "--format", "csv", NULL});
    cli_result b = cli_run((const char *[]){"wattsim", "pareto", "--traces", TRACES, "--gpu", "v100",
                                            "--job", "imagenet/resnet50/adadelta", "--target",
                                            "0.65", "--max-epochs", "100", "--b0", "256",
                                            "--format", "csv", NULL});
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    cr_expect_str_eq(a.out, b.out);
    cli_free(&a);
    cli_free(&b);
    a = cli_run((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--workload", "squad",
                                 "--format", "json", NULL});
    b = cli_run((const char *[]){"wattsim", "simulate", "--traces", TRACES, "--job",
                                 "squad/bert_base_uncased/adamw", "--target", "84.0",
                                 "--max-epochs", "6", "--b0", "32", "--format", "json", NULL});
    cr_assert_eq(b.status, 0, "%s", b.err);
    /* same runs; only the workload's name differs (the job is named after its dataset) */
    cr_expect_str_eq(a.out, b.out);
    cli_free(&a);
    cli_free(&b);
}

Test(import, help_of_every_new_command)
{
    const char *const cmds[][4] = {{"trace", "--help"}, {"trace", "import", "power", "--help"},
                                   {"trace", "import", "train", "--help"},
                                   {"trace", "check", "--help"}};
    for (size_t i = 0; i < 4; i++) {
        const char *argv[6] = {"wattsim"};
        for (int k = 0; k < 4 && cmds[i][k]; k++) argv[k + 1] = cmds[i][k];
        cli_result r = cli_run(argv);
        cr_expect_eq(r.status, 0, "%s", cmds[i][1]);
        cr_expect(strstr(r.out, "usage: wattsim trace"), "%s", r.out);
        cli_free(&r);
    }
}

/* Both DCGM metrics: the energy counter wins; --gpus picks by the gpu label. */
Test(import, dcgm_prefers_counter_and_selects_gpu, .init = setup, .fini = teardown)
{
    write_file("epochs.csv",
               "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
               "d,n,o,8,100,1,1768435200,1768435210\n");
    /* power says 500 W; the counters say 100 W (gpu 0) and 40 W (gpu 7) */
    write_file("both.json",
               "{\"status\": \"success\", \"data\": {\"resultType\": \"matrix\", \"result\": ["
               "{\"metric\": {\"__name__\": \"DCGM_FI_DEV_POWER_USAGE\", \"gpu\": \"0\"},"
               " \"values\": [[1768435200, \"500\"], [1768435210, \"500\"]]},"
               "{\"metric\": {\"__name__\": \"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\", \"gpu\": \"0\"},"
               " \"values\": [[1768435200, \"1000000\"], [1768435205, \"1500000\"], [1768435210, \"2000000\"]]},"
               "{\"metric\": {\"__name__\": \"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\", \"gpu\": \"7\"},"
               " \"values\": [[1768435200, \"0\"], [1768435210, \"400000\"]]}]}}\n");
    cli_result r = import_power("--dcgm", "both.json", NULL, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "1 series of other metrics ignored (using"
                            " DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION)"), "%s", r.err);
    cli_free(&r);
    expect_knob(8, 100, 10, 140);
    r = import_power("--dcgm", "both.json", "--gpus", "7");
    cli_free(&r);                                  /* exists: refused */
    char epochs[512], log[512], out[512];
    snprintf(epochs, sizeof epochs, "%s/epochs.csv", tmp);
    snprintf(log, sizeof log, "%s/both.json", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "power", "--gpu", "g", "--epochs",
                                 epochs, "--dcgm", log, "--out", out, "--gpus", "7", "--force",
                                 NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    expect_knob(8, 100, 10, 40);
}

/* Warnings that count usable oddities. */
Test(import, warnings_count_oddities, .init = setup, .fini = teardown)
{
    write_file("epochs.csv",
               "dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n"
               "d,n,o,8,100,1,1768435200,1768435210\n"
               "d,n,o,8,100,2,1768435220,1768435222\n");
    write_file("zeus.csv", "start_time,window_name,elapsed_time,gpu0_energy\n"
                           "1768435200,e,10,1000\n"
                           "1768435220,e,10,300\n");
    /* a window that lasts 10 s did not time an epoch of 2 s: refused */
    cli_result r = import_power("--zeus-monitor", "zeus.csv", NULL, NULL);
    expect_fail(&r, "epochs.csv:3: epoch 2 lasts 2 s, but the window 'e' that starts with it"
                    " (");
    write_file("m.csv", "dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric\n"
                        "d,n,o,8,0.1,1,2,0.5\n"          /* does not start at 1 */
                        "d,n,o,8,0.1,1,4,0.95\n");       /* skips 3 */
    char m[512], out[512];
    snprintf(m, sizeof m, "%s/m.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    r = cli_run((const char *[]){"wattsim", "trace", "import", "train", "--runs", m,
                                 "--target-metric", "0.9", "--out", out, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "1 of 1 run does not start at epoch 1 or skips epochs"), "%s", r.err);
    cr_expect(strstr(r.out, "1 run, 1 reaches >= 0.9"), "%s", r.out);
    cli_free(&r);
}

/* trace check on a hand-made folder with one of each warning. */
Test(import, check_warnings_and_frontier, .init = setup, .fini = teardown)
{
    cr_assert_eq(run_shell("mkdir %s/t", tmp), 0);
    write_file("t/summary_train.csv",
               "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
               "d,n,8,o,0.1,1,0.9,5\nd,n,8,o,0.1,2,0.9,5\nd,n,8,o,0.1,3,0.9,5\nd,n,8,o,0.1,4,0.9,5\n"
               "d,n,16,o,0.1,1,0.9,\nd,n,16,o,0.1,2,0.9,\nd,n,16,o,0.1,3,0.9,\nd,n,16,o,0.1,4,0.9,\n"
               "d,n,64,o,0.1,1,0.9,3\nd,n,64,o,0.1,2,0.9,3\nd,n,64,o,0.1,3,0.9,3\nd,n,64,o,0.1,4,0.9,3\n");
    write_file("t/summary_power_g.csv",
               "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
               "d,n,8,o,100,10,80\nd,n,8,o,150,8,120\nd,n,16,o,100,6,90\n"
               "d,n,32,o,100,5,95\nd,n,32,o,150,4,140\nx,y,8,z,100,1,50\n");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/t", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "trace", "check", dir, "--format", "json",
                                            NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *want[] = {
        "\"frontier\": [{\"bs\": 8, \"pl\": 150, \"tta_s\": 40, \"eta_j\": 4800}, "
        "{\"bs\": 8, \"pl\": 100, \"tta_s\": 50, \"eta_j\": 4000}]",
        "batch size 16: no run reaches the target",
        "batch size 16 lacks power limit 150 W measured at batch size 8",
        "batch size 32 has power rows but no train rows (it drops out of the job)",
        "batch size 64 has train rows but no power rows on g (it drops out of the job)",
        "power rows but no train rows for x/y/z: no job can use them",
        "\"n_warnings\": 5}",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect(strstr(r.out, want[i]), "lacks %s: %s", want[i], r.out);
    cli_free(&r);
}

/* The opening both per-job tables share (ws_imp_job_row): EPOCHS.csv of
 * import power and METRICS.csv of import train refuse a row of the wrong
 * width, an empty or unsafe name and a bad batch size alike, naming the
 * file, line and column. */
Test(import, job_row_opening_errors, .init = setup, .fini = teardown)
{
    static const struct { const char *row, *msg; } bad[] = {
        {"d,n,o,8,X", ":2: 5 fields, but the header has 8"},
        {"d,,o,8,X,1,X,X", ":2: network: must not be empty"},
        {"../d,n,o,8,X,1,X,X", ":2: dataset \"../d\""},
        {"d,n,o,8.5,X,1,X,X", ":2: batch_size: must be a positive integer, got \"8.5\""},
    };
    nv_log("nv.csv", 0, -1, -1);
    char m[512], out[512];
    snprintf(m, sizeof m, "%s/m.csv", tmp);
    snprintf(out, sizeof out, "%s/traces", tmp);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512], msg[256], row[128];
        /* the power_limit and learning_rate columns, times and metric: good values */
        snprintf(row, sizeof row, "%s", bad[i].row);
        char *x;
        while ((x = strchr(row, 'X'))) *x = '1';
        snprintf(text, sizeof text, "dataset,network,optimizer,batch_size,power_limit,epoch,"
                 "start,end\n%s\n", row);
        write_file("epochs.csv", text);
        snprintf(msg, sizeof msg, "epochs.csv%s", bad[i].msg);
        cli_result r = import_power("--nvidia-smi", "nv.csv", NULL, NULL);
        expect_fail(&r, msg);
        snprintf(text, sizeof text, "dataset,network,optimizer,batch_size,learning_rate,run,"
                 "epoch,metric\n%s\n", row);
        write_file("m.csv", text);
        snprintf(msg, sizeof msg, "m.csv%s", bad[i].msg);
        r = cli_run((const char *[]){"wattsim", "trace", "import", "train", "--runs", m,
                                     "--target-metric", "0.9", "--out", out, NULL});
        expect_fail(&r, msg);
    }
}
