/*
 * Internal (not installed): what the registry asks the Python bridge
 * plugin (python/bridge.c, built into POLICY_DIR/../bridges/python.so)
 * for a policy named `py:MODULE:CLASS`.
 *
 * The bridge imports the class into a Python interpreter -- the one the
 * process already runs (a program using libwattsim from Python), else one
 * it embeds (WATTSIM_PYTHON, default /usr/bin/python3) -- and answers a
 * descriptor whose functions call the class's methods (wattsim._bridge:
 * the same adapter that runs live Python objects handed to the library).
 * The descriptor stays valid for the life of the process: an interpreter,
 * once started, is never finalised, and the bridge keeps itself loaded.
 *
 * The answer is a plain struct the Python side fills (with ctypes), so
 * the plugin needs only a handful of the interpreter's functions.
 */
#ifndef WATTSIM_ENGINE_BRIDGE_H
#define WATTSIM_ENGINE_BRIDGE_H

#include "wattsim/error.h"

enum { WS_BRIDGE_EITHER = 0, WS_BRIDGE_BSO = 1, WS_BRIDGE_PLO = 2 };

typedef struct ws_bridge_answer {
    int kind;                  /* WS_BRIDGE_BSO or WS_BRIDGE_PLO; 0 on error */
    const void *descriptor;    /* ws_bso_type or ws_plo_type */
    char origin[1024];         /* "MODULE.CLASS from FILE", for provenance */
    char sha256[65];           /* of the module's source file; "" when none */
    char error[WS_ERROR_MAX];  /* one line when kind is 0 */
} ws_bridge_answer;

/* The bridge's entry point: fill *out for `spec` ("py:MODULE:CLASS"),
 * `want` one of WS_BRIDGE_*, for a host of policy ABI `host_abi`. Returns
 * 0, or -1 with out->error set. Calls are serialised by the caller. */
#define WS_BRIDGE_ENTRY_NAME "ws_bridge_python_v1"
typedef int (*ws_bridge_fn)(const char *spec, int want, int host_abi, ws_bridge_answer *out);

/* The bridge plugin's file name, in POLICY_DIR/../bridges/. */
#define WS_BRIDGE_PYTHON_FILE "python.so"

#endif
