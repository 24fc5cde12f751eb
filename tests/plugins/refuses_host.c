/* Test plugin: its entry point returns NULL for any host older than 9.0
 * (version negotiation: the plugin decides it cannot run there). */
#include "stub.h"

STUB_BSO(bso, "refuses_host", NULL);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "refuses_host", bsos, NULL, 0};
const ws_plugin *ws_plugin_entry_v2(int host_version)
{
    return host_version >= WS_ABI_VERSION_OF(9, 0) ? &plugin : NULL;
}
