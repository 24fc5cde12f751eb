/*
 * Plugin registry (dlopen), parameter resolution and checked policy
 * instances. See wattsim/plugin.h.
 */
#include "wattsim/plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/rng.h"
#include "wattsim/sha256.h"

/* The installed policy folder relative to the executable's folder (set by
 * the build from the install layout). */
#ifndef WS_REL_POLICY_DIR
#define WS_REL_POLICY_DIR "../lib/wattsim/policies"
#endif

/* ------------------------------------------------------------ guards */

/*
 * Policy code runs inside wattsim, and two of its mistakes would otherwise
 * pass for wattsim's own behaviour:
 *  - exit() in a callback would end wattsim with the plugin's status (0!)
 *    and no output. Each thread records the policy and call it is in; an
 *    atexit handler turns an exit during a call into one line on stderr
 *    and exit status 1.
 *  - Writing to stdout would corrupt `--format json`/csv. While a policy
 *    instance exists or a plugin is being loaded or unloaded, fd 1 points
 *    to stderr (stdio flushed at both switches); wattsim writes its results
 *    after it has freed its instances. Policies should log through
 *    host->log instead.
 */
static _Thread_local const char *call_who, *call_name;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int out_users, out_saved = -1;

static void exit_guard(void)
{
    if (!call_name) return;
    fprintf(stderr, "wattsim: %s: %s called exit(); a policy must return an error"
            " instead\n", call_who, call_name);
    fflush(stderr);
    _exit(1);
}

static void guard_init(void) { atexit(exit_guard); }

static inline void call_enter(const char *who, const char *name)
{
    call_who = who;
    call_name = name;
}

static inline void call_leave(void) { call_name = NULL; }

static void stdout_enter(void)
{
    pthread_once(&guard_once, guard_init);
    pthread_mutex_lock(&out_lock);
    if (out_users++ == 0) {
        fflush(stdout);
        int saved = fcntl(1, F_DUPFD_CLOEXEC, 3);
        if (saved >= 0 && dup2(2, 1) >= 0) out_saved = saved;
        else if (saved >= 0) close(saved);
    }
    pthread_mutex_unlock(&out_lock);
}

static void stdout_leave(void)
{
    pthread_mutex_lock(&out_lock);
    if (--out_users == 0 && out_saved >= 0) {
        fflush(stdout);
        dup2(out_saved, 1);
        close(out_saved);
        out_saved = -1;
    }
    pthread_mutex_unlock(&out_lock);
}

/* ------------------------------------------------------------ registry */

/*
 * The registry keeps its own copy of every descriptor, normalised to this
 * host's layout at load: a version-1 descriptor is copied up to the members
 * version 1 had (the rest zeroed), a newer one up to the members this host
 * knows, and its parameter specs are re-packed with this host's stride. The
 * rest of wattsim reads only these copies; the calls (below) still go to
 * the plugin's functions through the signatures of its version.
 */
typedef struct loaded {
    void *handle;
    char *path;
    int abi_version;           /* the plugin's, normalised (1 -> 100) */
    int folder;                /* found in a policy folder (built-in or
                                  $WATTSIM_POLICY_DIR), not named by path */
    char sha256[65];           /* "" until asked for */
} loaded;

struct ws_registry {
    loaded *files;
    size_t n_files;
    ws_bso_type **bso;         /* owned copies */
    size_t *bso_file;
    size_t n_bso;
    ws_plo_type **plo;
    size_t *plo_file;
    size_t n_plo;
    int scanned;               /* the policy folders have been loaded */
    char *broken;              /* the first error of a folder plugin that
                                  failed to load, for lookups that miss */
    size_t n_broken;
    struct clash {             /* a folder plugin refused for a name clash: */
        int bso;               /* looking that name up is an error */
        char *name, *msg;
    } *clash;
    size_t n_clash;
};

ws_registry *ws_registry_new(void) { return calloc(1, sizeof(ws_registry)); }

void ws_registry_free(ws_registry *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_bso; i++) {
        free((void *)r->bso[i]->params);
        free(r->bso[i]);
    }
    for (size_t i = 0; i < r->n_plo; i++) {
        free((void *)r->plo[i]->params);
        free(r->plo[i]);
    }
    if (r->n_files) stdout_enter();
    for (size_t i = 0; i < r->n_files; i++) {
        call_enter(r->files[i].path, "unloading");
        dlclose(r->files[i].handle);
        call_leave();
        free(r->files[i].path);
    }
    if (r->n_files) stdout_leave();
    free(r->files);
    free(r->bso);
    free(r->bso_file);
    free(r->plo);
    free(r->plo_file);
    free(r->broken);
    for (size_t i = 0; i < r->n_clash; i++) {
        free(r->clash[i].name);
        free(r->clash[i].msg);
    }
    free(r->clash);
    free(r);
}

const char *ws_policy_dir(void)
{
    static char dir[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            /* Installed; the build tree (build/sim/wattsim, build/tests/test_NAME
             * -> build/policies). */
            const char *rel[] = {"/" WS_REL_POLICY_DIR, "/../policies"};
            for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
                struct stat st;
                snprintf(dir, sizeof dir, "%s%s", exe, rel[i]);
                if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
                    char *real = realpath(dir, NULL);
                    if (real) {
                        snprintf(dir, sizeof dir, "%s", real);
                        free(real);
                    }
                    return dir;
                }
            }
        }
    }
    return NULL;
}

static int name_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'
              || *s == '-'))
            return 0;
    return 1;
}

/* Version 1 wrote 1 for 1.0; later versions MAJOR * 100 + MINOR. */
static int abi_normalise(int v) { return v > 0 && v < 100 ? v * 100 : v; }

static int check_version(const char *path, const char *what, const char *name,
                         int v, ws_error *err)
{
    int n = abi_normalise(v);
    if (n < 100 || n / 100 > WS_ABI_MAJOR)
        return ws_fail(err, "%s: %s '%s' was built for policy ABI version %d,"
                       " but this wattsim speaks version %d.%d (and 1.0); rebuild"
                       " it against this wattsim's policy.h", path, what,
                       name ? name : "?", v, WS_ABI_MAJOR, WS_ABI_MINOR);
    return 0;
}

/* The descriptor's spec entry i, at the stride it was built with. */
static const ws_param_spec *spec_at(const ws_param_spec *ps, size_t stride, size_t i)
{
    return (const ws_param_spec *)(const void *)((const char *)ps + i * stride);
}

/* Size of a ws_param_spec and ws_value as the descriptor's version has
 * them: version 1 and 2.0 have today's layout. */
static int strides(const char *path, const char *kind, const char *name, int v,
                   size_t spec_size, size_t value_size, size_t *ss, size_t *vs,
                   ws_error *err)
{
    *ss = sizeof(ws_param_spec);
    *vs = sizeof(ws_value);
    if (abi_normalise(v) < 200) return 0;
    if (spec_size) *ss = spec_size;
    if (value_size) *vs = value_size;
    if (*ss < sizeof(ws_param_spec) || *vs < sizeof(ws_value))
        return ws_fail(err, "%s: %s '%s' declares param_spec_size %zu and value_size"
                       " %zu, smaller than ABI 2.0's %zu and %zu", path, kind, name,
                       spec_size, value_size, sizeof(ws_param_spec), sizeof(ws_value));
    return 0;
}

/* Check a descriptor's parameter specs and copy them, NULL-terminated, at
 * this host's stride into *out (NULL when there are none). */
static int copy_params(const char *path, const char *kind, const char *name,
                       const ws_param_spec *ps, size_t stride,
                       ws_param_spec **out, ws_error *err)
{
    *out = NULL;
    size_t n = 0;
    for (; ps && spec_at(ps, stride, n)->name; n++)
        if (n >= 200)
            return ws_fail(err, "%s: %s '%s': parameter list is not terminated"
                           " by an entry with a NULL name", path, kind, name);
    for (size_t i = 0; i < n; i++) {
        const ws_param_spec *p = spec_at(ps, stride, i);
        if (p->kind < WS_PARAM_INT || p->kind > WS_PARAM_STRING)
            return ws_fail(err, "%s: %s '%s': parameter '%s' has an unknown kind %d",
                           path, kind, name, p->name, (int)p->kind);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(spec_at(ps, stride, j)->name, p->name))
                return ws_fail(err, "%s: %s '%s': parameter '%s' is declared twice",
                               path, kind, name, p->name);
        if (p->kind != WS_PARAM_INT && p->kind != WS_PARAM_DOUBLE) continue;
        if (isnan(p->min) || isnan(p->max) || p->min > p->max)
            return ws_fail(err, "%s: %s '%s': parameter '%s' has bounds [%g, %g];"
                           " want numbers with min <= max", path, kind, name,
                           p->name, p->min, p->max);
        double d = p->kind == WS_PARAM_INT ? (double)p->def.i : p->def.d;
        if (!(d >= p->min && d <= p->max))
            return ws_fail(err, "%s: %s '%s': parameter '%s' has default %g,"
                           " outside its bounds [%g, %g]", path, kind, name,
                           p->name, d, p->min, p->max);
    }
    if (n == 0) return 0;
    ws_param_spec *c = calloc(n + 1, sizeof *c);
    if (!c) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) c[i] = *spec_at(ps, stride, i);
    *out = c;
    return 0;
}

#define NEED(T, member)                                                        \
    do {                                                                       \
        if (!(T)->member)                                                      \
            return ws_fail(err, "%s: %s '%s' has no %s function (required)",  \
                           path, kind, (T)->name, #member);                    \
    } while (0)

/* The members version 1 had end where param_spec_size begins. */
#define V1_SIZE(T) offsetof(T, param_spec_size)

/* What a BSO and a PLO descriptor share: a known ABI version and a valid
 * name (before anything is copied), then the host's own copy of the
 * parameter specs, read at the strides the plugin was built with. */
static int check_head(const char *path, const char *kind, const char *name,
                      int abi_version, ws_error *err)
{
    if (check_version(path, kind, name, abi_version, err)) return -1;
    if (!name_ok(name))
        return ws_fail(err, "%s: %s has an invalid name (want 1-64 of"
                       " [a-z0-9_-])", path, kind);
    return 0;
}

static int take_params(const char *path, const char *kind, const char *name,
                       int abi_version, const ws_param_spec *src_params,
                       const ws_param_spec **params, size_t *spec_size,
                       size_t *value_size, ws_error *err)
{
    size_t ss, vs;
    ws_param_spec *ps;
    if (strides(path, kind, name, abi_version, *spec_size, *value_size, &ss, &vs, err)
        || copy_params(path, kind, name, src_params, ss, &ps, err))
        return -1;
    *params = ps;
    *spec_size = ss;
    *value_size = vs;
    return 0;
}

static int check_bso(const char *path, const ws_bso_type *src, ws_bso_type **out,
                     ws_error *err)
{
    const char *kind = "bso";
    *out = NULL;
    if (check_head(path, kind, src->name, src->abi_version, err)) return -1;
    ws_bso_type *t = calloc(1, sizeof *t);
    if (!t) return ws_fail(err, "out of memory");
    memcpy(t, src, abi_normalise(src->abi_version) < 200 ? V1_SIZE(ws_bso_type) : sizeof *t);
    t->params = NULL;            /* the host's copy is set below */
    *out = t;
    NEED(t, create);
    NEED(t, destroy);
    NEED(t, register_job);
    NEED(t, predict);
    NEED(t, observe);
    return take_params(path, kind, t->name, t->abi_version, src->params, &t->params,
                       &t->param_spec_size, &t->value_size, err);
}

static int check_plo(const char *path, const ws_plo_type *src, ws_plo_type **out,
                     ws_error *err)
{
    const char *kind = "plo";
    *out = NULL;
    if (check_head(path, kind, src->name, src->abi_version, err)) return -1;
    ws_plo_type *t = calloc(1, sizeof *t);
    if (!t) return ws_fail(err, "out of memory");
    memcpy(t, src, abi_normalise(src->abi_version) < 200 ? V1_SIZE(ws_plo_type) : sizeof *t);
    t->params = NULL;            /* the host's copy is set below */
    *out = t;
    NEED(t, create);
    NEED(t, destroy);
    NEED(t, predict);
    NEED(t, observe_profile);
    return take_params(path, kind, t->name, t->abi_version, src->params, &t->params,
                       &t->param_spec_size, &t->value_size, err);
}

static int push(void *arr, size_t *n, size_t size, const void *item)
{
    void **a = arr;
    char *p = realloc(*a, (*n + 1) * size);
    if (!p) return -1;
    memcpy(p + *n * size, item, size);
    *a = p;
    return 0;
}

/* The plugin's ws_plugin, through the version-2 entry point or, failing
 * that, the version-1 one. */
static const ws_plugin *call_entry(void *h, const char *path, ws_error *err)
{
    ws_plugin_entry_fn entry;
    *(void **)&entry = dlsym(h, WS_PLUGIN_ENTRY_NAME);
    if (entry) {
        const ws_plugin *pl = entry(WS_ABI_VERSION);
        if (!pl)
            ws_fail(err, "%s: %s(%d) returned NULL (the plugin cannot run in"
                    " this wattsim)", path, WS_PLUGIN_ENTRY_NAME, WS_ABI_VERSION);
        return pl;
    }
    const ws_plugin *(*entry_v1)(void);
    *(void **)&entry_v1 = dlsym(h, WS_PLUGIN_ENTRY_V1_NAME);
    if (!entry_v1) {
        ws_fail(err, "%s: not a wattsim policy plugin: no symbol %s"
                " (define `const ws_plugin *%s(int host_version)`)", path,
                WS_PLUGIN_ENTRY_NAME, WS_PLUGIN_ENTRY_NAME);
        return NULL;
    }
    const ws_plugin *pl = entry_v1();
    if (!pl) ws_fail(err, "%s: %s() returned NULL", path, WS_PLUGIN_ENTRY_V1_NAME);
    return pl;
}

static void free_copies(ws_bso_type **b, size_t nb, ws_plo_type **p, size_t np)
{
    for (size_t i = 0; i < nb; i++) {
        if (b[i]) free((void *)b[i]->params);
        free(b[i]);
    }
    for (size_t i = 0; i < np; i++) {
        if (p[i]) free((void *)p[i]->params);
        free(p[i]);
    }
    free(b);
    free(p);
}

/*
 * Whether a policy of this kind and name may join the registry from a file
 * (folder: found in a policy folder). Names are unique among the policy
 * folders' plugins, which are addressed by bare name; a plugin named by
 * path may reuse a name of another plugin named by path (two builds of one
 * policy: address them as FILE.so:NAME), but not a folder plugin's.
 */
static int name_free(ws_registry *r, const char *path, int folder, int bso,
                     const char *name, ws_error *err)
{
    size_t n = bso ? r->n_bso : r->n_plo;
    for (size_t j = 0; j < n; j++) {
        if (strcmp(bso ? r->bso[j]->name : r->plo[j]->name, name)) continue;
        const loaded *f = &r->files[bso ? r->bso_file[j] : r->plo_file[j]];
        if (!f->folder && !folder) continue;
        ws_fail(err, "%s: %s '%s' is already defined by %s", path,
                bso ? "bso" : "plo", name, f->path);
        if (folder) {
            /* Remember it: the name must not quietly mean the other one. */
            struct clash c = {bso, strdup(name), strdup(err->msg)};
            if (!c.name || !c.msg || push(&r->clash, &r->n_clash, sizeof c, &c)) {
                free(c.name);
                free(c.msg);
            } else {
                r->n_clash++;
            }
        }
        return -1;
    }
    return 0;
}

static int load_file(ws_registry *r, const char *path, int folder, ws_error *err);

int ws_registry_load_file(ws_registry *r, const char *path, ws_error *err)
{
    return load_file(r, path, 0, err);
}

static int load_file(ws_registry *r, const char *path, int folder, ws_error *err)
{
    char *real = realpath(path, NULL);
    if (!real) return ws_fail(err, "%s: cannot open policy plugin: %s", path, strerror(errno));
    for (size_t i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].path, real)) { free(real); return 0; }

    stdout_enter();
    call_enter(path, "loading");
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    const ws_plugin *pl = h ? call_entry(h, path, err) : NULL;
    call_leave();
    stdout_leave();
    if (!h) {
        ws_fail(err, "%s: cannot load policy plugin: %s", path, dlerror());
        free(real);
        return -1;
    }
    ws_bso_type **bc = NULL;
    ws_plo_type **pc = NULL;
    size_t nb = 0, np = 0;
    if (!pl) goto fail;
    if (check_version(path, "plugin", pl->name, pl->abi_version, err)) goto fail;
    if (abi_normalise(pl->abi_version) >= 200) {
        int need = pl->requires_version ? pl->requires_version : WS_ABI_VERSION_OF(2, 0);
        if (need > WS_ABI_VERSION) {
            ws_fail(err, "%s: plugin '%s' needs policy ABI version %d.%d, but this"
                    " wattsim speaks version %d.%d; upgrade wattsim", path,
                    pl->name ? pl->name : "?", need / 100, need % 100,
                    WS_ABI_MAJOR, WS_ABI_MINOR);
            goto fail;
        }
    }
    while (pl->bso && pl->bso[nb]) nb++;
    while (pl->plo && pl->plo[np]) np++;
    if (nb + np == 0) {
        ws_fail(err, "%s: plugin '%s' defines no policy", path,
                pl->name ? pl->name : "?");
        goto fail;
    }
    bc = calloc(nb + 1, sizeof *bc);
    pc = calloc(np + 1, sizeof *pc);
    if (!bc || !pc) goto oom;
    for (size_t i = 0; i < nb; i++) {
        if (check_bso(path, pl->bso[i], &bc[i], err)) goto fail;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(bc[j]->name, bc[i]->name)) {
                ws_fail(err, "%s: bso '%s' is defined twice in this plugin", path,
                        bc[i]->name);
                goto fail;
            }
        if (name_free(r, path, folder, 1, bc[i]->name, err)) goto fail;
    }
    for (size_t i = 0; i < np; i++) {
        if (check_plo(path, pl->plo[i], &pc[i], err)) goto fail;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(pc[j]->name, pc[i]->name)) {
                ws_fail(err, "%s: plo '%s' is defined twice in this plugin", path,
                        pc[i]->name);
                goto fail;
            }
        if (name_free(r, path, folder, 0, pc[i]->name, err)) goto fail;
    }
    loaded f = {h, real, abi_normalise(pl->abi_version), folder, ""};
    size_t fi = r->n_files;
    ws_bso_type **nbso = realloc(r->bso, (r->n_bso + nb + 1) * sizeof *nbso);
    if (nbso) r->bso = nbso;
    size_t *nbf = realloc(r->bso_file, (r->n_bso + nb + 1) * sizeof *nbf);
    if (nbf) r->bso_file = nbf;
    ws_plo_type **nplo = realloc(r->plo, (r->n_plo + np + 1) * sizeof *nplo);
    if (nplo) r->plo = nplo;
    size_t *npf = realloc(r->plo_file, (r->n_plo + np + 1) * sizeof *npf);
    if (npf) r->plo_file = npf;
    if (!nbso || !nbf || !nplo || !npf || push(&r->files, &r->n_files, sizeof f, &f))
        goto oom;
    r->n_files++;
    for (size_t i = 0; i < nb; i++) {
        r->bso[r->n_bso] = bc[i];
        r->bso_file[r->n_bso++] = fi;
    }
    for (size_t i = 0; i < np; i++) {
        r->plo[r->n_plo] = pc[i];
        r->plo_file[r->n_plo++] = fi;
    }
    free(bc);
    free(pc);
    return 0;
oom:
    ws_fail(err, "out of memory");
fail:
    free_copies(bc, nb, pc, np);
    stdout_enter();
    call_enter(path, "unloading");
    dlclose(h);
    call_leave();
    stdout_leave();
    free(real);
    return -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.so files of dir, sorted by name (the registry's order must not
 * depend on the file system). Returns the count, or -1. */
static long so_files(const char *dir, char ***out, ws_error *err)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return ws_fail(err, "%s: cannot open policy folder: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so")) continue;
        char *s = strdup(e->d_name);
        if (!s || push(&names, &n, sizeof s, &s)) { free(s); break; }
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    *out = names;
    return (long)n;
}

/* Load every *.so of dir. strict: stop at the first that fails (and fail);
 * otherwise skip it, remembering its error for lookups that miss. */
static int load_folder(ws_registry *r, const char *dir, int strict, ws_error *err)
{
    char **names;
    long n = so_files(dir, &names, err);
    if (n < 0) return -1;
    int rc = 0;
    for (long i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        ws_error e = {{0}};
        if (!rc && load_file(r, path, 1, &e)) {
            if (strict) {
                *err = e;
                rc = -1;
            } else {
                if (!r->broken) r->broken = strdup(e.msg);
                r->n_broken++;
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int ws_registry_load_dir(ws_registry *r, const char *dir, ws_error *err)
{
    return load_folder(r, dir, 1, err);
}

/* The built-in folder, then each folder of $WATTSIM_POLICY_DIR (':'
 * separated), once per registry. A plugin there that fails to load is
 * skipped; lookups of other policies still work. */
static int ensure_builtin(ws_registry *r, ws_error *err)
{
    if (r->scanned) return 0;
    const char *dir = ws_policy_dir();
    const char *extra = getenv("WATTSIM_POLICY_DIR");
    if (!dir && !(extra && *extra))
        return ws_fail(err, "cannot find the built-in policy folder (lib/wattsim/policies"
                       " beside the wattsim executable); reinstall wattsim or set"
                       " WATTSIM_POLICY_DIR to a folder of policy .so files");
    r->scanned = 1;
    if (dir && load_folder(r, dir, 0, err)) return -1;
    for (const char *q = extra; q && *q;) {
        size_t len = strcspn(q, ":");
        if (len > 0 && len < PATH_MAX) {
            char d[PATH_MAX];
            memcpy(d, q, len);
            d[len] = '\0';
            struct stat st;
            if (stat(d, &st) || !S_ISDIR(st.st_mode))
                return ws_fail(err, "WATTSIM_POLICY_DIR: %s: not a folder", d);
            if (load_folder(r, d, 0, err)) return -1;
        }
        q += len;
        if (*q) q++;
    }
    return 0;
}

int ws_registry_scan(ws_registry *r, ws_error *err) { return ensure_builtin(r, err); }

size_t ws_registry_broken(const ws_registry *r, const char **first)
{
    if (first) *first = r->broken;
    return r->n_broken;
}

int ws_registry_bso_abi(const ws_registry *r, size_t i) { return r->files[r->bso_file[i]].abi_version; }
int ws_registry_plo_abi(const ws_registry *r, size_t i) { return r->files[r->plo_file[i]].abi_version; }

static int is_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') || (n > 3 && !strcmp(name + n - 3, ".so"));
}

/* "FILE.so:NAME": the length of FILE.so, or 0 if name is not of that form. */
static size_t qualified(const char *name)
{
    const char *q = NULL;
    for (const char *p = strstr(name, ".so:"); p; p = strstr(p + 1, ".so:")) q = p;
    return q && q[4] && !strchr(q + 4, '/') ? (size_t)(q + 3 - name) : 0;
}

/* Load a plugin named by path (after the policy folders, so that a name
 * clash with them is reported) and return its file index. */
static int path_file(ws_registry *r, const char *path, size_t *file, ws_error *err)
{
    const char *extra = getenv("WATTSIM_POLICY_DIR");
    /* A missing built-in folder is no reason to refuse a plugin by path. */
    if ((ws_policy_dir() || (extra && *extra)) && ensure_builtin(r, err)) return -1;
    char *real = realpath(path, NULL);
    if (real) {
        for (size_t i = 0; i < r->n_files; i++)
            if (!strcmp(r->files[i].path, real)) {
                free(real);
                *file = i;
                return 0;
            }
        free(real);
    }
    if (load_file(r, path, 0, err)) return -1;
    *file = r->n_files - 1;
    return 0;
}

/* The policy of a kind named `want` (NULL: the only one, or the one named
 * after the file's stem) in a plugin named by path. */
static int from_path(ws_registry *r, const char *path, const char *want, int want_bso,
                     size_t *out, ws_error *err)
{
    size_t file;
    if (path_file(r, path, &file, err)) return -1;
    const char *kind = want_bso ? "bso" : "plo";
    /* The file's stem ("zeus" for .../zeus.so) picks among several. */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t stem = strlen(base);
    if (stem > 3 && !strcmp(base + stem - 3, ".so")) stem -= 3;
    size_t found = (size_t)-1, count = 0;
    size_t n = want_bso ? r->n_bso : r->n_plo;
    char list[512] = "";
    for (size_t i = 0; i < n; i++) {
        if ((want_bso ? r->bso_file[i] : r->plo_file[i]) != file) continue;
        const char *nm = want_bso ? r->bso[i]->name : r->plo[i]->name;
        if (want ? !strcmp(nm, want) : strlen(nm) == stem && !strncmp(nm, base, stem)) {
            *out = i;
            return 0;
        }
        if (count++) strncat(list, ", ", sizeof list - strlen(list) - 1);
        strncat(list, nm, sizeof list - strlen(list) - 1);
        found = i;
    }
    if (want)
        return ws_fail(err, "%s: defines no %s policy '%s' (%s%s)", path, kind, want,
                       count ? "its policies: " : "it defines no ", count ? list : kind);
    if (count == 0)
        return ws_fail(err, "%s: defines no %s policy", path, kind);
    if (count > 1)
        return ws_fail(err, "%s: defines %zu %s policies and none is named '%.*s';"
                       " name the file after the one you want, or write %s:NAME",
                       path, count, kind, (int)stem, base, path);
    *out = found;
    return 0;
}

static void list_names(const ws_registry *r, int bso, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t n = bso ? r->n_bso : r->n_plo;
    for (size_t i = 0; i < n; i++) {
        const char *nm = bso ? r->bso[i]->name : r->plo[i]->name;
        strncat(buf, nm, len - strlen(buf) - 1);
        if (i + 1 < n) strncat(buf, ", ", len - strlen(buf) - 1);
    }
}

/* Index of the policy of a kind a user's name designates: a bare name, a
 * path to a .so, or FILE.so:NAME. */
static int lookup(ws_registry *r, const char *name, int bso, size_t *out, ws_error *err)
{
    const char *kind = bso ? "bso" : "plo";
    size_t q = qualified(name);
    if (q) {
        char path[PATH_MAX];
        if (q >= sizeof path) return ws_fail(err, "%.40s...: path too long", name);
        memcpy(path, name, q);
        path[q] = '\0';
        return from_path(r, path, name + q + 1, bso, out, err);
    }
    if (is_path(name)) return from_path(r, name, NULL, bso, out, err);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < r->n_clash; i++)
            if (r->clash[i].bso == bso && !strcmp(r->clash[i].name, name))
                return ws_fail(err, "%s", r->clash[i].msg);
        size_t n = bso ? r->n_bso : r->n_plo, hit = (size_t)-1;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(bso ? r->bso[i]->name : r->plo[i]->name, name)) continue;
            if (hit != (size_t)-1)
                return ws_fail(err, "%s policy '%s' is defined by both %s and %s; name"
                               " one as FILE.so:%s", kind, name,
                               r->files[bso ? r->bso_file[hit] : r->plo_file[hit]].path,
                               r->files[bso ? r->bso_file[i] : r->plo_file[i]].path, name);
            hit = i;
        }
        if (hit != (size_t)-1) {
            *out = hit;
            return 0;
        }
        if (pass == 0 && ensure_builtin(r, err)) return -1;
    }
    char list[512];
    list_names(r, bso, list, sizeof list);
    if (r->n_broken)
        return ws_fail(err, "unknown %s policy '%s' (known: %s; or give a path to a .so);"
                       " %zu plugin%s in the policy folders did not load, first: %s", kind,
                       name, list, r->n_broken, r->n_broken > 1 ? "s" : "", r->broken);
    return ws_fail(err, "unknown %s policy '%s' (known: %s; or give a path to a .so)",
                   kind, name, list);
}

const ws_bso_type *ws_registry_bso(ws_registry *r, const char *name, ws_error *err)
{
    size_t i;
    return lookup(r, name, 1, &i, err) ? NULL : r->bso[i];
}

const ws_plo_type *ws_registry_plo(ws_registry *r, const char *name, ws_error *err)
{
    size_t i;
    return lookup(r, name, 0, &i, err) ? NULL : r->plo[i];
}

size_t ws_registry_n_bso(const ws_registry *r) { return r->n_bso; }
size_t ws_registry_n_plo(const ws_registry *r) { return r->n_plo; }
const ws_bso_type *ws_registry_bso_at(const ws_registry *r, size_t i) { return r->bso[i]; }
const ws_plo_type *ws_registry_plo_at(const ws_registry *r, size_t i) { return r->plo[i]; }
const char *ws_registry_bso_file(const ws_registry *r, size_t i) { return r->files[r->bso_file[i]].path; }
const char *ws_registry_plo_file(const ws_registry *r, size_t i) { return r->files[r->plo_file[i]].path; }

int ws_registry_sha256(ws_registry *r, const void *t, char out[65], ws_error *err)
{
    out[0] = '\0';
    loaded *f = NULL;
    for (size_t i = 0; i < r->n_bso && !f; i++)
        if ((const void *)r->bso[i] == t) f = &r->files[r->bso_file[i]];
    for (size_t i = 0; i < r->n_plo && !f; i++)
        if ((const void *)r->plo[i] == t) f = &r->files[r->plo_file[i]];
    if (!f) return 0;
    if (!f->sha256[0] && ws_sha256_file(f->path, f->sha256, err)) return -1;
    memcpy(out, f->sha256, 65);
    return 0;
}

/* ------------------------------------------------------------ parameters */

int ws_params_format(const ws_param_spec *spec, const ws_value *v, char *buf, size_t len)
{
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; spec && spec[i].name; i++) {
        int n = 0;
        const char *sep = i ? "," : "";
        switch (spec[i].kind) {
        case WS_PARAM_INT: n = snprintf(buf + used, len - used, "%s%s=%ld", sep, spec[i].name, v[i].i); break;
        case WS_PARAM_DOUBLE: n = snprintf(buf + used, len - used, "%s%s=%.17g", sep, spec[i].name, v[i].d); break;
        case WS_PARAM_BOOL: n = snprintf(buf + used, len - used, "%s%s=%s", sep, spec[i].name, v[i].b ? "true" : "false"); break;
        case WS_PARAM_STRING: n = snprintf(buf + used, len - used, "%s%s=%s", sep, spec[i].name, v[i].s ? v[i].s : ""); break;
        }
        if (n < 0 || (size_t)n >= len - used) return -1;
        used += (size_t)n;
    }
    return 0;
}

size_t ws_params_count(const ws_param_spec *spec)
{
    size_t n = 0;
    while (spec && spec[n].name) n++;
    return n;
}

static int parse_value(const ws_param_spec *ps, const ws_param_raw *raw,
                       const char *who, ws_value *v, ws_error *err)
{
    const char *s = raw->value;
    char *end;
    errno = 0;
    switch (ps->kind) {
    case WS_PARAM_INT: {
        long x = strtol(s, &end, 10);
        if (!*s || *end || errno == ERANGE)
            return ws_fail(err, "%s: %s parameter '%s' must be an integer, got \"%s\"",
                           raw->where, who, ps->name, s);
        if ((double)x < ps->min || (double)x > ps->max)
            return ws_fail(err, "%s: %s parameter '%s' must be in [%g, %g], got %ld",
                           raw->where, who, ps->name, ps->min, ps->max, x);
        v->i = x;
        return 0;
    }
    case WS_PARAM_DOUBLE: {
        double x = strtod(s, &end);
        if (!*s || *end || isnan(x))
            return ws_fail(err, "%s: %s parameter '%s' must be a number, got \"%s\"",
                           raw->where, who, ps->name, s);
        if (x < ps->min || x > ps->max)
            return ws_fail(err, "%s: %s parameter '%s' must be in [%g, %g], got %g",
                           raw->where, who, ps->name, ps->min, ps->max, x);
        v->d = x;
        return 0;
    }
    case WS_PARAM_BOOL:
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1"))
            v->b = 1;
        else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0"))
            v->b = 0;
        else
            return ws_fail(err, "%s: %s parameter '%s' must be true or false, got \"%s\"",
                           raw->where, who, ps->name, s);
        return 0;
    case WS_PARAM_STRING:
        if (!(v->s = strdup(s))) return ws_fail(err, "out of memory");
        return 0;
    }
    return ws_fail(err, "%s: %s parameter '%s' has an unknown kind", raw->where, who, ps->name);
}

int ws_params_resolve(const ws_param_spec *spec, const ws_param_raw *raw,
                      size_t n_raw, const char *who, ws_value **out,
                      ws_error *err)
{
    size_t n = ws_params_count(spec);
    *out = NULL;
    for (size_t j = 0; j < n_raw; j++) {
        size_t i;
        for (i = 0; i < n; i++)
            if (!strcmp(spec[i].name, raw[j].key)) break;
        if (i == n) {
            char list[256] = "";
            for (size_t q = 0; q < n; q++) {
                strncat(list, spec[q].name, sizeof list - strlen(list) - 1);
                if (q + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return ws_fail(err, "%s: %s has no parameter '%s' (%s%s)", raw[j].where,
                           who, raw[j].key, n ? "its parameters: " : "it takes none",
                           list);
        }
    }
    if (n == 0) return 0;
    ws_value *v = calloc(n, sizeof *v);
    if (!v) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        v[i] = spec[i].def;
        if (spec[i].kind == WS_PARAM_STRING) v[i].s = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const ws_param_raw *given = NULL;
        for (size_t j = 0; j < n_raw; j++)
            if (!strcmp(spec[i].name, raw[j].key)) given = &raw[j];
        if (given) {
            if (parse_value(&spec[i], given, who, &v[i], err)) {
                ws_params_free(spec, v);
                return -1;
            }
        } else if (spec[i].kind == WS_PARAM_STRING) {
            if (!(v[i].s = strdup(spec[i].def.s ? spec[i].def.s : ""))) {
                ws_params_free(spec, v);
                return ws_fail(err, "out of memory");
            }
        }
    }
    *out = v;
    return 0;
}

void ws_params_free(const ws_param_spec *spec, ws_value *values)
{
    if (!values) return;
    for (size_t i = 0; spec && spec[i].name; i++)
        if (spec[i].kind == WS_PARAM_STRING) free((char *)values[i].s);
    free(values);
}

/* ------------------------------------------------------------ host */

static int log_level = WS_LOG_WARN;
void ws_policy_set_log_level(int level) { log_level = level; }

typedef struct host_ctx {
    gsl_rng *rng;
    unsigned long n_gaussian, n_uniform;   /* draws made (for the benchmark) */
    const char *who;           /* "bso zeus" */
    char where[128];           /* the cell, set by ws_policy_log_where */
    unsigned long seed;
    const ws_ctx *call;        /* the context of the call in progress */
    char last_error[256];      /* last WS_LOG_ERROR message, for the error
                                  line of a failing call */
} host_ctx;

static double h_uniform(void *ctx)
{
    ((host_ctx *)ctx)->n_uniform++;
    return gsl_rng_uniform(((host_ctx *)ctx)->rng);
}

static unsigned long h_uniform_int(void *ctx, unsigned long n)
{
    ((host_ctx *)ctx)->n_uniform++;
    return n ? gsl_rng_uniform_int(((host_ctx *)ctx)->rng, n) : 0;
}

static double h_gaussian(void *ctx, double sd)
{
    ((host_ctx *)ctx)->n_gaussian++;
    return gsl_ran_gaussian_ziggurat(((host_ctx *)ctx)->rng, sd);
}

static void h_log(void *ctx, int level, const char *msg)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    host_ctx *h = ctx;
    if (level <= WS_LOG_ERROR) {
        /* Not printed: it becomes part of the one error line if the call
         * fails (see failed()). */
        snprintf(h->last_error, sizeof h->last_error, "%s", msg ? msg : "");
        return;
    }
    if (level > log_level) return;
    if (level < 0) level = 0;
    if (level > 3) level = 3;
    char at[200] = "";
    if (h->call && h->call->recurrence > 0)
        snprintf(at, sizeof at, " [%s%sseed %lu, recurrence %ld try %d]", h->where,
                 h->where[0] ? ", " : "", h->seed, h->call->recurrence, h->call->attempt);
    else
        snprintf(at, sizeof at, " [%s%sseed %lu]", h->where, h->where[0] ? ", " : "", h->seed);
    fprintf(stderr, "wattsim: %s%s: %s: %s\n", h->who, at, names[level], msg ? msg : "");
}

typedef struct instance {
    host_ctx hc;
    ws_host host;
    void *state;
    char who[80];
    int created;
    int guarded;               /* holds the stdout guard (stdout_enter) */
} instance;

static int instance_init(instance *in, const char *kind, const char *name,
                         size_t state_size, unsigned long seed, unsigned role,
                         ws_error *err)
{
    snprintf(in->who, sizeof in->who, "%s %s", kind, name);
    stdout_enter();
    in->guarded = 1;
    in->hc.who = in->who;
    in->hc.rng = ws_rng_take(ws_stream_seed(seed, role));
    in->hc.seed = seed;
    /* calloc(0) may return NULL: always allocate at least one byte. */
    in->state = calloc(1, state_size ? state_size : 1);
    if (!in->hc.rng || !in->state) return ws_fail(err, "%s: out of memory", in->who);
    in->host.abi_version = WS_ABI_VERSION;
    in->host.ctx = &in->hc;
    in->host.uniform = h_uniform;
    in->host.uniform_int = h_uniform_int;
    in->host.gaussian = h_gaussian;
    in->host.log = h_log;
    return 0;
}

static void instance_fini(instance *in, void (*destroy)(void *))
{
    if (in->created) {
        call_enter(in->who, "destroy");
        destroy(in->state);
        call_leave();
    }
    ws_rng_give(in->hc.rng);
    free(in->state);
    if (in->guarded) stdout_leave();
}

/* The version-1 signatures, for calling plugins built against them. */
typedef int (*v1_register_fn)(void *, const ws_job *);
typedef int (*v1_bso_predict_fn)(void *, const ws_job *, int *);
typedef int (*v1_bso_observe_fn)(void *, const ws_job *, int, double, int);
typedef int (*v1_plo_predict_fn)(void *, const ws_job *, int, int *);
typedef int (*v1_plo_profile_fn)(void *, const ws_job *, int, int, double);
typedef int (*v1_plo_run_fn)(void *, const ws_job *, int, int, double, int);
#define V1(fn_type, f) ((fn_type)(void (*)(void))(f))

struct ws_bso {
    instance in;
    const ws_bso_type *t;
    int v1;                    /* call through the version-1 signatures */
};

struct ws_plo {
    instance in;
    const ws_plo_type *t;
    int v1;
};

/* create()'s values at the stride the descriptor was built with. */
static int call_create(instance *in, int (*create)(void *, const ws_value *, const ws_host *),
                       const ws_param_spec *spec, size_t value_size,
                       const ws_value *params, ws_error *err)
{
    size_t n = ws_params_count(spec);
    char *buf = NULL;
    if (params && n && value_size > sizeof(ws_value)) {
        if (!(buf = calloc(n, value_size))) return ws_fail(err, "%s: out of memory", in->who);
        for (size_t i = 0; i < n; i++) memcpy(buf + i * value_size, &params[i], sizeof *params);
    }
    call_enter(in->who, "create");
    int rc = create(in->state, buf ? (const ws_value *)(const void *)buf : params, &in->host);
    call_leave();
    free(buf);
    return rc;
}

ws_bso *ws_bso_new(const ws_bso_type *t, const ws_value *params,
                   unsigned long seed, ws_error *err)
{
    ws_bso *b = calloc(1, sizeof *b);
    if (!b) { ws_fail(err, "out of memory"); return NULL; }
    b->t = t;
    b->v1 = abi_normalise(t->abi_version) < 200;
    if (instance_init(&b->in, "bso", t->name, t->state_size, seed, 1, err)) {
        ws_bso_free(b);
        return NULL;
    }
    if (call_create(&b->in, t->create, t->params, t->value_size, params, err)) {
        ws_fail(err, "bso %s: create failed", t->name);
        ws_bso_free(b);
        return NULL;
    }
    b->in.created = 1;
    return b;
}

void ws_bso_free(ws_bso *b)
{
    if (!b) return;
    instance_fini(&b->in, b->t->destroy);
    free(b);
}

ws_plo *ws_plo_new(const ws_plo_type *t, const ws_value *params,
                   unsigned long seed, ws_error *err)
{
    ws_plo *p = calloc(1, sizeof *p);
    if (!p) { ws_fail(err, "out of memory"); return NULL; }
    p->t = t;
    p->v1 = abi_normalise(t->abi_version) < 200;
    if (instance_init(&p->in, "plo", t->name, t->state_size, seed, 2, err)) {
        ws_plo_free(p);
        return NULL;
    }
    if (call_create(&p->in, t->create, t->params, t->value_size, params, err)) {
        ws_fail(err, "plo %s: create failed", t->name);
        ws_plo_free(p);
        return NULL;
    }
    p->in.created = 1;
    return p;
}

void ws_plo_free(ws_plo *p)
{
    if (!p) return;
    instance_fini(&p->in, p->t->destroy);
    free(p);
}

void ws_policy_log_where(ws_bso *b, ws_plo *p, const char *where)
{
    if (b) snprintf(b->in.hc.where, sizeof b->in.hc.where, "%s", where);
    if (p) snprintf(p->in.hc.where, sizeof p->in.hc.where, "%s", where);
}

const char *ws_bso_who(const ws_bso *b) { return b->in.who; }

void ws_bso_draws(const ws_bso *b, unsigned long *gaussian, unsigned long *uniform)
{
    *gaussian = b->in.hc.n_gaussian;
    *uniform = b->in.hc.n_uniform;
}

void ws_plo_draws(const ws_plo *p, unsigned long *gaussian, unsigned long *uniform)
{
    *gaussian = p->in.hc.n_gaussian;
    *uniform = p->in.hc.n_uniform;
}

void ws_policy_stdout_hold(void) { stdout_enter(); }
void ws_policy_stdout_release(void) { stdout_leave(); }
const char *ws_plo_who(const ws_plo *p) { return p->in.who; }

static int failed(instance *in, const char *call, int rc, ws_error *err)
{
    if (in->hc.last_error[0])
        return ws_fail(err, "%s: %s failed: %s", in->who, call, in->hc.last_error);
    return ws_fail(err, "%s: %s failed (returned %d)", in->who, call, rc);
}

int ws_bso_register(ws_bso *b, const ws_job *job, const ws_ctx *ctx, ws_error *err)
{
    call_enter(b->in.who, "register_job");
    b->in.hc.call = ctx;
    int rc = b->v1 ? V1(v1_register_fn, b->t->register_job)(b->in.state, job)
                   : b->t->register_job(b->in.state, job, ctx);
    call_leave();
    return rc ? failed(&b->in, "register_job", rc, err) : 0;
}

int ws_bso_predict(ws_bso *b, const ws_job *job, const ws_ctx *ctx, int *bs_index,
                   ws_error *err)
{
    int bs = 0;
    call_enter(b->in.who, "predict");
    b->in.hc.call = ctx;
    int rc = b->v1 ? V1(v1_bso_predict_fn, b->t->predict)(b->in.state, job, &bs)
                   : b->t->predict(b->in.state, job, ctx, &bs);
    call_leave();
    if (rc) return failed(&b->in, "predict", rc, err);
    int i = ws_job_bs_index(job, bs);
    if (i < 0)
        return ws_fail(err, "%s: predict returned batch size %d, which is not"
                       " one of the job's %d batch sizes (%d..%d)", b->in.who,
                       bs, job->n_bs, job->bs[0], job->bs[job->n_bs - 1]);
    *bs_index = i;
    return 0;
}

int ws_bso_observe(ws_bso *b, const ws_job *job, const ws_ctx *ctx, int bs,
                   double cost, int reached, ws_error *err)
{
    call_enter(b->in.who, "observe");
    b->in.hc.call = ctx;
    int rc = b->v1 ? V1(v1_bso_observe_fn, b->t->observe)(b->in.state, job, bs, cost, reached)
                   : b->t->observe(b->in.state, job, ctx, bs, cost, reached);
    call_leave();
    return rc ? failed(&b->in, "observe", rc, err) : 0;
}

int ws_plo_register(ws_plo *p, const ws_job *job, const ws_ctx *ctx, ws_error *err)
{
    if (!p->t->register_job) return 0;
    call_enter(p->in.who, "register_job");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_register_fn, p->t->register_job)(p->in.state, job)
                   : p->t->register_job(p->in.state, job, ctx);
    call_leave();
    return rc ? failed(&p->in, "register_job", rc, err) : 0;
}

int ws_plo_predict(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int i, int *knob,
                   ws_error *err)
{
    int pl = -1;
    const int bs = job->bs[i];
    call_enter(p->in.who, "predict");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_plo_predict_fn, p->t->predict)(p->in.state, job, bs, &pl)
                   : p->t->predict(p->in.state, job, ctx, bs, &pl);
    call_leave();
    if (rc) return failed(&p->in, "predict", rc, err);
    if (pl == WS_PL_UNKNOWN) { *knob = -1; return 0; }
    for (int k = job->knob_start[i]; k < job->knob_start[i + 1]; k++)
        if (job->knob_pl[k] == pl) { *knob = k; return 0; }
    return ws_fail(err, "%s: predict(bs %d) returned power limit %d W, which"
                   " was not measured for that batch size (%d..%d W)", p->in.who,
                   bs, pl, job->knob_pl[job->knob_start[i]],
                   job->knob_pl[job->knob_start[i + 1] - 1]);
}

int ws_plo_observe_profile(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs,
                           int pl, double epoch_cost, ws_error *err)
{
    call_enter(p->in.who, "observe_profile");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_plo_profile_fn, p->t->observe_profile)(p->in.state, job, bs,
                                                                   pl, epoch_cost)
                   : p->t->observe_profile(p->in.state, job, ctx, bs, pl, epoch_cost);
    call_leave();
    return rc ? failed(&p->in, "observe_profile", rc, err) : 0;
}

int ws_plo_observe_run(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                       double cost, int reached, ws_error *err)
{
    if (!p->t->observe_run) return 0;
    call_enter(p->in.who, "observe_run");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_plo_run_fn, p->t->observe_run)(p->in.state, job, bs, pl, cost,
                                                           reached)
                   : p->t->observe_run(p->in.state, job, ctx, bs, pl, cost, reached);
    call_leave();
    return rc ? failed(&p->in, "observe_run", rc, err) : 0;
}

/* ------------------------------------------------------------ context */

void ws_ctx_init(ws_ctx *c, long recurrences)
{
    *c = (ws_ctx){.abi_version = WS_ABI_VERSION, .size = sizeof *c,
                  .recurrences = recurrences, .carbon_intensity = NAN, .price = NAN};
    ws_ctx_clear_run(c);
}

void ws_ctx_clear_run(ws_ctx *c)
{
    c->run_started = c->run_epochs = c->run_early_stopped = 0;
    c->run_epoch_budget = c->run_time_s = c->run_energy_j = NAN;
    c->profile_time_s = c->profile_power_w = NAN;
}
