/*
 * The estimators of an energy saving (paper.md, docs/commands.md
 * "Reproducing the paper"): the same simulations give different numbers
 * depending on which recurrences are counted and how seeds are combined.
 *
 * A simulation's runs (a sweep's history.csv, every try of every
 * recurrence) are reduced, as they stream by, to a ws_est_sim: totals, the
 * ETA of the last 10 recurrences and of the last 10 % (ws_steady_count),
 * and the end of the exploration phase, with the ETA and cost after it.
 * Exploration is Zeus's pruning: each of its rounds (the paper's 2) tries
 * a batch size at most once, and the Thompson-sampling bandit afterwards
 * picks only sizes that reached in both, so every pruning try is the first
 * or second try of its batch size and every later one the third or more.
 * The exploration phase ends at the last recurrence with a try that is the
 * first or second of its batch size.
 *
 * Then, for a subject z (zeus+jit) and a reference d (default) over the
 * same n seeds (z[i] and d[i] of one seed), ws_est_saving gives the ETA
 * saving in % under one estimator:
 *
 *   MEAN_TOTAL   total ETA, mean over seeds of 1 - z.e / d.e
 *   RATIO_TOTAL  total ETA, ratio of sums: 1 - sum z.e / sum d.e
 *   LAST10       steady state, the last 10 recurrences: 1 - sum z.e_last10
 *                / sum d.e_last10 (all of them when fewer)
 *   LAST10PCT    steady state, the last 10 % (at least 5), ratio of sums
 *   POST_EXPLORE after exploration: 1 - (sum z.e_post / sum z.n_post) /
 *                (sum d.e / sum d.R): ETA per recurrence of z after its
 *                exploration over the reference's per recurrence overall
 *                (the default repeats one knob: it has no exploration)
 *
 * ws_est_cost gives the cost analysis: where z's total cost is above d's,
 * how much z's exploration costs beyond d's over the same recurrences, what
 * z saves per recurrence after it, and the recurrence where the two meet.
 * Nothing here reads or writes a file.
 */
#ifndef WATTSIM_ESTIMATORS_H
#define WATTSIM_ESTIMATORS_H

#include <stddef.h>

/* The pruning rounds of Zeus's batch-size optimizer (the paper's 2). */
#define WS_EST_PRUNING_ROUNDS 2
/* The fixed steady window of LAST10. */
#define WS_EST_LAST_K 10

typedef struct ws_est_sim {
    long R;                    /* recurrences */
    double e, t, c;            /* ETA (J), TTA (s), cost over all of them */
    double e_last10;           /* ETA of the last min(10, R) recurrences */
    double e_lastpct;          /* ETA of the last ws_steady_count(R) */
    long explore_end;          /* last recurrence of the exploration */
    double c_explore;          /* cost of recurrences 1..explore_end */
    double e_post, c_post;     /* ETA and cost of the recurrences after it */
} ws_est_sim;

/* The reduction of one simulation's runs, fed in the order they ran. */
typedef struct ws_est_reducer {
    double *e, *c;             /* per recurrence, 1-based: [r - 1] */
    double t;
    long n, cap;               /* recurrences seen (the largest), room */
    int *bs, *tries;           /* batch sizes seen and their tries */
    size_t n_bs, cap_bs;
    long explore_end;
} ws_est_reducer;

void ws_est_begin(ws_est_reducer *r);
/* The most batch sizes one simulation may try (a job's list is far
 * shorter): a file from elsewhere cannot make the search quadratic. */
#define WS_EST_MAX_BS 1024

/* One try of recurrence `rec` (1..WS_MAX_RECURRENCES) at batch size bs.
 * -1: rec out of range or more than WS_EST_MAX_BS batch sizes; -2: out of
 * memory. */
int ws_est_add(ws_est_reducer *r, long rec, int bs, double energy_j, double time_s,
               double cost);
/* The simulation's summary; the reducer is ready for the next (begin). */
void ws_est_end(ws_est_reducer *r, ws_est_sim *out);
void ws_est_free(ws_est_reducer *r);

typedef enum ws_estimator {
    WS_EST_MEAN_TOTAL,
    WS_EST_RATIO_TOTAL,
    WS_EST_LAST10,
    WS_EST_LAST10PCT,
    WS_EST_POST_EXPLORE,
    WS_EST_N
} ws_estimator;

/* Its name as a column header ("total ETA, mean of per-seed savings"). */
const char *ws_est_name(ws_estimator k);
/* The saving of z over d in % (NAN when n is 0 or a denominator is 0). */
double ws_est_saving(ws_estimator k, const ws_est_sim *z, const ws_est_sim *d, size_t n);

typedef struct ws_est_cost {
    double cost_z, cost_d;     /* mean total cost over seeds */
    double saving_pct;         /* mean over seeds of 1 - z.c / d.c, in % */
    double saving_lo, saving_hi;   /* its 95 % CI (NAN with one seed) */
    double explore_end;        /* mean over seeds */
    double explore_extra;      /* mean over seeds of z's exploration cost minus
                                  d's per-recurrence cost times its length */
    double per_rec_saving;     /* d's cost per recurrence minus z's after its
                                  exploration (ratio of sums over seeds) */
    double break_even;         /* explore_end + explore_extra / per_rec_saving:
                                  the recurrence from which z's cumulative
                                  cost is below d's; INFINITY when z saves
                                  nothing per recurrence after exploring */
    long R;                    /* recurrences (of the first seed) */
} ws_est_cost;

void ws_est_cost_of(const ws_est_sim *z, const ws_est_sim *d, size_t n, ws_est_cost *out);

#endif
