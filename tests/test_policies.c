/*
 * The built-in policies called directly through their descriptors, with a
 * host whose random stream the test controls, on the fixture job
 * (fixture.h: B = {16, 32, 64}, b0 32, limits {100, 200}).
 */
#include <math.h>

#include "fixture.h"

static double fake_uniform(void *ctx) { return 0.0; }
static unsigned long fake_uniform_int(void *ctx, unsigned long n) { return 0; }
static double fake_gaussian(void *ctx, double sd) { return 0.0; }
static void fake_log(void *ctx, int level, const char *msg) {}
static const ws_host host = {WS_ABI_VERSION, NULL, fake_uniform, fake_uniform_int,
                             fake_gaussian, fake_log};

typedef struct env {
    ws_traces tr;
    ws_job_table jt;
    ws_registry *reg;
    void *bstate, *pstate;
    const ws_bso_type *bt;
    const ws_plo_type *pt;
    ws_value *bp, *pp;
    ws_ctx ctx;
} env;

static void open_env(env *e, const char *bso, const char *plo)
{
    memset(e, 0, sizeof *e);
    ws_ctx_init(&e->ctx, 1);
    ws_error err = {{0}};
    fixture_job(&e->tr, &e->jt, 0.5, 2.0);
    e->reg = ws_registry_new();
    if (bso) {
        e->bt = fixture_bso(e->reg, bso);
        cr_assert_eq(ws_params_resolve(e->bt->params, NULL, 0, "bso", &e->bp, &err), 0);
        e->bstate = calloc(1, e->bt->state_size + 1);
        cr_assert_eq(e->bt->create(e->bstate, e->bp, &host), 0);
        cr_assert_eq(e->bt->register_job(e->bstate, &e->jt.job, &e->ctx), 0);
    }
    if (plo) {
        e->pt = fixture_plo(e->reg, plo);
        cr_assert_eq(ws_params_resolve(e->pt->params, NULL, 0, "plo", &e->pp, &err), 0);
        e->pstate = calloc(1, e->pt->state_size + 1);
        cr_assert_eq(e->pt->create(e->pstate, e->pp, &host), 0);
        if (e->pt->register_job) cr_assert_eq(e->pt->register_job(e->pstate, &e->jt.job, &e->ctx), 0);
    }
}

static void close_env(env *e)
{
    if (e->bt) { e->bt->destroy(e->bstate); ws_params_free(e->bt->params, e->bp); }
    if (e->pt) { e->pt->destroy(e->pstate); ws_params_free(e->pt->params, e->pp); }
    free(e->bstate);
    free(e->pstate);
    ws_registry_free(e->reg);
    ws_job_free(&e->jt);
    ws_traces_free(&e->tr);
}

static int bso_predict(env *e)
{
    int bs = -1;
    cr_assert_eq(e->bt->predict(e->bstate, &e->jt.job, &e->ctx, &bs), 0);
    return bs;
}

static void bso_observe(env *e, int bs, double cost, int reached)
{
    cr_assert_eq(e->bt->observe(e->bstate, &e->jt.job, &e->ctx, bs, cost, reached), 0);
}

static int plo_predict(env *e, int bs)
{
    int pl = -1;
    cr_assert_eq(e->pt->predict(e->pstate, &e->jt.job, &e->ctx, bs, &pl), 0);
    return pl;
}

/* Pruning explores b0, then downwards until a failure, then upwards; round
 * 2 starts from the cheapest size that reached, within the survivors. */
Test(policies, zeus_pruning_order)
{
    env e;
    open_env(&e, "zeus", NULL);
    /* Round 1: 32 reaches (cost 50), 16 reaches (cost 40), 64 fails. */
    cr_expect_eq(bso_predict(&e), 32); bso_observe(&e, 32, 50, 1);
    cr_expect_eq(bso_predict(&e), 16); bso_observe(&e, 16, 40, 1);
    cr_expect_eq(bso_predict(&e), 64); bso_observe(&e, 64, 90, 0);
    /* Round 2 over {16, 32} from pivot 16: down is 16 alone, then up 32. */
    cr_expect_eq(bso_predict(&e), 16); bso_observe(&e, 16, 42, 1);
    cr_expect_eq(bso_predict(&e), 32); bso_observe(&e, 32, 52, 1);
    /* Thompson sampling over {16, 32} (noise 0 from this host): the arm of
     * higher mean reward (lower mean cost), 16, every time. */
    for (int i = 0; i < 5; i++) {
        cr_expect_eq(bso_predict(&e), 16);
        bso_observe(&e, 16, 41, 1);
    }
    close_env(&e);
}

Test(policies, zeus_observation_it_did_not_ask_for_does_not_advance_pruning)
{
    env e;
    open_env(&e, "zeus", NULL);
    cr_expect_eq(bso_predict(&e), 32);
    bso_observe(&e, 64, 10, 1);           /* a concurrent submission */
    cr_expect_eq(bso_predict(&e), 32, "still waiting for 32");
    bso_observe(&e, 32, 50, 1);
    cr_expect_eq(bso_predict(&e), 16);
    close_env(&e);
}

Test(policies, zeus_pivot_failure_goes_upwards)
{
    env e;
    open_env(&e, "zeus", NULL);
    cr_expect_eq(bso_predict(&e), 32); bso_observe(&e, 32, 50, 1);
    cr_expect_eq(bso_predict(&e), 16); bso_observe(&e, 16, 60, 0);
    cr_expect_eq(bso_predict(&e), 64); bso_observe(&e, 64, 30, 1);
    /* Round 2 over {32, 64} from pivot 64 (cheapest): 64, then down to 32. */
    cr_expect_eq(bso_predict(&e), 64); bso_observe(&e, 64, 31, 1);
    cr_expect_eq(bso_predict(&e), 32); bso_observe(&e, 32, 51, 1);
    cr_expect_eq(bso_predict(&e), 64);
    close_env(&e);
}

Test(policies, jit_picks_least_epoch_cost_ties_to_the_first_reported)
{
    env e;
    open_env(&e, NULL, "jit");
    cr_expect_eq(plo_predict(&e, 32), WS_PL_UNKNOWN);
    cr_assert_eq(e.pt->observe_profile(e.pstate, &e.jt.job, &e.ctx, 32, 200, 7.0), 0);
    cr_assert_eq(e.pt->observe_profile(e.pstate, &e.jt.job, &e.ctx, 32, 100, 7.0), 0);
    cr_expect_eq(plo_predict(&e, 32), 200, "a tie keeps the higher limit, reported first");
    cr_assert_eq(e.pt->observe_profile(e.pstate, &e.jt.job, &e.ctx, 16, 200, 9.0), 0);
    cr_assert_eq(e.pt->observe_profile(e.pstate, &e.jt.job, &e.ctx, 16, 100, 8.5), 0);
    cr_expect_eq(plo_predict(&e, 16), 100);
    cr_expect_eq(plo_predict(&e, 64), WS_PL_UNKNOWN);
    close_env(&e);
}

Test(policies, default_is_b0_at_the_highest_limit)
{
    env e;
    open_env(&e, "default", "default");
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(bso_predict(&e), 32);
        bso_observe(&e, 32, 1, 1);
    }
    cr_expect_eq(plo_predict(&e, 16), 200);
    close_env(&e);
}

/* grid: b0's limits from the top, then the other sizes ascending, then the
 * cheapest run that reached. A size that failed once is not tried at its
 * other limits (64 at 100 W is skipped). */
Test(policies, grid_order_then_cheapest)
{
    env e;
    open_env(&e, "grid", "grid");
    const int want[][2] = {{32, 200}, {32, 100}, {16, 200}, {16, 100}, {64, 200}};
    const double cost[] = {50, 45, 60, 40, 20};
    const int reached[] = {1, 1, 1, 1, 0};
    for (int i = 0; i < 5; i++) {
        int bs = bso_predict(&e), pl = plo_predict(&e, bs);
        cr_expect_eq(bs, want[i][0], "step %d: bs %d", i, bs);
        cr_expect_eq(pl, want[i][1], "step %d: pl %d", i, pl);
        bso_observe(&e, bs, cost[i], reached[i]);
        cr_assert_eq(e.pt->observe_run(e.pstate, &e.jt.job, &e.ctx, bs, pl, cost[i], reached[i]), 0);
    }
    /* 64 was cheapest but never reached: (16, 100 W) at cost 40 wins. */
    for (int i = 0; i < 3; i++) {
        int bs = bso_predict(&e);
        cr_expect_eq(bs, 16);
        cr_expect_eq(plo_predict(&e, bs), 100);
    }
    close_env(&e);
}

/* oracle: expected cost per knob from the table. 32 reaches in 5 epochs:
 * (32, 100): 0.5 * 5400 + 0.5 * 200 * 60 = 8700; (32, 200): 4000 + 5000 =
 * 9000; 16: (200) 4500 + 6000 = 10500, (100) 3200 + 8000 = 11200; 64 never
 * reaches. */
Test(policies, oracle_least_expected_cost)
{
    env e;
    open_env(&e, "oracle", "oracle");
    cr_expect_eq(bso_predict(&e), 32);
    cr_expect_eq(plo_predict(&e, 32), 100);
    cr_expect_eq(plo_predict(&e, 16), 200);
    cr_expect_eq(plo_predict(&e, 64), 200, "no knob of 64 qualifies: its highest limit");
    close_env(&e);
}

/* ------------------------------------------------ Thompson sampling, fast
 * ws_bandit_predict reads each arm's posterior (mean, sd) kept up to date
 * by ws_bandit_observe and draws without branching on the winner. Here it
 * runs next to the straightforward computation (posterior and sqrt(1 /
 * precision) per arm at every predict, the argmax with `theta >
 * best_theta || k == 0`), on the same draws: the standard deviations asked
 * for and the arm picked must be the same, bit for bit, on a long random
 * history, with and without a window, through arm changes. */
#include "bandit.h"

typedef struct rec_host {
    unsigned long x;        /* LCG state: the draws */
    double sd[16];          /* standard deviations asked for */
    int n_sd;
    unsigned long n_int;
} rec_host;

static double lcg01(rec_host *h)
{
    h->x = h->x * 6364136223846793005UL + 1442695040888963407UL;
    return (double)(h->x >> 11) * 0x1p-53;
}

static double rec_uniform(void *ctx) { return lcg01(ctx); }
static unsigned long rec_uniform_int(void *ctx, unsigned long n)
{
    rec_host *h = ctx;
    h->n_int++;
    return (unsigned long)(lcg01(h) * (double)n);
}
static double rec_gaussian(void *ctx, double sd)
{
    rec_host *h = ctx;
    cr_assert_lt(h->n_sd, 16);
    h->sd[h->n_sd++] = sd;
    return sd * (2.0 * lcg01(h) - 1.0);
}

/* The bandit's predict before the posteriors were kept: recomputed per arm. */
static int reference_predict(const ws_bandit *b, rec_host *h)
{
    int cold[16], n_cold = 0;
    for (int k = 0; k < b->n_arms; k++)
        if (b->stats[b->arms[k]].n < b->explore) cold[n_cold++] = b->arms[k];
    if (n_cold) return cold[rec_uniform_int(h, (unsigned long)n_cold)];
    int best = b->arms[0];
    double best_theta = -INFINITY;
    for (int k = 0; k < b->n_arms; k++) {
        double mean, prec;
        ws_bandit_posterior(b, b->arms[k], &mean, &prec);
        double theta = isinf(prec) ? mean : mean + rec_gaussian(h, sqrt(1.0 / prec));
        if (theta > best_theta || k == 0) {
            best_theta = theta;
            best = b->arms[k];
        }
    }
    return best;
}

static void bandit_matches_reference(long window, long explore)
{
    enum { N_BS = 9 };
    int bs[N_BS] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    ws_job job = {.n_bs = N_BS, .bs = bs};
    ws_bandit b;
    cr_assert_eq(ws_bandit_init(&b, &job, window, explore), 0);
    const int all[N_BS] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, some[4] = {1, 3, 4, 8};
    ws_bandit_set_arms(&b, all, N_BS);
    rec_host fast = {.x = 7}, ref = {.x = 7}, noise = {.x = 99};
    const ws_host h = {WS_ABI_VERSION, &fast, rec_uniform, rec_uniform_int, rec_gaussian,
                          fake_log};
    long draws = 0, exact_arms = 0, ties = 0;
    for (int step = 0; step < 3000; step++) {
        if (step == 1500) ws_bandit_set_arms(&b, some, 4);    /* pruning ends */
        fast.n_sd = ref.n_sd = 0;
        const int want = reference_predict(&b, &ref);
        const int got = ws_bandit_predict(&b, &h);
        cr_assert_eq(got, want, "step %d: arm %d, the reference picks %d", step, got, want);
        cr_assert_eq(fast.n_sd, ref.n_sd, "step %d: %d draws, the reference %d", step,
                     fast.n_sd, ref.n_sd);
        cr_assert_eq(fast.x, ref.x, "step %d: the streams diverged", step);
        for (int k = 0; k < fast.n_sd; k++)
            cr_assert(memcmp(&fast.sd[k], &ref.sd[k], sizeof(double)) == 0,
                      "step %d draw %d: sd %.17g, the reference %.17g", step, k, fast.sd[k],
                      ref.sd[k]);
        draws += fast.n_sd;
        /* Rewards: per arm a level plus noise; arms 2 and 8 always the
         * same reward (variance 0: infinite precision, no draw; often the
         * best, tied: the first wins); now and then an observation of a
         * size that is not the one predicted. */
        const int i = step % 7 == 6 ? (step / 7) % N_BS : got;
        const double r = i == 2 || i == 8 ? -45.0 : -(40.0 + 3.0 * i) - 10.0 * lcg01(&noise);
        ties += got == 2;
        cr_assert_eq(ws_bandit_observe(&b, i, r), 0);
        if (step % 11 == 10)        /* two observations between predicts */
            cr_assert_eq(ws_bandit_observe(&b, (i + 4) % N_BS, r - 1.0), 0);
        double m, prec;
        ws_bandit_posterior(&b, 2, &m, &prec);
        exact_arms += isinf(prec);
    }
    /* The history exercised both kinds of arm and the sampling. */
    cr_expect_gt(draws, 3000);
    cr_expect_gt(exact_arms, 0);
    cr_expect_gt(ties, 100);
    cr_expect_gt(fast.n_int, 0);
    ws_bandit_free(&b);
}

Test(policies, bandit_fast_predict_is_the_straightforward_one_bit_for_bit)
{
    bandit_matches_reference(0, 2);
    bandit_matches_reference(5, 2);
    bandit_matches_reference(0, 1);
}
