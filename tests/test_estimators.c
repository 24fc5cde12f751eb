/*
 * The estimators of an energy saving (report/estimators.c) on toys computed
 * by hand: the reduction of a simulation's runs (totals, the last 10 and
 * last 10 % of recurrences, where exploration ends) and the five savings
 * and the cost analysis over seeds.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "wattsim/estimators.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

/* One try: recurrence, batch size, ETA, TTA, cost. */
typedef struct { long r; int bs; double e, t, c; } try_;

static ws_est_sim reduce(const try_ *x, size_t n)
{
    ws_est_reducer red = {0};
    ws_est_sim s;
    ws_est_begin(&red);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ws_est_add(&red, x[i].r, x[i].bs, x[i].e, x[i].t, x[i].c), 0);
    ws_est_end(&red, &s);
    ws_est_free(&red);
    return s;
}

/*
 * The toy: 2 seeds x 3 recurrences, subject z and reference d.
 *
 *   z seed 1: r1 bs 32 (e 10, c 12), r1 retried at bs 64 (e 6, c 7),
 *             r2 bs 64 (e 5, c 6), r3 bs 64 (e 4, c 5)
 *             ETA per recurrence 16, 5, 4 = 25; cost 19, 6, 5 = 30.
 *             Tries: bs 32 once (r1), bs 64 at r1, r2 (its 2nd: the
 *             pruning's last), r3 (3rd): exploration ends at r2; after it
 *             r3 only: ETA 4 in 1 recurrence; exploration cost 25.
 *   z seed 2: r1 bs 32 (e 12, c 14), r2 bs 64 (e 6, c 7), r3 bs 64 (e 6, c 7)
 *             ETA 24, cost 28; bs 64's 2nd try is r3: exploration ends at
 *             r3, nothing after it; exploration cost 28.
 *   d seed 1: bs 32 three times, e 10, c 12 each: ETA 30, cost 36.
 *   d seed 2: e 12, 12, 16, c 14, 14, 18: ETA 40, cost 46.
 *
 * With R = 3 the last 10 recurrences and the last 10 % (at least 5) are
 * all 3.
 */
static const try_ z1[] = {{1, 32, 10, 1, 12}, {1, 64, 6, 1, 7}, {2, 64, 5, 1, 6},
                          {3, 64, 4, 1, 5}};
static const try_ z2[] = {{1, 32, 12, 2, 14}, {2, 64, 6, 2, 7}, {3, 64, 6, 2, 7}};
static const try_ d1[] = {{1, 32, 10, 3, 12}, {2, 32, 10, 3, 12}, {3, 32, 10, 3, 12}};
static const try_ d2[] = {{1, 32, 12, 3, 14}, {2, 32, 12, 3, 14}, {3, 32, 16, 3, 18}};

static void toy(ws_est_sim z[2], ws_est_sim d[2])
{
    z[0] = reduce(z1, 4);
    z[1] = reduce(z2, 3);
    d[0] = reduce(d1, 3);
    d[1] = reduce(d2, 3);
}

Test(estimators, reduction_of_the_runs)
{
    ws_est_sim z[2], d[2];
    toy(z, d);
    cr_expect_eq(z[0].R, 3);
    cr_expect(NEAR(z[0].e, 25) && NEAR(z[0].c, 30) && NEAR(z[0].t, 4));
    cr_expect_eq(z[0].explore_end, 2);
    cr_expect(NEAR(z[0].c_explore, 25) && NEAR(z[0].e_post, 4) && NEAR(z[0].c_post, 5));
    cr_expect(NEAR(z[0].e_last10, 25) && NEAR(z[0].e_lastpct, 25));
    cr_expect_eq(z[1].explore_end, 3);
    cr_expect(NEAR(z[1].e, 24) && NEAR(z[1].c_explore, 28) && z[1].e_post == 0);
    cr_expect(NEAR(d[1].e, 40) && NEAR(d[1].c, 46));
}

Test(estimators, five_savings_by_hand)
{
    ws_est_sim z[2], d[2];
    toy(z, d);
    /* mean of per-seed savings: (1 - 25/30 + 1 - 24/40) / 2 = (16.667 + 40) / 2 */
    cr_expect(NEAR(ws_est_saving(WS_EST_MEAN_TOTAL, z, d, 2), (100.0 / 6 + 40) / 2));
    /* ratio of sums: 1 - 49/70 = 30 % */
    cr_expect(NEAR(ws_est_saving(WS_EST_RATIO_TOTAL, z, d, 2), 30));
    /* the windows are the 3 recurrences: 30 % too */
    cr_expect(NEAR(ws_est_saving(WS_EST_LAST10, z, d, 2), 30));
    cr_expect(NEAR(ws_est_saving(WS_EST_LAST10PCT, z, d, 2), 30));
    /* after exploration: z 4 J in 1 recurrence, d 70 J in 6: 1 - 4 / (70/6) = 65.714 % */
    cr_expect(NEAR(ws_est_saving(WS_EST_POST_EXPLORE, z, d, 2), 100 * (1 - 4.0 * 6 / 70)));
    /* one seed: mean and ratio agree, 1 - 25/30 */
    cr_expect(NEAR(ws_est_saving(WS_EST_MEAN_TOTAL, z, d, 1), 100.0 / 6));
    cr_expect(NEAR(ws_est_saving(WS_EST_RATIO_TOTAL, z, d, 1), 100.0 / 6));
    cr_expect(isnan(ws_est_saving(WS_EST_RATIO_TOTAL, z, d, 0)));
}

/* The windows on 12 recurrences of ETA r J at recurrence r: the last 10
 * are 3..12 = 75 J, the last 10 % (at least 5) 8..12 = 50 J. */
Test(estimators, steady_windows)
{
    try_ x[12];
    for (int r = 1; r <= 12; r++) x[r - 1] = (try_){r, 32, r, 1, r};
    ws_est_sim s = reduce(x, 12);
    cr_expect(NEAR(s.e, 78) && NEAR(s.e_last10, 75) && NEAR(s.e_lastpct, 50));
    /* one batch size: its 1st and 2nd tries are r1 and r2 */
    cr_expect_eq(s.explore_end, 2);
    cr_expect(NEAR(s.e_post, 75));
}

/*
 * Cost: z 30 and 28 (mean 29), d 36 and 46 (mean 41); per-seed savings
 * 1 - 30/36 = 16.667 %, 1 - 28/46 = 39.130 %, mean 27.899 %, 95 % CI
 * +- t(0.975, 1) * |difference| / 2 = 12.7062 * 11.2319 = 142.71.
 * Exploration ends at 2 and 3: mean 2.5. d's cost per recurrence 82/6 =
 * 13.667; z's exploration cost 25 + 28 = 53 against 13.667 * 5 = 68.333:
 * extra (53 - 68.333) / 2 = -7.667 per seed. After exploration z costs 5 in
 * 1 recurrence: saving 13.667 - 5 = 8.667 per recurrence; break-even
 * 2.5 - 7.667 / 8.667 = 1.6154.
 */
Test(estimators, cost_by_hand)
{
    ws_est_sim z[2], d[2];
    toy(z, d);
    ws_est_cost c;
    ws_est_cost_of(z, d, 2, &c);
    cr_expect(NEAR(c.cost_z, 29) && NEAR(c.cost_d, 41));
    double a = 100.0 / 6, b = 100 * (1 - 28.0 / 46), m = (a + b) / 2;
    cr_expect(NEAR(c.saving_pct, m));
    double half = 12.706204736174707 * fabs(b - a) / 2;
    cr_expect(fabs(c.saving_lo - (m - half)) < 1e-6 && fabs(c.saving_hi - (m + half)) < 1e-6);
    cr_expect(NEAR(c.explore_end, 2.5));
    cr_expect(NEAR(c.explore_extra, (53 - 82.0 / 6 * 5) / 2));
    cr_expect(NEAR(c.per_rec_saving, 82.0 / 6 - 5));
    cr_expect(NEAR(c.break_even, 2.5 + (53 - 82.0 / 6 * 5) / 2 / (82.0 / 6 - 5)));
    cr_expect_eq(c.R, 3);
}

/* No saving per recurrence after exploration: never breaks even; no
 * recurrence after it (seed 2 alone): undefined, not "never". */
Test(estimators, break_even_never_or_undefined)
{
    ws_est_sim z[2], d[2];
    toy(z, d);
    ws_est_cost c;
    z[0].c_post = 20;                  /* above d's 12 per recurrence */
    ws_est_cost_of(z, d, 1, &c);
    cr_expect(c.per_rec_saving < 0 && isinf(c.break_even));
    ws_est_cost_of(z + 1, d + 1, 1, &c);
    cr_expect(isnan(c.per_rec_saving) && isnan(c.break_even));
    cr_expect(isnan(c.saving_lo));     /* one seed: no CI */
}
