/* Gaussian Thompson sampling; see bandit.h. */
#include "bandit.h"

#include <math.h>
#include <stdlib.h>

static inline ws_arm_post post_of(const ws_bandit *b, int i);

int ws_bandit_init(ws_bandit *b, const ws_job *job, long window, long explore)
{
    b->n_bs = job->n_bs;
    b->window = window;
    b->explore = explore;
    b->n_arms = 0;
    b->stats = calloc((size_t)job->n_bs, sizeof *b->stats);
    b->arms = calloc((size_t)job->n_bs, sizeof *b->arms);
    /* All zero: no observations, mean 0 and infinite precision (sd 0). */
    b->post = calloc((size_t)job->n_bs, sizeof *b->post);
    b->warm = 0;
    b->stale = -1;
    b->cold = calloc((size_t)job->n_bs, sizeof *b->cold);
    return b->stats && b->arms && b->post && b->cold ? 0 : -1;
}

void ws_bandit_free(ws_bandit *b)
{
    if (b->stats)
        for (int i = 0; i < b->n_bs; i++) free(b->stats[i].rewards);
    free(b->stats);
    free(b->arms);
    free(b->post);
    free(b->cold);
    b->stats = NULL;
    b->arms = NULL;
    b->post = NULL;
    b->cold = NULL;
}

int ws_bandit_observe(ws_bandit *b, int i, double reward)
{
    ws_arm_stats *s = &b->stats[i];
    if (b->window > 0) {
        if (s->n == s->cap) {
            long cap = s->cap ? s->cap * 2 : 16;
            double *p = realloc(s->rewards, (size_t)cap * sizeof *p);
            if (!p) return -1;
            s->rewards = p;
            s->cap = cap;
        }
        s->rewards[s->n] = reward;
    }
    s->n++;
    double d = reward - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * (reward - s->mean);
    /* Refreshed at the next predict (one index may wait). */
    if (b->stale >= 0 && b->stale != i) b->post[b->stale] = post_of(b, b->stale);
    b->stale = i;
    return 0;
}

void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n)
{
    for (int k = 0; k < n; k++) b->arms[k] = idx[k];
    b->n_arms = n;
    b->warm = 0;
}

/* Inlined into post_of: no call through the PLT on the hot path. */
static inline void posterior(const ws_bandit *b, int i, double *mean, double *prec)
{
    const ws_arm_stats *s = &b->stats[i];
    double m, var;
    long n;
    if (b->window > 0 && s->n > b->window) {
        /* Two-pass over the window, as numpy computes mean and var. */
        n = b->window;
        const double *r = s->rewards + (s->n - n);
        double sum = 0;
        for (long k = 0; k < n; k++) sum += r[k];
        m = sum / (double)n;
        double ss = 0;
        for (long k = 0; k < n; k++) ss += (r[k] - m) * (r[k] - m);
        var = ss / (double)n;
    } else {
        n = s->n;
        m = s->mean;
        var = n ? s->m2 / (double)n : 0;
    }
    *mean = m;
    *prec = var > 0 ? (double)n / var : INFINITY;
}

void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec)
{
    posterior(b, i, mean, prec);
}

static inline ws_arm_post post_of(const ws_bandit *b, int i)
{
    double mean, prec;
    posterior(b, i, &mean, &prec);
    /* prec is INFINITY or n / var with var > 0, so a finite prec is at most
     * DBL_MAX and 1 / prec > 0: sd == 0 marks exactly the infinite ones. */
    return (ws_arm_post){mean, isinf(prec) ? 0.0 : sqrt(1.0 / prec)};
}

ws_arm_post ws_bandit_post_of(const ws_bandit *b, int i) { return post_of(b, i); }

int ws_bandit_predict(ws_bandit *b, const ws_host *host)
{
    if (!b->warm) {
        int n_cold = 0;
        for (int k = 0; k < b->n_arms; k++)
            if (b->stats[b->arms[k]].n < b->explore) b->cold[n_cold++] = b->arms[k];
        if (n_cold)
            return b->cold[host->uniform_int(host->ctx, (unsigned long)n_cold)];
        b->warm = 1;
    }
    /* The arm observed last: its posterior is computed here, not in
     * observe, because its chain of three divisions and a square root
     * (about 60 cycles) then overlaps with the draws: a draw needs its sd
     * only for its last multiplication. */
    if (b->stale >= 0) {
        b->post[b->stale] = post_of(b, b->stale);
        b->stale = -1;
    }
    /* Thompson sampling: the posteriors are ready. The
     * first arm is taken whatever its theta (even NaN); a later one when
     * strictly greater, so ties go to the first. */
    double (*const gaussian)(void *, double) = host->gaussian;
    void *const hctx = host->ctx;
    const ws_arm_post *const post = b->post;
    const int *const arms = b->arms;
    int best = arms[0];
    if (b->n_arms == 0) return best;
    ws_arm_post a = post[best];
    double best_theta = a.sd == 0 ? a.mean : a.mean + gaussian(hctx, a.sd);
    for (int k = 1; k < b->n_arms; k++) {
        a = post[arms[k]];
        const double theta = a.sd == 0 ? a.mean : a.mean + gaussian(hctx, a.sd);
        if (theta > best_theta) {
            best = arms[k];
            best_theta = theta;
        }
    }
    return best;
}
