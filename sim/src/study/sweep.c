/* Sweeps over policies and the run plan; see wattsim/sweep.h. */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/sweep.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>

#include "sweep_run.h"
#include "wattsim/progress.h"
#include "wattsim/report.h"
#include "wattsim/rng.h"

/* ------------------------------------------------------------ pairs */

void ws_policy_pairs_free(ws_policy_pair *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i].bso);
        free(p[i].plo);
        free(p[i].label);
        ws_policy_ref_free(&p[i].bso_ref);
        ws_policy_ref_free(&p[i].plo_ref);
        free(p[i].bso_params);
        free(p[i].plo_params);
    }
    free(p);
}

static int ends_so(const char *s, const char *end)
{
    return end - s >= 3 && !memcmp(end - 3, ".so", 3);
}

/* The colon between BSO and PLO in q[0, len), where either may be
 * FILE.so:NAME (so a pair has 1, 2 or 3 colons); NULL if there is none. */
static const char *pair_colon(const char *q, size_t len)
{
    const char *c[4];
    size_t n = 0;
    int depth = 0;
    for (const char *p = q; p < q + len; p++)
        if (*p == '{') depth++;
        else if (*p == '}') depth--;
        else if (*p == ':' && depth == 0) {
            if (n == 3) return NULL;
            c[n++] = p;
        }
    if (n == 1) return c[0];
    if (n == 3) return c[1];
    if (n == 2) /* FILE.so:NAME:PLO or BSO:FILE.so:NAME */
        return ends_so(q, c[0]) && !ends_so(c[0] + 1, c[1]) ? c[1] : c[0];
    return NULL;
}

int ws_policy_pairs_parse(const char *s, ws_policy_pair **out, size_t *n,
                          ws_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 1;
    for (const char *q = s; *q; q++) cap += *q == ',';
    ws_policy_pair *p = calloc(cap, sizeof *p);
    if (!p) return ws_fail(err, "out of memory");
    size_t k = 0;
    for (const char *q = s;; k++) {
        size_t len = 0;              /* up to a ',' outside braces */
        for (int depth = 0; q[len] && (q[len] != ',' || depth); len++)
            depth += (q[len] == '{') - (q[len] == '}');
        const char *colon = pair_colon(q, len);
        if (!colon || colon == q || colon + 1 == q + len) {
            ws_policy_pairs_free(p, k);
            return ws_fail(err, "--policies: '%.*s' is not BSO:PLO (e.g. zeus:jit)",
                           (int)len, q);
        }
        if (ws_policy_ref_parse(q, (size_t)(colon - q), "--policies", &p[k].bso_ref, err)
            || ws_policy_ref_parse(colon + 1, (size_t)(q + len - colon - 1), "--policies",
                                   &p[k].plo_ref, err)) {
            ws_policy_pairs_free(p, k + 1);
            return -1;
        }
        p[k].bso = strdup(p[k].bso_ref.name);
        p[k].plo = strdup(p[k].plo_ref.name);
        if (!p[k].bso || !p[k].plo) {
            ws_policy_pairs_free(p, k + 1);
            return ws_fail(err, "out of memory");
        }
        q += len;
        if (!*q) { k++; break; }
        q++;
    }
    *out = p;
    *n = k;
    return 0;
}

/* ------------------------------------------------------------ stats */

/* The t quantile of a CI with df degrees of freedom, remembered for the
 * last df: every cell of a sweep has as many seeds, and every table asks
 * again (the incomplete-beta inversion is most of a summary's time). */
static double t975(double df)
{
    static _Thread_local double last_df = -1, last_t;
    if (df != last_df) {
        last_t = gsl_cdf_tdist_Pinv(0.975, df);
        last_df = df;
    }
    return last_t;
}

void ws_ci95(const double *x, size_t n, double *mean, double *lo, double *hi)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m += x[i];
    m = n ? m / (double)n : NAN;
    *mean = m;
    if (n < 2) { *lo = *hi = NAN; return; }
    double ss = 0;
    for (size_t i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
    double sd = sqrt(ss / (double)(n - 1));
    double half = t975((double)(n - 1)) * sd / sqrt((double)n);
    *lo = m - half;
    *hi = m + half;
}

long ws_steady_count(long recurrences)
{
    long k = (long)ceil(0.1 * (double)recurrences);
    if (k < 5) k = 5;
    return k < recurrences ? k : recurrences;
}

/* ------------------------------------------------------------ plan */

size_t ws_sweep_index(const ws_sweep *s, size_t pair, size_t gpu, size_t work,
                      size_t eta, size_t beta, size_t seed)
{
    return (((((pair * s->n_gpus + gpu) * s->n_work + work) * s->n_etas + eta)
             * s->n_betas + beta) * s->n_seeds) + seed;
}

/* Axis indices of simulation i. */
static void unindex(const ws_sweep *s, size_t i, size_t ax[6])
{
    size_t dims[6] = {s->n_pairs, s->n_gpus, s->n_work, s->n_etas, s->n_betas, s->n_seeds};
    for (int k = 5; k >= 0; k--) {
        ax[k] = i % dims[k];
        i /= dims[k];
    }
}

void ws_sweep_free(ws_sweep *s)
{
    ws_policy_pairs_free(s->pairs, s->n_pairs);
    for (size_t i = 0; s->jobs && i < s->n_gpus * s->n_work; i++) ws_job_free(&s->jobs[i]);
    free(s->jobs);
    for (size_t i = 0; s->sims && i < s->n_sims; i++) {
        free(s->sims[i].rec_cost);
        free(s->sims[i].error);
    }
    free(s->sims);
    free(s->recurrences);
    free(s->gpus);
    free(s->work);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ running */

void ws_sweep_cell_name(const ws_sweep *s, size_t cell, char *buf, size_t n)
{
    size_t ax[6];
    unindex(s, cell * s->n_seeds, ax);
    snprintf(buf, n, "%s %s/%s eta %g beta %g", s->pairs[ax[0]].label, s->gpus[ax[1]],
             s->work[ax[2]], s->etas[ax[3]], s->betas[ax[4]]);
}


/* Aggregation as the records arrive (they come recurrence by recurrence):
 * the tries of the current recurrence are summed, and a finished
 * recurrence is added to the steady-state sums when it is in the window.
 * The additions are the ones a per-recurrence array would make, in the
 * same order, so the results are bit-identical to summing such arrays. */
typedef struct rec_sink {
    ws_sweep_sim *sim;
    long R, first_steady;          /* recurrences; first one in the window */
    long cur;                      /* recurrence being summed; 0 = none */
    double e, t, c;                /* its sums */
    double se, st;                 /* steady-state sums */
} rec_sink;

static void close_recurrence(rec_sink *k)
{
    if (!k->cur) return;
    if (k->cur >= k->first_steady) { k->se += k->e; k->st += k->t; }
    if (k->sim->rec_cost) k->sim->rec_cost[k->cur - 1] = k->c;
    k->cur = 0;
}

static int accumulate(void *p, const ws_run_record *r)
{
    rec_sink *k = p;
    if (r->recurrence < 1 || r->recurrence > k->R) return 0;
    if (r->recurrence != k->cur) {
        close_recurrence(k);
        k->cur = r->recurrence;
        k->e = k->t = k->c = 0;
    }
    k->e += r->energy_j;
    k->t += r->time_s;
    k->c += r->cost;
    return 0;
}

int ws_sweep_run_sim(ws_sweep *s, const ws_sweep_policy *pol, size_t i)
{
    size_t ax[6];
    unindex(s, i, ax);
    const ws_sweep_policy *rp = &pol[ax[0]];
    ws_job_table *jt = &s->jobs[ax[1] * s->n_work + ax[2]];
    ws_sweep_sim *sim = &s->sims[i];
    ws_error err = {{0}};
    unsigned long seed = s->seeds[ax[5]];
    ws_job job = jt->job;                 /* this cell's view */
    job.eta = s->etas[ax[3]];
    job.beta = s->betas[ax[4]];
    long R = s->recurrences[ax[1] * s->n_work + ax[2]];
    ws_sim_params sp = {.recurrences = R, .seed = seed};
    ws_sweep_sim_reset(sim, R);
    const unsigned long streams[3] = {ws_stream_seed(seed, 0), ws_stream_seed(seed, 1),
                                      ws_stream_seed(seed, 2)};
    ws_rng_preseed(streams);
    ws_bso *bso = ws_bso_new(rp->bt, rp->bp, seed, &err);
    ws_plo *plo = bso ? ws_plo_new(rp->pt, rp->pp, seed, &err) : NULL;
    if (plo) {
        char where[128];
        ws_sweep_cell_name(s, i / s->n_seeds, where, sizeof where);
        ws_policy_log_where(bso, plo, where);
    }
    rec_sink rs = {sim, R, R - ws_steady_count(R) + 1, 0, 0, 0, 0, 0, 0};
    ws_sim_totals tot;
    int bad = !bso || !plo || ws_simulate_whatif(&job, bso, plo, &sp, s->whatif, accumulate,
                                                 &rs, &tot, &err);
    ws_plo_free(plo);
    ws_bso_free(bso);
    if (!bad) {
        close_recurrence(&rs);
        long k = ws_steady_count(R);
        sim->energy_j = tot.energy_j;
        sim->time_s = tot.time_s;
        sim->cost = tot.cost;
        sim->steady_energy = k ? rs.se / (double)k : NAN;
        sim->steady_time = k ? rs.st / (double)k : NAN;
        sim->final_bs = tot.final_bs;
        sim->final_pl = tot.final_pl;
        sim->co2_g = tot.co2_g;
        sim->usd = tot.usd;
        return 0;
    }
    /* The cell is named where the message is shown (a table row, or the
     * CLI's warning), so the record only says which seed. */
    ws_fail_prefix(&err, "seed %lu", seed);
    ws_sweep_sim_fail(s, i, err.msg);
    return -1;
}

typedef struct pool {
    ws_sweep *s;
    const ws_sweep_policy *pol;
    const unsigned char *todo;
    ws_journal *journal;
    pthread_mutex_t lock;
    size_t next, done, total;
    ws_progress *progress;             /* NULL: none */
    int journal_failed;
    ws_error journal_err;
} pool;

/* After each simulation (under the lock, or in the only thread): journal
 * and progress. */
static void finished(pool *pl, size_t i)
{
    if (pl->journal && !pl->journal_failed && ws_journal_add(pl->journal, pl->s, i)) {
        pl->journal_failed = 1;
        ws_fail(&pl->journal_err, "%s: cannot append to the journal", pl->journal->path);
    }
    pl->done++;
    if (pl->progress) ws_progress_step(pl->progress, 1);
}

static void finished_cb(void *ctx, size_t i)
{
    finished(ctx, i);               /* isolate.c calls it from its only thread: no lock */
}

static void *worker(void *arg)
{
    pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t i = pl->next;
        while (i < pl->s->n_sims && !pl->todo[i]) i++;
        pl->next = i + 1;
        int stop = i >= pl->s->n_sims;
        pthread_mutex_unlock(&pl->lock);
        if (stop) return NULL;
        ws_sweep_run_sim(pl->s, pl->pol, i);
        pthread_mutex_lock(&pl->lock);
        finished(pl, i);
        pthread_mutex_unlock(&pl->lock);
    }
}

static int find_pair(const ws_policy_pair *p, size_t n, const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].label, label)) return (int)i;
    return -1;
}

/* "{k=v,...}" as given in --policies, or "" without parameters. */
static void given_params(const ws_policy_ref *ref, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!ref || !ref->n_params) return;
    size_t used = 0;
    for (size_t i = 0; i < ref->n_params && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s=%s", i ? "," : "{", ref->params[i].key,
                         ref->params[i].value);
        if (n < 0) return;
        used += (size_t)n;
    }
    if (used + 1 < len) strcat(buf, "}");
}

static const ws_param_raw *params_for(const ws_policy_ref *ref, const char *name, size_t *n)
{
    if (ref->name && !strcmp(ref->name, name)) { *n = ref->n_params; return ref->params; }
    *n = 0;
    return NULL;
}

int ws_sweep_run(const ws_run_config *cfg, const ws_study_env *env,
                 const ws_policy_pair *pairs, size_t n_pairs, int threads,
                 ws_sweep *s, ws_error *err)
{
    ws_sweep_opts o = {.threads = threads, .curves = 1};
    return ws_sweep_run_opts(cfg, env, pairs, n_pairs, &o, s, err);
}

int ws_sweep_run_opts(const ws_run_config *cfg, const ws_study_env *env,
                      const ws_policy_pair *pairs, size_t n_pairs,
                      const ws_sweep_opts *opts, ws_sweep *s, ws_error *err)
{
    memset(s, 0, sizeof *s);
    int rc = -1;
    ws_sweep_policy *res = NULL;
    unsigned char *todo = NULL;
    ws_journal jn = {0};
    pool pl = {0};
    /* Pairs: resolve names, drop duplicates, add the references. */
    s->pairs = calloc(n_pairs + 2, sizeof *s->pairs);
    res = calloc(n_pairs + 2, sizeof *res);
    if (!s->pairs || !res) { ws_fail(err, "out of memory"); goto out; }
    static const char *refs[2] = {"default", "oracle"};
    for (size_t i = 0; i < n_pairs + 2; i++) {
        const char *b = i < n_pairs ? pairs[i].bso : refs[i - n_pairs];
        const char *p = i < n_pairs ? pairs[i].plo : refs[i - n_pairs];
        const ws_bso_type *bt = ws_registry_bso(env->registry, b, err);
        const ws_plo_type *pt = bt ? ws_registry_plo(env->registry, p, err) : NULL;
        if (!bt || !pt) { ws_fail_prefix(err, "policy pair %s:%s", b, p); goto out; }
        const ws_policy_ref *bref = i < n_pairs ? &pairs[i].bso_ref : NULL;
        const ws_policy_ref *pref = i < n_pairs ? &pairs[i].plo_ref : NULL;
        char label[600], bgiven[256], pgiven[256];
        given_params(bref, bgiven, sizeof bgiven);
        given_params(pref, pgiven, sizeof pgiven);
        snprintf(label, sizeof label, "%s%s+%s%s", bt->name, bgiven, pt->name, pgiven);
        int same = find_pair(s->pairs, s->n_pairs, label);
        if (same >= 0 && !strcmp(s->pairs[same].bso, b) && !strcmp(s->pairs[same].plo, p))
            continue;                           /* the same pair twice */
        if (same >= 0)                          /* two builds: the names as given */
            snprintf(label, sizeof label, "%s%s+%s%s", b, bgiven, p, pgiven);
        if (find_pair(s->pairs, s->n_pairs, label) >= 0) continue;
        ws_policy_pair *q = &s->pairs[s->n_pairs];
        q->bso = strdup(b);
        q->plo = strdup(p);
        q->label = strdup(label);
        if (!q->bso || !q->plo || !q->label) { s->n_pairs++; ws_fail(err, "out of memory"); goto out; }
        ws_sweep_policy *r = &res[s->n_pairs++];
        r->bt = bt;
        r->pt = pt;
        size_t nr;
        const ws_param_raw *raw = bref && bref->n_params ? bref->params : params_for(&cfg->bso, b, &nr);
        if (bref && bref->n_params) nr = bref->n_params;
        char who[96];
        snprintf(who, sizeof who, "bso %s", bt->name);
        if (ws_params_resolve(bt->params, raw, nr, who, &r->bp, err)) goto out;
        raw = pref && pref->n_params ? pref->params : params_for(&cfg->plo, p, &nr);
        if (pref && pref->n_params) nr = pref->n_params;
        snprintf(who, sizeof who, "plo %s", pt->name);
        if (ws_params_resolve(pt->params, raw, nr, who, &r->pp, err)) goto out;
        char buf[1024];
        if (ws_params_format(bt->params, r->bp, buf, sizeof buf)
            || !(q->bso_params = strdup(buf))
            || ws_params_format(pt->params, r->pp, buf, sizeof buf)
            || !(q->plo_params = strdup(buf))) {
            ws_fail(err, "policy pair %s: parameters too long", label);
            goto out;
        }
        if (ws_registry_sha256(env->registry, bt, q->bso_sha256, err)
            || ws_registry_sha256(env->registry, pt, q->plo_sha256, err))
            goto out;
    }
    s->ref_default = (size_t)find_pair(s->pairs, s->n_pairs, "default+default");
    s->ref_oracle = (size_t)find_pair(s->pairs, s->n_pairs, "oracle+oracle");

    /* Axes (views into cfg, which outlives the sweep's use of names). */
    s->n_gpus = cfg->n_gpus;
    s->n_work = cfg->n_workloads + cfg->n_jobs;
    s->n_etas = cfg->n_etas;
    s->n_betas = cfg->n_betas;
    s->n_seeds = cfg->n_seeds;
    s->etas = cfg->etas;
    s->betas = cfg->betas;
    s->seeds = cfg->seeds;
    s->n_sims = s->n_pairs * s->n_gpus * s->n_work * s->n_etas * s->n_betas * s->n_seeds;
    if (!s->n_sims) { ws_fail(err, "%s: the run plan is empty", cfg->path); goto out; }
    s->gpus = calloc(s->n_gpus, sizeof *s->gpus);
    s->work = calloc(s->n_work, sizeof *s->work);
    s->whatif = env->whatif;
    s->jobs = calloc(s->n_gpus * s->n_work, sizeof *s->jobs);
    s->sims = calloc(s->n_sims, sizeof *s->sims);
    s->recurrences = calloc(s->n_gpus * s->n_work, sizeof *s->recurrences);
    s->curves = opts->curves;
    todo = malloc(s->n_sims);
    if (!s->gpus || !s->work || !s->jobs || !s->sims || !s->recurrences || !todo) {
        ws_fail(err, "out of memory");
        goto out;
    }
    memset(todo, 1, s->n_sims);
    for (size_t g = 0; g < s->n_gpus; g++) s->gpus[g] = cfg->gpus[g];
    for (size_t w = 0; w < s->n_work; w++) {
        const char *name = w < cfg->n_workloads ? cfg->workloads[w]
                                                : cfg->jobs[w - cfg->n_workloads].name;
        const ws_workload_spec *spec = ws_study_workload(cfg, env->catalogue, name, err);
        if (!spec) goto out;
        s->work[w] = spec->name;
    }
    /* Job tables, built once, before any thread starts. */
    for (size_t g = 0; g < s->n_gpus; g++) {
        ws_traces tr;
        if (ws_traces_load(&tr, env->traces_dir, s->gpus[g], env->limits, err)) {
            ws_traces_free(&tr);
            goto out;
        }
        for (size_t w = 0; w < s->n_work; w++) {
            const ws_workload_spec *spec = ws_study_workload(cfg, env->catalogue, s->work[w], err);
            if (ws_study_job(env->whatif, &tr, spec, 0.5, 2.0, &s->jobs[g * s->n_work + w], 1, err)) {
                ws_traces_free(&tr);
                goto out;
            }
        }
        ws_traces_free(&tr);
    }
    for (size_t j = 0; j < s->n_gpus * s->n_work; j++)
        s->recurrences[j] = cfg->recurrences > 0 ? cfg->recurrences
                                                 : s->jobs[j].default_recurrences;
    /* Per-recurrence costs only for the learning curves: without them a
     * simulation's memory does not depend on its recurrences. */
    for (size_t i = 0; s->curves && i < s->n_sims; i++) {
        s->sims[i].rec_cost = calloc((size_t)ws_sweep_recurrences(s, i), sizeof(double));
        if (!s->sims[i].rec_cost) { ws_fail(err, "out of memory"); goto out; }
    }
    /* The journal: the last step of set-up, so a set-up error leaves none. */
    unsigned char fp[32];
    if ((opts->journal || opts->n_merge)
        && ws_sweep_fingerprint(s, cfg, env->registry, res, fp, err))
        goto out;
    if (opts->journal
        && ws_journal_start(&jn, opts->journal, s, fp, opts->resume, todo, &s->n_reused, err))
        goto out;
    /* Merging shards: every simulation from their journals, none run. */
    for (size_t m = 0; m < opts->n_merge; m++)
        if (ws_journal_merge(opts->merge[m], s, fp, todo, &s->n_reused, err)) goto out;
    if (opts->n_merge) {
        size_t missing = 0, first = 0;
        for (size_t i = s->n_sims; i-- > 0;)
            if (todo[i]) { missing++; first = i; }
        if (missing) {
            ws_fail(err, "%s: %zu of %zu simulations are in none of the %zu journals (the"
                    " first: %zu); merge the journals of every shard, each run to its end",
                    opts->merge[0], missing, s->n_sims, opts->n_merge, first);
            goto out;
        }
    }
    /* A shard runs its share only. */
    if (opts->shard_n)
        for (size_t i = 0; i < s->n_sims; i++)
            if (i % opts->shard_n != opts->shard_k) todo[i] = 0;

    /* Run what is left: in child processes, or on a pool of threads. */
    pl.s = s;
    pl.pol = res;
    pl.todo = todo;
    pl.journal = opts->journal ? &jn : NULL;
    for (size_t i = 0; i < s->n_sims; i++) pl.total += todo[i];
    s->n_run = pl.total;
    ws_progress bar;
    if (env->progress) {
        ws_progress_start(&bar, "simulations", pl.total);
        pl.progress = &bar;
    }
    int threads = opts->threads < 1 ? 1 : opts->threads;
    ws_policy_stdout_hold();
    if (opts->isolate) {
        if (ws_sweep_run_isolated(s, res, todo, threads, opts->cell_timeout, ws_sweep_run_sim,
                                  finished_cb, &pl, err)) {
            ws_policy_stdout_release();
            if (pl.progress) ws_progress_end(pl.progress);
            goto out;
        }
    } else {
        pthread_mutex_init(&pl.lock, NULL);
        if ((size_t)threads > pl.total) threads = pl.total ? (int)pl.total : 1;
        pthread_t *tid = calloc((size_t)threads, sizeof *tid);
        int started = 0;
        if (tid)
            for (; started < threads; started++)
                if (pthread_create(&tid[started], NULL, worker, &pl)) break;
        if (started == 0) worker(&pl);          /* no threads: run here */
        for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
        free(tid);
        pthread_mutex_destroy(&pl.lock);
    }
    ws_policy_stdout_release();
    if (pl.progress) ws_progress_end(pl.progress);
    if (pl.journal_failed) { *err = pl.journal_err; goto out; }
    for (size_t i = 0; i < s->n_sims; i++) s->n_failed += (size_t)s->sims[i].failed;
    rc = 0;
out:
    ws_journal_close(&jn);
    for (size_t i = 0; res && i < s->n_pairs; i++) {
        if (res[i].bt) ws_params_free(res[i].bt->params, res[i].bp);
        if (res[i].pt) ws_params_free(res[i].pt->params, res[i].pp);
    }
    free(res);
    free(todo);
    if (rc) ws_sweep_free(s);
    return rc;
}

/* ------------------------------------------------------------ summary */

static double saving(double ours, double ref)
{
    return ref > 0 ? 1.0 - ours / ref : NAN;
}

/* A per-seed quantity of a cell's summary: whether seed i has one (its
 * simulation succeeded; for regret, oracle's too) and its value. */
enum { F_ENERGY, F_TIME, F_COST, F_STEADY_E, F_STEADY_T, F_CO2, F_USD, F_REGRET };

static int seed_value(const ws_sweep *s, size_t base, size_t oref, size_t i, int f, double *x)
{
    const ws_sweep_sim *m = &s->sims[base + i];
    if (m->failed) return 0;
    switch (f) {
    case F_ENERGY: *x = m->energy_j; return 1;
    case F_TIME: *x = m->time_s; return 1;
    case F_COST: *x = m->cost; return 1;
    case F_STEADY_E: *x = m->steady_energy; return 1;
    case F_STEADY_T: *x = m->steady_time; return 1;
    case F_CO2: *x = m->co2_g; return 1;
    case F_USD: *x = m->usd; return 1;
    default:
        if (s->sims[oref + i].failed) return 0;
        *x = m->cost - s->sims[oref + i].cost;
        return 1;
    }
}

/* ws_ci95 of quantity f over the seeds that have it, read in place in two
 * passes instead of copied out: the same additions in the same order, so
 * the same bits, without n doubles of scratch per quantity. */
static void seed_ci95(const ws_sweep *s, size_t base, size_t oref, int f, ws_stat *st)
{
    size_t n = s->n_seeds, k = 0;
    double m = 0, x;
    for (size_t i = 0; i < n; i++)
        if (seed_value(s, base, oref, i, f, &x)) { m += x; k++; }
    m = k ? m / (double)k : NAN;
    st->mean = m;
    if (k < 2) { st->lo = st->hi = NAN; return; }
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (seed_value(s, base, oref, i, f, &x)) ss += (x - m) * (x - m);
    double sd = sqrt(ss / (double)(k - 1));
    double half = t975((double)(k - 1)) * sd / sqrt((double)k);
    st->lo = m - half;
    st->hi = m + half;
}

void ws_sweep_summarise(const ws_sweep *s, size_t cell, ws_sweep_summary *o)
{
    size_t ax[6], n = s->n_seeds, base = cell * n;
    unindex(s, base, ax);
    memset(o, 0, sizeof *o);
    o->pair = ax[0]; o->gpu = ax[1]; o->work = ax[2]; o->eta = ax[3]; o->beta = ax[4];
    o->recurrences = ws_sweep_recurrences(s, base);
    o->error = "";
    size_t dref = ws_sweep_index(s, s->ref_default, ax[1], ax[2], ax[3], ax[4], 0);
    size_t oref = ws_sweep_index(s, s->ref_oracle, ax[1], ax[2], ax[3], ax[4], 0);
    /* Our sums and default's over the seeds where both succeeded. */
    double oe = 0, ot = 0, oc = 0, ose = 0, ost = 0;
    double de = 0, dt = 0, dc = 0, dse = 0, dst = 0;
    size_t kd = 0;
    for (size_t i = 0; i < n; i++) {
        const ws_sweep_sim *m = &s->sims[base + i], *d = &s->sims[dref + i];
        if (m->failed) {
            if (!o->seeds_failed++ && m->error) o->error = m->error;
            continue;
        }
        o->seeds_ok++;
        if (!d->failed) {
            kd++;
            oe += m->energy_j; ot += m->time_s; oc += m->cost;
            ose += m->steady_energy; ost += m->steady_time;
            de += d->energy_j;
            dt += d->time_s;
            dc += d->cost;
            dse += d->steady_energy;
            dst += d->steady_time;
        }
    }
    ws_stat *stats[8] = {&o->energy, &o->time, &o->cost, &o->steady_energy, &o->steady_time,
                         &o->co2, &o->usd, &o->regret};
    for (int f = F_ENERGY; f <= F_REGRET; f++) seed_ci95(s, base, oref, f, stats[f]);
    if (!kd) {
        o->save_energy = o->save_time = o->save_cost = NAN;
        o->save_steady_energy = o->save_steady_time = NAN;
    } else if (base == dref) {              /* exactly 0 for the reference itself */
        o->save_energy = o->save_time = o->save_cost = 0;
        o->save_steady_energy = o->save_steady_time = 0;
    } else {
        /* Ratios of sums over the same seeds = ratios of means. */
        o->save_energy = saving(oe, de);
        o->save_time = saving(ot, dt);
        o->save_cost = saving(oc, dc);
        o->save_steady_energy = saving(ose, dse);
        o->save_steady_time = saving(ost, dst);
    }
}

/* Final knobs over seeds: "bs:pl=count;..." by count (desc), then knob.
 * Counted by sorting (bs, pl, seed): n log n in the seeds. */
typedef struct knob_count { int bs, pl; size_t n, first; } knob_count;

static int by_knob(const void *a, const void *b)
{
    const knob_count *x = a, *y = b;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    if (x->pl != y->pl) return x->pl < y->pl ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int by_count(const void *a, const void *b)
{
    const knob_count *x = a, *y = b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    return by_knob(a, b);
}

/* Room tally_knobs needs: the most knobs of any job. */
static size_t knob_room(const ws_sweep *s)
{
    size_t most = 1;
    for (size_t j = 0; j < s->n_gpus * s->n_work; j++) {
        const ws_job *job = &s->jobs[j].job;
        if ((size_t)job->knob_start[job->n_bs] > most) most = (size_t)job->knob_start[job->n_bs];
    }
    return most;
}

/* The distinct final knobs of a cell's successful seeds into k (room for
 * knob_room), each with its count and first seed, in (bs, pl) order: one
 * counter per knob of the job's table (sorted by batch size, then power
 * limit), so memory does not grow with seeds and time is linear in them. */
static size_t tally_knobs(const ws_sweep *s, size_t cell, knob_count *k)
{
    size_t per_job = s->n_etas * s->n_betas * s->n_seeds;
    const ws_job *job = &s->jobs[(cell * s->n_seeds / per_job) % (s->n_gpus * s->n_work)].job;
    int nk = job->knob_start[job->n_bs];
    for (int b = 0; b < job->n_bs; b++)
        for (int q = job->knob_start[b]; q < job->knob_start[b + 1]; q++)
            k[q] = (knob_count){job->bs[b], job->knob_pl[q], 0, 0};
    for (size_t i = 0; i < s->n_seeds; i++) {
        const ws_sweep_sim *x = &s->sims[cell * s->n_seeds + i];
        if (x->failed) continue;
        int lo = 0, hi = job->n_bs;                 /* the batch size, by bisection */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (job->bs[mid] < x->final_bs) lo = mid + 1; else hi = mid;
        }
        for (int q = lo < job->n_bs && job->bs[lo] == x->final_bs ? job->knob_start[lo] : nk;
             q < (lo < job->n_bs ? job->knob_start[lo + 1] : nk); q++)
            if (job->knob_pl[q] == x->final_pl) {
                if (!k[q].n++) k[q].first = i;
                break;
            }
    }
    size_t m = 0;
    for (int q = 0; q < nk; q++)
        if (k[q].n) k[m++] = k[q];
    return m;
}

static size_t final_knobs(const ws_sweep *s, size_t cell, knob_count *k)
{
    size_t m = tally_knobs(s, cell, k);
    qsort(k, m, sizeof *k, by_count);
    return m;
}

void ws_sweep_top_knob(const ws_sweep *s, size_t cell, int *bs, int *pl, size_t *n)
{
    *bs = *pl = 0;
    *n = 0;
    knob_count *k = malloc(knob_room(s) * sizeof *k);
    if (!k) return;
    size_t m = tally_knobs(s, cell, k), first = 0;
    for (size_t i = 0; i < m; i++)
        if (k[i].n > *n || (k[i].n == *n && k[i].first < first)) {
            *n = k[i].n;
            first = k[i].first;
            *bs = k[i].bs;
            *pl = k[i].pl;
        }
    free(k);
}

static void num(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else if (isinf(x)) fputs(x > 0 ? "inf" : "-inf", f);
}

/* A CSV field, quoted when it holds a comma, a quote or a line end. */
static void str_csv(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void stat_csv(FILE *f, const ws_stat *st)
{
    fputc(',', f); num(f, st->mean);
    fputc(',', f); num(f, st->lo);
    fputc(',', f); num(f, st->hi);
}

void ws_sweep_write_csv(FILE *f, const ws_sweep *s)
{
    fputs("bso,plo,policy,gpu,workload,eta,beta,seeds,seeds_ok,seeds_failed,recurrences,"
          "energy_j,energy_j_lo,energy_j_hi,time_s,time_s_lo,time_s_hi,"
          "cost,cost_lo,cost_hi,steady_energy_j,steady_energy_j_lo,steady_energy_j_hi,"
          "steady_time_s,steady_time_s_lo,steady_time_s_hi,"
          "saving_energy,saving_time,saving_cost,saving_steady_energy,saving_steady_time,"
          "regret,regret_lo,regret_hi,final_knobs,error", f);
    const int co2 = s->whatif && s->whatif->has_carbon, usd = s->whatif && s->whatif->has_price;
    if (co2) fputs(",co2_g,co2_g_lo,co2_g_hi", f);
    if (usd) fputs(",usd,usd_lo,usd_hi", f);
    char wdesc[1024] = "";
    if (ws_whatif_active(s->whatif)) {
        ws_whatif_describe(s->whatif, wdesc, sizeof wdesc);
        fputs(",whatif", f);
    }
    fputs(",bso_params,bso_sha256,plo_params,plo_sha256", f);
    fputc('\n', f);
    knob_count *k = malloc(knob_room(s) * sizeof *k);
    if (!k) return;
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        const ws_policy_pair *p = &s->pairs[o.pair];
        str_csv(f, p->bso); fputc(',', f);
        str_csv(f, p->plo); fputc(',', f);
        str_csv(f, p->label);
        fprintf(f, ",%s,%s,", s->gpus[o.gpu], s->work[o.work]);
        num(f, s->etas[o.eta]); fputc(',', f);
        num(f, s->betas[o.beta]);
        fprintf(f, ",%zu,%zu,%zu,%ld", s->n_seeds, o.seeds_ok, o.seeds_failed, o.recurrences);
        stat_csv(f, &o.energy);
        stat_csv(f, &o.time);
        stat_csv(f, &o.cost);
        stat_csv(f, &o.steady_energy);
        stat_csv(f, &o.steady_time);
        double sv[5] = {o.save_energy, o.save_time, o.save_cost, o.save_steady_energy,
                        o.save_steady_time};
        for (int i = 0; i < 5; i++) { fputc(',', f); num(f, sv[i]); }
        stat_csv(f, &o.regret);
        fputc(',', f);
        size_t m = final_knobs(s, c, k);
        for (size_t i = 0; i < m; i++) fprintf(f, "%s%d:%d=%zu", i ? ";" : "", k[i].bs, k[i].pl, k[i].n);
        fputc(',', f);
        str_csv(f, o.error);
        if (co2) stat_csv(f, &o.co2);
        if (usd) stat_csv(f, &o.usd);
        if (wdesc[0]) { fputc(',', f); str_csv(f, wdesc); }
        fputc(',', f); str_csv(f, p->bso_params ? p->bso_params : "");
        fprintf(f, ",%s,", p->bso_sha256);
        str_csv(f, p->plo_params ? p->plo_params : "");
        fprintf(f, ",%s\n", p->plo_sha256);
    }
    free(k);
}

static void stat_json(FILE *f, const char *name, const ws_stat *st)
{
    fprintf(f, ", \"%s\": {\"mean\": ", name); ws_json_num(f, st->mean);
    fputs(", \"ci95\": [", f); ws_json_num(f, st->lo);
    fputs(", ", f); ws_json_num(f, st->hi);
    fputs("]}", f);
}

void ws_sweep_write_json(FILE *f, const ws_sweep *s)
{
    knob_count *k = malloc(knob_room(s) * sizeof *k);
    if (!k) return;
    fputs("{\"seeds\": [", f);
    for (size_t i = 0; i < s->n_seeds; i++) fprintf(f, "%s%lu", i ? ", " : "", s->seeds[i]);
    fputc(']', f);
    if (ws_whatif_active(s->whatif)) {
        char d[1024];
        ws_whatif_describe(s->whatif, d, sizeof d);
        fputs(", \"whatif\": ", f);
        ws_json_str(f, d);
    }
    fputs(", \"cells\": [", f);
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        const ws_policy_pair *p = &s->pairs[o.pair];
        fputs(c ? ",\n  {\"bso\": " : "\n  {\"bso\": ", f); ws_json_str(f, p->bso);
        fputs(", \"plo\": ", f); ws_json_str(f, p->plo);
        fputs(", \"policy\": ", f); ws_json_str(f, p->label);
        fputs(", \"bso_params\": ", f); ws_json_str(f, p->bso_params ? p->bso_params : "");
        fputs(", \"bso_sha256\": ", f); ws_json_str(f, p->bso_sha256);
        fputs(", \"plo_params\": ", f); ws_json_str(f, p->plo_params ? p->plo_params : "");
        fputs(", \"plo_sha256\": ", f); ws_json_str(f, p->plo_sha256);
        fputs(", \"gpu\": ", f); ws_json_str(f, s->gpus[o.gpu]);
        fputs(", \"workload\": ", f); ws_json_str(f, s->work[o.work]);
        fputs(", \"eta\": ", f); ws_json_num(f, s->etas[o.eta]);
        fputs(", \"beta\": ", f); ws_json_num(f, s->betas[o.beta]);
        fprintf(f, ", \"seeds_ok\": %zu, \"seeds_failed\": %zu, \"error\": ", o.seeds_ok,
                o.seeds_failed);
        ws_json_str(f, o.error);
        fprintf(f, ", \"recurrences\": %ld", o.recurrences);
        stat_json(f, "energy_j", &o.energy);
        stat_json(f, "time_s", &o.time);
        stat_json(f, "cost", &o.cost);
        stat_json(f, "steady_energy_j", &o.steady_energy);
        stat_json(f, "steady_time_s", &o.steady_time);
        stat_json(f, "regret", &o.regret);
        if (s->whatif && s->whatif->has_carbon) stat_json(f, "co2_g", &o.co2);
        if (s->whatif && s->whatif->has_price) stat_json(f, "usd", &o.usd);
        fputs(", \"saving\": {\"energy\": ", f); ws_json_num(f, o.save_energy);
        fputs(", \"time\": ", f); ws_json_num(f, o.save_time);
        fputs(", \"cost\": ", f); ws_json_num(f, o.save_cost);
        fputs(", \"steady_energy\": ", f); ws_json_num(f, o.save_steady_energy);
        fputs(", \"steady_time\": ", f); ws_json_num(f, o.save_steady_time);
        fputs("}, \"final_knobs\": {", f);
        size_t m = final_knobs(s, c, k);
        for (size_t i = 0; i < m; i++)
            fprintf(f, "%s\"%d:%d\": %zu", i ? ", " : "", k[i].bs, k[i].pl, k[i].n);
        fputs("}}", f);
    }
    fputs("\n]}\n", f);
    free(k);
}

/* Cumulative cost (successful seeds) and regret versus oracle (seeds where
 * both succeeded) of cell `base`'s seeds up to recurrence r, advanced one
 * recurrence per call; cum/oc hold the running sums per seed. */
void ws_sweep_curve_step(const ws_sweep *s, size_t base, size_t oref, long r, double *cum,
                         double *oc, ws_stat *cost, ws_stat *regret)
{
    size_t n = s->n_seeds, k = 0, kr = 0;
    double *a = cum + n, *g = oc + n;        /* scratch after the running sums */
    for (size_t i = 0; i < n; i++) {
        const ws_sweep_sim *m = &s->sims[base + i], *q = &s->sims[oref + i];
        cum[i] += m->rec_cost[r];
        oc[i] += q->rec_cost[r];
        if (m->failed) continue;
        a[k++] = cum[i];
        if (!q->failed) g[kr++] = cum[i] - oc[i];
    }
    ws_ci95(a, k, &cost->mean, &cost->lo, &cost->hi);
    ws_ci95(g, kr, &regret->mean, &regret->lo, &regret->hi);
}

void ws_sweep_write_curves(FILE *f, const ws_sweep *s)
{
    fputs("policy,gpu,workload,eta,beta,recurrence,cum_cost,cum_cost_lo,cum_cost_hi,"
          "regret,regret_lo,regret_hi", f);
    char wdesc[1024] = "";
    if (ws_whatif_active(s->whatif)) {
        ws_whatif_describe(s->whatif, wdesc, sizeof wdesc);
        fputs(",whatif", f);
    }
    fputc('\n', f);
    size_t n = s->n_seeds;
    double *cum = calloc(2 * (n ? n : 1), sizeof *cum), *oc = calloc(2 * (n ? n : 1), sizeof *oc);
    if (!cum || !oc) goto out;
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        size_t ax[6], base = c * n;
        unindex(s, base, ax);
        size_t oref = ws_sweep_index(s, s->ref_oracle, ax[1], ax[2], ax[3], ax[4], 0);
        memset(cum, 0, n * sizeof *cum);
        memset(oc, 0, n * sizeof *oc);
        long R = s->curves ? ws_sweep_recurrences(s, base) : 0;
        for (long r = 0; r < R; r++) {
            ws_stat a, b;
            ws_sweep_curve_step(s, base, oref, r, cum, oc, &a, &b);
            fprintf(f, "%s,%s,%s,", s->pairs[ax[0]].label, s->gpus[ax[1]], s->work[ax[2]]);
            num(f, s->etas[ax[3]]); fputc(',', f);
            num(f, s->betas[ax[4]]);
            fprintf(f, ",%ld", r + 1);
            stat_csv(f, &a);
            stat_csv(f, &b);
            if (wdesc[0]) { fputc(',', f); str_csv(f, wdesc); }
            fputc('\n', f);
        }
    }
out:
    free(cum);
    free(oc);
}
