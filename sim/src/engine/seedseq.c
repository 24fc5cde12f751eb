/*
 * numpy's SeedSequence (wattsim/rng.h), after Melissa O'Neill's seed_seq
 * alternative ("Developing a seed_seq Alternative", pcg-random.org, 2015),
 * with numpy's constants and its 4-word pool:
 *
 *  1. Entropy: the seed's 32-bit words; with a spawn key, the seed's
 *     words padded with zeros to the pool size, then the key's words.
 *  2. Each pool word is the hash of an entropy word (0 past the end):
 *     hashmix(v) = ((v ^ c) * c') ^ (that >> 16), where the multiplier c
 *     advances by c *= MULT_A at every hash (one running constant).
 *  3. Every pool word is mixed with the hash of every other one:
 *     mix(x, y) = (L * x - R * y) ^ (that >> 16).
 *  4. Entropy words beyond the pool are mixed into every pool word.
 *  5. Output words cycle through the pool, each hashed with a second
 *     running constant (INIT_B, MULT_B).
 * All arithmetic is modulo 2^32.
 */
#include "wattsim/rng.h"

#include <stdlib.h>

enum {
    INIT_A = 0x43b0d7e5u, MULT_A = 0x931e8875u,
    INIT_B = 0x8b51f9ddu, MULT_B = 0x58f38dedu,
    MIX_L = 0xca01f9ddu, MIX_R = 0x4973f715u,
};

static uint32_t hashmix(uint32_t v, uint32_t *c)
{
    v ^= *c;
    *c *= MULT_A;
    v *= *c;
    return v ^ (v >> 16);
}

static uint32_t mix(uint32_t x, uint32_t y)
{
    const uint32_t m = MIX_L * x - MIX_R * y;
    return m ^ (m >> 16);
}

size_t ws_seed_words(uint64_t seed, uint32_t words[2])
{
    words[0] = (uint32_t)seed;
    words[1] = (uint32_t)(seed >> 32);
    return words[1] ? 2 : 1;
}

void ws_seedseq_init(ws_seedseq *s, const uint32_t *entropy, size_t n_entropy,
                     const uint32_t *spawn_key, size_t n_spawn)
{
    enum { P = WS_SEEDSEQ_POOL };
    /* The assembled entropy, read through word(): run words, then zero
     * padding to the pool when a spawn key follows, then the key. */
    const size_t n_run = n_spawn && n_entropy < P ? P : n_entropy;
    const size_t n_all = n_run + n_spawn;
#define WORD(i) ((i) < n_entropy ? entropy[i] : (i) < n_run ? 0u : spawn_key[(i) - n_run])
    uint32_t c = INIT_A;
    for (size_t i = 0; i < P; i++) s->pool[i] = hashmix(i < n_all ? WORD(i) : 0u, &c);
    for (size_t src = 0; src < P; src++)
        for (size_t dst = 0; dst < P; dst++)
            if (src != dst) s->pool[dst] = mix(s->pool[dst], hashmix(s->pool[src], &c));
    for (size_t src = P; src < n_all; src++)
        for (size_t dst = 0; dst < P; dst++)
            s->pool[dst] = mix(s->pool[dst], hashmix(WORD(src), &c));
#undef WORD
}

void ws_seedseq_generate(const ws_seedseq *s, uint32_t *out, size_t n_words)
{
    uint32_t c = INIT_B;
    for (size_t i = 0; i < n_words; i++) {
        uint32_t v = s->pool[i % WS_SEEDSEQ_POOL] ^ c;
        c *= MULT_B;
        v *= c;
        out[i] = v ^ (v >> 16);
    }
}
