/*
 * Random streams: numpy's Generator, draw for draw.
 *
 * Every random number wattsim draws comes from a ws_rng, which is what
 * numpy 1.24's `np.random.default_rng(seed)` is: a PCG64 bit generator
 * (128-bit LCG, XSL-RR output) seeded through a SeedSequence, with the
 * Generator's algorithms on top. So a simulation of the published Zeus
 * simulator, which draws from `default_rng(seed)`, and wattsim's draw the
 * same numbers for the same seed, and a policy ported from numpy code can
 * be checked run for run. The algorithms are written here from their
 * published descriptions (O'Neill's PCG and seed_seq, Lemire's bounded
 * integers, Marsaglia and Tsang's ziggurat in numpy's 256-layer variant)
 * and checked against numpy 1.24 bit for bit (tests/test_rng.c).
 *
 * Streams are stable from WS_STREAM_VERSION 2 on: changing what any
 * function here returns for a given state is a new WS_STREAM_VERSION and a
 * new package version (wattsim/version.h says which; the build checks it).
 *
 * In the spirit of GSL's generator types, small and explicit: a ws_rng is
 * a plain struct (no allocation), seeded by ws_rng_seed*; the hot draws
 * are inline below, the rest in engine/{seedseq,pcg64,bounded,ziggurat}.c.
 *
 * numpy equivalents (rng = default_rng(seed), or see ws_rng_seed_spawn):
 *   ws_rng_next64          rng.bit_generator.random_raw()
 *   ws_rng_next32          the bit generator's next_uint32: the low half of
 *                          a 64-bit output, its high half kept for the next
 *                          call (64-bit draws in between do not touch it)
 *   ws_rng_random          rng.random()
 *   ws_rng_bounded(r, m)   numpy's random_bounded_uint64(0, m), Lemire's
 *                          method (32-bit for m < 2^32); m = 0 draws nothing
 *   ws_rng_integers(r, n)  rng.integers(n) (n >= 1; n = 1 draws nothing)
 *   ws_rng_interval(r, m)  numpy's random_interval(m), m < 2^32: masked
 *                          rejection
 *   ws_rng_choice          rng.choice(n, k, replace=False)
 *   ws_rng_permutation     rng.permutation(n)
 *   ws_rng_standard_normal rng.standard_normal()
 *   ws_rng_normal          rng.normal(loc, scale)
 *   ws_rng_lognormal       rng.lognormal(mean, sigma)
 *   ws_rng_standard_exponential_inv
 *                          rng.standard_exponential(method="inv")
 */
#ifndef WATTSIM_RNG_H
#define WATTSIM_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The family and version of the streams (printed by --version): 2 is
 * numpy 1.24's Generator over PCG64 (version 1 was GSL's MT19937 with
 * role-hashed seeds, before seed-for-seed agreement with Zeus). */
#define WS_STREAM_VERSION 2
#define WS_STREAM_NAME "numpy-1.24-pcg64"

/* ------------------------------------------------------------ seeding */

/* numpy's SeedSequence with the default pool of 4 words: entropy words
 * (little-endian 32-bit words of the seed, at least one) and a spawn key
 * (the child's index path, as SeedSequence(entropy, spawn_key=...)). */
#define WS_SEEDSEQ_POOL 4
typedef struct ws_seedseq {
    uint32_t pool[WS_SEEDSEQ_POOL];
} ws_seedseq;

/* Mix the entropy into the pool. A seed's words are what numpy's
 * _coerce_to_uint32_array gives an int: lowest word first, [0] for 0. */
void ws_seedseq_init(ws_seedseq *s, const uint32_t *entropy, size_t n_entropy,
                     const uint32_t *spawn_key, size_t n_spawn);
/* SeedSequence.generate_state(n_words, np.uint32). */
void ws_seedseq_generate(const ws_seedseq *s, uint32_t *out, size_t n_words);
/* The entropy words of an unsigned seed: 1 or 2 words; returns how many. */
size_t ws_seed_words(uint64_t seed, uint32_t words[2]);

/* ---------------------------------------------------------- generator */

typedef struct ws_rng {
    uint64_t state_hi, state_lo;   /* 128-bit LCG state */
    uint64_t inc_hi, inc_lo;       /* odd increment */
    uint32_t buf32;                /* the kept half of a 64-bit output */
    int has32;                     /* buf32 holds one */
} ws_rng;

/* np.random.default_rng(seed), i.e. Generator(PCG64(SeedSequence(seed))). */
void ws_rng_seed(ws_rng *r, uint64_t seed);
/* Generator(PCG64(SeedSequence(seed, spawn_key=(key,)))), which is also
 * SeedSequence(seed).spawn(key + 1)[key]: streams for roles that Zeus has
 * no equivalent of, independent of default_rng(seed). */
void ws_rng_seed_spawn(ws_rng *r, uint64_t seed, uint32_t key);
/* PCG64(seed_sequence). */
void ws_rng_seed_seq(ws_rng *r, const ws_seedseq *s);

/* PCG's 128-bit multiplier. */
#define WS_PCG_MULT_HI 2549297995355413924ULL
#define WS_PCG_MULT_LO 4865540595714422341ULL

/* One step of the LCG, then XSL-RR: xor of the state's halves rotated
 * right by its top 6 bits. */
static inline uint64_t ws_rng_next64(ws_rng *r)
{
#if defined(__SIZEOF_INT128__)
    typedef unsigned __int128 u128;
    const u128 s = ((u128)r->state_hi << 64 | r->state_lo)
                       * ((u128)WS_PCG_MULT_HI << 64 | WS_PCG_MULT_LO)
                   + ((u128)r->inc_hi << 64 | r->inc_lo);
    const uint64_t hi = (uint64_t)(s >> 64), lo = (uint64_t)s;
#else
    /* 64 x 64 -> 128 from 32-bit halves. */
    const uint64_t a = r->state_lo, b = WS_PCG_MULT_LO;
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p10 & 0xffffffffu) + (p01 & 0xffffffffu);
    uint64_t hi = p11 + (p10 >> 32) + (p01 >> 32) + (mid >> 32);
    uint64_t lo = a * b;
    hi += r->state_hi * WS_PCG_MULT_LO + r->state_lo * WS_PCG_MULT_HI;
    const uint64_t lo2 = lo + r->inc_lo;
    hi += r->inc_hi + (lo2 < lo);
    lo = lo2;
#endif
    r->state_hi = hi;
    r->state_lo = lo;
    const unsigned rot = (unsigned)(hi >> 58);
    const uint64_t x = hi ^ lo;
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

static inline uint32_t ws_rng_next32(ws_rng *r)
{
    if (r->has32) {
        r->has32 = 0;
        return r->buf32;
    }
    const uint64_t x = ws_rng_next64(r);
    r->has32 = 1;
    r->buf32 = (uint32_t)(x >> 32);
    return (uint32_t)x;
}

/* [0, 1) in steps of 2^-53. */
static inline double ws_rng_random(ws_rng *r)
{
    return (double)(ws_rng_next64(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Lemire's rejection when the first product's low word falls short (out
 * of line: for a range below 2^31 it is taken with probability < 2^-1). */
uint32_t ws_rng__lemire32_retry(ws_rng *r, uint32_t m, uint64_t prod);

/* Uniform in [0, m] for m < 2^32 - 1, Lemire's method on next32: the high
 * word of next32 * (m + 1), redrawn while the low word is below
 * 2^32 mod (m + 1). m = 0 draws nothing. */
static inline uint32_t ws_rng_bounded32(ws_rng *r, uint32_t m)
{
    if (m == 0) return 0;
    const uint64_t prod = (uint64_t)ws_rng_next32(r) * ((uint64_t)m + 1);
    if ((uint32_t)prod < m + 1u) return ws_rng__lemire32_retry(r, m, prod);
    return (uint32_t)(prod >> 32);
}

/* Uniform in [0, m]: 32-bit draws when m fits (m = 2^32 - 1: next32
 * itself), else Lemire on next64 (m = 2^64 - 1: next64 itself). */
uint64_t ws_rng_bounded(ws_rng *r, uint64_t m);

/* rng.integers(n) for n >= 1: uniform in [0, n). */
static inline uint64_t ws_rng_integers(ws_rng *r, uint64_t n)
{
    return n - 1 <= 0xfffffffeu ? ws_rng_bounded32(r, (uint32_t)(n - 1))
                                : ws_rng_bounded(r, n - 1);
}

/* Uniform in [0, m] by masked rejection: a 32-bit draw masked to the
 * smallest 2^k - 1 >= m, redrawn until it is at most m. (numpy draws 64
 * bits for m >= 2^32, for arrays of 2^32 elements or more; not here.) */
uint32_t ws_rng_interval(ws_rng *r, uint32_t m);

/* rng.choice(n, k, replace=False) into out[0..k): Floyd's algorithm,
 * then a Lemire shuffle of the k picks; for n > 10000 and k > n / 50 a
 * partial Lemire shuffle of 0..n-1 instead (numpy's tail shuffle).
 * Returns 0, or -1 if k > n or n, k < 0, or out of memory. */
int ws_rng_choice(ws_rng *r, int64_t n, int64_t k, int64_t *out);

/* rng.permutation(n) into out[0..n): 0..n-1 shuffled with
 * ws_rng_interval (last position first). Returns 0, or -1 when n < 0 or
 * n > 2^32 (nothing drawn). */
int ws_rng_permutation(ws_rng *r, int64_t n, int64_t *out);

/* rng.shuffle(x) of n elements of `size` bytes: 0, or -1 when n > 2^32
 * or size > 64 (nothing drawn). */
int ws_rng_shuffle(ws_rng *r, void *x, size_t n, size_t size);

/* The 256-layer ziggurat's rare paths (wedges and tail), out of line. */
double ws_rng__normal_slow(ws_rng *r, uint64_t raw);
extern const uint64_t ws_zig_ki[256];
extern const double ws_zig_wi[256];

/* rng.standard_normal(): 8 bits of a 64-bit draw pick the layer, 1 the
 * sign, 52 the magnitude; inside the layer's rectangle (99.3 %) that is
 * the answer. */
static inline double ws_rng_standard_normal(ws_rng *r)
{
    const uint64_t raw = ws_rng_next64(r);
    const unsigned idx = (unsigned)(raw & 0xff);
    const uint64_t rabs = (raw >> 9) & 0x000fffffffffffffULL;
    if (rabs < ws_zig_ki[idx]) {
        const double x = (double)rabs * ws_zig_wi[idx];
        return (raw >> 8) & 1 ? -x : x;
    }
    return ws_rng__normal_slow(r, raw);
}

/* rng.normal(loc, scale): loc + scale * z, drawn whatever the scale
 * (scale 0 still consumes a draw, as numpy does). */
static inline double ws_rng_normal(ws_rng *r, double loc, double scale)
{
    return loc + scale * ws_rng_standard_normal(r);
}

/* rng.lognormal(mean, sigma) = exp(normal(mean, sigma)). */
static inline double ws_rng_lognormal(ws_rng *r, double mean, double sigma)
{
    return exp(ws_rng_normal(r, mean, sigma));
}

/* rng.standard_exponential(method="inv") = -log1p(-random()). */
static inline double ws_rng_standard_exponential_inv(ws_rng *r)
{
    return -log1p(-ws_rng_random(r));
}

/* --------------------------------------------------- branch statistics
 * Counts of the rare paths, per thread, in builds with -DWS_RNG_STATS
 * (the stream test's, which must see every one of them taken). */
typedef struct ws_rng_stats {
    unsigned long lemire32_retry;     /* low word short: threshold computed */
    unsigned long lemire32_reject;    /* ... and a redraw */
    unsigned long lemire64_retry, lemire64_reject;
    unsigned long full32, full64;     /* m = 2^32 - 1 or 2^64 - 1 */
    unsigned long masked32_reject;
    unsigned long floyd_collision;    /* Floyd's pick was taken: j instead */
    unsigned long choice_tail;        /* the tail-shuffle path of choice */
    unsigned long normal_wedge_accept, normal_wedge_reject;
    unsigned long normal_tail_accept, normal_tail_reject;
} ws_rng_stats;

/* This thread's counts (all zero without WS_RNG_STATS). */
ws_rng_stats *ws_rng_stats_get(void);

#endif
