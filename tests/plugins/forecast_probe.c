/*
 * Test plugin, built against this (2.3) header: PLO "forecast_probe"
 * answers the highest limit and, at every call, records what the context's
 * clock and the host's forecast say, so that test_forecast can check them
 * against the series it wrote. The records are read through the exported
 * forecast_probe_records() (the test dlopens this file once more: the same
 * handle), so one instance at a time.
 */
#include <math.h>
#include <stddef.h>

#include "wattsim/policy.h"

#include "forecast_probe.h"

static probe_rec recs[PROBE_MAX];
static int n_recs;

WS_PLUGIN_EXPORT const probe_rec *forecast_probe_records(int *n)
{
    *n = n_recs;
    return recs;
}

static const ws_host *host;

static void probe(char what, const ws_ctx *ctx)
{
    if (n_recs >= PROBE_MAX) return;
    probe_rec *r = &recs[n_recs++];
    const int has = ctx && WS_CTX_HAS(ctx, defer_s);
    const double now = has ? ctx->now_s : NAN;
    *r = (probe_rec){what, ctx ? ctx->recurrence : 0, ctx ? ctx->attempt : 0, now,
                     has ? ctx->due_s : NAN, has ? ctx->every_s : NAN,
                     has ? ctx->defer_s : NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    if (host->abi_version < WS_ABI_VERSION_OF(2, 3) || !host->forecast) return;
    const double t = isnan(now) ? 0.0 : now;
    r->carbon = host->forecast(host->ctx, WS_FORECAST_CARBON, t, 0);
    r->price = host->forecast(host->ctx, WS_FORECAST_PRICE, t, 0);
    r->carbon_mean = host->forecast(host->ctx, WS_FORECAST_CARBON, t, PROBE_WINDOW);
    r->carbon_next = host->forecast_next(host->ctx, WS_FORECAST_CARBON, t);
    r->price_next = host->forecast_next(host->ctx, WS_FORECAST_PRICE, t);
    /* What is refused: before the clock's 0, a negative or infinite
     * window, an unknown series. Any of them not NAN marks the record. */
    r->refused = isnan(host->forecast(host->ctx, WS_FORECAST_CARBON, -1, 0))
                 && isnan(host->forecast(host->ctx, WS_FORECAST_CARBON, t, -1))
                 && isnan(host->forecast(host->ctx, WS_FORECAST_CARBON, t, INFINITY))
                 && isnan(host->forecast(host->ctx, 3, t, 0))
                 && isnan(host->forecast_next(host->ctx, 0, t)) ? 1.0 : 0.0;
}

static int p_create(void *s, const ws_value *v, const ws_host *h)
{
    host = h;
    n_recs = 0;
    probe('c', NULL);
    return 0;
}
static void p_destroy(void *s) {}
static int p_register(void *s, const ws_job *job, const ws_ctx *ctx)
{
    probe('R', ctx);
    return 0;
}
static int p_predict(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    probe('p', ctx);
    *pl = ws_job_max_pl(job, ws_job_bs_index(job, bs));
    return 0;
}
static int p_profile(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                     double c)
{
    return 0;
}
static int p_observe_run(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                         double cost, int reached)
{
    probe('r', ctx);
    return 0;
}

static const ws_plo_type plo = {
    .abi_version = WS_ABI_VERSION, .name = "forecast_probe", .summary = "test",
    .create = p_create, .destroy = p_destroy, .predict = p_predict,
    .observe_profile = p_profile, .register_job = p_register, .observe_run = p_observe_run};
static const ws_plo_type *const plos[] = {&plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "forecast_probe", NULL, plos,
                                 WS_ABI_VERSION_OF(2, 3)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
