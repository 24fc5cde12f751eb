/*
 * Test plugin: built against a hypothetical ABI 2.4 that appended a member
 * to ws_param_spec, to ws_value and to the descriptor, but needing nothing
 * of 2.4 (requires_version 2.0). A 2.0 host loads it, reads the specs and
 * fills create()'s values at the plugin's strides, and ignores the rest.
 *
 * BSO "newer_minor": parameters a (int, default 3) and b (double, default
 * 0.25); create() fails unless it was given a = 2 and b = 0.75, so a test
 * can tell that the values arrived at the right stride.
 */
#include <stddef.h>

#include "stub.h"

typedef struct spec_v24 {      /* ws_param_spec of "2.4" */
    ws_param_spec base;
    const char *unit;
} spec_v24;

typedef union value_v24 {      /* ws_value of "2.4" */
    ws_value base;
    char wide[24];
} value_v24;

static const spec_v24 params[] = {
    {{"a", WS_PARAM_INT, {.i = 3}, 0, 10, "an integer"}, "items"},
    {{"b", WS_PARAM_DOUBLE, {.d = 0.25}, 0, 1, "a fraction"}, "1"},
    {{0}, 0},
};

static int n_create(void *state, const ws_value *v, const ws_host *host)
{
    const value_v24 *w = (const value_v24 *)(const void *)v;
    return w[0].base.i == 2 && w[1].base.d == 0.75 ? 0 : -1;
}

typedef struct bso_v24 {       /* ws_bso_type of "2.4" */
    ws_bso_type base;
    int (*future_call)(void *state);
} bso_v24;

static const bso_v24 bso = {
    {.abi_version = WS_ABI_VERSION_OF(2, 4), .name = "newer_minor", .summary = "test",
     .params = &params[0].base, .create = n_create, .destroy = stub_destroy,
     .register_job = stub_register, .predict = stub_predict, .observe = stub_observe,
     .param_spec_size = sizeof(spec_v24), .value_size = sizeof(value_v24)},
    NULL,
};
static const ws_bso_type *const bsos[] = {&bso.base, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION_OF(2, 4), "newer_minor", bsos, NULL,
                                 WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version)
{
    return host_version >= WS_ABI_VERSION_OF(2, 0) ? &plugin : NULL;
}
