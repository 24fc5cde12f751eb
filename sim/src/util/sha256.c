/*
 * SHA-256 as FIPS 180-4 section 6.2 gives it: 64-byte blocks, a message
 * schedule of 64 words, eight working variables. Written here rather than
 * pulled from a crypto library because provenance hashes are all we need.
 */
#include "wattsim/sha256.h"
#include "wattsim/process.h"
#include "wattsim/input.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(ws_sha256 *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ROR(w[t - 15], 7) ^ ROR(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ROR(w[t - 2], 17) ^ ROR(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
                      ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
                      ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
    s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void ws_sha256_init(ws_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->nbuf = 0;
}

void ws_sha256_update(ws_sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->len += n;
    while (n > 0) {
        size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        n -= take;
        if (s->nbuf == 64) {
            block(s, s->buf);
            s->nbuf = 0;
        }
    }
}

void ws_sha256_final(ws_sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->len * 8;
    unsigned char pad = 0x80;
    ws_sha256_update(s, &pad, 1);
    pad = 0;
    while (s->nbuf != 56) ws_sha256_update(s, &pad, 1);
    unsigned char lenb[8];
    for (int i = 0; i < 8; i++) lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
    ws_sha256_update(s, lenb, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void ws_sha256_hex(const unsigned char digest[32], char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[64] = '\0';
}

int ws_sha256_file(const char *path, char out[65], ws_error *err)
{
    FILE *f = ws_input_fopen(path, err);            /* a regular file only */
    if (!f) return -1;
    ws_sha256 s;
    ws_sha256_init(&s);
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) ws_sha256_update(&s, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) return ws_fail(err, "%s: read error while hashing it", path);
    unsigned char d[32];
    ws_sha256_final(&s, d);
    ws_sha256_hex(d, out);
    return 0;
}

/* ------------------------------------------------------------ the cache */

int ws_file_id_get(const char *path, ws_file_id *id)
{
    struct stat st;
    if (!path || stat(path, &st)) return -1;
    *id = (ws_file_id){st.st_dev, st.st_ino, st.st_size,
                       (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
    return 0;
}

int ws_file_id_same(const ws_file_id *a, const ws_file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size
           && a->mtime_ns == b->mtime_ns;
}

typedef struct sha_entry {
    char *path;
    ws_file_id id;
    char sha[65];
    unsigned long long used;           /* LRU clock */
} sha_entry;

/* free again in a child forked while another thread held it (what the
 * table holds is whole whenever the lock is free; a child of a fork
 * mid-update only loses what it would have found) */
WS_FORK_SAFE_MUTEX(lock)
static size_t capacity;
static sha_entry *shas;
static size_t n_shas;
static unsigned long long clock_;

static void evict_shas(size_t keep)
{
    while (n_shas > keep) {
        size_t old = 0;
        for (size_t i = 1; i < n_shas; i++)
            if (shas[i].used < shas[old].used) old = i;
        free(shas[old].path);
        shas[old] = shas[--n_shas];
    }
}


void ws_sha256_cache_set(size_t n)
{
    pthread_mutex_lock(&lock);
    evict_shas(n);
    capacity = n;
    if (!n) {
        free(shas);
        shas = NULL;
    }
    pthread_mutex_unlock(&lock);
}

static size_t capacity_now(void)
{
    pthread_mutex_lock(&lock);
    size_t n = capacity;
    pthread_mutex_unlock(&lock);
    return n;
}

int ws_sha256_file_cached(const char *path, char out[65], ws_error *err)
{
    ws_file_id id, id2;
    if (!capacity_now() || ws_file_id_get(path, &id)) return ws_sha256_file(path, out, err);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_shas; i++)
        if (ws_file_id_same(&shas[i].id, &id) && !strcmp(shas[i].path, path)) {
            shas[i].used = ++clock_;
            memcpy(out, shas[i].sha, 65);
            pthread_mutex_unlock(&lock);
            return 0;
        }
    pthread_mutex_unlock(&lock);
    if (ws_sha256_file(path, out, err)) return -1;
    if (ws_file_id_get(path, &id2) || !ws_file_id_same(&id, &id2)) return 0;
    char *p = strdup(path);
    if (!p) return 0;
    pthread_mutex_lock(&lock);
    if (capacity) {
        evict_shas(capacity - 1);
        sha_entry *v = realloc(shas, (n_shas + 1) * sizeof *v);
        if (v) {
            shas = v;
            shas[n_shas] = (sha_entry){.path = p, .id = id, .used = ++clock_};
            memcpy(shas[n_shas++].sha, out, 65);
            p = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    free(p);
    return 0;
}
