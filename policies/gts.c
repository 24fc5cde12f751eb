/*
 * gts: Gaussian Thompson sampling over every batch size of the job, each
 * explored `explore` times first (zeus._legacy.policy.optimizer.
 * GTSBatchSizeOptimizer with the reward precision learned; its bandit,
 * created at register_job with np.random.default_rng(seed), draws from
 * the BSO's stream, the same generator). No pruning. Zeus' GTS fits every
 * observation; `window` > 0 (a wattsim extension) fits the last ones.
 */
#include <wattsim/policy.h>

#include "bandit.h"

static const ws_param_spec params[] = {
    {"explore", WS_PARAM_INT, {.i = 1}, 1, 1000,
     "observations per batch size before sampling"},
    {"window", WS_PARAM_INT, {.i = 0}, 0, 1e9,
     "observations per arm the bandit fits on (0 = all)"},
    {0},
};

typedef struct gts {
    const ws_host *host;
    long explore, window;
    ws_bandit bandit;
    int registered;
} gts;

static int g_create(void *state, const ws_value *v, const ws_host *host)
{
    gts *g = state;
    g->host = host;
    g->explore = v[0].i;
    g->window = v[1].i;
    return 0;
}

static void g_destroy(void *state) { ws_bandit_free(&((gts *)state)->bandit); }

static int g_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    gts *g = state;
    if (g->registered) return -1;
    g->registered = 1;
    if (ws_bandit_init(&g->bandit, job, g->window, g->explore)) return -1;
    for (int i = 0; i < job->n_bs; i++) g->bandit.arms[i] = i;
    g->bandit.n_arms = job->n_bs;
    return 0;
}

static int g_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    gts *g = state;
    const int i = ws_bandit_predict(&g->bandit, g->host);
    if (i < 0) {
        g->host->log(g->host->ctx, WS_LOG_ERROR, "out of memory");
        return -1;
    }
    *bs = job->bs[i];
    return 0;
}

static int g_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double cost, int reached)
{
    gts *g = state;
    int i = ws_job_bs_index(job, bs);
    return i < 0 ? -1 : ws_bandit_observe(&g->bandit, i, -cost);
}

static const ws_bso_type gts_bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "gts",
    .summary = "Gaussian Thompson sampling over all batch sizes (no pruning)",
    .state_size = sizeof(gts),
    .params = params,
    .create = g_create,
    .destroy = g_destroy,
    .register_job = g_register,
    .predict = g_predict,
    .observe = g_observe,
};

static const ws_bso_type *const bsos[] = {&gts_bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "gts", bsos, NULL, WS_ABI_VERSION_OF(2, 1)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
