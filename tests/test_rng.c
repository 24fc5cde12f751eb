/*
 * The generator pool (engine/rng.c): a pooled or preseeded generator draws
 * exactly what gsl_rng_alloc + gsl_rng_set give for the same seed, for
 * seeds that exercise the 32-bit masking (0 means 4357 in GSL, 64-bit
 * values are cut to their low 32 bits), whether or not the preseeded ones
 * are taken in order.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>

#include "wattsim/rng.h"

static void expect_same_draws(gsl_rng *a, unsigned long seed)
{
    gsl_rng *b = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(b);
    gsl_rng_set(b, seed);
    /* Past one regeneration of the 624-word state. */
    for (int i = 0; i < 2000; i++) {
        unsigned long x = gsl_rng_get(a), y = gsl_rng_get(b);
        cr_assert_eq(x, y, "seed %#lx, draw %d: %lu, GSL %lu", seed, i, x, y);
    }
    gsl_rng_free(b);
}

Test(rng, preseeded_and_pooled_generators_draw_as_gsl)
{
    const unsigned long seeds[][3] = {
        {0, 1, 2},
        {0xfedcba9876543210UL, 0xffffffffUL, 0x100000000UL},
        {ws_stream_seed(7, 0), ws_stream_seed(7, 1), ws_stream_seed(7, 2)},
    };
    for (int t = 0; t < 3; t++) {
        /* GSL's MT19937 state on Debian is the layout the fast seeding
         * checks for at start-up: it must be in use here. */
        cr_assert_eq(ws_rng_preseed(seeds[t]), 1, "the interleaved seeding is off");
        /* taken out of order, and one more seed that was not preseeded */
        int order[3] = {2, 0, 1};
        gsl_rng *r[4];
        for (int k = 0; k < 3; k++) {
            r[k] = ws_rng_take(seeds[t][order[k]]);
            cr_assert_not_null(r[k]);
            expect_same_draws(r[k], seeds[t][order[k]]);
        }
        r[3] = ws_rng_take(seeds[t][0] + 99);
        expect_same_draws(r[3], seeds[t][0] + 99);
        for (int k = 0; k < 4; k++) ws_rng_give(r[k]);
    }
    /* Preseeded generators nobody took are reused, not leaked. */
    ws_rng_preseed(seeds[0]);
    ws_rng_preseed(seeds[1]);
    gsl_rng *r = ws_rng_take(seeds[1][2]);
    expect_same_draws(r, seeds[1][2]);
    ws_rng_give(r);
    ws_rng_pool_clear();
}

/* ws_rng_uniform_int_memo is gsl_rng_uniform_int with range / n kept
 * between calls (and 32-bit divisions where everything fits): on two
 * generators seeded alike, the same results and the same draws consumed
 * (the next raw draw agrees), whatever the order of n (repeats, changes,
 * n = 1, n = 2^31 + 1 for which GSL rejects about half the raw draws, the
 * whole range), through one memo per generator type; MT19937 (min 0) and
 * ran0 (min 1, range 2^31 - 3) and ranlux (24 bits). */
static void memo_matches_gsl(const gsl_rng_type *type)
{
    gsl_rng *a = gsl_rng_alloc(type), *b = gsl_rng_alloc(type);
    cr_assert(a && b);
    gsl_rng_set(a, 12345);
    gsl_rng_set(b, 12345);
    const unsigned long range = gsl_rng_max(a) - gsl_rng_min(a);
    const unsigned long big = range / 2 + 2 <= range ? range / 2 + 2 : range;
    const unsigned long ns[] = {7, 7, 7, 1, 3, 3, 1000, 2, 2, big, big, range, 5, 5, 5, 1, 1};
    ws_uniform_memo memo = {0, 0};
    for (int rep = 0; rep < 500; rep++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            const unsigned long n = ns[(j + (size_t)rep) % (sizeof ns / sizeof *ns)];
            const unsigned long x = ws_rng_uniform_int_memo(a, n, &memo);
            const unsigned long y = gsl_rng_uniform_int(b, n);
            cr_assert_eq(x, y, "%s, rep %d, n %lu: %lu, GSL %lu", type->name, rep, n, x, y);
            cr_assert_lt(x, n);
        }
    cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "%s: as many draws consumed", type->name);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

Test(rng, uniform_int_memo_is_gsl_rng_uniform_int)
{
    memo_matches_gsl(gsl_rng_mt19937);
    memo_matches_gsl(gsl_rng_ran0);
    memo_matches_gsl(gsl_rng_ranlux);
}
