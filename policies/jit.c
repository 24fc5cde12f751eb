/*
 * jit: Zeus's just-in-time power-limit optimizer (JITPowerLimitOptimizer).
 * A batch size's power limit is unknown until the host profiles it; then it
 * is the profiled limit of least epoch cost. Ties keep the first reported,
 * which is the higher limit since the host profiles from the top.
 * Successive calls are mostly about the same batch size (the BSO settles;
 * profiling reports one size's limits in a row), so the last index found
 * is checked before searching job->bs.
 */
#include <stdlib.h>
#include <wattsim/policy.h>

typedef struct jit {
    int *best_pl;            /* per batch-size index; 0 = not profiled */
    double *best_cost;
    int last;                /* batch-size index of the last call */
} jit;

static int j_create(void *state, const ws_value *v, const ws_host *host) { return 0; }

static void j_destroy(void *state)
{
    jit *j = state;
    free(j->best_pl);
    free(j->best_cost);
}

static int j_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    jit *j = state;
    if (j->best_pl) return -1;
    j->best_pl = calloc((size_t)job->n_bs, sizeof *j->best_pl);
    j->best_cost = calloc((size_t)job->n_bs, sizeof *j->best_cost);
    j->last = -1;
    return j->best_pl && j->best_cost ? 0 : -1;
}

/* Index of bs in job->bs, or -1. */
static inline int index_of(jit *j, const ws_job *job, int bs)
{
    if (j->last >= 0 && job->bs[j->last] == bs) return j->last;
    const int i = ws_job_bs_index(job, bs);
    if (i >= 0) j->last = i;
    return i;
}

static int j_predict(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    jit *j = state;
    const int i = index_of(j, job, bs);
    if (i < 0) return -1;
    *pl = j->best_pl[i] ? j->best_pl[i] : WS_PL_UNKNOWN;
    return 0;
}

static int j_observe_profile(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                             double cost)
{
    jit *j = state;
    const int i = index_of(j, job, bs);
    if (i < 0) return -1;
    if (!j->best_pl[i] || j->best_cost[i] > cost) {
        j->best_pl[i] = pl;
        j->best_cost[i] = cost;
    }
    return 0;
}

static const ws_plo_type jit_plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "jit",
    .summary = "Zeus JIT profiling: per batch size, the profiled limit of least epoch cost",
    .state_size = sizeof(jit),
    .params = NULL,
    .create = j_create,
    .destroy = j_destroy,
    .predict = j_predict,
    .observe_profile = j_observe_profile,
    .register_job = j_register,
    .observe_run = NULL,
};

static const ws_plo_type *const plos[] = {&jit_plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "jit", NULL, plos, WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
