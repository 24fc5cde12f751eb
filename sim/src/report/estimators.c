/*
 * The estimators of an energy saving; see wattsim/estimators.h.
 *
 *   ws_est_add / ws_est_end   one simulation's runs -> ws_est_sim: sums per
 *                             recurrence (one array of the simulation's
 *                             length), tries per batch size, and the last
 *                             recurrence with a first or second try
 *   ws_est_saving             the five estimators over seeds
 *   ws_est_cost_of            the cost analysis (exploration against the
 *                             per-recurrence saving, break-even recurrence)
 */
#include "wattsim/estimators.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/config.h"     /* WS_MAX_RECURRENCES */
#include "wattsim/sweep.h"      /* ws_steady_count, ws_ci95 */

void ws_est_begin(ws_est_reducer *r)
{
    r->n = 0;
    r->n_bs = 0;
    r->t = 0;
    r->explore_end = 0;
}

static int grow(void **p, size_t size, size_t want, size_t *cap)
{
    if (want <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < want) n *= 2;
    void *q = realloc(*p, n * size);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

int ws_est_add(ws_est_reducer *r, long rec, int bs, double energy_j, double time_s,
               double cost)
{
    if (rec < 1 || rec > WS_MAX_RECURRENCES) return -1;
    if (rec > r->n) {
        size_t cap = (size_t)r->cap, ccap = (size_t)r->cap;
        if (grow((void **)&r->e, sizeof *r->e, (size_t)rec, &cap)
            || grow((void **)&r->c, sizeof *r->c, (size_t)rec, &ccap))
            return -2;
        r->cap = (long)(cap < ccap ? cap : ccap);
        for (long i = r->n; i < rec; i++) r->e[i] = r->c[i] = 0;
        r->n = rec;
    }
    r->e[rec - 1] += energy_j;
    r->c[rec - 1] += cost;
    r->t += time_s;
    size_t k = 0;
    while (k < r->n_bs && r->bs[k] != bs) k++;
    if (k == r->n_bs) {
        if (k == WS_EST_MAX_BS) return -1;
        size_t a = r->cap_bs, b = r->cap_bs;
        if (grow((void **)&r->bs, sizeof *r->bs, k + 1, &a)
            || grow((void **)&r->tries, sizeof *r->tries, k + 1, &b))
            return -2;
        r->cap_bs = a < b ? a : b;
        r->bs[k] = bs;
        r->tries[k] = 0;
        r->n_bs++;
    }
    if (++r->tries[k] <= WS_EST_PRUNING_ROUNDS && rec > r->explore_end) r->explore_end = rec;
    return 0;
}

void ws_est_end(ws_est_reducer *r, ws_est_sim *o)
{
    long R = r->n, k10 = R < WS_EST_LAST_K ? R : WS_EST_LAST_K, kp = ws_steady_count(R);
    memset(o, 0, sizeof *o);
    o->R = R;
    o->t = r->t;
    o->explore_end = r->explore_end;
    for (long i = 0; i < R; i++) {
        o->e += r->e[i];
        o->c += r->c[i];
        if (i >= R - k10) o->e_last10 += r->e[i];
        if (i >= R - kp) o->e_lastpct += r->e[i];
        if (i < r->explore_end) o->c_explore += r->c[i];
        else { o->e_post += r->e[i]; o->c_post += r->c[i]; }
    }
    ws_est_begin(r);
}

void ws_est_free(ws_est_reducer *r)
{
    free(r->e);
    free(r->c);
    free(r->bs);
    free(r->tries);
    memset(r, 0, sizeof *r);
}

const char *ws_est_name(ws_estimator k)
{
    switch (k) {
    case WS_EST_MEAN_TOTAL: return "total ETA, mean of per-seed savings";
    case WS_EST_RATIO_TOTAL: return "total ETA, ratio of sums";
    case WS_EST_LAST10: return "steady state, last 10 recurrences, ratio of sums";
    case WS_EST_LAST10PCT: return "steady state, last 10 % of recurrences, ratio of sums";
    case WS_EST_POST_EXPLORE: return "after exploration, ratio of sums";
    default: return "?";
    }
}

/* 100 * (1 - a / b), NAN unless b > 0. */
static double pct(double a, double b)
{
    return b > 0 && isfinite(a) ? 100 * (1 - a / b) : NAN;
}

double ws_est_saving(ws_estimator k, const ws_est_sim *z, const ws_est_sim *d, size_t n)
{
    if (!n) return NAN;
    double a = 0, b = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        switch (k) {
        case WS_EST_MEAN_TOTAL: a += pct(z[i].e, d[i].e); break;
        case WS_EST_RATIO_TOTAL: a += z[i].e; b += d[i].e; break;
        case WS_EST_LAST10: a += z[i].e_last10; b += d[i].e_last10; break;
        case WS_EST_LAST10PCT: a += z[i].e_lastpct; b += d[i].e_lastpct; break;
        case WS_EST_POST_EXPLORE:
            a += z[i].e_post;
            na += (double)(z[i].R - z[i].explore_end);
            b += d[i].e;
            nb += (double)d[i].R;
            break;
        default: return NAN;
        }
    }
    if (k == WS_EST_MEAN_TOTAL) return a / (double)n;
    if (k == WS_EST_POST_EXPLORE) return na > 0 && nb > 0 ? pct(a / na, b / nb) : NAN;
    return pct(a, b);
}

void ws_est_cost_of(const ws_est_sim *z, const ws_est_sim *d, size_t n, ws_est_cost *o)
{
    double *sv = n ? malloc(n * sizeof *sv) : NULL;
    double cz = 0, cd = 0, rd = 0, xe = 0, xc = 0, cp = 0, np = 0;
    memset(o, 0, sizeof *o);
    o->R = n ? z[0].R : 0;
    for (size_t i = 0; i < n; i++) {
        cz += z[i].c;
        cd += d[i].c;
        rd += (double)d[i].R;
        xe += (double)z[i].explore_end;
        xc += z[i].c_explore;
        cp += z[i].c_post;
        np += (double)(z[i].R - z[i].explore_end);
        if (sv) sv[i] = pct(z[i].c, d[i].c);
    }
    double dn = n ? (double)n : NAN, per_d = rd > 0 ? cd / rd : NAN;
    o->cost_z = cz / dn;
    o->cost_d = cd / dn;
    if (sv) ws_ci95(sv, n, &o->saving_pct, &o->saving_lo, &o->saving_hi);
    else o->saving_pct = o->saving_lo = o->saving_hi = NAN;
    free(sv);
    o->explore_end = xe / dn;
    o->explore_extra = (xc - per_d * xe) / dn;
    o->per_rec_saving = np > 0 ? per_d - cp / np : NAN;
    o->break_even = isnan(o->per_rec_saving) ? NAN
                    : !(o->per_rec_saving > 0) ? INFINITY
                    : o->explore_end + o->explore_extra / o->per_rec_saving;
}
