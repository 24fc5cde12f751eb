/* Sweeps over policies and the run plan; see wattsim/sweep.h. This file
 * sets a sweep up and runs its simulations (threads, isolation, journal,
 * shards): it orchestrates, and nothing below calls it back. Under it,
 * each calling only what is listed after it:
 *   sweep_plan.c     plan indices, axes, cell names, steady window (nothing)
 *   sweep_store.c    where results are kept, cursors (nothing)
 *   fingerprint.c    what decides the results, as sha256 (nothing)
 *   journal.c        records on disk and over pipes (store, fingerprint)
 *   isolate.c        cells in child processes (plan, store, journal)
 *   sweep_mpi.c      shards over MPI ranks (store, journal, fingerprint)
 *   sweep_summary.c  statistics per cell (plan, store)
 * pairs.c parses --policies and report/sweep_report.c writes the results;
 * scripts/check-layers fails if two of these call each other. */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/sweep.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "study_pairs.h"
#include "sweep_run.h"
#include "wattsim/process.h"
#include "wattsim/progress.h"
#include "wattsim/rng.h"

/* ------------------------------------------------------------ set-up */

void ws_sweep_free(ws_sweep *s)
{
    ws_policy_pairs_free(s->pairs, s->n_pairs);
    for (size_t i = 0; s->jobs && i < s->n_gpus * s->n_work; i++) ws_job_free(&s->jobs[i]);
    free(s->jobs);
    ws_sweep_store_free(s);
    free(s->recurrences);
    free(s->gpus);
    free(s->work);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ running */

/* The cell's name for the policies' log lines (ws_sweep_cell_name), kept
 * per thread while its simulations run: formatting eta and beta with %g
 * for every simulation was 4 % of a sweep's time, and threads take
 * simulations in plan order. The name depends only on the pair's label,
 * the GPU, the workload, eta and beta; the kept one is reused only when
 * all five are the same (compared by value, not by address, which a
 * later sweep may reuse). */
typedef struct kept_name {
    double eta, beta;
    size_t n_label, n_gpu, n_work;     /* lengths within name */
    char name[128];
    int valid;
} kept_name;

static int kept_matches(const kept_name *k, const char *label, const char *gpu,
                        const char *work, double eta, double beta)
{
    const size_t nl = strlen(label), ng = strlen(gpu), nw = strlen(work);
    return k->valid && memcmp(&k->eta, &eta, sizeof eta) == 0
           && memcmp(&k->beta, &beta, sizeof beta) == 0 && nl == k->n_label
           && ng == k->n_gpu && nw == k->n_work && !memcmp(k->name, label, nl)
           && !memcmp(k->name + nl + 1, gpu, ng) && !memcmp(k->name + nl + ng + 2, work, nw);
}

static const char *cell_name(const ws_sweep *s, size_t cell)
{
    static _Thread_local kept_name k;
    size_t ax[6];
    ws_sweep_axes(s, cell * s->n_seeds, ax);
    const char *label = s->pairs[ax[0]].label, *gpu = s->gpus[ax[1]], *work = s->work[ax[2]];
    const double eta = s->etas[ax[3]], beta = s->betas[ax[4]];
    if (!kept_matches(&k, label, gpu, work, eta, beta)) {
        ws_sweep_cell_name(s, cell, k.name, sizeof k.name);
        k.eta = eta;
        k.beta = beta;
        k.n_label = strlen(label);
        k.n_gpu = strlen(gpu);
        k.n_work = strlen(work);
        /* Reused only when the name holds all three, untruncated. */
        k.valid = k.n_label + k.n_gpu + k.n_work + 2 < sizeof k.name
                  && strlen(k.name) > k.n_label + k.n_gpu + k.n_work + 2;
    }
    return k.name;
}

/* Aggregation as the records arrive (they come recurrence by recurrence):
 * the tries of the current recurrence are summed, and a finished
 * recurrence is added to the steady-state sums when it is in the window.
 * The additions are the ones a per-recurrence array would make, in the
 * same order, so the results are bit-identical to summing such arrays. */
typedef struct rec_sink {
    ws_sweep_sim *sim;
    ws_sweep_hist *hist;           /* --keep-history: every record; else NULL */
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
    ws_sweep_hist *h = k->hist;
    if (h) {
        if (h->n == h->cap) {
            size_t cap = h->cap ? 2 * h->cap : 64;
            ws_run_record *m = realloc(h->runs, cap * sizeof *m);
            if (!m) return -1;            /* the simulation fails: out of memory */
            h->runs = m;
            h->cap = cap;
        }
        h->runs[h->n++] = *r;
    }
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

int ws_sweep_run_sim(ws_sweep *s, const ws_sweep_policy *pol, size_t i, ws_error *why,
                     ws_sweep_hist *hist)
{
    size_t ax[6];
    ws_sweep_axes(s, i, ax);
    const ws_sweep_policy *rp = &pol[ax[0]];
    ws_job_table *jt = &s->jobs[ax[1] * s->n_work + ax[2]];
    ws_sweep_sim one = {.rec_cost = ws_sweep_store_rec(s, i)}, *sim = &one;
    ws_error err = {{0}};
    unsigned long seed = s->seeds[ax[5]];
    ws_job job = jt->job;                 /* this cell's view */
    job.eta = s->etas[ax[3]];
    job.beta = s->betas[ax[4]];
    long R = s->recurrences[ax[1] * s->n_work + ax[2]];
    ws_sim_params sp = {.recurrences = R, .seed = seed};
    ws_drift_phase drift[WS_MAX_DRIFT_PHASES];
    for (size_t p = 0; p < jt->n_phases; p++)
        drift[p] = (ws_drift_phase){jt->phase_from[p], &jt->phase[p].job};
    sp.drift = drift;
    sp.n_drift = (int)jt->n_phases;
    sp.drift_informed = ws_study_pair_informed(s->pairs[ax[0]].bso, s->pairs[ax[0]].plo);
    /* Without a history the engine sums the recurrences itself (the same
     * additions as accumulate's, in the same order): no call per run. */
    if (!hist) {
        sp.steady_from = R - ws_steady_count(R) + 1;
        sp.rec_cost = sim->rec_cost;
    }
    ws_sweep_sim_reset(sim, R);
    ws_bso *bso = ws_bso_new(rp->bt, rp->bp, seed, &err);
    ws_plo *plo = bso ? ws_plo_new(rp->pt, rp->pp, seed, &err) : NULL;
    if (plo) {
        ws_policy_log_where(bso, plo, cell_name(s, i / s->n_seeds));
    }
    rec_sink rs = {sim, hist, R, R - ws_steady_count(R) + 1, 0, 0, 0, 0, 0, 0};
    ws_sim_totals tot = {0};
    int bad = !bso || !plo || ws_simulate_whatif(&job, bso, plo, &sp, s->whatif,
                                                 hist ? accumulate : NULL, &rs, &tot, &err);
    ws_plo_free(plo);
    ws_bso_free(bso);
    if (hist) hist->tot = tot;
    if (!bad) {
        long k = ws_steady_count(R);
        if (hist) {
            close_recurrence(&rs);
        } else {
            rs.se = tot.steady_energy_j;
            rs.st = tot.steady_time_s;
        }
        sim->energy_j = tot.energy_j;
        sim->time_s = tot.time_s;
        sim->cost = tot.cost;
        sim->steady_energy = k ? rs.se / (double)k : NAN;
        sim->steady_time = k ? rs.st / (double)k : NAN;
        sim->final_bs = tot.final_bs;
        sim->final_pl = tot.final_pl;
        sim->co2_g = tot.co2_g;
        sim->usd = tot.usd;
        ws_sweep_store_put(s, i, sim);
        return 0;
    }
    /* The cell is named where the message is shown (a table row, or the
     * CLI's warning), so the record only says which seed. */
    ws_fail_prefix(&err, "seed %lu", seed);
    ws_sweep_sim_fail(s, i, err.msg);
    if (why) *why = err;
    return -1;
}

typedef struct pool {
    ws_sweep *s;
    const ws_sweep_policy *pol;
    const unsigned char *todo;
    ws_journal *journal;
    pthread_mutex_t lock;
    size_t next, done, total;
    /* Python policies (pol[].serial) run one simulation at a time, whatever
     * the threads: never two threads in one interpreter. */
    pthread_mutex_t serial;
    /* A library caller's hook (opts->tick) and whether it cancelled; the
     * calling thread runs the hook: the only worker (one thread), or a
     * loop that waits for the workers (`idle` signalled as they finish). */
    const ws_sweep_opts *opts;
    int cancelled, in_caller, workers;
    pthread_cond_t idle;
    ws_progress *progress;             /* NULL: none */
    int journal_failed;
    ws_error journal_err;
    /* --keep-history: simulations finished ahead of next_emit wait here
     * (unordered, few: threads take simulations in plan order). */
    ws_sweep_history_fn history;
    void *history_ctx;
    size_t next_emit;
    struct pending *pend;
    size_t n_pend, cap_pend;
} pool;

typedef struct pending {
    size_t i;
    ws_sweep_hist h;
    char *error;                       /* NULL: it succeeded */
} pending;

static void emit(pool *pl, pending *e)
{
    pl->history(pl->history_ctx, pl->s, e->i, e->h.runs, e->h.n, &e->h.tot, e->error);
    free(e->h.runs);
    free(e->error);
}

/* Simulation i's history (taken over), then every one now in plan order
 * (under the lock). Out of memory: it is emitted with its error replaced,
 * out of order rather than lost. */
static void history_done(pool *pl, size_t i, ws_sweep_hist *h, const char *error)
{
    pending e = {i, *h, error ? strdup(error) : NULL};
    if (pl->n_pend == pl->cap_pend) {
        size_t cap = pl->cap_pend ? 2 * pl->cap_pend : 16;
        pending *m = realloc(pl->pend, cap * sizeof *m);
        if (!m) { free(e.error); e.error = strdup("out of memory keeping the history"); emit(pl, &e); return; }
        pl->pend = m;
        pl->cap_pend = cap;
    }
    pl->pend[pl->n_pend++] = e;
    for (size_t k = 0; k < pl->n_pend;) {
        while (pl->next_emit < pl->s->n_sims && !pl->todo[pl->next_emit]) pl->next_emit++;
        if (pl->pend[k].i != pl->next_emit) { k++; continue; }
        emit(pl, &pl->pend[k]);
        pl->pend[k] = pl->pend[--pl->n_pend];
        pl->next_emit++;
        k = 0;                             /* the next one may be anywhere */
    }
}

/* After each simulation (under the lock, or in the only thread): journal
 * (with its failure's message, NULL: the store's) and progress. */
static void finished(pool *pl, size_t i, const char *msg)
{
    if (pl->journal && !pl->journal_failed && ws_journal_add(pl->journal, pl->s, i, msg)) {
        pl->journal_failed = 1;
        ws_fail(&pl->journal_err, "%s: cannot append to the journal", pl->journal->path);
    }
    pl->done++;
    if (pl->progress) ws_progress_step(pl->progress, 1);
    /* The only worker is the caller's thread: the hook runs here. */
    if (pl->in_caller && pl->opts->tick
        && pl->opts->tick(pl->opts->tick_ctx, pl->done, pl->total))
        pl->cancelled = 1;
}

static void finished_cb(void *ctx, size_t i)
{
    finished(ctx, i, NULL);         /* isolate.c calls it from its only thread: no lock */
}

/* isolate.c's hook: the library caller's, with the pool's counts. */
static int pool_tick(void *ctx)
{
    pool *pl = ctx;
    return pl->opts->tick(pl->opts->tick_ctx, pl->done, pl->total);
}

static void *worker(void *arg)
{
    pool *pl = arg;
    if (!pl->in_caller) ws_thread_c_locale();  /* a plugin's setlocale() changes nothing here */
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t i = pl->next;
        while (i < pl->s->n_sims && !pl->todo[i]) i++;
        pl->next = i + 1;
        int stop = i >= pl->s->n_sims || pl->cancelled;
        if (stop && !pl->in_caller && --pl->workers == 0) pthread_cond_signal(&pl->idle);
        pthread_mutex_unlock(&pl->lock);
        if (stop) return NULL;
        ws_error why = {{0}};
        ws_sweep_hist h = {0};
        size_t ax[6];
        ws_sweep_axes(pl->s, i, ax);
        const int serial = pl->pol[ax[0]].serial;
        if (serial) pthread_mutex_lock(&pl->serial);
        int bad = ws_sweep_run_sim(pl->s, pl->pol, i, &why, pl->history ? &h : NULL);
        if (serial) pthread_mutex_unlock(&pl->serial);
        pthread_mutex_lock(&pl->lock);
        finished(pl, i, why.msg);
        if (pl->history) history_done(pl, i, &h, bad ? why.msg : NULL);
        pthread_cond_signal(&pl->idle);
        pthread_mutex_unlock(&pl->lock);
    }
}

/* With a library caller's hook and several workers: the calling thread
 * runs the hook until every worker has stopped, and at least once (the
 * workers of a short sweep may all be done before the first call). */
static void wait_workers(pool *pl)
{
    pthread_mutex_lock(&pl->lock);
    for (;;) {
        size_t done = pl->done, total = pl->total;
        pthread_mutex_unlock(&pl->lock);
        int stop = pl->opts->tick(pl->opts->tick_ctx, done, total);
        pthread_mutex_lock(&pl->lock);
        if (stop) pl->cancelled = 1;
        if (pl->workers == 0) break;
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100000000L;
        if (t.tv_nsec >= 1000000000L) { t.tv_sec++; t.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&pl->idle, &pl->lock, &t);
    }
    pthread_mutex_unlock(&pl->lock);
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
    ws_sweep_fp fp = {0};
    pool pl = {0};
    if (opts->history && (opts->isolate || opts->shard_n || opts->n_merge || opts->resume)) {
        ws_fail(err, "a simulation's history is kept in process only: not with isolation,"
                " shards, a merge or a resumed journal");
        goto out;
    }
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
        r->serial = ws_registry_serial(env->registry, bt) || ws_registry_serial(env->registry, pt);
        if (r->serial && opts->isolate && opts->tick) {
            ws_fail(err, "policy pair %s: its Python policy runs in this process's"
                    " interpreter, which a forked child (isolate) cannot share; run the"
                    " sweep in process (threads serialise Python policies), or isolated"
                    " from the command line (wattsim sweep --isolate, with py:MODULE:CLASS)",
                    label);
            goto out;
        }
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
        /* Its identity as run and plan record theirs (one code path). */
        const ws_study_policy sp = {bt, pt, r->bp, r->pp};
        if (!(q->identity = calloc(1, sizeof *q->identity))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        if (ws_study_pair_identity(env->registry, &sp, q->identity, err)) goto out;
        snprintf(q->identity->label, sizeof q->identity->label, "%s", label);
        const ws_policy_prov *pv = &q->identity->prov;
        if (!(q->bso_params = strdup(pv->bso_params))
            || !(q->plo_params = strdup(pv->plo_params))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        memcpy(q->bso_sha256, pv->bso_sha256, sizeof q->bso_sha256);
        memcpy(q->plo_sha256, pv->plo_sha256, sizeof q->plo_sha256);
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
    /* With --policies and the reference pairs the plan may be larger
     * than the config's: checked again before anything is allocated. */
    if (ws_run_config_plan_size(cfg, s->n_pairs, &s->n_sims, err)) goto out;
    if (!s->n_sims) { ws_fail(err, "%s: the run plan is empty", cfg->path); goto out; }
    s->gpus = calloc(s->n_gpus, sizeof *s->gpus);
    s->work = calloc(s->n_work, sizeof *s->work);
    s->whatif = env->whatif;
    s->jobs = calloc(s->n_gpus * s->n_work, sizeof *s->jobs);
    s->recurrences = calloc(s->n_gpus * s->n_work, sizeof *s->recurrences);
    s->curves = opts->curves;
    todo = malloc(s->n_sims);
    if (!s->gpus || !s->work || !s->jobs || !s->recurrences || !todo) {
        ws_fail(err, "%s: out of memory for a plan of %zu simulations", cfg->path, s->n_sims);
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
            if (ws_study_job_drift(env->whatif, &tr, env->limits, spec, 0.5, 2.0,
                                   &s->jobs[g * s->n_work + w], 1, err)) {
                ws_traces_free(&tr);
                goto out;
            }
        }
        ws_traces_free(&tr);
    }
    for (size_t j = 0; j < s->n_gpus * s->n_work; j++) {
        s->recurrences[j] = cfg->recurrences > 0 ? cfg->recurrences
                                                 : s->jobs[j].default_recurrences;
        ws_drift_phase drift[WS_MAX_DRIFT_PHASES];     /* every phase runs */
        const ws_workload_spec *spec =
            ws_study_workload(cfg, env->catalogue, s->work[j % s->n_work], err);
        if (!spec || ws_study_drift_phases(&s->jobs[j], spec, s->recurrences[j], drift, err) < 0)
            goto out;
    }
    /* Where results go: memory, or a spill file past opts->spill_sims. */
    if (ws_sweep_store_open(s, opts->spill_sims, opts->spill_dir, err)) goto out;
    /* A shard runs its share only. */
    if (opts->shard_n)
        for (size_t i = 0; i < s->n_sims; i++)
            if (i % opts->shard_n != opts->shard_k) todo[i] = 0;
    /* The journal: the last step of set-up, so a set-up error leaves none. */
    if ((opts->journal || opts->n_merge)
        && ws_sweep_fingerprint(s, cfg, env->registry, res, &fp, err))
        goto out;
    if (opts->step && opts->step(opts->step_ctx, WS_SWEEP_PLANNED, &fp, err)) goto out;
    if (opts->journal
        && ws_journal_start(&jn, opts->journal, opts->old_journals, opts->n_old_journals, s,
                            &fp, opts->resume, todo, &s->n_reused, err))
        goto out;
    /* Merging shards: every simulation from their journals, none run. */
    for (size_t m = 0; m < opts->n_merge; m++)
        if (ws_journal_merge(opts->merge[m], s, &fp, todo, &s->n_reused, err)) goto out;
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
    if (opts->step && opts->step(opts->step_ctx, WS_SWEEP_JOURNALED, &fp, err)) goto out;

    /* Run what is left: in child processes, or on a pool of threads. */
    pl.s = s;
    pl.pol = res;
    pl.todo = todo;
    pl.journal = opts->journal ? &jn : NULL;
    pl.history = opts->history;
    pl.history_ctx = opts->history_ctx;
    for (size_t i = 0; i < s->n_sims; i++) pl.total += todo[i];
    s->n_run = pl.total;
    ws_progress bar;
    if (env->progress) {
        ws_progress_start(&bar, "simulations", pl.total);
        pl.progress = &bar;
    }
    int threads = opts->threads < 1 ? 1 : opts->threads;
    pl.opts = opts;
    ws_policy_hold();
    if (opts->isolate) {
        if (ws_sweep_run_isolated(s, res, todo, threads, opts->cell_timeout, opts->cell_memory,
                                  ws_sweep_run_sim, finished_cb, opts->tick ? pool_tick : NULL,
                                  &pl, err)) {
            ws_policy_release();
            if (pl.progress) ws_progress_end(pl.progress);
            goto out;
        }
    } else {
        pthread_mutex_init(&pl.lock, NULL);
        pthread_mutex_init(&pl.serial, NULL);
        pthread_cond_init(&pl.idle, NULL);
        if ((size_t)threads > pl.total) threads = pl.total ? (int)pl.total : 1;
        /* A library caller's one worker is its own thread, which then
         * runs its hook between simulations (and its Python policies see
         * its signals). */
        pl.in_caller = opts->tick && threads == 1;
        pthread_t *tid = pl.in_caller ? NULL : calloc((size_t)threads, sizeof *tid);
        int started = 0;
        pthread_mutex_lock(&pl.lock);
        if (tid)
            for (; started < threads; started++, pl.workers++)
                if (pthread_create(&tid[started], NULL, worker, &pl)) break;
        pthread_mutex_unlock(&pl.lock);
        if (started == 0) {                     /* no threads: run here */
            pl.in_caller = opts->tick != NULL;
            worker(&pl);
        } else if (opts->tick) {
            wait_workers(&pl);
        }
        for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
        free(tid);
        pthread_cond_destroy(&pl.idle);
        pthread_mutex_destroy(&pl.serial);
        pthread_mutex_destroy(&pl.lock);
    }
    ws_policy_release();
    if (pl.progress) ws_progress_end(pl.progress);
    if (pl.cancelled) {
        ws_fail(err, "cancelled");
        goto out;
    }
    if (pl.journal && !pl.journal_failed && ws_journal_flush(pl.journal)) {
        pl.journal_failed = 1;
        ws_fail(&pl.journal_err, "%s: cannot append to the journal: %s", jn.path,
                strerror(errno));
    }
    if (pl.journal_failed) { *err = pl.journal_err; goto out; }
    ws_sweep_cursor cur;
    ws_sweep_cursor_init(&cur, s, 4096);
    for (size_t i = 0; i < s->n_sims; i++) s->n_failed += (size_t)ws_sweep_sim_at(&cur, i)->failed;
    ws_sweep_cursor_free(&cur);
    if (ws_sweep_io_error(s, err)) { rc = -2; goto out; }
    rc = 0;
out:
    ws_journal_close(&jn);
    ws_sweep_fp_free(&fp);
    for (size_t k = 0; k < pl.n_pend; k++) {   /* none left after a full run */
        free(pl.pend[k].h.runs);
        free(pl.pend[k].error);
    }
    free(pl.pend);
    for (size_t i = 0; res && i < s->n_pairs; i++) {
        if (res[i].bt) ws_params_free(res[i].bt->params, res[i].bp);
        if (res[i].pt) ws_params_free(res[i].pt->params, res[i].pp);
    }
    free(res);
    free(todo);
    if (rc) ws_sweep_free(s);
    return rc;
}
