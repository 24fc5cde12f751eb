/*
 * numpy's and pandas' float64 reductions, in their summation order, for
 * code that must give the published Zeus simulator's numbers to the last
 * bit: its decisions compare means and variances of costs, and a sum
 * taken in another order can differ in the last bits and flip a close
 * comparison. Header-only (C17, no other header than <stddef.h>), so that
 * policies built against wattsim/policy.h alone can use it too.
 *
 *   ws_np_sum(a, n)          np.sum(a) / a.sum() (numpy 1.24)
 *   ws_np_mean(a, n)         np.mean(a)
 *   ws_np_var(a, n)          np.var(a)           (ddof 0, two passes)
 *   ws_pd_group_mean(a, n)   pandas 1.5 df.groupby(...).mean() of one
 *                            group's values in row order
 *   ws_np_pairwise(a, n)     numpy's pairwise summation itself
 *
 * numpy sums float64 pairwise: fewer than 8 terms one after another from
 * -0.0; up to 128 in 8 interleaved accumulators (term i into i mod 8),
 * combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
 * last n mod 8 terms one by one; more than 128 split at half of n rounded
 * down to a multiple of 8, each half summed so, then added. A reduction
 * starts from the identity 0.0 and adds the pairwise sum of each chunk of
 * 8192 terms in turn (numpy's default buffer size: its iterator hands the
 * inner loop at most that many). np.var subtracts the mean from every
 * term, squares, and sums the same way; both divide by n.
 * pandas' group mean is a Kahan-compensated running sum over the group's
 * rows divided by their count.
 *
 * Compile without floating-point contraction (-ffp-contract=off; the
 * default of GCC in ISO C mode): a fused multiply-add in the variance's
 * sum of squares would change its last bits.
 */
#ifndef WATTSIM_NPREDUCE_H
#define WATTSIM_NPREDUCE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The pairwise sum of TERM(i) for i in [0, n) (one body for the plain
 * sum and the sum of squared deviations). */
#define WS__NP_PAIRWISE(name, TERM, ...)                                      \
    static inline double name(const double *a, size_t n, __VA_ARGS__)        \
    {                                                                         \
        if (n < 8) {                                                          \
            double res = -0.0;                                                \
            for (size_t i = 0; i < n; i++) res += TERM(i);                    \
            return res;                                                       \
        }                                                                     \
        if (n <= 128) {                                                       \
            double r[8];                                                      \
            size_t i;                                                         \
            for (int j = 0; j < 8; j++) r[j] = TERM((size_t)j);               \
            for (i = 8; i < n - n % 8; i += 8)                                \
                for (int j = 0; j < 8; j++) r[j] += TERM(i + (size_t)j);      \
            double res = ((r[0] + r[1]) + (r[2] + r[3]))                      \
                         + ((r[4] + r[5]) + (r[6] + r[7]));                   \
            for (; i < n; i++) res += TERM(i);                                \
            return res;                                                       \
        }                                                                     \
        size_t n2 = n / 2;                                                    \
        n2 -= n2 % 8;                                                         \
        return name(a, n2, WS__NP_ARGS) + name(a + n2, n - n2, WS__NP_ARGS);  \
    }

#define WS__NP_TERM_PLAIN(i) (a[(i)])
#define WS__NP_ARGS unused
WS__NP_PAIRWISE(ws__np_pairwise, WS__NP_TERM_PLAIN, int unused)
#undef WS__NP_ARGS
#define WS__NP_TERM_SQDEV(i) ((a[(i)] - m) * (a[(i)] - m))
#define WS__NP_ARGS m
WS__NP_PAIRWISE(ws__np_pairwise_sqdev, WS__NP_TERM_SQDEV, double m)
#undef WS__NP_ARGS

static inline double ws_np_pairwise(const double *a, size_t n)
{
    return ws__np_pairwise(a, n, 0);
}

/* numpy's ufunc buffer size (np.getbufsize()). */
#define WS_NP_BUFSIZE 8192

static inline double ws_np_sum(const double *a, size_t n)
{
    double res = 0.0;
    for (size_t at = 0; at < n; at += WS_NP_BUFSIZE)
        res += ws__np_pairwise(a + at, n - at < WS_NP_BUFSIZE ? n - at : WS_NP_BUFSIZE, 0);
    return res;
}

static inline double ws_np_mean(const double *a, size_t n)
{
    return ws_np_sum(a, n) / (double)n;
}

static inline double ws_np_var(const double *a, size_t n)
{
    const double m = ws_np_mean(a, n);
    double res = 0.0;
    for (size_t at = 0; at < n; at += WS_NP_BUFSIZE)
        res += ws__np_pairwise_sqdev(a + at, n - at < WS_NP_BUFSIZE ? n - at : WS_NP_BUFSIZE, m);
    return res / (double)n;
}

static inline double ws_pd_group_mean(const double *a, size_t n)
{
    double sum = 0.0, comp = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double y = a[i] - comp;
        const double t = sum + y;
        comp = t - sum - y;
        sum = t;
    }
    return sum / (double)n;
}

#ifdef __cplusplus
}
#endif
#endif /* WATTSIM_NPREDUCE_H */
