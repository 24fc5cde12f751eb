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
 * everything seen so far: 8 bytes per observation for the simulation's
 * life, as numpy's variance needs the rewards themselves. An arm's posterior changes only when the arm is
 * observed: each observation marks it, and the next predict refits the
 * marked arms once (the same arithmetic whenever it is done); the other
 * arms' posteriors are reused.
 *
 * Speed without losing a bit: numpy's variance takes two passes over an
 * arm's rewards, O(n) per observation. But only the argmax of the thetas
 * matters, and the draws do not depend on the posteriors (theta = mean +
 * sd * z, z a standard normal). So a refit first bounds numpy's mean and
 * sd from running sums of the rewards, their squares and magnitudes, in
 * O(1), with rigorous error bounds for every rounding on the way
 * (numpy's pairwise sums, the divisions, the square root); predict draws
 * the z's, bounds each theta, and when one arm's interval is above all
 * others that arm wins, exactly as the exact values would have it. Only
 * when intervals overlap (a near tie, a variance too small to bound away
 * from 0, a window shorter than the history) are the arms concerned
 * refitted exactly, numpy's arithmetic on their rewards.
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
    /* Running sums, left to right: of the rewards' magnitudes, and of the
     * rewards less the first one (shift), their magnitudes and squares. */
    double abs_sum, shift, sum_y, abs_y, sq_y;
} ws_arm_stats;

/* An arm's posterior as predict samples it: theta = mean + sd * z. When
 * exact, mean and sd are numpy's values; else numpy's mean is within
 * mean_err of mean, its sd within [sd_lo, sd_hi]. m_lo, m_hi, s_lo, s_hi:
 * the same widened for every rounding of theta and of its bounds, so
 * that m_lo + s * z and m_hi + s' * z (s, s' the s_lo, s_hi the sign of z
 * calls for) bound numpy's theta (ws_bandit_theta_bounds). */
typedef struct ws_arm_post {
    double mean, sd;
    double mean_err, sd_lo, sd_hi;
    double m_lo, m_hi, s_lo, s_hi;
    int exact;
} ws_arm_post;

/* How predict decided (for the tests and the curious). */
typedef struct ws_bandit_counts {
    unsigned long bounded_refits, exact_refits;   /* refits by method */
    unsigned long decided, exact_decisions;       /* Thompson argmaxes: by
                                                     bounds, after exact refits */
} ws_bandit_counts;

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
    double *z, *lo, *hi;    /* scratch: the standard normals and the
                               thetas' bounds, n_bs each */
    int warm;               /* every arm has `explore` fitted rewards */
    ws_bandit_counts counts;
} ws_bandit;

int ws_bandit_init(ws_bandit *b, const ws_job *job, long window, long explore);
void ws_bandit_free(ws_bandit *b);
/* Record a reward for batch-size index i (any size, arm or not). */
int ws_bandit_observe(ws_bandit *b, int i, double reward);
/* Make the given batch-size indices the arms, ascending (or set arms[]
 * and n_arms directly, and warm to 0). */
void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n);
/* The rewards index i is fitted on: their count and where they start. */
long ws_bandit_fitted(const ws_bandit *b, int i, const double **rewards);
/* Mean and posterior precision of index i from its (windowed) rewards,
 * numpy's arithmetic. */
void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec);
/* What predict samples for index i: exact (from ws_bandit_posterior), or
 * the bounds from the running sums (exact = 0), when they are conclusive. */
ws_arm_post ws_bandit_post_exact(const ws_bandit *b, int i);
int ws_bandit_post_bounds(const ws_bandit *b, int i, ws_arm_post *out);
/* The interval of theta = mean + sd * z for any mean and sd within p's
 * bounds, numpy's roundings included. */
void ws_bandit_theta_bounds(const ws_arm_post *p, double z, double *lo, double *hi);
/* Pick an arm; returns its batch-size index, or -1 when a host draw
 * fails (out of memory). */
int ws_bandit_predict(ws_bandit *b, const ws_host *host);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
