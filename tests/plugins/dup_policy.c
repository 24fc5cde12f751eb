/* Test plugin: two BSOs with the same name in one plugin; refused at load. */
#include "stub.h"

STUB_BSO(first, "twin", NULL);
STUB_BSO(second, "twin", NULL);
static const ws_bso_type *const bsos[] = {&first, &second, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "dup_policy", bsos, NULL, 0};
const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
