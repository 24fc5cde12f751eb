/*
 * The sequential engine on the tiny fixture trace (fixture.h), against
 * values computed by hand. Notation: e = time * power per epoch; epoch
 * cost c = (eta * power + (1 - eta) * maxPL(bs)) * time; cost of a run =
 * eta * E + (1 - eta) * 200 * T.
 */
#include <math.h>

#include "fixture.h"
#include "wattsim/engine.h"
#include "wattsim/rng.h"

typedef struct sim {
    ws_traces tr;
    ws_job_table jt;
    ws_registry *reg;
    ws_bso *bso;
    ws_plo *plo;
    fixture_runs out;
    ws_sim_totals tot;
    ws_error err;
    int rc;
} sim;

/* What run() adds to the parameters: the engine's own per-recurrence sums
 * (steady_from, rec_cost), and no sink. */
static struct {
    long steady_from;
    double *rec_cost;
    int no_sink;
} extra;

static void run(sim *s, const char *bso, const char *plo, double eta, double beta,
                long recurrences, unsigned long seed)
{
    memset(s, 0, sizeof *s);
    fixture_job(&s->tr, &s->jt, eta, beta);
    s->reg = ws_registry_new();
    const ws_bso_type *bt = fixture_bso(s->reg, bso);
    const ws_plo_type *pt = fixture_plo(s->reg, plo);
    ws_value *bp = NULL, *pp = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso", &bp, &s->err), 0);
    cr_assert_eq(ws_params_resolve(pt->params, NULL, 0, "plo", &pp, &s->err), 0);
    s->bso = ws_bso_new(bt, bp, seed, &s->err);
    s->plo = ws_plo_new(pt, pp, seed, &s->err);
    cr_assert(s->bso && s->plo, "%s", s->err.msg);
    ws_sim_params sp = {.recurrences = recurrences, .seed = seed,
                        .steady_from = extra.steady_from, .rec_cost = extra.rec_cost};
    s->rc = ws_simulate(&s->jt.job, s->bso, s->plo, &sp, extra.no_sink ? NULL : fixture_keep,
                        &s->out, &s->tot, &s->err);
    ws_params_free(bt->params, bp);
    ws_params_free(pt->params, pp);
}

static void done(sim *s)
{
    ws_bso_free(s->bso);
    ws_plo_free(s->plo);
    ws_registry_free(s->reg);
    ws_job_free(&s->jt);
    ws_traces_free(&s->tr);
}

static void expect_run(const ws_run_record *r, long rec, int attempt, int bs, int pl,
                       double E, double T, double cost, int reached, int profiled)
{
    cr_expect_eq(r->recurrence, rec, "recurrence %ld", r->recurrence);
    cr_expect_eq(r->attempt, attempt, "rec %ld: try %d, want %d", rec, r->attempt, attempt);
    cr_expect_eq(r->bs, bs, "rec %ld try %d: bs %d, want %d", rec, attempt, r->bs, bs);
    cr_expect_eq(r->pl, pl, "rec %ld try %d: pl %d, want %d", rec, attempt, r->pl, pl);
    cr_expect_float_eq(r->energy_j, E, 1e-9, "rec %ld try %d: E %.17g, want %g", rec, attempt, r->energy_j, E);
    cr_expect_float_eq(r->time_s, T, 1e-9, "rec %ld try %d: T %.17g, want %g", rec, attempt, r->time_s, T);
    cr_expect_float_eq(r->cost, cost, 1e-9, "rec %ld try %d: cost %.17g, want %g", rec, attempt, r->cost, cost);
    cr_expect_eq(r->reached, reached, "rec %ld try %d: reached", rec, attempt);
    cr_expect_eq(r->profiled, profiled, "rec %ld try %d: profiled", rec, attempt);
}

Test(engine, job_table_of_the_fixture)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    const ws_job *j = &jt.job;
    cr_assert_eq(j->n_bs, 3);
    cr_expect_eq(j->bs[0], 16);
    cr_expect_eq(j->bs[2], 64);
    cr_expect_eq(j->b0, 32);
    cr_expect_eq(j->max_power, 200);
    cr_expect_eq(j->knob_start[3], 6);
    cr_expect_eq(j->run_start[3], 6, "runs of other target metrics are not the job's");
    cr_expect_eq(jt.default_recurrences, 2 * 3 * 2);
    /* Epoch cost as the profiler reports it, (0.5 * 90 + 0.5 * 200) * 12. */
    cr_expect_float_eq(ws_job_epoch_cost(j, 1, 2), 1740.0, 1e-12);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

Test(engine, default_policy_runs_b0_at_max_power)
{
    sim s;
    run(&s, "default", "default", 0.5, INFINITY, 3, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    cr_assert_eq(s.out.n, 3);
    /* 5 epochs at (32, 200 W): E = 5 * 10 * 160, T = 50, cost = 4000 + 5000. */
    for (int i = 0; i < 3; i++)
        expect_run(&s.out.r[i], i + 1, 1, 32, 200, 8000, 50, 9000, 1, 0);
    cr_expect_float_eq(s.tot.energy_j, 24000, 1e-9);
    cr_expect_float_eq(s.tot.time_s, 150, 1e-9);
    cr_expect_float_eq(s.tot.cost, 27000, 1e-9);
    cr_expect_eq(s.tot.runs, 3);
    cr_expect_eq(s.tot.final_bs, 32);
    cr_expect_eq(s.tot.final_pl, 200);
    done(&s);
}

/*
 * zeus + jit, eta 0.5, beta 2. Worked by hand:
 *  rec 1: pruning starts at b0 = 32; jit profiles 32: c(200) = 180 * 10 =
 *         1800, c(100) = 145 * 12 = 1740 -> 100 W. Profiled first epoch:
 *         E = (1080 + 1600) / 2 + 4 * 1080 = 5660, T = 11 + 4 * 12 = 59,
 *         cost = 2830 + 5900 = 8730. min_cost = 8730.
 *  rec 2: down to 16; profile: c(200) = 175 * 15 = 2625 < c(100) = 2800 ->
 *         200 W. Budget 17460 // 2625 = 6 >= 4: reached.
 *         E = (1600 + 2250) / 2 + 3 * 2250 = 8675, T = 17.5 + 45 = 62.5,
 *         cost = 4337.5 + 6250 = 10587.5.
 *  rec 3: up to 64; profile: c(100) = 147.5 * 8 = 1180 < c(200) = 1365.
 *         Budget min(17460 // 1180 = 14, 10) = 10 < 12: not reached after
 *         10 epochs: E = (760 + 1330) / 2 + 9 * 760 = 7885, T = 7.5 + 72 =
 *         79.5, cost = 3942.5 + 7950 = 11892.5. Round 1 ends: S = {16, 32},
 *         pivot 32 (least cost). Try 2: round 2 explores 32 (known, 100 W):
 *         E = 5400, T = 60, cost = 2700 + 6000 = 8700.
 *  rec 4: round 2 goes down to 16: E = 9000, T = 60, cost = 10500.
 *  rec 5, 6: Thompson sampling between 16 (mean cost 10543.75, sd 31) and
 *         32 (mean 8715, sd 11): 32 at 100 W, cost 8700.
 */
Test(engine, zeus_jit_worked_example)
{
    sim s;
    run(&s, "zeus", "jit", 0.5, 2.0, 6, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    cr_assert_eq(s.out.n, 7);
    expect_run(&s.out.r[0], 1, 1, 32, 100, 5660, 59, 8730, 1, 1);
    expect_run(&s.out.r[1], 2, 1, 16, 200, 8675, 62.5, 10587.5, 1, 1);
    expect_run(&s.out.r[2], 3, 1, 64, 100, 7885, 79.5, 11892.5, 0, 1);
    cr_expect_eq(s.out.r[2].epochs, 10, "stopped at max_epochs");
    expect_run(&s.out.r[3], 3, 2, 32, 100, 5400, 60, 8700, 1, 0);
    expect_run(&s.out.r[4], 4, 1, 16, 200, 9000, 60, 10500, 1, 0);
    expect_run(&s.out.r[5], 5, 1, 32, 100, 5400, 60, 8700, 1, 0);
    expect_run(&s.out.r[6], 6, 1, 32, 100, 5400, 60, 8700, 1, 0);
    cr_expect_float_eq(s.tot.energy_j, 47420, 1e-9);
    cr_expect_float_eq(s.tot.time_s, 441, 1e-9);
    cr_expect_float_eq(s.tot.cost, 67810, 1e-9);
    cr_expect_eq(s.tot.runs, 7);
    cr_expect_eq(s.tot.recurrences, 6);
    cr_expect_eq(s.tot.final_bs, 32);
    done(&s);
}

/*
 * The engine's own per-recurrence sums (a sweep without --keep-history
 * passes no sink): on the worked example above, recurrence costs 8730,
 * 10587.5, 11892.5 + 8700 (two tries), 10500, 8700, 8700; from
 * recurrence 4 on, energy 9000 + 5400 + 5400 and time 60 + 60 + 60. The
 * same with a sink, and the totals the same bits either way.
 */
Test(engine, per_recurrence_sums_without_a_sink)
{
    const double want[6] = {8730, 10587.5, 20592.5, 10500, 8700, 8700};
    sim s, t;
    run(&t, "zeus", "jit", 0.5, 2.0, 6, 1);            /* no sums asked */
    cr_assert_eq(t.rc, 0, "%s", t.err.msg);
    cr_expect_eq(t.tot.steady_energy_j, 0);
    for (int no_sink = 0; no_sink < 2; no_sink++) {
        double rc[6] = {0};
        extra.steady_from = 4;
        extra.rec_cost = rc;
        extra.no_sink = no_sink;
        run(&s, "zeus", "jit", 0.5, 2.0, 6, 1);
        extra.steady_from = 0;
        extra.rec_cost = NULL;
        extra.no_sink = 0;
        cr_assert_eq(s.rc, 0, "%s", s.err.msg);
        cr_expect_eq(s.out.n, no_sink ? 0 : 7);
        for (int r = 0; r < 6; r++)
            cr_expect_float_eq(rc[r], want[r], 1e-9, "recurrence %d: %.17g", r + 1, rc[r]);
        cr_expect_float_eq(s.tot.steady_energy_j, 19800, 1e-9, "%.17g", s.tot.steady_energy_j);
        cr_expect_float_eq(s.tot.steady_time_s, 180, 1e-9, "%.17g", s.tot.steady_time_s);
        cr_expect(s.tot.energy_j == t.tot.energy_j && s.tot.time_s == t.tot.time_s
                  && s.tot.cost == t.tot.cost && s.tot.runs == t.tot.runs);
        done(&s);
    }
    done(&t);
}

/*
 * Early stopping: with beta 1.2 the budget after rec 1 is 10476. At 16
 * (200 W) one epoch costs 2625: 10476 // 2625 = 3 epochs, not enough (4
 * needed): E = 1925 + 2 * 2250 = 6425, T = 17.5 + 30 = 47.5, cost =
 * 3212.5 + 4750 = 7962.5. At 64 (100 W) 10476 // 1180 = 8 epochs, not
 * reached: E = 1045 + 7 * 760 = 6365, T = 7.5 + 56 = 63.5, cost = 9532.5.
 * Round 2 tries 32: 10476 // 1740 = 6 >= 5, reached. Without early
 * stopping (beta = inf) the failing run gets all 10 epochs.
 */
Test(engine, early_stopping_budget)
{
    sim s;
    run(&s, "zeus", "jit", 0.5, 1.2, 2, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    cr_assert_eq(s.out.n, 4);
    expect_run(&s.out.r[1], 2, 1, 16, 200, 6425, 47.5, 7962.5, 0, 1);
    cr_expect_eq(s.out.r[1].epochs, 3);
    expect_run(&s.out.r[2], 2, 2, 64, 100, 6365, 63.5, 9532.5, 0, 1);
    cr_expect_eq(s.out.r[2].epochs, 8);
    expect_run(&s.out.r[3], 2, 3, 32, 100, 5400, 60, 8700, 1, 0);
    done(&s);

    run(&s, "zeus", "jit", 0.5, INFINITY, 3, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    cr_expect_eq(s.out.r[2].bs, 64);
    cr_expect_eq(s.out.r[2].epochs, 10, "no early stopping: up to max_epochs");
    done(&s);
}

/*
 * A budget below one epoch: the run is not started, nothing is recorded,
 * and the BSO sees 100 * beta * min_cost, not reached. With beta 0.1 the
 * budget is 873 < every epoch cost, so every size is pruned and zeus
 * reports it; the error names the policy and the call.
 */
Test(engine, zero_budget_is_skipped_and_pruning_can_empty)
{
    sim s;
    run(&s, "zeus", "jit", 0.5, 0.1, 3, 1);
    cr_expect_neq(s.rc, 0);
    cr_expect_eq(s.out.n, 1, "only rec 1 ran");
    cr_expect_gt(s.tot.skipped, 0);
    cr_expect_str_eq(s.err.msg, "bso zeus: observe failed: every batch size was pruned"
                     " (none reached the target in a pruning round)");
    done(&s);
}

Test(engine, b0_must_reach_in_the_first_recurrence)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    jt.job.b0 = 64;                /* never reaches within 10 epochs */
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
    ws_plo *p = ws_plo_new(fixture_plo(reg, "default"), NULL, 1, &err);
    ws_sim_params sp = {.recurrences = 3, .seed = 1};
    ws_sim_totals tot;
    cr_expect_neq(ws_simulate(&jt.job, b, p, &sp, NULL, NULL, &tot, &err), 0);
    cr_expect_str_eq(err.msg, "w on g1: the default batch size 64 did not reach the target"
                     " metric in the first recurrence (b0 must reach it; choose another b0"
                     " or target)");
    ws_bso_free(b);
    ws_plo_free(p);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

Test(engine, twenty_tries_without_reaching_is_an_error)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, INFINITY);
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    /* grid tries b0 first (reaches), then 16 (reaches), then 64 twice
     * (fails); make 64 the only size by shrinking the table's view. */
    jt.job.bs += 2;
    jt.job.knob_start += 2;
    jt.job.run_start += 2;
    jt.job.n_bs = 1;
    jt.job.b0 = 16;                /* not in the view: rec 1 is not "b0" */
    ws_bso *b = ws_bso_new(fixture_bso(reg, "gts"), (ws_value[]){{.i = 1}, {.i = 0}}, 1, &err);
    ws_plo *p = ws_plo_new(fixture_plo(reg, "default"), NULL, 1, &err);
    ws_sim_params sp = {.recurrences = 2, .seed = 1};
    ws_sim_totals tot;
    cr_expect_neq(ws_simulate(&jt.job, b, p, &sp, NULL, NULL, &tot, &err), 0);
    cr_expect_str_eq(err.msg, "w on g1: recurrence 1 did not reach the target metric in 20 tries");
    cr_expect_eq(tot.runs, 20);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_registry_free(reg);
    jt.job.bs -= 2;
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

Test(engine, same_seed_same_history_other_seed_other_draws)
{
    sim a, b;
    run(&a, "gts", "jit", 0.5, 2.0, 12, 7);
    run(&b, "gts", "jit", 0.5, 2.0, 12, 7);
    cr_assert_eq(a.rc, 0, "%s", a.err.msg);
    cr_assert_eq(a.out.n, b.out.n);
    for (int i = 0; i < a.out.n; i++) {
        const ws_run_record *x = &a.out.r[i], *y = &b.out.r[i];
        cr_expect(x->recurrence == y->recurrence && x->attempt == y->attempt
                  && x->bs == y->bs && x->pl == y->pl && x->epochs == y->epochs
                  && x->energy_j == y->energy_j && x->time_s == y->time_s
                  && x->cost == y->cost && x->reached == y->reached
                  && x->profiled == y->profiled, "run %d differs", i);
    }
    done(&a);
    done(&b);
    /* gts explores the three sizes in a seed-dependent order. */
    int orders = 0, first[3] = {0};
    for (unsigned long seed = 1; seed <= 30; seed++) {
        run(&a, "gts", "jit", 0.5, INFINITY, 3, seed);
        cr_assert_eq(a.rc, 0, "%s", a.err.msg);
        int seen = 0;
        for (int i = 0; i < a.out.n; i++) seen |= 1 << (a.out.r[i].bs / 16 - 1 == 3 ? 2 : a.out.r[i].bs / 32);
        cr_expect_eq(seen, 7, "seed %lu: the first three runs explore every size", seed);
        first[a.out.r[0].bs == 16 ? 0 : a.out.r[0].bs == 32 ? 1 : 2]++;
        done(&a);
    }
    for (int i = 0; i < 3; i++) orders += first[i] > 0;
    cr_expect_eq(orders, 3, "every size comes first for some seed");
}

