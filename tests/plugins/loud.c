/*
 * Test plugin: a BSO whose words are hostile to a terminal and to the
 * Markdown and HTML they end up in. It logs a warning with ESC sequences
 * and a newline when created, plays b0, and in recurrence 2 fails with an
 * error message carrying HTML, a '|', ESC and a newline. wattsim must show
 * every one of them as text on one line (tests/test_messages.c).
 */
#include "stub.h"

typedef struct loud {
    const ws_host *host;
} loud;

static int l_create(void *state, const ws_value *v, const ws_host *host)
{
    ((loud *)state)->host = host;
    host->log(host->ctx, WS_LOG_WARN, "warn \x1b[31mred\x1b[0m\nsecond line");
    return 0;
}

static int l_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    const ws_host *h = ((loud *)state)->host;
    if (ctx->recurrence >= 2) {
        h->log(h->ctx, WS_LOG_ERROR, "<script>alert(1)</script> | broke\x1b[2J\nhere");
        return -1;
    }
    *bs = job->b0;
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "loud", .summary = "test",
    .state_size = sizeof(loud), .create = l_create, .destroy = stub_destroy,
    .register_job = stub_register, .predict = l_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "loud", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
