/* TEST FIXTURE: policies/example/capped.c as it was for policy ABI version 1,
 * built against the version-1 header (sim/include/wattsim/policy_v1.h,
 * written for the tests as wattsim/policy.h: tests/CMakeLists.txt). A
 * version-2 host must load it and give the same numbers as the version-2 example. */
/*
 * capped: a worked example of a policy written outside the wattsim tree.
 * It needs nothing but the installed <wattsim/policy.h>:
 *
 *     cc -std=c17 -O2 -fPIC -shared -o capped.so capped.c
 *     wattsim simulate --workload imagenet --bso zeus --plo ./capped.so \
 *         --plo-param max_watts=175
 *
 * A power-limit optimizer that answers an operator's question: "what if
 * this GPU's power were capped at max_watts?". For each batch size it
 * picks, among the measured limits at or below the cap, the one with the
 * least epoch cost (eta * power + (1 - eta) * maxPL) * time, reading the
 * job's knob table; if no limit fits under the cap, the lowest one.
 * It never asks the host to profile.
 */
#include <stdlib.h>
#include <wattsim/policy.h>

/* Parameters: the order here is the order of create()'s values. */
static const ws_param_spec params[] = {
    {"max_watts", WS_PARAM_INT, {.i = 200}, 1, 10000, "power cap in W"},
    {0},
};

/* Per-instance state: the host allocates state_size zeroed bytes. */
typedef struct capped {
    long max_watts;
    int *choice;               /* chosen power limit per batch-size index */
} capped;

static int c_create(void *state, const ws_value *v, const ws_host *host)
{
    ((capped *)state)->max_watts = v[0].i;
    return 0;
}

static void c_destroy(void *state) { free(((capped *)state)->choice); }

/* The job is known once: precompute every answer. */
static int c_register(void *state, const ws_job *job)
{
    capped *c = state;
    c->choice = malloc((size_t)job->n_bs * sizeof *c->choice);
    if (!c->choice) return -1;
    for (int i = 0; i < job->n_bs; i++) {
        int k0 = job->knob_start[i], k1 = job->knob_start[i + 1], best = k0;
        double best_cost = 0;
        for (int k = k1 - 1; k >= k0; k--) {
            if (job->knob_pl[k] > c->max_watts) continue;
            double cost = ws_job_epoch_cost(job, i, k);
            if (best == k0 || cost < best_cost) {
                best = k;
                best_cost = cost;
            }
        }
        c->choice[i] = job->knob_pl[best];
    }
    return 0;
}

static int c_predict(void *state, const ws_job *job, int bs, int *pl)
{
    int i = ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    *pl = ((capped *)state)->choice[i];
    return 0;
}

static int c_observe_profile(void *state, const ws_job *job, int bs, int pl,
                             double epoch_cost)
{
    return 0;                  /* never asks for profiling */
}

static const ws_plo_type capped_plo = {
    .abi_version = WS_ABI_VERSION,
    .name = "capped",
    .summary = "least epoch-cost power limit at or below max_watts",
    .state_size = sizeof(capped),
    .params = params,
    .create = c_create,
    .destroy = c_destroy,
    .predict = c_predict,
    .observe_profile = c_observe_profile,
    .register_job = c_register,
};

static const ws_plo_type *const plos[] = {&capped_plo, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "capped", NULL, plos};

const ws_plugin *ws_plugin_entry(void) { return &plugin; }
