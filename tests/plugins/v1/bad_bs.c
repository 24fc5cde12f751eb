/*
 * Test plugin: BSO "bad_bs", whose predict answers batch size 7, which no
 * job in the tests has. The host must stop the run and name the policy.
 */
#include <wattsim/policy.h>

static int b_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void b_destroy(void *state) {}
static int b_register(void *state, const ws_job *job) { return 0; }
static int b_predict(void *state, const ws_job *job, int *bs)
{
    *bs = 7;
    return 0;
}
static int b_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "bad_bs",
    .summary = "predicts batch size 7, which is not one of the job's",
    .create = b_create,
    .destroy = b_destroy,
    .register_job = b_register,
    .predict = b_predict,
    .observe = b_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "bad_bs", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
