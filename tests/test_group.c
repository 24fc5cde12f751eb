/*
 * Group traces and their replay (wattsim/group.h):
 *  - without overlap, the replay is the sequential engine (same seed, same
 *    draws, same history), on the fetched Zeus traces;
 *  - on a tiny generated job with a scripted BSO, overlapping submissions
 *    follow the published simulator's rules (retry at the end with the same
 *    duration, best-known batch size while others run, cost 0 for a
 *    submission that never ran), checked against hand-computed histories;
 *  - bad group traces fail with their exact FILE:LINE message;
 *  - the synthetic generator is deterministic and hits the overlap rate;
 *  - zeus + jit replays of a synthetic trace equal the published
 *    simulator's (simulate_one_alibaba_group run from a Zeus checkout by
 *    scripts/zeus-reference), run for run.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <jansson.h>
#include <zlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/group.h"
#include "wattsim/plugin.h"
#include "wattsim/trace.h"
#include "run_cli.h"

#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"

/* ------------------------------------------------------------ fixture */

static void setup(void)
{
    tmpdir_make("/tmp/wsgroup.XXXXXX");
}

static void teardown(void) { tmpdir_remove(); }

TestSuite(group, .init = setup, .fini = teardown);

/* A group of rows given as {start, end, ratio} triples. */
static ws_group make_group(const double (*rows)[3], size_t n)
{
    ws_group g = {"g", NULL, calloc(n, sizeof(ws_group_row)), n};
    cr_assert_not_null(g.rows);
    for (size_t i = 0; i < n; i++)
        g.rows[i] = (ws_group_row){rows[i][0], rows[i][1], rows[i][2], (long)i + 2};
    return g;
}

/* Records collected from a sink. */
typedef struct recs {
    ws_group_record g[4096];
    ws_run_record r[4096];
    size_t n;
} recs;

static int collect_group(void *p, const ws_group_record *r)
{
    recs *h = p;
    cr_assert_lt(h->n, 4096);
    h->g[h->n++] = *r;
    return 0;
}

static int collect_run(void *p, const ws_run_record *r)
{
    recs *h = p;
    cr_assert_lt(h->n, 4096);
    h->r[h->n++] = *r;
    return 0;
}

/* ----------------------------------------- (a) no overlap = sequential */

static ws_registry *reg;

static void policies(const char *bso, const char *plo, unsigned long seed,
                     ws_bso **b, ws_plo **p)
{
    ws_error err = {{0}};
    const ws_bso_type *bt = ws_registry_bso(reg, bso, &err);
    cr_assert_not_null(bt, "%s", err.msg);
    const ws_plo_type *pt = ws_registry_plo(reg, plo, &err);
    cr_assert_not_null(pt, "%s", err.msg);
    ws_value *bv = NULL, *pv = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso", &bv, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_params_resolve(pt->params, NULL, 0, "plo", &pv, &err), 0, "%s", err.msg);
    *b = ws_bso_new(bt, bv, seed, &err);
    *p = ws_plo_new(pt, pv, seed, &err);
    cr_assert(*b && *p, "%s", err.msg);
    ws_params_free(bt->params, bv);
    ws_params_free(pt->params, pv);
}

/*
 * Replay `recurrences` rows far apart (each submission, and any chain of
 * retries, ends long before the next arrival) with runtime_ratio `ratio`
 * and compare with ws_simulate: same knobs, same outcomes, same order;
 * energy, time and cost scaled by `ratio`. beta = inf, where the two
 * engines agree even on failed tries (with early stopping, the sequential
 * engine's min_cost sums a recurrence's tries, the group replay's does not).
 */
static void check_sequential(const char *workload, const char *bso, const char *plo,
                             double eta, double beta, double ratio, unsigned long seed)
{
    ws_error err = {{0}};
    ws_catalogue cat = {0};
    ws_traces tr = {0};
    ws_job_table jt = {0};
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &cat, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_traces_load(&tr, TRACES, "v100", NULL, &err), 0,
                 "%s (run scripts/fetch-traces)", err.msg);
    const ws_workload_spec *spec = ws_catalogue_find(&cat, workload);
    cr_assert_not_null(spec);
    cr_assert_eq(ws_job_build(&jt, &tr, spec, eta, beta, &err), 0, "%s", err.msg);
    reg = ws_registry_new();

    const long n = jt.default_recurrences;
    static recs seq, grp;
    seq.n = grp.n = 0;
    ws_bso *b;
    ws_plo *p;
    policies(bso, plo, seed, &b, &p);
    ws_sim_params sp = {.recurrences = n, .seed = seed};
    ws_sim_totals st;
    cr_assert_eq(ws_simulate(&jt.job, b, p, &sp, collect_run, &seq, &st, &err), 0,
                 "%s", err.msg);
    ws_bso_free(b);
    ws_plo_free(p);

    double (*rows)[3] = calloc((size_t)n, sizeof *rows);
    for (long i = 0; i < n; i++) {
        rows[i][0] = 1e9 * (double)i;
        rows[i][1] = 1e9 * (double)i + 1000.0;
        rows[i][2] = ratio;
    }
    ws_group g = make_group((const double (*)[3])rows, (size_t)n);
    policies(bso, plo, seed, &b, &p);
    ws_group_totals gt;
    cr_assert_eq(ws_group_simulate(&jt.job, b, p, &g, seed, NULL, collect_group, &grp, &gt, &err),
                 0, "%s", err.msg);
    ws_bso_free(b);
    ws_plo_free(p);

    cr_assert_eq(grp.n, seq.n, "%s: %zu group runs, %zu sequential", workload, grp.n, seq.n);
    cr_assert_gt(seq.n, (size_t)n - 1);
    for (size_t i = 0; i < seq.n; i++) {
        const ws_run_record *s = &seq.r[i], *q = &grp.g[i].run;
        cr_expect(s->recurrence == q->recurrence && s->attempt == q->attempt
                  && s->bs == q->bs && s->pl == q->pl && s->epochs == q->epochs
                  && s->reached == q->reached && s->profiled == q->profiled,
                  "%s run %zu: sequential rec %ld try %d bs %d pl %d ep %d reached %d"
                  " profiled %d; group rec %ld try %d bs %d pl %d ep %d reached %d"
                  " profiled %d", workload, i, s->recurrence, s->attempt, s->bs, s->pl,
                  s->epochs, s->reached, s->profiled, q->recurrence, q->attempt, q->bs,
                  q->pl, q->epochs, q->reached, q->profiled);
        cr_expect_eq(q->energy_j, s->energy_j * ratio, "%s run %zu energy", workload, i);
        cr_expect_eq(q->time_s, s->time_s * ratio, "%s run %zu time", workload, i);
        const double cost = eta * (s->energy_j * ratio)
                            + (1 - eta) * jt.job.max_power * (s->time_s * ratio);
        cr_expect_eq(q->cost, cost, "%s run %zu cost", workload, i);
        cr_expect_eq(grp.g[i].concurrent, 0);
    }
    cr_expect_eq(gt.runs, st.runs);
    cr_expect_eq(gt.skipped, st.skipped);
    cr_expect_eq(gt.submissions, st.runs + st.skipped);
    cr_expect_eq(gt.concurrent, 0);
    cr_expect_eq(gt.final_bs, st.final_bs);
    cr_expect_eq(gt.final_pl, st.final_pl);
    if (ratio == 1.0) {
        cr_expect_eq(gt.energy_j, st.energy_j);
        cr_expect_eq(gt.time_s, st.time_s);
        cr_expect_eq(gt.cost, st.cost);
    }
    free(g.rows);
    free(rows);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    ws_catalogue_free(&cat);
}

Test(group, no_overlap_is_sequential_zeus, .timeout = 120)
{
    const char *w[] = {"cifar100", "imagenet", "squad", "librispeech", "movielens-1m",
                       "sentiment140"};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        for (unsigned long seed = 1; seed <= 3; seed++)
            check_sequential(w[i], "zeus", "jit", 0.5, INFINITY, 1.0, seed);
}

Test(group, no_overlap_is_sequential_scaled, .timeout = 120)
{
    check_sequential("librispeech", "zeus", "jit", 0.5, INFINITY, 2.5, 7);
    check_sequential("cifar100", "gts", "jit", 1.0, INFINITY, 0.25, 3);
}

Test(group, no_overlap_is_sequential_default_with_early_stopping, .timeout = 120)
{
    /* default always reaches here, so early stopping never differs. */
    check_sequential("squad", "default", "default", 0.5, 2.0, 1.0, 5);
    check_sequential("imagenet", "default", "default", 0.3, 2.0, 1.0, 9);
}

/* ----------------------------------- (b) overlap rules, scripted policies */

/*
 * The toy job, eta = 1 (cost = energy), max_epochs 10, batch sizes 8, 16,
 * 32 with one recorded run each, at the highest limit (200 W, MaxPower):
 *   bs  8: 8 s x 400 W = 3200 J per epoch, target epoch 1 -> E 3200, T 8
 *   bs 16: 5 s x 100 W =  500 J per epoch, target epoch 3 -> E 1500, T 15
 *   bs 32: 3 s x 150 W =  450 J per epoch, never reached  -> E 4500, T 30
 * The scripted BSO answers from a list and logs what it observes; the PLO
 * always takes the highest limit (no profiling).
 */
static const char *TOY_TRAIN =
    "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
    "toy,net,8,sgd,0.1,0,0.5,1\n"
    "toy,net,16,sgd,0.1,0,0.5,3\n"
    "toy,net,32,sgd,0.1,0,0.5,\n";
static const char *TOY_POWER =
    "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
    "toy,net,8,sgd,100,10,200\n"
    "toy,net,8,sgd,200,8,400\n"
    "toy,net,16,sgd,100,6,60\n"
    "toy,net,16,sgd,200,5,100\n"
    "toy,net,32,sgd,100,4,80\n"
    "toy,net,32,sgd,200,3,150\n";

static struct {
    const int *script;
    int n_script, predicts;
    int obs_bs[64], obs_reached[64];
    double obs_cost[64];
    long obs_rec[64];          /* the call context of each observation */
    int obs_attempt[64], obs_epochs[64], obs_started[64];
    int n_obs;
} sb;

static int sb_create(void *s, const ws_value *v, const ws_host *h) { return 0; }
static void sb_destroy(void *s) {}
static int sb_register(void *s, const ws_job *job, const ws_ctx *ctx)
{
    cr_expect(ctx->abi_version == WS_ABI_VERSION && ctx->recurrence == 0
              && ctx->attempt == 0 && ctx->recurrences > 0);
    cr_expect_eq(job->concurrent, 1, "the replay must set the concurrency flag");
    return 0;
}
static int sb_predict(void *s, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    cr_assert_lt(sb.predicts, sb.n_script, "predict called more often than scripted");
    *bs = sb.script[sb.predicts++];
    return 0;
}
static int sb_observe(void *s, const ws_job *job, const ws_ctx *ctx, int bs, double cost,
                      int reached)
{
    cr_assert_lt(sb.n_obs, 64);
    sb.obs_rec[sb.n_obs] = ctx->recurrence;
    sb.obs_attempt[sb.n_obs] = ctx->attempt;
    sb.obs_epochs[sb.n_obs] = ctx->run_epochs;
    sb.obs_started[sb.n_obs] = ctx->run_started;
    sb.obs_bs[sb.n_obs] = bs;
    sb.obs_cost[sb.n_obs] = cost;
    sb.obs_reached[sb.n_obs++] = reached;
    return 0;
}
static const ws_bso_type scripted_bso = {
    WS_ABI_VERSION, "scripted", "test", 0, NULL,
    sb_create, sb_destroy, sb_register, sb_predict, sb_observe, 0, 0,
};

static int mp_predict(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    *pl = ws_job_max_pl(job, ws_job_bs_index(job, bs));
    return 0;
}
static int mp_profile(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                      double c)
{
    return 0;
}
static const ws_plo_type max_plo = {
    WS_ABI_VERSION, "maxpl", "test", 0, NULL,
    sb_create, sb_destroy, mp_predict, mp_profile, NULL, NULL, 0, 0,
};

typedef struct want_run {
    long rec;
    int attempt, bs;
    double e, t, start, end;
    int epochs, reached, concurrent;
} want_run;

static int toy_replay(int b0, double beta, const int *script, int n_script,
                      const double (*rows)[3], size_t n, recs *out,
                      ws_group_totals *tot, ws_error *err)
{
    write_file("summary_train.csv", TOY_TRAIN);
    write_file("summary_power_v100.csv", TOY_POWER);
    ws_traces tr = {0};
    ws_job_table jt = {0};
    ws_workload_spec spec = {"toy", "toy", "net", "sgd", 0.5, 10, b0, NULL, NULL, 0, NULL, 0, NULL, 0};
    cr_assert_eq(ws_traces_load(&tr, tmp, "v100", NULL, err), 0, "%s", err->msg);
    cr_assert_eq(ws_job_build(&jt, &tr, &spec, 1.0, beta, err), 0, "%s", err->msg);
    cr_assert_eq(jt.job.max_power, 200.0);
    memset(&sb, 0, sizeof sb);
    sb.script = script;
    sb.n_script = n_script;
    ws_bso *b = ws_bso_new(&scripted_bso, NULL, 1, err);
    ws_plo *p = ws_plo_new(&max_plo, NULL, 1, err);
    cr_assert(b && p);
    ws_group g = make_group(rows, n);
    out->n = 0;
    int rc = ws_group_simulate(&jt.job, b, p, &g, 1, NULL, collect_group, out, tot, err);
    free(g.rows);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    return rc;
}

static void check_history(const recs *h, const want_run *w, size_t n, double ratio_of[])
{
    cr_assert_eq(h->n, n, "%zu runs recorded, expected %zu", h->n, n);
    for (size_t i = 0; i < n; i++) {
        const ws_group_record *g = &h->g[i];
        const ws_run_record *r = &g->run;
        cr_expect(r->recurrence == w[i].rec && r->attempt == w[i].attempt
                  && r->bs == w[i].bs && r->pl == 200 && r->epochs == w[i].epochs
                  && r->reached == w[i].reached && g->concurrent == w[i].concurrent
                  && r->profiled == 0,
                  "run %zu: got rec %ld try %d bs %d pl %d epochs %d reached %d conc %d;"
                  " want rec %ld try %d bs %d pl 200 epochs %d reached %d conc %d", i + 1,
                  r->recurrence, r->attempt, r->bs, r->pl, r->epochs, r->reached,
                  g->concurrent, w[i].rec, w[i].attempt, w[i].bs, w[i].epochs,
                  w[i].reached, w[i].concurrent);
        cr_expect(r->energy_j == w[i].e && r->time_s == w[i].t && r->cost == w[i].e,
                  "run %zu: E %.17g T %.17g cost %.17g, want E %g T %g cost %g", i + 1,
                  r->energy_j, r->time_s, r->cost, w[i].e, w[i].t, w[i].e);
        cr_expect(g->start == w[i].start && g->end == w[i].end,
                  "run %zu: [%.17g, %.17g], want [%g, %g]", i + 1, g->start, g->end,
                  w[i].start, w[i].end);
        cr_expect_eq(g->ratio, ratio_of[w[i].rec - 1], "run %zu ratio", i + 1);
    }
}

static void check_obs(const int *bs, const double *cost, const int *reached, int n)
{
    cr_assert_eq(sb.n_obs, n, "%d observations, expected %d", sb.n_obs, n);
    for (int i = 0; i < n; i++)
        cr_expect(sb.obs_bs[i] == bs[i] && sb.obs_cost[i] == cost[i]
                  && sb.obs_reached[i] == reached[i],
                  "observation %d: (%d, %g, %d), want (%d, %g, %d)", i + 1, sb.obs_bs[i],
                  sb.obs_cost[i], sb.obs_reached[i], bs[i], cost[i], reached[i]);
}

/*
 * b0 = 32, which never reaches: submissions that start while others run
 * use it until something reached. Timeline (A.. = submissions):
 *  t=0   r1 alone: predict -> 8.          A [0,10]   bs 8, reaches
 *  t=5   r2 (A runs): best known = b0 32. B [5,70]   bs 32, fails (ratio 2)
 *  t=8   r3 (A, B run): 32.               C [8,30]   bs 32, fails
 *  t=100 r4: complete A (10): min_cost 3200, best 8.
 *        C (30) failed, B runs: retry C' [30,52] with best 8 (same duration).
 *        Scan again: C' (52) ends before B (70): reaches.
 *        B (70) failed, nothing runs: retry B' [70,135] with predict -> 16.
 *        r4 (B' runs): best 8.            D [100,120]
 *  t=110 r5 (B', D run): 8.               E [110,130] ratio 0.5
 *  t=300 r6: complete D, E, B' (1500 < 3200: best 16).
 *        r6 alone: predict -> 8.          F [300,310]
 *  t=305 r7 (F runs): best known 16, not the latest (8).  G [305,320]
 *  end:  complete F, G.
 */
Test(group, overlap_retry_and_best_known_size)
{
    static const double rows[][3] = {{0, 10, 1},    {5, 70, 2},     {8, 30, 1},
                                     {100, 120, 1}, {110, 130, 0.5}, {300, 310, 1},
                                     {305, 320, 1}};
    static const int script[] = {8, 16, 8};
    double ratio_of[] = {1, 2, 1, 1, 0.5, 1, 1};
    static recs h;
    ws_group_totals tot;
    ws_error err = {{0}};
    cr_assert_eq(toy_replay(32, INFINITY, script, 3, rows, 7, &h, &tot, &err), 0, "%s",
                 err.msg);
    const want_run w[] = {
        {1, 1, 8, 3200, 8, 0, 10, 1, 1, 0},          /* A */
        {3, 1, 32, 4500, 30, 8, 30, 10, 0, 1},       /* C */
        {3, 2, 8, 3200, 8, 30, 52, 1, 1, 1},         /* C' */
        {2, 1, 32, 9000, 60, 5, 70, 10, 0, 1},       /* B, scaled x2 */
        {4, 1, 8, 3200, 8, 100, 120, 1, 1, 1},       /* D */
        {5, 1, 8, 1600, 4, 110, 130, 1, 1, 1},       /* E, scaled x0.5 */
        {2, 2, 16, 3000, 30, 70, 135, 3, 1, 0},      /* B', scaled x2 */
        {6, 1, 8, 3200, 8, 300, 310, 1, 1, 0},       /* F */
        {7, 1, 16, 1500, 15, 305, 320, 3, 1, 1},     /* G */
    };
    check_history(&h, w, 9, ratio_of);
    /* The BSO sees unscaled costs, in completion order. */
    const int obs_bs[] = {8, 32, 8, 32, 8, 8, 16, 8, 16};
    const double obs_cost[] = {3200, 4500, 3200, 4500, 3200, 3200, 1500, 3200, 1500};
    const int obs_reached[] = {1, 0, 1, 0, 1, 1, 1, 1, 1};
    check_obs(obs_bs, obs_cost, obs_reached, 9);
    /* Each observation's context names its trace row, try and epochs. */
    for (int i = 0; i < 9; i++)
        cr_expect(sb.obs_rec[i] == w[i].rec && sb.obs_attempt[i] == w[i].attempt
                  && sb.obs_epochs[i] == w[i].epochs && sb.obs_started[i] == 1,
                  "observation %d: context row %ld try %d epochs %d started %d", i + 1,
                  sb.obs_rec[i], sb.obs_attempt[i], sb.obs_epochs[i], sb.obs_started[i]);
    cr_expect_eq(sb.predicts, 3);
    cr_expect_eq(tot.submissions, 9);
    cr_expect_eq(tot.runs, 9);
    cr_expect_eq(tot.retries, 2);
    cr_expect_eq(tot.skipped, 0);
    cr_expect_eq(tot.concurrent, 6);
    cr_expect_eq(tot.energy_j, 3200 + 4500 + 3200 + 9000 + 3200 + 1600 + 3000 + 3200 + 1500);
    cr_expect_eq(tot.time_s, 8 + 30 + 8 + 60 + 8 + 4 + 30 + 8 + 15);
    cr_expect_eq(tot.final_bs, 16);
}

/*
 * Early stopping, beta 1.2. A submission whose budget is 0 never runs: the
 * BSO observes cost 0 and reached 0 (zeus_cost(0, 0) in the published
 * simulator), nothing is recorded, and it is retried at its end.
 *  t=0  r1: predict 16, reaches: min_cost 1500 (A [0,10]).
 *  t=20 r2: complete A. predict 8: budget floor(1.2*1500/3200) = 0 (B [20,30]).
 *  t=40 r3: complete B: observe (8, 0, 0); retry B' [30,40] with predict 16:
 *       budget floor(1800/500) = 3 = its target, reaches; B' ends at 40 <= 40,
 *       so it completes before r3 starts (alone: predict 16, C [40,50]).
 */
Test(group, never_started_submission)
{
    static const double rows[][3] = {{0, 10, 1}, {20, 30, 1}, {40, 50, 1}};
    static const int script[] = {16, 8, 16, 16};
    double ratio_of[] = {1, 1, 1};
    static recs h;
    ws_group_totals tot;
    ws_error err = {{0}};
    cr_assert_eq(toy_replay(16, 1.2, script, 4, rows, 3, &h, &tot, &err), 0, "%s", err.msg);
    const want_run w[] = {
        {1, 1, 16, 1500, 15, 0, 10, 3, 1, 0},
        {2, 2, 16, 1500, 15, 30, 40, 3, 1, 0},
        {3, 1, 16, 1500, 15, 40, 50, 3, 1, 0},
    };
    check_history(&h, w, 3, ratio_of);
    const int obs_bs[] = {16, 8, 16, 16};
    const double obs_cost[] = {1500, 0, 1500, 1500};
    const int obs_reached[] = {1, 0, 1, 1};
    check_obs(obs_bs, obs_cost, obs_reached, 4);
    cr_expect_eq(tot.submissions, 4);
    cr_expect_eq(tot.skipped, 1);
    cr_expect_eq(tot.retries, 1);
    cr_expect_eq(tot.runs, 3);
}

/* Equal end times complete in submission order; an arrival at exactly an
 * end time sees that submission completed. */
Test(group, ties_in_submission_order)
{
    static const double rows[][3] = {{0, 10, 1}, {5, 10, 1}, {10, 20, 1}};
    static const int script[] = {8, 16};
    double ratio_of[] = {1, 1, 1};
    static recs h;
    ws_group_totals tot;
    ws_error err = {{0}};
    cr_assert_eq(toy_replay(16, INFINITY, script, 2, rows, 3, &h, &tot, &err), 0, "%s",
                 err.msg);
    const want_run w[] = {
        {1, 1, 8, 3200, 8, 0, 10, 1, 1, 0},
        {2, 1, 16, 1500, 15, 5, 10, 3, 1, 1},
        {3, 1, 16, 1500, 15, 10, 20, 3, 1, 0},
    };
    check_history(&h, w, 3, ratio_of);
    cr_expect_eq(sb.predicts, 2);
}

Test(group, endless_retries_are_an_error)
{
    static const double rows[][3] = {{0, 1, 1}};
    static const int script[] = {32, 32, 32, 32, 32, 32, 32, 32, 32, 32,
                                 32, 32, 32, 32, 32, 32, 32, 32, 32, 32};
    static recs h;
    ws_group_totals tot;
    ws_error err = {{0}};
    cr_assert_eq(toy_replay(32, INFINITY, script, 20, rows, 1, &h, &tot, &err), -1);
    cr_expect_str_eq(err.msg, "toy on v100: the submission of trace row 1 did not reach"
                     " the target metric in 20 tries");
    cr_expect_eq(h.n, 20);
    cr_expect_eq(h.g[19].start, 19.0);
    cr_expect_eq(h.g[19].end, 20.0);
}

/* ------------------------------------------------------ (c) bad traces */

static ws_catalogue cat;

static void load_cat(void)
{
    ws_error err = {{0}};
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &cat, &err), 0, "%s", err.msg);
}

/* Load tp(name) holding `text`; expect the error fmt (each %s = the path). */
static void bad(const char *text, const char *fmt)
{
    write_file("g.csv", text);
    char path[512], expect[2048];
    snprintf(path, sizeof path, "%s", tp("g.csv"));
    snprintf(expect, sizeof expect, fmt, path, path);
    ws_group_trace t;
    ws_error err = {{0}};
    cr_expect_eq(ws_group_trace_load(path, &cat, NULL, &t, &err), -1, "expected: %s", expect);
    cr_expect_str_eq(err.msg, expect);
    cr_expect_null(t.groups);
}

#define HDR "group,start_time,end_time,dataset,runtime_ratio\n"

Test(group, bad_traces)
{
    load_cat();
    bad(HDR "a,0,10,squad,1\n"
            "a,10,20,squad,1\n"
            "a,5,30,squad,1\n",
        "%s:4: group 'a' starts at 5, before its previous row (line 3, start 10);"
        " rows of a group must be in start order");
    /* Other groups in between do not hide it. */
    bad(HDR "a,10,20,squad,1\n"
            "b,0,5,squad,1\n"
            "a,5,30,squad,1\n",
        "%s:4: group 'a' starts at 5, before its previous row (line 2, start 10);"
        " rows of a group must be in start order");
    bad(HDR "a,0,10,squad,1\n"
            "a,20,15,squad,1\n",
        "%s:3: end_time 15 is before start_time 20");
    bad(HDR "a,0,10,mnist,1\n",
        "%s:2: unknown dataset 'mnist' (the catalogue has: cifar100, imagenet, squad,"
        " librispeech, movielens-1m, sentiment140)");
    bad(HDR "a,0,10,squad,0\n", "%s:2: runtime_ratio 0 must be > 0");
    bad(HDR "a,0,10,squad,-1.5\n", "%s:2: runtime_ratio -1.5 must be > 0");
    bad(HDR "a,0,10,squad,x\n", "%s:2: runtime_ratio 'x' is not a number");
    bad(HDR "a,0,nan,squad,1\n", "%s:2: end_time 'nan' is not a finite number");
    bad(HDR "a,inf,10,squad,1\n", "%s:2: start_time 'inf' is not a finite number");
    bad(HDR "a,,10,squad,1\n", "%s:2: start_time '' is not a number");
    bad(HDR "a,0,10,squad\n", "%s:2: 4 fields, expected 5");
    bad(HDR ",0,10,squad,1\n", "%s:2: empty group name");
    bad("group,start_time,end_time,dataset\na,0,10,squad\n",
        "%s:1: missing column 'runtime_ratio' (a group trace has"
        " group,start_time,end_time,dataset,runtime_ratio)");
    bad("group,start_time,end_time,dataset,runtime_ratio,user\n",
        "%s:1: unknown column 'user' (a group trace has"
        " group,start_time,end_time,dataset,runtime_ratio)");
    bad("group,start_time,end_time,dataset,group\n", "%s:1: duplicate column 'group'");
    bad(HDR, "%s:1: no rows after the header");
    bad("", "%s:1: empty file; expected the header"
            " group,start_time,end_time,dataset,runtime_ratio");
    bad(HDR "a,0,10,squad,1\n"
            "a,20,30,imagenet,1\n",
        "%s:3: group 'a' has dataset 'imagenet' here but 'squad' at line 2;"
        " a group is one job");
    ws_catalogue_free(&cat);
}

Test(group, good_trace_grouped_like_pandas)
{
    load_cat();
    /* Columns in any order; rows of a group need not be contiguous; groups
     * come out sorted by name, rows in file order. */
    write_file("g.csv", "dataset,group,runtime_ratio,start_time,end_time\n"
                        "squad,zz,1,0,10\n"
                        "cifar100,aa,0.5,3,4\n"
                        "squad,zz,2,10,10\n"
                        "cifar100,aa,1.5,3,7.25\n");
    ws_group_trace t;
    ws_error err = {{0}};
    cr_assert_eq(ws_group_trace_load(tp("g.csv"), &cat, NULL, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.n, 2);
    cr_expect_eq(t.n_rows, 4);
    cr_expect_str_eq(t.groups[0].name, "aa");
    cr_expect_str_eq(t.groups[0].spec->name, "cifar100");
    cr_assert_eq(t.groups[0].n, 2);
    cr_expect(t.groups[0].rows[0].line == 3 && t.groups[0].rows[0].ratio == 0.5);
    cr_expect(t.groups[0].rows[1].line == 5 && t.groups[0].rows[1].end == 7.25);
    cr_expect_str_eq(t.groups[1].name, "zz");
    cr_expect_str_eq(t.groups[1].spec->name, "squad");
    cr_expect(t.groups[1].rows[1].start == 10 && t.groups[1].rows[1].end == 10
              && t.groups[1].rows[1].ratio == 2);
    ws_group_trace_free(&t);
    /* The paper's per-group seed: zlib.adler32(b"zz") = 0x017000f5. */
    cr_expect_eq(ws_group_seed("zz"), 0x017000f5ul);
    cr_expect_eq(ws_group_seed(""), 1ul);
    ws_catalogue_free(&cat);
}

/* ------------------------------------------------------------ (d) synth */

static char *synth_text(const ws_group_synth_params *p, long *ov)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    ws_error err = {{0}};
    cr_assert_eq(ws_group_synth(f, p, ov, &err), 0, "%s", err.msg);
    fclose(f);
    return buf;
}

Test(group, synth_deterministic_and_overlap_rate, .timeout = 60)
{
    load_cat();
    const char *ds[] = {"squad", "cifar100"};
    ws_group_synth_params p = {8, 500, 0.3, 0.5, 3600, 42, ds, 2};
    long ov1, ov2;
    char *a = synth_text(&p, &ov1), *b = synth_text(&p, &ov2);
    cr_expect_str_eq(a, b, "same parameters, different output");
    p.seed = 43;
    char *c = synth_text(&p, NULL);
    cr_expect_str_neq(a, c, "the seed changes nothing");
    /* A group does not depend on how many others there are. */
    p.seed = 42;
    p.groups = 3;
    char *d = synth_text(&p, NULL);
    cr_expect_eq(strncmp(a, d, strlen(d)), 0);

    write_file("s.csv", a);
    ws_group_trace t;
    ws_error err = {{0}};
    cr_assert_eq(ws_group_trace_load(tp("s.csv"), &cat, NULL, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.n, 8);
    long pairs = 0, overlapping = 0;
    double ratio_sum = 0, gap_sum = 0;
    for (size_t g = 0; g < t.n; g++) {
        cr_assert_eq(t.groups[g].n, 500);
        cr_expect_str_eq(t.groups[g].spec->name, ds[g % 2]);
        for (size_t j = 0; j < t.groups[g].n; j++) {
            const ws_group_row *r = &t.groups[g].rows[j];
            ratio_sum += r->ratio;
            if (j == 0) continue;
            pairs++;
            overlapping += r->start < r[-1].end;
            gap_sum += r->start - r[-1].start;
        }
    }
    cr_expect_eq(overlapping, ov1, "reported %ld overlapping pairs, file has %ld", ov1,
                 overlapping);
    /* 3992 Bernoulli(0.3) pairs: sd 0.0073; 0.3 +- 0.03 is 4 sd. */
    const double rate = (double)overlapping / (double)pairs;
    cr_expect(fabs(rate - 0.3) < 0.03, "overlap rate %g, asked 0.3", rate);
    /* Log-normal with mean 1, sigma 0.5: sd 0.53, of the mean of 4000 0.0084. */
    const double mean_ratio = ratio_sum / 4000.0;
    cr_expect(fabs(mean_ratio - 1.0) < 0.04, "mean runtime ratio %g", mean_ratio);
    /* Exponential gaps of mean 3600 s: sd of the mean of 3992 is 57 s. */
    const double mean_gap = gap_sum / (double)pairs;
    cr_expect(fabs(mean_gap - 3600) < 250, "mean gap %g s", mean_gap);
    ws_group_trace_free(&t);

    /* The extremes are exact. */
    p.groups = 4;
    p.jobs_per_group = 50;
    p.overlap = 0;
    free(synth_text(&p, &ov1));
    cr_expect_eq(ov1, 0);
    p.overlap = 1;
    p.ratio_sigma = 0;
    char *e = synth_text(&p, &ov1);
    cr_expect_eq(ov1, 4 * 49);
    int ones = 0;
    for (const char *q = e; (q = strstr(q, ",1.000000\n")); q++) ones++;
    cr_expect_eq(ones, 4 * 50, "sigma 0 must give runtime_ratio 1 everywhere");
    free(e);
    free(a);
    free(b);
    free(c);
    free(d);
    ws_catalogue_free(&cat);
}

/* ------------------------------------------------------------ the CLI */

static char *slurp_path(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    size_t len;
    char *s = cli_slurp(f, &len);
    fclose(f);
    return s;
}

Test(group, cli_synth_then_replay, .timeout = 120)
{
    char a[512], b[512], out[512];
    snprintf(a, sizeof a, "%s/a.csv", tmp);
    snprintf(b, sizeof b, "%s/b.csv", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    for (int i = 0; i < 2; i++) {
        cli_result r = cli_run((const char *[]){"wattsim", "groups", "synth", "--out",
                                                i ? b : a, "--groups", "3",
                                                "--jobs-per-group", "15", "--seed", "5",
                                                "--datasets", "squad,librispeech", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "SYNTHETIC"), "%s", r.out);
        cli_free(&r);
    }
    char *ta = slurp_path(a), *tb = slurp_path(b);
    cr_expect_str_eq(ta, tb, "synth is not deterministic");
    free(ta);
    free(tb);

    cli_result r = cli_run((const char *[]){"wattsim", "groups", "replay", "--trace", a,
                                            "--traces", TRACES, "--out", out, "--format",
                                            "csv", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    char path[600];
    snprintf(path, sizeof path, "%s/groups.csv", out);
    char *csv = slurp_path(path);
    cr_expect_str_eq(r.out, csv, "stdout and groups.csv differ");
    /* Header + 3 groups; each saving is 100 (1 - policy / default). */
    cr_expect_eq(cli_lines(csv), 4, "%s", csv);
    const char *line = strchr(csv, '\n') + 1;
    for (int g = 0; g < 3; g++) {
        double v[9];
        const char *p = line;
        for (int k = 0; k < 8; k++) p = strchr(p, ',') + 1;
        for (int k = 0; k < 9; k++) {
            v[k] = atof(p);
            p = strchr(p, ',') + 1;
        }
        for (int k = 0; k < 3; k++)
            cr_expect(fabs(v[6 + k] - 100 * (1 - v[k] / v[3 + k])) < 1e-9,
                      "group %d saving %d: %.17g", g, k, v[6 + k]);
        line = strchr(line, '\n') + 1;
    }
    free(csv);
    snprintf(path, sizeof path, "%s/history.csv", out);
    char *hist = slurp_path(path);
    cr_expect(strstr(hist, ",zeus/jit,1,1,") && strstr(hist, ",default/default,1,1,"),
              "history.csv lacks a policy's runs");
    free(hist);
    cli_free(&r);
    const char *files[] = {"groups.csv", "groups.json", "history.csv"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", out, files[i]);
        cr_expect_eq(unlink(path), 0, "no %s", path);
    }
    rmdir(out);

    /* A bad trace: one line on stderr naming FILE:LINE, exit 2, no files. */
    write_file("bad.csv", HDR "a,0,10,squad,1\na,5,3,squad,1\n");
    char bad_out[512], want[600];
    snprintf(bad_out, sizeof bad_out, "%s/badout", tmp);
    snprintf(want, sizeof want, "wattsim: %s:3: end_time 3 is before start_time 5\n",
             tp("bad.csv"));
    r = cli_run((const char *[]){"wattsim", "groups", "replay", "--trace", tp("bad.csv"),
                                 "--traces", TRACES, "--out", bad_out, NULL});
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, want);
    cr_expect_eq(r.out_len, 0);
    struct stat st;
    cr_expect_neq(stat(bad_out, &st), 0, "an output folder was created");
    cli_free(&r);
}

/* groups replay --price 0.25 (a constant $/kWh): every group's usd is its
 * energy_j / 3.6e6 * 0.25, for the policy and for default/default, in
 * the columns after final_bs,final_pl.
 * --objective carbon is refused in one line, exit 2. */
Test(group, cli_replay_charges_a_price, .timeout = 120)
{
    char a[512];
    snprintf(a, sizeof a, "%s/a.csv", tmp);
    cli_result r = cli_run((const char *[]){"wattsim", "groups", "synth", "--out", a,
                                            "--groups", "2", "--jobs-per-group", "4",
                                            "--datasets", "squad", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "groups", "replay", "--trace", a, "--traces",
                                 TRACES, "--price", "0.25", "--format", "csv", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *hdr = "group,dataset,rows,submissions,runs,retries,concurrent,skipped,"
                      "energy_j,time_s,cost,default_energy_j,default_time_s,default_cost,"
                      "energy_saving_pct,time_saving_pct,cost_saving_pct,final_bs,final_pl,"
                      "usd,default_usd,usd_saving_pct\n";
    cr_assert(!strncmp(r.out, hdr, strlen(hdr)), "%s", r.out);
    cr_expect_eq(cli_lines(r.out), 3, "%s", r.out);
    const char *line = strchr(r.out, '\n') + 1;
    for (int g = 0; g < 2; g++) {
        double v[22];
        const char *p = strchr(line, ',') + 1;
        p = strchr(p, ',') + 1;              /* group, dataset */
        for (int k = 2; k < 22; k++) {
            v[k] = atof(p);
            p = strchr(p, ',') + 1;
        }
        cr_expect(fabs(v[19] - v[8] / 3.6e6 * 0.25) <= 1e-12 * v[19], "group %d usd %.17g", g,
                  v[19]);
        cr_expect(fabs(v[20] - v[11] / 3.6e6 * 0.25) <= 1e-12 * v[20],
                  "group %d default usd %.17g", g, v[20]);
        line = strchr(line, '\n') + 1;
    }
    cli_free(&r);
    r = cli_run((const char *[]){"wattsim", "groups", "replay", "--trace", a, "--traces",
                                 TRACES, "--price", "0.25", "--objective", "price", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "wattsim: --objective: groups replay weighs energy only (its"
                     " costs and best batch sizes stay energy costs); drop --objective\n");
    cr_expect_eq(r.out_len, 0);
    cli_free(&r);
}

/* A policy's log lines in a replay name the group, its seed, the trace row
 * (recurrence) and the try (tests/plugins/rude.c logs in observe). */
Test(group, cli_replay_log_lines_name_the_group, .timeout = 60)
{
    write_file("one.csv", HDR "g-one,0,10,squad,1\ng-one,100,110,squad,1\n");
    cli_result r = cli_run((const char *[]){"wattsim", "groups", "replay", "--trace",
                                            tp("one.csv"), "--traces", TRACES, "--bso",
                                            WS_TEST_PLUGIN_DIR "/rude.so", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[256];
    for (int row = 1; row <= 2; row++) {
        snprintf(want, sizeof want, "wattsim: bso rude [group g-one, seed %lu, recurrence %d"
                 " try 1]: warning: observed\n", ws_group_seed("g-one"), row);
        cr_expect(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
    }
    cli_free(&r);
}

/* ------------------------------------------------ the published replay */

#define REF WS_SOURCE_DIR "/tests/data/reference"

static char *slurp_gz(const char *path)
{
    gzFile f = gzopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t n = 0, cap = 1 << 20;
    char *buf = malloc(cap);
    int got;
    while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)got;
        if (cap - n < 2) buf = realloc(buf, cap *= 2);
    }
    cr_assert_not_null(buf);
    cr_assert_eq(gzclose(f), Z_OK, "%s: corrupt", path);
    buf[n] = '\0';
    return buf;
}

/* Every group of tests/data/reference/groups-synth.csv (a synthetic trace:
 * 12 groups of 60 submissions, half of them overlapping the next), replayed
 * with zeus + jit on V100 at eta 0.5, beta 2, each with its seed
 * zlib.adler32(name): the published simulator's histories, run for run
 * (completion order, energy and time scaled by runtime_ratio). */
Test(group, zeus_replay_equals_the_published_simulators_run_for_run, .timeout = 120)
{
    ws_error err = {{0}};
    ws_catalogue ct;
    ws_traces tr;
    ws_group_trace gt;
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &ct, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_traces_load(&tr, TRACES, "v100", NULL, &err), 0,
                 "%s (run scripts/fetch-traces)", err.msg);
    cr_assert_eq(ws_group_trace_load(REF "/groups-synth.csv", &ct, NULL, &gt, &err), 0, "%s",
                 err.msg);
    ws_registry *rg = ws_registry_new();
    const ws_bso_type *bt = ws_registry_bso(rg, "zeus", &err);
    const ws_plo_type *pt = ws_registry_plo(rg, "jit", &err);
    cr_assert(bt && pt, "%s", err.msg);
    ws_value *bp = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso zeus", &bp, &err), 0);
    char *text = slurp_gz(REF "/zeus-v100-eta0.5-groups.jsonl.gz");
    static recs h;
    size_t groups = 0, runs = 0, concurrent = 0, retries = 0, not_same_bits = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert_not_null(o, "%s", je.text);
        const char *name = json_string_value(json_object_get(o, "group"));
        const json_t *ref = json_object_get(o, "history");
        cr_assert(name && json_is_array(ref));
        cr_assert_eq(json_real_value(json_object_get(o, "eta")), 0.5);
        cr_assert_eq(json_real_value(json_object_get(o, "beta")), 2.0);
        const ws_group *g = NULL;
        for (size_t i = 0; i < gt.n; i++)
            if (!strcmp(gt.groups[i].name, name)) g = &gt.groups[i];
        cr_assert_not_null(g, "group %s not in the trace", name);
        cr_assert_eq(ws_group_seed(name), (unsigned long)json_integer_value(json_object_get(o, "seed")));
        ws_job_table jt;
        cr_assert_eq(ws_job_build(&jt, &tr, g->spec, 0.5, 2.0, &err), 0, "%s", err.msg);
        ws_bso *b = ws_bso_new(bt, bp, ws_group_seed(name), &err);
        ws_plo *p = ws_plo_new(pt, NULL, ws_group_seed(name), &err);
        cr_assert(b && p, "%s", err.msg);
        ws_group_totals tot;
        h.n = 0;
        cr_assert_eq(ws_group_simulate(&jt.job, b, p, g, ws_group_seed(name), NULL, collect_group,
                                       &h, &tot, &err), 0, "%s: %s", name, err.msg);
        cr_assert_eq(h.n, json_array_size(ref), "%s: %zu runs, Zeus %zu", name, h.n,
                     json_array_size(ref));
        for (size_t k = 0; k < h.n; k++) {
            const json_t *e = json_array_get(ref, k);
            const ws_run_record *r = &h.g[k].run;
            const int bs = (int)json_integer_value(json_array_get(e, 0));
            const int pl = (int)json_integer_value(json_array_get(e, 1));
            const double E = json_real_value(json_array_get(e, 2));
            const double T = json_real_value(json_array_get(e, 3));
            const int reached = json_is_true(json_array_get(e, 4));
            cr_assert(r->bs == bs && r->pl == pl && r->reached == reached,
                      "%s run %zu: bs %d pl %d reached %d; Zeus %d %d %d", name, k + 1, r->bs,
                      r->pl, r->reached, bs, pl, reached);
            cr_assert(fabs(r->energy_j - E) <= 1e-9 * fabs(E) && fabs(r->time_s - T) <= 1e-9 * fabs(T),
                      "%s run %zu: E %.17g T %.17g; Zeus %.17g %.17g", name, k + 1, r->energy_j,
                      r->time_s, E, T);
            not_same_bits += r->energy_j != E || r->time_s != T;
        }
        groups++;
        runs += h.n;
        concurrent += (size_t)tot.concurrent;
        retries += (size_t)tot.retries;
        ws_plo_free(p);
        ws_bso_free(b);
        ws_job_free(&jt);
        json_decref(o);
    }
    cr_expect_eq(groups, gt.n);
    /* The trace exercised what the replay adds to the sequential engine. */
    cr_expect_gt(concurrent, 100);
    cr_expect_gt(retries, 5);
    cr_expect_eq(not_same_bits, 0);
    cr_log_info("%zu groups, %zu runs (%zu concurrent submissions, %zu retries) equal to Zeus'",
                groups, runs, concurrent, retries);
    free(text);
    ws_params_free(bt->params, bp);
    ws_registry_free(rg);
    ws_group_trace_free(&gt);
    ws_traces_free(&tr);
    ws_catalogue_free(&ct);
}
