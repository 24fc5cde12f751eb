/*
 * Test plugin: BSO "crash_bs", which dies in predict the way its parameter
 * `how` says: "segv" (a null write), "abort", or "hang" (loops forever).
 * In-process it takes the host down; with --isolate only its cell fails.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wattsim/policy.h>

typedef struct crash { char how[16]; } crash;

static const ws_param_spec params[] = {
    {"how", WS_PARAM_STRING, {.s = "segv"}, 0, 0, "segv, abort or hang"},
    {0},
};

static int c_create(void *state, const ws_value *v, const ws_host *host)
{
    strncpy(((crash *)state)->how, v[0].s, sizeof ((crash *)state)->how - 1);
    return 0;
}
static void c_destroy(void *state) {}
static int c_register(void *state, const ws_job *job) { return 0; }
static int c_predict(void *state, const ws_job *job, int *bs)
{
    const char *how = ((crash *)state)->how;
    if (!strcmp(how, "abort")) abort();
    if (!strcmp(how, "hang")) for (;;) pause();
    raise(SIGSEGV);
    *bs = job->b0;
    return 0;
}
static int c_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "crash_bs",
    .summary = "crashes, aborts or hangs in predict",
    .state_size = sizeof(crash),
    .params = params,
    .create = c_create,
    .destroy = c_destroy,
    .register_job = c_register,
    .predict = c_predict,
    .observe = c_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "crash_bs", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
