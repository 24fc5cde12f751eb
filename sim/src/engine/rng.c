/*
 * Stream seeding (see wattsim/rng.h). Its own file so that the engine and
 * the policy host both use it without including each other.
 */
#include "wattsim/rng.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

unsigned long ws_stream_seed(unsigned long seed, unsigned role)
{
    /* SplitMix64 finaliser over (seed, role): streams of nearby seeds and of
     * different roles are unrelated. */
    uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull
                 + ((uint64_t)role + 1) * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (unsigned long)z;
}

/* ------------------------------------------------------------ generators
 * gsl_rng_alloc seeds a new generator (624 dependent steps of MT19937's
 * initialisation) and gsl_rng_set seeds it again: twice per stream, three
 * streams per simulation, a fifth of a short simulation's time. A small
 * per-thread pool keeps generators for reuse; gsl_rng_set resets the whole
 * state, so a reused generator draws exactly what a new one would. */

#define POOL_MAX 8

typedef struct rng_pool {
    int n;
    gsl_rng *r[POOL_MAX];
} rng_pool;

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_ok;

static void pool_free(void *p)
{
    rng_pool *q = p;
    for (int i = 0; i < q->n; i++) gsl_rng_free(q->r[i]);
    free(q);
}

static void pool_init(void) { pool_ok = pthread_key_create(&pool_key, pool_free) == 0; }

static rng_pool *pool_get(void)
{
    pthread_once(&pool_once, pool_init);
    if (!pool_ok) return NULL;
    rng_pool *q = pthread_getspecific(pool_key);
    if (!q && (q = calloc(1, sizeof *q)) && pthread_setspecific(pool_key, q)) {
        free(q);
        q = NULL;
    }
    return q;
}

gsl_rng *ws_rng_take(unsigned long seed)
{
    rng_pool *q = pool_get();
    gsl_rng *r = q && q->n ? q->r[--q->n] : gsl_rng_alloc(gsl_rng_mt19937);
    if (r) gsl_rng_set(r, seed);
    return r;
}

void ws_rng_give(gsl_rng *r)
{
    if (!r) return;
    rng_pool *q = pool_get();
    if (q && q->n < POOL_MAX) q->r[q->n++] = r;
    else gsl_rng_free(r);
}

void ws_rng_pool_clear(void)
{
    rng_pool *q = pool_get();
    while (q && q->n) gsl_rng_free(q->r[--q->n]);
}
