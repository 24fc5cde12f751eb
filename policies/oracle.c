/*
 * oracle: always the knob of least expected cost, read from the knob table
 * (a lower bound for regret, not a realisable policy). A knob's expected
 * cost is eta * ETA + (1 - eta) * MaxPower * TTA with TTA and ETA from the
 * mean target epoch of its runs; only knobs that every run reaches within
 * max_epochs qualify. The PLO half, paired with another BSO, picks the
 * least expected-cost limit of whatever batch size it is asked about.
 */
#include <math.h>
#include <wattsim/policy.h>

typedef struct oracle {
    int bs, pl;
} oracle;

/* Mean target epoch of batch-size index i's runs; INFINITY if some run
 * does not reach the target within max_epochs (or there is none). */
static double mean_epochs(const ws_job *job, int i)
{
    double sum = 0;
    int n = 0;
    for (int r = job->run_start[i]; r < job->run_start[i + 1]; r++, n++) {
        if (!(job->run_epoch[r] <= job->max_epochs)) return INFINITY;
        sum += job->run_epoch[r];
    }
    return n ? sum / n : INFINITY;
}

/* Expected cost of knob k whose batch size has mean target epoch m. */
static double knob_cost(const ws_job *job, double m, int k)
{
    if (m == INFINITY) return INFINITY;
    double tta = m * job->knob_time[k];
    double eta = tta * job->knob_power[k];
    return job->eta * eta + (1.0 - job->eta) * job->max_power * tta;
}

/* Best knob of batch-size index i (or of all if i < 0); -1 if none. The
 * mean epoch is a batch size's, computed once for all its knobs (once
 * per knob, registering was 2 % of a paper-scale sweep). */
static int best_knob(const ws_job *job, int i, int *bi)
{
    int best = -1;
    double c = INFINITY;
    int lo = i < 0 ? 0 : i, hi = i < 0 ? job->n_bs : i + 1;
    for (int b = lo; b < hi; b++) {
        const double m = mean_epochs(job, b);
        for (int k = job->knob_start[b]; k < job->knob_start[b + 1]; k++) {
            double x = knob_cost(job, m, k);
            if (x < c) {
                c = x;
                best = k;
                if (bi) *bi = b;
            }
        }
    }
    return best;
}

static int o_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void o_destroy(void *state) {}

static int o_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    oracle *o = state;
    int i = -1, k = best_knob(job, -1, &i);
    if (k < 0) return -1;     /* no knob reaches the target in every run */
    o->bs = job->bs[i];
    o->pl = job->knob_pl[k];
    return 0;
}

static int o_predict_bs(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = ((oracle *)state)->bs;
    return 0;
}

static int o_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double c, int r) { return 0; }

static int o_predict_pl(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    oracle *o = state;
    if (bs == o->bs) { *pl = o->pl; return 0; }
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    int k = best_knob(job, i, NULL);
    *pl = k < 0 ? ws_job_max_pl(job, i) : job->knob_pl[k];
    return 0;
}

static int o_observe_profile(void *state, const ws_job *job, const ws_ctx *ctx, int bs, int pl, double c)
{
    return 0;
}

static const ws_bso_type oracle_bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "oracle",
    .summary = "the batch size of the least expected-cost knob (knows the traces)",
    .state_size = sizeof(oracle),
    .create = o_create,
    .destroy = o_destroy,
    .register_job = o_register,
    .predict = o_predict_bs,
    .observe = o_observe,
};

static const ws_plo_type oracle_plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "oracle",
    .summary = "the power limit of the least expected-cost knob (knows the traces)",
    .state_size = sizeof(oracle),
    .create = o_create,
    .destroy = o_destroy,
    .predict = o_predict_pl,
    .observe_profile = o_observe_profile,
    .register_job = o_register,
};

static const ws_bso_type *const bsos[] = {&oracle_bso, NULL};
static const ws_plo_type *const plos[] = {&oracle_plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "oracle", bsos, plos, WS_ABI_VERSION_OF(2, 0)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
