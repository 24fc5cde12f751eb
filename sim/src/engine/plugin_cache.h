/*
 * The process's kept policy plugins (plugin_cache.c), for the registry's
 * load_file. ws_plugin_cache_set is in wattsim/plugin.h.
 */
#ifndef WATTSIM_PLUGIN_CACHE_H
#define WATTSIM_PLUGIN_CACHE_H

#include <stddef.h>

#include "wattsim/sha256.h"

/* A new reference to the plugin kept for `path` with identity *id, and
 * its real path in *real (malloc'd), or NULL (not kept; *real NULL). */
void *ws_plugin_cache_open(const char *path, const ws_file_id *id, char **real);
/* Before load_file maps the file at `real`: drop every entry of that real
 * path (older builds; counted as a file opened). */
void ws_plugin_cache_forget(const char *real);
/* Keep a reference of the cache's own to the plugin just loaded from
 * `real` by the name `name` (plugin_map.c; named `path` by the caller,
 * identity *id); nothing when the cache is off. */
void ws_plugin_cache_keep(const char *path, const char *real, const char *name,
                          const ws_file_id *id);

#endif
