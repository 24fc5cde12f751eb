/*
 * Multi-GPU jobs (issue 19, section 1) and the input-pipeline model
 * (section 5), against closed forms written here from first principles,
 * never computed by wattsim's own code.
 *
 * The trace: one job (dataset d, network n, optimizer o), b0 32, each row
 * a 2-GPU data-parallel job's power summed over both GPUs:
 *   bs  pl   time/epoch  power (2 GPUs)  runs (target epochs)
 *   16  100  20          170             4, 4
 *   16  200  15          300
 *   32  100  12          180             5, 5
 *   32  200  10          320
 * Zeus's rule (zeus/optimizer/batch_size/client.py sets max_power = power
 * limit x number of GPUs): cost = eta E + (1 - eta) MaxPower T, with
 * MaxPower = 200 W x gpus_per_job. The same rows said to be one GPU's
 * weigh time half as much, and at eta 0.4 the least-cost knob differs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_cli.h"
#include "tmpdir.h"
#include "wattsim/trace.h"
#include "wattsim/whatif.h"
#include "../sim/src/engine/run.h"

#define REL(a, b) (fabs((a) - (b)) <= 1e-12 * fmax(1.0, fabs(b)))

static const int BS[4] = {16, 16, 32, 32}, PL[4] = {100, 200, 100, 200};
static const double T[4] = {20, 15, 12, 10}, P[4] = {170, 300, 180, 320};
static const double EPOCHS[4] = {4, 4, 5, 5};   /* every run of bs 16: 4, of 32: 5 */

static void mk(void) { tmpdir_make("/tmp/wsmultigpu.XXXXXX"); }

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* The traces, with a gpus_per_job column of `gpus` (0: no column). */
static void traces(int gpus)
{
    put("summary_train.csv",
        "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
        "d,n,16,o,0.1,1,0.5,4\nd,n,16,o,0.1,2,0.5,4\n"
        "d,n,32,o,0.1,1,0.5,5\nd,n,32,o,0.1,2,0.5,5\n");
    char text[1024];
    int n = snprintf(text, sizeof text, "dataset,network,batch_size,optimizer,power_limit,"
                     "time_per_epoch,average_power%s\n", gpus ? ",gpus_per_job" : "");
    for (int k = 0; k < 4; k++) {
        n += snprintf(text + n, sizeof text - (size_t)n, "d,n,%d,o,%d,%g,%g", BS[k], PL[k],
                      T[k], P[k]);
        n += gpus ? snprintf(text + n, sizeof text - (size_t)n, ",%d\n", gpus)
                  : snprintf(text + n, sizeof text - (size_t)n, "\n");
    }
    put("summary_power_g1.csv", text);
}

/* The knob of least cost eta E + (1 - eta) M T per run, E and T over the
 * recorded runs (all reach the target): by hand. */
static int least_cost(double eta, double M)
{
    int best = -1;
    double bc = INFINITY;
    for (int k = 0; k < 4; k++) {
        double E = EPOCHS[k] * T[k] * P[k], t = EPOCHS[k] * T[k];
        double c = eta * E + (1 - eta) * M * t;
        cr_assert(fabs(c - bc) > 1e-6, "no ties in the fixture");
        if (c < bc) { bc = c; best = k; }
    }
    return best;
}

static double json_num(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    cr_assert(p, "%s not in %s", key, s);
    return strtod(p + strlen(key), NULL);
}

typedef struct planned {
    int bs, pl, gpus;
    double max_power;
} planned;

static planned plan(double eta, const char *const *extra)
{
    char e[32];
    snprintf(e, sizeof e, "%g", eta);
    const char *argv[40] = {"wattsim", "plan", "--traces", tmp, "--gpu", "g1", "--job",
                            "d/n/o", "--target", "0.5", "--max-epochs", "10", "--b0", "32",
                            "--eta", e, "--seeds", "1", "--recurrences", "2",
                            "--format", "json"};
    int n = 22;
    for (; extra && *extra; extra++) argv[n++] = *extra;
    argv[n] = NULL;
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    planned p;
    const char *rec = strstr(r.out, "\"recommended\": {");
    cr_assert(rec, "%s", r.out);
    p.bs = (int)json_num(rec, "\"bs\": ");
    p.pl = (int)json_num(rec, "\"pl\": ");
    p.max_power = json_num(r.out, "\"max_power\": ");
    p.gpus = (int)json_num(r.out, "\"gpus_per_job\": ");
    cli_free(&r);
    return p;
}

Test(multigpu, max_power_is_the_limit_times_the_gpus_and_moves_the_recommendation,
     .init = mk, .fini = tmpdir_remove)
{
    int differs = 0;
    for (int g = 1; g <= 2; g++) {
        traces(g == 1 ? 0 : g);             /* one GPU: the column left out */
        /* Few etas: each is a process (valgrind runs them slowly). */
        for (double eta = 0.2; eta < 0.9; eta += 0.2) {
            planned p = plan(eta, NULL);
            cr_assert_eq(p.gpus, g);
            cr_assert_eq(p.max_power, 200.0 * g, "max_power %g", p.max_power);
            int k = least_cost(eta, 200.0 * g);
            cr_assert(p.bs == BS[k] && p.pl == PL[k], "eta %g, %d GPU(s): plan says %d@%d,"
                      " the closed form %d@%d", eta, g, p.bs, p.pl, BS[k], PL[k]);
            differs += g == 2 && least_cost(eta, 200.0) != k;
        }
    }
    /* At eta 0.4: 32@100 costs 11520 against 32@200's 12400 with one GPU,
     * 18720 against 18400 with two. */
    cr_assert_eq(least_cost(0.4, 200), 2);
    cr_assert_eq(least_cost(0.4, 400), 3);
    cr_assert_geq(differs, 1, "the fixture must tell one GPU from two");
}

Test(multigpu, gpus_per_job_must_be_one_number_per_job, .init = mk, .fini = tmpdir_remove)
{
    traces(2);
    put("summary_power_g1.csv",
        "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power,"
        "gpus_per_job\n"
        "d,n,16,o,100,20,170,2\nd,n,16,o,200,15,300,2\n"
        "d,n,32,o,100,12,180,4\nd,n,32,o,200,10,320,2\n");
    ws_traces tr;
    ws_error err = {{0}};
    cr_assert_neq(ws_traces_load(&tr, tmp, "g1", NULL, &err), 0);
    cr_assert(strstr(err.msg, "summary_power_g1.csv:4: gpus_per_job is 4, but line 2 says 2"),
              "%s", err.msg);
    ws_traces_free(&tr);
}

/* A node of mixed models (issue 28 item 7): the trace's max_power column
 * is the job's MaxPower, the sum of its GPUs' own limits (here a 200 W
 * and a 100 W GPU: 300 W, not 2 x 200 W), and the cost weighs time by it:
 * at eta 0.4 least_cost picks by hand 32@100 at M = 300 (15120 against
 * 32@200's 15400), not 32@200 as at M = 400. */
static void traces_max_power(const char *mp_row2)
{
    traces(2);
    char text[1024];
    snprintf(text, sizeof text, "dataset,network,batch_size,optimizer,power_limit,"
             "time_per_epoch,average_power,gpus_per_job,max_power\n"
             "d,n,16,o,100,20,170,2,300\nd,n,16,o,200,15,300,2,%s\n"
             "d,n,32,o,100,12,180,2,300\nd,n,32,o,200,10,320,2,300\n", mp_row2);
    put("summary_power_g1.csv", text);
}

Test(multigpu, max_power_column_is_the_jobs_max_power, .init = mk, .fini = tmpdir_remove)
{
    traces_max_power("300");
    for (double eta = 0.2; eta < 0.9; eta += 0.2) {
        planned p = plan(eta, NULL);
        cr_assert_eq(p.gpus, 2);
        cr_assert_eq(p.max_power, 300.0, "max_power %g", p.max_power);
        int k = least_cost(eta, 300.0);
        cr_assert(p.bs == BS[k] && p.pl == PL[k], "eta %g: plan says %d@%d, the closed form"
                  " %d@%d", eta, p.bs, p.pl, BS[k], PL[k]);
    }
    cr_assert_eq(least_cost(0.4, 300), 2);
    cr_assert_eq(least_cost(0.4, 400), 3);
}

/* max_power is one figure per job, at least its largest limit, and says
 * how many GPUs it sums only with gpus_per_job. */
Test(multigpu, max_power_column_is_judged, .init = mk, .fini = tmpdir_remove)
{
    ws_traces tr;
    ws_error err = {{0}};
    traces_max_power("350");
    cr_assert_neq(ws_traces_load(&tr, tmp, "g1", NULL, &err), 0);
    cr_assert(strstr(err.msg, "summary_power_g1.csv:3: max_power is 350 W, but line 2 says"
                     " 300 W for the same dataset d"), "%s", err.msg);
    ws_traces_free(&tr);
    traces_max_power("150");
    err.msg[0] = 0;
    cr_assert_neq(ws_traces_load(&tr, tmp, "g1", NULL, &err), 0);
    cr_assert(strstr(err.msg, "summary_power_g1.csv:3") && strstr(err.msg, "max_power")
              && strstr(err.msg, "must be from the row's power_limit"), "%s", err.msg);
    ws_traces_free(&tr);
    traces_max_power("nan");
    err.msg[0] = 0;
    cr_assert_neq(ws_traces_load(&tr, tmp, "g1", NULL, &err), 0);
    cr_assert(strstr(err.msg, "must be a finite number"), "%s", err.msg);
    ws_traces_free(&tr);
    put("summary_power_g1.csv",
        "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power,"
        "max_power\nd,n,16,o,100,20,170,300\n");
    err.msg[0] = 0;
    cr_assert_neq(ws_traces_load(&tr, tmp, "g1", NULL, &err), 0);
    cr_assert(strstr(err.msg, "needs the column gpus_per_job"), "%s", err.msg);
    ws_traces_free(&tr);
}

static void job(int gpus, double eta, double beta, ws_traces *tr, ws_job_table *jt)
{
    traces(gpus);
    ws_error err = {{0}};
    cr_assert_eq(ws_traces_load(tr, tmp, "g1", NULL, &err), 0, "%s", err.msg);
    const ws_workload_spec spec = {(char *)"w", (char *)"d", (char *)"n", (char *)"o", 0.5,
                                   10, 32, NULL, NULL, 0, NULL, 0, NULL, 0};
    cr_assert_eq(ws_job_build(jt, tr, &spec, eta, beta, &err), 0, "%s", err.msg);
}

/* A catalogue's gpus_per_job stands for the trace's column: the same
 * traces without the column and a catalogue saying 2 plan as the traces
 * with a column of 2 (MaxPower 2 x 200 W); at eta 0.4 that is the knob
 * least_cost picks by hand at M = 400, not the one at M = 200. */
Test(multigpu, a_catalogue_says_gpus_per_job_where_the_trace_does_not, .init = mk,
     .fini = tmpdir_remove)
{
    traces(0);
    put("cat.yaml", "gpus: [g1]\nworkloads:\n  w: {dataset: d, network: n, optimizer: o,"
                    " target_metric: 0.5,\n      max_epochs: 10, b0: 32, gpus_per_job: 2}\n");
    char cat[512];
    snprintf(cat, sizeof cat, "%s/cat.yaml", tmp);
    const char *argv[] = {"wattsim", "plan", "--traces", tmp, "--gpu", "g1", "--catalogue",
                          cat, "--workload", "w", "--eta", "0.4", "--seeds", "1",
                          "--recurrences", "2", "--format", "json", NULL};
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_num(r.out, "\"max_power\": "), 400.0);
    cr_assert_eq(json_num(r.out, "\"gpus_per_job\": "), 2.0);
    const char *rec = strstr(r.out, "\"recommended\": {");
    cr_assert(rec, "%s", r.out);
    const int k = least_cost(0.4, 400);
    cr_assert_neq(k, least_cost(0.4, 200), "the fixture's recommendation moves");
    cr_assert_eq((int)json_num(rec, "\"bs\": "), BS[k]);
    cr_assert_eq((int)json_num(rec, "\"pl\": "), PL[k]);
    cli_free(&r);
}

/* A config's inline job says gpus_per_job where the trace does not, and
 * run's table and sweep.md say the job's MaxPower (2 x 200 W) in their
 * header; JSON has had max_power and gpus_per_job. */
Test(multigpu, inline_job_gpus_per_job_in_run_and_sweep_headers, .init = mk,
     .fini = tmpdir_remove)
{
    traces(0);
    put("r.yaml", "gpu: g1\njob: {name: j, dataset: d, network: n, optimizer: o,"
                  " target_metric: 0.5,\n      max_epochs: 10, b0: 32, gpus_per_job: 2}\n"
                  "seed: 1..2\nrecurrences: 3\n");
    char cfg[512], ro[512], so[512];
    snprintf(cfg, sizeof cfg, "%s/r.yaml", tmp);
    snprintf(ro, sizeof ro, "%s/ro", tmp);
    snprintf(so, sizeof so, "%s/so", tmp);
    const char *line = "MaxPower 400 W for j on g1: 2 GPUs per job at 200 W";
    const char *run[] = {"wattsim", "run", cfg, "--traces", tmp, "--out", ro, NULL};
    cli_result r = cli_run(run);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(!strncmp(r.out, line, strlen(line)), "%s", r.out);
    cli_free(&r);
    const char *sweep[] = {"wattsim", "sweep", cfg, "--traces", tmp, "--out", so,
                           "--no-plot", "--quiet", NULL};
    r = cli_run(sweep);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    char md[600];
    snprintf(md, sizeof md, "%s/sweep.md", so);
    FILE *f = fopen(md, "r");
    cr_assert(f);
    char first[256] = "";
    cr_assert(fgets(first, sizeof first, f));
    fclose(f);
    cr_assert(!strncmp(first, line, strlen(line)), "%s", first);
    /* one GPU: no such line (the single-GPU outputs are as they were) */
    put("r.yaml", "gpu: g1\njob: {name: j, dataset: d, network: n, optimizer: o,"
                  " target_metric: 0.5,\n      max_epochs: 10, b0: 32}\nseed: 1..2\n"
                  "recurrences: 3\n");
    snprintf(ro, sizeof ro, "%s/ro1", tmp);
    const char *run1[] = {"wattsim", "run", cfg, "--traces", tmp, "--out", ro, NULL};
    r = cli_run(run1);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.out, "MaxPower"), "%s", r.out);
    cli_free(&r);
}

/* Just-in-time profiling's epoch cost and early stopping's epoch price
 * weigh time by maxPL(bs) x gpus_per_job. */
Test(multigpu, epoch_costs_price_time_at_every_gpu, .init = mk, .fini = tmpdir_remove)
{
    const double eta = 0.4, beta = 2.0;
    ws_traces tr;
    ws_job_table jt;
    job(2, eta, beta, &tr, &jt);
    const ws_job *j = &jt.job;
    cr_assert_eq(j->gpus_per_job, 2);
    cr_assert_eq(ws_job_gpus(j), 2);
    for (int k = 0; k < 4; k++) {
        /* maxPL of both batch sizes is 200 W; two GPUs: 400 W */
        double want = (eta * P[k] + (1 - eta) * 400.0) * T[k];
        cr_assert(REL(ws_job_epoch_cost(j, k / 2, k), want), "knob %d: %.17g vs %.17g", k,
                  ws_job_epoch_cost(j, k / 2, k), want);
    }
    /* A run of 32@100 with the least cost so far 10000: its budget is
     * floor(beta * 10000 / (eta e + (1 - eta) 400 t)) epochs,
     * e = 12 * 180 = 2160 J, t = 12 s: floor(20000 / 3744) = 5. */
    ws_rng rng;
    ws_rng_seed(&rng, 1);
    ws_outcome o;
    ws_run_outcome(j, &rng, 1, 2, 0, 10000.0, &o);
    cr_assert_eq(o.budget, floor(beta * 10000.0 / (eta * 2160 + (1 - eta) * 400 * 12)));
    cr_assert_eq(o.budget, 5.0);
    cr_assert(REL(o.cost, eta * 5 * 2160 + (1 - eta) * 400 * 60), "cost %g", o.cost);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

static int apply(const ws_job_table *in, ws_whatif *w, ws_job_table *out, char *note,
                 size_t n, ws_error *err)
{
    return ws_whatif_apply(in, w, out, note, n, err);
}

/* --job-power-cap W: a knob is unavailable when gpus_per_job x its limit
 * passes W; --power-cap stays per GPU. */
Test(multigpu, job_power_cap_counts_every_gpu, .init = mk, .fini = tmpdir_remove)
{
    ws_traces tr;
    ws_job_table jt, out;
    job(2, 0.5, 2.0, &tr, &jt);
    ws_error err = {{0}};
    char note[512];
    /* 2 x 200 = 400 > 300 >= 2 x 100: only the 100 W knobs stay. */
    ws_whatif w = {.job_power_cap = 300, .where_job_cap = "--job-power-cap"};
    cr_assert_eq(apply(&jt, &w, &out, note, sizeof note, &err), 0, "%s", err.msg);
    cr_assert_eq(out.job.knob_start[out.job.n_bs], 2);
    for (int k = 0; k < 2; k++) cr_assert_eq(out.job.knob_pl[k], 100);
    cr_assert_eq(out.job.max_power, 400.0, "MaxPower stays the uncapped job's");
    cr_assert_str_eq(note, "job power cap 300 W (150 W per GPU of 2): the default knob is"
                     " now b0 32 at 100 W (was 200 W)");
    ws_job_free(&out);
    /* 2 x 200 = 400 is not above 400: every knob stays. */
    ws_whatif w4 = {.job_power_cap = 400};
    cr_assert_eq(apply(&jt, &w4, &out, NULL, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(out.job.knob_start[out.job.n_bs], 4);
    ws_job_free(&out);
    /* The same limit per GPU keeps the 200 W knobs: 200 <= 300. */
    ws_whatif w1 = {.power_cap = 300};
    cr_assert_eq(apply(&jt, &w1, &out, NULL, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(out.job.knob_start[out.job.n_bs], 4);
    ws_job_free(&out);
    /* 2 x 100 = 200 > 150: b0 has no limit left. */
    ws_whatif w2 = {.job_power_cap = 150, .where_job_cap = "--job-power-cap"};
    cr_assert_neq(apply(&jt, &w2, &out, NULL, 0, &err), 0);
    cr_assert_str_eq(err.msg, "--job-power-cap: job power cap 150 W (75 W per GPU of 2)"
                     " leaves the default batch size 32 of w on g1 no power limit (its"
                     " lowest is 100 W)");
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* --input-rate R --samples-per-epoch N with idle power W per GPU: an epoch
 * takes max(t, N / R); while input-bound the job's g GPUs wait at g W:
 * e' = t p + (N / R - t) g W. On every knob, for one GPU and two. */
Test(multigpu, input_rate_is_max_of_trace_and_pipeline_time, .init = mk,
     .fini = tmpdir_remove)
{
    const double R = 900, N = 11700, W = 60;     /* N / R = 13 s */
    for (int g = 1; g <= 2; g++) {
        ws_traces tr;
        ws_job_table jt, out;
        job(g, 0.5, 2.0, &tr, &jt);
        ws_whatif w = {.input_rate = R, .samples_per_epoch = N, .idle_power = W};
        ws_error err = {{0}};
        cr_assert_eq(apply(&jt, &w, &out, NULL, 0, &err), 0, "%s", err.msg);
        cr_assert_eq(out.job.knob_start[out.job.n_bs], 4);
        int bound = 0;
        for (int k = 0; k < 4; k++) {
            const double tin = N / R;
            const double t2 = T[k] > tin ? T[k] : tin;
            const double e2 = T[k] * P[k] + (t2 - T[k]) * g * W;
            cr_assert(REL(out.job.knob_time[k], t2), "knob %d: %g s", k, out.job.knob_time[k]);
            cr_assert(REL(out.job.knob_time[k] * out.job.knob_power[k], e2),
                      "%d GPU(s), knob %d: %g J per epoch, want %g", g, k,
                      out.job.knob_time[k] * out.job.knob_power[k], e2);
            bound += tin > T[k];
        }
        /* 32@100 (12 s) and 32@200 (10 s) wait; 16@* (20, 15 s) do not. */
        cr_assert_eq(bound, 2);
        ws_job_free(&out);
        ws_job_free(&jt);
        ws_traces_free(&tr);
    }
}

/* --input-stall S with idle power W per GPU: t' = t / (1 - S), and the
 * job's g GPUs wait at g W: e' = t p + (t' - t) g W. */
Test(multigpu, input_stall_waits_at_every_gpu, .init = mk, .fini = tmpdir_remove)
{
    const double S = 0.2, W = 45;
    for (int g = 1; g <= 2; g++) {
        ws_traces tr;
        ws_job_table jt, out;
        job(g, 0.5, 2.0, &tr, &jt);
        ws_whatif w = {.input_stall = S, .idle_power = W};
        ws_error err = {{0}};
        cr_assert_eq(apply(&jt, &w, &out, NULL, 0, &err), 0, "%s", err.msg);
        for (int k = 0; k < 4; k++) {
            const double t2 = T[k] / (1 - S), e2 = T[k] * P[k] + (t2 - T[k]) * g * W;
            cr_assert(REL(out.job.knob_time[k], t2), "knob %d: %g s", k, out.job.knob_time[k]);
            cr_assert(REL(out.job.knob_time[k] * out.job.knob_power[k], e2),
                      "%d GPU(s), knob %d: %g J per epoch, want %g", g, k,
                      out.job.knob_time[k] * out.job.knob_power[k], e2);
        }
        ws_job_free(&out);
        ws_job_free(&jt);
        ws_traces_free(&tr);
    }
}

/* While input-bound a lower limit costs no time: both of 32's limits take
 * N / R, so the plan picks the cheaper-energy one whatever eta. */
Test(multigpu, input_bound_lower_limits_are_free, .init = mk, .fini = tmpdir_remove)
{
    traces(2);
    const char *const extra[] = {"--input-rate", "900", "--samples-per-epoch", "11700",
                                 "--idle-power", "60", NULL};
    for (double eta = 0.1; eta < 0.95; eta += 0.4) {
        planned p = plan(eta, extra);
        /* Per run by hand, MaxPower 400: 32@100 5 x 13 s, 5 (12 x 180 + 1 x 120) J;
         * 32@200 5 x 13 s, 5 (10 x 320 + 3 x 120) J; 16@100 4 x 20 s, 4 x 3400 J;
         * 16@200 4 x 15 s, 4 x 4500 J. */
        const double E[4] = {4 * 3400.0, 4 * 4500.0, 5 * (2160.0 + 120), 5 * (3200.0 + 360)};
        const double Tt[4] = {80, 60, 65, 65};
        int best = 0;
        for (int k = 1; k < 4; k++)
            if (eta * E[k] + (1 - eta) * 400 * Tt[k] < eta * E[best] + (1 - eta) * 400 * Tt[best])
                best = k;
        cr_assert(p.bs == BS[best] && p.pl == PL[best], "eta %g: %d@%d, want %d@%d", eta,
                  p.bs, p.pl, BS[best], PL[best]);
        /* 32@200 takes 32@100's time for more energy: never chosen. */
        cr_assert_neq(best, 3);
    }
}
