/* Test plugin: a NaN bound (every comparison with it is false, so no value
 * would ever be refused); refused at load. */
#include <math.h>

#include "stub.h"

static const ws_param_spec params[] = {
    {"rate", WS_PARAM_DOUBLE, {.d = 0.5}, 0, NAN, "a rate"},
    {0},
};
STUB_BSO(bso, "nan_bounds", params);
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "nan_bounds", bsos, NULL, 0};
const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
