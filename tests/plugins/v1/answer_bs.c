/*
 * Test plugin: BSO "answer_bs", whose predict answers the batch size given
 * by its parameter `bs` (default -32), whatever the job: lets the tests
 * feed the host negative, zero, huge or unlisted answers. With `after` =
 * N > 0 it answers b0 for the first N predicts (so a bad answer arrives in
 * the middle of a run, after observations), and with `silent` it returns
 * success without writing *bs at all.
 */
#include <wattsim/policy.h>

typedef struct answer {
    long bs, after, silent, calls;
} answer;

static const ws_param_spec params[] = {
    {"bs", WS_PARAM_INT, {.i = -32}, -2147483648.0, 2147483647.0, "the answer"},
    {"after", WS_PARAM_INT, {.i = 0}, 0, 1000, "good answers (b0) first"},
    {"silent", WS_PARAM_BOOL, {.b = 0}, 0, 1, "leave *bs unwritten"},
    {"weight", WS_PARAM_DOUBLE, {.d = 1.0}, 0, 10, "unused; for parameter checks"},
    {0},
};

static int a_create(void *state, const ws_value *v, const ws_host *host)
{
    answer *s = state;
    s->bs = v[0].i;
    s->after = v[1].i;
    s->silent = v[2].b;
    return 0;
}
static void a_destroy(void *state) {}
static int a_register(void *state, const ws_job *job) { return 0; }
static int a_predict(void *state, const ws_job *job, int *bs)
{
    answer *s = state;
    if (s->calls++ < s->after) {
        *bs = job->b0;
        return 0;
    }
    if (!s->silent) *bs = (int)s->bs;
    return 0;
}
static int a_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return 0;
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "answer_bs",
    .summary = "answers the batch size it is told to, valid or not",
    .state_size = sizeof(answer),
    .params = params,
    .create = a_create,
    .destroy = a_destroy,
    .register_job = a_register,
    .predict = a_predict,
    .observe = a_observe,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "answer_bs", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
