/*
 * PCG64 seeding and the per-thread branch statistics (wattsim/rng.h).
 *
 * numpy's PCG64(seed_sequence) takes 4 64-bit words from
 * generate_state(4, np.uint64) (8 32-bit words, paired little-endian):
 * the first two are the initial state (high word first), the last two
 * the stream selector. As in O'Neill's pcg_setseq_128_srandom_r: the
 * increment is selector * 2 + 1; from state 0, step, add the initial
 * state, step. No half of a 32-bit draw is kept yet.
 */
#include "wattsim/rng.h"

static void set_seed(ws_rng *r, const uint64_t v[4])
{
    const uint64_t sel_hi = v[2], sel_lo = v[3];
    r->inc_hi = sel_hi << 1 | sel_lo >> 63;
    r->inc_lo = sel_lo << 1 | 1u;
    r->state_hi = r->state_lo = 0;
    (void)ws_rng_next64(r);
    const uint64_t lo = r->state_lo + v[1];
    r->state_hi += v[0] + (lo < v[1]);
    r->state_lo = lo;
    (void)ws_rng_next64(r);
    r->has32 = 0;
    r->buf32 = 0;
}

void ws_rng_seed_seq(ws_rng *r, const ws_seedseq *s)
{
    uint32_t w[8];
    uint64_t v[4];
    ws_seedseq_generate(s, w, 8);
    for (int i = 0; i < 4; i++) v[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    set_seed(r, v);
}

/* The last seed's stream, per thread: a simulation seeds
 * default_rng(seed) twice, for itself and for its BSO (as Zeus seeds
 * both), and the second is a copy of the first. */
static _Thread_local struct {
    uint64_t seed;
    int valid;
    ws_rng rng;
} last_seed;

void ws_rng_seed(ws_rng *r, uint64_t seed)
{
    if (last_seed.valid && last_seed.seed == seed) {
        *r = last_seed.rng;
        return;
    }
    uint32_t words[2];
    ws_seedseq s;
    ws_seedseq_init(&s, words, ws_seed_words(seed, words), NULL, 0);
    ws_rng_seed_seq(r, &s);
    last_seed.seed = seed;
    last_seed.rng = *r;
    last_seed.valid = 1;
}

void ws_rng_seed_spawn(ws_rng *r, uint64_t seed, uint32_t key)
{
    uint32_t words[2];
    ws_seedseq s;
    ws_seedseq_init(&s, words, ws_seed_words(seed, words), &key, 1);
    ws_rng_seed_seq(r, &s);
}

static _Thread_local ws_rng_stats stats;

ws_rng_stats *ws_rng_stats_get(void) { return &stats; }
