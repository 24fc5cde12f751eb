/*
 * `wattsim trace check`: see wattsim/trace_check.h. Per GPU: load the
 * traces (ws_traces_load validates everything), group the train rows by
 * (dataset, network, optimizer, target_metric) -- they come sorted so --
 * add every power-only (dataset, network, optimizer), then per group list
 * batch sizes, limits and runs, build the job and its frontier, and warn.
 * Every step reads the group's own rows (ranges of the sorted tables,
 * found by binary search; the catalogue through a hash index), so a folder
 * costs n log n in its rows, however many workloads or batch sizes.
 */
#include "wattsim/trace_check.h"
#include "wattsim/hash.h"
#include "wattsim/import.h"
#include "wattsim/pareto.h"
#include "wattsim/trace.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NO_CAP 1000000000      /* "no epoch cap" for the frontier */
#define FEW_RUNS 4

static ws_check_group *group_new(ws_trace_check *c, const ws_traces *t, const char *gpu,
                                 int ds, int net, int opt, double target)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        ws_check_group *g = realloc(c->g, cap * sizeof *g);
        if (!g) return NULL;
        c->g = g;
        c->cap = cap;
    }
    ws_check_group *g = &c->g[c->n++];
    memset(g, 0, sizeof *g);
    g->gpu = gpu;
    g->target = target;
    g->dataset = strdup(t->names.s[ds]);
    g->network = strdup(t->names.s[net]);
    g->optimizer = strdup(t->names.s[opt]);
    return g->dataset && g->network && g->optimizer ? g : NULL;
}

/* Batch sizes, limits and runs of group g (ids ds, net, opt), from the
 * sorted tables: the triple's power rows come by batch size, then limit,
 * and the group's train rows (rows [r0, r1)) by batch size, then run; the
 * two sorted lists of batch sizes are merged. Linear in the rows read. */
static int fill(ws_check_group *g, const ws_traces *t, int ds, int net, int opt,
                size_t r0, size_t r1)
{
    size_t p0, p1;
    ws_traces_power_range(t, ds, net, opt, &p0, &p1);
    size_t room = (p1 - p0) + (r1 - r0) + 1;
    if (!(g->bs = calloc(room, sizeof *g->bs))) return -1;
    size_t p = p0, r = r0;
    const int cap = g->max_epochs ? g->max_epochs : NO_CAP;
    ws_join_work_add((p1 - p0) + (r1 - r0));           /* the rows walked below */
    while (p < p1 || r < r1) {
        int bp = p < p1 ? t->power[p].bs : INT_MAX, br = r < r1 ? t->train[r].bs : INT_MAX;
        ws_check_bs *b = &g->bs[g->n_bs++];
        b->bs = bp < br ? bp : br;
        size_t q = p;
        while (q < p1 && t->power[q].bs == b->bs) q++;
        b->max_err = NAN;
        if (q > p) {
            if (!(b->pl = malloc((q - p) * sizeof *b->pl))
                || !(b->err = malloc((q - p) * sizeof *b->err)))
                return -1;
            for (; p < q; p++) {                                     /* ascending */
                b->err[b->n_pl] = t->power[p].energy_error;
                b->pl[b->n_pl++] = t->power[p].pl;
                if (!isnan(t->power[p].energy_error)
                    && !(t->power[p].energy_error <= b->max_err))
                    b->max_err = t->power[p].energy_error;
            }
        }
        for (; r < r1 && t->train[r].bs == b->bs; r++) {
            b->runs++;
            b->reached += t->train[r].target_epoch <= cap;
        }
    }
    return 0;
}

/* Knobs whose recorded energy_error passes WS_ENERGY_ERROR_WARN: one
 * warning with their count and the worst. */
static void warn_error(ws_check_group *g)
{
    int over = 0, worst_bs = 0, worst_pl = 0;
    double worst = 0;
    for (int i = 0; i < g->n_bs; i++)
        for (int k = 0; k < g->bs[i].n_pl; k++) {
            const double e = g->bs[i].err[k];
            if (!(e > WS_ENERGY_ERROR_WARN)) continue;
            over++;
            if (e > worst) { worst = e; worst_bs = g->bs[i].bs; worst_pl = g->bs[i].pl[k]; }
        }
    if (over)
        ws_warn(&g->warn, "the energy of %d knob%s on %s may be off by more than %g %%"
                " (energy_error: telemetry sampled coarsely for its epochs), worst batch"
                " size %d at %d W: up to %.3g %%; treat costs closer than that as ties",
                over, over == 1 ? "" : "s", g->gpu, 100 * WS_ENERGY_ERROR_WARN, worst_bs,
                worst_pl, 100 * worst);
}

static void warn_group(ws_check_group *g)
{
    ws_warnings *w = &g->warn;
    warn_error(g);
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
        else if (b->runs && b->n_pl && 2 * b->reached < b->runs)
            ws_warn(w, "batch size %d: %d of %d runs reach the target%s (under half):"
                    " its epochs to target rest on the runs that happen to converge", b->bs, b->reached, b->runs,
                    g->max_epochs ? " within max_epochs" : "");
        if (b->n_pl && b->n_pl < all_pl && widest) {
            char list[256] = "";
            for (int k = 0, m = 0; k < widest->n_pl && strlen(list) < 200; k++) {
                while (m < b->n_pl && b->pl[m] < widest->pl[k]) m++;     /* both ascending */
                if (m < b->n_pl && b->pl[m] == widest->pl[k]) continue;
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
        .name = (char *)"check", .dataset = g->dataset, .network = g->network,
        .optimizer = g->optimizer, .target_metric = g->target,
        .max_epochs = g->max_epochs ? g->max_epochs : NO_CAP, .b0 = g->b0 ? g->b0 : bmax,
        .gpus_per_job = g->gpus_per_job,
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

/* The catalogue by (dataset, network, optimizer, target metric), first
 * entry first: a hash index, so matching costs O(1) per group. */
typedef struct cat_index {
    const ws_catalogue *cat;
    ws_hindex h;
    const ws_check_group *probe;
} cat_index;

static uint64_t workload_hash(const char *ds, const char *net, const char *opt,
                              double target)
{
    const double m = target == 0 ? 0.0 : target;
    return ws_hash(&m, sizeof m, ws_hash_str(opt, ws_hash_str(net, ws_hash_str(ds, 1))));
}

static int same_workload(const void *ctx, size_t stored, size_t probe)
{
    const cat_index *x = ctx;
    const ws_workload_spec *a = &x->cat->items[stored];
    if (probe != WS_HNONE) {
        const ws_workload_spec *b = &x->cat->items[probe];
        return !strcmp(a->dataset, b->dataset) && !strcmp(a->network, b->network)
            && !strcmp(a->optimizer, b->optimizer) && a->target_metric == b->target_metric;
    }
    const ws_check_group *g = x->probe;
    return !strcmp(a->dataset, g->dataset) && !strcmp(a->network, g->network)
        && !strcmp(a->optimizer, g->optimizer) && a->target_metric == g->target;
}

static int cat_index_build(cat_index *x, const ws_catalogue *cat)
{
    memset(x, 0, sizeof *x);
    x->cat = cat;
    for (size_t i = 0; cat && i < cat->n; i++) {
        const ws_workload_spec *w = &cat->items[i];
        if (ws_hindex_add(&x->h, workload_hash(w->dataset, w->network, w->optimizer,
                                               w->target_metric),
                          same_workload, x, i) == WS_HNOMEM)
            return -1;
    }
    return 0;
}

static void catalogue_match(ws_check_group *g, cat_index *x)
{
    if (!x->cat || isnan(g->target)) return;
    x->probe = g;
    size_t i = ws_hindex_find(&x->h, workload_hash(g->dataset, g->network, g->optimizer,
                                                   g->target),
                              same_workload, x, WS_HNONE);
    if (i == WS_HNONE) return;
    const ws_workload_spec *w = &x->cat->items[i];
    g->workload = w->name;
    g->max_epochs = w->max_epochs;
    g->b0 = w->b0;
    g->gpus_per_job = w->gpus_per_job;     /* the frontier's MaxPower */
}

static int check_gpu(ws_trace_check *c, const ws_traces *t, const char *gpu,
                     cat_index *cat)
{
    size_t first = c->n;
    for (size_t i = 0, j; i < t->n_train; i = j) {   /* sorted: groups are runs */
        const ws_train_row *r = &t->train[i];
        for (j = i + 1; j < t->n_train && r->dataset == t->train[j].dataset
             && r->network == t->train[j].network && r->optimizer == t->train[j].optimizer
             && r->target_metric == t->train[j].target_metric; j++) {}
        ws_check_group *g = group_new(c, t, gpu, r->dataset, r->network, r->optimizer,
                                      r->target_metric);
        if (!g) return -1;
        catalogue_match(g, cat);
        if (fill(g, t, r->dataset, r->network, r->optimizer, i, j)) return -1;
    }
    for (size_t i = 0, j; i < t->n_power; i = j) {   /* power rows with no runs */
        const ws_power_row *p = &t->power[i];
        for (j = i + 1; j < t->n_power && p->dataset == t->power[j].dataset
             && p->network == t->power[j].network && p->optimizer == t->power[j].optimizer;
             j++) {}
        size_t lo, hi;
        ws_traces_train_range(t, p->dataset, p->network, p->optimizer, &lo, &hi);
        if (hi > lo) continue;
        ws_check_group *g = group_new(c, t, gpu, p->dataset, p->network, p->optimizer, NAN);
        if (!g || fill(g, t, p->dataset, p->network, p->optimizer, 0, 0)) return -1;
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
    cat_index ci;
    if (cat_index_build(&ci, cat)) {
        ws_hindex_free(&ci.h);
        return ws_fail(err, "out of memory");
    }
    for (int i = 0; i < out->n_gpus; i++) {
        ws_traces t;
        if (ws_traces_load(&t, dir, out->gpus[i], lim, err)) {
            ws_traces_free(&t);
            ws_hindex_free(&ci.h);
            return -1;
        }
        if (!out->train_path) {
            out->train_path = strdup(t.train_path);
            out->n_train = t.n_train;
        }
        int rc = check_gpu(out, &t, out->gpus[i], &ci);
        ws_traces_free(&t);
        if (rc) {
            ws_hindex_free(&ci.h);
            return ws_fail(err, "out of memory");
        }
    }
    ws_hindex_free(&ci.h);
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
        for (int i = 0; i < g->n_bs; i++) {
            free(g->bs[i].pl);
            free(g->bs[i].err);
        }
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
