/*
 * Plugin registry: loading policy plugins (dlopen) from the policy folders
 * or paths the user names, and looking policies up by name. See
 * wattsim/plugin.h; descriptor checks are in descriptor.c.
 *
 * Besides files, the registry holds *provided* descriptors, which no .so
 * defines: Python policies, named `py:MODULE:CLASS` and served by the
 * Python bridge plugin (bridge.h), and live objects a library caller adds
 * (ws_registry_add_bso). They are looked up by that key only, never by a
 * bare name, so they neither clash with nor shadow the folders' policies;
 * their calls run Python, which must not run in two threads at once
 * (ws_registry_serial).
 *
 * Map, in file order:
 *   registry   the registry and its files; the policy folder beside the
 *              code (ws_policy_dir); loading one .so (load_file: dlopen,
 *              the entry point and its ABI version, descriptor checks,
 *              name clashes, copies of version-1 descriptors); folders
 *              (ws_registry_load_dir, the built-in one at first use:
 *              ensure_builtin); names given as paths (from_path)
 *   provided   descriptors without a file (ws_registry_add_bso/plo), the
 *              Python bridge (bridge_provide, ws_registry_load_python);
 *              look-ups by name (lookup: provided key, path, or folder
 *              name; the error lists the names there are); a descriptor's
 *              origin and file sha256 for provenance
 *   allowance  --allow-plugins: the folders and Python packages a config
 *              may name (ws_plugin_allow_dir/python) and the check of a
 *              config's policy name against them (ws_plugin_config_check),
 *              folders compared by their real path
 */
#define _GNU_SOURCE                /* dladdr */
#include "wattsim/plugin.h"
#include "wattsim/process.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include "wattsim/input.h"
#include "wattsim/sha256.h"
#include "bridge.h"
#include "descriptor.h"
#include "guard.h"
#include "plugin_cache.h"
#include "plugin_map.h"

/* The installed policy folder relative to the executable's folder (set by
 * the build from the install layout). */
#ifndef WS_REL_POLICY_DIR
#define WS_REL_POLICY_DIR "../lib/wattsim/policies"
#endif
/* ... and relative to the folder of libwattsim.so (a program using the
 * library, such as the Python package). */
#ifndef WS_REL_LIB_POLICY_DIR
#define WS_REL_LIB_POLICY_DIR "wattsim/policies"
#endif

/* ------------------------------------------------------------ registry */

/*
 * The registry keeps its own copy of every descriptor, normalised to this
 * host's layout at load: a version-1 descriptor is copied up to the members
 * version 1 had (the rest zeroed), a newer one up to the members this host
 * knows, and its parameter specs are re-packed with this host's stride. The
 * rest of wattsim reads only these copies; the calls still go to
 * the plugin's functions through the signatures of its version (plugin.c).
 */
typedef struct loaded {
    void *handle;
    char *path;
    int abi_version;           /* the plugin's, normalised (1 -> 100) */
    int folder;                /* found in a policy folder (built-in or
                                  $WATTSIM_POLICY_DIR), not named by path */
    char sha256[65];           /* "" until asked for */
    int provided;              /* not a file: path is the lookup key
                                  ("py:MODULE:CLASS"), handle NULL */
    char *origin;              /* provided: what provenance shows */
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
    if (r->n_files) ws_guard_enter();
    for (size_t i = 0; i < r->n_files; i++) {
        if (r->files[i].handle) {
            ws_guard_call_enter(r->files[i].path, "unloading");
            dlclose(r->files[i].handle);
            ws_guard_call_leave();
        }
        free(r->files[i].path);
        free(r->files[i].origin);
    }
    if (r->n_files) ws_guard_leave();
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

/* The folder of the object this code is in, into dir: the executable
 * (*exe = 1), or libwattsim.so when a program loaded the library. */
static int code_folder(char *dir, size_t len, int *exe)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(dir, len, "%s", self);
    *exe = 1;
    Dl_info di;
    if (dladdr((void *)code_folder, &di) && di.dli_fname && di.dli_fname[0]) {
        char *real = realpath(di.dli_fname, NULL);
        if (real && strcmp(real, self)) {
            snprintf(dir, len, "%s", real);
            *exe = 0;
        }
        free(real);
    }
    char *slash = strrchr(dir, '/');
    if (!slash) return -1;
    *slash = '\0';
    return 0;
}

/* The folder is found once per process and kept (the executable and the
 * library do not move while they run; a library call would otherwise
 * spend ~70 readlink(2)s on finding it again): only a folder found is
 * kept, so one created later is still found. */
WS_FORK_SAFE_MUTEX(dir_lock)   /* free again in a forked child */
static char dir_found[PATH_MAX];

static const char *find_policy_dir(void);

const char *ws_policy_dir(void)
{
    pthread_mutex_lock(&dir_lock);
    const char *d = dir_found[0] ? dir_found : find_policy_dir();
    if (d && d != dir_found) snprintf(dir_found, sizeof dir_found, "%s", d);
    pthread_mutex_unlock(&dir_lock);
    return d ? dir_found : NULL;
}

static const char *find_policy_dir(void)
{
    static char dir[PATH_MAX];
    char base[PATH_MAX];
    int exe;
    if (code_folder(base, sizeof base, &exe)) return NULL;
    /* Installed; the build tree (build/sim/wattsim, build/sim/libwattsim.so,
     * build/tests/test_NAME -> build/policies). */
    const char *rel[] = {exe ? "/" WS_REL_POLICY_DIR : "/" WS_REL_LIB_POLICY_DIR, "/../policies"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        struct stat st;
        snprintf(dir, sizeof dir, "%s%s", base, rel[i]);
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
            char *real = realpath(dir, NULL);
            if (real) {
                snprintf(dir, sizeof dir, "%s", real);
                free(real);
            }
            return dir;
        }
    }
    return NULL;
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
 * that, the version-1 one; *v2 says which. */
static const ws_plugin *call_entry(void *h, const char *path, int *v2, ws_error *err)
{
    ws_plugin_entry_fn entry;
    *(void **)&entry = dlsym(h, WS_PLUGIN_ENTRY_NAME);
    *v2 = entry != NULL;
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
        if (f->provided || (!f->folder && !folder)) continue;
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

/*
 * The entry point a plugin exports says which signatures its calls have
 * (version 1's: no context; version 2's: the context third), and so does
 * every version it declares: they must agree, or the host would call it
 * through the wrong ones. The classic way to get them to disagree: an
 * ABI-1 source built against the version-2 header by a compiler that only
 * warns about the callbacks' types (GCC before 14) exports the version-1
 * entry with WS_ABI_VERSION 2.x. `what` is "plugin", "bso" or "plo"; the
 * version is known (ws_descriptor_check_version passed).
 */
static int entry_agrees(const char *path, const char *what, const char *name, int version,
                        int entry_v2, ws_error *err)
{
    const int v = ws_abi_normalise(version);
    if (entry_v2 == (v >= 200)) return 0;
    if (!entry_v2)
        return ws_fail(err, "%s: %s '%s' declares policy ABI %d.%d but the plugin exports"
                       " version 1's entry point %s (not %s): built from an ABI-1 source"
                       " against a version-2 header, its calls would get the wrong"
                       " arguments. Rebuild it with `#define WS_ABI_REQUEST 1` before"
                       " `#include <wattsim/policy.h>`, or port it (docs/writing-a-policy.md,"
                       " \"Migrating from ABI 1\")", path, what, name ? name : "?", v / 100,
                       v % 100, WS_PLUGIN_ENTRY_V1_NAME, WS_PLUGIN_ENTRY_NAME);
    return ws_fail(err, "%s: %s '%s' declares policy ABI %d.%d but the plugin exports"
                   " version 2's entry point %s, whose calls have version 2's signatures:"
                   " declare abi_version = WS_ABI_VERSION (from <wattsim/policy.h> 2.x), or"
                   " build a version-1 plugin with `#define WS_ABI_REQUEST 1` and %s(void)",
                   path, what, name ? name : "?", v / 100, v % 100, WS_PLUGIN_ENTRY_NAME,
                   WS_PLUGIN_ENTRY_V1_NAME);
}

int ws_registry_load_file(ws_registry *r, const char *path, ws_error *err)
{
    return load_file(r, path, 0, err);
}

static int load_file(ws_registry *r, const char *path, int folder, ws_error *err)
{
    /* A plugin kept from an earlier registry, the same file (identity):
     * another reference to it, without realpath or the loader's work. */
    ws_file_id id;
    const int known = !ws_file_id_get(path, &id);
    char *real = NULL;
    void *h = known ? ws_plugin_cache_open(path, &id, &real) : NULL;
    const int kept = h != NULL;
    if (!real) real = realpath(path, NULL);
    if (!real) return ws_fail(err, "%s: cannot open policy plugin: %s", path, strerror(errno));
    for (size_t i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].path, real)) {
            if (h) dlclose(h);
            free(real);
            return 0;
        }
    char *name = NULL;             /* what dlopen was given (plugin_map.c) */
    struct stat st;
    if (!kept) {
        /* dlopen opens without O_NONBLOCK: a FIFO named X.so (in a policy
         * folder every command scans, or given as --bso) would block it for
         * ever, and a device never ends. Only a regular file is loaded. */
        const int gone = stat(real, &st) != 0;
        if (gone || !S_ISREG(st.st_mode)) {
            if (gone) ws_fail(err, "%s: cannot load policy plugin: %s", path, strerror(errno));
            else ws_fail(err, "%s: cannot load policy plugin: not a regular file (%s)", path,
                         ws_input_kind(st.st_mode));
            free(real);
            return -1;
        }
        /* drop kept references to older builds of this path (the cache's
         * count of files opened counts this one) */
        ws_plugin_cache_forget(real);
    }
    ws_guard_enter();
    ws_guard_call_enter(path, "loading");
    /* kept mapped for the process's life, under a name that maps this
     * build and no other (plugin_map.c) */
    if (!kept) h = ws_plugin_map_open(real, st.st_dev, st.st_ino, &name);
    int entry_v2 = 0;
    const ws_plugin *pl = h ? call_entry(h, path, &entry_v2, err) : NULL;
    ws_guard_call_leave();
    ws_guard_leave();
    if (!h) {
        const char *why = dlerror();
        ws_fail(err, "%s: cannot load policy plugin: %s", path, why ? why : "out of memory");
        free(real);
        return -1;
    }
    ws_bso_type **bc = NULL;
    ws_plo_type **pc = NULL;
    size_t nb = 0, np = 0;
    if (!pl) goto fail;
    if (ws_descriptor_check_version(path, "plugin", pl->name, pl->abi_version, err)
        || entry_agrees(path, "plugin", pl->name, pl->abi_version, entry_v2, err))
        goto fail;
    if (ws_abi_normalise(pl->abi_version) >= 200) {
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
        /* The versions agree before anything past version 1's members is read. */
        if (ws_descriptor_check_version(path, "bso", pl->bso[i]->name,
                                        pl->bso[i]->abi_version, err)
            || entry_agrees(path, "bso", pl->bso[i]->name, pl->bso[i]->abi_version,
                            entry_v2, err)
            || ws_descriptor_check_bso(path, pl->bso[i], &bc[i], err))
            goto fail;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(bc[j]->name, bc[i]->name)) {
                ws_fail(err, "%s: bso '%s' is defined twice in this plugin", path,
                        bc[i]->name);
                goto fail;
            }
        if (name_free(r, path, folder, 1, bc[i]->name, err)) goto fail;
    }
    for (size_t i = 0; i < np; i++) {
        /* The versions agree before anything past version 1's members is read. */
        if (ws_descriptor_check_version(path, "plo", pl->plo[i]->name,
                                        pl->plo[i]->abi_version, err)
            || entry_agrees(path, "plo", pl->plo[i]->name, pl->plo[i]->abi_version,
                            entry_v2, err)
            || ws_descriptor_check_plo(path, pl->plo[i], &pc[i], err))
            goto fail;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(pc[j]->name, pc[i]->name)) {
                ws_fail(err, "%s: plo '%s' is defined twice in this plugin", path,
                        pc[i]->name);
                goto fail;
            }
        if (name_free(r, path, folder, 0, pc[i]->name, err)) goto fail;
    }
    loaded f = {h, real, ws_abi_normalise(pl->abi_version), folder, "", 0, NULL};
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
    /* kept only when the file is still the one stat saw before dlopen */
    ws_file_id after;
    if (!kept && known && !ws_file_id_get(path, &after) && ws_file_id_same(&id, &after))
        ws_plugin_cache_keep(path, real, name, &id);
    free(name);
    return 0;
oom:
    ws_fail(err, "out of memory");
fail:
    free_copies(bc, nb, pc, np);
    ws_guard_enter();
    ws_guard_call_enter(path, "unloading");
    dlclose(h);
    ws_guard_call_leave();
    ws_guard_leave();
    free(real);
    free(name);
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
        if (r->files[bso ? r->bso_file[i] : r->plo_file[i]].provided) continue;
        const char *nm = bso ? r->bso[i]->name : r->plo[i]->name;
        strncat(buf, nm, len - strlen(buf) - 1);
        if (i + 1 < n) strncat(buf, ", ", len - strlen(buf) - 1);
    }
}

/* ------------------------------------------------------------ provided */

/* Add a provided descriptor under `key` (see the top of this file). */
static int add_provided(ws_registry *r, const char *key, int bso, const void *desc,
                        const char *origin, const char *sha256, ws_error *err)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (r->files[i].provided && !strcmp(r->files[i].path, key))
            return ws_fail(err, "%s: already registered", key);
    ws_bso_type *bc = NULL;
    ws_plo_type *pc = NULL;
    int bad = bso ? ws_descriptor_check_bso(key, desc, &bc, err)
                  : ws_descriptor_check_plo(key, desc, &pc, err);
    loaded f = {NULL, strdup(key), 0, 0, "", 1, strdup(origin ? origin : key)};
    if (!bad) f.abi_version = ws_abi_normalise(bso ? bc->abi_version : pc->abi_version);
    if (sha256) snprintf(f.sha256, sizeof f.sha256, "%s", sha256);
    void *arr = bso ? (void *)r->bso : (void *)r->plo;
    size_t n = bso ? r->n_bso : r->n_plo;
    void *grown = bad || !f.path || !f.origin ? NULL : realloc(arr, (n + 1) * sizeof(void *));
    if (grown) {
        if (bso) r->bso = grown; else r->plo = grown;
    }
    size_t *gf = grown ? realloc(bso ? r->bso_file : r->plo_file, (n + 1) * sizeof *gf) : NULL;
    if (gf) {
        if (bso) r->bso_file = gf; else r->plo_file = gf;
    }
    if (!gf || push(&r->files, &r->n_files, sizeof f, &f)) {
        if (!bad) ws_fail(err, "out of memory");
        if (bc) { free((void *)bc->params); free(bc); }
        if (pc) { free((void *)pc->params); free(pc); }
        free(f.path);
        free(f.origin);
        return -1;
    }
    if (bso) {
        r->bso[r->n_bso] = bc;
        r->bso_file[r->n_bso++] = r->n_files++;
    } else {
        r->plo[r->n_plo] = pc;
        r->plo_file[r->n_plo++] = r->n_files++;
    }
    return 0;
}

int ws_registry_add_bso(ws_registry *r, const char *key, const ws_bso_type *t,
                        const char *origin, const char *sha256, ws_error *err)
{
    return add_provided(r, key, 1, t, origin, sha256, err);
}

int ws_registry_add_plo(ws_registry *r, const char *key, const ws_plo_type *t,
                        const char *origin, const char *sha256, ws_error *err)
{
    return add_provided(r, key, 0, t, origin, sha256, err);
}

/* The loaded entry of descriptor t, or NULL. */
static const loaded *file_of(const ws_registry *r, const void *t)
{
    for (size_t i = 0; i < r->n_bso; i++)
        if ((const void *)r->bso[i] == t) return &r->files[r->bso_file[i]];
    for (size_t i = 0; i < r->n_plo; i++)
        if ((const void *)r->plo[i] == t) return &r->files[r->plo_file[i]];
    return NULL;
}

int ws_registry_serial(const ws_registry *r, const void *t)
{
    const loaded *f = file_of(r, t);
    return f && f->provided;
}

const char *ws_registry_origin(const ws_registry *r, const void *t)
{
    const loaded *f = file_of(r, t);
    return !f ? "" : f->provided ? f->origin : f->path;
}

/*
 * The Python bridge plugin, loaded once per process and never unloaded:
 * the interpreter it starts (or joins) lives as long as the process, and
 * so do the descriptors it answers. Its calls are serialised here.
 */
static pthread_mutex_t bridge_lock = PTHREAD_MUTEX_INITIALIZER;
static ws_bridge_fn bridge_fn;

static int bridge_provide(const char *spec, int want, ws_bridge_answer *a, ws_error *err)
{
    pthread_mutex_lock(&bridge_lock);
    if (!bridge_fn) {
        const char *dir = ws_policy_dir();
        char path[PATH_MAX];
        if (!dir) {
            pthread_mutex_unlock(&bridge_lock);
            return ws_fail(err, "%s: cannot find the Python bridge (bridges/%s beside the"
                           " built-in policy folder); reinstall wattsim", spec,
                           WS_BRIDGE_PYTHON_FILE);
        }
        snprintf(path, sizeof path, "%s/../bridges/%s", dir, WS_BRIDGE_PYTHON_FILE);
        ws_guard_enter();
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        ws_guard_leave();
        if (!h) {
            pthread_mutex_unlock(&bridge_lock);
            return ws_fail(err, "%s: cannot load the Python bridge: %s", spec, dlerror());
        }
        *(void **)&bridge_fn = dlsym(h, WS_BRIDGE_ENTRY_NAME);
        if (!bridge_fn) {
            dlclose(h);
            pthread_mutex_unlock(&bridge_lock);
            return ws_fail(err, "%s: %s is not wattsim's Python bridge (no %s)", spec, path,
                           WS_BRIDGE_ENTRY_NAME);
        }
    }
    memset(a, 0, sizeof *a);
    ws_guard_enter();
    ws_guard_call_enter(spec, "loading");
    int rc = bridge_fn(spec, want, WS_ABI_VERSION, a);
    ws_guard_call_leave();
    ws_guard_leave();
    pthread_mutex_unlock(&bridge_lock);
    a->error[sizeof a->error - 1] = '\0';
    a->origin[sizeof a->origin - 1] = '\0';
    a->sha256[sizeof a->sha256 - 1] = '\0';
    if (rc || !a->descriptor || (a->kind != WS_BRIDGE_BSO && a->kind != WS_BRIDGE_PLO))
        return ws_fail(err, "%s", a->error[0] ? a->error : "the Python bridge failed");
    return 0;
}

static int provided_index(const ws_registry *r, const char *key, int bso, size_t *out)
{
    size_t n = bso ? r->n_bso : r->n_plo;
    for (size_t i = 0; i < n; i++) {
        const loaded *f = &r->files[bso ? r->bso_file[i] : r->plo_file[i]];
        if (f->provided && !strcmp(f->path, key)) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

/* A `py:` name: a provided descriptor added before, or the bridge's. */
static int python_lookup(ws_registry *r, const char *name, int bso, size_t *out,
                         ws_error *err)
{
    if (!provided_index(r, name, bso, out)) return 0;
    size_t other;
    if (!provided_index(r, name, !bso, &other))
        return ws_fail(err, "%s is a %s, not a %s", name,
                       bso ? "power-limit optimizer (plo)" : "batch-size optimizer (bso)",
                       bso ? "batch-size optimizer (bso)" : "power-limit optimizer (plo)");
    if (name[3] == '@') return ws_fail(err, "%s: no such live policy", name);
    ws_bridge_answer a;
    if (bridge_provide(name, bso ? WS_BRIDGE_BSO : WS_BRIDGE_PLO, &a, err)) return -1;
    if ((a.kind == WS_BRIDGE_BSO) != bso)
        return ws_fail(err, "%s is a %s, not a %s", name,
                       bso ? "power-limit optimizer (plo)" : "batch-size optimizer (bso)",
                       bso ? "batch-size optimizer (bso)" : "power-limit optimizer (plo)");
    if (add_provided(r, name, bso, a.descriptor, a.origin, a.sha256, err)) return -1;
    return provided_index(r, name, bso, out);
}

int ws_registry_load_python(ws_registry *r, const char *spec, ws_error *err)
{
    size_t i;
    if (!provided_index(r, spec, 1, &i) || !provided_index(r, spec, 0, &i)) return 0;
    ws_bridge_answer a;
    if (bridge_provide(spec, WS_BRIDGE_EITHER, &a, err)) return -1;
    return add_provided(r, spec, a.kind == WS_BRIDGE_BSO, a.descriptor, a.origin, a.sha256,
                        err);
}

/* An http:// BSO: provided by the layer that installed http_bso. */
static ws_http_bso_fn http_bso;

void ws_registry_set_http_bso(ws_http_bso_fn fn) { http_bso = fn; }

static int http_lookup(ws_registry *r, const char *name, int bso, size_t *out, ws_error *err)
{
    if (!bso)
        return ws_fail(err, "%s: a server of Zeus's batch-size optimizer API is a batch-size"
                       " optimizer (bso), not a power-limit optimizer (plo)", name);
    if (!provided_index(r, name, 1, out)) return 0;
    if (!http_bso)
        return ws_fail(err, "%s: this wattsim was built without the http:// client (WS_SERVE:"
                       " install libmicrohttpd-dev and libsqlite3-dev and rebuild)", name);
    const ws_bso_type *t = http_bso(name, err);
    if (!t || add_provided(r, name, 1, t, name, "", err)) return -1;
    return provided_index(r, name, 1, out);
}

/* Index of the policy of a kind a user's name designates: a bare name, a
 * path to a .so, or FILE.so:NAME. */
static int lookup(ws_registry *r, const char *name, int bso, size_t *out, ws_error *err)
{
    const char *kind = bso ? "bso" : "plo";
    if (!strncmp(name, "py:", 3)) return python_lookup(r, name, bso, out, err);
    if (!strncmp(name, "http://", 7) || !strncmp(name, "https://", 8))
        return http_lookup(r, name, bso, out, err);
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
            if (r->files[bso ? r->bso_file[i] : r->plo_file[i]].provided) continue;
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
    loaded *f = (loaded *)file_of(r, t);
    if (!f) return 0;
    if (!f->provided && !f->sha256[0] && ws_sha256_file_cached(f->path, f->sha256, err))
        return -1;
    memcpy(out, f->sha256, 65);
    return 0;
}

/* ------------------------------------------------------------ allowance */

/*
 * A config is data: the plugin files it may name are those in the policy
 * folders (built-in, $WATTSIM_POLICY_DIR) and in the folders the command
 * line allows (--allow-plugins DIR). Set once while the command line is
 * read, before any thread or child exists; children inherit it.
 */
static char **allowed;
static size_t n_allowed;

int ws_plugin_allow_dir(const char *dir, ws_error *err)
{
    struct stat st;
    char *real = realpath(dir, NULL);
    if (!real)
        return ws_fail(err, "--allow-plugins %s: %s", dir, strerror(errno));
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(real);
        return ws_fail(err, "--allow-plugins %s: not a folder", dir);
    }
    for (size_t i = 0; i < n_allowed; i++)
        if (!strcmp(allowed[i], real)) { free(real); return 0; }
    char **t = realloc(allowed, (n_allowed + 1) * sizeof *t);
    if (!t) { free(real); return ws_fail(err, "out of memory"); }
    allowed = t;
    allowed[n_allowed++] = real;
    return 0;
}

size_t ws_plugin_allowed(const char *const **dirs)
{
    *dirs = (const char *const *)allowed;
    return n_allowed;
}

/* Python packages a config may name policies of (--allow-python). */
static char **allowed_py;
static size_t n_allowed_py;

/* A dotted Python name: identifiers ([A-Za-z_][A-Za-z0-9_]*) joined by
 * single dots, n bytes of s. */
static int dotted_name(const char *s, size_t n)
{
    if (n == 0 || n > 200) return 0;
    int start = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (start) return 0;
            start = 1;
            continue;
        }
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(c >= '0' && c <= '9' && !start)) return 0;
        start = 0;
    }
    return !start;
}

int ws_plugin_allow_python(const char *package, ws_error *err)
{
    if (!dotted_name(package, strlen(package)))
        return ws_fail(err, "--allow-python '%s': not a Python package name (e.g. zeus or"
                       " mylab.policies)", package);
    for (size_t i = 0; i < n_allowed_py; i++)
        if (!strcmp(allowed_py[i], package)) return 0;
    char *copy = strdup(package);
    char **t = copy ? realloc(allowed_py, (n_allowed_py + 1) * sizeof *t) : NULL;
    if (!t) { free(copy); return ws_fail(err, "out of memory"); }
    allowed_py = t;
    allowed_py[n_allowed_py++] = copy;
    return 0;
}

size_t ws_plugin_allowed_python(const char *const **packages)
{
    *packages = (const char *const *)allowed_py;
    return n_allowed_py;
}

void ws_plugin_allow_reset(void)
{
    for (size_t i = 0; i < n_allowed; i++) free(allowed[i]);
    free(allowed);
    allowed = NULL;
    n_allowed = 0;
    for (size_t i = 0; i < n_allowed_py; i++) free(allowed_py[i]);
    free(allowed_py);
    allowed_py = NULL;
    n_allowed_py = 0;
}

/* A config's `py:MODULE:CLASS`: MODULE (a dotted name) must be a package
 * --allow-python names, or below one. MODULE and CLASS are dotted names,
 * so a spec has exactly two colons: the bridge (python/wattsim/_bridge.py,
 * split_spec) refuses any other the same way, and the module checked here
 * is always the module imported ("py:wattsim:evil:B" would otherwise pass
 * here as wattsim and import `wattsim:evil`). */
static int python_config_check(const char *name, const char *kind, const char *where,
                               ws_error *err)
{
    const char *mod = name + 3, *colon = strchr(mod, ':');
    size_t n = colon ? (size_t)(colon - mod) : strlen(mod);
    if (!colon || !dotted_name(mod, n) || !dotted_name(colon + 1, strlen(colon + 1)))
        return ws_fail(err, "%s: %s '%s' is not py:MODULE:CLASS, MODULE and CLASS dotted"
                       " Python names (e.g. py:mylab.policies:MyBSO)", where, kind, name);
    for (size_t i = 0; i < n_allowed_py; i++) {
        size_t k = strlen(allowed_py[i]);
        if (k <= n && !strncmp(mod, allowed_py[i], k) && (k == n || mod[k] == '.')) return 0;
    }
    size_t top = strcspn(mod, ".:");
    return ws_fail(err, "%s: %s '%s' is Python code, and a config may not run code by"
                   " itself; to run it, pass --allow-python %.*s", where, kind, name,
                   (int)top, mod);
}

/* The real folder of a file: of its real path when it exists, else of
 * its folder's (malloc'd; NULL when neither resolves). */
static char *real_folder(const char *path)
{
    char *real = realpath(path, NULL);
    if (!real) {
        char *copy = strdup(path);
        if (!copy) return NULL;
        char *slash = strrchr(copy, '/');
        if (!slash) real = realpath(".", NULL);
        else if (slash == copy) real = strdup("/");
        else {
            *slash = '\0';
            real = realpath(copy, NULL);
        }
        free(copy);
        return real;
    }
    char *slash = strrchr(real, '/');
    if (slash == real) slash[1] = '\0';
    else if (slash) *slash = '\0';
    return real;
}

static int same_folder(const char *folder, const char *dir)
{
    char *real = realpath(dir, NULL);
    int same = real && !strcmp(real, folder);
    free(real);
    return same;
}

/* Whether plugins of `folder` (a real path) may be named by a config. */
static int folder_allowed(const char *folder)
{
    const char *dir = ws_policy_dir();
    if (dir && same_folder(folder, dir)) return 1;
    for (size_t i = 0; i < n_allowed; i++)
        if (!strcmp(folder, allowed[i])) return 1;
    const char *extra = getenv("WATTSIM_POLICY_DIR");
    for (const char *q = extra; q && *q;) {
        size_t len = strcspn(q, ":");
        if (len > 0 && len < PATH_MAX) {
            char d[PATH_MAX];
            memcpy(d, q, len);
            d[len] = '\0';
            if (same_folder(folder, d)) return 1;
        }
        q += len;
        if (*q) q++;
    }
    return 0;
}

int ws_plugin_config_check(const char *name, const char *kind, const char *where,
                           ws_error *err)
{
    if (!strncmp(name, "py:", 3)) return python_config_check(name, kind, where, err);
    /* A server's URL runs no code here; the client refuses hosts other
     * than loopback unless the command line says --allow-remote. */
    if (!strncmp(name, "http://", 7) || !strncmp(name, "https://", 8)) return 0;
    size_t q = qualified(name);
    if (!q && !is_path(name)) return 0;          /* looked up in the policy folders */
    char file[PATH_MAX];
    if (q >= sizeof file || strlen(name) >= sizeof file)
        return ws_fail(err, "%s: %s '%.40s...': path too long", where, kind, name);
    snprintf(file, sizeof file, "%.*s", (int)(q ? q : strlen(name)), name);
    char *folder = real_folder(file);
    int ok = folder && folder_allowed(folder);
    if (!ok)
        ws_fail(err, "%s: %s '%s' is a plugin file, and a config may name plugins only in"
                " the policy folders (a config runs no code); to run it, pass"
                " --allow-plugins %s", where, kind, name, folder ? folder : "DIR");
    free(folder);
    return ok ? 0 : -1;
}
