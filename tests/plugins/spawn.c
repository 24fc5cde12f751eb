/*
 * Test plugin: a BSO "spawn" whose predict forks a grandchild, writes
 * "CHILD GRANDCHILD\n" (the pids) to the file named by parameter `pidfile`,
 * and then both hang. With --isolate, neither may outlive its cell: not
 * the time-out (--cell-timeout) nor a SIGINT/SIGTERM to wattsim.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stub.h"

static const ws_param_spec params[] = {
    {"pidfile", WS_PARAM_STRING, {.s = "spawn.pids"}, 0, 0, "where to write the pids"},
    {0},
};

typedef struct spawn {
    char pidfile[512];
} spawn;

static int s_create(void *state, const ws_value *v, const ws_host *host)
{
    snprintf(((spawn *)state)->pidfile, sizeof ((spawn *)state)->pidfile, "%s", v[0].s);
    return 0;
}

static int s_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    pid_t g = fork();
    if (g == 0) for (;;) pause();
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", ((spawn *)state)->pidfile);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%ld %ld\n", (long)getpid(), (long)g);
        fclose(f);
        rename(tmp, ((spawn *)state)->pidfile);   /* complete when it appears */
    }
    for (;;) pause();
    *bs = job->b0;
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "spawn", .summary = "test",
    .state_size = sizeof(spawn), .params = params, .create = s_create,
    .destroy = stub_destroy, .register_job = stub_register, .predict = s_predict,
    .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "spawn", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
