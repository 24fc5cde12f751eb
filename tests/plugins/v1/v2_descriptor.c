/*
 * Test plugin: a version-1 plugin (version 1's entry point, plugin version
 * 1) whose one descriptor declares ABI 2.0. Its callbacks have version
 * 1's signatures; the host must refuse the descriptor, by name, rather
 * than call them through version 2's.
 */
#include <wattsim/policy.h>

static int v_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void v_destroy(void *state) {}
static int v_register(void *state, const ws_job *job) { return 0; }
static int v_predict(void *state, const ws_job *job, int *bs)
{
    *bs = job->b0;
    return 0;
}
static int v_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = 200,
    .name = "v2_descriptor",
    .summary = "a version-1 plugin with a descriptor declaring 2.0",
    .create = v_create,
    .destroy = v_destroy,
    .register_job = v_register,
    .predict = v_predict,
    .observe = v_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "v2_descriptor", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
