/*
 * Test plugin for --keep-history, two BSOs:
 *   fail_at  answers b0 until recurrence `at` (parameter, default 3), where
 *            its predict fails (returns an error), so a simulation stops
 *            after the runs of recurrences 1 .. at - 1;
 *   stuck    answers b0 in recurrence 1, then always the largest batch
 *            size, which in tests/fixture.h's job never reaches the target:
 *            recurrence 2 fails after its 20 tries.
 */
#include "stub.h"

typedef struct fail_at {
    long at;
} fail_at;

static const ws_param_spec params[] = {
    {"at", WS_PARAM_INT, {.i = 3}, 1, 1000000, "recurrence whose predict fails"},
    {0},
};

static int f_create(void *state, const ws_value *v, const ws_host *host)
{
    ((fail_at *)state)->at = v[0].i;
    return 0;
}

static int f_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    if (ctx->recurrence >= ((fail_at *)state)->at) return -1;
    *bs = job->b0;
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "fail_at", .summary = "test",
    .state_size = sizeof(fail_at), .params = params, .create = f_create,
    .destroy = stub_destroy, .register_job = stub_register, .predict = f_predict,
    .observe = stub_observe};
static int s_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = ctx->recurrence == 1 ? job->b0 : job->bs[job->n_bs - 1];
    return 0;
}

static const ws_bso_type stuck = {
    .abi_version = WS_ABI_VERSION, .name = "stuck", .summary = "test",
    .create = stub_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = s_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, &stuck, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "fail_at", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
