/*
 * SHA-256 (FIPS 180-4), for provenance: the fingerprint of a plugin build,
 * a trace file or a journal's plan. Not for secrets.
 */
#ifndef WATTSIM_SHA256_H
#define WATTSIM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "wattsim/error.h"

typedef struct ws_sha256 {
    uint32_t h[8];
    uint64_t len;        /* bytes hashed so far */
    unsigned char buf[64];
    size_t nbuf;
} ws_sha256;

void ws_sha256_init(ws_sha256 *s);
void ws_sha256_update(ws_sha256 *s, const void *data, size_t n);
void ws_sha256_final(ws_sha256 *s, unsigned char out[32]);

/* out: 64 lowercase hex digits and a NUL. */
void ws_sha256_hex(const unsigned char digest[32], char out[65]);

/* Hash of a whole file, as hex. Returns 0, or -1 with err naming the file. */
int ws_sha256_file(const char *path, char out[65], ws_error *err);

/* A file's identity: what changes when it is rewritten (size, mtime in
 * ns) or replaced (device, inode). ws_file_id_get: 0, or -1 (stat fails). */
typedef struct ws_file_id {
    unsigned long long dev, ino;
    long long size, mtime_ns;
} ws_file_id;
int ws_file_id_get(const char *path, ws_file_id *id);
int ws_file_id_same(const ws_file_id *a, const ws_file_id *b);

/* ws_sha256_file, kept in the process: up to n hashes (LRU; 0, the
 * default, keeps none) keyed by path and identity, so a file is hashed
 * again only when it changed or was replaced. Thread-safe. The library
 * API sets it (io/trace_cache.c's ws_trace_cache_set). */
void ws_sha256_cache_set(size_t n);
int ws_sha256_file_cached(const char *path, char out[65], ws_error *err);

#endif
