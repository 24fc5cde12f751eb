/*
 * Policy plugins stay mapped for the life of the process, each build under
 * a name of its own (plugin_map.c), for the registry's load_file.
 */
#ifndef WATTSIM_PLUGIN_MAP_H
#define WATTSIM_PLUGIN_MAP_H

/* dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) of the file at `real` (a
 * real path; the file's device and inode: dev, ino) by the name that maps
 * that file and no other, put in *name (malloc'd; what RTLD_NOLOAD
 * references must use). NULL when the loader fails (dlerror() says why)
 * or out of memory (*name NULL, dlerror() NULL). */
void *ws_plugin_map_open(const char *real, unsigned long long dev, unsigned long long ino,
                         char **name);

#endif
