/*
 * Policy ABI version 2: the call context every callback gets (against
 * values worked out by hand on the fixture trace), version negotiation, the
 * descriptor checks at load, and version-1 plugins giving the same numbers.
 *
 * Fixture (fixture.h), eta 0.5, MaxPower 200 W; cost of a run =
 * 0.5 * E + 100 * T; epoch cost c = (0.5 * power + 100) * time at 200 W.
 */
#include <math.h>

#include "fixture.h"
#include "wattsim/engine.h"
#include "wattsim/rng.h"
#include "wattsim/sha256.h"

#define PLUGIN(name) WS_TEST_PLUGIN_DIR "/" name ".so"

/* ------------------------------------------------- recording policies */

/* Every call the policies got, with a copy of its context. */
typedef struct call {
    char what;                 /* R register, P bso predict, O bso observe,
                                  p plo predict, f observe_profile,
                                  r observe_run */
    int bs, pl;
    ws_ctx ctx;
} call;

static struct {
    call c[128];
    int n;
    const int *script;         /* the BSO's batch sizes, one per predict */
    int predicts;
    int known[3];              /* the PLO's answer per bs index; 0 = unknown */
} rec;

static void log_call(char what, const ws_ctx *ctx, int bs, int pl)
{
    cr_assert_lt(rec.n, 128);
    cr_assert_eq(ctx->abi_version, WS_ABI_VERSION);
    cr_assert_eq(ctx->size, sizeof(ws_ctx));
    rec.c[rec.n++] = (call){what, bs, pl, *ctx};
}

static int r_create(void *s, const ws_value *v, const ws_host *h) { return 0; }
static void r_destroy(void *s) {}
static int r_register(void *s, const ws_job *job, const ws_ctx *ctx)
{
    log_call('R', ctx, 0, 0);
    return 0;
}
static int r_predict(void *s, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = rec.script[rec.predicts++];
    log_call('P', ctx, *bs, 0);
    return 0;
}
static int r_observe(void *s, const ws_job *job, const ws_ctx *ctx, int bs, double cost,
                     int reached)
{
    log_call('O', ctx, bs, 0);
    return 0;
}
/* PLO: unknown until profiled, then the highest limit. */
static int r_predict_pl(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    *pl = rec.known[ws_job_bs_index(job, bs)];
    log_call('p', ctx, bs, *pl);
    return 0;
}
static int r_profile(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                     double c)
{
    int i = ws_job_bs_index(job, bs);
    if (pl > rec.known[i]) rec.known[i] = pl;
    log_call('f', ctx, bs, pl);
    return 0;
}
static int r_observe_run(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int pl,
                         double cost, int reached)
{
    log_call('r', ctx, bs, pl);
    return 0;
}

static const ws_bso_type rec_bso = {
    .abi_version = WS_ABI_VERSION, .name = "rec", .summary = "test",
    .create = r_create, .destroy = r_destroy, .register_job = r_register,
    .predict = r_predict, .observe = r_observe};
static const ws_plo_type rec_plo = {
    .abi_version = WS_ABI_VERSION, .name = "rec", .summary = "test",
    .create = r_create, .destroy = r_destroy, .predict = r_predict_pl,
    .observe_profile = r_profile, .register_job = r_register,
    .observe_run = r_observe_run};

/* Environment: carbon 100 + recurrence, price = seconds since the start. */
static void env_at(void *self, long recurrence, double t_s, double *carbon, double *price)
{
    (*(int *)self)++;
    *carbon = 100.0 + (double)recurrence;
    *price = t_s;
}

static void simulate_recorded(const ws_env_source *env, ws_sim_totals *tot)
{
    static const int script[] = {32, 64, 32, 16};
    memset(&rec, 0, sizeof rec);
    rec.script = script;
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 1.2);
    ws_error err = {{0}};
    ws_bso *b = ws_bso_new(&rec_bso, NULL, 1, &err);
    ws_plo *p = ws_plo_new(&rec_plo, NULL, 1, &err);
    cr_assert(b && p, "%s", err.msg);
    ws_sim_params sp = {.recurrences = 3, .seed = 1, .env = env};
    cr_assert_eq(ws_simulate(&jt.job, b, p, &sp, NULL, NULL, tot, &err), 0, "%s", err.msg);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* The observed run of one observe call, as the context reports it. */
static void expect_run(const call *c, int epochs, int stopped, double budget, double t,
                       double e)
{
    cr_expect(c->ctx.run_started == 1 && c->ctx.run_epochs == epochs
              && c->ctx.run_early_stopped == stopped && c->ctx.run_epoch_budget == budget
              && c->ctx.run_time_s == t && c->ctx.run_energy_j == e,
              "%c (rec %ld try %d): started %d epochs %d stopped %d budget %g T %.17g"
              " E %.17g; want 1 %d %d %g %g %g", c->what, c->ctx.recurrence,
              c->ctx.attempt, c->ctx.run_started, c->ctx.run_epochs,
              c->ctx.run_early_stopped, c->ctx.run_epoch_budget, c->ctx.run_time_s,
              c->ctx.run_energy_j, epochs, stopped, budget, t, e);
}

static void expect_no_run(const call *c)
{
    cr_expect(c->ctx.run_started == 0 && c->ctx.run_epochs == 0 && isnan(c->ctx.run_time_s)
              && isnan(c->ctx.run_energy_j) && isnan(c->ctx.run_epoch_budget),
              "%c (rec %ld try %d) carries a run", c->what, c->ctx.recurrence,
              c->ctx.attempt);
}

/*
 * beta 1.2; the BSO plays 32, 64, 32, 16; the PLO profiles each new size
 * (highest limit first) and then answers 200 W.
 *  rec 1 try 1: 32, profiled (10 s 160 W, 12 s 90 W). 5 epochs, budget 10
 *    (no min cost yet): E = 2680/2 + 1600*4 = 7740, T = 22/2 + 10*4 = 51,
 *    cost 3870 + 5100 = 8970 = min cost.
 *  rec 2 try 1: 64, profiled (7 s 190 W, 8 s 95 W). Budget
 *    floor(1.2*8970 / (665 + 700)) = floor(7.886) = 7 < 12 target: stopped
 *    early after 7 epochs: E = 2090/2 + 1330*6 = 9025, T = 15/2 + 42 = 49.5.
 *  rec 2 try 2: 32 at 200 W, budget floor(10764 / 1800) = 5 = target:
 *    E = 8000, T = 50.
 *  rec 3 try 1: 16, profiled (15 s 150 W, 20 s 80 W). Budget
 *    floor(10764 / 2625) = 4 = target: E = 3850/2 + 2250*3 = 8675,
 *    T = 35/2 + 45 = 62.5.
 * Recurrences start at 0, 51 and 51 + 49.5 + 50 = 150.5 s.
 */
Test(abi, context_of_every_call)
{
    int env_calls = 0;
    ws_env_source env = {env_at, &env_calls};
    ws_sim_totals tot;
    simulate_recorded(&env, &tot);
    cr_expect_eq(env_calls, 3, "the environment is read once per recurrence");

    /* The sequence of calls. */
    static const char want[] = "RR" "Ppffp" "Or"           /* rec 1 */
                               "Ppffp" "Or" "Pp" "Or"      /* rec 2 */
                               "Ppffp" "Or";               /* rec 3 */
    char got[128] = "";
    for (int i = 0; i < rec.n; i++) got[i] = rec.c[i].what;
    cr_assert_str_eq(got, want);

    for (int i = 0; i < rec.n; i++) {
        const call *c = &rec.c[i];
        cr_expect_eq(c->ctx.recurrences, 3);
        if (c->what == 'R') {
            cr_expect(c->ctx.recurrence == 0 && c->ctx.attempt == 0);
            cr_expect(isnan(c->ctx.carbon_intensity) && isnan(c->ctx.price),
                      "no environment before the first recurrence");
        }
        if (c->what != 'O' && c->what != 'r') expect_no_run(c);
        if (c->what != 'f')
            cr_expect(isnan(c->ctx.profile_time_s) && isnan(c->ctx.profile_power_w),
                      "call %d (%c) carries a profile", i, c->what);
    }
    /* Position and environment. */
    static const struct { int at; long rec; int attempt; double t0; } pos[] = {
        {2, 1, 1, 0}, {7, 1, 1, 0}, {9, 2, 1, 51}, {14, 2, 1, 51}, {16, 2, 2, 51},
        {18, 2, 2, 51}, {20, 3, 1, 150.5}, {25, 3, 1, 150.5}};
    for (size_t j = 0; j < sizeof pos / sizeof *pos; j++) {
        const call *c = &rec.c[pos[j].at];
        cr_expect(c->ctx.recurrence == pos[j].rec && c->ctx.attempt == pos[j].attempt
                  && c->ctx.carbon_intensity == 100.0 + (double)pos[j].rec
                  && c->ctx.price == pos[j].t0,
                  "call %d (%c): rec %ld try %d carbon %g price %g; want %ld %d %g %g",
                  pos[j].at, c->what, c->ctx.recurrence, c->ctx.attempt,
                  c->ctx.carbon_intensity, c->ctx.price, pos[j].rec, pos[j].attempt,
                  100.0 + (double)pos[j].rec, pos[j].t0);
    }
    /* Profiles: each limit's epoch time and power, highest limit first. */
    static const struct { int at, bs, pl; double t, w; } prof[] = {
        {4, 32, 200, 10, 160}, {5, 32, 100, 12, 90}, {11, 64, 200, 7, 190},
        {12, 64, 100, 8, 95}, {22, 16, 200, 15, 150}, {23, 16, 100, 20, 80}};
    for (size_t j = 0; j < sizeof prof / sizeof *prof; j++) {
        const call *c = &rec.c[prof[j].at];
        cr_expect(c->bs == prof[j].bs && c->pl == prof[j].pl
                  && c->ctx.profile_time_s == prof[j].t
                  && c->ctx.profile_power_w == prof[j].w,
                  "profile %zu: (%d, %d) %g s %g W", j, c->bs, c->pl,
                  c->ctx.profile_time_s, c->ctx.profile_power_w);
    }
    /* Observed runs: BSO and PLO see the same. */
    for (int k = 0; k < 2; k++) {
        expect_run(&rec.c[7 + k], 5, 0, 10, 51, 7740);
        expect_run(&rec.c[14 + k], 7, 1, 7, 49.5, 9025);
        expect_run(&rec.c[18 + k], 5, 0, 5, 50, 8000);
        expect_run(&rec.c[25 + k], 4, 0, 4, 62.5, 8675);
    }
    cr_expect_eq(tot.energy_j, 7740 + 9025 + 8000 + 8675);
    cr_expect_eq(tot.time_s, 51 + 49.5 + 50 + 62.5);
}

Test(abi, no_environment_means_nan)
{
    ws_sim_totals tot;
    simulate_recorded(NULL, &tot);
    cr_assert_gt(rec.n, 2);
    for (int i = 0; i < rec.n; i++)
        cr_expect(isnan(rec.c[i].ctx.carbon_intensity) && isnan(rec.c[i].ctx.price),
                  "call %d: carbon %g price %g", i, rec.c[i].ctx.carbon_intensity,
                  rec.c[i].ctx.price);
}

Test(abi, ctx_has_members_of_this_version)
{
    ws_ctx c;
    ws_ctx_init(&c, 1);
    cr_expect(WS_CTX_HAS(&c, price));
    c.size = (unsigned)offsetof(ws_ctx, carbon_intensity);
    cr_expect(!WS_CTX_HAS(&c, carbon_intensity), "an older host's context lacks it");
    cr_expect(WS_CTX_HAS(&c, profile_power_w));
    /* 2.3's members, in this host's context and not in a 2.2 host's,
     * which ended at price. */
    ws_ctx_init(&c, 1);
    cr_expect(WS_CTX_HAS(&c, now_s) && WS_CTX_HAS(&c, defer_s));
    cr_expect(isnan(c.now_s) && isnan(c.due_s) && c.every_s == 0 && c.defer_s == 0,
              "no clock in a fresh context");
    c.size = (unsigned)(offsetof(ws_ctx, price) + sizeof c.price);
    cr_expect(WS_CTX_HAS(&c, price) && !WS_CTX_HAS(&c, now_s) && !WS_CTX_HAS(&c, defer_s));
}

/* ------------------------------------------------- versions and loading */

static void load_fails(const char *path, const char *want)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    int rc = ws_registry_load_file(r, path, &err);
    size_t n = ws_registry_n_bso(r) + ws_registry_n_plo(r);
    ws_registry_free(r);
    cr_assert_eq(rc, -1, "loading %s should fail", path);
    cr_expect_str_eq(err.msg, want);
    cr_expect_eq(n, 0);
}

Test(abi, plugin_needing_a_newer_host_is_refused)
{
    load_fails(PLUGIN("needs_newer"), PLUGIN("needs_newer") ": plugin 'needs_newer' needs"
               " policy ABI version 2.7, but this wattsim speaks version 2.3; upgrade"
               " wattsim");
}

Test(abi, plugin_may_refuse_the_host_version)
{
    load_fails(PLUGIN("refuses_host"), PLUGIN("refuses_host") ": ws_plugin_entry_v2(203)"
               " returned NULL (the plugin cannot run in this wattsim)");
}

/* A 2.4 plugin (newer than this host) that needs only 2.0 loads; its
 * specs and values are read and written at its own (larger) strides. */
Test(abi, newer_minor_plugin_loads)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    const ws_bso_type *t = ws_registry_bso(r, PLUGIN("newer_minor"), &err);
    cr_assert(t, "%s", err.msg);
    cr_assert_eq(ws_params_count(t->params), 2);
    cr_expect_str_eq(t->params[0].name, "a");
    cr_expect_eq(t->params[0].def.i, 3);
    cr_expect_str_eq(t->params[1].name, "b");
    cr_expect_eq(t->params[1].def.d, 0.25);
    cr_expect_eq(t->params[1].max, 1.0);
    ws_param_raw raw[] = {{(char *)"a", (char *)"2", (char *)"test"},
                          {(char *)"b", (char *)"0.75", (char *)"test"}};
    ws_value *v = NULL;
    cr_assert_eq(ws_params_resolve(t->params, raw, 2, "bso newer_minor", &v, &err), 0,
                 "%s", err.msg);
    ws_bso *b = ws_bso_new(t, v, 1, &err);
    cr_expect_not_null(b, "create must see a = 2, b = 0.75 at the plugin's stride: %s",
                       err.msg);
    ws_bso_free(b);
    ws_params_free(t->params, v);
    /* With the defaults (a = 3) its create refuses: the values do arrive. */
    cr_assert_eq(ws_params_resolve(t->params, NULL, 0, "bso newer_minor", &v, &err), 0);
    cr_expect_null(ws_bso_new(t, v, 1, &err));
    ws_params_free(t->params, v);
    ws_registry_free(r);
}

/* ---------------------------------------------------- the host's draws */

static const ws_host *seen_host;
static int h_create(void *s, const ws_value *v, const ws_host *h)
{
    seen_host = h;
    return 0;
}
static const ws_bso_type host_bso = {
    .abi_version = WS_ABI_VERSION, .name = "host", .summary = "test",
    .create = h_create, .destroy = r_destroy, .register_job = r_register,
    .predict = r_predict, .observe = r_observe};
static const ws_plo_type host_plo = {
    .abi_version = WS_ABI_VERSION, .name = "host", .summary = "test",
    .create = h_create, .destroy = r_destroy, .predict = r_predict_pl,
    .observe_profile = r_profile};

/* The calls of ws_host draw what numpy's Generator calls draw on the
 * instance's stream: np.random.default_rng(seed) for a BSO (as Zeus seeds
 * its bandit), SeedSequence(seed, spawn_key=(2,)) for a PLO (the streams
 * themselves are checked against numpy in test_rng). */
static void expect_numpy_draws(const ws_host *h, ws_rng *r)
{
    cr_assert_geq(h->abi_version, WS_ABI_VERSION_OF(2, 1));
    long out[12];
    int64_t want[12];
    for (int t = 0; t < 50; t++) {
        cr_expect_eq(h->uniform(h->ctx), ws_rng_random(r));
        cr_expect_eq(h->uniform_int(h->ctx, 7), ws_rng_integers(r, 7));
        cr_expect_eq(h->uniform_int(h->ctx, 1), 0);        /* no draw */
        cr_expect_eq(h->uniform_int(h->ctx, 0), 0);        /* no draw */
        cr_expect_eq(h->gaussian(h->ctx, 2.5), ws_rng_normal(r, 0.0, 2.5));
        cr_expect_eq(h->normal(h->ctx, -3.0, 0.5), ws_rng_normal(r, -3.0, 0.5));
        cr_expect_eq(h->normal(h->ctx, -3.0, 0.0), ws_rng_normal(r, -3.0, 0.0));
        cr_assert_eq(h->choice(h->ctx, 12, 5, out), 0);
        cr_assert_eq(ws_rng_choice(r, 12, 5, want), 0);
        for (int k = 0; k < 5; k++) cr_expect_eq(out[k], want[k]);
        cr_assert_eq(h->permutation(h->ctx, 9, out), 0);
        cr_assert_eq(ws_rng_permutation(r, 9, want), 0);
        for (int k = 0; k < 9; k++) cr_expect_eq(out[k], want[k]);
    }
    /* Refused without a draw: the streams stay in step. */
    cr_expect_eq(h->choice(h->ctx, 3, 4, out), -1);
    cr_expect_eq(h->choice(h->ctx, -1, 0, out), -1);
    cr_expect_eq(h->permutation(h->ctx, -2, out), -1);
    cr_expect_eq(h->uniform(h->ctx), ws_rng_random(r));
}

Test(abi, host_draws_are_numpys_on_the_role_streams)
{
    ws_error err = {{0}};
    for (unsigned long seed = 1; seed <= 20; seed += 19) {
        ws_rng r;
        ws_bso *b = ws_bso_new(&host_bso, NULL, seed, &err);
        cr_assert(b, "%s", err.msg);
        ws_rng_seed(&r, seed);
        expect_numpy_draws(seen_host, &r);
        ws_bso_free(b);
        ws_plo *p = ws_plo_new(&host_plo, NULL, seed, &err);
        cr_assert(p, "%s", err.msg);
        ws_rng_seed_spawn(&r, seed, 2);
        expect_numpy_draws(seen_host, &r);
        ws_plo_free(p);
    }
}

/* Descriptor checks (each was accepted before ABI 2.0's loader). */
Test(abi, duplicate_policy_names_in_one_plugin)
{
    load_fails(PLUGIN("dup_policy"),
               PLUGIN("dup_policy") ": bso 'twin' is defined twice in this plugin");
}

Test(abi, duplicate_parameter)
{
    load_fails(PLUGIN("dup_param"), PLUGIN("dup_param") ": bso 'dup_param': parameter"
               " 'window' is declared twice");
}

Test(abi, default_outside_bounds)
{
    load_fails(PLUGIN("bad_default"), PLUGIN("bad_default") ": bso 'bad_default':"
               " parameter 'epsilon' has default 1.5, outside its bounds [0, 1]");
}

Test(abi, nan_bounds)
{
    load_fails(PLUGIN("nan_bounds"), PLUGIN("nan_bounds") ": bso 'nan_bounds': parameter"
               " 'rate' has bounds [0, nan]; want numbers with min <= max");
}

/* ------------------------------------------------- version 1 still works */

static void run_capped(const char *so, fixture_runs *h, ws_sim_totals *tot, int *abi)
{
    ws_error err = {""};
    ws_registry *reg = ws_registry_new();
    const ws_plo_type *pt = ws_registry_plo(reg, so, &err);
    cr_assert(pt, "%s", err.msg);
    cr_expect_str_eq(pt->name, "capped");
    *abi = pt->abi_version;
    ws_param_raw raw = {(char *)"max_watts", (char *)"150", (char *)"test"};
    ws_value *pv = NULL;
    cr_assert_eq(ws_params_resolve(pt->params, &raw, 1, "plo capped", &pv, &err), 0, "%s",
                 err.msg);
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    const ws_bso_type *bt = fixture_bso(reg, "zeus");
    ws_value *bv = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso zeus", &bv, &err), 0);
    ws_bso *b = ws_bso_new(bt, bv, 3, &err);
    ws_plo *p = ws_plo_new(pt, pv, 3, &err);
    cr_assert(b && p, "%s", err.msg);
    ws_sim_params sp = {.recurrences = 6, .seed = 3};
    memset(h, 0, sizeof *h);
    cr_assert_eq(ws_simulate(&jt.job, b, p, &sp, fixture_keep, h, tot, &err), 0, "%s", err.msg);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_params_free(pt->params, pv);
    ws_params_free(bt->params, bv);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* policies/example/capped.c as built for ABI 1 (a frozen copy against the
 * frozen v1 header) and as it is now (ABI 2): the same runs, bit for bit.
 * Every run is at 100 W, the only limit under the 150 W cap. */
Test(abi, version1_plugin_gives_the_same_numbers)
{
    fixture_runs h1, h2;
    ws_sim_totals t1, t2;
    int abi1, abi2;
    run_capped(PLUGIN("capped_v1"), &h1, &t1, &abi1);
    run_capped(PLUGIN("capped"), &h2, &t2, &abi2);
    cr_expect_eq(abi1, 1);
    cr_expect_eq(abi2, WS_ABI_VERSION);
    cr_assert_eq(h1.n, h2.n);
    cr_assert_geq(h1.n, 6);
    for (int i = 0; i < h1.n; i++) {
        const ws_run_record *a = &h1.r[i], *b = &h2.r[i];
        cr_expect(a->recurrence == b->recurrence && a->attempt == b->attempt
                  && a->bs == b->bs && a->pl == b->pl && a->energy_j == b->energy_j
                  && a->time_s == b->time_s && a->cost == b->cost
                  && a->epochs == b->epochs && a->reached == b->reached
                  && a->profiled == b->profiled, "run %d differs", i + 1);
        cr_expect_eq(h1.r[i].pl, 100);
    }
    cr_expect_eq(t1.cost, t2.cost);
    cr_expect_eq(t1.energy_j, t2.energy_j);
    cr_expect_eq(t1.time_s, t2.time_s);
    cr_expect_eq(t1.final_bs, t2.final_bs);
}

/* The version-1 declarations installed for the opt-in (WS_ABI_REQUEST 1,
 * wattsim/policy_v1.h) are the released version-1 header, byte for byte,
 * and the one copy of it: the version-1 test plugins are built with its
 * released part, written by tests/CMakeLists.txt as the wattsim/policy.h
 * an out-of-tree author had. Its sha256 is pinned: an edit fails here. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[2][1 << 16];
    static int which;
    char *b = buf[which ^= 1];
    size_t n = fread(b, 1, sizeof buf[0] - 1, f);
    fclose(f);
    b[n] = '\0';
    return b;
}

Test(abi, opt_in_header_is_the_released_version_1)
{
    const char *start = "/*\n * wattsim policy ABI: what a batch-size optimizer";
    const char *a = strstr(slurp(WS_SOURCE_DIR "/sim/include/wattsim/policy_v1.h"), start);
    const char *b = slurp(WS_BUILD_DIR "/policies/v1/include/wattsim/policy.h");
    cr_assert(a);
    cr_expect_str_eq(a, b);
    unsigned char d[32];
    char hex[65];
    ws_sha256 h;
    ws_sha256_init(&h);
    ws_sha256_update(&h, a, strlen(a));
    ws_sha256_final(&h, d);
    ws_sha256_hex(d, hex);
    cr_expect_str_eq(hex, "8cb125905a8d5694b4edf64798108467c4e8171a74494e3fef172939de42f278",
                     "the released version-1 header changed: it is frozen");
    cr_expect(strstr(a, "#define WS_ABI_VERSION 1\n"));
}
