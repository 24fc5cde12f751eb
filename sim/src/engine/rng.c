/*
 * Stream seeding (see wattsim/rng.h). Its own file so that the engine and
 * the policy host both use it without including each other.
 */
#include "wattsim/rng.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 * state, so a reused generator draws exactly what a new one would.
 * ws_rng_preseed seeds a simulation's three streams together, interleaved
 * (the initialisation is a chain of dependent multiplies: three chains
 * overlap), for the ws_rng_take calls that follow. */

#define POOL_MAX 8
#define MT_N 624

/* Generators seeded ahead (ws_rng_preseed), each for one seed. */
typedef struct rng_ready {
    gsl_rng *r;
    unsigned long seed;
} rng_ready;

typedef struct rng_pool {
    int n, n_ready;
    gsl_rng *r[POOL_MAX];
    rng_ready ready[3];
} rng_pool;

static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_ok;

static void pool_free(void *p)
{
    rng_pool *q = p;
    for (int i = 0; i < q->n; i++) gsl_rng_free(q->r[i]);
    for (int i = 0; i < q->n_ready; i++) gsl_rng_free(q->ready[i].r);
    free(q);
}

/* MT19937's initialisation (GSL's mt_set: mt[0] = seed, or 4357 for 0;
 * mt[i] = 1812433253 * (mt[i-1] ^ (mt[i-1] >> 30)) + i; mti = 624) for
 * three states at once: three independent chains of dependent multiplies
 * interleaved, so they overlap in the pipeline. Used only when a check at
 * start-up finds it gives gsl_rng_set's state byte for byte. */
typedef struct mt_state { unsigned long mt[MT_N]; int mti; } mt_state;
static int fast_seed;

static void mt_seed3(mt_state *a, mt_state *b, mt_state *c, const unsigned long s[3])
{
    unsigned long x = (s[0] ? s[0] : 4357) & 0xffffffffUL;
    unsigned long y = (s[1] ? s[1] : 4357) & 0xffffffffUL;
    unsigned long z = (s[2] ? s[2] : 4357) & 0xffffffffUL;
    a->mt[0] = x;
    b->mt[0] = y;
    c->mt[0] = z;
    for (unsigned long i = 1; i < MT_N; i++) {
        x = (1812433253UL * (x ^ (x >> 30)) + i) & 0xffffffffUL;
        y = (1812433253UL * (y ^ (y >> 30)) + i) & 0xffffffffUL;
        z = (1812433253UL * (z ^ (z >> 30)) + i) & 0xffffffffUL;
        a->mt[i] = x;
        b->mt[i] = y;
        c->mt[i] = z;
    }
    a->mti = b->mti = c->mti = MT_N;
}

static void pool_init(void)
{
    pool_ok = pthread_key_create(&pool_key, pool_free) == 0;
    /* The fast seeding only if it is GSL's, bit for bit (state layout and
     * arithmetic), checked on seeds that exercise the 32-bit masking. */
    if (gsl_rng_mt19937->size != sizeof(mt_state)) return;
    gsl_rng *g[6];
    int ok = 1;
    for (int i = 0; i < 6; i++) ok &= (g[i] = gsl_rng_alloc(gsl_rng_mt19937)) != NULL;
    if (ok) {
        const unsigned long seeds[3] = {0, 0xfedcba9876543210UL, 12345};
        for (int i = 0; i < 3; i++) gsl_rng_set(g[i], seeds[i]);
        mt_seed3(g[3]->state, g[4]->state, g[5]->state, seeds);
        for (int i = 0; i < 3; i++)
            ok &= memcmp(g[i]->state, g[i + 3]->state, sizeof(mt_state)) == 0
                  && gsl_rng_get(g[i]) == gsl_rng_get(g[i + 3]);
    }
    for (int i = 0; i < 6; i++) gsl_rng_free(g[i]);
    fast_seed = ok;
}

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

static gsl_rng *pooled(rng_pool *q)
{
    return q && q->n ? q->r[--q->n] : gsl_rng_alloc(gsl_rng_mt19937);
}

int ws_rng_preseed(const unsigned long seeds[3])
{
    rng_pool *q = pool_get();
    if (!q || !fast_seed) return 0;
    while (q->n_ready) ws_rng_give(q->ready[--q->n_ready].r);   /* unused ones */
    gsl_rng *r[3];
    for (int i = 0; i < 3; i++) r[i] = pooled(q);
    if (!r[0] || !r[1] || !r[2]) {
        for (int i = 0; i < 3; i++) ws_rng_give(r[i]);
        return 0;
    }
    mt_seed3(r[0]->state, r[1]->state, r[2]->state, seeds);
    for (int i = 0; i < 3; i++) q->ready[q->n_ready++] = (rng_ready){r[i], seeds[i]};
    return 1;
}

gsl_rng *ws_rng_take(unsigned long seed)
{
    rng_pool *q = pool_get();
    for (int i = 0; q && i < q->n_ready; i++)
        if (q->ready[i].seed == seed) {
            gsl_rng *r = q->ready[i].r;
            q->ready[i] = q->ready[--q->n_ready];
            return r;
        }
    gsl_rng *r = pooled(q);
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
    while (q && q->n_ready) gsl_rng_free(q->ready[--q->n_ready].r);
}
