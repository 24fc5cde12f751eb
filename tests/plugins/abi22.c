/*
 * Test plugin of ABI 2.2: PLO "abi22" declares version 2.2 and uses only
 * what 2.2 has. Its rule: the lowest limit of the batch size when the
 * recurrence's carbon intensity (ws_ctx, 2.0) is above 250 gCO2eq/kWh,
 * else the highest. Built here with the 2.3 header, its binary is what the
 * 2.2 header gives: 2.3 appended only to ws_ctx and ws_host, which the
 * host allocates, and the plugin reads neither new member. A 2.3 host
 * must load it and call it as before (test_forecast).
 */
#include <math.h>

#include "wattsim/policy.h"

static int a_create(void *s, const ws_value *v, const ws_host *h) { return 0; }
static void a_destroy(void *s) {}
static int a_predict(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    const int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    *pl = ctx->carbon_intensity > 250 ? job->knob_pl[job->knob_start[i]]
                                      : ws_job_max_pl(job, i);
    return 0;
}
static int a_profile(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                     double c)
{
    return 0;
}

static const ws_plo_type plo = {
    .abi_version = WS_ABI_VERSION_OF(2, 2), .name = "abi22", .summary = "test",
    .create = a_create, .destroy = a_destroy, .predict = a_predict,
    .observe_profile = a_profile};
static const ws_plo_type *const plos[] = {&plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION_OF(2, 2), "abi22", NULL, plos,
                                 WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
