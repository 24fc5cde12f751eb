/*
 * Test plugin: PLO "never_pl", which answers WS_PL_UNKNOWN even after the
 * host profiled every power limit. It also checks the profiling the host
 * does, so that a wrong order or cost shows up as a distinct error:
 *   observe_profile returns 2 if a limit is not measured for bs, 3 if the
 *   limits do not come highest first, 4 if epoch_cost is not
 *   ws_job_epoch_cost; predict returns 5 if it is asked again before every
 *   limit of bs was profiled.
 */
#include <wattsim/policy.h>

typedef struct never {
    int bs;            /* batch size being profiled */
    int last_pl;       /* last limit reported */
    int n;             /* limits reported for bs */
    int asked;         /* predict calls for bs */
} never;

static int n_create(void *state, const ws_value *v, const ws_host *host) { return 0; }
static void n_destroy(void *state) {}

static int n_predict(void *state, const ws_job *job, int bs, int *pl)
{
    never *s = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return 1;
    if (s->bs != bs) {
        s->bs = bs;
        s->n = 0;
        s->asked = 0;
        s->last_pl = 0;
    }
    if (s->asked++ > 0 && s->n != job->knob_start[i + 1] - job->knob_start[i])
        return 5;
    *pl = WS_PL_UNKNOWN;
    return 0;
}

static int n_observe_profile(void *state, const ws_job *job, int bs, int pl,
                             double cost)
{
    never *s = state;
    int i = ws_job_bs_index(job, bs);
    if (i < 0 || bs != s->bs) return 2;
    int k = -1;
    for (int q = job->knob_start[i]; q < job->knob_start[i + 1]; q++)
        if (job->knob_pl[q] == pl) k = q;
    if (k < 0) return 2;
    if (s->n > 0 && pl >= s->last_pl) return 3;
    if (cost != ws_job_epoch_cost(job, i, k)) return 4;
    s->last_pl = pl;
    s->n++;
    return 0;
}

static const ws_plo_type plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "never_pl",
    .summary = "never knows a power limit, even after profiling",
    .state_size = sizeof(never),
    .create = n_create,
    .destroy = n_destroy,
    .predict = n_predict,
    .observe_profile = n_observe_profile,
};

static const ws_plo_type *const plos[] = {&plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "never_pl", NULL, plos};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
