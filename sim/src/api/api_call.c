/*
 * A call's state as the commands use it (api_internal.h, below both
 * api.c and api_commands.c): its options (api_get, api_flag) and their
 * errors, the config and job options applied to a run config, where the
 * traces and the catalogue are, the registry with the call's live
 * policies, the hooks (progress, cancel), and the provenance the commands
 * record for the envelope. It calls neither the commands nor api.c: the
 * arrows run api.c -> api_commands.c -> api_call.c.
 */
#define _GNU_SOURCE                /* dladdr, open_memstream, strcasecmp */
#include "api_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "wattsim/config_opts.h"
#include "wattsim/json_writer.h"
#include "wattsim/report.h"
#include "wattsim/study.h"

/* The data folder relative to the library's folder (set by the build). */
#ifndef WS_REL_LIB_DATA_DIR
#define WS_REL_LIB_DATA_DIR "../share/wattsim"
#endif

/* ------------------------------------------------------------ options */

const char *api_get(const ws_api_call *c, const char *name)
{
    for (size_t i = c->n_v; i-- > 0;)
        if (!strcmp(c->v[i].opt->name, name)) return c->v[i].value;
    return NULL;
}

int api_flag(const ws_api_call *c, const char *name)
{
    const char *v = api_get(c, name);
    return v && (!*v || !strcmp(v, "1") || !strcasecmp(v, "true"));
}

int api_usage(const ws_api_call *c, ws_error *err, const char *fmt, ...)
{
    char msg[WS_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ws_fail(err, "%s: %s", c->cmd->name, msg);
}

/* ------------------------------------------------------------ config */

int api_apply_config(const ws_api_call *c, ws_run_config *cfg, ws_error *err)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n_v; i++) {
            const api_opt *o = c->v[i].opt;
            const char *v = c->v[i].value;
            char opt[40];
            snprintf(opt, sizeof opt, "--%s", o->name);
            if (pass == 0 && o->kind == K_CFG && ws_config_set_kv(cfg, o->key, v, opt, err))
                return -1;
            if (pass == 0 && o->kind == K_LIST
                && (!strcmp(o->name, "bso-param") || !strcmp(o->name, "plo-param"))) {
                const char *eq = strchr(v, '=');
                if (!eq || eq == v)             /* "=3": a value of no parameter */
                    return api_usage(c, err, "parameter '%s' is not KEY=VALUE", v);
                char key[256];
                snprintf(key, sizeof key, "%s.params.%.*s", o->name[0] == 'b' ? "bso" : "plo",
                         (int)(eq - v), v);
                if (ws_config_set_kv(cfg, key, eq + 1, opt, err)) return -1;
            }
            if (pass == 1 && o->kind == K_WHATIF
                && ws_config_set_whatif(cfg, o->key, o->slot, opt, v, err))
                return -1;
        }
    if (ws_config_relabel_policy(&cfg->bso, "--bso", "--bso-param", err)
        || ws_config_relabel_policy(&cfg->plo, "--plo", "--plo-param", err))
        return -1;
    return 0;
}

int api_relabel_axes(ws_run_config *cfg, ws_error *err)
{
    return ws_config_relabel_axis(&cfg->where_gpus, "--gpu", err)
           || ws_config_relabel_axis(&cfg->where_workloads, "--workload", err) ? -1 : 0;
}

/* --job D/N/O --target X --max-epochs N --b0 B, as the CLI's: an inline
 * workload named after its dataset. */
int api_apply_job(const ws_api_call *c, ws_run_config *cfg, ws_error *err)
{
    int rc = ws_config_add_job(cfg, api_get(c, "job"), api_get(c, "target"),
                               api_get(c, "max-epochs"), api_get(c, "b0"), err);
    /* a usage error names the command, as api_usage's */
    if (rc == -1) ws_fail_prefix(err, "%s", c->cmd->name);
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------ data */

/* PATH_IN_DATA under the data folder beside the library (or the program
 * it is linked into), into buf; NULL when there is none. */
static const char *data_path(const char *path_in_data, char *buf, size_t len)
{
    Dl_info di;
    if (!dladdr((void *)api_traces, &di) || !di.dli_fname || !di.dli_fname[0]) return NULL;
    char *real = realpath(di.dli_fname, NULL);
    if (!real) return NULL;
    char *slash = strrchr(real, '/');
    if (slash) *slash = '\0';
    const char *rel[] = {WS_REL_LIB_DATA_DIR, "../share/wattsim"};
    const char *found = NULL;
    for (size_t i = 0; i < 2 && !found; i++) {
        struct stat st;
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", real, rel[i]);
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
            int w = snprintf(buf, len, "%s/%s", dir, path_in_data);
            if (w > 0 && (size_t)w < len) found = buf;
        }
    }
    free(real);
    return found;
}

const char *api_traces(ws_api_call *c, const ws_run_config *cfg)
{
    char *dflt = c->traces_default;
    const char *opt = api_get(c, "traces");
    if (opt) return opt;
    if (cfg && cfg->traces) return cfg->traces;
    const char *env = getenv("WATTSIM_TRACES");
    if (env && *env) return env;
    const char *p = data_path("traces/zeus-nsdi23", dflt, sizeof c->traces_default);
    return p ? p : "traces/fetched/zeus-nsdi23";
}

int api_catalogue(ws_api_call *c, ws_catalogue *cat, ws_error *err)
{
    char dflt[PATH_MAX + 32];
    const char *p = api_get(c, "catalogue");
    if (!p || !*p) p = getenv("WATTSIM_CATALOGUE");
    if (!p || !*p) p = data_path("workloads.yaml", dflt, sizeof dflt);
    if (!p) return ws_fail(err, "cannot find the workload catalogue (share/wattsim/"
                           "workloads.yaml beside libwattsim); give catalogue=FILE");
    free(c->catalogue_path);
    if (!(c->catalogue_path = strdup(p))) return ws_fail(err, "out of memory");
    return ws_catalogue_load_cached(p, cat, err);
}

int api_limits(const ws_api_call *c, ws_csv_limits *out, ws_error *err)
{
    return ws_csv_limits_parse(api_get(c, "max-trace-bytes"), out, err);
}

ws_registry *api_registry(ws_api_call *c, ws_error *err)
{
    if (c->reg) return c->reg;
    if (!(c->reg = ws_registry_new())) {
        ws_fail(err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < c->n_live; i++) {
        const api_live *l = &c->live[i];
        int bad = l->bso ? ws_registry_add_bso(c->reg, l->key, l->t, l->origin, l->sha256, err)
                         : ws_registry_add_plo(c->reg, l->key, l->t, l->origin, l->sha256, err);
        if (bad) return NULL;
    }
    return c->reg;
}

/* ------------------------------------------------------------ hooks */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int api_tick(ws_api_call *c, double done, double total, int force)
{
    const ws_api_hooks *h = c->hooks;
    if (c->cancelled) return 1;
    if (!h) return 0;
    if (h->size >= offsetof(ws_api_hooks, cancel) + sizeof h->cancel && h->cancel
        && *h->cancel)
        c->cancelled = 1;
    double t = now();
    if (!c->cancelled && h->progress && (force || t - c->last_tick >= 0.1)) {
        c->last_tick = t;
        if (h->progress(h->ctx, done, total)) c->cancelled = 1;
    }
    return c->cancelled;
}

/* ------------------------------------------------------------ provenance */

int api_note_traces(ws_api_call *c, const char *dir, const char *gpu)
{
    if (!c->traces_dir && !(c->traces_dir = strdup(dir))) return -1;
    c->read_train = 1;
    if (!gpu) return 0;
    for (size_t i = 0; i < c->n_gpus; i++)
        if (!strcmp(c->gpus[i], gpu)) return 0;
    char **g = realloc(c->gpus, (c->n_gpus + 1) * sizeof *g);
    if (!g) return -1;
    c->gpus = g;
    return (g[c->n_gpus] = strdup(gpu)) ? (c->n_gpus++, 0) : -1;
}

void api_note_whatif(ws_api_call *c, const ws_whatif *wi)
{
    c->whatif[0] = '\0';
    if (wi && ws_whatif_active(wi)) ws_whatif_describe(wi, c->whatif, sizeof c->whatif);
    /* the files the series came from, however named (option or config) */
    for (int k = 0; k < 2; k++) {
        free(c->series[k]);
        c->series[k] = NULL;
    }
    for (size_t i = 0; i < c->n_carbon_files; i++) free(c->carbon_files[i]);
    free(c->carbon_files);
    c->carbon_files = NULL;
    c->n_carbon_files = 0;
    if (wi && wi->n_carbon_files > 1
        && (c->carbon_files = calloc(wi->n_carbon_files, sizeof *c->carbon_files)))
        for (size_t i = 0; i < wi->n_carbon_files; i++)
            if ((c->carbon_files[i] = strdup(wi->carbon_files[i]))) c->n_carbon_files = i + 1;
    if (wi && wi->has_carbon) c->series[0] = strdup(wi->carbon.path);
    if (wi && wi->has_price && !ws_whatif_price_constant(wi))
        c->series[1] = strdup(wi->price.path);
}

int api_note_pair(ws_api_call *c, const char *label, const char *bso, const char *plo,
                  const char *bso_params, const char *plo_params, const char *bso_sha,
                  const char *plo_sha)
{
    api_pair_prov *p = realloc(c->pairs, (c->n_pairs + 1) * sizeof *p);
    if (!p) return -1;
    c->pairs = p;
    p = &p[c->n_pairs];
    memset(p, 0, sizeof *p);
    p->label = strdup(label);
    p->bso = strdup(bso);
    p->plo = strdup(plo);
    p->bso_params = strdup(bso_params ? bso_params : "");
    p->plo_params = strdup(plo_params ? plo_params : "");
    snprintf(p->bso_sha256, sizeof p->bso_sha256, "%s", bso_sha ? bso_sha : "");
    snprintf(p->plo_sha256, sizeof p->plo_sha256, "%s", plo_sha ? plo_sha : "");
    c->n_pairs++;
    if (!p->label || !p->bso || !p->plo || !p->bso_params || !p->plo_params) return -1;
    /* Where each policy comes from: its .so, or a Python module. */
    ws_error ignored;
    const ws_bso_type *bt = c->reg ? ws_registry_bso(c->reg, bso, &ignored) : NULL;
    const ws_plo_type *pt = c->reg ? ws_registry_plo(c->reg, plo, &ignored) : NULL;
    p->bso_origin = bt ? ws_registry_origin(c->reg, bt) : "";
    p->plo_origin = pt ? ws_registry_origin(c->reg, pt) : "";
    if (bt) ws_study_policy_file(c->reg, bt, p->bso_file, sizeof p->bso_file);
    if (pt) ws_study_policy_file(c->reg, pt, p->plo_file, sizeof p->plo_file);
    return 0;
}

int api_sim_status(const char *msg, const char *bso, const char *plo)
{
    char who[96];
    for (int k = 0; k < 2; k++) {
        snprintf(who, sizeof who, "%s %s: ", k ? "plo" : "bso", k ? plo : bso);
        if (strstr(msg, who)) return WS_API_POLICY;
    }
    return WS_API_FAILED;
}

/* ------------------------------------------------------------ JSON */

int api_json_text(ws_jw *w, const char *name, void (*write)(FILE *, const void *),
                  const void *arg, ws_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return ws_fail(err, "out of memory");
    write(m, arg);
    int bad = ferror(m);
    if (fclose(m) || bad || !buf) {
        free(buf);
        return ws_fail(err, "out of memory");
    }
    ws_jw_kstring(w, name, buf);
    free(buf);
    return 0;
}
