/* Gaussian Thompson sampling; see bandit.h. */
#include "bandit.h"

#include <float.h>
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
    b->warm = 0;
    b->counts = (ws_bandit_counts){0};
    /* One zeroed block for every per-size array (a bandit is made for
     * every simulation: one allocation, not six), widest members first so
     * that each array is aligned. */
    const size_t sz_stats = n * sizeof *b->stats, sz_post = n * sizeof *b->post,
                 sz_z = 3 * n * sizeof *b->z, sz_order = n * sizeof *b->order,
                 sz_arms = n * sizeof *b->arms;
    char *block = calloc(1, sz_stats + sz_post + sz_z + sz_order + sz_arms + n + 1);
    if (!block) {
        b->stats = NULL;
        b->post = NULL;
        return -1;
    }
    b->stats = (ws_arm_stats *)(void *)block;
    b->post = (ws_arm_post *)(void *)(block + sz_stats);
    b->z = (double *)(void *)(block + sz_stats + sz_post);
    b->order = (long *)(void *)(block + sz_stats + sz_post + sz_z);
    b->arms = (int *)(void *)(block + sz_stats + sz_post + sz_z + sz_order);
    b->stale = (unsigned char *)(block + sz_stats + sz_post + sz_z + sz_order + sz_arms);
    b->lo = b->z + n;
    b->hi = b->z + 2 * n;
    /* Unobserved: the prior, precision 0 (sd infinite). */
    for (size_t i = 0; i < n; i++) b->stale[i] = 1;
    return 0;
}

void ws_bandit_free(ws_bandit *b)
{
    if (b->stats)
        for (int i = 0; i < b->n_bs; i++) free(b->stats[i].rewards);
    free(b->stats);          /* the block of every array */
    b->stats = NULL;
    b->arms = NULL;
    b->post = NULL;
    b->stale = NULL;
    b->order = NULL;
    b->z = b->lo = b->hi = NULL;
}

int ws_bandit_observe(ws_bandit *b, int i, double reward)
{
    ws_arm_stats *s = &b->stats[i];
    if (s->n == s->cap) {
        const long cap = s->cap ? s->cap * 2 : 64;
        double *p = realloc(s->rewards, (size_t)cap * sizeof *p);
        if (!p) return -1;
        s->rewards = p;
        s->cap = cap;
    }
    if (s->n == 0) s->shift = reward;
    s->rewards[s->n++] = reward;
    const double y = reward - s->shift;
    s->abs_sum += fabs(reward);
    s->sum_y += y;
    s->abs_y += fabs(y);
    s->sq_y += y * y;
    b->stale[i] = 1;
    return 0;
}

void ws_bandit_set_arms(ws_bandit *b, const int *idx, int n)
{
    for (int k = 0; k < n; k++) b->arms[k] = idx[k];
    b->n_arms = n;
    b->warm = 0;
}

long ws_bandit_fitted(const ws_bandit *b, int i, const double **rewards)
{
    const ws_arm_stats *s = &b->stats[i];
    const long n = b->window > 0 && s->n > b->window ? b->window : s->n;
    if (rewards) *rewards = s->rewards + (s->n - n);
    return n;
}

/* ------------------------------------------------------------ exact */

/* GaussianTS.fit_arm(arm, rewards, reset=True) with the precision the
 * BSO learnt, np.reciprocal(np.var(rewards)). */
void ws_bandit_posterior(const ws_bandit *b, int i, double *mean, double *prec)
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

static ws_arm_post widened(double mean, double sd, double mean_err, double sd_lo,
                           double sd_hi, int exact);

ws_arm_post ws_bandit_post_exact(const ws_bandit *b, int i)
{
    double mean, prec;
    ws_bandit_posterior(b, i, &mean, &prec);
    /* np.sqrt(np.reciprocal(prec)): 0 for infinite precision. */
    const double sd = sqrt(1.0 / prec);
    return widened(mean, sd, 0.0, sd, sd, 1);
}

/* ------------------------------------------------------------ bounds
 *
 * u = 2^-53, the unit roundoff; every bound below carries a margin
 * (factors of 2, a few u per operation) for the rounding of its own
 * arithmetic. With n fitted rewards x, S = sum x, A = sum |x|, and, for
 * the shift c (the first reward) and y = x - c, Y = sum y, B = sum |y|,
 * YY = sum y^2, the running sums in doubles (left to right; y rounded
 * once, its square once more) are within g = (n + 3) u (1.01) of them,
 * relative to A, B and YY.
 *
 * numpy's pairwise sum of x is within gl A of S, gl = L u (1.01), where
 * L bounds the additions a term goes through: 16 in an accumulator, 3
 * combining them, 7 in the tail, one per halving above 128 terms
 * (log2 n), one per 8192-term chunk, one for the identity:
 * L = 30 + log2 n + n / 8192. Its mean m = fl(sum / n) is within
 * e_m = (gl A + u |S|) / n of S / n. Its variance is fl(Q' / n), Q' the
 * pairwise sum of fl(fl(x - m)^2): within 3 u + gl of
 * sum (x - m)^2 = Q + n (S/n - m)^2, Q = YY - Y^2 / n (shift invariant;
 * from the sums within 3.2 g YY, as |Y| <= B and B^2 <= n YY, and small
 * against Q when c is near the mean: hence the shift). Then precision
 * n / var and mean (rp * sum) / (n * rp): the mean is numpy's sum / n
 * within 3 roundings, the sd sqrt(var / n) within 3. When the variance's
 * lower bound is not positive (too small for the sums to resolve, or 0:
 * infinite precision), a result would not be finite, or a window cuts the
 * history, there are no bounds: the refit is exact. */

#define U (DBL_EPSILON / 2)

int ws_bandit_post_bounds(const ws_bandit *b, int i, ws_arm_post *out)
{
    const ws_arm_stats *st = &b->stats[i];
    const long n = st->n;
    if (n < 2 || (b->window > 0 && n > b->window)) return -1;
    const double nd = (double)n;
    const double g = 1.01 * (nd + 3) * U;
    const double log2n = (double)(64 - __builtin_clzl((unsigned long)n));   /* >= log2 n */
    const double gl = 1.01 * (30.0 + log2n + nd / 8192.0) * U;
    const double a = st->abs_sum * (1.0 + g), bb = st->abs_y * (1.0 + g);
    const double y = st->sum_y, yy = st->sq_y;
    /* numpy's posterior mean: S / n within gl A / n and 3 roundings. */
    const double mean = st->shift + y / nd;
    const double mean_err = 2.0 * ((g + 2 * U) * bb / nd + gl * a / nd + 8 * U * fabs(mean));
    const double e_m = 2.0 * (gl * a / nd + 2 * U * fabs(mean));
    /* Q, then numpy's sum of squared deviations. */
    const double q = yy - y * y / nd, q_err = 2.0 * (3.2 * (g + 2 * U) * yy + 8 * U * yy);
    const double qn_lo = (q - q_err) * (1.0 - 2.0 * (gl + 4 * U));
    const double qn_hi = (q + q_err + nd * e_m * e_m) * (1.0 + 2.0 * (gl + 4 * U));
    if (!(qn_lo > 0) || !isfinite(qn_hi) || !isfinite(mean_err) || !isfinite(a)) return -1;
    /* var = fl(Q' / n); sd = sqrt(var / n), within 3 roundings. */
    const double var_lo = qn_lo / nd * (1.0 - 4 * U), var_hi = qn_hi / nd * (1.0 + 4 * U);
    /* numpy's reciprocal, precision and rp * sum must stay finite (else
     * its precision is infinite, or its mean not a number). */
    if (!(var_lo > DBL_MIN * 4) || !isfinite(4.0 * nd / var_lo) || !isfinite(4.0 * a / var_lo))
        return -1;
    const double sd_lo = sqrt(var_lo / nd) * (1.0 - 8 * U);
    const double sd_hi = sqrt(var_hi / nd) * (1.0 + 8 * U);
    *out = widened(mean, 0.5 * (sd_lo + sd_hi), mean_err, sd_lo, sd_hi, 0);
    return 0;
}

/* numpy's theta = fl(m + fl(s * z)) for m within mean_err of mean and s
 * in [sd_lo, sd_hi] is off m + s * z by at most u |s z| + u |theta|, and
 * a bound computed as fl(m' + fl(s' * z)) is off its exact value by at
 * most 2 u (|m'| + |s' z|): widening the mean by 6 u of its magnitude
 * (and the smallest normal, against underflow) and the scale by 6 u of
 * itself covers both, whatever z. */
static ws_arm_post widened(double mean, double sd, double mean_err, double sd_lo,
                           double sd_hi, int exact)
{
    const double m_slack = mean_err + 6 * U * (fabs(mean) + mean_err) + 4 * DBL_MIN;
    return (ws_arm_post){mean, sd, mean_err, sd_lo, sd_hi, mean - m_slack, mean + m_slack,
                         sd_lo * (1.0 - 6 * U), sd_hi * (1.0 + 6 * U), exact};
}

static inline void theta_bounds(const ws_arm_post *p, double z, double *lo, double *hi)
{
    const int pos = z >= 0;
    *lo = p->m_lo + (pos ? p->s_lo : p->s_hi) * z;
    *hi = p->m_hi + (pos ? p->s_hi : p->s_lo) * z;
}

void ws_bandit_theta_bounds(const ws_arm_post *p, double z, double *lo, double *hi)
{
    theta_bounds(p, z, lo, hi);
}

/* ------------------------------------------------------------ predict */

static void refit(ws_bandit *b, int i)
{
    if (ws_bandit_post_bounds(b, i, &b->post[i]) == 0) {
        b->counts.bounded_refits++;
    } else {
        b->post[i] = ws_bandit_post_exact(b, i);
        b->counts.exact_refits++;
    }
    b->stale[i] = 0;
}

int ws_bandit_predict(ws_bandit *b, const ws_host *host)
{
    const int n = b->n_arms;
    const int *const arms = b->arms;
    if (n == 0) return -1;
    /* The exploration order, drawn whether or not an arm is cold. Fitted
     * counts never fall, so once every arm is warm it stays so until the
     * arms change. */
    if (host->choice(host->ctx, n, n, b->order)) return -1;
    if (!b->warm) {
        for (int k = 0; k < n; k++) {
            const int a = arms[b->order[k]];
            if (ws_bandit_fitted(b, a, NULL) < b->explore) return a;
        }
        b->warm = 1;
    }
    /* Thompson sampling: one standard normal per arm, ascending (normal(0,
     * 1) is z, so mean + sd * it is numpy's normal(mean, sd) to the bit,
     * but for the sign of a zero). */
    double (*const normal)(void *, double, double) = host->normal;
    void *const hctx = host->ctx;
    double *const z = b->z;
    for (int k = 0; k < n; k++) z[k] = normal(hctx, 0.0, 1.0);
    for (int k = 0; k < n; k++)
        if (b->stale[arms[k]]) refit(b, arms[k]);
    /* The leader by bounds: the largest lower bound. It wins if every
     * other arm's upper bound is below it. */
    ws_arm_post *const post = b->post;
    double *const lo = b->lo, *const hi = b->hi;
    double best_lo = -INFINITY;
    int lead = -1, exact_all = 0;
    for (int k = 0; k < n; k++) {
        theta_bounds(&post[arms[k]], z[k], &lo[k], &hi[k]);
        if (!(lo[k] <= hi[k])) exact_all = 1;  /* NaN (an unobserved arm) */
        if (lead < 0 || lo[k] > best_lo) {
            best_lo = lo[k];
            lead = k;
        }
    }
    int overlap = 0;
    /* An earlier arm wins ties, a later one loses them. */
    for (int k = 0; k < n; k++)
        overlap |= k != lead && (k < lead ? hi[k] >= best_lo : hi[k] > best_lo);
    if (!overlap && !exact_all) {
        b->counts.decided++;
        return arms[lead];
    }
    /* Too close to call: the arms that may win, refitted exactly; the
     * others are below the leader's lower bound. The first of the largest
     * wins (the first arm whatever its theta, even NaN, as Python's max). */
    b->counts.exact_decisions++;
    int best = -1;
    double best_theta = 0;
    for (int k = 0; k < n; k++) {
        ws_arm_post *p = &post[arms[k]];
        if (!exact_all && hi[k] < best_lo) continue;
        if (!p->exact) *p = ws_bandit_post_exact(b, arms[k]);
        const double theta = p->mean + p->sd * z[k];
        if (best < 0 || theta > best_theta) {
            best = arms[k];
            best_theta = theta;
        }
    }
    return best;
}
