/*
 * Test plugin: version 2's entry point and callbacks (built against the
 * version-2 header) but a plugin declaring ABI version 1. The host would
 * call its callbacks through version 1's signatures, without the
 * context: it must refuse it, naming the entry point and the version.
 */
#include "stub.h"

STUB_BSO(bso, "v1_version", NULL);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {1, "v1_version", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
