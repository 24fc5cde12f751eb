/*
 * Test plugin: PLO "bad_pl", which always answers 125 W. In the tests'
 * job only batch size 32 has a 125 W knob, so for any other batch size the
 * host must reject the answer.
 */
#include <wattsim/policy.h>

static int p_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void p_destroy(void *state) {}
static int p_predict(void *state, const ws_job *job, int bs, int *pl)
{
    *pl = 125;
    return 0;
}
static int p_observe_profile(void *state, const ws_job *job, int bs, int pl, double c)
{
    return 0;
}

static const ws_plo_type plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "bad_pl",
    .summary = "always 125 W, measured or not",
    .create = p_create,
    .destroy = p_destroy,
    .predict = p_predict,
    .observe_profile = p_observe_profile,
};

static const ws_plo_type *const plos[] = {&plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "bad_pl", NULL, plos};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
