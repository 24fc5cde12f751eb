/*
 * carbon: a carbon-aware power-limit optimizer, the example of a policy
 * that reads the environment: the rates in the call context (ws_ctx
 * carbon_intensity, price; ABI 2.0) and, from ABI 2.3, the series ahead
 * as a perfect forecast (ws_host.forecast) on the simulation's clock
 * (ws_ctx.now_s).
 *
 * Like jit, it has the host profile every power limit of a batch size the
 * first time it is used, and keeps what profiling measured (time per
 * epoch t and average power p, from the context). Unlike jit, it chooses
 * again at every try: the limit of least expected cost of the run,
 *
 *     cost(pl) = eta * p * t * I(pl) / I_mean + (1 - eta) * maxPL(bs) * t
 *
 * per epoch (the run's n epochs multiply every limit's cost alike), where
 *  - I(pl) is the forecast's mean intensity over the run as it would run
 *    if it started now: over [now_s, now_s + n * t], n the mean epochs of
 *    the runs of this batch size observed so far (observe_run; of any
 *    size before the first, 1 before any). That is intensity x energy
 *    integrated over the run's expected duration on the piecewise-constant
 *    series, divided by the energy: a slower limit whose run reaches into a
 *    dirtier hour pays for it. (Under --defer-up-to the host may then
 *    start the run later, at its own cleanest start.)
 *  - Without a forecast (a host before 2.3, no series, a group replay),
 *    I(pl) is the intensity at the start of the recurrence for every
 *    limit: the policy's rule before 2.3.
 *  - I_mean is the mean of the intensities at the recurrences' starts seen
 *    so far (including this one): a joule weighs more when the grid is
 *    dirtier than usual, so a run in a dirty hour trades time for energy.
 * With no carbon series (the intensity is NAN) it weighs `price` the same
 * way, and with neither it is jit. Ties keep the higher limit.
 */
#include <math.h>
#include <stdlib.h>
#include <wattsim/policy.h>

typedef struct carbon {
    double *time, *power;    /* per knob index; 0 = not profiled */
    long last_rec;           /* recurrence whose rate is in the mean */
    double sum;              /* sum of the rates seen */
    long n;
    const ws_host *host;     /* for the forecast (2.3) */
    double *epochs;          /* per batch-size index: epochs of the runs
                                observed, summed; runs[i] of them */
    long *runs;
    double all_epochs;       /* over every size */
    long all_runs;
} carbon;

static int c_create(void *state, const ws_value *v, const ws_host *host)
{
    ((carbon *)state)->host = host;
    return 0;
}

static void c_destroy(void *state)
{
    carbon *c = state;
    free(c->time);
    free(c->power);
    free(c->epochs);
    free(c->runs);
}

static int c_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    carbon *c = state;
    if (c->time) return -1;
    size_t nk = (size_t)job->knob_start[job->n_bs];
    c->time = calloc(nk, sizeof *c->time);
    c->power = calloc(nk, sizeof *c->power);
    c->epochs = calloc((size_t)job->n_bs, sizeof *c->epochs);
    c->runs = calloc((size_t)job->n_bs, sizeof *c->runs);
    return c->time && c->power && c->epochs && c->runs ? 0 : -1;
}

/* The series the rate comes from (carbon, else price), for the forecast. */
static int rate_kind(const ws_ctx *ctx)
{
    return isnan(ctx->carbon_intensity) ? WS_FORECAST_PRICE : WS_FORECAST_CARBON;
}

/* Whether the host forecasts that series at the call's time (2.3). */
static int has_forecast(const carbon *c, const ws_ctx *ctx)
{
    const ws_host *h = c->host;
    return h && h->abi_version >= WS_ABI_VERSION_OF(2, 3) && h->forecast
           && WS_CTX_HAS(ctx, now_s) && isfinite(ctx->now_s)
           && !isnan(h->forecast(h->ctx, rate_kind(ctx), ctx->now_s, 0));
}

/* The epochs a run of batch-size index i is expected to take. */
static double expected_epochs(const carbon *c, int i)
{
    if (c->runs[i]) return c->epochs[i] / (double)c->runs[i];
    if (c->all_runs) return c->all_epochs / (double)c->all_runs;
    return 1.0;
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
    const int ahead = !isnan(r) && has_forecast(c, ctx);
    const double n = expected_epochs(c, i);
    int best = -1;
    double best_cost = INFINITY;
    for (int k = k1 - 1; k >= k0; k--) {       /* from the top: ties keep it */
        double t = c->time[k];
        double w = weight;
        if (ahead) {
            const double mean = c->sum / (double)c->n;
            const double f = c->host->forecast(c->host->ctx, rate_kind(ctx), ctx->now_s,
                                               n * t);
            if (mean > 0 && !isnan(f)) w = f / mean;
        }
        double cost = job->eta * c->power[k] * t * w + (1.0 - job->eta) * maxpl * t;
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

/* The epochs of each run observed, for its expected duration. */
static int c_observe_run(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                         double cost, int reached)
{
    carbon *c = state;
    const int i = ws_job_bs_index(job, bs);
    if (i < 0 || !ctx || !(ctx->run_epochs > 0)) return 0;
    c->epochs[i] += ctx->run_epochs;
    c->runs[i]++;
    c->all_epochs += ctx->run_epochs;
    c->all_runs++;
    return 0;
}

static const ws_plo_type carbon_plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "carbon",
    .summary = "carbon-aware: per try, the profiled limit of least cost at the carbon"
               " intensity (or price) forecast over the run, relative to its mean",
    .state_size = sizeof(carbon),
    .params = NULL,
    .create = c_create,
    .destroy = c_destroy,
    .predict = c_predict,
    .observe_profile = c_observe_profile,
    .register_job = c_register,
    .observe_run = c_observe_run,
};

static const ws_plo_type *const plos[] = {&carbon_plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "carbon", NULL, plos, WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
