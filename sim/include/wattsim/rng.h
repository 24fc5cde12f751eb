/*
 * Random streams. Every simulation draws from independent streams derived
 * from its seed, one per role, so that the engine's draws never shift a
 * policy's and results do not depend on the order in which cells run.
 */
#ifndef WATTSIM_RNG_H
#define WATTSIM_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* Seed of an independent random stream for `role` derived from `seed`
 * (SplitMix64 mixing). Roles: 0 engine, 1 BSO, 2 PLO, 16 + g group g. */
unsigned long ws_stream_seed(unsigned long seed, unsigned role);

/* An MT19937 generator seeded with `seed`, bit for bit what
 * gsl_rng_alloc(gsl_rng_mt19937) + gsl_rng_set(seed) give, taken from this
 * thread's pool of used ones when it has one; NULL when out of memory.
 * Give it back with ws_rng_give (which frees it when the pool is full). */
gsl_rng *ws_rng_take(unsigned long seed);
void ws_rng_give(gsl_rng *r);
/* Seed this thread's next generators for seeds[0..2] together (a
 * simulation's three streams: ws_stream_seed(seed, 0..2)), faster than
 * three gsl_rng_set; ws_rng_take(seeds[k]) then returns them, with the
 * state gsl_rng_set gives (checked at start-up, else this does nothing).
 * Returns 1 when it seeded them, 0 when ws_rng_take will seed as usual. */
int ws_rng_preseed(const unsigned long seeds[3]);
/* gsl_rng_uniform_int(r, n), the same draws and results bit for bit, with
 * range / n remembered in *memo for the next call with the same n (zero
 * it first; one memo per generator type). A simulation draws mostly with
 * the same n, and then no division by n stands between n and the draw.
 * n = 0 or beyond the generator's range goes to GSL (its error). */
typedef struct ws_uniform_memo {
    unsigned long n, scale;
} ws_uniform_memo;

static inline unsigned long ws_rng_uniform_int_memo(const gsl_rng *r, unsigned long n,
                                                    ws_uniform_memo *memo)
{
    const unsigned long offset = r->type->min, range = r->type->max - offset;
    if (n != memo->n || n == 0) {
        if (n > range || n == 0) return gsl_rng_uniform_int(r, n);
        memo->n = n;
        memo->scale = range / n;
    }
    const unsigned long scale = memo->scale;
    unsigned long k;
    if (range <= 0xffffffffUL) {
        /* Every operand fits in 32 bits (MT19937): the same quotient from
         * a 32-bit division, which is several times faster than a 64-bit
         * one on x86-64. */
        const uint32_t s32 = (uint32_t)scale, o32 = (uint32_t)offset;
        do
            k = (uint32_t)((uint32_t)r->type->get(r->state) - o32) / s32;
        while (k >= n);
        return k;
    }
    do
        k = (r->type->get(r->state) - offset) / scale;
    while (k >= n);
    return k;
}

/* Free this thread's pooled generators (a thread's pool is freed when it
 * exits; the main thread may call this before exiting). */
void ws_rng_pool_clear(void);

#endif
