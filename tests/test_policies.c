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
static double fake_normal(void *ctx, double loc, double sd) { return loc; }
static int fake_choice(void *ctx, long n, long k, long *out)
{
    for (long i = 0; i < k; i++) out[i] = i;
    return 0;
}
static int fake_permutation(void *ctx, long n, long *out) { return fake_choice(ctx, n, n, out); }
/* No noise: every draw is its mean, every order the identity. */
static const ws_host host = {WS_ABI_VERSION, NULL, fake_uniform, fake_uniform_int,
                             fake_gaussian, fake_log, fake_normal, fake_choice,
                             fake_permutation, NULL, NULL, 1};

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

/* ------------------------------------------------ Thompson sampling
 * ws_bandit refits an arm once, at the predict after its observations,
 * and reuses the other arms' posteriors. Here it runs next to a direct
 * transcription of Zeus' GaussianTS as the BSOs drive it (every
 * observation refits its arm at once, as observe does in Python; predict
 * draws the exploration order, then a normal per arm), each on its own
 * numpy stream of the same seed: the arms picked and the streams must stay
 * the same, bit for bit, on a long random history, with and without a
 * window, through arm changes and observations of sizes not predicted. */
#include "bandit.h"
#include "wattsim/npreduce.h"
#include "wattsim/rng.h"

typedef struct rng_host {
    ws_rng r;
    unsigned long normals, choices;
} rng_host;

static double rh_uniform(void *ctx) { return ws_rng_random(&((rng_host *)ctx)->r); }
static unsigned long rh_uniform_int(void *ctx, unsigned long n)
{
    return n ? ws_rng_integers(&((rng_host *)ctx)->r, n) : 0;
}
static double rh_gaussian(void *ctx, double sd) { return ws_rng_normal(&((rng_host *)ctx)->r, 0.0, sd); }
static double rh_normal(void *ctx, double loc, double sd)
{
    ((rng_host *)ctx)->normals++;
    return ws_rng_normal(&((rng_host *)ctx)->r, loc, sd);
}
static int rh_choice(void *ctx, long n, long k, long *out)
{
    ((rng_host *)ctx)->choices++;
    return ws_rng_choice(&((rng_host *)ctx)->r, n, k, (int64_t *)out);
}
static int rh_permutation(void *ctx, long n, long *out)
{
    return ws_rng_permutation(&((rng_host *)ctx)->r, n, (int64_t *)out);
}

/* GaussianTS, eagerly: per batch-size index the rewards, and the arm's
 * parameters refitted at every observation. */
enum { N_BS = 9, MAX_OBS = 8000 };
typedef struct zeus_ts {
    double rewards[N_BS][MAX_OBS];
    long n[N_BS];
    double mean[N_BS], prec[N_BS];
    long n_obs[N_BS];          /* arm_num_observations */
    int arms[N_BS], n_arms;
    long window, explore;
    ws_rng r;
} zeus_ts;

static void ts_fit(zeus_ts *z, int i)
{
    const long nf = z->window > 0 && z->n[i] > z->window ? z->window : z->n[i];
    const double *x = z->rewards[i] + (z->n[i] - nf);
    const double var = ws_np_var(x, (size_t)nf);
    const double rp = var == 0.0 ? INFINITY : 1.0 / var;   /* np.reciprocal */
    if (rp == INFINITY) {
        z->prec[i] = INFINITY;
        z->mean[i] = ws_np_mean(x, (size_t)nf);
    } else {
        z->prec[i] = 0.0 + (double)nf * rp;
        z->mean[i] = (0.0 * 0.0 + rp * ws_np_sum(x, (size_t)nf)) / z->prec[i];
    }
    z->n_obs[i] = nf;
}

static int ts_predict(zeus_ts *z)
{
    int64_t order[N_BS];
    cr_assert_eq(ws_rng_choice(&z->r, z->n_arms, z->n_arms, order), 0);
    for (int k = 0; k < z->n_arms; k++)
        if (z->n_obs[z->arms[order[k]]] < z->explore) return z->arms[order[k]];
    int best = -1;
    double best_theta = 0;
    for (int k = 0; k < z->n_arms; k++) {
        const int a = z->arms[k];
        const double theta = ws_rng_normal(&z->r, z->mean[a], sqrt(1.0 / z->prec[a]));
        if (best < 0 || theta > best_theta) {
            best = a;
            best_theta = theta;
        }
    }
    return best;
}

static double lcg01(unsigned long *x)
{
    *x = *x * 6364136223846793005UL + 1442695040888963407UL;
    return (double)(*x >> 11) * 0x1p-53;
}

static void bandit_matches_gaussian_ts(long window, long explore, uint64_t seed)
{
    int bs[N_BS] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    ws_job job = {.n_bs = N_BS, .bs = bs};
    ws_bandit b;
    cr_assert_eq(ws_bandit_init(&b, &job, window, explore), 0);
    static zeus_ts z;
    memset(&z, 0, sizeof z);
    z.window = window;
    z.explore = explore;
    const int all[N_BS] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, some[4] = {1, 3, 4, 8};
    ws_bandit_set_arms(&b, all, N_BS);
    memcpy(z.arms, all, sizeof all);
    z.n_arms = N_BS;
    rng_host rh = {0};
    ws_rng_seed(&rh.r, seed);
    ws_rng_seed(&z.r, seed);
    const ws_host h = {WS_ABI_VERSION, &rh, rh_uniform, rh_uniform_int, rh_gaussian,
                       fake_log, rh_normal, rh_choice, rh_permutation, NULL, NULL, seed};
    unsigned long noise = 99;
    long exact = 0, ties = 0, explored = 0;
    for (int step = 0; step < 3000; step++) {
        if (step == 1500) {                   /* pruning ends */
            ws_bandit_set_arms(&b, some, 4);
            memcpy(z.arms, some, sizeof some);
            z.n_arms = 4;
        }
        const unsigned long normals = rh.normals;
        const int want = ts_predict(&z);
        const int got = ws_bandit_predict(&b, &h);
        cr_assert_eq(got, want, "step %d: arm %d, GaussianTS picks %d", step, got, want);
        cr_assert(memcmp(&rh.r, &z.r, sizeof z.r) == 0, "step %d: the streams diverged", step);
        explored += rh.normals == normals;
        /* Rewards: per arm a level plus noise; arms 2 and 8 always the
         * same reward (variance 0: infinite precision, scale 0, still a
         * draw; often the best, tied: the first wins); now and then an
         * observation of a size that is not the one predicted. */
        const int i = step % 7 == 6 ? (step / 7) % N_BS : got;
        const double r = i == 2 || i == 8 ? -45.0 : -(40.0 + 3.0 * i) - 10.0 * lcg01(&noise);
        ties += got == 2;
        cr_assert_eq(ws_bandit_observe(&b, i, r), 0);
        z.rewards[i][z.n[i]++] = r;
        ts_fit(&z, i);
        if (step % 11 == 10) {                /* two observations between predicts */
            const int i2 = (i + 4) % N_BS;
            cr_assert_eq(ws_bandit_observe(&b, i2, r - 1.0), 0);
            z.rewards[i2][z.n[i2]++] = r - 1.0;
            ts_fit(&z, i2);
        }
        exact += isinf(z.prec[2]);
    }
    /* The history exercised exploration, both kinds of arm and sampling. */
    cr_expect_gt(explored, 0);
    if (window == 1 && explore > 1)           /* one fitted reward: always cold */
        cr_expect_eq(rh.normals, 0);
    else
        cr_expect_gt(rh.normals, 3000);
    cr_expect_eq(rh.choices, 3000, "the order is drawn at every predict");
    cr_expect_gt(exact, 0);
    cr_expect_gt(ties, 100);
    /* Both ways of refitting and of deciding were taken (window 1 never
     * samples). */
    if (window != 1) {
        cr_expect_gt(b.counts.bounded_refits, 0);
        cr_expect_gt(b.counts.exact_refits, 0);
        cr_expect_gt(b.counts.decided, 0);
        cr_expect_gt(b.counts.exact_decisions, 0);
    }
    ws_bandit_free(&b);
}

Test(policies, bandit_is_gaussian_ts_draw_for_draw)
{
    bandit_matches_gaussian_ts(0, 2, 1);
    bandit_matches_gaussian_ts(5, 2, 2);
    bandit_matches_gaussian_ts(0, 1, 3);
    bandit_matches_gaussian_ts(1, 2, 4);    /* window 1: arms stay cold */
}

/* The bounds a refit takes from running sums contain numpy's mean and sd
 * (ws_bandit_post_exact), and the theta interval predict derives from them
 * contains the exact theta, over many histories: costs of every magnitude,
 * spreads from 1e-9 to 20 of the level, mixed signs, 2 to 3000 rewards;
 * and for rewards of one sign spread by 1e-4 to 0.1 of their level (a
 * run's cost varies by percents) they are tight enough to decide all but
 * near ties (theta's interval under 1e-11 of its magnitude). */
Test(policies, bandit_bounds_contain_numpys_posterior)
{
    int bs[1] = {1};
    ws_job job = {.n_bs = 1, .bs = bs};
    ws_rng r;
    ws_rng_seed(&r, 5);
    long cases = 0, bounded = 0;
    double widest = 0;
    for (int t = 0; t < 4000; t++) {
        ws_bandit b;
        cr_assert_eq(ws_bandit_init(&b, &job, 0, 2), 0);
        const double level = -pow(10.0, (double)ws_rng_integers(&r, 13) - 2.0);
        const double spread = pow(10.0, -(double)ws_rng_integers(&r, 10)) * (t % 7 == 0 ? -20 : 1);
        const long n = 2 + (long)ws_rng_integers(&r, t % 10 ? 200 : 3000);
        for (long i = 0; i < n; i++) {
            const double x = level * (1.0 + spread * ws_rng_standard_normal(&r));
            cr_assert_eq(ws_bandit_observe(&b, 0, t % 13 == 0 && i % 3 ? level : x), 0);
            if (i % 17 && i + 1 < n) continue;
            const ws_arm_post ex = ws_bandit_post_exact(&b, 0);
            ws_arm_post bd;
            cases++;
            if (ws_bandit_post_bounds(&b, 0, &bd)) continue;
            bounded++;
            cr_assert(fabs(ex.mean - bd.mean) <= bd.mean_err && ex.sd >= bd.sd_lo
                      && ex.sd <= bd.sd_hi,
                      "t %d n %ld: numpy's mean %.17g sd %.17g outside %.17g +- %.3g,"
                      " [%.17g, %.17g]", t, i + 1, ex.mean, ex.sd, bd.mean, bd.mean_err,
                      bd.sd_lo, bd.sd_hi);
            for (int q = 0; q < 8; q++) {
                const double z = ws_rng_standard_normal(&r), theta = ex.mean + ex.sd * z;
                double lo, hi, elo, ehi;
                ws_bandit_theta_bounds(&bd, z, &lo, &hi);
                ws_bandit_theta_bounds(&ex, z, &elo, &ehi);
                cr_assert(lo <= theta && theta <= hi && elo <= theta && theta <= ehi,
                          "t %d n %ld: theta %.17g outside [%.17g, %.17g] or [%.17g, %.17g]",
                          t, i + 1, theta, lo, hi, elo, ehi);
                if (spread >= 1e-4 && spread <= 0.1 && t % 13) widest = fmax(widest, (hi - lo) / (fabs(ex.mean) + ex.sd * fabs(z)));
            }
        }
        ws_bandit_free(&b);
    }
    cr_log_info("%ld posteriors, %ld bounded, widest relative interval %.3g", cases, bounded,
                widest);
    cr_expect_gt(bounded, cases / 2);
    cr_expect_lt(widest, 1e-11);
}
