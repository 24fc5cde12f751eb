/*
 * Test plugin: code that runs as soon as the .so is loaded. Its
 * constructor writes the file $WS_MARKER (when set), so a test can tell
 * whether the plugin was ever dlopen()ed; it also defines a well-behaved
 * BSO "marker" (plays b0) so that an allowed load runs to the end.
 */
#include <stdio.h>
#include <stdlib.h>

#include "stub.h"

__attribute__((constructor)) static void marker_loaded(void)
{
    const char *path = getenv("WS_MARKER");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (f) {
        fputs("loaded\n", f);
        fclose(f);
    }
}

STUB_BSO(bso, "marker", NULL);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "marker", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
