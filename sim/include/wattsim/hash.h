/*
 * Hashing for the readers: keyed hashes of byte strings and a table of
 * row indices found by key, so that interning a name or finding a
 * duplicate row costs O(1) expected instead of a scan (cost linear in the
 * input, never quadratic).
 *
 * The hash is SipHash-1-3 under a key drawn once per process from the
 * kernel (getrandom): a hostile input cannot be built to make every key
 * collide, as it could against a fixed hash. Nothing that is written
 * depends on the key: tables are only looked up, never walked in slot
 * order, so outputs stay byte-identical from run to run.
 */
#ifndef WATTSIM_HASH_H
#define WATTSIM_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Keyed 64-bit hash of n bytes; `seed` folds in a previous hash (0 to
 * start), so that a key of several fields is hashed field by field. */
uint64_t ws_hash(const void *p, size_t n, uint64_t seed);
uint64_t ws_hash_str(const char *s, uint64_t seed);

/*
 * An open-addressing table of indices (into the caller's array of rows or
 * names) with their hashes. The caller says when two indices hold the same
 * key (`same`); the table never reads the rows itself.
 */
typedef struct ws_hindex {
    struct ws_hslot { uint64_t hash; size_t index; } *slot;
    size_t cap, n;          /* cap a power of 2 (0 before the first add) */
} ws_hindex;

typedef int (*ws_hsame)(const void *ctx, size_t stored, size_t probe);

/* The stored index whose key equals `probe`'s (same(ctx, stored, probe)
 * nonzero), or WS_HNONE. */
#define WS_HNONE ((size_t)-1)
size_t ws_hindex_find(const ws_hindex *h, uint64_t hash, ws_hsame same,
                      const void *ctx, size_t probe);
/* As find; when there is none, store `probe` and return WS_HNONE. Returns
 * WS_HNOMEM (nothing stored) when out of memory. */
#define WS_HNOMEM ((size_t)-2)
size_t ws_hindex_add(ws_hindex *h, uint64_t hash, ws_hsame same, const void *ctx,
                     size_t probe);
void ws_hindex_free(ws_hindex *h);

/* Slots the tables of this process have inspected: a machine-independent
 * measure of their work, for tests (ws_join_work adds it). */
unsigned long long ws_hash_work(void);

#endif
