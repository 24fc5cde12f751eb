/*
 * Gaussian Thompson sampling over a set of batch sizes (arms), as in the
 * published Zeus BSO (zeus._legacy.policy.mab.GaussianTS with the reward
 * precision learned from the observations):
 *
 *  - reward = -cost; each arm is fitted on its observations (all of them,
 *    or the last `window`): reward precision lambda = 1 / population
 *    variance (variance 0 gives lambda = infinity), prior mean 0 and
 *    precision 0, so the posterior has precision n * lambda and mean equal
 *    to the average reward (lambda = infinity: the average, exactly).
 *  - predict: an arm with fewer than `explore` observations, picked
 *    uniformly (what scanning a fresh random order finds first); otherwise
 *    draw theta ~ N(mean, 1 / precision) per arm and return the argmax
 *    (first arm on ties).
 *
 * Observation statistics are kept per batch-size index of the job, for
 * every size, so that a bandit built later (after pruning) is fitted on
 * everything seen so far. With window = 0 they are running (Welford) sums:
 * O(1) per observation; with a window, the rewards are kept.
 *
 * Speed: a predict draws one Gaussian per arm, and an arm's posterior
 * changes only when that arm is observed. So each observation marks its
 * arm's posterior mean and standard deviation sqrt(1 / precision) for
 * refreshing (ws_bandit_posterior, the same arithmetic, so the same bits)
 * once, at the next predict, which otherwise only reads them: no division
 * or square root per draw. Arms only
 * warm up (n never falls), so once every arm has `explore` observations
 * predict stops looking for cold ones until the arms change.
 */
#ifndef WS_POLICIES_BANDIT_H
#define WS_POLICIES_BANDIT_H

#include <wattsim/policy.h>

/* Linked into each policy module that uses it, and private to it: hidden,
 * so that the module calls it directly, not through its PLT (a policy's
 * predict and observe call it once per try). */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

typedef struct ws_arm_stats {
    long n;                 /* observations */
    double mean, m2;        /* Welford running mean and sum of squares */
    double *rewards;        /* with a window: every reward, oldest first */
    long cap;
} ws_arm_stats;

/* An arm's posterior as predict samples it, refreshed by each observation:
 * theta = mean when sd == 0 (infinite precision: no draw), else
 * mean + N(0, sd). Finite precision always gives sd > 0. */
typedef struct ws_arm_post {
    double mean, sd;
} ws_arm_post;

typedef struct ws_bandit {
    int n_bs;               /* size of the job's batch-size set */
    ws_arm_stats *stats;    /* per batch-size index */
    int *arms;              /* batch-size indices that are arms, ascending */
    int n_arms;
    long window;            /* 0 = all observations */
    long explore;           /* observations before sampling */
    ws_arm_post *post;      /* per batch-size index */
    int warm;               /* every arm has `explore` observations */
    int stale;              /* index whose post awaits the next predict; -1 */
    int *cold;              /* scratch, n_bs */
} ws_bandit;

int ws_bandit_init(ws_bandit *b, const ws_job *job, long window, long explore);
void ws_bandit_free(ws_bandit *b);
/* Record a reward for batch-size index i (any size, arm or not). */
int ws_bandit_observe(ws_bandit *b, int i, double reward);
/* Make the given batch-size indices the arms (set arms[] and n_arms
 * directly only before the first predict). */
void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n);
/* Mean and posterior precision of index i from its (windowed) rewards. */
void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec);
/* What predict samples for index i, from ws_bandit_posterior. */
ws_arm_post ws_bandit_post_of(const ws_bandit *b, int i);
/* Pick an arm; returns its batch-size index. */
int ws_bandit_predict(ws_bandit *b, const ws_host *host);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
