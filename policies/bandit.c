/* Gaussian Thompson sampling; see bandit.h. */
#include "bandit.h"

#include <math.h>
#include <stdlib.h>

int ws_bandit_init(ws_bandit *b, const ws_job *job, long window, long explore)
{
    b->n_bs = job->n_bs;
    b->window = window;
    b->explore = explore;
    b->n_arms = 0;
    b->stats = calloc((size_t)job->n_bs, sizeof *b->stats);
    b->arms = calloc((size_t)job->n_bs, sizeof *b->arms);
    b->theta = calloc((size_t)job->n_bs, sizeof *b->theta);
    b->cold = calloc((size_t)job->n_bs, sizeof *b->cold);
    return b->stats && b->arms && b->theta && b->cold ? 0 : -1;
}

void ws_bandit_free(ws_bandit *b)
{
    if (b->stats)
        for (int i = 0; i < b->n_bs; i++) free(b->stats[i].rewards);
    free(b->stats);
    free(b->arms);
    free(b->theta);
    free(b->cold);
    b->stats = NULL;
    b->arms = NULL;
    b->theta = NULL;
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
    return 0;
}

void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n)
{
    for (int k = 0; k < n; k++) b->arms[k] = idx[k];
    b->n_arms = n;
}

void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec)
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

int ws_bandit_predict(ws_bandit *b, const ws_host *host)
{
    int n_cold = 0;
    for (int k = 0; k < b->n_arms; k++)
        if (b->stats[b->arms[k]].n < b->explore) b->cold[n_cold++] = b->arms[k];
    if (n_cold)
        return b->cold[host->uniform_int(host->ctx, (unsigned long)n_cold)];
    int best = b->arms[0];
    double best_theta = -INFINITY;
    for (int k = 0; k < b->n_arms; k++) {
        double mean, prec;
        ws_bandit_posterior(b, b->arms[k], &mean, &prec);
        double theta = isinf(prec) ? mean
                                   : mean + host->gaussian(host->ctx, sqrt(1.0 / prec));
        if (theta > best_theta || k == 0) {
            best_theta = theta;
            best = b->arms[k];
        }
    }
    return best;
}
