/*
 * Checked policy instances: the host a policy sees (its random stream and
 * log) and every call into it. See wattsim/plugin.h; the registry is in
 * registry.c, parameter resolution in io/params.c.
 *
 * Speed: the per-try calls (BSO predict and observe, PLO predict and
 * observe_run) are inline in host.h, where the engine's loop calls them;
 * the functions here wrap those. Error reporting is out of line (cold,
 * noinline, in host.c); an instance is one allocation (struct and state)
 * and its "bso NAME" label is copied, not formatted.
 *
 * The arrow runs one way: this file loads and guards instances on top of
 * host.h/host.c (the calls the engine makes), which never call it.
 */
#include "wattsim/plugin.h"

#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/series.h"

#include "descriptor.h"
#include "guard.h"
#include "host.h"

/* ------------------------------------------------------------ host */

static int log_level = WS_LOG_WARN;
void ws_policy_set_log_level(int level) { log_level = level; }

/* The instance's stream, seeded at its first draw: most policies (jit,
 * default, oracle and every PLO of the paper's) never draw, and seeding
 * a stream per instance per simulation was a cost of its own. The
 * stream is a function of the seed and role alone, so when it is seeded
 * does not change a draw. */
static void seed_now(host_ctx *h);

static inline ws_rng *h_rng(host_ctx *h)
{
    if (__builtin_expect(!h->rng_ready, 0)) seed_now(h);
    return &h->rng;
}

/* The draws of ws_host, numpy's Generator calls on the instance's
 * stream (see policy.h for each one's numpy equivalent). */
static double h_uniform(void *ctx)
{
    ((host_ctx *)ctx)->n_uniform++;
    return ws_rng_random(h_rng(ctx));
}

static unsigned long h_uniform_int(void *ctx, unsigned long n)
{
    ((host_ctx *)ctx)->n_uniform++;
    return n ? (unsigned long)ws_rng_integers(h_rng(ctx), n) : 0;
}

static double h_gaussian(void *ctx, double sd)
{
    ((host_ctx *)ctx)->n_gaussian++;
    return ws_rng_normal(h_rng(ctx), 0.0, sd);
}

static double h_normal(void *ctx, double loc, double sd)
{
    ((host_ctx *)ctx)->n_gaussian++;
    return ws_rng_normal(h_rng(ctx), loc, sd);
}

_Static_assert(sizeof(long) == sizeof(int64_t), "ws_host's long arrays are 64-bit");

static int h_choice(void *ctx, long n, long k, long *out)
{
    host_ctx *h = ctx;
    if (n < 0 || k < 0 || k > n) return -1;
    /* Floyd's k picks and the k - 1 swaps of its shuffle. */
    h->n_uniform += k ? 2 * (unsigned long)k - 1 : 0;
    return ws_rng_choice(h_rng(h), n, k, (int64_t *)out);
}

static int h_permutation(void *ctx, long n, long *out)
{
    host_ctx *h = ctx;
    if (n < 0 || (unsigned long)n > 0x100000000ul) return -1;
    h->n_uniform += n ? (unsigned long)n - 1 : 0;
    return ws_rng_permutation(h_rng(h), n, (int64_t *)out);
}

/* The forecast (2.3): the bound series on the simulation's clock. The
 * series' own rules apply (ws_series_integral, _at, _next_boundary):
 * past the end it repeats from its start, as the accounting does. */
static const ws_series *forecast_series(void *ctx, int kind)
{
    const host_ctx *h = ctx;
    return kind == WS_FORECAST_CARBON ? h->fc_carbon
         : kind == WS_FORECAST_PRICE ? h->fc_price : NULL;
}

static double h_forecast(void *ctx, int kind, double t, double dur)
{
    const ws_series *s = forecast_series(ctx, kind);
    if (!s || !(t >= 0) || !(dur >= 0) || !isfinite(t) || !isfinite(dur)) return NAN;
    const double a = ((const host_ctx *)ctx)->fc_origin + t;
    if (dur == 0) return ws_series_at(s, a);
    return ws_series_integral(s, a, dur, NULL) / dur;
}

static double h_forecast_next(void *ctx, int kind, double t)
{
    const ws_series *s = forecast_series(ctx, kind);
    if (!s || !(t >= 0) || !isfinite(t)) return NAN;
    const double origin = ((const host_ctx *)ctx)->fc_origin;
    return ws_series_next_boundary(s, origin + t) - origin;
}

void ws_policy_set_forecast(ws_bso *b, ws_plo *p, const ws_series *carbon,
                            const ws_series *price, double origin)
{
    host_ctx *hs[2] = {b ? &b->in.hc : NULL, p ? &p->in.hc : NULL};
    for (int i = 0; i < 2; i++)
        if (hs[i]) {
            hs[i]->fc_carbon = carbon;
            hs[i]->fc_price = price;
            hs[i]->fc_origin = origin;
        }
}

static void h_log(void *ctx, int level, const char *msg)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    host_ctx *h = ctx;
    if (level <= WS_LOG_ERROR) {
        /* Not printed: it becomes part of the one error line if the call
         * fails (see failed()). */
        snprintf(h->last_error, sizeof h->last_error, "%s", msg ? msg : "");
        return;
    }
    if (level > log_level) return;
    if (level < 0) level = 0;
    if (level > 3) level = 3;
    char at[200] = "";
    if (h->call && h->call->recurrence > 0)
        snprintf(at, sizeof at, " [%s%sseed %lu, recurrence %ld try %d]", h->where,
                 h->where[0] ? ", " : "", h->seed, h->call->recurrence, h->call->attempt);
    else
        snprintf(at, sizeof at, " [%s%sseed %lu]", h->where, h->where[0] ? ", " : "", h->seed);
    ws_line("wattsim: %s%s: %s: %s", h->who, at, names[level], msg ? msg : "");
}

/* The "kind name" label, truncated like snprintf into who[80] would. */
static void set_who(instance *in, const char *kind, const char *name)
{
    const size_t nk = strlen(kind), cap = sizeof in->who - 1;
    size_t nn = strlen(name);
    memcpy(in->who, kind, nk);
    in->who[nk] = ' ';
    if (nn > cap - nk - 1) nn = cap - nk - 1;
    memcpy(in->who + nk + 1, name, nn);
    in->who[nk + 1 + nn] = '\0';
}

/* One zeroed block holding the instance struct (of size `head`) and the
 * policy's state, aligned for any type. */
static void *instance_alloc(size_t head, size_t state_size, void **state)
{
    const size_t a = _Alignof(max_align_t), off = (head + a - 1) / a * a;
    if (state_size > (size_t)-1 - off) return NULL;
    /* the state gets at least one byte, as calloc(0) may return NULL */
    char *block = calloc(1, off + (state_size ? state_size : 1));
    if (block) *state = block + off;
    return block;
}

/* The instance's stream: a BSO's is np.random.default_rng(seed), as the
 * published simulator seeds its bandit (the same start as the
 * simulation's own stream); a PLO's is SeedSequence(seed, spawn_key=(2,)),
 * a stream of its own (Zeus' power-limit optimizers draw nothing). */
enum { ROLE_BSO = 1, ROLE_PLO = 2 };

static void seed_now(host_ctx *h)
{
    if (h->rng_role == ROLE_BSO) ws_rng_seed(&h->rng, h->seed);
    else ws_rng_seed_spawn(&h->rng, h->seed, h->rng_role);
    h->rng_ready = 1;
}

static void instance_init(instance *in, const char *kind, const char *name,
                          unsigned long seed, unsigned role)
{
    set_who(in, kind, name);
    ws_guard_enter();
    in->guarded = 1;
    in->hc.who = in->who;
    in->hc.rng_role = role;    /* seeded at the first draw (h_rng) */
    in->hc.seed = seed;
    in->host.abi_version = WS_ABI_VERSION;
    in->host.ctx = &in->hc;
    in->host.uniform = h_uniform;
    in->host.uniform_int = h_uniform_int;
    in->host.gaussian = h_gaussian;
    in->host.log = h_log;
    in->host.normal = h_normal;
    in->host.choice = h_choice;
    in->host.permutation = h_permutation;
    in->host.forecast = h_forecast;
    in->host.forecast_next = h_forecast_next;
    in->host.seed = seed;
}

static void instance_fini(instance *in, void (*destroy)(void *))
{
    if (in->created) {
        ws_guard_call_enter(in->who, "destroy");
        destroy(in->state);
        ws_guard_call_leave();
    }
    if (in->guarded) ws_guard_leave();
}

/* create() with the values at the stride the descriptor was built with.
 * A failure is named like any call's: "bso NAME: create failed: MESSAGE"
 * with the WS_LOG_ERROR line it logged, else the value it returned. */
static int call_create(instance *in, int (*create)(void *, const ws_value *, const ws_host *),
                       const ws_param_spec *spec, size_t value_size,
                       const ws_value *params, ws_error *err)
{
    size_t n = ws_params_count(spec);
    char *buf = NULL;
    if (params && n && value_size > sizeof(ws_value)) {
        if (!(buf = calloc(n, value_size))) return ws_fail(err, "%s: out of memory", in->who);
        for (size_t i = 0; i < n; i++) memcpy(buf + i * value_size, &params[i], sizeof *params);
    }
    ws_guard_call_enter(in->who, "create");
    int rc = create(in->state, buf ? (const ws_value *)(const void *)buf : params, &in->host);
    ws_guard_call_leave();
    free(buf);
    return rc ? ws_host_failed(in, "create", rc, err) : 0;
}

ws_bso *ws_bso_new(const ws_bso_type *t, const ws_value *params,
                   unsigned long seed, ws_error *err)
{
    void *state = NULL;
    ws_bso *b = instance_alloc(sizeof *b, t->state_size, &state);
    if (!b) { ws_fail(err, "bso %s: out of memory", t->name); return NULL; }
    b->in.state = state;
    b->t = t;
    b->v1 = ws_abi_normalise(t->abi_version) < 200;
    instance_init(&b->in, "bso", t->name, seed, ROLE_BSO);
    if (call_create(&b->in, t->create, t->params, t->value_size, params, err)) {
        ws_bso_free(b);
        return NULL;
    }
    b->in.created = 1;
    return b;
}

void ws_bso_free(ws_bso *b)
{
    if (!b) return;
    instance_fini(&b->in, b->t->destroy);
    free(b);
}

ws_plo *ws_plo_new(const ws_plo_type *t, const ws_value *params,
                   unsigned long seed, ws_error *err)
{
    void *state = NULL;
    ws_plo *p = instance_alloc(sizeof *p, t->state_size, &state);
    if (!p) { ws_fail(err, "plo %s: out of memory", t->name); return NULL; }
    p->in.state = state;
    p->t = t;
    p->v1 = ws_abi_normalise(t->abi_version) < 200;
    instance_init(&p->in, "plo", t->name, seed, ROLE_PLO);
    if (call_create(&p->in, t->create, t->params, t->value_size, params, err)) {
        ws_plo_free(p);
        return NULL;
    }
    p->in.created = 1;
    return p;
}

void ws_plo_free(ws_plo *p)
{
    if (!p) return;
    instance_fini(&p->in, p->t->destroy);
    free(p);
}

/* snprintf(dst, size, "%s", src), without the formatting machinery: this
 * is once per instance of every simulation of a sweep, where snprintf
 * cost a percent of the sweep. */
static void copy_where(char *dst, size_t size, const char *src)
{
    if (!src) src = "(null)";          /* what glibc's snprintf prints */
    const size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void ws_policy_log_where(ws_bso *b, ws_plo *p, const char *where)
{
    if (b) copy_where(b->in.hc.where, sizeof b->in.hc.where, where);
    if (p) copy_where(p->in.hc.where, sizeof p->in.hc.where, where);
}

const char *ws_bso_who(const ws_bso *b) { return b->in.who; }

void ws_bso_draws(const ws_bso *b, unsigned long *gaussian, unsigned long *uniform)
{
    *gaussian = b->in.hc.n_gaussian;
    *uniform = b->in.hc.n_uniform;
}

void ws_plo_draws(const ws_plo *p, unsigned long *gaussian, unsigned long *uniform)
{
    *gaussian = p->in.hc.n_gaussian;
    *uniform = p->in.hc.n_uniform;
}

void ws_policy_hold(void) { ws_guard_enter(); }
void ws_policy_release(void) { ws_guard_leave(); }
const char *ws_plo_who(const ws_plo *p) { return p->in.who; }

int ws_bso_register(ws_bso *b, const ws_job *job, const ws_ctx *ctx, ws_error *err)
{
    ws_guard_call_enter(b->in.who, "register_job");
    b->in.hc.call = ctx;
    int rc = b->v1 ? V1(v1_register_fn, b->t->register_job)(b->in.state, job)
                   : b->t->register_job(b->in.state, job, ctx);
    ws_guard_call_leave();
    return rc ? ws_host_failed(&b->in, "register_job", rc, err) : 0;
}

int ws_bso_predict(ws_bso *b, const ws_job *job, const ws_ctx *ctx, int *bs_index,
                   ws_error *err)
{
    return host_bso_predict(b, job, ctx, bs_index, err);
}

int ws_bso_observe(ws_bso *b, const ws_job *job, const ws_ctx *ctx, int bs,
                   double cost, int reached, ws_error *err)
{
    return host_bso_observe(b, job, ctx, bs, cost, reached, err);
}

int ws_plo_register(ws_plo *p, const ws_job *job, const ws_ctx *ctx, ws_error *err)
{
    if (!p->t->register_job) return 0;
    ws_guard_call_enter(p->in.who, "register_job");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_register_fn, p->t->register_job)(p->in.state, job)
                   : p->t->register_job(p->in.state, job, ctx);
    ws_guard_call_leave();
    return rc ? ws_host_failed(&p->in, "register_job", rc, err) : 0;
}

int ws_plo_predict(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int i, int *knob,
                   ws_error *err)
{
    return host_plo_predict(p, job, ctx, i, knob, err);
}

int ws_plo_observe_profile(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs,
                           int pl, double epoch_cost, ws_error *err)
{
    ws_guard_call_enter(p->in.who, "observe_profile");
    p->in.hc.call = ctx;
    int rc = p->v1 ? V1(v1_plo_profile_fn, p->t->observe_profile)(p->in.state, job, bs,
                                                                   pl, epoch_cost)
                   : p->t->observe_profile(p->in.state, job, ctx, bs, pl, epoch_cost);
    ws_guard_call_leave();
    return rc ? ws_host_failed(&p->in, "observe_profile", rc, err) : 0;
}

int ws_plo_observe_run(ws_plo *p, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                       double cost, int reached, ws_error *err)
{
    return host_plo_observe_run(p, job, ctx, bs, pl, cost, reached, err);
}

/* ------------------------------------------------------------ context */

void ws_ctx_init(ws_ctx *c, long recurrences)
{
    *c = (ws_ctx){.abi_version = WS_ABI_VERSION, .size = sizeof *c,
                  .recurrences = recurrences, .carbon_intensity = NAN, .price = NAN,
                  .now_s = NAN, .due_s = NAN};
    ws_ctx_clear_run(c);
}

void ws_ctx_clear_run(ws_ctx *c) { host_ctx_clear_run(c); }
