/*
 * The process's kept policy plugins: a library call that names the same
 * plugin files as the call before opens none of them again (issue 29
 * item 6; the registry itself stays one per call, registry.c).
 *
 * Off until ws_plugin_cache_set() turns it on (the library API does, at
 * its first call, with the trace cache; the CLI, one process per command,
 * leaves it off).
 *
 * An entry is a plugin as load_file loaded it: the path it was named by,
 * that file's identity (path, st_dev, st_ino, size, mtime in ns: stat(2)
 * through symbolic links), its real path, the name it was dlopened by
 * (plugin_map.c: its real path, or an alias of it for a later build) and
 * one reference of its own to the handle (dlopen). A registry that finds its path with the same
 * identity skips realpath(3) and the loader's mapping and relocation: it
 * takes another reference (dlopen RTLD_NOLOAD), which its
 * ws_registry_free drops as before. A file rebuilt or replaced has
 * another identity: ws_plugin_cache_forget drops every entry of that real
 * path (older builds, which stay mapped but need no place here), and
 * load_file maps the new file under a name of its own (plugin_map.c: the
 * loader finds loaded objects by name), so the library runs the file as it
 * is now (its sha256 is util/sha256.c's, kept by the same identity). Only
 * a plugin that loaded and passed its checks is kept.
 *
 * Bounded: at most `capacity` entries (WS_PLUGIN_CACHE_DEFAULT), least
 * recently used first out. A mutex guards the table; handles are closed
 * outside it.
 */
#define _GNU_SOURCE
#include "wattsim/plugin.h"
#include "wattsim/process.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "plugin_cache.h"

typedef struct plugin_entry {
    char *path, *real, *name;
    ws_file_id id;
    void *handle;                      /* the cache's own reference */
    unsigned long long used;           /* LRU clock */
} plugin_entry;

WS_FORK_SAFE_MUTEX(lock)   /* free again in a forked child */
static size_t capacity;
static plugin_entry *items;
static size_t n_items;
static unsigned long long clock_;
static unsigned long long opened;      /* dlopen of a file (not a kept one) */

static void close_handles(void **h, size_t n)
{
    if (!n) return;
    ws_guard_enter();
    for (size_t i = 0; i < n; i++) {
        ws_guard_call_enter("policy plugin cache", "unloading");
        dlclose(h[i]);
        ws_guard_call_leave();
    }
    ws_guard_leave();
}

/* Take entry i out of the table (lock held); its handle into *h. */
static void take_out(size_t i, void **h)
{
    *h = items[i].handle;
    free(items[i].path);
    free(items[i].real);
    free(items[i].name);
    items[i] = items[--n_items];
}

void ws_plugin_cache_set(size_t n)
{
    pthread_mutex_lock(&lock);
    void **h = n_items > n ? malloc((n_items - n) * sizeof *h) : NULL;
    size_t nh = 0;
    while (h && n_items > n) {
        size_t old = 0;
        for (size_t i = 1; i < n_items; i++)
            if (items[i].used < items[old].used) old = i;
        take_out(old, &h[nh++]);
    }
    if (n_items <= n) capacity = n;    /* else out of memory: unchanged */
    if (!n_items) {
        free(items);
        items = NULL;
    }
    pthread_mutex_unlock(&lock);
    close_handles(h, nh);
    free(h);
}

void *ws_plugin_cache_open(const char *path, const ws_file_id *id, char **real)
{
    *real = NULL;
    pthread_mutex_lock(&lock);
    void *h = NULL;
    for (size_t i = 0; i < n_items; i++) {
        plugin_entry *e = &items[i];
        if (!ws_file_id_same(&e->id, id) || strcmp(e->path, path)) continue;
        if (!(*real = strdup(e->real))) break;
        /* the cache's reference keeps it loaded: no mapping, no constructors */
        h = dlopen(e->name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h) {
            free(*real);
            *real = NULL;
            break;
        }
        e->used = ++clock_;
        break;
    }
    pthread_mutex_unlock(&lock);
    return h;
}

void ws_plugin_cache_forget(const char *real)
{
    size_t nh;
    int first = 1;
    do {                                   /* 8 handles at a time, closed unlocked */
        void *h[8];
        nh = 0;
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < n_items && nh < sizeof h / sizeof *h;)
            if (!strcmp(items[i].real, real)) take_out(i, &h[nh++]);
            else i++;
        if (first) opened++;
        first = 0;
        pthread_mutex_unlock(&lock);
        close_handles(h, nh);
    } while (nh == 8);
}

void ws_plugin_cache_keep(const char *path, const char *real, const char *name,
                          const ws_file_id *id)
{
    pthread_mutex_lock(&lock);
    const size_t cap = capacity;
    pthread_mutex_unlock(&lock);
    if (!cap) return;
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    char *p = strdup(path), *rp = strdup(real), *nm = strdup(name);
    void *out = NULL, *evicted = NULL;
    pthread_mutex_lock(&lock);
    if (h && p && rp && nm && capacity) {
        for (size_t i = 0; i < n_items; i++) {
            if (strcmp(items[i].path, path)) continue;
            if (ws_file_id_same(&items[i].id, id)) {    /* another thread kept it first */
                out = h;
                h = NULL;
            } else {                                    /* the path names another file now */
                take_out(i, &out);
            }
            break;
        }
        if (h && n_items >= capacity) {
            size_t old = 0;
            for (size_t i = 1; i < n_items; i++)
                if (items[i].used < items[old].used) old = i;
            take_out(old, &evicted);
        }
        plugin_entry *v = h ? realloc(items, (n_items + 1) * sizeof *v) : NULL;
        if (v) {
            items = v;
            items[n_items++] = (plugin_entry){p, rp, nm, *id, h, ++clock_};
            p = rp = nm = NULL;
            h = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    free(p);
    free(rp);
    free(nm);
    void *hs[3];
    size_t nh = 0;
    if (out) hs[nh++] = out;
    if (evicted) hs[nh++] = evicted;
    if (h) hs[nh++] = h;
    close_handles(hs, nh);
}

size_t ws_plugin_cache_count(unsigned long long *files_opened)
{
    pthread_mutex_lock(&lock);
    size_t n = n_items;
    if (files_opened) *files_opened = opened;
    pthread_mutex_unlock(&lock);
    return n;
}
