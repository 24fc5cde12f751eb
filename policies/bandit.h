/*
 * Gaussian Thompson sampling over a set of batch sizes (arms), as the
 * published Zeus BSOs do it (zeus._legacy.policy.mab.GaussianTS, with the
 * reward precision learned from the observations as
 * PruningGTSBatchSizeOptimizer and GTSBatchSizeOptimizer learn it), number
 * for number and draw for draw:
 *
 *  - reward = -cost. An arm is fitted on its rewards (all of them, or the
 *    last `window`): reward precision rp = 1 / np.var(rewards) (infinite
 *    when the variance is 0); with the prior mean 0 and precision 0, the
 *    posterior precision is 0 + n * rp and its mean
 *    (0 * 0 + rp * sum(rewards)) / precision, or, for rp infinite,
 *    np.mean(rewards) with infinite precision. Sums and the variance are
 *    numpy's (wattsim/npreduce.h): pairwise, in the order observed.
 *  - predict: first the exploration order, rng.choice(n_arms, n_arms,
 *    replace=False) over the arms (drawn at every predict, as Zeus does);
 *    the first arm in that order with fewer than `explore` fitted rewards
 *    is the answer. Otherwise Thompson sampling: theta =
 *    rng.normal(mean, sqrt(1 / precision)) for every arm in ascending
 *    order, drawn even when the scale is 0, and the first arm of largest
 *    theta wins (Python's max keeps the first on ties).
 * The draws come from the host (ws_host.choice and .normal, ABI 2.1), whose
 * BSO stream is np.random.default_rng(seed), as Zeus seeds its bandit.
 *
 * Observations are kept per batch-size index of the job, for every size,
 * so that a bandit whose arms are set later (after pruning) is fitted on
 * everything seen so far. An arm's posterior changes only when the arm is
 * observed: each observation marks it, and the next predict refits the
 * marked arms once (the same arithmetic whenever it is done); the other
 * arms' posteriors are reused.
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
    double *rewards;        /* every reward, oldest first */
    long cap;
} ws_arm_stats;

/* An arm's posterior as predict samples it: theta = mean + sd * z. */
typedef struct ws_arm_post {
    double mean, sd;
} ws_arm_post;

typedef struct ws_bandit {
    int n_bs;               /* size of the job's batch-size set */
    ws_arm_stats *stats;    /* per batch-size index */
    int *arms;              /* batch-size indices that are arms, ascending */
    int n_arms;
    long window;            /* 0 = all observations */
    long explore;           /* fitted rewards an arm needs before sampling */
    ws_arm_post *post;      /* per batch-size index */
    unsigned char *stale;   /* per batch-size index: refit at next predict */
    long *order;            /* scratch: the exploration order, n_bs */
} ws_bandit;

int ws_bandit_init(ws_bandit *b, const ws_job *job, long window, long explore);
void ws_bandit_free(ws_bandit *b);
/* Record a reward for batch-size index i (any size, arm or not). */
int ws_bandit_observe(ws_bandit *b, int i, double reward);
/* Make the given batch-size indices the arms, ascending (set arms[] and
 * n_arms directly only before the first predict). */
void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n);
/* The rewards index i is fitted on: their count and where they start. */
long ws_bandit_fitted(const ws_bandit *b, int i, const double **rewards);
/* Mean and posterior precision of index i from its (windowed) rewards. */
void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec);
/* What predict samples for index i, from ws_bandit_posterior. */
ws_arm_post ws_bandit_post_of(const ws_bandit *b, int i);
/* Pick an arm; returns its batch-size index, or -1 when a host draw
 * fails (out of memory). */
int ws_bandit_predict(ws_bandit *b, const ws_host *host);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
