/*
 * The process's cache of parsed workload catalogues (workloads.yaml): a
 * library call reads and parses the catalogue only when it is not the
 * file an earlier call parsed (issue 29 item 6).
 *
 * Off until ws_catalogue_cache_set() turns it on (the library API does,
 * with the trace cache; the CLI leaves it off). A file is known by its
 * identity (path, st_dev, st_ino, size, mtime in ns: ws_file_id, as the
 * trace cache's); a lookup stats the file and takes the entry only when it
 * is unchanged, so a file rewritten (new mtime or size) or replaced (new
 * inode) is parsed again; a parse is kept only when the identity is the
 * same before and after it. A hit is a deep copy (ws_catalogue_copy): what
 * the cache holds is never shared. The catalogue's sha256 in provenance is
 * util/sha256.c's, kept by the same identity. Bounded (LRU); a mutex
 * guards the table. Only successful parses are kept: an error is reported
 * again, the same, at every call.
 */
#define _GNU_SOURCE
#include "wattsim/config.h"
#include "wattsim/process.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/sha256.h"

typedef struct cat_entry {
    char *path;
    ws_file_id id;
    ws_catalogue cat;
    unsigned long long used;           /* LRU clock */
} cat_entry;

WS_FORK_SAFE_MUTEX(lock)   /* free again in a forked child */
static size_t capacity;
static cat_entry *items;
static size_t n_items;
static unsigned long long clock_, parses;

static void evict(size_t keep)
{
    while (n_items > keep) {
        size_t old = 0;
        for (size_t i = 1; i < n_items; i++)
            if (items[i].used < items[old].used) old = i;
        free(items[old].path);
        ws_catalogue_free(&items[old].cat);
        items[old] = items[--n_items];
    }
}

void ws_catalogue_cache_set(size_t n)
{
    pthread_mutex_lock(&lock);
    evict(n);
    capacity = n;
    if (!n) {
        free(items);
        items = NULL;
    }
    pthread_mutex_unlock(&lock);
}

unsigned long long ws_catalogue_cache_parses(void)
{
    pthread_mutex_lock(&lock);
    unsigned long long n = parses;
    pthread_mutex_unlock(&lock);
    return n;
}

static int dup_str(char **dst, const char *src)
{
    *dst = NULL;
    return src && !(*dst = strdup(src)) ? -1 : 0;
}

static int copy_spec(const ws_workload_spec *s, ws_workload_spec *d)
{
    *d = *s;
    d->drift = NULL;
    d->n_drift = 0;
    int bad = dup_str(&d->name, s->name) | dup_str(&d->dataset, s->dataset)
              | dup_str(&d->network, s->network) | dup_str(&d->optimizer, s->optimizer)
              | dup_str(&d->where, s->where) | dup_str(&d->display, s->display)
              | dup_str(&d->metric, s->metric);
    if (!bad && s->n_drift) {
        if (!(d->drift = calloc(s->n_drift, sizeof *d->drift))) return -1;
        d->n_drift = s->n_drift;
        for (size_t i = 0; i < s->n_drift; i++) {
            const ws_drift_spec *a = &s->drift[i];
            ws_drift_spec *b = &d->drift[i];
            *b = *a;
            bad |= dup_str(&b->traces, a->traces) | dup_str(&b->dataset, a->dataset)
                   | dup_str(&b->network, a->network) | dup_str(&b->optimizer, a->optimizer)
                   | dup_str(&b->where, a->where);
        }
    }
    return bad ? -1 : 0;
}

int ws_catalogue_copy(const ws_catalogue *src, ws_catalogue *dst)
{
    memset(dst, 0, sizeof *dst);
    int bad = 0;
    if (src->n && !(dst->items = calloc(src->n, sizeof *dst->items))) goto oom;
    for (size_t i = 0; i < src->n; i++) {
        dst->n = i + 1;                 /* what ws_catalogue_free frees */
        bad |= copy_spec(&src->items[i], &dst->items[i]);
    }
    if (src->n_gpus) {
        if (!(dst->gpus = calloc(src->n_gpus, sizeof *dst->gpus))) goto oom;
        if (src->gpu_display
            && !(dst->gpu_display = calloc(src->n_gpus, sizeof *dst->gpu_display)))
            goto oom;
        dst->n_gpus = src->n_gpus;
        for (size_t g = 0; g < src->n_gpus; g++) {
            bad |= dup_str(&dst->gpus[g], src->gpus[g]);
            if (src->gpu_display) bad |= dup_str(&dst->gpu_display[g], src->gpu_display[g]);
        }
    }
    if (!bad) return 0;
oom:
    ws_catalogue_free(dst);
    return -1;
}

int ws_catalogue_load_cached(const char *path, ws_catalogue *out, ws_error *err)
{
    ws_file_id id, id2;
    pthread_mutex_lock(&lock);
    const size_t cap = capacity;
    pthread_mutex_unlock(&lock);
    const int known = cap && path && !ws_file_id_get(path, &id);
    if (known) {
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < n_items; i++) {
            if (!ws_file_id_same(&items[i].id, &id) || strcmp(items[i].path, path)) continue;
            items[i].used = ++clock_;
            int rc = ws_catalogue_copy(&items[i].cat, out);
            pthread_mutex_unlock(&lock);
            return rc ? ws_fail(err, "out of memory") : 0;
        }
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    parses++;
    pthread_mutex_unlock(&lock);
    if (ws_catalogue_load(path, out, err)) return -1;
    if (!known || ws_file_id_get(path, &id2) || !ws_file_id_same(&id, &id2)) return 0;
    cat_entry e = {strdup(path), id, {0}, 0};
    if (!e.path || ws_catalogue_copy(out, &e.cat)) {
        free(e.path);
        return 0;
    }
    pthread_mutex_lock(&lock);
    cat_entry *v = NULL;
    if (capacity) {
        evict(capacity - 1);
        v = realloc(items, (n_items + 1) * sizeof *v);
        if (v) {
            items = v;
            e.used = ++clock_;
            items[n_items++] = e;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!v) {
        free(e.path);
        ws_catalogue_free(&e.cat);
    }
    return 0;
}
