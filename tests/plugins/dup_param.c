/* Test plugin: a parameter declared twice; refused at load. */
#include "stub.h"

static const ws_param_spec params[] = {
    {"window", WS_PARAM_INT, {.i = 1}, 0, 10, "first"},
    {"window", WS_PARAM_INT, {.i = 2}, 0, 10, "second"},
    {0},
};
STUB_BSO(bso, "dup_param", params);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "dup_param", bsos, NULL, 0};
const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
