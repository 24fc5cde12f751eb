/*
 * Test plugin: a BSO without its required predict function.
 */
#include <wattsim/policy.h>

static int n_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void n_destroy(void *state) {}
static int n_register(void *state, const ws_job *job) { return 0; }
static int n_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "no_predict",
    .summary = "a BSO without predict",
    .create = n_create,
    .destroy = n_destroy,
    .register_job = n_register,
    .predict = NULL,
    .observe = n_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "no_predict", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
