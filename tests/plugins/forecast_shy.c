/*
 * Test plugin: BSO "forecast_shy", which plays b0 and returns an error from
 * predict whenever the host forecasts a carbon intensity at the call's
 * time (ABI 2.3: a policy that was only ever run without a schedule and
 * series). `policy check` must fail it in its forecast check and nowhere
 * else (the carbon check's intensity comes without a forecast).
 */
#include <math.h>

#include "stub.h"

static const ws_host *host;

static int f_create(void *state, const ws_value *v, const ws_host *h)
{
    host = h;
    return 0;
}

static int f_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    if (WS_CTX_HAS(ctx, now_s) && !isnan(ctx->now_s)
        && !isnan(host->forecast(host->ctx, WS_FORECAST_CARBON, ctx->now_s, 0)))
        return -1;
    *bs = job->b0;
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "forecast_shy", .summary = "test",
    .create = f_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = f_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "forecast_shy", bsos, NULL,
                                 WS_ABI_VERSION_OF(2, 3)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
