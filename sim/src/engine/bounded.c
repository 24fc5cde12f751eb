/*
 * Bounded integers, choice and permutation as numpy 1.24's Generator
 * makes them (wattsim/rng.h). Which method numpy uses depends on the
 * caller, and every caller's is reproduced:
 *
 *  - integers, choice and its shuffle: Lemire's multiply-and-reject
 *    (Lemire, "Fast Random Integer Generation in an Interval", 2019):
 *    for a range [0, m], x * (m + 1) for a random word x; its high word is
 *    the answer unless its low word falls below 2^w mod (m + 1), which is
 *    only worth computing when the low word is below m + 1. Ranges below
 *    2^32 - 1 use 32-bit words (ws_rng_next32, so half of a 64-bit
 *    output is kept for the next 32-bit draw); [0, 2^32 - 1] and
 *    [0, 2^64 - 1] are one word as is; m = 0 draws nothing.
 *  - permutation and shuffle: masked rejection (ws_rng_interval), for
 *    arrays below 2^32 elements (numpy's 64-bit path for larger ones is
 *    not provided).
 *  - choice(n, k, replace=False): Floyd's algorithm (for j = n-k .. n-1,
 *    pick uniform in [0, j]; if already picked, take j), then a Lemire
 *    shuffle of the k picks (positions k-1 down to 1); when n > 10000 and
 *    k > n / 50, a Lemire shuffle of positions n-1 down to max(n-k, 1) of
 *    0..n-1 whose last k entries are the answer (the "tail shuffle").
 */
#include "wattsim/rng.h"

#include <stdlib.h>
#include <string.h>

#include "rng_stats.h"

uint32_t ws_rng__lemire32_retry(ws_rng *r, uint32_t m, uint64_t prod)
{
    const uint32_t excl = m + 1u;
    const uint32_t threshold = (UINT32_MAX - m) % excl;   /* 2^32 mod excl */
    RNG_COUNT(lemire32_retry);
    while ((uint32_t)prod < threshold) {
        RNG_COUNT(lemire32_reject);
        prod = (uint64_t)ws_rng_next32(r) * excl;
    }
    return (uint32_t)(prod >> 32);
}

/* High and low words of a * b. */
static inline uint64_t mul128(uint64_t a, uint64_t b, uint64_t *lo)
{
#if defined(__SIZEOF_INT128__)
    const unsigned __int128 p = (unsigned __int128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
#else
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p10 & 0xffffffffu) + (p01 & 0xffffffffu);
    *lo = a * b;
    return p11 + (p10 >> 32) + (p01 >> 32) + (mid >> 32);
#endif
}

uint64_t ws_rng_bounded(ws_rng *r, uint64_t m)
{
    if (m == 0) return 0;
    if (m <= 0xffffffffu) {
        if (m == 0xffffffffu) {
            RNG_COUNT(full32);
            return ws_rng_next32(r);
        }
        return ws_rng_bounded32(r, (uint32_t)m);
    }
    if (m == UINT64_MAX) {
        RNG_COUNT(full64);
        return ws_rng_next64(r);
    }
    const uint64_t excl = m + 1;
    uint64_t lo, hi = mul128(ws_rng_next64(r), excl, &lo);
    if (lo < excl) {
        const uint64_t threshold = (UINT64_MAX - m) % excl;   /* 2^64 mod excl */
        RNG_COUNT(lemire64_retry);
        while (lo < threshold) {
            RNG_COUNT(lemire64_reject);
            hi = mul128(ws_rng_next64(r), excl, &lo);
        }
    }
    return hi;
}

uint32_t ws_rng_interval(ws_rng *r, uint32_t m)
{
    if (m == 0) return 0;
    uint32_t mask = m, v;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    while ((v = ws_rng_next32(r) & mask) > m) RNG_COUNT(masked32_reject);
    return v;
}

#define MAX_SHUFFLE 0x100000000ull   /* positions below 2^32: 32-bit picks */

int ws_rng_permutation(ws_rng *r, int64_t n, int64_t *out)
{
    if (n < 0 || (uint64_t)n > MAX_SHUFFLE) return -1;
    for (int64_t i = 0; i < n; i++) out[i] = i;
    for (int64_t i = n - 1; i >= 1; i--) {
        const int64_t j = ws_rng_interval(r, (uint32_t)i);
        const int64_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
    return 0;
}

int ws_rng_shuffle(ws_rng *r, void *x, size_t n, size_t size)
{
    unsigned char *b = x, tmp[64];
    if (size > sizeof tmp || (uint64_t)n > MAX_SHUFFLE) return -1;
    for (size_t i = n; i-- > 1;) {
        const size_t j = ws_rng_interval(r, (uint32_t)i);
        memcpy(tmp, b + j * size, size);
        memcpy(b + j * size, b + i * size, size);
        memcpy(b + i * size, tmp, size);
    }
    return 0;
}

/* A Lemire pick of [0, m]: inline for the 32-bit ranges (every shuffle of
 * fewer than 2^32 elements), else ws_rng_bounded. */
static inline uint64_t pick(ws_rng *r, uint64_t m)
{
    return m < 0xffffffffu ? ws_rng_bounded32(r, (uint32_t)m) : ws_rng_bounded(r, m);
}

/* Positions n-1 down to `first` of a[], each swapped with a Lemire pick
 * of [0, i]. */
static inline void lemire_shuffle(ws_rng *r, int64_t n, int64_t first, int64_t *a)
{
    for (int64_t i = n - 1; i >= first; i--) {
        const int64_t j = (int64_t)pick(r, (uint64_t)i);
        const int64_t t = a[j];
        a[j] = a[i];
        a[i] = t;
    }
}

/* Membership among Floyd's picks so far: a scan of out[] for few picks,
 * else an open-addressing table (which numpy also uses; any set gives the
 * same picks). */
typedef struct pick_set {
    uint64_t *slot, mask;
} pick_set;

#define SCAN_MAX 64
#define EMPTY UINT64_MAX

static int set_has_or_add(pick_set *s, const int64_t *out, int64_t t, uint64_t v)
{
    if (!s->slot) {
        for (int64_t q = 0; q < t; q++)
            if ((uint64_t)out[q] == v) return 1;
        return 0;
    }
    uint64_t at = v & s->mask;
    while (s->slot[at] != EMPTY) {
        if (s->slot[at] == v) return 1;
        at = (at + 1) & s->mask;
    }
    s->slot[at] = v;
    return 0;
}

int ws_rng_choice(ws_rng *r, int64_t n, int64_t k, int64_t *out)
{
    if (n < 0 || k < 0 || k > n) return -1;
    if (n > 10000 && k > n / 50) {
        RNG_COUNT(choice_tail);
        int64_t *a = malloc((size_t)n * sizeof *a);
        if (!a) return -1;
        for (int64_t i = 0; i < n; i++) a[i] = i;
        lemire_shuffle(r, n, n - k > 1 ? n - k : 1, a);
        memcpy(out, a + (n - k), (size_t)k * sizeof *out);
        free(a);
        return 0;
    }
    if (k == n) {
        /* Every step's picks so far are exactly 0..j-1: a pick below j is
         * taken, so Floyd adds j either way (the draw is still made). */
        for (int64_t j = 0; j < n; j++) {
            if (pick(r, (uint64_t)j) < (uint64_t)j) RNG_COUNT(floyd_collision);
            out[j] = j;
        }
        lemire_shuffle(r, k, 1, out);
        return 0;
    }
    pick_set s = {NULL, 0};
    if (k > SCAN_MAX) {
        uint64_t size = 1;
        while (size < 2 * (uint64_t)k) size <<= 1;
        if (!(s.slot = malloc(size * sizeof *s.slot))) return -1;
        memset(s.slot, 0xff, size * sizeof *s.slot);
        s.mask = size - 1;
    }
    for (int64_t j = n - k, t = 0; j < n; j++, t++) {
        const uint64_t v = pick(r, (uint64_t)j);
        if (!set_has_or_add(&s, out, t, v)) {
            out[t] = (int64_t)v;
        } else {
            /* j is not among the picks: all of them are below j. */
            RNG_COUNT(floyd_collision);
            if (s.slot) set_has_or_add(&s, out, t, (uint64_t)j);
            out[t] = j;
        }
    }
    free(s.slot);
    lemire_shuffle(r, k, 1, out);
    return 0;
}
