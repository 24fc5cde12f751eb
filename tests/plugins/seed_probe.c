/*
 * Test plugin, built against this (2.3) header: BSO "seed_probe" answers
 * the default batch size and, in register_job, logs (warning level, so the
 * CLI prints it) what the host's 2.3 members say: ws_host.seed and the
 * job's dataset, network, optimizer and target_metric. test_plugin runs it
 * through the CLI and compares them with the --seed and the catalogue.
 */
#include <stdio.h>

#include "wattsim/policy.h"

typedef struct probe {
    const ws_host *host;
} probe;

static int b_create(void *s, const ws_value *v, const ws_host *h)
{
    ((probe *)s)->host = h;
    return 0;
}
static void b_destroy(void *s) {}
static int b_register(void *s, const ws_job *job, const ws_ctx *ctx)
{
    const ws_host *h = ((probe *)s)->host;
    char msg[256];
    if (h->abi_version < WS_ABI_VERSION_OF(2, 3) || job->abi_version < WS_ABI_VERSION_OF(2, 3))
        snprintf(msg, sizeof msg, "probe: host before 2.3");
    else
        snprintf(msg, sizeof msg, "probe: seed %llu dataset %s network %s optimizer %s"
                 " target_metric %.17g", h->seed, job->dataset ? job->dataset : "(null)",
                 job->network ? job->network : "(null)",
                 job->optimizer ? job->optimizer : "(null)", job->target_metric);
    h->log(h->ctx, WS_LOG_WARN, msg);
    return 0;
}
static int b_predict(void *s, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = job->b0;
    return 0;
}
static int b_observe(void *s, const ws_job *job, const ws_ctx *ctx, int bs, double cost,
                     int reached)
{
    return 0;
}

static const ws_bso_type bso = {.abi_version = WS_ABI_VERSION, .name = "seed_probe",
                                .summary = "logs ws_host.seed and the job's workload",
                                .state_size = sizeof(probe), .create = b_create,
                                .destroy = b_destroy, .register_job = b_register,
                                .predict = b_predict, .observe = b_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {.abi_version = WS_ABI_VERSION, .name = "seed_probe",
                                 .bso = bsos, .requires_version = WS_ABI_VERSION_OF(2, 3)};

WS_PLUGIN_EXPORT const ws_plugin *ws_plugin_entry_v2(int host_version)
{
    return &plugin;
}
