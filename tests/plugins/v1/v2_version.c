/*
 * Test plugin: what an ABI-1 source built against the version-2.1 header
 * by GCC 12 became (only -Wincompatible-pointer-types warnings): version
 * 1's entry point and callbacks, but WS_ABI_VERSION 2.1 (201) in the
 * plugin and its descriptor. Called through version 2's signatures, its
 * predict wrote its answer into the host's context. The host must refuse
 * it, naming the entry point and the version it declares.
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
    .abi_version = 201,
    .name = "v2_version",
    .summary = "ABI-1 callbacks declaring ABI 2.1",
    .create = v_create,
    .destroy = v_destroy,
    .register_job = v_register,
    .predict = v_predict,
    .observe = v_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {201, "v2_version", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
