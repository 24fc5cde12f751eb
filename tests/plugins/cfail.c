/*
 * Test plugin: BSO "cfail", whose create logs an error saying why and
 * returns -1, as the guide tells a policy to. The host's message must
 * carry the logged reason (not just "create failed").
 */
#include "stub.h"

static int c_create(void *state, const ws_value *v, const ws_host *host)
{
    host->log(host->ctx, WS_LOG_ERROR, "table 'q.csv' not found");
    return -1;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "cfail", .summary = "test",
    .create = c_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = stub_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "cfail", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
