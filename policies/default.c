/*
 * default: what people run today. Always the default batch size b0 and the
 * highest power limit of the chosen batch size (the GPU's stock setting).
 */
#include <wattsim/policy.h>

static int d_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void d_destroy(void *state) {}
static int d_register(void *state, const ws_job *job, const ws_ctx *ctx) { return 0; }

static int d_predict_bs(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = job->b0;
    return 0;
}

static int d_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double cost, int reached)
{
    return 0;
}

/* The PLO remembers the index of the batch size it was last asked about
 * (nearly always b0): checked against the job's table before it is
 * trusted, so any job and any size still get the right limit, and the
 * search is skipped on most predicts (1 % of a paper-scale sweep). */
typedef struct default_plo_state {
    int i;
} default_plo_state;

static int d_predict_pl(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    default_plo_state *d = state;
    int i = d->i;
    if (i < 0 || i >= job->n_bs || job->bs[i] != bs) {
        if ((i = ws_job_bs_index(job, bs)) < 0) return -1;
        d->i = i;
    }
    *pl = ws_job_max_pl(job, i);
    return 0;
}

static int d_observe_profile(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int pl, double c)
{
    return 0;
}

static const ws_bso_type default_bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "default",
    .summary = "always the default batch size b0",
    .state_size = 0,
    .create = d_create,
    .destroy = d_destroy,
    .register_job = d_register,
    .predict = d_predict_bs,
    .observe = d_observe,
};

static const ws_plo_type default_plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "default",
    .summary = "always the highest power limit (the GPU's stock setting)",
    .state_size = sizeof(default_plo_state),
    .create = d_create,
    .destroy = d_destroy,
    .predict = d_predict_pl,
    .observe_profile = d_observe_profile,
};

static const ws_bso_type *const bsos[] = {&default_bso, NULL};
static const ws_plo_type *const plos[] = {&default_plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "default", bsos, plos, WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
