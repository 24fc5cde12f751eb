/*
 * Test plugin: BSO "carbon_shy", which plays b0 and returns an error from
 * predict whenever the context carries a carbon intensity (a policy
 * that was only ever run without a carbon series). `policy check` must
 * fail it in its carbon check and nowhere else.
 */
#include <math.h>

#include "stub.h"

static int c_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    if (!isnan(ctx->carbon_intensity)) return -1;
    *bs = job->b0;
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "carbon_shy", .summary = "test",
    .create = stub_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = c_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "carbon_shy", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
