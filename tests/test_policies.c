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
