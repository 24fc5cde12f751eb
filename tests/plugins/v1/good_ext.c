/*
 * Test plugin: a minimal well-behaved external policy, built against
 * wattsim/policy.h alone, as a user outside the tree would write it.
 *
 * BSO "ext_smallest": always the smallest batch size of the job, shifted up
 * by the integer parameter `offset` (default 0, range 0..100; an offset past
 * the largest batch size means the largest).
 */
#include <wattsim/policy.h>

typedef struct smallest {
    long offset;
    int registered;
} smallest;

static const ws_param_spec params[] = {
    {"offset", WS_PARAM_INT, {.i = 0}, 0, 100,
     "how many batch sizes above the smallest to pick"},
    {0},
};

static int s_create(void *state, const ws_value *v, const ws_host *host)
{
    smallest *s = state;
    if (!v || v[0].i < 0) return -1;
    s->offset = v[0].i;
    return 0;
}

static void s_destroy(void *state) {}

static int s_register(void *state, const ws_job *job)
{
    smallest *s = state;
    if (s->registered || job->n_bs < 1) return -1;
    s->registered = 1;
    return 0;
}

static int s_predict(void *state, const ws_job *job, int *bs)
{
    const smallest *s = state;
    long i = s->offset < job->n_bs ? s->offset : job->n_bs - 1;
    *bs = job->bs[i];
    return 0;
}

static int s_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return ws_job_bs_index(job, bs) < 0 ? -1 : 0;
}

static const ws_bso_type ext_smallest = {
    .abi_version = WS_ABI_VERSION,
    .name = "ext_smallest",
    .summary = "the smallest batch size (shifted by `offset`)",
    .state_size = sizeof(smallest),
    .params = params,
    .create = s_create,
    .destroy = s_destroy,
    .register_job = s_register,
    .predict = s_predict,
    .observe = s_observe,
};

static const ws_bso_type *const bsos[] = {&ext_smallest, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "good_ext", bsos, NULL};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
