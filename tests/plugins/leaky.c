/*
 * Test plugin for `policy check`: BSO "leaky" takes 4 KiB per job it is
 * registered for and gives it back only when it is unloaded (the blocks
 * stay on a static list, so sanitizers stay quiet, but the process grows
 * with every job). `policy check` must fail leak only.
 */
#include <stdlib.h>

#include "stub.h"

static void **kept;
static size_t n_kept, cap_kept;

static int l_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    if (n_kept == cap_kept) {
        size_t cap = cap_kept ? 2 * cap_kept : 64;
        void **k = realloc(kept, cap * sizeof *k);
        if (!k) return -1;
        kept = k;
        cap_kept = cap;
    }
    char *block = malloc(4096);
    if (!block) return -1;
    for (int i = 0; i < 4096; i += 64) block[i] = (char)i;   /* touch it: resident */
    kept[n_kept++] = block;
    return 0;
}

__attribute__((destructor)) static void unload(void)
{
    for (size_t i = 0; i < n_kept; i++) free(kept[i]);
    free(kept);
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "leaky", .summary = "test",
    .create = stub_create, .destroy = stub_destroy, .register_job = l_register,
    .predict = stub_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "leaky", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
