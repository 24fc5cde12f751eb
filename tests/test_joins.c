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

/* Join work of loading, building the job and its frontier for n sizes. */
static unsigned long long work_for(int n)
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
    cr_assert_eq(ws_job_build(&jt, &tr, &spec, 0.5, 2.0, &err), 0, "%s", err.msg);
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
    unsigned long long a = work_for(5000), b = work_for(10000);
    double ratio = (double)b / (double)a;
    /* n log n: 2 * log(2n)/log(n) = 2.16 here; quadratic: 4. */
    cr_expect_lt(ratio, 2.5, "work %llu -> %llu: ratio %.2f", a, b, ratio);
    cr_expect_gt(ratio, 1.9, "work %llu -> %llu: ratio %.2f", a, b, ratio);
    /* And small: a few dozen steps per row, not thousands. */
    cr_expect_lt(b, 100ull * 10000 * 17, "work %llu for 10^4 batch sizes", b);
    cr_log_info("join work: %llu (5,000 batch sizes), %llu (10,000): ratio %.3f", a, b, ratio);
}
