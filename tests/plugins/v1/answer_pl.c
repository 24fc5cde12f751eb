/*
 * Test plugin: PLO "answer_pl", whose predict answers the power limit given
 * by its parameter `pl` (default -100 W), whatever the batch size: lets
 * the tests feed the host negative, huge or unmeasured limits. With
 * `profile_first` it first answers WS_PL_UNKNOWN for each batch size, so
 * the bad answer comes after the host profiled that size.
 */
#include <wattsim/policy.h>

typedef struct answer {
    long pl;
    int profile_first;
    int profiled_bs;           /* batch size last profiled, 0 = none */
} answer;

static const ws_param_spec params[] = {
    {"pl", WS_PARAM_INT, {.i = -100}, -2147483648.0, 2147483647.0, "the answer (W)"},
    {"profile_first", WS_PARAM_BOOL, {.b = 0}, 0, 1, "ask for profiling first"},
    {0},
};

static int a_create(void *state, const ws_value *v, const ws_host *host)
{
    answer *s = state;
    s->pl = v[0].i;
    s->profile_first = v[1].b;
    return 0;
}
static void a_destroy(void *state) {}
static int a_predict(void *state, const ws_job *job, int bs, int *pl)
{
    answer *s = state;
    if (s->profile_first && s->profiled_bs != bs) {
        *pl = WS_PL_UNKNOWN;
        return 0;
    }
    *pl = (int)s->pl;
    return 0;
}
static int a_observe_profile(void *state, const ws_job *job, int bs, int pl, double c)
{
    ((answer *)state)->profiled_bs = bs;
    return 0;
}

static const ws_plo_type plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "answer_pl",
    .summary = "answers the power limit it is told to, measured or not",
    .state_size = sizeof(answer),
    .params = params,
    .create = a_create,
    .destroy = a_destroy,
    .predict = a_predict,
    .observe_profile = a_observe_profile,
};

static const ws_plo_type *const plos[] = {&plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "answer_pl", NULL, plos};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
