/*
 * Test plugin: BSO "fail_observe", which predicts b0 and fails (returns -1)
 * in observe. The host must stop the run and name the policy and the call.
 */
#include <wattsim/policy.h>

static int f_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void f_destroy(void *state) {}
static int f_register(void *state, const ws_job *job) { return 0; }
static int f_predict(void *state, const ws_job *job, int *bs)
{
    *bs = job->b0;
    return 0;
}
static int f_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return -1;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "fail_observe",
    .summary = "observe always fails",
    .create = f_create,
    .destroy = f_destroy,
    .register_job = f_register,
    .predict = f_predict,
    .observe = f_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "fail_observe", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
