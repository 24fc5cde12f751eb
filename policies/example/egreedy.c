/*
 * egreedy: an epsilon-greedy batch-size optimizer, the worked example of
 * docs/writing-a-policy.md. It needs nothing but the installed
 * <wattsim/policy.h> (policy ABI 2):
 *
 *     cc -std=c17 -O2 -fPIC -shared $(pkg-config --cflags wattsim) \
 *         -o egreedy.so egreedy.c
 *     wattsim simulate --workload imagenet --bso ./egreedy.so --plo jit
 *
 * Each batch size is tried once, b0 first. Afterwards, with probability
 * epsilon (divided by the square root of the recurrence when `decay` is
 * on) a uniformly drawn size is explored; otherwise the size of least mean
 * cost is exploited. A run that did not reach the target counts at
 * `penalty` times its cost, and a run cut by early stopping is recognised
 * from the call context (ctx->run_early_stopped). All randomness comes from
 * the host's stream, so a seed gives the same runs.
 */
#include <math.h>
#include <stdlib.h>
#include <wattsim/policy.h>

enum { P_EPSILON, P_DECAY, P_PENALTY };

static const ws_param_spec params[] = {
    {"epsilon", WS_PARAM_DOUBLE, {.d = 0.1}, 0.0, 1.0, "probability of exploring"},
    {"decay", WS_PARAM_BOOL, {.b = 1}, 0, 0, "divide epsilon by sqrt(recurrence)"},
    {"penalty", WS_PARAM_DOUBLE, {.d = 2.0}, 1.0, 1000.0,
     "cost factor for a run that did not reach the target"},
    {0},
};

typedef struct egreedy {
    const ws_host *host;
    double epsilon, penalty;
    int decay;
    int n_bs;
    long *n;                   /* runs observed per batch-size index */
    double *mean;              /* their mean (penalised) cost */
    long stopped;              /* runs cut by early stopping (from the context) */
} egreedy;

static int e_create(void *state, const ws_value *v, const ws_host *host)
{
    egreedy *e = state;
    e->host = host;
    e->epsilon = v[P_EPSILON].d;
    e->decay = v[P_DECAY].b;
    e->penalty = v[P_PENALTY].d;
    return 0;
}

static void e_destroy(void *state)
{
    egreedy *e = state;
    free(e->n);
    free(e->mean);
}

static int e_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    egreedy *e = state;
    if (e->n) return -1;                       /* one job per instance */
    e->n_bs = job->n_bs;
    e->n = calloc((size_t)job->n_bs, sizeof *e->n);
    e->mean = calloc((size_t)job->n_bs, sizeof *e->mean);
    return e->n && e->mean ? 0 : -1;
}

static int e_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    egreedy *e = state;
    int b0 = ws_job_bs_index(job, job->b0);
    if (e->n[b0] == 0) { *bs = job->b0; return 0; }
    for (int i = 0; i < job->n_bs; i++)
        if (e->n[i] == 0) { *bs = job->bs[i]; return 0; }
    double eps = e->epsilon;
    if (e->decay && ctx->recurrence > 0) eps /= sqrt((double)ctx->recurrence);
    if (e->host->uniform(e->host->ctx) < eps) {
        *bs = job->bs[e->host->uniform_int(e->host->ctx, (unsigned long)job->n_bs)];
        return 0;
    }
    int best = b0;
    for (int i = 0; i < job->n_bs; i++)
        if (e->mean[i] < e->mean[best]) best = i;
    *bs = job->bs[best];
    return 0;
}

static int e_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double cost,
                     int reached)
{
    egreedy *e = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0 || !isfinite(cost)) return -1;
    if (ctx->run_early_stopped) e->stopped++;
    double c = reached ? cost : e->penalty * cost;
    e->n[i]++;
    e->mean[i] += (c - e->mean[i]) / (double)e->n[i];
    return 0;
}

static const ws_bso_type egreedy_bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "egreedy",
    .summary = "epsilon-greedy: every size once, then explore with probability epsilon",
    .state_size = sizeof(egreedy),
    .params = params,
    .create = e_create,
    .destroy = e_destroy,
    .register_job = e_register,
    .predict = e_predict,
    .observe = e_observe,
};

static const ws_bso_type *const bsos[] = {&egreedy_bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "egreedy", bsos, NULL,
                                 WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
