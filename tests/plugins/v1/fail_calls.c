/*
 * Test plugin: BSO "fail_bso" and PLO "fail_plo", which fail (return the
 * nonzero code given by parameter `code`, default 3) in the call named by
 * parameter `call` and behave in every other call (b0; the highest limit).
 * Calls: create, register_job, predict, observe (BSO); create,
 * register_job, predict, observe_profile, observe_run (PLO). For
 * observe_profile the PLO asks for profiling first.
 */
#include <string.h>
#include <wattsim/policy.h>

typedef struct fail {
    char call[32];
    int code;
    int profiled_bs;
} fail;

static const ws_param_spec params[] = {
    {"call", WS_PARAM_STRING, {.s = "predict"}, 0, 0, "the call that fails"},
    {"code", WS_PARAM_INT, {.i = 3}, -1000, 1000, "what it returns"},
    {0},
};

static int rc_of(const fail *s, const char *call)
{
    return strcmp(s->call, call) ? 0 : s->code;
}

static int f_create(void *state, const ws_value *v, const ws_host *host)
{
    fail *s = state;
    strncpy(s->call, v[0].s, sizeof s->call - 1);
    s->code = (int)v[1].i;
    return rc_of(s, "create");
}
static void f_destroy(void *state) {}
static int f_register(void *state, const ws_job *job) { return rc_of(state, "register_job"); }

static int b_predict(void *state, const ws_job *job, int *bs)
{
    *bs = job->b0;
    return rc_of(state, "predict");
}
static int b_observe(void *state, const ws_job *job, int bs, double cost, int reached)
{
    return rc_of(state, "observe");
}

static int p_predict(void *state, const ws_job *job, int bs, int *pl)
{
    fail *s = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return 99;
    if (!strcmp(s->call, "observe_profile") && s->profiled_bs != bs)
        *pl = WS_PL_UNKNOWN;
    else
        *pl = ws_job_max_pl(job, i);
    return rc_of(s, "predict");
}
static int p_observe_profile(void *state, const ws_job *job, int bs, int pl, double c)
{
    fail *s = state;
    s->profiled_bs = bs;
    return rc_of(s, "observe_profile");
}
static int p_observe_run(void *state, const ws_job *job, int bs, int pl, double cost,
                         int reached)
{
    return rc_of(state, "observe_run");
}

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "fail_bso",
    .summary = "fails in the call it is told to",
    .state_size = sizeof(fail),
    .params = params,
    .create = f_create,
    .destroy = f_destroy,
    .register_job = f_register,
    .predict = b_predict,
    .observe = b_observe,
};

static const ws_plo_type plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "fail_plo",
    .summary = "fails in the call it is told to",
    .state_size = sizeof(fail),
    .params = params,
    .create = f_create,
    .destroy = f_destroy,
    .predict = p_predict,
    .observe_profile = p_observe_profile,
    .register_job = f_register,
    .observe_run = p_observe_run,
};

static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plo_type *const plos[] = {&plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "fail_calls", bsos, plos};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
