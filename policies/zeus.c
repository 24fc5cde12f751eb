/*
 * zeus: the batch-size optimizer of Zeus (NSDI'23), "pruning, then Gaussian
 * Thompson sampling" (zeus._legacy.policy.optimizer.PruningGTSBatchSizeOptimizer).
 *
 * Pruning runs `rounds` rounds over a sorted candidate set S (first: all of
 * B) around a pivot b (first: b0). A round explores b, then the smaller
 * candidates in descending order until one does not reach the target, then
 * the larger ones in ascending order until one does not reach. Each size
 * is predicted once and its outcome is the next observation. The sizes that
 * reached form the next S; the one with least cost is the next pivot.
 * Afterwards a Gaussian Thompson-sampling bandit (bandit.h) over S, with 2
 * explorations per arm, picks every batch size. Zeus creates that bandit
 * with np.random.default_rng(seed) when pruning ends; pruning draws
 * nothing, so the BSO's stream (the same generator, ws_host) is still at
 * its start then: the same draws, seed for seed.
 *
 * Observations of a size the pruning did not ask for (possible when
 * submissions overlap) are kept for the bandit but do not advance pruning.
 *
 * The host reports the batch size zeus predicted last nearly always, so
 * observe checks that index before searching job->bs for it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wattsim/policy.h>

#include "bandit.h"

enum { P_ROUNDS, P_WINDOW };

static const ws_param_spec params[] = {
    {"rounds", WS_PARAM_INT, {.i = 2}, 0, 100,
     "pruning rounds before Thompson sampling"},
    {"window", WS_PARAM_INT, {.i = 0}, 0, 1e9,
     "observations per arm the bandit fits on (0 = all)"},
    {0},
};

typedef struct zeus {
    const ws_host *host;
    long rounds, window;
    ws_bandit bandit;
    int registered;
    /* Pruning state: indices into job->bs. */
    int *cand, n_cand;       /* S, ascending */
    int *good, n_good;       /* sizes that reached this round */
    int pivot;               /* batch-size index of b */
    int pivot_pos;           /* position of b in cand at round start */
    int dir;                 /* 0 = downwards from b, 1 = upwards */
    int pos;                 /* position in cand being explored */
    long round;
    double best_cost;
    int expecting;           /* index predicted, awaiting its outcome; -1 */
    int last;                /* index predict returned last; -1 */
    int pruning;             /* still pruning */
} zeus;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void start_round(zeus *z)
{
    z->pivot_pos = 0;
    for (int k = 0; k < z->n_cand; k++)
        if (z->cand[k] == z->pivot) z->pivot_pos = k;
    z->dir = 0;
    z->pos = z->pivot_pos;
    z->n_good = 0;
    z->best_cost = INFINITY;
}

/* The round is over: the good sizes form S; maybe start the next round. */
static int end_round(zeus *z)
{
    qsort(z->good, (size_t)z->n_good, sizeof *z->good, cmp_int);
    memcpy(z->cand, z->good, (size_t)z->n_good * sizeof *z->cand);
    z->n_cand = z->n_good;
    z->round++;
    if (z->n_cand == 0) {
        z->host->log(z->host->ctx, WS_LOG_ERROR,
                     "every batch size was pruned (none reached the target"
                     " in a pruning round)");
        return -1;
    }
    if (z->round < z->rounds) {
        start_round(z);
        return 0;
    }
    z->pruning = 0;
    ws_bandit_set_arms(&z->bandit, z->cand, z->n_cand);
    return 0;
}

/* Advance past the size just explored. */
static int step(zeus *z, int reached)
{
    if (z->dir == 0) {
        if (reached && z->pos > 0) { z->pos--; return 0; }
        z->dir = 1;
        z->pos = z->pivot_pos + 1;
    } else {
        if (!reached) return end_round(z);
        z->pos++;
    }
    return z->pos < z->n_cand ? 0 : end_round(z);
}

static int z_create(void *state, const ws_value *v, const ws_host *host)
{
    zeus *z = state;
    z->host = host;
    z->rounds = v[P_ROUNDS].i;
    z->window = v[P_WINDOW].i;
    return 0;
}

static void z_destroy(void *state)
{
    zeus *z = state;
    ws_bandit_free(&z->bandit);
    free(z->cand);
    free(z->good);
}

static int z_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    zeus *z = state;
    if (z->registered) return -1;          /* one job per instance */
    z->registered = 1;
    if (ws_bandit_init(&z->bandit, job, z->window, 2)) return -1;
    z->cand = malloc((size_t)job->n_bs * sizeof *z->cand);
    z->good = malloc((size_t)job->n_bs * sizeof *z->good);
    if (!z->cand || !z->good) return -1;
    for (int i = 0; i < job->n_bs; i++) z->cand[i] = i;
    z->n_cand = job->n_bs;
    z->pivot = ws_job_bs_index(job, job->b0);
    if (z->pivot < 0) return -1;
    z->expecting = -1;
    z->last = -1;
    z->round = 0;
    if (z->rounds == 0) {
        z->pruning = 0;
        ws_bandit_set_arms(&z->bandit, z->cand, z->n_cand);
    } else {
        z->pruning = 1;
        start_round(z);
    }
    return 0;
}

static int z_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    zeus *z = state;
    if (z->pruning) {
        z->expecting = z->last = z->cand[z->pos];
        *bs = job->bs[z->expecting];
        return 0;
    }
    z->last = ws_bandit_predict(&z->bandit, z->host);
    if (z->last < 0) {
        z->host->log(z->host->ctx, WS_LOG_ERROR, "out of memory");
        return -1;
    }
    *bs = job->bs[z->last];
    return 0;
}

static int z_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double cost,
                     int reached)
{
    zeus *z = state;
    const int i = z->last >= 0 && job->bs[z->last] == bs ? z->last : ws_job_bs_index(job, bs);
    if (i < 0) return -1;
    if (ws_bandit_observe(&z->bandit, i, -cost)) return -1;
    if (!z->pruning || i != z->expecting) return 0;
    z->expecting = -1;
    if (reached) {
        if (z->best_cost > cost) {
            z->best_cost = cost;
            z->pivot = i;
        }
        z->good[z->n_good++] = i;
    }
    return step(z, reached);
}

static const ws_bso_type zeus_bso = {
    .abi_version = WS_ABI_VERSION,
    .name = "zeus",
    .summary = "Zeus: pruning exploration around b0, then Gaussian Thompson sampling",
    .state_size = sizeof(zeus),
    .params = params,
    .create = z_create,
    .destroy = z_destroy,
    .register_job = z_register,
    .predict = z_predict,
    .observe = z_observe,
};

static const ws_bso_type *const bsos[] = {&zeus_bso, NULL};
/* 2.1: the host's choice and normal (numpy's draws). */
static const ws_plugin plugin = {WS_ABI_VERSION, "zeus", bsos, NULL, WS_ABI_VERSION_OF(2, 1)};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
