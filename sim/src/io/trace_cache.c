/*
 * The process's cache of parsed traces and of file hashes: a second call
 * of the library on the same traces reads nothing (issue 29 item 6).
 *
 * Off until ws_trace_cache_set() turns it on (the library API does, at
 * its first call; the CLI, one process per command, leaves it off).
 *
 * A file is known by its identity: path, st_dev, st_ino, size and mtime
 * in nanoseconds (stat(2)). A set of traces -- ws_traces_load's train
 * trace and one GPU's power trace, under given limits -- is kept with
 * both files' identities; a lookup stats both files and takes the entry
 * only when both are unchanged, so a file rewritten in place (same size,
 * new mtime) or replaced (new inode) is read again. A load is kept only
 * when the files' identities are the same before and after it (a file
 * written while it was read is not kept). The files' hashes, for
 * provenance, are kept the same way (ws_sha256_file_cached, util/sha256.c,
 * 8 x capacity of them), so a hash is always that of the file whose
 * identity a cached parse has.
 *
 * Bounded: at most `capacity` trace sets (WS_TRACE_CACHE_DEFAULT, or
 * $WATTSIM_TRACE_CACHE), least recently used first out. A hit hands the
 * caller a deep copy (the caller frees it with ws_traces_free as always):
 * what the cache holds is never shared. A mutex guards the table (and
 * another the hashes'): threads may load at once.
 */
#define _GNU_SOURCE
#include "wattsim/trace.h"
#include "wattsim/process.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wattsim/sha256.h"

typedef struct trace_entry {
    char *dir, *gpu;
    size_t max_line, max_bytes;
    ws_file_id train, power;
    ws_traces t;
    unsigned long long used;           /* LRU clock */
} trace_entry;

/* free again in a child forked while another thread held it (what the
 * table holds is whole whenever the lock is free; a child of a fork
 * mid-update only loses what it would have found) */
WS_FORK_SAFE_MUTEX(lock)
static size_t capacity;                /* trace sets; 0: off */
static trace_entry *traces;
static size_t n_traces;
static unsigned long long clock_;
static unsigned long long hits, misses;

static void entry_free(trace_entry *e)
{
    free(e->dir);
    free(e->gpu);
    ws_traces_free(&e->t);
}

static void evict_traces(size_t keep)
{
    while (n_traces > keep) {
        size_t old = 0;
        for (size_t i = 1; i < n_traces; i++)
            if (traces[i].used < traces[old].used) old = i;
        entry_free(&traces[old]);
        traces[old] = traces[--n_traces];
    }
}


void ws_trace_cache_set(size_t n)
{
    pthread_mutex_lock(&lock);
    evict_traces(n);
    capacity = n;
    if (!n) {
        free(traces);
        traces = NULL;
    }
    pthread_mutex_unlock(&lock);
    ws_sha256_cache_set(8 * n);
}

size_t ws_trace_cache_capacity(void)
{
    pthread_mutex_lock(&lock);
    size_t n = capacity;
    pthread_mutex_unlock(&lock);
    return n;
}

void ws_trace_cache_stats(unsigned long long *hit, unsigned long long *miss)
{
    pthread_mutex_lock(&lock);
    if (hit) *hit = hits;
    if (miss) *miss = misses;
    pthread_mutex_unlock(&lock);
}

/* A deep copy of loaded traces (names, their index, the rows). */
static int traces_copy(ws_traces *d, const ws_traces *s)
{
    memset(d, 0, sizeof *d);
    d->n_train = s->n_train;
    d->n_power = s->n_power;
    d->max_power = s->max_power;
    d->has_gpus_column = s->has_gpus_column;
    if (!(d->dir = strdup(s->dir)) || !(d->gpu = strdup(s->gpu))
        || !(d->train_path = strdup(s->train_path)) || !(d->power_path = strdup(s->power_path)))
        goto fail;
    if (s->n_train) {
        if (!(d->train = malloc(s->n_train * sizeof *d->train))) goto fail;
        memcpy(d->train, s->train, s->n_train * sizeof *d->train);
    }
    if (s->n_power) {
        if (!(d->power = malloc(s->n_power * sizeof *d->power))) goto fail;
        memcpy(d->power, s->power, s->n_power * sizeof *d->power);
    }
    if (s->names.n) {
        if (!(d->names.s = calloc(s->names.n, sizeof *d->names.s))) goto fail;
        d->names.cap = s->names.n;
        for (size_t i = 0; i < s->names.n; i++, d->names.n++)
            if (!(d->names.s[i] = strdup(s->names.s[i]))) goto fail;
    }
    if (s->names.index.cap) {
        size_t bytes = s->names.index.cap * sizeof *s->names.index.slot;
        if (!(d->names.index.slot = malloc(bytes))) goto fail;
        memcpy(d->names.index.slot, s->names.index.slot, bytes);
        d->names.index.cap = s->names.index.cap;
        d->names.index.n = s->names.index.n;
    }
    return 0;
fail:
    ws_traces_free(d);
    return -1;
}

/* Both trace files' identities, or -1 (a file missing: the load says). */
static int identify_set(const char *dir, const char *gpu, ws_file_id *train,
                        ws_file_id *power)
{
    char name[256];
    ws_error e;
    if (strlen(gpu) > 200 || strchr(gpu, '/')) return -1;
    snprintf(name, sizeof name, "summary_power_%s", gpu);
    char *tp = ws_trace_path(dir, "summary_train", &e);
    char *pp = tp ? ws_trace_path(dir, name, &e) : NULL;
    int rc = tp && pp && !ws_file_id_get(tp, train) && !ws_file_id_get(pp, power) ? 0 : -1;
    free(tp);
    free(pp);
    return rc;
}

int ws_traces_load(ws_traces *t, const char *dir, const char *gpu,
                   const ws_csv_limits *lim, ws_error *err)
{
    size_t ml = lim && lim->max_line ? lim->max_line : WS_CSV_MAX_LINE_DEFAULT;
    size_t mb = lim && lim->max_bytes ? lim->max_bytes : WS_CSV_MAX_BYTES_DEFAULT;
    ws_file_id tr, pw, tr2, pw2;
    if (!ws_trace_cache_capacity() || identify_set(dir, gpu, &tr, &pw))
        return ws_traces_load_uncached(t, dir, gpu, lim, err);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_traces; i++) {
        trace_entry *e = &traces[i];
        if (strcmp(e->dir, dir) || strcmp(e->gpu, gpu) || e->max_line != ml
            || e->max_bytes != mb || !ws_file_id_same(&e->train, &tr)
            || !ws_file_id_same(&e->power, &pw))
            continue;
        e->used = ++clock_;
        int bad = traces_copy(t, &e->t);
        if (!bad) hits++;
        pthread_mutex_unlock(&lock);
        return bad ? ws_fail(err, "out of memory") : 0;
    }
    misses++;
    pthread_mutex_unlock(&lock);
    int rc = ws_traces_load_uncached(t, dir, gpu, lim, err);
    if (rc || identify_set(dir, gpu, &tr2, &pw2) || !ws_file_id_same(&tr, &tr2)
        || !ws_file_id_same(&pw, &pw2))
        return rc;                     /* an error, or a file that changed meanwhile */
    trace_entry n = {.dir = strdup(dir), .gpu = strdup(gpu), .max_line = ml,
                     .max_bytes = mb, .train = tr, .power = pw};
    if (!n.dir || !n.gpu || traces_copy(&n.t, t)) {
        free(n.dir);
        free(n.gpu);
        return 0;                      /* not kept: the caller has its copy */
    }
    pthread_mutex_lock(&lock);
    if (capacity) {
        /* the same traces' older version (its files since changed) goes */
        for (size_t i = 0; i < n_traces; i++)
            if (!strcmp(traces[i].dir, dir) && !strcmp(traces[i].gpu, gpu)
                && traces[i].max_line == ml && traces[i].max_bytes == mb) {
                entry_free(&traces[i]);
                traces[i] = traces[--n_traces];
                break;
            }
        evict_traces(capacity - 1);
        trace_entry *v = realloc(traces, (n_traces + 1) * sizeof *v);
        if (v) {
            traces = v;
            n.used = ++clock_;
            traces[n_traces++] = n;
            n.dir = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    if (n.dir) entry_free(&n);
    return 0;
}
