/*
 * carbon: a carbon-aware power-limit optimizer, the example of a policy
 * that reads the environment members of the call context (ws_ctx
 * carbon_intensity, price; ABI 2.0).
 *
 * Like jit, it has the host profile every power limit of a batch size the
 * first time it is used, and keeps what profiling measured (time per
 * epoch t and average power p, from the context). Unlike jit, it chooses
 * again at every recurrence: the limit of least epoch cost at the current
 * intensity I,
 *
 *     cost(pl) = eta * p * t * I / I_mean + (1 - eta) * maxPL(bs) * t,
 *
 * where I_mean is the mean intensity over the recurrences seen so far
 * (including this one): a joule weighs more when the grid is dirtier than
 * usual, so a run starting in a dirty hour trades time for energy. With no
 * carbon series (I is NAN) it weighs `price` the same way, and with
 * neither it is jit. Ties keep the higher limit.
 */
#include <math.h>
#include <stdlib.h>
#include <wattsim/policy.h>

typedef struct carbon {
    double *time, *power;    /* per knob index; 0 = not profiled */
    long last_rec;           /* recurrence whose rate is in the mean */
    double sum;              /* sum of the rates seen */
    long n;
} carbon;

static int c_create(void *state, const ws_value *v, const ws_host *host) { return 0; }

static void c_destroy(void *state)
{
    carbon *c = state;
    free(c->time);
    free(c->power);
}

static int c_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    carbon *c = state;
    if (c->time) return -1;
    size_t nk = (size_t)job->knob_start[job->n_bs];
    c->time = calloc(nk, sizeof *c->time);
    c->power = calloc(nk, sizeof *c->power);
    return c->time && c->power ? 0 : -1;
}

/* The rate this recurrence (carbon, else price), NAN when none. */
static double rate(const ws_ctx *ctx)
{
    if (!ctx || !WS_CTX_HAS(ctx, price)) return NAN;
    return isnan(ctx->carbon_intensity) ? ctx->price : ctx->carbon_intensity;
}

static int c_predict(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    carbon *c = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    const int k0 = job->knob_start[i], k1 = job->knob_start[i + 1];
    if (c->time[k0] == 0) {          /* not profiled yet */
        *pl = WS_PL_UNKNOWN;
        return 0;
    }
    double r = rate(ctx), weight = 1.0;
    if (!isnan(r)) {
        if (ctx->recurrence != c->last_rec) {
            c->last_rec = ctx->recurrence;
            c->sum += r;
            c->n++;
        }
        double mean = c->sum / (double)c->n;
        if (mean > 0) weight = r / mean;
    }
    /* maxPL(bs) of the job: one GPU's limit times its GPUs (ABI 2.2). */
    const double maxpl = (double)ws_job_max_pl(job, i) * (double)ws_job_gpus(job);
    int best = -1;
    double best_cost = INFINITY;
    for (int k = k1 - 1; k >= k0; k--) {       /* from the top: ties keep it */
        double t = c->time[k];
        double cost = job->eta * c->power[k] * t * weight + (1.0 - job->eta) * maxpl * t;
        if (cost < best_cost) {
            best_cost = cost;
            best = k;
        }
    }
    *pl = job->knob_pl[best];
    return 0;
}

static int c_observe_profile(void *state, const ws_job *job, const ws_ctx *ctx, int bs,
                             int pl, double cost)
{
    carbon *c = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0 || !ctx || !(ctx->profile_time_s > 0)) return -1;
    for (int k = job->knob_start[i]; k < job->knob_start[i + 1]; k++)
        if (job->knob_pl[k] == pl) {
            c->time[k] = ctx->profile_time_s;
            c->power[k] = ctx->profile_power_w;
            return 0;
        }
    return -1;
}

static const ws_plo_type carbon_plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "carbon",
    .summary = "carbon-aware: per recurrence, the profiled limit of least epoch cost at"
               " the current carbon intensity (or price) relative to its mean",
    .state_size = sizeof(carbon),
    .params = NULL,
    .create = c_create,
    .destroy = c_destroy,
    .predict = c_predict,
    .observe_profile = c_observe_profile,
    .register_job = c_register,
    .observe_run = NULL,
};

static const ws_plo_type *const plos[] = {&carbon_plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "carbon", NULL, plos, WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
