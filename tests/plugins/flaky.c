/*
 * Test plugin: BSO "flaky", which plays b0 and fails (returns -1 in
 * predict) at recurrence `at` in a fraction `p` of the simulations: in
 * create it draws one uniform number from the host's stream, so whether a
 * simulation fails depends only on its seed (the same seeds fail whatever
 * the thread count). Sweeps with some seeds failing and others not.
 */
#include "stub.h"

static const ws_param_spec params[] = {
    {"p", WS_PARAM_DOUBLE, {.d = 0.5}, 0, 1, "fraction of simulations that fail"},
    {"at", WS_PARAM_INT, {.i = 3}, 1, 1000000, "the recurrence that fails"},
    {0},
};

typedef struct flaky {
    int doomed;
    long at;
} flaky;

static int f_create(void *state, const ws_value *v, const ws_host *host)
{
    flaky *f = state;
    f->doomed = host->uniform(host->ctx) < v[0].d;
    f->at = v[1].i;
    return 0;
}

static int f_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    const flaky *f = state;
    if (f->doomed && ctx->recurrence == f->at) return -1;
    *bs = job->b0;
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "flaky", .summary = "fails at recurrence `at` for a fraction `p` of seeds",
    .state_size = sizeof(flaky), .params = params, .create = f_create,
    .destroy = stub_destroy, .register_job = stub_register, .predict = f_predict,
    .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "flaky", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
