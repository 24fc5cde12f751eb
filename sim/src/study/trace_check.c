/*
 * `wattsim trace check`: see wattsim/trace_check.h. Per GPU: load the
 * traces (ws_traces_load validates everything), group the train rows by
 * (dataset, network, optimizer, target_metric) -- they come sorted so --
 * add every power-only (dataset, network, optimizer), then per group list
 * batch sizes, limits and runs, build the job and its frontier, and warn.
 */
#include "wattsim/trace_check.h"
#include "wattsim/pareto.h"
#include "wattsim/trace.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NO_CAP 1000000000      /* "no epoch cap" for the frontier */
#define FEW_RUNS 4

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static ws_check_bs *bs_get(ws_check_group *g, int bs)
{
    for (int i = 0; i < g->n_bs; i++)
        if (g->bs[i].bs == bs) return &g->bs[i];
    ws_check_bs *p = realloc(g->bs, (size_t)(g->n_bs + 1) * sizeof *p);
    if (!p) return NULL;
    g->bs = p;
    p = &g->bs[g->n_bs++];
    memset(p, 0, sizeof *p);
    p->bs = bs;
    return p;
}

static int cmp_bs(const void *a, const void *b)
{
    return cmp_int(&((const ws_check_bs *)a)->bs, &((const ws_check_bs *)b)->bs);
}

static ws_check_group *group_new(ws_trace_check *c, const ws_traces *t, const char *gpu,
                                 int ds, int net, int opt, double target)
{
    ws_check_group *g = realloc(c->g, (c->n + 1) * sizeof *g);
    if (!g) return NULL;
    c->g = g;
    g = &c->g[c->n++];
    memset(g, 0, sizeof *g);
    g->gpu = gpu;
    g->target = target;
    g->dataset = strdup(t->names.s[ds]);
    g->network = strdup(t->names.s[net]);
    g->optimizer = strdup(t->names.s[opt]);
    return g->dataset && g->network && g->optimizer ? g : NULL;
}

/* Batch sizes, limits and runs of group g (ids ds, net, opt). */
static int fill(ws_check_group *g, const ws_traces *t, int ds, int net, int opt)
{
    for (size_t i = 0; i < t->n_power; i++) {
        const ws_power_row *p = &t->power[i];
        if (p->dataset != ds || p->network != net || p->optimizer != opt) continue;
        ws_check_bs *b = bs_get(g, p->bs);
        int *q = b ? realloc(b->pl, (size_t)(b->n_pl + 1) * sizeof *q) : NULL;
        if (!q) return -1;
        b->pl = q;
        b->pl[b->n_pl++] = p->pl;
    }
    for (size_t i = 0; !isnan(g->target) && i < t->n_train; i++) {
        const ws_train_row *r = &t->train[i];
        if (r->dataset != ds || r->network != net || r->optimizer != opt
            || r->target_metric != g->target)
            continue;
        ws_check_bs *b = bs_get(g, r->bs);
        if (!b) return -1;
        b->runs++;
        b->reached += r->target_epoch <= (g->max_epochs ? g->max_epochs : NO_CAP);
    }
    qsort(g->bs, (size_t)g->n_bs, sizeof *g->bs, cmp_bs);
    for (int i = 0; i < g->n_bs; i++)
        if (g->bs[i].n_pl) qsort(g->bs[i].pl, (size_t)g->bs[i].n_pl, sizeof(int), cmp_int);
    return 0;
}

static void warn_group(ws_check_group *g)
{
    ws_warnings *w = &g->warn;
    if (isnan(g->target)) {
        ws_warn(w, "power rows but no train rows for %s/%s/%s: no job can use them",
                g->dataset, g->network, g->optimizer);
        return;
    }
    int all_pl = 0;
    for (int i = 0; i < g->n_bs; i++)
        if (g->bs[i].n_pl > all_pl) all_pl = g->bs[i].n_pl;
    const ws_check_bs *widest = NULL;
    for (int i = 0; i < g->n_bs; i++)
        if (g->bs[i].n_pl == all_pl) { widest = &g->bs[i]; break; }
    for (int i = 0; i < g->n_bs; i++) {
        const ws_check_bs *b = &g->bs[i];
        if (!b->runs)
            ws_warn(w, "batch size %d has power rows but no train rows (it drops out"
                    " of the job)", b->bs);
        else if (!b->n_pl)
            ws_warn(w, "batch size %d has train rows but no power rows on %s (it drops"
                    " out of the job)", b->bs, g->gpu);
        else if (b->runs < FEW_RUNS)
            ws_warn(w, "batch size %d has %d run%s (fewer than %d: its epochs to"
                    " target rest on little data)", b->bs, b->runs,
                    b->runs == 1 ? "" : "s", FEW_RUNS);
        if (b->runs && b->n_pl && !b->reached)
            ws_warn(w, "batch size %d: no run reaches the target%s", b->bs,
                    g->max_epochs ? " within max_epochs" : "");
        if (b->n_pl && b->n_pl < all_pl && widest) {
            char list[256] = "";
            for (int k = 0; k < widest->n_pl; k++) {
                int have = 0;
                for (int m = 0; m < b->n_pl; m++) have |= b->pl[m] == widest->pl[k];
                if (have) continue;
                char one[24];
                snprintf(one, sizeof one, list[0] ? ", %d" : "%d", widest->pl[k]);
                strncat(list, one, sizeof list - strlen(list) - 1);
            }
            ws_warn(w, "batch size %d lacks power limit%s %s W measured at batch size"
                    " %d", b->bs, strchr(list, ',') ? "s" : "", list, widest->bs);
        }
    }
}

static void frontier(ws_check_group *g, const ws_traces *t)
{
    if (isnan(g->target)) return;
    int bmax = 0;
    for (int i = 0; i < g->n_bs; i++)
        if (g->bs[i].runs && g->bs[i].n_pl && g->bs[i].bs > bmax) bmax = g->bs[i].bs;
    if (!bmax) return;
    ws_workload_spec spec = {
        (char *)"check", g->dataset, g->network, g->optimizer, g->target,
        g->max_epochs ? g->max_epochs : NO_CAP, g->b0 ? g->b0 : bmax, NULL, NULL,
    };
    ws_job_table jt;
    ws_pareto par = {0};
    ws_error err = {{0}};
    if (ws_job_build(&jt, t, &spec, 0.5, INFINITY, &err)
        || ws_pareto_compute(&jt.job, &par, &err)) {
        ws_warn(&g->warn, "no frontier: %s", err.msg);
    } else if (par.n_frontier == 0) {
        ws_warn(&g->warn, "no frontier: no knob is reached by every run");
    } else if ((g->frontier = calloc((size_t)par.n_frontier, sizeof *g->frontier))) {
        for (int i = 0; i < par.n_frontier; i++) {
            const ws_knob_stat *k = &par.knobs[par.frontier[i]];
            g->frontier[i] = (ws_check_knob){k->bs, k->pl, k->tta, k->eta};
        }
        g->n_frontier = par.n_frontier;
    }
    ws_pareto_free(&par);
    ws_job_free(&jt);
}

static void catalogue_match(ws_check_group *g, const ws_catalogue *cat)
{
    for (size_t i = 0; cat && i < cat->n && !isnan(g->target); i++) {
        const ws_workload_spec *w = &cat->items[i];
        if (!strcmp(w->dataset, g->dataset) && !strcmp(w->network, g->network)
            && !strcmp(w->optimizer, g->optimizer) && w->target_metric == g->target) {
            g->workload = w->name;
            g->max_epochs = w->max_epochs;
            g->b0 = w->b0;
            return;
        }
    }
}

static int check_gpu(ws_trace_check *c, const ws_traces *t, const char *gpu,
                     const ws_catalogue *cat)
{
    size_t first = c->n;
    for (size_t i = 0; i < t->n_train; i++) {        /* sorted: groups are runs */
        const ws_train_row *r = &t->train[i];
        if (i && r->dataset == t->train[i - 1].dataset && r->network == t->train[i - 1].network
            && r->optimizer == t->train[i - 1].optimizer
            && r->target_metric == t->train[i - 1].target_metric)
            continue;
        ws_check_group *g = group_new(c, t, gpu, r->dataset, r->network, r->optimizer,
                                      r->target_metric);
        if (!g) return -1;
        catalogue_match(g, cat);
        if (fill(g, t, r->dataset, r->network, r->optimizer)) return -1;
    }
    for (size_t i = 0; i < t->n_power; i++) {        /* power rows with no runs */
        const ws_power_row *p = &t->power[i];
        int seen = 0;         /* the groups so far cover every train triple */
        for (size_t k = first; k < c->n && !seen; k++)
            seen = !strcmp(c->g[k].dataset, t->names.s[p->dataset])
                && !strcmp(c->g[k].network, t->names.s[p->network])
                && !strcmp(c->g[k].optimizer, t->names.s[p->optimizer]);
        if (seen) continue;
        ws_check_group *g = group_new(c, t, gpu, p->dataset, p->network, p->optimizer, NAN);
        if (!g || fill(g, t, p->dataset, p->network, p->optimizer)) return -1;
    }
    for (size_t k = first; k < c->n; k++) {
        warn_group(&c->g[k]);
        frontier(&c->g[k], t);
        c->n_warnings += c->g[k].warn.n;
    }
    return 0;
}

int ws_trace_check_run(const char *dir, const ws_csv_limits *lim,
                       const ws_catalogue *cat, ws_trace_check *out, ws_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(out->dir = strdup(dir))) return ws_fail(err, "out of memory");
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return ws_fail(err, "%s: not a folder (give the --out DIR of 'wattsim trace import')",
                       dir);
    out->n_gpus = ws_trace_gpus(dir, &out->gpus, err);
    if (out->n_gpus < 0) { out->n_gpus = 0; return -1; }
    if (out->n_gpus == 0)
        return ws_fail(err, "%s: no summary_power_<gpu>.csv[.gz] files (write one with"
                       " 'wattsim trace import power')", dir);
    for (int i = 0; i < out->n_gpus; i++) {
        ws_traces t;
        if (ws_traces_load(&t, dir, out->gpus[i], lim, err)) {
            ws_traces_free(&t);
            return -1;
        }
        if (!out->train_path) {
            out->train_path = strdup(t.train_path);
            out->n_train = t.n_train;
        }
        int rc = check_gpu(out, &t, out->gpus[i], cat);
        ws_traces_free(&t);
        if (rc) return ws_fail(err, "out of memory");
    }
    return 0;
}

void ws_trace_check_free(ws_trace_check *c)
{
    if (!c) return;
    for (size_t k = 0; k < c->n; k++) {
        ws_check_group *g = &c->g[k];
        free(g->dataset);
        free(g->network);
        free(g->optimizer);
        for (int i = 0; i < g->n_bs; i++) free(g->bs[i].pl);
        free(g->bs);
        free(g->frontier);
        ws_warnings_free(&g->warn);
    }
    free(c->g);
    for (int i = 0; i < c->n_gpus; i++) free(c->gpus[i]);
    free(c->gpus);
    free(c->dir);
    free(c->train_path);
    memset(c, 0, sizeof *c);
}
