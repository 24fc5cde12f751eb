/*
 * The random streams (wattsim/rng.h), the reductions (wattsim/
 * npreduce.h) and pandas' float parser (ws_pd_strtod) against numpy 1.24
 * and pandas 1.5, bit for bit.
 *
 * One list of operations (seeding, raw words, 32-bit halves, doubles,
 * bounded integers of every kind of range, normals, choice, permutation,
 * shuffle, sums, means and variances of arrays, decimal numbers read as
 * pd.read_csv reads them) runs here and in
 * tests/oracle/numpy_streams.py under /usr/bin/python3 (WS_PYTHON), which
 * insists on numpy 1.24 and pandas 1.5: Generator streams are not
 * promised stable across numpy versions. The results must be the same
 * bytes. Most operations run on one generator in turn, in mixed order and
 * odd counts, so that a kept 32-bit half meets the next 32-bit draw after
 * 64-bit ones, as in a simulation.
 *
 * Two checks that the comparison has teeth:
 *  - every rare path is taken at least once (this suite compiles the
 *    stream sources itself with -DWS_RNG_STATS, which counts them):
 *    Lemire retries and rejections in 32 and 64 bits, full 32- and 64-bit
 *    ranges, masked rejections, Floyd collisions, choice's tail shuffle,
 *    the normal's wedges and tail, accepted and rejected;
 *  - each primitive replaced by a plausible other algorithm (modulo or
 *    masked bounded integers, unbuffered 32-bit halves, Lemire instead of
 *    masked shuffles, choice without Floyd or without its shuffle, another
 *    tail sign or normal method, 52-bit doubles, seeding without padding,
 *    naive sums, Welford variance, pairwise group means, strtod for
 *    pandas' parser) makes the comparison fail.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wattsim/csv.h"
#include "wattsim/npreduce.h"
#include "wattsim/rng.h"

#ifndef WS_PYTHON
#define WS_PYTHON "/usr/bin/python3"
#endif
#define ORACLE WS_SOURCE_DIR "/tests/oracle/numpy_streams.py"

/* ------------------------------------------------------------ the ops */

typedef enum {
    OP_SEEDSEQ, OP_GEN, OP_RAW, OP_U32, OP_RANDOM, OP_INTEGERS, OP_NORMAL, OP_NORMALLS,
    OP_LOGNORMAL, OP_EXPINV, OP_CHOICE, OP_PERM, OP_SHUFFLE, OP_REDUCE, OP_PDFLOAT
} op_kind;

static const char *const OP_NAMES[] = {"seedseq", "gen", "raw", "u32", "random", "integers",
                                       "normal", "normalls", "lognormal", "expinv", "choice",
                                       "perm", "shuffle", "reduce", "pdfloat"};

typedef struct op {
    op_kind k;
    uint64_t seed;
    int has_key;
    uint32_t key;
    int high_is_2_64;          /* integers: high = 2^64 */
    uint64_t high;             /* integers: high (exclusive) */
    long n, m;                 /* counts; choice: n, k; reduce: offset, n */
    double x, y;               /* normalls, lognormal parameters */
} op;

typedef struct ops {
    op *v;
    size_t n, cap;
    double *data;              /* the reductions' arrays */
    size_t n_data, data_cap;
    char *strings;             /* pdfloat's numbers, one a line */
    size_t n_strings, strings_len, strings_cap;
} ops;

static op *add(ops *o, op_kind k)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 1024;
        o->v = realloc(o->v, o->cap * sizeof *o->v);
        cr_assert_not_null(o->v);
    }
    op *p = &o->v[o->n++];
    memset(p, 0, sizeof *p);
    p->k = k;
    return p;
}

static void add_n(ops *o, op_kind k, long n) { add(o, k)->n = n; }

static void add_int(ops *o, uint64_t high, int is_2_64, long n)
{
    op *p = add(o, OP_INTEGERS);
    p->high = high;
    p->high_is_2_64 = is_2_64;
    p->n = n;
}

static void add_choice(ops *o, long n, long k)
{
    op *p = add(o, OP_CHOICE);
    p->n = n;
    p->m = k;
}

static void add_data(ops *o, double x)
{
    if (o->n_data == o->data_cap) {
        o->data_cap = o->data_cap ? 2 * o->data_cap : 4096;
        o->data = realloc(o->data, o->data_cap * sizeof *o->data);
        cr_assert_not_null(o->data);
    }
    o->data[o->n_data++] = x;
}

static void add_string(ops *o, const char *str)
{
    const size_t n = strlen(str) + 1;
    if (o->strings_len + n > o->strings_cap) {
        o->strings_cap = o->strings_cap ? 2 * o->strings_cap : 1 << 16;
        o->strings = realloc(o->strings, o->strings_cap);
        cr_assert_not_null(o->strings);
    }
    memcpy(o->strings + o->strings_len, str, n);
    o->strings_len += n;
    o->n_strings++;
}

static void add_reduce(ops *o, size_t off)
{
    op *p = add(o, OP_REDUCE);
    p->n = (long)off;
    p->m = (long)(o->n_data - off);
}

/* Ranges of integers(0, high): small, powers of two and one past, ones
 * whose 32-bit Lemire threshold is large (3 * 2^30 + 1: a quarter of
 * draws rejected), the full 32- and 64-bit ranges, and 64-bit ones (2^63
 * + 1: half rejected). */
static const uint64_t HIGHS[] = {1, 2, 3, 5, 7, 10, 17, 100, 1000, 65537, 1u << 31,
                                 (1u << 31) + 1, 3221225473u, 4294967295u, 4294967296u,
                                 4294967297u, 1099511627779u, 9223372036854775809u,
                                 18446744073709551615u};

static void build(ops *o)
{
    /* Seeds: small ones (the paper's 1..20), edges of the word split, and
     * large ones. */
    uint64_t seeds[48];
    size_t ns = 0;
    for (uint64_t s = 0; s <= 20; s++) seeds[ns++] = s;
    const uint64_t edge[] = {42, 12345, 2147483647u, 4294967295u, 4294967296u, 4294967297u,
                             281474976710663u, 9223372036854775808u, UINT64_MAX};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) seeds[ns++] = edge[i];
    uint64_t z = 0x9E3779B97F4A7C15u;
    while (ns < 40) {
        z ^= z >> 31;
        z *= 0xBF58476D1CE4E5B9u;
        seeds[ns++] = z;
    }
    const uint32_t keys[] = {0, 1, 2, 16, 17, 4294967295u};
    for (size_t si = 0; si < ns; si++) {
        const uint64_t s = seeds[si];
        op *p = add(o, OP_SEEDSEQ);
        p->seed = s;
        p->n = 8;
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            p = add(o, OP_SEEDSEQ);
            p->seed = s;
            p->n = 9;
            p->has_key = 1;
            p->key = keys[k];
        }
        add(o, OP_GEN)->seed = s;
        add_n(o, OP_RAW, 257);
        add_n(o, OP_U32, 3);
        /* Mixed, odd counts: kept halves meet later 32-bit draws. */
        for (long t = 0; t < 100; t++) {
            const uint64_t h = HIGHS[(size_t)(t + (long)si) % (sizeof HIGHS / sizeof *HIGHS)];
            add_int(o, h, 0, 1 + t % 3);
            if (t % 4) add_n(o, OP_NORMAL, t % 4);
            if (t % 2) add_n(o, OP_RANDOM, 1);
            const long cn = 1 + t % 12;
            add_choice(o, cn, t % 5 == 4 ? cn / 2 : cn - t % 2);
            if (t % 9) add_n(o, OP_PERM, t % 9);
            if (t % 7 == 3) add_n(o, OP_U32, 1);
        }
        add_int(o, 0, 1, 3);                       /* high = 2^64 */
        add_n(o, OP_NORMAL, 60000);
        add_int(o, 3221225473u, 0, 3001);
        add_int(o, 9223372036854775809u, 0, 2001);
        add_int(o, 4294967296u, 0, 5);
        add_choice(o, 50, 40);                     /* Floyd collisions */
        add_choice(o, 20000, 1000);                /* the tail shuffle */
        add_choice(o, 20000, 100);                 /* Floyd, k > 64 */
        add_choice(o, 1099511627776, 5);           /* 64-bit Floyd picks */
        add_n(o, OP_PERM, 1000);
        add_n(o, OP_SHUFFLE, 1001);
        add_n(o, OP_RANDOM, 1001);
        op *q = add(o, OP_NORMALLS);
        q->x = -3.5 + 0.25 * (double)si;
        q->y = si % 5 ? 0.125 * (double)si : 0.0;  /* scale 0 draws too */
        q->n = 101;
        q = add(o, OP_LOGNORMAL);
        q->x = -0.02;
        q->y = 0.2;
        q->n = 101;
        add_n(o, OP_EXPINV, 101);
        add_n(o, OP_U32, 1);
        p = add(o, OP_GEN);
        p->seed = s;
        p->has_key = 1;
        p->key = keys[si % 6];
        add_n(o, OP_RAW, 11);
        add_n(o, OP_NORMAL, 11);
    }

    /* Reductions: lengths at and around the 8-term and 128-term blocks
     * and the splits above them; magnitudes spread so that the order of a
     * sum shows; and repeated values (a group of duplicated rows). */
    ws_rng r;
    ws_rng_seed(&r, 2024);
    const long lens[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 100, 127, 128, 129,
                         130, 136, 255, 256, 257, 300, 513, 1000, 1023, 1024, 4097, 8192, 8193, 9000, 20000};
    for (int rep = 0; rep < 3; rep++)
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            const size_t off = o->n_data;
            const double scale = pow(10.0, (double)ws_rng_integers(&r, 10) - 3.0);
            const double shift = (double)ws_rng_integers(&r, 3) * 1e4 * scale;
            for (long i = 0; i < lens[li]; i++) {
                const double big = ws_rng_integers(&r, 16) == 0 ? 1e3 : 1.0;
                add_data(o, shift + big * scale * ws_rng_standard_normal(&r));
            }
            add_reduce(o, off);
        }
    for (int t = 0; t < 400; t++) {
        const size_t off = o->n_data;
        const long R = 1 + t % 12;
        const double x = (ws_rng_random(&r) + 0.5) * pow(10.0, (double)ws_rng_integers(&r, 6));
        for (long i = 0; i < R; i++) add_data(o, x);
        add_reduce(o, off);
    }

    /* Decimal numbers as pandas reads them: 1 to 25 significant digits,
     * the point anywhere, leading zeros, exponents from -330 to 310 (a
     * trace's "9.216666666666669" is the 16-digit kind). */
    for (int blk = 0; blk < 20; blk++) {
        const size_t first = o->n_strings;
        for (int t = 0; t < 1000; t++) {
            char num[64];
            size_t n = 0;
            if (ws_rng_integers(&r, 5) == 0) num[n++] = '-';
            const int nd = 1 + (int)ws_rng_integers(&r, 25);
            const int point = (int)ws_rng_integers(&r, (uint64_t)nd + 1);
            for (int d = 0; d < nd; d++) {
                if (d == point && d > 0) num[n++] = '.';
                num[n++] = (char)('0' + (d == 0 && nd > 1 && ws_rng_integers(&r, 4)
                                         ? 1 + ws_rng_integers(&r, 9)
                                         : ws_rng_integers(&r, 10)));
            }
            if (ws_rng_integers(&r, 3) == 0)
                n += (size_t)snprintf(num + n, sizeof num - n, "e%d",
                                      (int)ws_rng_integers(&r, 641) - 330);
            num[n] = '\0';
            char *end;
            const double v = strtod(num, &end);
            if (!isfinite(v) || v == 0.0 || fabs(v) < 1e-300) continue;   /* finite, normal */
            add_string(o, num);
        }
        op *p = add(o, OP_PDFLOAT);
        p->n = (long)first;
        p->m = (long)(o->n_strings - first);
    }
}

/* ------------------------------------------------------------ mutants */

typedef enum {
    M_NONE,
    M_INT_MODULO,          /* bounded integers: next32 % n */
    M_INT_MASKED,          /* bounded integers: masked rejection */
    M_UNBUFFERED32,        /* next32 drops the high half */
    M_PERM_LEMIRE,         /* permutation/shuffle: Lemire picks */
    M_CHOICE_TAIL,         /* choice: the tail shuffle for every size */
    M_CHOICE_NOSHUFFLE,    /* choice: Floyd's picks unshuffled */
    M_NORMAL_TAILSIGN,     /* the tail's sign from the sign bit */
    M_NORMAL_POLAR,        /* normals by Marsaglia's polar method */
    M_RANDOM_52,           /* doubles from 52 bits */
    M_SEEDSEQ_NOPAD,       /* spawn key without padding to the pool */
    M_SUM_NAIVE,           /* sums left to right */
    M_VAR_WELFORD,         /* one-pass variance */
    M_GROUPMEAN_PAIRWISE,  /* pandas' group mean as numpy's mean */
    M_PDFLOAT_STRTOD,      /* pandas' float parsing as strtod */
    M_COUNT
} mutant;

static const char *const MUTANT_NAMES[] = {
    "none", "bounded integers by modulo", "bounded integers by masked rejection",
    "32-bit draws without the kept half", "permutation by Lemire picks",
    "choice by the tail shuffle", "choice without its shuffle",
    "the normal tail's sign from the sign bit", "normals by the polar method",
    "doubles from 52 bits", "spawn keys without padding", "naive sums",
    "Welford's variance", "group means as numpy means",
    "pandas' float parser as strtod"};

static uint32_t m_next32(ws_rng *r, mutant mu)
{
    if (mu == M_UNBUFFERED32) return (uint32_t)ws_rng_next64(r);
    return ws_rng_next32(r);
}

/* integers(0, high) under a mutant. */
static uint64_t m_integer(ws_rng *r, const op *p, mutant mu)
{
    if (p->high_is_2_64) return ws_rng_bounded(r, UINT64_MAX);
    const uint64_t m = p->high - 1;
    if (m == 0) return 0;
    if (m < 0xffffffffu) {
        if (mu == M_INT_MODULO) return m_next32(r, mu) % (m + 1);
        if (mu == M_INT_MASKED) return ws_rng_interval(r, (uint32_t)m);
        if (mu == M_UNBUFFERED32) {
            uint64_t prod = (uint64_t)m_next32(r, mu) * (m + 1);
            const uint32_t th = (uint32_t)((UINT32_MAX - m) % (m + 1));
            while ((uint32_t)prod < th) prod = (uint64_t)m_next32(r, mu) * (m + 1);
            return prod >> 32;
        }
    }
    if (m == 0xffffffffu && mu == M_UNBUFFERED32) return m_next32(r, mu);
    return ws_rng_integers(r, p->high);
}

static double m_random(ws_rng *r, mutant mu)
{
    if (mu == M_RANDOM_52) return (double)(ws_rng_next64(r) >> 12) * (1.0 / 4503599627370496.0);
    return ws_rng_random(r);
}

/* The ziggurat as numpy draws it, but a first-try tail signed by the
 * sign bit (bit 8 of the draw) rather than bit 8 of the magnitude. */
static double normal_tailsign(ws_rng *r)
{
    const uint64_t raw = ws_rng_next64(r);
    const unsigned idx = raw & 0xff;
    const uint64_t rabs = (raw >> 9) & 0x000fffffffffffffULL;
    if (rabs < ws_zig_ki[idx]) {
        const double x = (double)rabs * ws_zig_wi[idx];
        return (raw >> 8) & 1 ? -x : x;
    }
    if (idx != 0) return ws_rng__normal_slow(r, raw);
    for (;;) {
        const double xx = -0.27366123732975827203338247596 * log1p(-ws_rng_random(r));
        const double yy = -log1p(-ws_rng_random(r));
        if (yy + yy > xx * xx)
            return (raw >> 8) & 1 ? -(3.6541528853610087963519472518 + xx)
                                  : 3.6541528853610087963519472518 + xx;
    }
}

static double m_normal(ws_rng *r, mutant mu)
{
    if (mu == M_NORMAL_TAILSIGN) return normal_tailsign(r);
    if (mu == M_NORMAL_POLAR) {
        for (;;) {
            const double u = 2.0 * ws_rng_random(r) - 1.0, v = 2.0 * ws_rng_random(r) - 1.0;
            const double s = u * u + v * v;
            if (s > 0 && s < 1) return u * sqrt(-2.0 * log(s) / s);
        }
    }
    return ws_rng_standard_normal(r);
}

static void m_choice(ws_rng *r, long n, long k, int64_t *out, mutant mu)
{
    if (mu == M_CHOICE_TAIL && n <= 1000000) {
        int64_t *a = malloc((size_t)(n ? n : 1) * sizeof *a);
        cr_assert_not_null(a);
        for (long i = 0; i < n; i++) a[i] = i;
        for (long i = n - 1; i >= (n - k > 1 ? n - k : 1); i--) {
            const int64_t j = (int64_t)ws_rng_bounded(r, (uint64_t)i), t = a[j];
            a[j] = a[i];
            a[i] = t;
        }
        memcpy(out, a + (n - k), (size_t)k * sizeof *out);
        free(a);
        return;
    }
    if (mu == M_CHOICE_NOSHUFFLE && n <= 10000) {
        for (long j = n - k, t = 0; j < n; j++, t++) {
            const int64_t v = (int64_t)ws_rng_bounded(r, (uint64_t)j);
            int seen = 0;
            for (long q = 0; q < t; q++) seen |= out[q] == v;
            out[t] = seen ? j : v;
        }
        return;
    }
    cr_assert_eq(ws_rng_choice(r, n, k, out), 0);
}

static void m_perm(ws_rng *r, long n, int64_t *out, mutant mu)
{
    if (mu != M_PERM_LEMIRE) {
        cr_assert_eq(ws_rng_permutation(r, n, out), 0);
        return;
    }
    for (long i = 0; i < n; i++) out[i] = i;
    for (long i = n - 1; i >= 1; i--) {
        const int64_t j = (int64_t)ws_rng_bounded(r, (uint64_t)i), t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

static double naive_sum(const double *a, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i];
    return s;
}

static double welford_var(const double *a, size_t n)
{
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = a[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (a[i] - mean);
    }
    return m2 / (double)n;
}

/* ------------------------------------------------------------ running */

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *x, size_t n)
{
    if (b->n + n > b->cap) {
        while (b->n + n > b->cap) b->cap = b->cap ? 2 * b->cap : 1 << 20;
        b->p = realloc(b->p, b->cap);
        cr_assert_not_null(b->p);
    }
    memcpy(b->p + b->n, x, n);
    b->n += n;
}

static void put_u64(buf *b, uint64_t x) { put(b, &x, 8); }
static void put_f64(buf *b, double x) { put(b, &x, 8); }

/* The ops' results, and where each op's bytes start (ends[i] is the end
 * of op i). */
static void run(const ops *o, mutant mu, buf *b, size_t *ends)
{
    ws_rng r;
    memset(&r, 0, sizeof r);
    int64_t *tmp = malloc(20000 * sizeof *tmp);
    cr_assert_not_null(tmp);
    const char *str = o->strings;           /* pdfloat's next string */
    for (size_t i = 0; i < o->n; i++) {
        const op *p = &o->v[i];
        switch (p->k) {
        case OP_SEEDSEQ: {
            uint32_t w[2], out[16];
            const size_t nw = ws_seed_words(p->seed, w);
            ws_seedseq s;
            if (p->has_key && mu == M_SEEDSEQ_NOPAD) {
                uint32_t all[3] = {w[0], w[1], 0};
                all[nw] = p->key;
                ws_seedseq_init(&s, all, nw + 1, NULL, 0);
            } else {
                ws_seedseq_init(&s, w, nw, p->has_key ? &p->key : NULL, p->has_key);
            }
            ws_seedseq_generate(&s, out, (size_t)p->n);
            put(b, out, 4 * (size_t)p->n);
            break;
        }
        case OP_GEN:
            if (p->has_key) ws_rng_seed_spawn(&r, p->seed, p->key);
            else ws_rng_seed(&r, p->seed);
            break;
        case OP_RAW:
            for (long j = 0; j < p->n; j++) put_u64(b, ws_rng_next64(&r));
            break;
        case OP_U32:
            for (long j = 0; j < p->n; j++) put_u64(b, m_next32(&r, mu));
            break;
        case OP_RANDOM:
            for (long j = 0; j < p->n; j++) put_f64(b, m_random(&r, mu));
            break;
        case OP_INTEGERS:
            for (long j = 0; j < p->n; j++) put_u64(b, m_integer(&r, p, mu));
            break;
        case OP_NORMAL:
            for (long j = 0; j < p->n; j++) put_f64(b, m_normal(&r, mu));
            break;
        case OP_NORMALLS:
            for (long j = 0; j < p->n; j++) put_f64(b, ws_rng_normal(&r, p->x, p->y));
            break;
        case OP_LOGNORMAL:
            for (long j = 0; j < p->n; j++) put_f64(b, ws_rng_lognormal(&r, p->x, p->y));
            break;
        case OP_EXPINV:
            for (long j = 0; j < p->n; j++) put_f64(b, ws_rng_standard_exponential_inv(&r));
            break;
        case OP_CHOICE:
            m_choice(&r, p->n, p->m, tmp, mu);
            put(b, tmp, 8 * (size_t)p->m);
            break;
        case OP_PERM:
            m_perm(&r, p->n, tmp, mu);
            put(b, tmp, 8 * (size_t)p->n);
            break;
        case OP_SHUFFLE:
            for (long j = 0; j < p->n; j++) tmp[j] = j;
            if (mu == M_PERM_LEMIRE) m_perm(&r, p->n, tmp, mu);
            else cr_assert_eq(ws_rng_shuffle(&r, tmp, (size_t)p->n, sizeof *tmp), 0);
            put(b, tmp, 8 * (size_t)p->n);
            break;
        case OP_REDUCE: {
            const double *a = o->data + p->n;
            const size_t n = (size_t)p->m;
            const double sum = mu == M_SUM_NAIVE ? naive_sum(a, n) : ws_np_sum(a, n);
            put_f64(b, sum);
            put_f64(b, sum);
            put_f64(b, mu == M_SUM_NAIVE ? sum / (double)n : ws_np_mean(a, n));
            put_f64(b, mu == M_VAR_WELFORD ? welford_var(a, n) : ws_np_var(a, n));
            put_f64(b, mu == M_SUM_NAIVE ? sum / (double)n : ws_np_mean(a, n));
            put_f64(b, mu == M_GROUPMEAN_PAIRWISE ? ws_np_mean(a, n) : ws_pd_group_mean(a, n));
            break;
        }
        case OP_PDFLOAT:
            for (long j = 0; j < p->m; j++) {
                put_f64(b, mu == M_PDFLOAT_STRTOD ? strtod(str, NULL) : ws_pd_strtod(str));
                str += strlen(str) + 1;
            }
            break;
        }
        if (ends) ends[i] = b->n;
    }
    free(tmp);
}

static void fmt_u64(char *s, size_t n, uint64_t x) { snprintf(s, n, "%" PRIu64, x); }

static void write_spec(const ops *o, const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    for (size_t i = 0; i < o->n; i++) {
        const op *p = &o->v[i];
        char s[32];
        fmt_u64(s, sizeof s, p->seed);
        switch (p->k) {
        case OP_SEEDSEQ:
            if (p->has_key) fprintf(f, "seedseq %s %ld %" PRIu32 "\n", s, p->n, p->key);
            else fprintf(f, "seedseq %s %ld\n", s, p->n);
            break;
        case OP_GEN:
            if (p->has_key) fprintf(f, "gen %s %" PRIu32 "\n", s, p->key);
            else fprintf(f, "gen %s\n", s);
            break;
        case OP_INTEGERS:
            if (p->high_is_2_64) fprintf(f, "integers 18446744073709551616 %ld\n", p->n);
            else fprintf(f, "integers %" PRIu64 " %ld\n", p->high, p->n);
            break;
        case OP_NORMALLS:
        case OP_LOGNORMAL:
            fprintf(f, "%s %a %a %ld\n", OP_NAMES[p->k], p->x, p->y, p->n);
            break;
        case OP_CHOICE:
        case OP_REDUCE:
            fprintf(f, "%s %ld %ld\n", OP_NAMES[p->k], p->n, p->m);
            break;
        case OP_PDFLOAT:
            fprintf(f, "pdfloat %ld\n", p->m);
            break;
        default:
            fprintf(f, "%s %ld\n", OP_NAMES[p->k], p->n);
        }
    }
    cr_assert_eq(fclose(f), 0);
}

/* numpy's bytes for the ops (the oracle run under WS_PYTHON). */
static buf oracle(const ops *o, const char *dir)
{
    char spec[256], data[256], out[256], strs[256];
    snprintf(spec, sizeof spec, "%s/spec", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(strs, sizeof strs, "%s/strings", dir);
    write_spec(o, spec);
    FILE *sf = fopen(strs, "w");
    cr_assert_not_null(sf);
    for (const char *q = o->strings; q < o->strings + o->strings_len; q += strlen(q) + 1)
        fprintf(sf, "%s\n", q);
    cr_assert_eq(fclose(sf), 0);
    FILE *f = fopen(data, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(o->data, sizeof *o->data, o->n_data, f), o->n_data);
    cr_assert_eq(fclose(f), 0);
    const char *py = getenv("WS_PYTHON");
    if (!py || !*py) py = WS_PYTHON;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        execl(py, py, ORACLE, spec, data, out, strs, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", py, strerror(errno));
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "the numpy oracle failed (status %d): it needs %s with numpy 1.24 and"
              " pandas 1.5 (Debian 12: apt-get install python3-numpy python3-pandas;"
              " scripts/test installs them)", WIFEXITED(st) ? WEXITSTATUS(st) : -1, py);
    buf b = {0};
    f = fopen(out, "rb");
    cr_assert_not_null(f);
    unsigned char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, chunk, got);
    fclose(f);
    return b;
}

/* The first op whose bytes differ, or -1. */
static long first_difference(const buf *a, const buf *b, const size_t *ends, size_t n_ops)
{
    const size_t n = a->n < b->n ? a->n : b->n;
    size_t at = 0;
    while (at < n && a->p[at] == b->p[at]) at++;
    if (at == n && a->n == b->n) return -1;
    for (size_t i = 0; i < n_ops; i++)
        if (ends[i] > at) return (long)i;
    return (long)n_ops - 1;
}

static void describe(const op *p, char *s, size_t n)
{
    char seed[32];
    fmt_u64(seed, sizeof seed, p->seed);
    snprintf(s, n, "%s (n %ld, m %ld, high %s%" PRIu64 ")", OP_NAMES[p->k], p->n, p->m,
             p->high_is_2_64 ? "2^64 " : "", p->high);
}

Test(rng, streams_and_reductions_equal_numpy_bit_for_bit, .timeout = 600)
{
    char dir[] = "/tmp/wsrng.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    ops o = {0};
    build(&o);
    size_t *ends = malloc(o.n * sizeof *ends);
    cr_assert_not_null(ends);

    buf want = oracle(&o, dir);
    *ws_rng_stats_get() = (ws_rng_stats){0};
    buf got = {0};
    run(&o, M_NONE, &got, ends);
    const long bad = first_difference(&got, &want, ends, o.n);
    if (bad >= 0) {
        char d[160];
        describe(&o.v[bad], d, sizeof d);
        /* the seed of the generator in use */
        long g = bad;
        while (g >= 0 && o.v[g].k != OP_GEN) g--;
        cr_assert_fail("op %ld, %s, after gen seed %" PRIu64 ": not numpy's (%zu bytes here,"
                       " %zu from numpy)", bad, d, g >= 0 ? o.v[g].seed : 0, got.n, want.n);
    }

    /* Every rare path was taken. */
    const ws_rng_stats *st = ws_rng_stats_get();
    const struct { const char *name; unsigned long n; } paths[] = {
        {"Lemire 32-bit retry", st->lemire32_retry},
        {"Lemire 32-bit rejection", st->lemire32_reject},
        {"Lemire 64-bit retry", st->lemire64_retry},
        {"Lemire 64-bit rejection", st->lemire64_reject},
        {"full 32-bit range", st->full32},
        {"full 64-bit range", st->full64},
        {"masked rejection", st->masked32_reject},
        {"Floyd collision", st->floyd_collision},
        {"choice tail shuffle", st->choice_tail},
        {"normal wedge accepted", st->normal_wedge_accept},
        {"normal wedge rejected", st->normal_wedge_reject},
        {"normal tail accepted", st->normal_tail_accept},
        {"normal tail rejected", st->normal_tail_reject},
    };
    size_t n_normals = 0, n_ints = 0;
    for (size_t i = 0; i < o.n; i++) {
        if (o.v[i].k == OP_NORMAL) n_normals += (size_t)o.v[i].n;
        if (o.v[i].k == OP_INTEGERS) n_ints += (size_t)o.v[i].n;
    }
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        cr_log_info("%-26s %lu", paths[i].name, paths[i].n);
        cr_expect_gt(paths[i].n, 0, "%s: never taken in %zu ops", paths[i].name, o.n);
    }
    cr_log_info("%zu ops, %zu normals, %zu bounded integers, %zu decimal numbers, %zu bytes"
                " compared", o.n, n_normals, n_ints, o.n_strings, got.n);
    cr_expect_gt(n_normals, 2000000);

    /* Each primitive replaced by another algorithm: numpy tells. */
    for (int mu = M_NONE + 1; mu < M_COUNT; mu++) {
        buf alt = {0};
        run(&o, (mutant)mu, &alt, NULL);
        cr_expect(alt.n != want.n || memcmp(alt.p, want.p, want.n) != 0,
                  "the comparison cannot tell %s from numpy's algorithm", MUTANT_NAMES[mu]);
        free(alt.p);
    }

    free(got.p);
    free(want.p);
    free(ends);
    free(o.v);
    free(o.data);
    free(o.strings);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The duplicated rows of a (batch size, power limit) group: pandas'
 * group mean of R copies of x is not always x (so the JIT epoch cost must
 * be taken that way), and numpy's pairwise mean of R copies not always
 * pandas' (so the two must not be confused). */
Test(rng, group_mean_of_copies_is_not_always_the_value)
{
    int differ_x = 0, differ_np = 0;
    ws_rng r;
    ws_rng_seed(&r, 7);
    for (int t = 0; t < 10000; t++) {
        double a[16];
        const double x = ws_rng_random(&r) * 300.0;
        const size_t R = 2 + (size_t)(t % 14);
        for (size_t i = 0; i < R; i++) a[i] = x;
        differ_x += ws_pd_group_mean(a, R) != x;
        differ_np += ws_pd_group_mean(a, R) != ws_np_mean(a, R);
    }
    cr_expect_gt(differ_x, 0);
    cr_expect_gt(differ_np, 0);
}

/* Seeding by hand, for the record: numpy's documented first draws. */
Test(rng, default_rng_first_words_are_numpys)
{
    /* np.random.default_rng(0).bit_generator.random_raw(2) and
     * np.random.default_rng(12345).random(). */
    ws_rng r;
    ws_rng_seed(&r, 0);
    cr_expect_eq(ws_rng_next64(&r), 11749869230777074271u);
    cr_expect_eq(ws_rng_next64(&r), 4976686463289251617u);
    ws_rng_seed(&r, 12345);
    cr_expect_eq(ws_rng_random(&r), 0.22733602246716966);
}
