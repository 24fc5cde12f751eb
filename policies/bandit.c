/* Gaussian Thompson sampling; see bandit.h. */
#include "bandit.h"

#include <math.h>
#include <stdlib.h>
#include <wattsim/npreduce.h>

/* GaussianTS's prior, as Zeus' BSOs construct it. */
static const double PRIOR_MEAN = 0.0, PRIOR_PREC = 0.0;

int ws_bandit_init(ws_bandit *b, const ws_job *job, long window, long explore)
{
    const size_t n = (size_t)job->n_bs;
    b->n_bs = job->n_bs;
    b->window = window;
    b->explore = explore;
    b->n_arms = 0;
    b->stats = calloc(n, sizeof *b->stats);
    b->arms = calloc(n, sizeof *b->arms);
    b->post = calloc(n, sizeof *b->post);
    b->stale = calloc(n, sizeof *b->stale);
    b->order = calloc(n, sizeof *b->order);
    if (!b->stats || !b->arms || !b->post || !b->stale || !b->order) return -1;
    /* Unobserved: the prior, precision 0 (sd infinite). */
    for (size_t i = 0; i < n; i++) b->stale[i] = 1;
    return 0;
}

void ws_bandit_free(ws_bandit *b)
{
    if (b->stats)
        for (int i = 0; i < b->n_bs; i++) free(b->stats[i].rewards);
    free(b->stats);
    free(b->arms);
    free(b->post);
    free(b->stale);
    free(b->order);
    b->stats = NULL;
    b->arms = NULL;
    b->post = NULL;
    b->stale = NULL;
    b->order = NULL;
}

int ws_bandit_observe(ws_bandit *b, int i, double reward)
{
    ws_arm_stats *s = &b->stats[i];
    if (s->n == s->cap) {
        const long cap = s->cap ? s->cap * 2 : 16;
        double *p = realloc(s->rewards, (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->rewards = p;
        s->cap = cap;
    }
    s->rewards[s->n++] = reward;
    b->stale[i] = 1;
    return 0;
}

void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n)
{
    for (int k = 0; k < n; k++) b->arms[k] = idx[k];
    b->n_arms = n;
}

long ws_bandit_fitted(const ws_bandit *b, int i, const double **rewards)
{
    const ws_arm_stats *s = &b->stats[i];
    const long n = b->window > 0 && s->n > b->window ? b->window : s->n;
    if (rewards) *rewards = s->rewards + (s->n - n);
    return n;
}

/* GaussianTS.fit_arm(arm, rewards, reset=True) with the precision the
 * BSO learnt, np.reciprocal(np.var(rewards)). */
static inline void posterior(const ws_bandit *b, int i, double *mean, double *prec)
{
    const double *r;
    const long n = ws_bandit_fitted(b, i, &r);
    if (n == 0) {
        *mean = PRIOR_MEAN;
        *prec = PRIOR_PREC;
        return;
    }
    const double rp = 1.0 / ws_np_var(r, (size_t)n);
    if (isinf(rp)) {
        *prec = INFINITY;
        *mean = ws_np_mean(r, (size_t)n);
    } else {
        *prec = PRIOR_PREC + (double)n * rp;
        *mean = (PRIOR_PREC * PRIOR_MEAN + rp * ws_np_sum(r, (size_t)n)) / *prec;
    }
}

void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec)
{
    posterior(b, i, mean, prec);
}

static inline ws_arm_post post_of(const ws_bandit *b, int i)
{
    double mean, prec;
    posterior(b, i, &mean, &prec);
    /* np.sqrt(np.reciprocal(prec)): 0 for infinite precision. */
    return (ws_arm_post){mean, sqrt(1.0 / prec)};
}

ws_arm_post ws_bandit_post_of(const ws_bandit *b, int i) { return post_of(b, i); }

int ws_bandit_predict(ws_bandit *b, const ws_host *host)
{
    const int n = b->n_arms;
    const int *const arms = b->arms;
    if (n == 0) return -1;
    /* The exploration order, drawn whether or not an arm is cold. */
    if (host->choice(host->ctx, n, n, b->order)) return -1;
    for (int k = 0; k < n; k++) {
        const int a = arms[b->order[k]];
        if (ws_bandit_fitted(b, a, NULL) < b->explore) return a;
    }
    /* Thompson sampling: refit the arms observed since the last predict,
     * then one normal per arm, ascending; the first of the largest wins
     * (the first arm is taken whatever its theta, even NaN). */
    for (int k = 0; k < n; k++)
        if (b->stale[arms[k]]) {
            b->post[arms[k]] = post_of(b, arms[k]);
            b->stale[arms[k]] = 0;
        }
    double (*const normal)(void *, double, double) = host->normal;
    void *const hctx = host->ctx;
    const ws_arm_post *const post = b->post;
    int best = arms[0];
    double best_theta = normal(hctx, post[best].mean, post[best].sd);
    for (int k = 1; k < n; k++) {
        const ws_arm_post a = post[arms[k]];
        const double theta = normal(hctx, a.mean, a.sd);
        if (theta > best_theta) {
            best = arms[k];
            best_theta = theta;
        }
    }
    return best;
}
