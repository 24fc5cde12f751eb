/*
 * The joins of trace loading, job building and the Pareto frontier grow as
 * n log n in the number of batch sizes (issue 10: a trace with 10^5 batch
 * sizes took 12.7 s to load and 70 s for `pareto`). Not a timing test: the
 * joins count their comparisons and search/scan steps (ws_join_work), and
 * doubling the batch sizes from 5,000 to 10,000 must not double the work
 * per batch size the way a quadratic join does (ratio 4), while every
 * batch size, knob and run is joined correctly.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "tmpdir.h"
#include "wattsim/config.h"
#include "wattsim/pareto.h"
#include "wattsim/trace.h"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-joins-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

/* n batch sizes 8, 16, ..., each with power limits 100 and 150 W and two
 * runs, rows written in a scrambled order (a multiplicative permutation). */
static void write_traces(const char *dir, int n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/summary_train.csv", dir);
    FILE *t = fopen(path, "w");
    snprintf(path, sizeof path, "%s/summary_power_g1.csv", dir);
    FILE *p = fopen(path, "w");
    cr_assert(t && p);
    fputs("dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n", t);
    fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n", p);
    for (long k = 0; k < n; k++) {
        long i = (k * 7919) % n;                  /* 7919 is prime: a permutation */
        int bs = 8 * (int)(i + 1);
        for (int r = 0; r < 2; r++) fprintf(t, "d,n,%d,o,0.1,%d,0.9,%d\n", bs, r, 5 + r);
        fprintf(p, "d,n,%d,o,150,%g,130\n", bs, 10.0 + (double)i);
        fprintf(p, "d,n,%d,o,100,%g,90\n", bs, 12.5 + (double)i);
    }
    cr_assert_eq(fclose(t), 0);
    cr_assert_eq(fclose(p), 0);
}

/* Join work of loading, building the job and its frontier for n sizes;
 * *build (when not NULL) that of building the job alone. */
static unsigned long long work_for(int n, unsigned long long *build)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/n%d", tmp, n);
    cr_assert_eq(run_shell("mkdir -p %s", dir), 0);
    write_traces(dir, n);
    ws_workload_spec spec = {.name = "w", .dataset = "d", .network = "n", .optimizer = "o",
                             .target_metric = 0.9, .max_epochs = 10, .b0 = 8};
    ws_error err = {{0}};
    ws_traces tr;
    ws_job_table jt;
    ws_pareto par;
    unsigned long long w0 = ws_join_work();
    cr_assert_eq(ws_traces_load(&tr, dir, "g1", NULL, &err), 0, "%s", err.msg);
    unsigned long long b0 = ws_join_work();
    cr_assert_eq(ws_job_build(&jt, &tr, &spec, 0.5, 2.0, &err), 0, "%s", err.msg);
    if (build) *build = ws_join_work() - b0;
    cr_assert_eq(ws_pareto_compute(&jt.job, &par, &err), 0, "%s", err.msg);
    unsigned long long w = ws_join_work() - w0;
    /* Everything joined, in order. */
    cr_assert_eq(jt.job.n_bs, n);
    cr_assert_eq(tr.max_power, 150);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(jt.job.bs[i], 8 * (i + 1));
        cr_assert_eq(jt.job.knob_start[i], 2 * i);
        cr_assert_eq(jt.job.knob_pl[2 * i], 100);
        cr_assert_eq(jt.job.knob_pl[2 * i + 1], 150);
        cr_assert_eq(jt.job.knob_time[2 * i + 1], 10.0 + i);
        cr_assert_eq(jt.job.run_start[i], 2 * i);
        cr_assert_eq(jt.job.run_epoch[2 * i], 5);
        cr_assert_eq(jt.job.run_epoch[2 * i + 1], 6);
    }
    /* Every knob reaches (5.5 epochs on average). Batch size 8 at 150 W:
     * TTA 55 s, ETA 7150 J; at 100 W: 68.75 s, 6187.5 J -- neither
     * dominates the other, and every larger size is slower at the same
     * power, so dominated: the frontier is those two, by TTA. */
    cr_assert_eq(par.n, 2 * n);
    cr_assert_eq(par.n_frontier, 2);
    cr_assert_eq(par.knobs[par.frontier[0]].pl, 150);
    cr_assert_eq(par.knobs[par.frontier[1]].pl, 100);
    cr_assert_eq(par.knobs[par.frontier[0]].bs, 8);
    ws_pareto_free(&par);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    return w;
}

Test(joins, work_grows_as_n_log_n, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    unsigned long long a = work_for(5000, NULL), b = work_for(10000, NULL);
    double ratio = (double)b / (double)a;
    /* n log n: 2 * log(2n)/log(n) = 2.16 here; quadratic: 4. */
    cr_expect_lt(ratio, 2.5, "work %llu -> %llu: ratio %.2f", a, b, ratio);
    cr_expect_gt(ratio, 1.9, "work %llu -> %llu: ratio %.2f", a, b, ratio);
    /* And small: a few dozen steps per row, not thousands. */
    cr_expect_lt(b, 100ull * 10000 * 17, "work %llu for 10^4 batch sizes", b);
    cr_log_info("join work: %llu (5,000 batch sizes), %llu (10,000): ratio %.3f", a, b, ratio);
}

/* ------------------------------------------------------------------
 * The readers (issue 18): the same measure, on inputs that made them
 * quadratic -- many names (intern() scanned the names per row), many
 * batch sizes in trace check (bs_get() and fill() scanned per group),
 * many runs of one batch size (the run-number clash check compared every
 * later run), many knobs (the import's summary compared every earlier
 * knob) and many GPUs in a log (gpu_get() scanned the GPUs per sample).
 * Each doubles its input and must not quadruple the work per row.
 */

#include "wattsim/import.h"
#include "wattsim/trace_check.h"

/* work(2n) / work(n) of `fn`, a quadratic reader's 4 ruled out. */
static void expect_linear(const char *what, unsigned long long (*fn)(int), int n)
{
    unsigned long long a = fn(n), b = fn(2 * n);
    double ratio = (double)b / (double)a;
    cr_expect_lt(ratio, 2.5, "%s: work %llu -> %llu: ratio %.2f", what, a, b, ratio);
    cr_expect_lt(b, 200ull * 2 * (unsigned long long)n * 17, "%s: work %llu for %d", what,
                 b, 2 * n);
    cr_log_info("%s: work %llu (n = %d), %llu (2n): ratio %.3f", what, a, n, b, ratio);
}

static FILE *open_tmp(const char *dir, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    return f;
}

static const char *fresh_dir(const char *kind, int n)
{
    static char dir[600];
    snprintf(dir, sizeof dir, "%s/%s%d", tmp, kind, n);
    cr_assert_eq(run_shell("mkdir -p %s", dir), 0);
    return dir;
}

/* n jobs (datasets d0..) in one trace; simulate builds one of them. */
static unsigned long long many_jobs(int n)
{
    const char *dir = fresh_dir("jobs", n);
    FILE *t = open_tmp(dir, "summary_train.csv"), *p = open_tmp(dir, "summary_power_g1.csv");
    fputs("dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n", t);
    fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n", p);
    for (int i = 0; i < n; i++)
        for (int bs = 8; bs <= 16; bs += 8) {
            fprintf(t, "d%d,n,%d,o,0.1,1,0.5,%d\n", i, bs, 3 + i % 5);
            for (int pl = 100; pl <= 150; pl += 50)
                fprintf(p, "d%d,n,%d,o,%d,%d,%d\n", i, bs, pl, 10 + bs, pl - 20);
        }
    cr_assert_eq(fclose(t), 0);
    cr_assert_eq(fclose(p), 0);
    ws_workload_spec spec = {.name = "w", .dataset = "d7", .network = "n", .optimizer = "o",
                             .target_metric = 0.5, .max_epochs = 10, .b0 = 16};
    ws_error err = {{0}};
    ws_traces tr;
    ws_job_table jt;
    unsigned long long w0 = ws_join_work();
    cr_assert_eq(ws_traces_load(&tr, dir, "g1", NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_job_build(&jt, &tr, &spec, 0.5, 2.0, &err), 0, "%s", err.msg);
    unsigned long long w = ws_join_work() - w0;
    cr_assert_eq(tr.names.n, (size_t)n + 2);           /* d0.. d(n-1), n, o */
    cr_assert_eq(jt.job.n_bs, 2);
    cr_assert_eq(jt.job.knob_start[2], 4);
    cr_assert_eq(jt.job.run_epoch[0], 3 + 7 % 5);
    cr_assert_eq(jt.job.knob_time[3], 26);             /* bs 16 at 150 W */
    ws_job_free(&jt);
    ws_traces_free(&tr);
    return w;
}

Test(joins, many_jobs_read_linearly, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    expect_linear("many jobs", many_jobs, 10000);
}

/* trace check of n batch sizes of one workload, one limit and run each. */
static unsigned long long check_batch_sizes(int n)
{
    const char *dir = fresh_dir("check", n);
    FILE *t = open_tmp(dir, "summary_train.csv"), *p = open_tmp(dir, "summary_power_g1.csv");
    fputs("dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n", t);
    fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n", p);
    for (int k = 0; k < n; k++) {
        int bs = 1 + (int)(((long)k * 7919) % n);      /* scrambled */
        fprintf(t, "d,n,%d,o,0.1,1,0.5,%d\n", bs, 3 + bs % 5);
        fprintf(p, "d,n,%d,o,100,%d,%d\n", bs, 10 + bs % 7, 80 + bs % 11);
    }
    cr_assert_eq(fclose(t), 0);
    cr_assert_eq(fclose(p), 0);
    ws_error err = {{0}};
    ws_trace_check chk;
    unsigned long long w0 = ws_join_work();
    cr_assert_eq(ws_trace_check_run(dir, NULL, NULL, &chk, &err), 0, "%s", err.msg);
    unsigned long long w = ws_join_work() - w0;
    cr_assert_eq(chk.n, 1);
    cr_assert_eq(chk.g[0].n_bs, n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(chk.g[0].bs[i].bs, i + 1);
        cr_assert_eq(chk.g[0].bs[i].runs, 1);
        cr_assert_eq(chk.g[0].bs[i].n_pl, 1);
    }
    cr_assert_eq(chk.n_warnings, (size_t)n);          /* one run each: "fewer than 4" */
    ws_trace_check_free(&chk);
    return w;
}

Test(joins, trace_check_reads_linearly, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    expect_linear("trace check", check_batch_sizes, 10000);
}

/* import train: n runs of one batch size, two epochs each. */
static unsigned long long import_runs(int n)
{
    const char *dir = fresh_dir("runs", n);
    FILE *m = open_tmp(dir, "metrics.csv");
    fputs("dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric\n", m);
    for (int r = 1; r <= n; r++) fprintf(m, "d,n,o,32,0.1,%d,1,0.3\nd,n,o,32,0.1,%d,2,0.6\n", r, r);
    cr_assert_eq(fclose(m), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/metrics.csv", dir);
    ws_train_import in = {path, "0.5", 0.5, 0, NULL};
    ws_train_table out;
    ws_warnings w = {0};
    ws_error err = {{0}};
    unsigned long long w0 = ws_join_work();
    cr_assert_eq(ws_import_train(&in, &out, &w, &err), 0, "%s", err.msg);
    unsigned long long work = ws_join_work() - w0;
    cr_assert_eq(out.n, (size_t)n);
    for (size_t i = 0; i < out.n; i++) cr_assert_eq(out.rows[i].target_epoch, 2);
    ws_train_table_free(&out);
    ws_warnings_free(&w);
    return work;
}

Test(joins, import_train_reads_linearly, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    expect_linear("import train", import_runs, 10000);
}

/* import power: n knobs of one epoch each (100 limits per batch size, 200
 * to 299 W), on one GPU drawing 200 W, sampled every 2 s; then the summary. */
static unsigned long long import_knobs(int n)
{
    const char *dir = fresh_dir("knobs", n);
    FILE *e = open_tmp(dir, "epochs.csv");
    fputs("dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n", e);
    for (int i = 0; i < n; i++)
        fprintf(e, "d,n,o,%d,%d,1,%d,%d\n", 1 + i / 100, 200 + i % 100, 10 * i + 1, 10 * i + 9);
    cr_assert_eq(fclose(e), 0);
    ws_telemetry tel = {0};
    ws_error err = {{0}};
    tel.kind = WS_TEL_POWER;
    tel.path = strdup("log");
    for (int s = 0; s <= 5 * n + 5; s++)
        cr_assert_eq(ws_telemetry_add(&tel, "0", 2.0 * s, 200, s + 2, &err), 0, "%s", err.msg);
    char path[700];
    snprintf(path, sizeof path, "%s/epochs.csv", dir);
    ws_power_import in = {.epochs_path = path, .tel = &tel, .max_gap = 5,
                          .match_tolerance = 1};
    ws_power_table out;
    ws_warnings w = {0};
    size_t nb, np;
    long ne;
    unsigned long long w0 = ws_join_work();
    cr_assert_eq(ws_telemetry_prepare(&tel, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_import_power(&in, &out, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_power_table_summary(&out, &nb, &np, &ne), 0);
    unsigned long long work = ws_join_work() - w0;
    cr_assert_eq(out.n, (size_t)n);
    cr_assert_eq(nb, (size_t)n / 100);
    cr_assert_eq(np, 100);
    cr_assert_eq(ne, n);
    for (size_t i = 0; i < out.n; i++) {
        cr_assert_float_eq(out.rows[i].time_per_epoch, 8, 1e-9);
        cr_assert_float_eq(out.rows[i].average_power, 200, 1e-9);
    }
    ws_power_table_free(&out);
    ws_telemetry_free(&tel);
    ws_warnings_free(&w);
    return work;
}

Test(joins, import_power_reads_linearly, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    expect_linear("import power", import_knobs, 10000);
}

/* an nvidia-smi log naming n GPUs, two samples each. */
static unsigned long long log_gpus(int n)
{
    const char *dir = fresh_dir("gpus", n);
    FILE *l = open_tmp(dir, "nv.csv");
    fputs("timestamp, index, power.draw [W]\n", l);
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < n; g++) fprintf(l, "2026/01/15 00:00:0%d.000, %d, 100.00 W\n", s, g);
    cr_assert_eq(fclose(l), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/nv.csv", dir);
    ws_telemetry tel;
    ws_warnings w = {0};
    ws_error err = {{0}};
    unsigned long long w0 = ws_join_work();
    cr_assert_eq(ws_import_nvsmi(path, NULL, &tel, &w, &err), 0, "%s", err.msg);
    unsigned long long work = ws_join_work() - w0;
    cr_assert_eq(tel.n_gpu, (size_t)n);
    cr_assert_eq(tel.gpu[n - 1].n, 2);
    ws_telemetry_free(&tel);
    ws_warnings_free(&w);
    return work;
}

Test(joins, many_gpus_in_a_log_read_linearly, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    expect_linear("GPUs in a log", log_gpus, 10000);
}

/* Building a job from loaded traces costs a few steps per row of the job
 * (its train and power rows: merge joins), no search per row: the batch
 * sizes with both kinds of rows and each one's knobs are found by walking
 * the sorted rows together (100,074 steps here, 2.5 a row). Before, each
 * train row and each batch size searched the whole power table (891,777
 * steps, 22 a row). n = 10^4 batch sizes, 2 runs and 2 power limits each. */
Test(joins, building_a_job_is_linear_in_its_rows, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    const int n = 10000;
    unsigned long long w;
    work_for(n, &w);              /* every batch size, knob and run joined, in order */
    /* 4n rows: each scanned a bounded number of times, plus the two
     * binary searches that find the job's rows */
    cr_expect_lt(w, 3ull * 4 * n, "job build work %llu for %d rows", w, 4 * n);
    cr_log_info("job build work: %llu for %d rows", w, 4 * n);
}
