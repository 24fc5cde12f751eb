/*
 * Policy plugins stay mapped for the life of the process (RTLD_NODELETE).
 * A plugin shares the process: a thread it started, a callback it
 * registered (atexit, a signal handler, another library's hook) or a
 * pointer into its static data may outlive every registry that loaded it,
 * and unmapping the code under them crashes the process later, far from
 * the cause. dlclose (ws_registry_free, the plugin cache) only drops a
 * reference; a plugin's destructors run at exit.
 *
 * The loader's side of it: glibc's dlopen finds a loaded object by the
 * name it was opened by before it looks at the file, so a plugin replaced
 * at its path (rebuilt by a linker, installed, renamed over: a new inode)
 * would come back as the build first mapped under that name, for ever.
 * So each name this process dlopens a plugin by is recorded with the file
 * (device, inode) it maps; a file whose real path already maps another
 * inode is opened by an alias of that path, the same file to the kernel
 * and another name to the loader: "/dir/./x.so", "/dir/././x.so", ...,
 * the first alias that is free or maps this very file. Two builds are
 * then two objects, and a registry gets the one its file is now.
 *
 * A name is recorded before dlopen and never dropped: if the dlopen fails
 * nothing is loaded by it, and a later dlopen by it maps the file that has
 * the recorded inode then, so "loaded by name N -> that inode" holds
 * throughout. A file rewritten in place (the same inode) is the object
 * already mapped whatever the name (glibc matches device and inode too):
 * it keeps its first code, as writing over a mapped .so never was safe
 * (docs/writing-a-policy.md says to replace a plugin, not overwrite it).
 *
 * The table grows by one entry a build ever loaded, as the mappings do.
 * A mutex guards it (WS_FORK_SAFE_MUTEX: free again in a forked child); the
 * dlopen itself, which runs the plugin's constructors, runs outside it.
 */
#define _GNU_SOURCE
#include "plugin_map.h"
#include "wattsim/process.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct mapped {
    char *name;                    /* what dlopen was given */
    unsigned long long dev, ino;   /* the file it maps */
} mapped;

WS_FORK_SAFE_MUTEX(lock)   /* free again in a forked child */
static mapped *names;
static size_t n_names;

/* Alias k of real: k "./" before its last component (k = 0: real). */
static char *alias(const char *real, size_t k)
{
    const char *base = strrchr(real, '/');
    const size_t dir = base ? (size_t)(base - real) + 1 : 0;
    const size_t len = strlen(real);
    char *s = malloc(len + 2 * k + 1);
    if (!s) return NULL;
    memcpy(s, real, dir);
    for (size_t i = 0; i < k; i++) memcpy(s + dir + 2 * i, "./", 2);
    memcpy(s + dir + 2 * k, real + dir, len - dir + 1);
    return s;
}

/* The name for (dev, ino) at real, recorded (lock held); NULL: no memory. */
static char *choose(const char *real, unsigned long long dev, unsigned long long ino)
{
    for (size_t k = 0;; k++) {
        char *s = alias(real, k);
        if (!s) return NULL;
        size_t i = 0;
        while (i < n_names && strcmp(names[i].name, s)) i++;
        if (i < n_names) {
            if (names[i].dev == dev && names[i].ino == ino) return s;
            free(s);                        /* maps another build: next alias */
            continue;
        }
        mapped *v = realloc(names, (n_names + 1) * sizeof *v);
        char *copy = strdup(s);
        if (!v || !copy) {
            if (v) names = v;
            free(copy);
            free(s);
            return NULL;
        }
        names = v;
        names[n_names++] = (mapped){copy, dev, ino};
        return s;
    }
}

void *ws_plugin_map_open(const char *real, unsigned long long dev, unsigned long long ino,
                         char **name)
{
    pthread_mutex_lock(&lock);
    *name = choose(real, dev, ino);
    pthread_mutex_unlock(&lock);
    if (!*name) {
        (void)dlerror();                    /* out of memory: no loader error */
        return NULL;
    }
    void *h = dlopen(*name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        /* dlerror() is the caller's to read: free() does not touch it */
        free(*name);
        *name = NULL;
    }
    return h;
}
