/* Test plugin: built for ABI 2.7 and needing it (requires_version 2.7);
 * a 2.0 host refuses it, naming both versions. */
#include "stub.h"

STUB_BSO(bso, "needs_newer", NULL);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION_OF(2, 7), "needs_newer", bsos, NULL,
                                 WS_ABI_VERSION_OF(2, 7)};
const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
