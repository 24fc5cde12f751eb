/*
 * grid: exhaustive search. The BSO predicts every batch size as many times
 * as it has power limits, b0 first, then the others in ascending order;
 * the PLO hands out each batch size's limits from the highest down, one per
 * prediction. Once every knob was tried, both settle on the cheapest run
 * observed that reached the target (the BSO on its batch size, the PLO on
 * that size's cheapest limit).
 *
 * A batch size whose run fails to reach the target is not tried at its
 * remaining limits: the epochs a run needs do not depend on the power
 * limit, so they would fail too, and a job has only 20 tries per
 * recurrence to reach its target.
 *
 * The two halves keep separate state (the host may pair grid with another
 * policy): the BSO counts predictions per size, the PLO per-size cursors.
 */
#include <math.h>
#include <stdlib.h>
#include <wattsim/policy.h>

typedef struct grid_bso {
    int *order;              /* batch-size indices: b0, then the rest */
    int *tried;              /* predictions per batch-size index */
    int *failed;             /* a run at this size did not reach */
    double *best;            /* least cost that reached, per index */
    int n;
} grid_bso;

static int gb_create(void *state, const ws_value *v, const ws_host *host) { return 0; }

static void gb_destroy(void *state)
{
    grid_bso *g = state;
    free(g->order);
    free(g->tried);
    free(g->failed);
    free(g->best);
}

static int gb_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    grid_bso *g = state;
    if (g->order) return -1;
    g->n = job->n_bs;
    g->order = malloc((size_t)g->n * sizeof *g->order);
    g->tried = calloc((size_t)g->n, sizeof *g->tried);
    g->failed = calloc((size_t)g->n, sizeof *g->failed);
    g->best = malloc((size_t)g->n * sizeof *g->best);
    if (!g->order || !g->tried || !g->failed || !g->best) return -1;
    int b0 = ws_job_bs_index(job, job->b0), k = 0;
    if (b0 < 0) return -1;
    g->order[k++] = b0;
    for (int i = 0; i < g->n; i++) {
        if (i != b0) g->order[k++] = i;
        g->best[i] = INFINITY;
    }
    return 0;
}

static int gb_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    grid_bso *g = state;
    for (int k = 0; k < g->n; k++) {
        int i = g->order[k];
        if (!g->failed[i] && g->tried[i] < job->knob_start[i + 1] - job->knob_start[i]) {
            g->tried[i]++;
            *bs = job->bs[i];
            return 0;
        }
    }
    int best = g->order[0];
    for (int i = 0; i < g->n; i++)
        if (g->best[i] < g->best[best]) best = i;
    *bs = job->bs[best];
    return 0;
}

static int gb_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double cost, int reached)
{
    grid_bso *g = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    if (reached && cost < g->best[i]) g->best[i] = cost;
    if (!reached) g->failed[i] = 1;
    return 0;
}

typedef struct grid_plo {
    int *next;               /* per batch-size index: knobs handed out */
    int *best_pl;            /* cheapest limit that reached; 0 = none */
    double *best_cost;
} grid_plo;

static void gp_destroy(void *state)
{
    grid_plo *g = state;
    free(g->next);
    free(g->best_pl);
    free(g->best_cost);
}

static int gp_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    grid_plo *g = state;
    if (g->next) return -1;
    g->next = calloc((size_t)job->n_bs, sizeof *g->next);
    g->best_pl = calloc((size_t)job->n_bs, sizeof *g->best_pl);
    g->best_cost = calloc((size_t)job->n_bs, sizeof *g->best_cost);
    return g->next && g->best_pl && g->best_cost ? 0 : -1;
}

static int gp_predict(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    grid_plo *g = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    int k0 = job->knob_start[i], nk = job->knob_start[i + 1] - k0;
    if (g->next[i] < nk) {
        *pl = job->knob_pl[k0 + nk - 1 - g->next[i]++];   /* highest first */
        return 0;
    }
    *pl = g->best_pl[i] ? g->best_pl[i] : ws_job_max_pl(job, i);
    return 0;
}

static int gp_observe_profile(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int pl, double c)
{
    return 0;
}

static int gp_observe_run(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                          double cost, int reached)
{
    grid_plo *g = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    if (reached && (!g->best_pl[i] || cost < g->best_cost[i])) {
        g->best_pl[i] = pl;
        g->best_cost[i] = cost;
    }
    return 0;
}

static const ws_bso_type grid_bso_type = {
    .abi_version = WS_ABI_VERSION,
    .name = "grid",
    .summary = "every (batch size, power limit) once, then the cheapest observed",
    .state_size = sizeof(grid_bso),
    .create = gb_create,
    .destroy = gb_destroy,
    .register_job = gb_register,
    .predict = gb_predict,
    .observe = gb_observe,
};

static const ws_plo_type grid_plo_type = {
    .abi_version = WS_ABI_VERSION,
    .name = "grid",
    .summary = "each batch size's power limits in turn, then its cheapest observed",
    .state_size = sizeof(grid_plo),
    .create = gb_create,
    .destroy = gp_destroy,
    .predict = gp_predict,
    .observe_profile = gp_observe_profile,
    .register_job = gp_register,
    .observe_run = gp_observe_run,
};

static const ws_bso_type *const bsos[] = {&grid_bso_type, NULL};
static const ws_plo_type *const plos[] = {&grid_plo_type, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "grid", bsos, plos, WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
