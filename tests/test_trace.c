/*
 * Trace loading, validation and the join into a job's knob table
 * (wattsim/trace.h), on small traces generated into a temporary folder.
 * Errors are checked with their exact one-line message.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "wattsim/trace.h"

#include "tmpdir.h"

/* ------------------------------------------------------------ fixture */

static void setup(void)
{
    tmpdir_make("/tmp/wstrace.XXXXXX");
}

static void teardown(void) { tmpdir_remove(); }

TestSuite(trace, .init = setup, .fini = teardown);

static void write_gz(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    gzFile g = gzopen(p, "wb");
    cr_assert_not_null(g, "gzopen %s", p);
    if (*text) cr_assert_eq(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
    cr_assert_eq(gzclose(g), Z_OK);
}

#define TRAIN_HDR "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
#define POWER_HDR "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"

/*
 * The main fixture. Workload toy/net/sgd:
 *  - train batch sizes 8, 16, 32 and 128 (128 has no power rows), 16 also
 *    at another target metric (0.7);
 *  - power batch sizes 4 (no train rows, limit 300), 8, 16, 32.
 * Workload other/net2/adam: one joined row at limit 250, and a power-only
 * batch size 64 at limit 275. MaxPower is therefore 250.
 */
static const char *TRAIN =
    TRAIN_HDR
    "toy,net,32,sgd,0.1,0,0.5,3\n"          /* 2 */
    "toy,net,8,sgd,0.1,0,0.5,5\n"           /* 3 */
    "toy,net,8,sgd,0.1,1,0.5,\n"            /* 4: never reached */
    "toy,net,16,sgd,0.1,0,0.5,4\n"          /* 5 */
    "toy,net,16,sgd,0.1,0,0.7,9\n"          /* 6: other target */
    "toy,net,16,sgd,0.1,1,0.50,4.5\n"       /* 7 */
    "toy,net,128,sgd,0.1,0,0.5,2\n"         /* 8: no power rows */
    "other,net2,8,adam,0.01,0,0.9,7\n";     /* 9 */

static const char *POWER =
    POWER_HDR
    "toy,net,16,sgd,200,2.0,190\n"          /* 2 */
    "toy,net,16,sgd,100,3.0,95\n"           /* 3 */
    "toy,net,8,sgd,150,4.5,140\n"           /* 4 */
    "toy,net,8,sgd,100,5.0,98\n"            /* 5 */
    "toy,net,8,sgd,200,4.0,180\n"           /* 6 */
    "toy,net,32,sgd,175,1.5,170\n"          /* 7 */
    "toy,net,32,sgd,125,1.75,120\n"         /* 8 */
    "toy,net,4,sgd,300,9.0,250\n"           /* 9: no train rows */
    "other,net2,8,adam,250,1.0,240\n"       /* 10 */
    "other,net2,64,adam,275,1.0,240\n";     /* 11: no train rows */

static ws_workload_spec spec_of(const char *name, const char *ds,
                                const char *net, const char *opt,
                                double target, int max_epochs, int b0)
{
    ws_workload_spec s = {(char *)name, (char *)ds, (char *)net, (char *)opt,
                          target, max_epochs, b0, NULL, NULL, 0, NULL, 0, NULL, 0};
    return s;
}

static ws_workload_spec toy_spec(int b0)
{
    return spec_of("toy", "toy", "net", "sgd", 0.5, 50, b0);
}

/* Load the traces of `gpu`, expecting success. */
static void load_ok(ws_traces *t, const char *gpu)
{
    ws_error err = {""};
    int rc = ws_traces_load(t, tmp, gpu, NULL, &err);
    cr_assert_eq(rc, 0, "ws_traces_load failed: %s", err.msg);
}

/* Load, expecting the error `fmt`, in which each "%s" (up to three) stands
 * for the temporary trace folder. */
static void load_fails(const char *gpu, const ws_csv_limits *lim, const char *fmt)
{
    ws_traces t;
    ws_error err = {""};
    char want[2048];
    snprintf(want, sizeof want, fmt, tmp, tmp, tmp);
    int rc = ws_traces_load(&t, tmp, gpu, lim, &err);
    ws_traces_free(&t);
    cr_assert_neq(rc, 0, "expected the error: %s", want);
    cr_assert_str_eq(err.msg, want);
}

/* Load the main power trace and `train`, expecting `fmt` (see above). */
static void train_fails(const char *train, const char *fmt)
{
    write_file("summary_train.csv", train);
    write_file("summary_power_v100.csv", POWER);
    load_fails("v100", NULL, fmt);
}

static void power_fails(const char *power, const char *fmt)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", power);
    load_fails("v100", NULL, fmt);
}

/* Build the job for `spec`, expecting `fmt` (see above). */
static void build_fails(const char *train, const char *power,
                        ws_workload_spec spec, const char *fmt)
{
    write_file("summary_train.csv", train);
    write_file("summary_power_v100.csv", power);
    ws_traces t;
    load_ok(&t, "v100");
    ws_job_table jt;
    ws_error err = {""};
    char want[2048];
    snprintf(want, sizeof want, fmt, tmp, tmp, tmp);
    int rc = ws_job_build(&jt, &t, &spec, 0.5, INFINITY, &err);
    ws_job_free(&jt);
    ws_traces_free(&t);
    cr_assert_neq(rc, 0, "expected the error: %s", want);
    cr_assert_str_eq(err.msg, want);
}

/* ------------------------------------------------------------ paths */

Test(trace, trace_path_plain_gz_both_none)
{
    ws_error err = {""};
    char want[1024];
    write_file("summary_train.csv", "x");
    char *p = ws_trace_path(tmp, "summary_train", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_str_eq(p, tp("summary_train.csv"));
    free(p);

    write_file("summary_power_a40.csv.gz", "x");
    p = ws_trace_path(tmp, "summary_power_a40", &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_str_eq(p, tp("summary_power_a40.csv.gz"));
    free(p);

    write_file("summary_train.csv.gz", "x");
    cr_assert_null(ws_trace_path(tmp, "summary_train", &err));
    snprintf(want, sizeof want,
             "%s: both summary_train.csv and summary_train.csv.gz exist; keep one", tmp);
    cr_assert_str_eq(err.msg, want);

    cr_assert_null(ws_trace_path(tmp, "summary_power_h100", &err));
    snprintf(want, sizeof want,
             "%s: no summary_power_h100.csv or summary_power_h100.csv.gz (run"
             " scripts/fetch-traces, or point --traces / WATTSIM_TRACES at the"
             " trace folder)", tmp);
    cr_assert_str_eq(err.msg, want);
}

Test(trace, gpus_listed_sorted_once)
{
    char **gpus = NULL;
    ws_error err = {""};
    cr_assert_eq(ws_trace_gpus(tmp, &gpus, &err), 0, "%s", err.msg);
    cr_assert_null(gpus);

    write_file("summary_power_v100.csv", "x");
    write_file("summary_power_a40.csv.gz", "x");
    write_file("summary_power_p100.csv", "x");
    write_file("summary_power_p100.csv.gz", "x");
    write_file("summary_power_.csv", "x");          /* no GPU name */
    write_file("summary_power_rtx.csv.bak", "x");   /* not a trace */
    write_file("summary_power_rtx.txt", "x");
    write_file("summary_train.csv", "x");
    int n = ws_trace_gpus(tmp, &gpus, &err);
    cr_assert_eq(n, 3, "%s", err.msg);
    cr_assert_str_eq(gpus[0], "a40");
    cr_assert_str_eq(gpus[1], "p100");
    cr_assert_str_eq(gpus[2], "v100");
    for (int i = 0; i < n; i++) free(gpus[i]);
    free(gpus);
}

Test(trace, gpus_missing_folder)
{
    char **gpus = NULL;
    ws_error err = {""};
    char dir[600], want[1024];
    snprintf(dir, sizeof dir, "%s/missing", tmp);
    cr_assert_eq(ws_trace_gpus(dir, &gpus, &err), -1);
    snprintf(want, sizeof want, "%s: cannot open trace folder: No such file or"
             " directory (run scripts/fetch-traces or pass --traces DIR)", dir);
    cr_assert_str_eq(err.msg, want);
}

/* ------------------------------------------------------------ loading */

Test(trace, load_reads_rows)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    ws_traces t;
    load_ok(&t, "v100");
    cr_assert_eq(t.n_train, 8);
    cr_assert_eq(t.n_power, 10);
    cr_assert_str_eq(t.dir, tmp);
    cr_assert_str_eq(t.gpu, "v100");
    cr_assert_str_eq(t.train_path, tp("summary_train.csv"));
    cr_assert_str_eq(t.power_path, tp("summary_power_v100.csv"));
    /* The train row of line 4 (never reached). */
    int found = 0;
    for (size_t i = 0; i < t.n_train; i++) {
        const ws_train_row *r = &t.train[i];
        if (r->line != 4) continue;
        found = 1;
        cr_assert_str_eq(t.names.s[r->dataset], "toy");
        cr_assert_str_eq(t.names.s[r->network], "net");
        cr_assert_str_eq(t.names.s[r->optimizer], "sgd");
        cr_assert_eq(r->bs, 8);
        cr_assert_eq(r->run, 1);
        cr_assert_eq(r->target_metric, 0.5);
        cr_assert(isinf(r->target_epoch) && r->target_epoch > 0);
    }
    cr_assert(found);
    /* The power row of line 8. */
    found = 0;
    for (size_t i = 0; i < t.n_power; i++) {
        const ws_power_row *p = &t.power[i];
        if (p->line != 8) continue;
        found = 1;
        cr_assert_str_eq(t.names.s[p->dataset], "toy");
        cr_assert_eq(p->bs, 32);
        cr_assert_eq(p->pl, 125);
        cr_assert_eq(p->time, 1.75);
        cr_assert_eq(p->power, 120.0);
    }
    cr_assert(found);
    ws_traces_free(&t);
}

Test(trace, max_power_counts_only_joined_rows)
{
    /* 300 W (toy bs 4) and 275 W (other bs 64) have no train rows: the
     * highest joined limit is other's 250 W, though toy's own top is 200. */
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    ws_traces t;
    load_ok(&t, "v100");
    cr_assert_eq(t.max_power, 250.0);
    ws_traces_free(&t);
}

Test(trace, max_power_ignores_power_row_whose_batch_size_has_no_train_row)
{
    write_file("summary_train.csv", TRAIN_HDR "w,n,8,o,0.1,0,0.5,3\n");
    write_file("summary_power_v100.csv", POWER_HDR
               "w,n,8,o,100,1,90\n"
               "w,n,8,o,150,1,90\n"
               "w,n,16,o,400,1,90\n"          /* bs 16: no train row */
               "x,n,8,o,500,1,90\n");         /* workload x: no train row */
    ws_traces t;
    load_ok(&t, "v100");
    cr_assert_eq(t.max_power, 150.0);
    ws_traces_free(&t);
}

Test(trace, learning_rate_column_is_optional_and_columns_in_any_order)
{
    write_file("summary_train.csv",
               "target_epoch,run,target_metric,optimizer,batch_size,network,dataset\n"
               "3,0,0.5,o,8,n,w\n");
    write_file("summary_power_v100.csv",
               "average_power,time_per_epoch,power_limit,optimizer,batch_size,network,dataset\n"
               "90,2.5,100,o,8,n,w\n");
    ws_traces t;
    load_ok(&t, "v100");
    ws_workload_spec s = spec_of("w", "w", "n", "o", 0.5, 10, 8);
    ws_job_table jt;
    ws_error err = {""};
    cr_assert_eq(ws_job_build(&jt, &t, &s, 0.5, INFINITY, &err), 0, "%s", err.msg);
    cr_assert_eq(jt.job.n_bs, 1);
    cr_assert_eq(jt.job.bs[0], 8);
    cr_assert_eq(jt.job.knob_pl[0], 100);
    cr_assert_eq(jt.job.knob_time[0], 2.5);
    cr_assert_eq(jt.job.knob_power[0], 90.0);
    cr_assert_eq(jt.job.run_epoch[0], 3.0);
    ws_job_free(&jt);
    ws_traces_free(&t);
}

/* ------------------------------------------------------------ the join */

static void check_toy_table(const ws_job_table *jt, double eta, double beta)
{
    const ws_job *j = &jt->job;
    cr_assert_eq(j->abi_version, WS_ABI_VERSION);
    cr_assert_str_eq(j->workload, "toy");
    cr_assert_str_eq(j->gpu, "v100");
    cr_assert_eq(j->eta, eta);
    cr_assert_eq(j->beta, beta);
    cr_assert_eq(j->max_power, 250.0);
    cr_assert_eq(j->max_epochs, 50);
    cr_assert_eq(j->concurrent, 0);

    /* B: sizes in both traces, ascending (not 4: power only; not 128:
     * train only). */
    cr_assert_eq(j->n_bs, 3);
    const int bs[] = {8, 16, 32};
    for (int i = 0; i < 3; i++) cr_assert_eq(j->bs[i], bs[i], "bs[%d]", i);

    const int ks[] = {0, 3, 5, 7};
    for (int i = 0; i < 4; i++) cr_assert_eq(j->knob_start[i], ks[i], "knob_start[%d]", i);
    const int pl[] = {100, 150, 200, 100, 200, 125, 175};
    const double tm[] = {5.0, 4.5, 4.0, 3.0, 2.0, 1.75, 1.5};
    const double pw[] = {98, 140, 180, 95, 190, 120, 170};
    for (int k = 0; k < 7; k++) {
        cr_assert_eq(j->knob_pl[k], pl[k], "knob_pl[%d]", k);
        cr_assert_eq(j->knob_time[k], tm[k], "knob_time[%d]", k);
        cr_assert_eq(j->knob_power[k], pw[k], "knob_power[%d]", k);
    }

    /* R(bs): runs at the job's target 0.5 only ("0.50" is the same), in
     * run order; an empty target_epoch is INFINITY. */
    const int rs[] = {0, 2, 4, 5};
    for (int i = 0; i < 4; i++) cr_assert_eq(j->run_start[i], rs[i], "run_start[%d]", i);
    cr_assert_eq(j->run_epoch[0], 5.0);
    cr_assert(isinf(j->run_epoch[1]) && j->run_epoch[1] > 0);
    cr_assert_eq(j->run_epoch[2], 4.0);
    cr_assert_eq(j->run_epoch[3], 4.5);
    cr_assert_eq(j->run_epoch[4], 3.0);

    /* The view points at the table's arrays. */
    cr_assert_eq(j->bs, jt->bs);
    cr_assert_eq(j->knob_start, jt->knob_start);
    cr_assert_eq(j->knob_pl, jt->knob_pl);
    cr_assert_eq(j->knob_time, jt->knob_time);
    cr_assert_eq(j->knob_power, jt->knob_power);
    cr_assert_eq(j->run_start, jt->run_start);
    cr_assert_eq(j->run_epoch, jt->run_epoch);
    cr_assert_str_eq(jt->workload, "toy");
    cr_assert_str_eq(jt->gpu, "v100");

    /* |P| = {100, 125, 150, 175, 200}; 2 * |B| * |P| = 30. */
    cr_assert_eq(jt->n_pl_distinct, 5);
    cr_assert_eq(jt->default_recurrences, 30);
}

Test(trace, job_table_of_the_join)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    ws_traces t;
    load_ok(&t, "v100");
    ws_workload_spec s = toy_spec(16);
    ws_job_table jt;
    ws_error err = {""};
    cr_assert_eq(ws_job_build(&jt, &t, &s, 0.3, 2.0, &err), 0, "%s", err.msg);
    check_toy_table(&jt, 0.3, 2.0);
    cr_assert_eq(jt.job.b0, 16);
    cr_assert_eq(jt.b0_index, 1);
    ws_job_free(&jt);
    ws_traces_free(&t);
}

Test(trace, job_table_from_gzip_traces)
{
    /* Both traces gzip-compressed, the power one with a BOM and CRLF. */
    write_gz("summary_train.csv.gz", TRAIN);
    char crlf[2048] = "\xef\xbb\xbf";
    for (const char *s = POWER; *s; s++) {
        size_t n = strlen(crlf);
        if (*s == '\n') { crlf[n++] = '\r'; }
        crlf[n++] = *s;
        crlf[n] = '\0';
    }
    write_gz("summary_power_v100.csv.gz", crlf);
    ws_traces t;
    load_ok(&t, "v100");
    cr_assert_str_eq(t.train_path, tp("summary_train.csv.gz"));
    cr_assert_str_eq(t.power_path, tp("summary_power_v100.csv.gz"));
    ws_workload_spec s = toy_spec(16);
    ws_job_table jt;
    ws_error err = {""};
    cr_assert_eq(ws_job_build(&jt, &t, &s, 0.5, INFINITY, &err), 0, "%s", err.msg);
    check_toy_table(&jt, 0.5, INFINITY);
    ws_job_free(&jt);
    ws_traces_free(&t);
}

Test(trace, b0_capped_to_largest_power_batch_size)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    ws_traces t;
    load_ok(&t, "v100");
    ws_workload_spec s = toy_spec(1024);
    ws_job_table jt;
    ws_error err = {""};
    cr_assert_eq(ws_job_build(&jt, &t, &s, 0.5, INFINITY, &err), 0, "%s", err.msg);
    cr_assert_eq(jt.job.b0, 32);
    cr_assert_eq(jt.b0_index, 2);
    ws_job_free(&jt);
    /* Not capped when it is in range. */
    s = toy_spec(8);
    cr_assert_eq(ws_job_build(&jt, &t, &s, 0.5, INFINITY, &err), 0, "%s", err.msg);
    cr_assert_eq(jt.job.b0, 8);
    cr_assert_eq(jt.b0_index, 0);
    ws_job_free(&jt);
    ws_traces_free(&t);
}

Test(trace, b0_cap_uses_power_trace_sizes_even_without_train_rows)
{
    /* The power trace has bs 64 for w (no train row): b0 = 1024 is capped
     * to 64, which is not in B. */
    build_fails(TRAIN_HDR "w,n,8,o,0.1,0,0.5,3\nw,n,16,o,0.1,0,0.5,3\n",
                POWER_HDR "w,n,8,o,100,1,90\nw,n,16,o,100,1,90\nw,n,64,o,100,1,90\n",
                spec_of("w", "w", "n", "o", 0.5, 10, 1024),
                "workload 'w' on v100: default batch size b0 = 64 is not one of"
                " the batch sizes with train and power rows (8, 16)");
}

Test(trace, jobs_of_other_workloads_are_separate)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    ws_traces t;
    load_ok(&t, "v100");
    ws_workload_spec s = spec_of("o", "other", "net2", "adam", 0.9, 20, 8);
    ws_job_table jt;
    ws_error err = {""};
    cr_assert_eq(ws_job_build(&jt, &t, &s, 1.0, INFINITY, &err), 0, "%s", err.msg);
    cr_assert_str_eq(jt.job.workload, "o");
    cr_assert_eq(jt.job.n_bs, 1);
    cr_assert_eq(jt.job.bs[0], 8);
    cr_assert_eq(jt.job.knob_start[1], 1);
    cr_assert_eq(jt.job.knob_pl[0], 250);
    cr_assert_eq(jt.job.run_start[1], 1);
    cr_assert_eq(jt.job.run_epoch[0], 7.0);
    cr_assert_eq(jt.job.max_power, 250.0);
    cr_assert_eq(jt.n_pl_distinct, 1);
    cr_assert_eq(jt.default_recurrences, 2);
    ws_job_free(&jt);
    ws_traces_free(&t);
}

/* ------------------------------------------------------------ files */

Test(trace, both_plain_and_gz_train)
{
    write_file("summary_train.csv", TRAIN);
    write_gz("summary_train.csv.gz", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    load_fails("v100", NULL,
               "%s: both summary_train.csv and summary_train.csv.gz exist; keep one");
}

Test(trace, both_plain_and_gz_power)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    write_gz("summary_power_v100.csv.gz", POWER);
    load_fails("v100", NULL,
               "%s: both summary_power_v100.csv and summary_power_v100.csv.gz"
               " exist; keep one");
}

Test(trace, missing_train_trace)
{
    write_file("summary_power_v100.csv", POWER);
    load_fails("v100", NULL,
               "%s: no summary_train.csv or summary_train.csv.gz (run"
               " scripts/fetch-traces, or point --traces / WATTSIM_TRACES at"
               " the trace folder)");
}

Test(trace, unknown_gpu_lists_available)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    write_gz("summary_power_a40.csv.gz", POWER);
    load_fails("h100", NULL, "unknown GPU 'h100': %s has power traces for a40, v100");
}

Test(trace, limits_reach_the_csv_reader)
{
    char big[1024] = TRAIN_HDR;
    size_t n = strlen(big);
    memset(big + n, 'd', 600);
    strcpy(big + n + 600, ",net,8,sgd,0.1,0,0.5,3\n");
    write_file("summary_train.csv", big);
    write_file("summary_power_v100.csv", POWER);
    ws_csv_limits lim = {.max_line = 300, .max_bytes = 0};
    load_fails("v100", &lim, "%s/summary_train.csv:2: line longer than 300 bytes");
}

Test(trace, byte_limit_reaches_the_csv_reader)
{
    /* The train header line alone is 82 bytes: byte 51 is on line 1. The limit
     * must surface as such, not as an "empty file". */
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    ws_csv_limits lim = {.max_line = 0, .max_bytes = 50};
    load_fails("v100", &lim, "%s/summary_train.csv:1: more than 50 bytes after"
               " decompression; raise the limit if the file is genuine");
}

Test(trace, csv_errors_name_the_trace)
{
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,0.5,3\ntoy,n\xc3t,8,sgd,0.1,1,0.5,3\n",
                "%s/summary_train.csv:3: invalid UTF-8");
    power_fails(POWER_HDR "toy,net,8,sgd,100,\"1.0,90\n",
                "%s/summary_power_v100.csv:2: unterminated quoted field");
}

/* ------------------------------------------------------------ headers */

Test(trace, empty_file)
{
    train_fails("", "%s/summary_train.csv:1: empty file (expected a header line)");
    power_fails("\n\n", "%s/summary_power_v100.csv:1: empty file (expected a header line)");
}

Test(trace, empty_gzip_file)
{
    write_gz("summary_train.csv.gz", "");
    write_file("summary_power_v100.csv", POWER);
    load_fails("v100", NULL, "%s/summary_train.csv.gz:1: empty file (expected a header line)");
}

Test(trace, header_only)
{
    train_fails(TRAIN_HDR, "%s/summary_train.csv:2: no rows after the header");
    power_fails(POWER_HDR "\n", "%s/summary_power_v100.csv:2: no rows after the header");
}

Test(trace, missing_column)
{
    train_fails("dataset,network,batch_size,optimizer,learning_rate,run,target_metric\n"
                "toy,net,8,sgd,0.1,0,0.5\n",
                "%s/summary_train.csv:1: missing column 'target_epoch'");
    power_fails("dataset,network,batch_size,optimizer,time_per_epoch,average_power\n"
                "toy,net,8,sgd,1,90\n",
                "%s/summary_power_v100.csv:1: missing column 'power_limit'");
}

Test(trace, duplicate_column)
{
    train_fails("dataset,network,batch_size,optimizer,run,learning_rate,run,target_metric,target_epoch\n",
                "%s/summary_train.csv:1: column 'run' appears twice");
}

Test(trace, unknown_column)
{
    power_fails("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power,foo\n",
                "%s/summary_power_v100.csv:1: unknown column 'foo' (expected:"
                " dataset, network, batch_size, optimizer, power_limit,"
                " time_per_epoch, average_power, energy_error, gpus_per_job, max_power)");
    train_fails("dataset,network,batch_size,optimizer,lr,run,target_metric,target_epoch\n",
                "%s/summary_train.csv:1: unknown column 'lr' (expected:"
                " dataset, network, batch_size, optimizer, learning_rate, run,"
                " target_metric, target_epoch)");
}

/* ------------------------------------------------------------ rows */

Test(trace, wrong_field_count)
{
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,0.5,3\ntoy,net,8,sgd,0.1,1,0.5\n",
                "%s/summary_train.csv:3: 7 fields, but the header has 8");
    power_fails(POWER_HDR "\ntoy,net,8,sgd,100,1,90,7\n",
                "%s/summary_power_v100.csv:3: 8 fields, but the header has 7");
}

Test(trace, non_numeric_values)
{
    power_fails(POWER_HDR "toy,net,8,sgd,100,abc,90\n",
                "%s/summary_power_v100.csv:2: time_per_epoch: must be a number, got \"abc\"");
    power_fails(POWER_HDR "toy,net,8,sgd,100,1.5,90W\n",
                "%s/summary_power_v100.csv:2: average_power: must be a number, got \"90W\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,high,3\n",
                "%s/summary_train.csv:2: target_metric: must be a number, got \"high\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,,3\n",
                "%s/summary_train.csv:2: target_metric: must be a number, got \"\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,first,0.5,3\n",
                "%s/summary_train.csv:2: run: must be a number, got \"first\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,0.5,3 epochs\n",
                "%s/summary_train.csv:2: target_epoch: must be a number, got \"3 epochs\"");
}

Test(trace, nan_and_inf)
{
    power_fails(POWER_HDR "toy,net,8,sgd,100,1.5,nan\n",
                "%s/summary_power_v100.csv:2: average_power: must be a finite number, got \"nan\"");
    power_fails(POWER_HDR "toy,net,8,sgd,100,inf,90\n",
                "%s/summary_power_v100.csv:2: time_per_epoch: must be a finite number, got \"inf\"");
    power_fails(POWER_HDR "toy,net,8,sgd,100,1e999,90\n",
                "%s/summary_power_v100.csv:2: time_per_epoch: must be a finite number, got \"1e999\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,NaN,3\n",
                "%s/summary_train.csv:2: target_metric: must be a finite number, got \"NaN\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,0.5,Infinity\n",
                "%s/summary_train.csv:2: target_epoch: must be a finite number, got \"Infinity\"");
}

Test(trace, time_and_power_must_be_positive)
{
    power_fails(POWER_HDR "toy,net,8,sgd,100,-1.5,90\n",
                "%s/summary_power_v100.csv:2: time_per_epoch: must be positive, got \"-1.5\"");
    power_fails(POWER_HDR "toy,net,8,sgd,100,0,90\n",
                "%s/summary_power_v100.csv:2: time_per_epoch: must be positive, got \"0\"");
    power_fails(POWER_HDR "toy,net,8,sgd,100,1.5,-90\n",
                "%s/summary_power_v100.csv:2: average_power: must be positive, got \"-90\"");
    power_fails(POWER_HDR "toy,net,8,sgd,100,1.5,0.0\n",
                "%s/summary_power_v100.csv:2: average_power: must be positive, got \"0.0\"");
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,0,0.5,0\n",
                "%s/summary_train.csv:2: target_epoch: must be positive, got \"0\"");
}

Test(trace, batch_size_and_power_limit_positive_integers)
{
    train_fails(TRAIN_HDR "toy,net,12.5,sgd,0.1,0,0.5,3\n",
                "%s/summary_train.csv:2: batch_size: must be a positive integer, got \"12.5\"");
    train_fails(TRAIN_HDR "toy,net,-4,sgd,0.1,0,0.5,3\n",
                "%s/summary_train.csv:2: batch_size: must be a positive integer, got \"-4\"");
    train_fails(TRAIN_HDR "toy,net,0,sgd,0.1,0,0.5,3\n",
                "%s/summary_train.csv:2: batch_size: must be a positive integer, got \"0\"");
    train_fails(TRAIN_HDR "toy,net,1e3,sgd,0.1,0,0.5,3\n",
                "%s/summary_train.csv:2: batch_size: must be a positive integer, got \"1e3\"");
    train_fails(TRAIN_HDR "toy,net,,sgd,0.1,0,0.5,3\n",
                "%s/summary_train.csv:2: batch_size: must be a positive integer, got \"\"");
    power_fails(POWER_HDR "toy,net,8,sgd,99999999999,1,90\n",
                "%s/summary_power_v100.csv:2: power_limit: must be a positive integer, got \"99999999999\"");
    power_fails(POWER_HDR "toy,net,8,sgd,250.0,1,90\n",
                "%s/summary_power_v100.csv:2: power_limit: must be a positive integer, got \"250.0\"");
    power_fails(POWER_HDR "toy,net,8,sgd,-4,1,90\n",
                "%s/summary_power_v100.csv:2: power_limit: must be a positive integer, got \"-4\"");
    power_fails(POWER_HDR "toy,net,8,sgd,0,1,90\n",
                "%s/summary_power_v100.csv:2: power_limit: must be a positive integer, got \"0\"");
    power_fails(POWER_HDR "toy,net,x8,sgd,100,1,90\n",
                "%s/summary_power_v100.csv:2: batch_size: must be a positive integer, got \"x8\"");
}

Test(trace, run_must_be_an_integer)
{
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,1.5,0.5,3\n",
                "%s/summary_train.csv:2: run: must be an integer, got \"1.5\"");
    /* Integral but far outside a long: must not be converted blindly. */
    train_fails(TRAIN_HDR "toy,net,8,sgd,0.1,1e300,0.5,3\n",
                "%s/summary_train.csv:2: run: must be an integer, got \"1e300\"");
}

Test(trace, names_must_not_be_empty)
{
    train_fails(TRAIN_HDR "toy,,8,sgd,0.1,0,0.5,3\n",
                "%s/summary_train.csv:2: network: must not be empty, got \"\"");
    power_fails(POWER_HDR "\"\",net,8,sgd,100,1,90\n",
                "%s/summary_power_v100.csv:2: dataset: must not be empty, got \"\"");
}

Test(trace, duplicate_power_row)
{
    power_fails(POWER_HDR
                "toy,net,8,sgd,100,5.0,98\n"
                "toy,net,8,sgd,150,4.5,140\n"
                "toy,net,16,sgd,100,3.0,95\n"
                "toy,net,8,sgd,100,5.5,99\n",
                "%s/summary_power_v100.csv:5: duplicate power row (same dataset,"
                " network, optimizer, batch_size 8 and power_limit 100 as line 2)");
}

Test(trace, duplicate_train_run)
{
    /* learning_rate does not tell runs apart; the target metric does. */
    train_fails(TRAIN_HDR
                "toy,net,8,sgd,0.1,0,0.5,3\n"
                "toy,net,8,sgd,0.1,0,0.7,5\n"
                "toy,net,16,sgd,0.1,0,0.5,3\n"
                "toy,net,8,sgd,0.2,0,0.5,4\n",
                "%s/summary_train.csv:5: duplicate run (same workload,"
                " batch_size 8, run 0 and target_metric 0.5 as line 2)");
}

Test(trace, no_power_row_joins)
{
    write_file("summary_train.csv", TRAIN_HDR "a,b,8,c,0.1,0,0.5,3\n");
    write_file("summary_power_v100.csv", POWER_HDR "a,b,16,c,100,1,90\n");
    load_fails("v100", NULL,
               "%s/summary_power_v100.csv: no power row matches any train row"
               " of %s/summary_train.csv (dataset, network, optimizer, batch_size)");
}

/* ------------------------------------------------------------ job errors */

Test(trace, unknown_workload_dataset)
{
    build_fails(TRAIN, POWER, spec_of("imnet", "imagenet", "net", "sgd", 0.5, 10, 8),
                "%s/summary_train.csv: workload 'imnet': no rows for dataset"
                " imagenet, network net, optimizer sgd");
}

Test(trace, workload_without_power_rows)
{
    /* Known names, but no (dataset, network, optimizer) row in common. */
    build_fails(TRAIN, POWER, spec_of("mix", "toy", "net2", "sgd", 0.5, 10, 8),
                "workload 'mix' on v100: no batch size appears in both"
                " %s/summary_train.csv and %s/summary_power_v100.csv");
}

Test(trace, b0_outside_b)
{
    build_fails(TRAIN, POWER, toy_spec(24),
                "workload 'toy' on v100: default batch size b0 = 24 is not one"
                " of the batch sizes with train and power rows (8, 16, 32)");
}

Test(trace, batch_size_without_runs_at_target)
{
    /* bs 64 has rows only at target 0.7: it is in B (whatever the target),
     * so the job has no runs to draw from at bs 64. */
    build_fails(TRAIN_HDR
                "toy,net,8,sgd,0.1,0,0.5,3\n"
                "toy,net,64,sgd,0.1,0,0.7,3\n",
                POWER_HDR
                "toy,net,8,sgd,100,1,90\n"
                "toy,net,64,sgd,100,1,90\n",
                toy_spec(8),
                "%s/summary_train.csv: workload 'toy' has no runs at batch size 64"
                " for target_metric 0.5 (other target metrics have some); add the"
                " rows or pick another target");
}

/* ------------------------------------------------------------ the cache */

/* Two loads hold the same traces: rows, names and their index. */
static void assert_same_traces(const ws_traces *a, const ws_traces *b)
{
    cr_assert_eq(a->n_train, b->n_train);
    cr_assert_eq(a->n_power, b->n_power);
    cr_assert_eq(memcmp(a->train, b->train, a->n_train * sizeof *a->train), 0);
    cr_assert_eq(memcmp(a->power, b->power, a->n_power * sizeof *a->power), 0);
    cr_assert_eq(a->names.n, b->names.n);
    for (size_t i = 0; i < a->names.n; i++) cr_assert_str_eq(a->names.s[i], b->names.s[i]);
    cr_assert_eq(a->max_power, b->max_power);
    cr_assert_str_eq(a->power_path, b->power_path);
}

typedef struct loader { const char *gpu; const ws_traces *want; int bad; } loader;

static void *load_many(void *p)
{
    loader *l = p;
    for (int i = 0; i < 50; i++) {
        ws_traces t;
        ws_error err = {""};
        if (ws_traces_load(&t, tmp, l->gpu, NULL, &err)) { l->bad = 1; return NULL; }
        /* a copy is whole: a job builds from it (names found by their index) */
        ws_workload_spec spec = spec_of("toy", "toy", "net", "sgd", 0.5, 10, 16);
        ws_job_table jt;
        if (ws_job_build(&jt, &t, &spec, 0.5, INFINITY, &err)) l->bad = 1;
        else ws_job_free(&jt);
        if (t.n_power != l->want->n_power
            || memcmp(t.power, l->want->power, t.n_power * sizeof *t.power))
            l->bad = 1;
        ws_traces_free(&t);
    }
    return NULL;
}

Test(trace, cache_hands_out_copies_to_threads_and_reads_changed_files_again)
{
    write_file("summary_train.csv", TRAIN);
    write_file("summary_power_v100.csv", POWER);
    write_file("summary_power_a40.csv", POWER);
    ws_traces ref, ref_a40;
    load_ok(&ref, "v100");                        /* the cache is off: not counted */
    load_ok(&ref_a40, "a40");
    unsigned long long h0, m0, h, m;
    ws_trace_cache_stats(&h0, &m0);
    ws_trace_cache_set(2);
    pthread_t th[4];
    loader l[4];
    for (int i = 0; i < 4; i++) {
        l[i] = (loader){i % 2 ? "a40" : "v100", i % 2 ? &ref_a40 : &ref, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, load_many, &l[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_assert_not(l[i].bad, "thread %d", i);
    }
    ws_trace_cache_stats(&h, &m);
    cr_assert_eq(h + m - h0 - m0, 200);
    cr_assert_leq(m - m0, 4, "%llu misses", m - m0);  /* each GPU read once, or by each
                                                          thread while the other read it */
    ws_traces t;
    load_ok(&t, "v100");
    assert_same_traces(&t, &ref);
    ws_traces_free(&t);

    /* rewritten: the same size, another number, a later mtime */
    char path[600], *power = strdup(POWER);
    *strstr(power, "190\n") = '9';                  /* "990": the same length */
    snprintf(path, sizeof path, "%s/summary_power_v100.csv", tmp);
    struct stat st0;
    cr_assert_eq(stat(path, &st0), 0);
    write_file("summary_power_v100.csv", power);
    struct timespec ts[2] = {st0.st_atim, st0.st_mtim};
    ts[1].tv_nsec = (ts[1].tv_nsec + 1) % 1000000000;
    if (ts[1].tv_nsec == 0) ts[1].tv_sec++;
    cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
    ws_trace_cache_stats(&h0, &m0);
    load_ok(&t, "v100");
    ws_trace_cache_stats(&h, &m);
    cr_assert_eq(m, m0 + 1);
    int saw = 0;
    for (size_t i = 0; i < t.n_power; i++) saw |= t.power[i].power == 990;
    cr_assert(saw, "the rewritten file was not read again");
    ws_traces_free(&t);
    free(power);

    /* bounded: a third trace set pushes the least recently used out */
    write_file("summary_power_p100.csv", POWER);
    load_ok(&t, "p100");
    ws_traces_free(&t);
    load_ok(&t, "a40");                             /* v100 was used last: a40 went */
    ws_traces_free(&t);
    ws_trace_cache_stats(&h0, &m0);
    cr_assert_eq(m0, m + 2);
    ws_trace_cache_set(0);
    ws_traces_free(&ref);
    ws_traces_free(&ref_a40);
}
