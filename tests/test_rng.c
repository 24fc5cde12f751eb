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
