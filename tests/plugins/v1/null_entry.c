/*
 * Test plugin: ws_plugin_entry exists but returns NULL.
 */
#include <stddef.h>
#include <wattsim/policy.h>

const ws_plugin *ws_plugin_entry(void) { return NULL; }
