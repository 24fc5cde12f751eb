/* Test plugin: a default outside its parameter's bounds; refused at load. */
#include "stub.h"

static const ws_param_spec params[] = {
    {"epsilon", WS_PARAM_DOUBLE, {.d = 1.5}, 0, 1, "exploration rate"},
    {0},
};
STUB_BSO(bso, "bad_default", params);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "bad_default", bsos, NULL, 0};
const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
