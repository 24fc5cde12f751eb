/*
 * Test plugin for `policy check`: BSO "shared_state" keeps its position in
 * a static variable, shared by every instance in the process, so two runs
 * with one seed differ and instances disturb each other. `policy check`
 * must fail determinism and independence (and nothing else).
 */
#include "stub.h"

static int next;               /* the bug: one for the whole process */

static int s_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    int b0 = ws_job_bs_index(job, job->b0);
    /* b0 first in every recurrence, then the sizes in turn. */
    *bs = ctx->attempt == 1 && ctx->recurrence == 1 ? job->b0
                                                    : job->bs[(b0 + next++) % job->n_bs];
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "shared_state", .summary = "test",
    .create = stub_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = s_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "shared_state", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
