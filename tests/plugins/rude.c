/*
 * Test plugin: a BSO that misbehaves towards the host process rather than
 * in its answers. Parameter `mode`:
 *   0  writes to stdout in every call (stdio and fd 1 directly), then plays b0;
 *      logs a warning in observe (the log line names cell, seed, recurrence, try)
 *   1  calls exit(0) in observe (the first run's outcome)
 *   2  calls exit(0) in create
 * wattsim must keep its stdout clean (0) and turn an exit into status 1 with
 * one line naming the policy and the call (1, 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "stub.h"

static const ws_param_spec params[] = {
    {"mode", WS_PARAM_INT, {.i = 0}, 0, 2, "0 print, 1 exit in observe, 2 exit in create"},
    {0},
};

typedef struct rude {
    long mode;
    const ws_host *host;
} rude;

static int r_create(void *state, const ws_value *v, const ws_host *host)
{
    ((rude *)state)->mode = v[0].i;
    ((rude *)state)->host = host;
    if (v[0].i == 2) exit(0);
    printf("rude: create\n");
    return 0;
}

static int r_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    printf("rude: predict");          /* no newline: stays in stdio's buffer */
    if (write(1, "rude: raw\n", 10) != 10) return -1;
    *bs = job->b0;
    return 0;
}

static int r_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs,
                     double cost, int reached)
{
    if (((rude *)state)->mode == 1) exit(0);
    puts("rude: observe");
    const ws_host *h = ((rude *)state)->host;
    h->log(h->ctx, WS_LOG_WARN, "observed");
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "rude", .summary = "test",
    .state_size = sizeof(rude), .params = params, .create = r_create,
    .destroy = stub_destroy, .register_job = stub_register, .predict = r_predict,
    .observe = r_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "rude", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
