/*
 * Checking a plugin's descriptors and copying them to this host's layout
 * (private to the engine; used by the registry at load). See descriptor.c.
 */
#ifndef WATTSIM_ENGINE_DESCRIPTOR_H
#define WATTSIM_ENGINE_DESCRIPTOR_H

#include "wattsim/error.h"
#include "wattsim/policy.h"

/* Version 1 wrote 1 for 1.0; later versions MAJOR * 100 + MINOR. */
static inline int ws_abi_normalise(int v) { return v > 0 && v < 100 ? v * 100 : v; }

/* A known ABI version: 0, or -1 naming file, what ("plugin", "bso"), name. */
int ws_descriptor_check_version(const char *path, const char *what, const char *name,
                                int v, ws_error *err);
/* Check a descriptor and make the host's copy (*out, with its own copy of
 * the parameter specs; on failure *out may hold a partial copy to free). */
int ws_descriptor_check_bso(const char *path, const ws_bso_type *src, ws_bso_type **out,
                            ws_error *err);
int ws_descriptor_check_plo(const char *path, const ws_plo_type *src, ws_plo_type **out,
                            ws_error *err);

#endif
