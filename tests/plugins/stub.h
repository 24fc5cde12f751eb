/*
 * Trivial version-2 callbacks for the loader-check test plugins: each
 * plugin defines one deliberately wrong descriptor and nothing else.
 */
#ifndef WS_TEST_PLUGIN_STUB_H
#define WS_TEST_PLUGIN_STUB_H

#include <wattsim/policy.h>

static inline int stub_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static inline void stub_destroy(void *state) {}
static inline int stub_register(void *state, const ws_job *job, const ws_ctx *ctx) { return 0; }
static inline int stub_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = job->b0;
    return 0;
}
static inline int stub_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs,
                        double cost, int reached)
{
    return 0;
}

/* A BSO named NAME with parameter list PARAMS (may be NULL). */
#define STUB_BSO(var, NAME, PARAMS)                                            \
    static const ws_bso_type var = {                                           \
        .abi_version = WS_ABI_VERSION, .name = NAME, .summary = "test",        \
        .params = PARAMS, .create = stub_create, .destroy = stub_destroy,      \
        .register_job = stub_register, .predict = stub_predict,                \
        .observe = stub_observe}

#endif
