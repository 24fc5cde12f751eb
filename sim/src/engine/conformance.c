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
 *
 * No plugin can take the checker down: this process never loads the
 * plugin. Loading, and then every check, runs in a child of its own
 * (wattsim/subprocess.h) that loads the plugin afresh and reports its
 * result over a pipe; a child that crashes, calls exit() or overruns its
 * time is a FAIL line naming the check, the call it was in
 * (ws_host_child_init) and the signal. The children's stdout is the
 * policy's own (nothing of the checker's goes there), so output on it is
 * caught and failed in the `stdout` check; their stderr (the policy's log)
 * is passed on, a few lines per check.
 *
 * Map, in file order:
 *   jobs      the generated jobs (gen: n sizes, eta, beta)
 *   partners  the host's partner BSO and PLO
 *   runs      a simulation of the subject with its partner, its digest
 *             (FNV over every run record), with what-ifs and a forecast
 *             (run_env), and several threads at once (concurrent)
 *   checks    one line per check (say); params, variant, concurrent,
 *             determinism, independence, leak (chk_*)
 *   children  resolving the target to a registry entry; the child that
 *             loads the plugin (load_child) and the one that runs a check
 *             (check_child)
 *   parent    running each check in its child (run_check), reading how it
 *             died (death, hung_call), its stdout and stderr, and the
 *             report (ws_conformance_check)
 */
#include "wattsim/conformance.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "wattsim/subprocess.h"
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
                      .target_metric = NAN, /* dataset... NULL: generated */
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
    ws_value *values;          /* as resolved from the user's parameters */
    char who[96];
    const char *check;         /* the check running, for the policy's log */
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
    if (pr->p) {
        char where[64];
        snprintf(where, sizeof where, "check %s", s->check ? s->check : "");
        ws_policy_log_where(pr->b, pr->p, where);
        return 0;
    }
    ws_bso_free(pr->b);
    pr->b = NULL;
    return -1;
}

static void pair_free(pair *pr)
{
    ws_plo_free(pr->p);
    ws_bso_free(pr->b);
}

/* The environment a simulation's context carries (ws_ctx members beyond
 * the run): carbon intensity and price varying by recurrence; or
 * (ENV_FORECAST) series on the simulated clock, which also bind the
 * schedule members (now_s, due_s, every_s, defer_s; 2.3) and the host's
 * forecast. */
enum { ENV_CARBON = 1, ENV_PRICE = 2, ENV_FORECAST = 4 };

/* The forecast variant's what-if: a day of hourly carbon intensity
 * (150..450 gCO2eq/kWh) and price (0.05..0.25 $/kWh), a recurrence every
 * 10 min that may wait up to 5 min for its cleanest start. */
#define FC_START 1666224000.0           /* 2022-10-20T00:00:00Z */
static int forecast_whatif(ws_whatif *w, ws_error *err)
{
    double carbon[24], price[24];
    for (int h = 0; h < 24; h++) {
        const double phase = sin(2.0 * acos(-1.0) * h / 24.0);
        carbon[h] = 300.0 + 150.0 * phase;
        price[h] = 0.15 + 0.10 * phase;
    }
    memset(w, 0, sizeof *w);
    if (ws_series_steps(&w->carbon, "check carbon", FC_START, 3600, carbon, 24, err))
        return -1;
    w->has_carbon = 1;
    if (ws_series_steps(&w->price, "check price", FC_START, 3600, price, 24, err)) {
        ws_whatif_free(w);
        return -1;
    }
    w->has_price = 1;
    w->start = FC_START;
    w->every = 600;
    w->defer = 300;
    w->defer_series = &w->carbon;
    return 0;
}

static void env_at(void *self, long rec, double t_s, double *carbon, double *price)
{
    const int which = *(const int *)self;
    const double phase = sin(0.7 * (double)rec);
    if (which & ENV_CARBON) *carbon = 300.0 + 150.0 * phase;    /* gCO2eq/kWh */
    if (which & ENV_PRICE) *price = 0.15 + 0.10 * phase;        /* $/kWh */
}

static int simulate_env(const pair *pr, const gen_job *g, long recurrences,
                        unsigned long seed, int env, outcome *o, ws_error *err)
{
    ws_env_source src = {env_at, &env};
    ws_sim_params sp = {.recurrences = recurrences, .seed = seed,
                        .env = env && !(env & ENV_FORECAST) ? &src : NULL};
    ws_sim_totals tot;
    o->digest = 1469598103934665603ull;
    ws_whatif wi;
    if ((env & ENV_FORECAST) && forecast_whatif(&wi, err)) return -1;
    int rc = ws_simulate_whatif(&g->job, pr->b, pr->p, &sp, env & ENV_FORECAST ? &wi : NULL,
                                digest_run, &o->digest, &tot, err);
    if (env & ENV_FORECAST) ws_whatif_free(&wi);
    o->tries = tot.runs + tot.skipped;
    fnv(&o->digest, &tot.cost, sizeof tot.cost);
    return rc;
}

static int simulate(const pair *pr, const gen_job *g, long recurrences, unsigned long seed,
                    outcome *o, ws_error *err)
{
    return simulate_env(pr, g, recurrences, seed, 0, o, err);
}

/* A fresh pair on a fresh job of the variant, in environment env. */
static int run_env(const subject *s, int n_bs, double eta, double beta, long recurrences,
                   unsigned long seed, int env, outcome *o, ws_error *err)
{
    gen_job g;
    gen(&g, n_bs, eta, beta, 0);
    pair pr;
    if (pair_new(s, seed, &pr, err)) return -1;
    int rc = simulate_env(&pr, &g, recurrences, seed, env, o, err);
    pair_free(&pr);
    return rc;
}

static int run_once(const subject *s, int n_bs, double eta, double beta, long recurrences,
                    unsigned long seed, outcome *o, ws_error *err)
{
    return run_env(s, n_bs, eta, beta, recurrences, seed, 0, o, err);
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
            ws_run_outcome(&g.job, &rng, i, g.knob_start[i + 1] - 1, 0, min_cost, &o);
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

/*
 * In a check's child: its results, one line each on the report pipe,
 * "PASS\tCHECK\tDETAIL" or "FAIL\tCHECK\tDETAIL" (details are one line:
 * the host's messages are escaped, and tabs and line ends are blanked).
 */
static void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void say(int fd, int pass, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(int fd, int pass, const char *check, const char *fmt, ...)
{
    char detail[700], line[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    for (char *p = detail; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
    int n = snprintf(line, sizeof line, "%s\t%s\t%s\n", pass ? "PASS" : "FAIL", check, detail);
    if (n > 0) write_all(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The host's message without the "bso NAME: " the check line has. */
static const char *msg(const subject *s, const ws_error *err)
{
    size_t n = strlen(s->who);
    return !strncmp(err->msg, s->who, n) && !strncmp(err->msg + n, ": ", 2)
               ? err->msg + n + 2 : err->msg;
}

typedef struct check_ctx {
    subject *s;
    const char *given;         /* the user's parameters, resolved; NULL: none */
    long jobs;
    int fd;
} check_ctx;

static void chk_params(check_ctx *c, const char *name)
{
    ws_error err = {{0}};
    subject *s = c->s;
    const ws_param_spec *spec = s->bt ? s->bt->params : s->pt->params;
    size_t n = ws_params_count(spec);
    pair pr;
    if (pair_new(s, 1, &pr, &err)) {
        say(c->fd, 0, name, "%s", msg(s, &err));
        return;
    }
    pair_free(&pr);
    if (c->given)
        say(c->fd, 1, name, "%zu parameter%s (%s): accepted by create", n, n == 1 ? "" : "s",
            c->given);
    else
        say(c->fd, 1, name, "%zu parameter%s, defaults accepted by create", n,
            n == 1 ? "" : "s");
}

/*
 * The simulating variants: job shape, cost weight, early stopping, and the
 * environment the context carries. A member appended to ws_ctx that a
 * policy may read gets a variant here that fills it: the schedule and the
 * forecast of 2.3 are the `forecast` variant's.
 */
static const struct variant {
    const char *name;
    int n_bs;
    double eta, beta;
    int env;
} VARIANTS[] = {
    {"one-size", 1, 0.5, 2.0, 0},
    {"many-sizes", MAX_BS, 0.5, 2.0, 0},
    {"eta-0", MAX_BS, 0.0, 2.0, 0},
    {"eta-1", MAX_BS, 1.0, 2.0, 0},
    {"no-early-stop", MAX_BS, 0.5, INFINITY, 0},
    {"carbon", MAX_BS, 0.5, 2.0, ENV_CARBON},
    {"price", MAX_BS, 0.5, 2.0, ENV_PRICE},
    {"forecast", MAX_BS, 0.5, 2.0, ENV_FORECAST},
};

static void chk_variant(check_ctx *c, const char *name)
{
    const struct variant *v = VARIANTS;
    while (strcmp(v->name, name)) v++;
    ws_error err = {{0}};
    outcome o;
    if (run_env(c->s, v->n_bs, v->eta, v->beta, 50, 3, v->env, &o, &err)) {
        say(c->fd, 0, name, "%s", msg(c->s, &err));
        return;
    }
    const char *env = v->env == ENV_CARBON ? ", carbon intensity 150..450 gCO2eq/kWh"
                      : v->env == ENV_PRICE ? ", price 0.05..0.25 $/kWh"
                      : v->env == ENV_FORECAST ? ", hourly carbon and price series on the"
                        " clock (now_s, forecast), every 10 min, deferral up to 5 min" : "";
    say(c->fd, 1, name, "%d size%s, eta %g, beta %g%s: 50 recurrences, %ld tries", v->n_bs,
        v->n_bs > 1 ? "s" : "", v->eta, v->beta, env, o.tries);
}

static void chk_concurrent(check_ctx *c, const char *name)
{
    ws_error err = {{0}};
    if (concurrent(c->s, &err))
        say(c->fd, 0, name, "%s", msg(c->s, &err));
    else
        say(c->fd, 1, name, "100 rounds of 2 overlapping submissions and an unpredicted"
            " observation");
}

static void chk_determinism(check_ctx *c, const char *name)
{
    ws_error err = {{0}};
    outcome a, b;
    if (run_once(c->s, MAX_BS, 0.5, 2.0, 50, 7, &a, &err)
        || run_once(c->s, MAX_BS, 0.5, 2.0, 50, 7, &b, &err))
        say(c->fd, 0, name, "%s", msg(c->s, &err));
    else
        say(c->fd, a.digest == b.digest, name, a.digest == b.digest
            ? "seed 7 twice: the same runs" : "seed 7 twice: different runs (the policy"
            " draws from something other than the host's streams (ws_host), or keeps state"
            " across instances)");
}

/* Two live instances, run one after the other, against one alone. */
static void chk_independence(check_ctx *c, const char *name)
{
    ws_error err = {{0}};
    subject *s = c->s;
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
    int same = ok && first.digest == alone.digest && second.digest == alone.digest;
    if (!ok)
        say(c->fd, 0, name, "%s", msg(s, &err));
    else
        say(c->fd, same, name, same ? "two live instances give what one alone gives"
            : "a second live instance gives other runs than one alone: state is shared"
              " between instances (static or global variables?)");
}

/* Leak and timing: many short jobs (two result lines). */
static void chk_leak(check_ctx *c, const char *name)
{
    ws_error err = {{0}};
    long jobs = c->jobs, warm = jobs / 10, rss0 = -1, calls = 0;
    double t0 = 0, t = 0;
    int ok = 1;
    for (long j = 0; j < jobs && ok; j++) {
        if (j == warm) {
            rss0 = rss_kib();
            t0 = now_s();
        }
        outcome o;
        ok = run_once(c->s, 4, 0.5, 2.0, 3, (unsigned long)j + 1, &o, &err) == 0;
        if (j >= warm) calls += 2 * o.tries + 2;
    }
    t = now_s() - t0;
    long grown = rss_kib() - rss0;
    if (!ok) {
        say(c->fd, 0, name, "%s", msg(c->s, &err));
        return;
    }
    say(c->fd, rss0 < 0 || grown < 8192, name, "%ld jobs: resident memory grew %ld KiB after"
        " the first %ld (limit 8192)", jobs, grown, warm);
    if (calls > 0) {
        double us = 1e6 * t / (double)calls;
        say(c->fd, us < 1000.0, "timing", "%.2f us per call (%ld calls, with the host's"
            " share)", us, calls);
    }
}

/* The checks of a policy, in order; each runs in a child of its own. */
typedef void (*check_fn)(check_ctx *c, const char *name);
static const struct check {
    const char *name;
    check_fn fn;
    int bso_only;
    const char *then;          /* a second result line it may give */
} CHECKS[] = {
    {"params", chk_params, 0, NULL},
    {"one-size", chk_variant, 0, NULL},
    {"many-sizes", chk_variant, 0, NULL},
    {"eta-0", chk_variant, 0, NULL},
    {"eta-1", chk_variant, 0, NULL},
    {"no-early-stop", chk_variant, 0, NULL},
    {"carbon", chk_variant, 0, NULL},
    {"price", chk_variant, 0, NULL},
    {"forecast", chk_variant, 0, NULL},
    {"concurrent", chk_concurrent, 1, NULL},
    {"determinism", chk_determinism, 0, NULL},
    {"independence", chk_independence, 0, NULL},
    {"leak", chk_leak, 0, "timing"},
};
#define N_CHECKS (sizeof CHECKS / sizeof *CHECKS)

/* ------------------------------------------------------------ children */

/*
 * What the target names: a file (FILE.so) stands for all its policies;
 * anything else is a policy as --bso/--plo take it (NAME, FILE.so:NAME,
 * ...), looked up as a BSO and as a PLO (a name may be both). Fills the
 * registry indices of the policies found (BSOs in *bi, PLOs in *pi).
 */
typedef struct found {
    size_t bi[64], pi[64];
    size_t nb, np;             /* found (the file's, or the name's) */
} found;

static int index_of(const ws_registry *reg, const void *t, int bso, size_t *i)
{
    size_t n = bso ? ws_registry_n_bso(reg) : ws_registry_n_plo(reg);
    for (*i = 0; *i < n; (*i)++)
        if ((bso ? (const void *)ws_registry_bso_at(reg, *i)
                 : (const void *)ws_registry_plo_at(reg, *i)) == t)
            return 0;
    return -1;
}

static int ends_with_so(const char *s)
{
    size_t n = strlen(s);
    return n > 3 && !strcmp(s + n - 3, ".so");
}

static int resolve(ws_registry *reg, const char *target, found *f, ws_error *err)
{
    memset(f, 0, sizeof *f);
    /* py:MODULE:CLASS: the Python bridge's descriptors, checked the same */
    const int py = !strncmp(target, "py:", 3);
    if (py || ends_with_so(target)) {
        if (py ? ws_registry_load_python(reg, target, err)
               : ws_registry_load_file(reg, target, err))
            return -1;
        for (size_t i = 0; i < ws_registry_n_bso(reg) && f->nb < 64; i++) f->bi[f->nb++] = i;
        for (size_t i = 0; i < ws_registry_n_plo(reg) && f->np < 64; i++) f->pi[f->np++] = i;
        return 0;
    }
    ws_error eb = {{0}}, ep = {{0}};
    const ws_bso_type *bt = ws_registry_bso(reg, target, &eb);
    const ws_plo_type *pt = ws_registry_plo(reg, target, &ep);
    if (bt && !index_of(reg, bt, 1, &f->bi[0])) f->nb = 1;
    if (pt && !index_of(reg, pt, 0, &f->pi[0])) f->np = 1;
    if (f->nb + f->np == 0) {
        *err = eb;
        return -1;
    }
    return 0;
}

typedef struct task {
    const char *target;
    const char *only;          /* NULL: every policy found */
    const ws_check_opts *o;
    int bso;                   /* the policy checked: kind and name */
    const char *name;
    const struct check *check; /* NULL: the load step */
} task;

static int policy_matches(const char *only, const char *name)
{
    return !only || !strcmp(only, name);
}

/* The load step's time limit: --timeout, but at least 30 s, so that a
 * small limit meant for a check's calls (a test's 0.5 s) does not fail a
 * load that is only slow (under valgrind, dlopen alone takes a while);
 * a plugin that hangs in its constructors still fails it. */
static double load_limit(const ws_check_opts *o)
{
    return o->timeout > 0 && o->timeout < 30 ? 30 : o->timeout;
}

/* In the child of the load step: load, and report "load\tABI\tNB\tNP",
 * then "bso\tNAME" / "plo\tNAME" per policy (filtered by only), or
 * "error\tMESSAGE" (the load fails), or "usage\tMESSAGE" (the user's
 * parameters do not fit the one policy checked). */
/* A child's registry, never freed (unloading runs the plugin's code once
 * more, and the child ends with _exit) but kept reachable, so that
 * valgrind does not count it a leak. */
static ws_registry *child_registry;

static int load_child(void *arg, int fd)
{
    const task *t = arg;
    ws_host_child_init(fd, load_limit(t->o));
    ws_registry *reg = child_registry = ws_registry_new();
    ws_error err = {{0}};
    found f;
    char line[WS_ERROR_MAX + 80];
    if (!reg || resolve(reg, t->target, &f, &err)) {
        int n = snprintf(line, sizeof line, "error\t%s\n", reg ? err.msg : "out of memory");
        write_all(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        return 0;
    }
    int abi = f.nb ? ws_registry_bso_abi(reg, f.bi[0]) : ws_registry_plo_abi(reg, f.pi[0]);
    int n = snprintf(line, sizeof line, "load\t%d\t%zu\t%zu\n", abi, f.nb, f.np);
    write_all(fd, line, (size_t)n);
    const ws_param_spec *spec = NULL;
    char who[96] = "";
    size_t matched = 0;
    for (size_t k = 0; k < f.nb + f.np; k++) {
        const ws_bso_type *bt = k < f.nb ? ws_registry_bso_at(reg, f.bi[k]) : NULL;
        const ws_plo_type *pt = k < f.nb ? NULL : ws_registry_plo_at(reg, f.pi[k - f.nb]);
        const char *name = bt ? bt->name : pt->name;
        if (!policy_matches(t->only, name)) continue;
        n = snprintf(line, sizeof line, "%s\t%s\n", bt ? "bso" : "plo", name);
        write_all(fd, line, (size_t)n);
        spec = bt ? bt->params : pt->params;
        snprintf(who, sizeof who, "%s %s", bt ? "bso" : "plo", name);
        matched++;
    }
    if (matched == 1 && t->o->n_params) {
        ws_value *v = NULL;
        if (ws_params_resolve(spec, t->o->params, t->o->n_params, who, &v, &err)) {
            n = snprintf(line, sizeof line, "usage\t%s\n", err.msg);
            write_all(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        } else {
            ws_params_free(spec, v);
        }
    }
    /* The registry stays loaded: unloading runs the plugin's code once
     * more, and this process ends now (_exit). */
    return 0;
}

/* In a check's child: load afresh, find the policy, resolve its
 * parameters, run the check. */
static int check_child(void *arg, int fd)
{
    const task *t = arg;
    ws_host_child_init(fd, t->o->timeout);
    ws_registry *reg = child_registry = ws_registry_new();
    ws_error err = {{0}};
    found f;
    subject s = {0};
    if (!reg || resolve(reg, t->target, &f, &err)) {
        say(fd, 0, t->check->name, "%s", reg ? err.msg : "out of memory");
        return 0;
    }
    for (size_t k = 0; k < (t->bso ? f.nb : f.np); k++) {
        const ws_bso_type *bt = t->bso ? ws_registry_bso_at(reg, f.bi[k]) : NULL;
        const ws_plo_type *pt = t->bso ? NULL : ws_registry_plo_at(reg, f.pi[k]);
        if (!strcmp(bt ? bt->name : pt->name, t->name)) {
            s.bt = bt;
            s.pt = pt;
            break;
        }
    }
    if (!s.bt && !s.pt) {
        say(fd, 0, t->check->name, "%s: the policy is gone on loading again", t->target);
        return 0;
    }
    snprintf(s.who, sizeof s.who, "%s %s", t->bso ? "bso" : "plo", t->name);
    s.check = t->check->name;
    const ws_param_spec *spec = s.bt ? s.bt->params : s.pt->params;
    if (ws_params_resolve(spec, t->o->params, t->o->n_params, s.who, &s.values, &err)) {
        say(fd, 0, t->check->name, "%s", msg(&s, &err));
        return 0;
    }
    char given[1024];
    check_ctx c = {&s, NULL, t->o->jobs, fd};
    if (t->o->n_params && !ws_params_format(spec, s.values, given, sizeof given))
        c.given = given;
    t->check->fn(&c, t->check->name);
    ws_params_free(spec, s.values);        /* every instance is gone by now */
    return 0;                              /* ws_sub_run's child flushes stdout */
}

/* ------------------------------------------------------------ parent */

#define STREAM_CAP ((size_t)1 << 16)
#define STDERR_LINES 5

typedef struct report {
    ws_check_fn fn;
    void *ctx;
    int failed;
} report;

/* result: WS_CHECK_PASS, WS_CHECK_FAIL or WS_CHECK_SKIP. */
static void tell(report *r, int result, const char *check, const char *who, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));
static void tell(report *r, int result, const char *check, const char *who, const char *fmt,
                 ...)
{
    char raw[900], detail[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ws_text_escape(detail, sizeof detail, raw);
    r->failed += result == WS_CHECK_FAIL;
    r->fn(r->ctx, result, check, who, detail);
}

/* The child's last word, after "wattsim: " (the call it was in when it
 * died: ws_host_child_init), or NULL. */
static const char *last_word(const ws_sub_result *sr)
{
    const char *note = NULL;
    for (const char *p = sr->report.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1
                                                                        : p + strlen(p))
        if (!strncmp(p, "wattsim: ", 9)) note = p + 9;
    return note;
}

/* How a child ended, for a FAIL line: the line it left naming the call it
 * was in (without "wattsim: WHO: "), else how it ended; "" when it
 * exited with status 0. */
static void death(const ws_sub_result *sr, double limit, const char *who, char *buf,
                  size_t size)
{
    const char *note = last_word(sr);
    char how[128];
    ws_sub_describe(sr, limit + 2, how, sizeof how);
    if (sr->killed)
        snprintf(how, sizeof how, "did not finish within %g s (--timeout)", limit);
    if (note) {
        size_t n = strlen(who);
        if (!strncmp(note, who, n) && !strncmp(note + n, ": ", 2)) note += n + 2;
        size_t len = strcspn(note, "\n");
        if (WIFSIGNALED(sr->status) && WTERMSIG(sr->status) == SIGALRM && !sr->killed)
            snprintf(buf, size, "%.*s (--timeout)", (int)len, note);
        else
            snprintf(buf, size, "%.*s", (int)len, note);
    } else if (how[0]) {
        snprintf(buf, size, "the check's process %s", how);
    } else {
        buf[0] = '\0';
    }
}

/* The policy's stderr (its log, its prints there), a few lines of it. */
static void pass_on_stderr(const ws_sub_result *sr, const char *who, const char *check)
{
    const char *p = sr->err.data;
    size_t shown = 0;
    while (p && *p && shown < STDERR_LINES) {
        size_t len = strcspn(p, "\n");
        ws_line("%.*s", (int)len, p);
        shown++;
        p += len + (p[len] == '\n');
    }
    size_t rest = p ? sr->err.total - (size_t)(p - sr->err.data) : 0;
    if (rest)
        ws_line("wattsim: %s: check %s: %zu more bytes on stderr not shown", who, check, rest);
}

/* Where output on stdout was seen, for the stdout check. */
typedef struct stdout_seen {
    size_t bytes;
    char where[200];
    char first[80];
} stdout_seen;

static void saw_stdout(stdout_seen *o, const ws_sub_result *sr, const char *check)
{
    if (!sr->out.total) return;
    if (!o->bytes) snprintf(o->first, sizeof o->first, "%.*s",
                            (int)strcspn(sr->out.data, "\n"), sr->out.data);
    o->bytes += sr->out.total;
    size_t n = strlen(o->where);
    if (n + strlen(check) + 3 < sizeof o->where)
        snprintf(o->where + n, sizeof o->where - n, "%s%s", n ? ", " : "", check);
}

/*
 * The policy call a check's process hung in, into hung (size n): "predict"
 * from its last word "WHO: predict did not return within 1 s" (SIGALRM at
 * --timeout), or "a policy call" when its parent had to kill it (SIGALRM
 * did not end it: the policy blocks or handles it). "" when it did not
 * hang in a call: a check that only ran long in the host's own work ("did
 * not finish within") hung nothing.
 */
static void hung_call(const ws_sub_result *sr, const char *who, char *hung, size_t n)
{
    hung[0] = '\0';
    const int alarm = WIFSIGNALED(sr->status) && WTERMSIG(sr->status) == SIGALRM;
    if (!sr->killed && !alarm) return;
    const char *note = last_word(sr);
    size_t w = strlen(who);
    if (note && !strncmp(note, who, w) && !strncmp(note + w, ": ", 2)) {
        const char *call = note + w + 2, *end = strstr(call, " did not return within ");
        const size_t len = end ? (size_t)(end - call) : 0;
        if (len && len < n && !memchr(call, '\n', len)) snprintf(hung, n, "%.*s", (int)len, call);
    }
    if (!hung[0] && sr->killed) snprintf(hung, n, "a policy call");
}

/* Run one check of one policy in a child and tell its result lines; the
 * call it hung in, if it did, into hung (hung_call). */
static int run_check(report *r, task *t, const char *who, stdout_seen *seen, char *hung,
                     size_t hung_size, ws_error *err)
{
    ws_sub_result sr;
    const double limit = t->o->timeout;
    if (ws_sub_run(check_child, t, limit > 0 ? limit + 2 : 0, STREAM_CAP, &sr, err)) return -1;
    pass_on_stderr(&sr, who, t->check->name);
    saw_stdout(seen, &sr, t->check->name);
    char died[600];
    death(&sr, limit, who, died, sizeof died);
    hung_call(&sr, who, hung, hung_size);
    const int abnormal = died[0] != '\0';
    int first_seen = 0;
    for (char *p = sr.report.data; *p;) {
        char *end = strchr(p, '\n');
        if (!end) break;
        *end = '\0';
        char *tab1 = strchr(p, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (tab2 && (!strncmp(p, "PASS\t", 5) || !strncmp(p, "FAIL\t", 5))) {
            *tab2 = '\0';
            const char *check = tab1 + 1;
            if (!strcmp(check, t->check->name)
                || (t->check->then && !strcmp(check, t->check->then))) {
                int pass = p[0] == 'P';
                first_seen |= !strcmp(check, t->check->name);
                if (pass && abnormal)
                    tell(r, WS_CHECK_FAIL, check, who, "%s, but then %s", tab2 + 1, died);
                else
                    tell(r, pass ? WS_CHECK_PASS : WS_CHECK_FAIL, check, who, "%s", tab2 + 1);
            }
        }
        p = end + 1;
    }
    if (!first_seen)
        tell(r, WS_CHECK_FAIL, t->check->name, who, "%s", abnormal ? died
             : "the check's process ended without a result (did the policy end it, _exit?)");
    ws_sub_result_free(&sr);
    return 0;
}

int ws_conformance_check(const char *target, const char *only, const ws_check_opts *o,
                         ws_check_fn fn, void *ctx, ws_error *err)
{
    report r = {fn, ctx, 0};
    task t = {target, only, o, 0, NULL, NULL};
    ws_sub_result sr;
    const double lim = load_limit(o);
    if (ws_sub_run(load_child, &t, lim > 0 ? lim + 2 : 0, STREAM_CAP, &sr, err))
        return -1;
    pass_on_stderr(&sr, target, "load");
    stdout_seen load_out = {0};
    saw_stdout(&load_out, &sr, "load");
    char died[600];
    death(&sr, lim, target, died, sizeof died);

    /* What the load step reported. */
    struct { int bso; char name[72]; } pol[128];
    size_t n = 0, nb = 0, np = 0;
    int abi = 0, loaded = 0;
    char *error = NULL, *usage = NULL;
    for (char *p = sr.report.data; *p;) {
        char *end = strchr(p, '\n');
        if (!end) break;
        *end = '\0';
        if (!strncmp(p, "load\t", 5)) loaded = sscanf(p + 5, "%d\t%zu\t%zu", &abi, &nb, &np) == 3;
        else if (!strncmp(p, "error\t", 6)) error = p + 6;
        else if (!strncmp(p, "usage\t", 6)) usage = p + 6;
        else if ((!strncmp(p, "bso\t", 4) || !strncmp(p, "plo\t", 4)) && n < 128) {
            pol[n].bso = p[0] == 'b';
            snprintf(pol[n++].name, sizeof pol[0].name, "%s", p + 4);
        }
        p = end + 1;
    }
    if (error || !loaded || died[0]) {
        tell(&r, WS_CHECK_FAIL, "load", "", "%s", error ? error : died[0] ? died
             : "the load step ended without a result");
        ws_sub_result_free(&sr);
        return r.failed;
    }
    /* usage points into the report: keep it past the free */
    char usage_msg[WS_ERROR_MAX];
    if (usage) snprintf(usage_msg, sizeof usage_msg, "%s", usage);
    ws_sub_result_free(&sr);
    if (n == 0) {
        if (only) return ws_fail(err, "%s: defines no policy '%s'", target, only);
        return ws_fail(err, "%s: defines no policy", target);
    }
    if (o->n_params && n > 1)
        return ws_fail(err, "policy check: parameters apply to one policy, and %s defines %zu:"
                       " choose one with --policy NAME", target, n);
    if (usage) return ws_fail(err, "%s", usage_msg);
    tell(&r, WS_CHECK_PASS, "load", "", "policy ABI %d.%d%s; %zu bso, %zu plo", abi / 100,
         abi % 100,
         abi < WS_ABI_VERSION_OF(2, 0) ? " (an older version: no call context)" : "", nb, np);

    for (size_t k = 0; k < n; k++) {
        char who[96];
        snprintf(who, sizeof who, "%s %s", pol[k].bso ? "bso" : "plo", pol[k].name);
        t.bso = pol[k].bso;
        t.name = pol[k].name;
        stdout_seen seen = load_out;
        int params_ok = 1;
        /* A call that hung (did not return within --timeout), and the check
         * it hung in. Every check after params drives the whole policy
         * (create, register, predict, observe, destroy), so each needs that
         * call: they are skipped, not each run into the same time limit. */
        char hung[64] = "", hung_in[32] = "";
        for (size_t c = 0; c < N_CHECKS && params_ok; c++) {
            if (CHECKS[c].bso_only && !t.bso) continue;
            t.check = &CHECKS[c];
            if (hung[0]) {
                tell(&r, WS_CHECK_SKIP, CHECKS[c].name, who, "skipped (%s hung in check %s)",
                     hung, hung_in);
                continue;
            }
            int before = r.failed;
            if (run_check(&r, &t, who, &seen, hung, sizeof hung, err)) return -1;
            if (hung[0]) snprintf(hung_in, sizeof hung_in, "%s", CHECKS[c].name);
            /* Nothing else runs on parameters create refuses. */
            if (c == 0 && r.failed > before) params_ok = 0;
        }
        if (!seen.bytes)
            tell(&r, WS_CHECK_PASS, "stdout", who, "nothing written to standard output");
        else
            tell(&r, WS_CHECK_FAIL, "stdout", who,
                 "%zu bytes written to standard output (in %s), first"
                 " \"%s\": a policy must not print (wattsim's own output is there); log"
                 " through host->log", seen.bytes, seen.where, seen.first);
    }
    return r.failed;
}
