/*
 * Policy conformance checks (wattsim/conformance.h).
 *
 * Every check drives the policy through the host's checked calls
 * (plugin.c), so wrong answers fail with the same one-line message a run
 * would give. Jobs are generated here, not read from traces: sizes 16, 32,
 * ... with three power limits each (100, 150, 200 W), two recorded runs per
 * size, b0 in the middle; in the many-size job the largest size never
 * reaches the target. A policy under test is paired with a partner the
 * host defines: a BSO with a PLO answering the highest limit, a PLO with a
 * BSO cycling through the sizes from b0.
 */
#include "wattsim/conformance.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "run.h"

#include "wattsim/rng.h"

/* ------------------------------------------------------------ jobs */

enum { MAX_BS = 8, N_PL = 3, RUNS = 2 };

typedef struct gen_job {
    ws_job job;
    int bs[MAX_BS], knob_start[MAX_BS + 1], knob_pl[MAX_BS * N_PL], run_start[MAX_BS + 1];
    double knob_time[MAX_BS * N_PL], knob_power[MAX_BS * N_PL], run_epoch[MAX_BS * RUNS];
} gen_job;

static void gen(gen_job *g, int n_bs, double eta, double beta, int concurrent)
{
    memset(g, 0, sizeof *g);
    static const int pls[N_PL] = {100, 150, 200};
    for (int i = 0; i < n_bs; i++) {
        g->bs[i] = 16 << i;
        g->knob_start[i] = i * N_PL;
        for (int q = 0; q < N_PL; q++) {
            int k = i * N_PL + q;
            g->knob_pl[k] = pls[q];
            g->knob_time[k] = 20.0 / (1.0 + 0.5 * i) * (1.0 + (200.0 - pls[q]) / 200.0);
            g->knob_power[k] = 0.8 * pls[q] + 10.0 * i;
        }
        g->run_start[i] = i * RUNS;
        int never = n_bs > 1 && i == n_bs - 1;
        g->run_epoch[i * RUNS] = never ? INFINITY : 4 + i % 3;
        g->run_epoch[i * RUNS + 1] = never ? INFINITY : 5 + i % 3;
    }
    g->knob_start[n_bs] = n_bs * N_PL;
    g->run_start[n_bs] = n_bs * RUNS;
    g->job = (ws_job){.abi_version = WS_ABI_VERSION, .workload = "generated",
                      .gpu = "generated", .eta = eta, .beta = beta, .max_power = 200,
                      .max_epochs = 20, .b0 = g->bs[n_bs / 2], .concurrent = concurrent,
                      .n_bs = n_bs, .bs = g->bs, .knob_start = g->knob_start,
                      .knob_pl = g->knob_pl, .knob_time = g->knob_time,
                      .knob_power = g->knob_power, .run_start = g->run_start,
                      .run_epoch = g->run_epoch};
}

/* ------------------------------------------------------------ partners */

typedef struct cycle {
    int next;
} cycle;

static int p_create(void *s, const ws_value *v, const ws_host *h) { return 0; }
static void p_destroy(void *s) {}
static int p_register(void *s, const ws_job *job, const ws_ctx *ctx)
{
    ((cycle *)s)->next = ws_job_bs_index(job, job->b0);
    return 0;
}
static int p_predict_bs(void *s, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    cycle *c = s;
    *bs = job->bs[c->next];
    c->next = (c->next + 1) % job->n_bs;
    return 0;
}
static int p_observe(void *s, const ws_job *job, const ws_ctx *ctx, int bs, double cost,
                     int reached)
{
    return 0;
}
static int p_predict_pl(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    *pl = ws_job_max_pl(job, ws_job_bs_index(job, bs));
    return 0;
}
static int p_profile(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                     double c)
{
    return 0;
}

static const ws_bso_type partner_bso = {
    .abi_version = WS_ABI_VERSION, .name = "check-cycle", .summary = "host partner",
    .state_size = sizeof(cycle), .create = p_create, .destroy = p_destroy,
    .register_job = p_register, .predict = p_predict_bs, .observe = p_observe};
static const ws_plo_type partner_plo = {
    .abi_version = WS_ABI_VERSION, .name = "check-max", .summary = "host partner",
    .create = p_create, .destroy = p_destroy, .predict = p_predict_pl,
    .observe_profile = p_profile};

/* ------------------------------------------------------------ runs */

typedef struct subject {
    const ws_bso_type *bt;     /* exactly one of bt, pt */
    const ws_plo_type *pt;
    ws_value *values;          /* defaults */
    char who[96];
} subject;

typedef struct outcome {
    uint64_t digest;           /* FNV-1a over every run record */
    long tries;                /* policy calls ~ 2 per try */
} outcome;

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 1099511628211ull;
}

static int digest_run(void *ctx, const ws_run_record *r)
{
    uint64_t *h = ctx;
    long v[6] = {r->recurrence, r->attempt, r->bs, r->pl, r->epochs,
                 r->reached * 2 + r->profiled};
    fnv(h, v, sizeof v);
    fnv(h, &r->cost, sizeof r->cost);
    return 0;
}

typedef struct pair {
    ws_bso *b;
    ws_plo *p;
} pair;

static int pair_new(const subject *s, unsigned long seed, pair *pr, ws_error *err)
{
    pr->b = ws_bso_new(s->bt ? s->bt : &partner_bso, s->bt ? s->values : NULL, seed, err);
    pr->p = pr->b ? ws_plo_new(s->pt ? s->pt : &partner_plo, s->pt ? s->values : NULL,
                               seed, err) : NULL;
    if (pr->p) return 0;
    ws_bso_free(pr->b);
    pr->b = NULL;
    return -1;
}

static void pair_free(pair *pr)
{
    ws_plo_free(pr->p);
    ws_bso_free(pr->b);
}

static int simulate(const pair *pr, const gen_job *g, long recurrences, unsigned long seed,
                    outcome *o, ws_error *err)
{
    ws_sim_params sp = {.recurrences = recurrences, .seed = seed};
    ws_sim_totals tot;
    o->digest = 1469598103934665603ull;
    int rc = ws_simulate(&g->job, pr->b, pr->p, &sp, digest_run, &o->digest, &tot, err);
    o->tries = tot.runs + tot.skipped;
    fnv(&o->digest, &tot.cost, sizeof tot.cost);
    return rc;
}

/* A fresh pair on a fresh job of the variant. */
static int run_once(const subject *s, int n_bs, double eta, double beta, long recurrences,
                    unsigned long seed, outcome *o, ws_error *err)
{
    gen_job g;
    gen(&g, n_bs, eta, beta, 0);
    pair pr;
    if (pair_new(s, seed, &pr, err)) return -1;
    int rc = simulate(&pr, &g, recurrences, seed, o, err);
    pair_free(&pr);
    return rc;
}

/* Two submissions in flight: predict a, predict b, observe b, observe a,
 * and an observation of a size the BSO did not predict. */
static int concurrent(const subject *s, ws_error *err)
{
    gen_job g;
    gen(&g, MAX_BS, 0.5, 2.0, 1);
    pair pr;
    if (pair_new(s, 11, &pr, err)) return -1;
    ws_rng rng;
    ws_rng_seed(&rng, 11);
    int rc = -1;
    ws_ctx ctx;
    ws_ctx_init(&ctx, 100);
    if (ws_bso_register(pr.b, &g.job, &ctx, err)) goto out;
    double min_cost = INFINITY;
    for (long rec = 1; rec <= 100; rec++) {
        ctx.recurrence = rec;
        ctx.attempt = 1;
        int idx[3];
        if (ws_bso_predict(pr.b, &g.job, &ctx, &idx[0], err)
            || ws_bso_predict(pr.b, &g.job, &ctx, &idx[1], err))
            goto out;
        idx[2] = (int)ws_rng_integers(&rng, (uint64_t)g.job.n_bs);
        for (int q = 2; q >= 0; q--) {
            ws_outcome o;
            int i = idx[q];
            ws_run_outcome(&g.job, &rng, i, g.knob_start[i + 1] - 1, 0, min_cost, 1.0, &o);
            ws_run_ctx(&ctx, &g.job, &o);
            if (ws_bso_observe(pr.b, &g.job, &ctx, o.bs, o.ran ? o.cost : 0, o.reached, err))
                goto out;
            if (o.reached && o.cost < min_cost) min_cost = o.cost;
        }
    }
    rc = 0;
out:
    pair_free(&pr);
    return rc;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------ checks */

typedef struct report {
    ws_check_fn fn;
    void *ctx;
    int failed;
} report;

static void say(report *r, int pass, const char *check, const char *who, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void say(report *r, int pass, const char *check, const char *who, const char *fmt, ...)
{
    char detail[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    r->failed += !pass;
    r->fn(r->ctx, pass, check, who, detail);
}

/* The host's message without the "bso NAME: " the check line has. */
static const char *msg(const subject *s, const ws_error *err)
{
    size_t n = strlen(s->who);
    return !strncmp(err->msg, s->who, n) && !strncmp(err->msg + n, ": ", 2)
               ? err->msg + n + 2 : err->msg;
}

static void check_subject(report *r, subject *s, long jobs)
{
    ws_error err = {{0}};
    const ws_param_spec *spec = s->bt ? s->bt->params : s->pt->params;
    if (ws_params_resolve(spec, NULL, 0, s->who, &s->values, &err)) {
        say(r, 0, "params", s->who, "%s", msg(s, &err));
        return;
    }
    pair pr;
    if (pair_new(s, 1, &pr, &err)) {
        say(r, 0, "params", s->who, "%s", msg(s, &err));
        return;
    }
    pair_free(&pr);
    say(r, 1, "params", s->who, "%zu parameter%s, defaults accepted by create",
        ws_params_count(spec), ws_params_count(spec) == 1 ? "" : "s");

    static const struct { const char *name; int n_bs; double eta, beta; } var[] = {
        {"one-size", 1, 0.5, 2.0}, {"many-sizes", MAX_BS, 0.5, 2.0},
        {"eta-0", MAX_BS, 0.0, 2.0}, {"eta-1", MAX_BS, 1.0, 2.0},
        {"no-early-stop", MAX_BS, 0.5, INFINITY}};
    for (size_t v = 0; v < sizeof var / sizeof *var; v++) {
        outcome o;
        if (run_once(s, var[v].n_bs, var[v].eta, var[v].beta, 50, 3, &o, &err))
            say(r, 0, var[v].name, s->who, "%s", msg(s, &err));
        else
            say(r, 1, var[v].name, s->who, "%d size%s, eta %g, beta %g: 50 recurrences,"
                " %ld tries", var[v].n_bs, var[v].n_bs > 1 ? "s" : "", var[v].eta,
                var[v].beta, o.tries);
    }
    if (s->bt) {
        if (concurrent(s, &err))
            say(r, 0, "concurrent", s->who, "%s", msg(s, &err));
        else
            say(r, 1, "concurrent", s->who, "100 rounds of 2 overlapping submissions and"
                " an unpredicted observation");
    }

    outcome a, b;
    if (run_once(s, MAX_BS, 0.5, 2.0, 50, 7, &a, &err)
        || run_once(s, MAX_BS, 0.5, 2.0, 50, 7, &b, &err))
        say(r, 0, "determinism", s->who, "%s", msg(s, &err));
    else
        say(r, a.digest == b.digest, "determinism", s->who, a.digest == b.digest
            ? "seed 7 twice: the same runs" : "seed 7 twice: different runs (the policy"
            " draws from something other than the host's streams (ws_host), or keeps state"
            " across instances)");

    /* Two live instances, run one after the other, against one alone. */
    outcome alone, first, second;
    gen_job g;
    gen(&g, MAX_BS, 0.5, 2.0, 0);
    pair x, y;
    int ok = run_once(s, MAX_BS, 0.5, 2.0, 50, 5, &alone, &err) == 0;
    if (ok && !pair_new(s, 5, &x, &err)) {
        if (!pair_new(s, 5, &y, &err)) {
            ok = !simulate(&x, &g, 50, 5, &first, &err) && !simulate(&y, &g, 50, 5, &second, &err);
            pair_free(&y);
        } else {
            ok = 0;
        }
        pair_free(&x);
    } else {
        ok = 0;
    }
    if (!ok)
        say(r, 0, "independence", s->who, "%s", msg(s, &err));
    else
        say(r, first.digest == alone.digest && second.digest == alone.digest, "independence",
            s->who, first.digest == alone.digest && second.digest == alone.digest
            ? "two live instances give what one alone gives"
            : "a second live instance gives other runs than one alone: state is shared"
              " between instances (static or global variables?)");

    /* Leak and timing: many short jobs. */
    long warm = jobs / 10, rss0 = -1, calls = 0;
    double t0 = 0, t = 0;
    ok = 1;
    for (long j = 0; j < jobs && ok; j++) {
        if (j == warm) {
            rss0 = rss_kib();
            t0 = now_s();
        }
        outcome o;
        ok = run_once(s, 4, 0.5, 2.0, 3, (unsigned long)j + 1, &o, &err) == 0;
        if (j >= warm) calls += 2 * o.tries + 2;
    }
    t = now_s() - t0;
    long grown = rss_kib() - rss0;
    if (!ok)
        say(r, 0, "leak", s->who, "%s", msg(s, &err));
    else
        say(r, rss0 < 0 || grown < 8192, "leak", s->who, "%ld jobs: resident memory grew"
            " %ld KiB after the first %ld (limit 8192)", jobs, grown, warm);
    if (ok && calls > 0) {
        double us = 1e6 * t / (double)calls;
        say(r, us < 1000.0, "timing", s->who, "%.2f us per call (%ld calls, with the"
            " host's share)", us, calls);
    }
    ws_params_free(spec, s->values);
    s->values = NULL;
}

int ws_conformance_check(const char *path, const char *only, long jobs, ws_check_fn fn,
                         void *ctx, ws_error *err)
{
    report r = {fn, ctx, 0};
    ws_registry *reg = ws_registry_new();
    if (!reg) return ws_fail(err, "out of memory");
    ws_error e = {{0}};
    /* py:MODULE:CLASS: the Python bridge's descriptor, checked the same */
    if (!strncmp(path, "py:", 3) ? ws_registry_load_python(reg, path, &e)
                                 : ws_registry_load_file(reg, path, &e)) {
        say(&r, 0, "load", "", "%s", e.msg);
        ws_registry_free(reg);
        return r.failed;
    }
    size_t nb = ws_registry_n_bso(reg), np = ws_registry_n_plo(reg), n = 0;
    int abi = nb ? ws_registry_bso_abi(reg, 0) : ws_registry_plo_abi(reg, 0);
    for (size_t i = 0; i < nb + np; i++) {
        subject s = {0};
        if (i < nb) s.bt = ws_registry_bso_at(reg, i);
        else s.pt = ws_registry_plo_at(reg, i - nb);
        const char *name = s.bt ? s.bt->name : s.pt->name;
        if (only && strcmp(only, name)) continue;
        if (n++ == 0)
            say(&r, 1, "load", "", "policy ABI %d.%d%s; %zu bso, %zu plo", abi / 100,
                abi % 100, abi < WS_ABI_VERSION ? " (an older version: no call context)" : "",
                nb, np);
        snprintf(s.who, sizeof s.who, "%s %s", s.bt ? "bso" : "plo", name);
        check_subject(&r, &s, jobs);
    }
    ws_registry_free(reg);
    if (only && n == 0) return ws_fail(err, "%s: defines no policy '%s'", path, only);
    return r.failed;
}
