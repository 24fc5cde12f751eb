/*
 * Keyed hashing and an index table; see wattsim/hash.h.
 *
 * SipHash-1-3 (Aumasson and Bernstein; one compression round, three
 * finalisation rounds, as Rust's and CPython's hash tables use it). The
 * key is read from getrandom() once, thread-safely; if the kernel has
 * none to give, from the clock and the process id (still unknown to
 * whoever wrote the input).
 *
 * The table probes linearly and doubles at 1/2 load; a slot holds the
 * full hash, so most mismatches are rejected without calling `same`.
 */
#define _GNU_SOURCE
#include "wattsim/hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t key0, key1;
/* Slots inspected by every table (relaxed: only a count), for the tests
 * that check the readers' work grows linearly (ws_join_work). */
static _Atomic unsigned long long probes;

unsigned long long ws_hash_work(void) { return probes; }
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void key_init(void)
{
    uint64_t k[2];
    if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k[0] = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec;
        k[1] = (uint64_t)getpid() * 0xBF58476D1CE4E5B9ull ^ (uint64_t)(uintptr_t)&ts;
    }
    key0 = k[0];
    key1 = k[1];
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                        \
    do {                                                                \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);       \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                          \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                          \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);       \
    } while (0)

uint64_t ws_hash(const void *p, size_t n, uint64_t seed)
{
    pthread_once(&key_once, key_init);
    const unsigned char *in = p;
    uint64_t k0 = key0 ^ seed, k1 = key1;
    uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    const size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m;
        memcpy(&m, in + i, 8);              /* host order: the hash stays in-process */
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t i = 0; i < (n & 7); i++) b |= (uint64_t)in[whole + i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t ws_hash_str(const char *s, uint64_t seed)
{
    return ws_hash(s, strlen(s), seed);
}

size_t ws_hindex_find(const ws_hindex *h, uint64_t hash, ws_hsame same,
                      const void *ctx, size_t probe)
{
    if (!h->cap) return WS_HNONE;
    for (size_t m = h->cap - 1, i = (size_t)hash & m;; i = (i + 1) & m) {
        probes++;
        const struct ws_hslot *s = &h->slot[i];
        if (s->index == WS_HNONE) return WS_HNONE;
        if (s->hash == hash && same(ctx, s->index, probe)) return s->index;
    }
}

static int grow(ws_hindex *h)
{
    size_t cap = h->cap ? 2 * h->cap : 64;
    struct ws_hslot *s = malloc(cap * sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < cap; i++) s[i].index = WS_HNONE;
    for (size_t j = 0; j < h->cap; j++) {
        if (h->slot[j].index == WS_HNONE) continue;
        size_t i = (size_t)h->slot[j].hash & (cap - 1);
        while (s[i].index != WS_HNONE) i = (i + 1) & (cap - 1);
        s[i] = h->slot[j];
    }
    free(h->slot);
    h->slot = s;
    h->cap = cap;
    return 0;
}

size_t ws_hindex_add(ws_hindex *h, uint64_t hash, ws_hsame same, const void *ctx,
                     size_t probe)
{
    size_t found = ws_hindex_find(h, hash, same, ctx, probe);
    if (found != WS_HNONE) return found;
    if (2 * (h->n + 1) > h->cap && grow(h)) return WS_HNOMEM;
    size_t m = h->cap - 1, i = (size_t)hash & m;
    while (h->slot[i].index != WS_HNONE) i = (i + 1) & m;
    h->slot[i].hash = hash;
    h->slot[i].index = probe;
    h->n++;
    return WS_HNONE;
}

void ws_hindex_free(ws_hindex *h)
{
    if (!h) return;
    free(h->slot);
    memset(h, 0, sizeof *h);
}
