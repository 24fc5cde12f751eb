/*
 * The decisions of Zeus's batch-size optimizer *server*
 * (zeus/optimizer/batch_size/server/{optimizer,explorer,mab}.py and
 * services/service.py), on one job's rows, number for number and draw for
 * draw. The server is not Zeus's legacy simulator policy (policies/zeus.c):
 *
 *  - explorer (PruningExploreManager.next_batch_size): every predict
 *    replays the rounds from the stored trials. A round starts from the
 *    round's default (the job's b0, then the cheapest converged size of
 *    the round before), tries the sizes below it downwards, then those
 *    above upwards, each list stopping at its first size that did not
 *    converge. The first size without an exploration in this round is the
 *    answer; a size whose exploration of this round is still dispatched
 *    makes this trial a "concurrent" one at the job's cheapest size so
 *    far. After the last round the converged sizes become the MAB's arms.
 *  - MAB (GaussianTS): arms fitted on every exploration of their size
 *    (the prior mean and precision from the job spec), then on each
 *    report refitted on the succeeded trials of that size (window: the
 *    last window-1 of them, ascending, then the new one; no window: all,
 *    newest first, then the new one: numpy's sums in that order).
 *    predict: an exploration order rng.choice(arms, n, replace=False);
 *    the first arm with fewer than mab_num_explorations observations;
 *    else theta = rng.normal(mean, sqrt(1/precision)) per arm in stored
 *    order, the first largest wins.
 *  - The min cost (early stop: cost > beta * min cost stops a run, and the
 *    concurrent trials' size) is the lowest cost of any succeeded report,
 *    converged or not, as service.update_trial keeps it.
 *  - Streams: with mab_seed, default_rng(mab_seed) whose state is stored
 *    with the job after each draw; without, a stream seeded by the clock
 *    at each draw (Zeus's behaviour: not reproducible).
 * Zeus's exceptions keep their status codes (ZeusBSOValueError 400,
 * ZeusBSOServiceBadOperationError 400, NotFound 404, RuntimeError 500).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wattsim/npreduce.h"
#include "serve_state.h"

double ws_sv_zeus_cost(const ws_sv_spec *s, double energy, double time)
{
    return s->eta * energy + (1 - s->eta) * s->max_power * time;
}

void ws_sv_job_init(ws_sv_job *j)
{
    j->stage = WS_STAGE_PRUNING;
    j->has_min_cost = 0;
    j->min_cost = 0;
    j->min_cost_bs = j->spec.default_bs;
    j->has_rng = j->spec.has_seed;
    if (j->has_rng) ws_rng_seed(&j->rng, (uint64_t)j->spec.seed);
}

/* The job's stream, or one seeded by the clock (Zeus without mab_seed). */
static ws_rng *job_rng(ws_sv_job *j, ws_rng *tmp)
{
    if (j->has_rng) {
        j->dirty = 1;
        return &j->rng;
    }
    ws_rng_seed(tmp, (uint64_t)time(NULL));
    return tmp;
}

static ws_sv_trial *find_trial(ws_sv_job *j, int64_t bs, int64_t number)
{
    for (int i = 0; i < j->n_trials; i++)
        if (j->trials[i].number == number && j->trials[i].bs == bs) return &j->trials[i];
    return NULL;
}

static int create_trial(ws_sv_job *j, int type, int64_t bs, int64_t *number, char *msg, size_t msgsz)
{
    if (j->n_trials == j->cap_trials) {
        int cap = j->cap_trials ? 2 * j->cap_trials : 16;
        ws_sv_trial *t = realloc(j->trials, (size_t)cap * sizeof *t);
        if (!t) {
            snprintf(msg, msgsz, "out of memory");
            return 500;
        }
        j->trials = t;
        j->cap_trials = cap;
    }
    ws_sv_trial *t = &j->trials[j->n_trials];
    memset(t, 0, sizeof *t);
    t->number = j->n_trials ? j->trials[j->n_trials - 1].number + 1 : 1;
    t->bs = bs;
    t->type = type;
    t->status = WS_TRIAL_DISPATCHED;
    t->converged = -1;
    t->dirty = 2;
    j->n_trials++;
    *number = t->number;
    return 0;
}

/* Fit an arm on its rewards (GaussianTS._fit_arm). */
static void fit_arm(const ws_sv_spec *s, const double *r, size_t n, ws_sv_arm *a)
{
    const double var = ws_np_var(r, n);
    const double rp = var == 0.0 ? INFINITY : 1.0 / var;
    if (isinf(rp) && rp > 0) {
        a->prec = INFINITY;
        a->mean = ws_np_mean(r, n);
    } else {
        a->prec = s->prior_prec + (double)n * rp;
        a->mean = (s->prior_prec * s->prior_mean + rp * ws_np_sum(r, n)) / a->prec;
    }
    a->reward_prec = rp;
    a->n_obs = (int64_t)n;
}

/* The explorations of size bs (type Exploration, not failed), ascending. */
static int explorations(const ws_sv_job *j, int64_t bs, const ws_sv_trial **out)
{
    int n = 0;
    for (int i = 0; i < j->n_trials; i++) {
        const ws_sv_trial *t = &j->trials[i];
        if (t->bs == bs && t->type == WS_TRIAL_EXPLORATION && t->status != WS_TRIAL_FAILED)
            out[n++] = t;
    }
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* PruningExploreManager.next_batch_size: 0 with *created set when a trial
 * was made (*bs, *number), or 0 with the good sizes in good[0..*n_good)
 * for the MAB; else a status. */
static int explore(ws_sv_job *j, int *created, int64_t *bs, int64_t *number, int64_t *good, int *n_good,
                   const ws_sv_trial **scratch, char *msg, size_t msgsz)
{
    const ws_sv_spec *s = &j->spec;
    int n = s->n_bs;
    int64_t *list = good;
    memcpy(list, s->bs, (size_t)n * sizeof *list);
    int64_t exp_default = s->default_bs;
    int64_t *conv = malloc((size_t)(n ? n : 1) * sizeof *conv);
    if (!conv) {
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    *created = 0;
    for (int64_t round = 0; round < s->rounds; round++) {
        int n_conv = 0;
        double min_cost = INFINITY;
        int64_t min_bs = 0;
        qsort(list, (size_t)n, sizeof *list, cmp_i64);
        int idx = -1;
        for (int i = 0; i < n; i++)
            if (list[i] == exp_default) {
                idx = i;
                break;
            }
        if (idx < 0) {
            free(conv);
            snprintf(msg, msgsz, "%" PRId64 " is not in list", exp_default);
            return 500;
        }
        for (int dir = 0; dir < 2; dir++) {
            const int from = dir == 0 ? idx : idx + 1, to = dir == 0 ? -1 : n, step = dir == 0 ? -1 : 1;
            for (int i = from; i != to; i += step) {
                const int64_t b = list[i];
                const int ne = explorations(j, b, scratch);
                if (ne > round) {
                    const ws_sv_trial *e = scratch[round];
                    if (e->status == WS_TRIAL_DISPATCHED) {
                        free(conv);
                        *created = 1;
                        *bs = j->min_cost_bs;
                        return create_trial(j, WS_TRIAL_CONCURRENT, j->min_cost_bs, number, msg, msgsz);
                    }
                    if (e->converged != 1) break;
                    conv[n_conv++] = b;
                    if (!e->has_result) {
                        free(conv);
                        snprintf(msg, msgsz, "Energy or time is not available for the exploration.");
                        return 400;
                    }
                    const double cost = ws_sv_zeus_cost(s, e->energy, e->time);
                    if (cost < min_cost) {
                        min_cost = cost;
                        min_bs = b;
                    }
                } else {
                    free(conv);
                    *created = 1;
                    *bs = b;
                    return create_trial(j, WS_TRIAL_EXPLORATION, b, number, msg, msgsz);
                }
            }
        }
        exp_default = min_bs;
        memcpy(list, conv, (size_t)n_conv * sizeof *list);
        n = n_conv;
        if (n == 0) {
            free(conv);
            snprintf(msg, msgsz, "No converged batch sizes has observed. Reconfigure batch_sizes and"
                     " re-launch the job.");
            return 500;
        }
    }
    free(conv);
    qsort(list, (size_t)n, sizeof *list, cmp_i64);
    *n_good = n;
    return 0;
}

/* GaussianTS.construct_mab. */
static int construct_mab(ws_sv_job *j, const int64_t *good, int n_good, const ws_sv_trial **scratch,
                         char *msg, size_t msgsz)
{
    if (n_good == 0) {
        snprintf(msg, msgsz, "While creating arms, no batch size is selected");
        return 400;
    }
    ws_sv_arm *arms = calloc((size_t)n_good, sizeof *arms);
    double *r = malloc((size_t)(j->n_trials ? j->n_trials : 1) * sizeof *r);
    if (!arms || !r) {
        free(arms), free(r);
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    for (int k = 0; k < n_good; k++) {
        const int ne = explorations(j, good[k], scratch);
        for (int i = 0; i < ne; i++) {
            if (!scratch[i]->has_result) {
                free(arms), free(r);
                snprintf(msg, msgsz, "Trial %" PRId64 " has no energy or time set.", scratch[i]->number);
                return 400;
            }
            r[i] = -ws_sv_zeus_cost(&j->spec, scratch[i]->energy, scratch[i]->time);
        }
        if (ne == 0) {
            free(arms), free(r);
            snprintf(msg, msgsz, "No rewards to fit the arm.");
            return 400;
        }
        arms[k].bs = good[k];
        fit_arm(&j->spec, r, (size_t)ne, &arms[k]);
        arms[k].dirty = 2;
    }
    free(r);
    free(j->arms);
    j->arms = arms;
    j->n_arms = n_good;
    j->stage = WS_STAGE_MAB;
    j->dirty = 1;
    return 0;
}

/* GaussianTS.predict. */
static int mab_predict(ws_sv_job *j, int64_t *bs, char *msg, size_t msgsz)
{
    const int n = j->n_arms;
    if (n == 0) {
        snprintf(msg, msgsz, "No arms to choose from.");
        return 500;
    }
    int64_t *order = malloc((size_t)n * sizeof *order);
    if (!order) {
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    ws_rng tmp;
    if (ws_rng_choice(job_rng(j, &tmp), n, n, order) != 0) {
        free(order);
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    for (int i = 0; i < n; i++) {
        const ws_sv_arm *a = &j->arms[order[i]];
        if (a->n_obs < j->spec.n_explore) {
            *bs = a->bs;
            free(order);
            return 0;
        }
    }
    free(order);
    double best = 0;
    for (int i = 0; i < n; i++) {
        const ws_sv_arm *a = &j->arms[i];
        const double theta = ws_rng_normal(job_rng(j, &tmp), a->mean, sqrt(1.0 / a->prec));
        if (i == 0 || theta > best) {
            best = theta;
            *bs = a->bs;
        }
    }
    return 0;
}

int ws_sv_predict(ws_sv_job *j, int64_t *bs, int64_t *trial_number, char *msg, size_t msgsz)
{
    int rc;
    if (j->stage == WS_STAGE_MAB) {
        if ((rc = mab_predict(j, bs, msg, msgsz)) != 0) return rc;
        return create_trial(j, WS_TRIAL_MAB, *bs, trial_number, msg, msgsz);
    }
    const ws_sv_trial **scratch = malloc((size_t)(j->n_trials ? j->n_trials : 1) * sizeof *scratch);
    int64_t *good = malloc((size_t)(j->spec.n_bs ? j->spec.n_bs : 1) * sizeof *good);
    if (!scratch || !good) {
        free(scratch), free(good);
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    int created = 0, n_good = 0;
    rc = explore(j, &created, bs, trial_number, good, &n_good, scratch, msg, msgsz);
    if (rc == 0 && !created) {
        rc = construct_mab(j, good, n_good, scratch, msg, msgsz);
        if (rc == 0) rc = mab_predict(j, bs, msg, msgsz);
        if (rc == 0) rc = create_trial(j, WS_TRIAL_MAB, *bs, trial_number, msg, msgsz);
    }
    free(scratch);
    free(good);
    return rc;
}

/* service.update_trial. */
static int update_trial(ws_sv_job *j, ws_sv_trial *t, int status, int has_result, double time,
                        double energy, int converged, char *msg, size_t msgsz)
{
    if (t->status != WS_TRIAL_DISPATCHED) {
        snprintf(msg, msgsz, "Trial already has a result.");
        return 400;
    }
    t->status = status;
    t->has_result = has_result;
    t->time = has_result ? time : 0;
    t->energy = has_result ? energy : 0;
    t->converged = converged;
    if (t->dirty == 0) t->dirty = 1;
    if (status != WS_TRIAL_FAILED) {
        const double cur = ws_sv_zeus_cost(&j->spec, energy, time);
        if (!j->has_min_cost || j->min_cost > cur) {
            j->has_min_cost = 1;
            j->min_cost = cur;
            j->min_cost_bs = t->bs;
            j->dirty = 1;
        }
    }
    return 0;
}

/* Python's repr of a float: the fewest digits that read back, in fixed
 * notation for exponents -4..15 (with ".0" when integral), else as %e. */
static void float_repr(double v, char *out, size_t n)
{
    int p = 1;
    for (; p < 17; p++) {
        snprintf(out, n, "%.*e", p - 1, v);
        if (strtod(out, NULL) == v) break;
    }
    snprintf(out, n, "%.*e", p - 1, v);
    const char *e = strchr(out, 'e');
    const int exp = e ? atoi(e + 1) : 0;
    if (!isfinite(v) || exp < -4 || exp >= 16) return;
    const int dec = p - 1 - exp;
    snprintf(out, n, "%.*f", dec > 0 ? dec : 0, v);
    if (!strchr(out, '.')) strncat(out, ".0", n - strlen(out) - 1);
}

/* GaussianTS.report. */
static int mab_report(ws_sv_job *j, ws_sv_trial *t, const ws_sv_report *r, int conv, char *msg, size_t msgsz)
{
    const ws_sv_spec *s = &j->spec;
    double *costs = malloc((size_t)(j->n_trials + 1) * sizeof *costs);
    if (!costs) {
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    /* Succeeded trials of this size, newest first, at most window. */
    size_t n = 0;
    for (int i = j->n_trials - 1; i >= 0; i--) {
        const ws_sv_trial *h = &j->trials[i];
        if (h->bs != r->bs || h->status != WS_TRIAL_SUCCEEDED) continue;
        if (s->window > 0 && (int64_t)n >= s->window) break;
        costs[n++] = -ws_sv_zeus_cost(s, h->energy, h->time);
    }
    if (s->window > 0 && (int64_t)n >= s->window) {
        n--;                                     /* pop the oldest */
        for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
            const double x = costs[a];
            costs[a] = costs[b];
            costs[b] = x;
        }
    }
    costs[n++] = -ws_sv_zeus_cost(s, r->energy, r->time);
    ws_sv_arm *arm = NULL;
    for (int i = 0; i < j->n_arms; i++)
        if (j->arms[i].bs == r->bs) arm = &j->arms[i];
    if (!arm) {
        free(costs);
        snprintf(msg, msgsz, "MAB stage but Arm for batch size(%" PRId64 ") is not found.", r->bs);
        return 400;
    }
    if (t->type != WS_TRIAL_MAB) {
        free(costs);
        snprintf(msg, msgsz, "Cannot update an arm since this trial is not issued from MAB stage.");
        return 400;
    }
    ws_sv_arm fitted = *arm;
    fit_arm(s, costs, n, &fitted);
    free(costs);
    fitted.dirty = arm->dirty ? arm->dirty : 1;
    *arm = fitted;
    return update_trial(j, t, WS_TRIAL_SUCCEEDED, 1, r->time, r->energy, conv, msg, msgsz);
}

int ws_sv_report_result(ws_sv_job *j, const ws_sv_report *r, int *stop, int *converged, char *msg,
                        size_t msgsz)
{
    const ws_sv_spec *s = &j->spec;
    ws_sv_trial *t = find_trial(j, r->bs, r->trial_number);
    if (!t) {
        snprintf(msg, msgsz, "Unknown trial job_id='%s' batch_size=%" PRId64 " trial_number=%" PRId64,
                 s->job_id, r->bs, r->trial_number);
        return 400;
    }
    if (t->status != WS_TRIAL_DISPATCHED) {
        if (t->converged < 0) {
            snprintf(msg, msgsz, "Trial(%" PRId64 ") is already reported but converged is not set.",
                     t->number);
            return 400;
        }
        *stop = 1;
        *converged = t->converged;
        snprintf(msg, msgsz, "Result for this trial(%" PRId64 ") is already reported.", t->number);
        return 0;
    }
    double cost_ub = INFINITY;
    if (s->has_beta && j->has_min_cost) cost_ub = s->beta * j->min_cost;
    const double cost = ws_sv_zeus_cost(s, r->energy, r->time);
    const int within = cost_ub >= cost;
    const int conv = s->higher ? s->target <= r->metric : s->target >= r->metric;
    if (within && r->current_epoch < s->max_epochs && !conv) {
        *stop = 0;
        *converged = 0;
        snprintf(msg, msgsz, "Stop condition not met, keep training");
        return 0;
    }
    if (conv && within) {
        snprintf(msg, msgsz, "Train succeeded");
    } else if (!within) {
        char a[32], b[32], c[32];
        float_repr(cost, a, sizeof a);
        float_repr(s->beta, b, sizeof b);
        float_repr(j->min_cost, c, sizeof c);
        snprintf(msg, msgsz, "Batch Size(%" PRId64 ") exceeded the cost upper bound: current cost(%s) >\n"
                 "                    beta_knob(%s)*min_cost(%s)", r->bs, a, b, c);
    } else {
        snprintf(msg, msgsz, "Train failed to converge within max_epoch(%" PRId64 ")", s->max_epochs);
    }
    const int ok = conv && within;
    char m2[256];
    int rc = j->stage == WS_STAGE_MAB ? mab_report(j, t, r, ok, m2, sizeof m2)
                                      : update_trial(j, t, WS_TRIAL_SUCCEEDED, 1, r->time, r->energy, ok, m2,
                                                     sizeof m2);
    if (rc != 0) {
        snprintf(msg, msgsz, "%s", m2);
        return rc;
    }
    *stop = 1;
    *converged = ok;
    return 0;
}

int ws_sv_end_trial(ws_sv_job *j, int64_t bs, int64_t number, char *msg, size_t msgsz)
{
    ws_sv_trial *t = find_trial(j, bs, number);
    if (!t) {
        snprintf(msg, msgsz, "Could not find the trial: job_id='%s' batch_size=%" PRId64 " trial_number=%" PRId64,
                 j->spec.job_id, bs, number);
        return 404;
    }
    if (t->status == WS_TRIAL_DISPATCHED)
        return update_trial(j, t, WS_TRIAL_FAILED, 0, 0, 0, -1, msg, msgsz);
    return 0;
}

int ws_sv_new_trial(ws_sv_job *j, int type, int64_t bs, int64_t *trial_number, char *msg, size_t msgsz)
{
    return create_trial(j, type, bs, trial_number, msg, msgsz);
}
