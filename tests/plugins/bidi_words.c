/*
 * Test plugin: a BSO whose summary, parameter help and string default
 * hold an ESC sequence, an OSC title ending in BEL and U+202E. `wattsim
 * list policies --plugin` must show every one of them escaped
 * (tests/test_terminal_bytes.c).
 */
#include "stub.h"

static const ws_param_spec params[] = {
    {"mode", WS_PARAM_STRING, {.s = "a\xe2\x80\xae" "b"}, 0, 0,
     "help \x1b]0;owned\x07 with \xe2\x81\xa6isolate"},
    {0},
};
static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "bidi_words",
    .summary = "summary \x1b[2J\xe2\x80\xae" "txt.exe", .params = params,
    .create = stub_create, .destroy = stub_destroy, .register_job = stub_register,
    .predict = stub_predict, .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "bidi_words", bsos, NULL, 0};
const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
