/*
 * Any wattsim policy behind Zeus's API (wattsim serve --bso SPEC,
 * --bso PREFIX=SPEC): the jobs whose id starts with PREFIX (the longest
 * prefix wins; SPEC alone is the default) are decided by a BSO the
 * registry loads as simulate --bso does, checked as a config's names are
 * (ws_plugin_config_check: a .so only under --allow-plugins, py: only
 * under --allow-python). "zeus", the default, is serve_zeus.c.
 *
 *   the job    a ws_job made from the JobSpec: its batch sizes, b0, eta,
 *              beta (null: off), max epochs, MaxPower, GPUs, GPU model,
 *              target; no knob table (one knob per size at MaxPower per
 *              GPU, NAN times and powers, no recorded runs)
 *   parameters the policy's parameters named rounds, window, prior_mean,
 *              prior_precision, explorations / num_explorations take the
 *              JobSpec's num_pruning_rounds, window_size, mab_prior_mean,
 *              mab_prior_precision, mab_num_explorations; the instance's
 *              stream is seeded with mab_seed (0 when null)
 *   predict    GET /jobs/batch_size: the policy's predict, a new trial
 *   observe    POST /report that ends the trial (Zeus's rule: converged,
 *              max_epochs, or the cost past beta x min cost): cost eta E +
 *              (1 - eta) MaxPower T (the engine's), reached = the metric
 *              reached the target; a report of time 0 and energy 0 is a
 *              run not started, observed as the engine observes one (cost
 *              100 beta x the least cost of a recurrence so far,
 *              reached 0). Recurrences are counted as the engine counts
 *              them: one ends at a reached run.
 *
 * Durability: every predict and observe is a row of the calls table,
 * written with the request's rows (committed before its reply). The
 * instances live in memory; a restart (or a failed request, or an
 * eviction from the job cache) rebuilds one by replaying its job's calls into
 * a fresh instance: the policies are deterministic for the same seed and
 * calls, so it continues with exactly the decisions it would have made.
 * A replayed predict that answers another size than the one stored is a
 * 500 naming the job (the policy is not deterministic).
 *
 * An instance lives in its job's memory (ws_sv_job.policy): taken out of
 * the job cache with the job by the request that holds the job's lock,
 * kept with it after the request committed, freed with it when the
 * request fails (the next one replays) or the cache starts over. So there
 * are at most as many instances as jobs in the cache (and requests in
 * flight), and requests of different jobs call their instances at once.
 * A call is added to the job's pending calls (j->calls), written with its
 * rows in the request's write.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/error.h"
#include "wattsim/params.h"
#include "wattsim/plugin.h"
#include "wattsim/policy.h"
#include "serve_state.h"

typedef struct route {
    char *prefix;                 /* "" for the default */
    char *spec;
    const ws_bso_type *t;         /* NULL: Zeus's server (serve_zeus.c) */
} route;

typedef struct live {
    char *job_id;
    const ws_bso_type *t;
    ws_bso *b;
    ws_value *params;
    ws_job job;
    int *bs, *knob_start, *knob_pl, *run_start;
    double *knob_nan;
    char *gpu;
    int64_t n_calls;
    long rec;                     /* the current recurrence, 1-based */
    int attempt;
    double acc, min_cost;         /* the engine's: this recurrence's cost, the least one */
} live;

static route *routes;
static int n_routes;
static ws_registry *reg;
static atomic_long n_live;        /* instances in memory, all stores */

static void live_free(live *l)
{
    if (!l) return;
    atomic_fetch_sub(&n_live, 1);
    ws_bso_free(l->b);
    if (l->t) ws_params_free(l->t->params, l->params);
    free(l->bs);
    free(l->knob_start);
    free(l->knob_pl);
    free(l->run_start);
    free(l->knob_nan);
    free(l->gpu);
    free(l->job_id);
    free(l);
}

static void live_free_v(void *l) { live_free(l); }

long ws_svp_instances(void) { return atomic_load(&n_live); }

void ws_serve_policy_reset(void)
{
    for (int i = 0; i < n_routes; i++) {
        free(routes[i].prefix);
        free(routes[i].spec);
    }
    free(routes);
    routes = NULL;
    n_routes = 0;
    if (reg) ws_registry_free(reg);
    reg = NULL;
}

int ws_serve_policy_add(const char *arg, char *err, size_t errsz)
{
    const char *eq = strchr(arg, '=');
    /* "py:m:C" and paths have no '=' before their first ':' or '/'. */
    const char *spec = eq ? eq + 1 : arg;
    const size_t plen = eq ? (size_t)(eq - arg) : 0;
    if (!*spec) {
        snprintf(err, errsz, "--bso %s: no policy after '='; e.g. --bso team-a=gts", arg);
        return -1;
    }
    if (plen > WS_SERVE_MAX_ID) {
        snprintf(err, errsz, "--bso: the prefix is longer than %d bytes", WS_SERVE_MAX_ID);
        return -1;
    }
    for (int i = 0; i < n_routes; i++)
        if (strlen(routes[i].prefix) == plen && !strncmp(routes[i].prefix, arg, plen)) {
            snprintf(err, errsz, "--bso %s: the prefix '%.*s' is given twice", arg, (int)plen, arg);
            return -1;
        }
    ws_error e;
    const ws_bso_type *t = NULL;
    if (strcmp(spec, "zeus")) {
        if (ws_plugin_config_check(spec, "bso", "--bso", &e) != 0) {
            snprintf(err, errsz, "%s", e.msg);
            return -1;
        }
        if (!strncmp(spec, "http://", 7) || !strncmp(spec, "https://", 8)) {
            snprintf(err, errsz, "--bso %s: a server's URL is not a policy this server can run", arg);
            return -1;
        }
        if (!reg && !(reg = ws_registry_new())) {
            snprintf(err, errsz, "--bso %s: out of memory", arg);
            return -1;
        }
        if (!(t = ws_registry_bso(reg, spec, &e))) {
            snprintf(err, errsz, "--bso %s: %s", arg, e.msg);
            return -1;
        }
    }
    route *r = realloc(routes, (size_t)(n_routes + 1) * sizeof *r);
    if (!r) {
        snprintf(err, errsz, "--bso %s: out of memory", arg);
        return -1;
    }
    routes = r;
    r = &routes[n_routes];
    r->prefix = strndup(arg, plen);
    r->spec = strdup(spec);
    r->t = t;
    if (!r->prefix || !r->spec) {
        free(r->prefix);
        free(r->spec);
        snprintf(err, errsz, "--bso %s: out of memory", arg);
        return -1;
    }
    n_routes++;
    return 0;
}

static const route *route_of(const char *job_id)
{
    const route *best = NULL;
    size_t best_len = 0;
    for (int i = 0; i < n_routes; i++) {
        const size_t n = strlen(routes[i].prefix);
        if (strncmp(job_id, routes[i].prefix, n)) continue;
        if (!best || n > best_len) {
            best = &routes[i];
            best_len = n;
        }
    }
    return best;
}

int ws_svp_serves(const char *job_id)
{
    const route *r = route_of(job_id);
    return r && r->t;
}

/* ------------------------------------------------------------ an instance */

static void raw_num(ws_param_raw *raw, size_t *n, char (*buf)[40], const ws_param_spec *spec, const char *name,
                    const char *value)
{
    for (const ws_param_spec *p = spec; p && p->name; p++)
        if (!strcmp(p->name, name)) {
            snprintf(buf[*n], 40, "%s", value);
            raw[*n] = (ws_param_raw){(char *)name, buf[*n], (char *)"the job spec"};
            (*n)++;
            return;
        }
}

static int make_job(live *l, const ws_sv_spec *s, char *msg, size_t msgsz)
{
    const int n = s->n_bs;
    l->bs = malloc((size_t)n * sizeof *l->bs);
    l->knob_start = malloc((size_t)(n + 1) * sizeof *l->knob_start);
    l->knob_pl = malloc((size_t)n * sizeof *l->knob_pl);
    l->run_start = calloc((size_t)(n + 1), sizeof *l->run_start);
    l->knob_nan = malloc((size_t)n * sizeof *l->knob_nan);
    l->gpu = strdup(s->gpu_model);
    if (!l->bs || !l->knob_start || !l->knob_pl || !l->run_start || !l->knob_nan || !l->gpu) {
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    const double gpus = s->n_gpus > 0 ? (double)s->n_gpus : 1.0;
    for (int i = 0; i < n; i++) {
        if (s->bs[i] < 1 || s->bs[i] > INT_MAX) {
            snprintf(msg, msgsz, "batch size %" PRId64 " is out of the range a wattsim policy takes (1..%d)",
                     s->bs[i], INT_MAX);
            return 400;
        }
        l->bs[i] = (int)s->bs[i];
        l->knob_start[i] = i;
        const double pl = s->max_power / gpus;
        l->knob_pl[i] = pl >= 1 && pl < INT_MAX ? (int)lround(pl) : 1;
        l->knob_nan[i] = NAN;
    }
    l->knob_start[n] = n;
    ws_job *j = &l->job;
    memset(j, 0, sizeof *j);
    j->abi_version = WS_ABI_VERSION;
    j->workload = s->prefix;
    j->gpu = l->gpu;
    j->eta = s->eta;
    j->beta = s->has_beta ? s->beta : INFINITY;
    j->max_power = s->max_power;
    j->max_epochs = s->max_epochs > INT_MAX ? INT_MAX : (int)s->max_epochs;
    j->b0 = (int)s->default_bs;
    j->concurrent = 0;
    j->n_bs = n;
    j->bs = l->bs;
    j->knob_start = l->knob_start;
    j->knob_pl = l->knob_pl;
    j->knob_time = l->knob_nan;
    j->knob_power = l->knob_nan;
    j->run_start = l->run_start;
    j->run_epoch = NULL;
    j->gpus_per_job = s->n_gpus > 0 && s->n_gpus < INT_MAX ? (int)s->n_gpus : 1;
    j->target_metric = s->target;
    return 0;
}

static void call_ctx(const live *l, ws_ctx *c)
{
    ws_ctx_init(c, 0);
    c->recurrence = l->rec;
    c->attempt = l->attempt;
}

/* One call on the instance (live or replayed); 0 or the status. */
static int apply(live *l, const ws_sv_call *c, int64_t *bs_out, char *msg, size_t msgsz)
{
    ws_error e;
    ws_ctx ctx;
    call_ctx(l, &ctx);
    if (c->kind == 0) {
        int i;
        if (ws_bso_predict(l->b, &l->job, &ctx, &i, &e) != 0) {
            snprintf(msg, msgsz, "%s", e.msg);
            return 500;
        }
        *bs_out = l->bs[i];
        return 0;
    }
    ctx.run_started = c->started;
    ctx.run_epochs = c->epochs;
    ctx.run_time_s = c->time;
    ctx.run_energy_j = c->energy;
    ctx.run_epoch_budget = l->job.max_epochs;
    ctx.run_early_stopped = 0;
    if (ws_bso_observe(l->b, &l->job, &ctx, (int)c->bs, c->cost, c->reached, &e) != 0) {
        snprintf(msg, msgsz, "%s", e.msg);
        return 500;
    }
    if (c->started) l->acc += c->cost;
    if (c->reached) {
        if (l->min_cost > l->acc) l->min_cost = l->acc;
        l->acc = 0;
        l->rec++;
        l->attempt = 1;
    } else {
        l->attempt++;
    }
    return 0;
}

typedef struct replay {
    live *l;
    char *msg;
    size_t msgsz;
    int status;
} replay;

static int replay_one(void *arg, const ws_sv_call *c)
{
    replay *r = arg;
    int64_t bs = 0;
    if ((r->status = apply(r->l, c, &bs, r->msg, r->msgsz)) != 0) return 1;
    if (c->kind == 0 && bs != c->bs) {
        snprintf(r->msg, r->msgsz, "job %s: replaying its policy's calls, predict %" PRId64 " answered batch size"
                 " %" PRId64 ", not %" PRId64 " as before: the policy is not deterministic",
                 r->l->job_id, r->l->n_calls + 1, bs, c->bs);
        r->status = 500;
        return 1;
    }
    r->l->n_calls++;
    return 0;
}

/* The job's instance, built and replayed when not in memory. */
static int get_live(ws_store *s, ws_sv_job *j, live **out, char *msg, size_t msgsz)
{
    const char *id = j->spec.job_id;
    if (j->policy) {
        *out = j->policy;
        return 0;
    }
    const route *r = route_of(id);
    live *l = calloc(1, sizeof *l);
    if (!l || !(l->job_id = strdup(id))) {
        free(l);
        snprintf(msg, msgsz, "out of memory");
        return 500;
    }
    atomic_fetch_add(&n_live, 1);
    l->t = r->t;
    l->rec = 1;
    l->attempt = 1;
    l->min_cost = INFINITY;
    int st = make_job(l, &j->spec, msg, msgsz);
    if (st) goto fail;
    const ws_sv_spec *sp = &j->spec;
    ws_param_raw raw[8];
    char buf[8][40];
    size_t n = 0;
    char v[40];
    snprintf(v, sizeof v, "%" PRId64, sp->rounds);
    raw_num(raw, &n, buf, r->t->params, "rounds", v);
    snprintf(v, sizeof v, "%" PRId64, sp->window);
    raw_num(raw, &n, buf, r->t->params, "window", v);
    snprintf(v, sizeof v, "%.17g", sp->prior_mean);
    raw_num(raw, &n, buf, r->t->params, "prior_mean", v);
    snprintf(v, sizeof v, "%.17g", sp->prior_prec);
    raw_num(raw, &n, buf, r->t->params, "prior_precision", v);
    snprintf(v, sizeof v, "%" PRId64, sp->n_explore);
    raw_num(raw, &n, buf, r->t->params, "explorations", v);
    raw_num(raw, &n, buf, r->t->params, "num_explorations", v);
    ws_error e;
    char who[64];
    snprintf(who, sizeof who, "bso %s", r->t->name);
    if (ws_params_resolve(r->t->params, raw, n, who, &l->params, &e) != 0) {
        snprintf(msg, msgsz, "job %s: %s", id, e.msg);
        st = 400;
        goto fail;
    }
    const unsigned long seed = sp->has_seed ? (unsigned long)sp->seed : 0;
    ws_ctx ctx;
    ws_ctx_init(&ctx, 0);
    if (!(l->b = ws_bso_new(r->t, l->params, seed, &e)) || ws_bso_register(l->b, &l->job, &ctx, &e) != 0) {
        snprintf(msg, msgsz, "job %s: %s", id, e.msg);
        st = 500;
        goto fail;
    }
    replay rp = {l, msg, msgsz, 0};
    char dm[256];
    const int rc = ws_store_each_call(s, id, replay_one, &rp, dm, sizeof dm);
    if (rc < 0) {
        snprintf(msg, msgsz, "database: %s", dm);
        st = 500;
        goto fail;
    }
    if (rp.status) {
        st = rp.status;
        goto fail;
    }
    j->policy = l;
    j->policy_free = live_free_v;
    *out = l;
    return 0;
fail:
    live_free(l);
    return st;
}

/* A call made: pending in the job until its request writes. */
static int log_call(ws_sv_job *j, live *l, const ws_sv_call *c, char *msg, size_t msgsz)
{
    if (j->n_calls == 0) j->calls_seq = l->n_calls + 1;
    if (j->n_calls == j->cap_calls) {
        const int cap = j->cap_calls ? 2 * j->cap_calls : 4;
        ws_sv_call *p = realloc(j->calls, (size_t)cap * sizeof *p);
        if (!p) {
            snprintf(msg, msgsz, "out of memory");
            return 500;
        }
        j->calls = p;
        j->cap_calls = cap;
    }
    j->calls[j->n_calls++] = *c;
    l->n_calls++;
    return 0;
}

int ws_svp_predict(ws_store *s, ws_sv_job *j, int64_t *bs, int64_t *number, char *msg, size_t msgsz)
{
    live *l;
    int st = get_live(s, j, &l, msg, msgsz);
    if (st) return st;
    ws_sv_call c = {0, 0, 0, 0, 0, 0, 0, 0};
    if ((st = apply(l, &c, bs, msg, msgsz)) != 0) return st;
    c.bs = *bs;
    if ((st = log_call(j, l, &c, msg, msgsz)) != 0) return st;
    return ws_sv_new_trial(j, WS_TRIAL_MAB, *bs, number, msg, msgsz);
}

int ws_svp_report(ws_store *s, ws_sv_job *j, const ws_sv_report *r, int *stop, int *converged, char *msg,
                  size_t msgsz)
{
    const ws_sv_spec *sp = &j->spec;
    ws_sv_trial *t = NULL;
    for (int i = 0; i < j->n_trials; i++)
        if (j->trials[i].number == r->trial_number && j->trials[i].bs == r->bs) t = &j->trials[i];
    const int open = t && t->status == WS_TRIAL_DISPATCHED;
    const int not_started = open && r->time == 0 && r->energy == 0;
    int st;
    if (not_started) {
        /* A run the client did not start (its budget allowed no epoch). */
        if ((st = ws_sv_end_trial(j, r->bs, r->trial_number, msg, msgsz)) != 0) return st;
        t->converged = 0;
        *stop = 1;
        *converged = 0;
        snprintf(msg, msgsz, "Run not started (no time, no energy): observed as not started");
    } else {
        st = ws_sv_report_result(j, r, stop, converged, msg, msgsz);
        if (st || !open || t->status == WS_TRIAL_DISPATCHED) return st;
    }
    live *l;
    if ((st = get_live(s, j, &l, msg, msgsz)) != 0) return st;
    const int reached = !not_started && (sp->higher ? sp->target <= r->metric : sp->target >= r->metric);
    const double beta = sp->has_beta ? sp->beta : INFINITY;
    ws_sv_call c = {1, r->bs, not_started ? 100.0 * beta * l->min_cost : ws_sv_zeus_cost(sp, r->energy, r->time),
                    reached, !not_started, not_started ? 0 : (int)(r->current_epoch > INT_MAX ? INT_MAX
                                                                                            : r->current_epoch),
                    not_started ? 0 : r->time, not_started ? 0 : r->energy};
    char m2[512];
    int64_t unused;
    if ((st = apply(l, &c, &unused, m2, sizeof m2)) != 0 || (st = log_call(j, l, &c, m2, sizeof m2)) != 0) {
        snprintf(msg, msgsz, "%s", m2);
        return st;
    }
    return 0;
}
