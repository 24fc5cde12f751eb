/*
 * Policy ABI 2.3: the simulated clock in the call context (now_s, due_s,
 * every_s, defer_s) and the series as a forecast (ws_host.forecast,
 * forecast_next), checked through a plugin built against the new header
 * (tests/plugins/forecast_probe.c) against the series this file writes;
 * and a 2.2 plugin (tests/plugins/abi22.c) loading and choosing as before.
 *
 * The series, from 2022-10-20T00:00Z (series second u = 0):
 *   carbon 100, 300, 200, 400 gCO2eq/kWh, 30 min each (a 2 h period);
 *   price  0.10, 0.30 $/kWh, 60 min each (a 2 h period).
 * The clock's 0 (--start) is u = 600; --every 45 min. Past the end both
 * repeat from their start. So at clock time t, u = 600 + t and
 *   carbon(t) = C[floor(u / 1800) mod 4],  price(t) = P[floor(u / 3600) mod 2],
 *   the next carbon change is at 1800 (floor(u / 1800) + 1) - 600,
 *   the mean over [t, t + w] is the average of carbon at every whole second
 *   plus a half (the boundaries are whole seconds).
 * The fixture's default BSO plays b0 32; at 200 W a run is 5 epochs of
 * 10 s (50 s); at 100 W, 5 of 12 s (60 s): a run ends well before the
 * next recurrence is due, so recurrence r starts at (r - 1) 2700 s.
 */
#include <dlfcn.h>
#include <math.h>

#include "fixture.h"
#include "tmpdir.h"
#include "wattsim/engine.h"
#include "plugins/forecast_probe.h"

#define PLUGIN(name) WS_TEST_PLUGIN_DIR "/" name ".so"

static const double C[4] = {100, 300, 200, 400}, P[2] = {0.10, 0.30};
#define OFFSET 600.0
#define EVERY 2700.0

static double carbon_at(double t)
{
    return C[(long)floor((OFFSET + t) / 1800) % 4];
}
static double price_at(double t)
{
    return P[(long)floor((OFFSET + t) / 3600) % 2];
}
static double carbon_mean(double t, double w)
{
    double sum = 0;
    for (long k = 0; k < (long)w; k++) sum += carbon_at(t + (double)k + 0.5);
    return sum / w;
}

static void mk(void) { tmpdir_make("/tmp/wsforecast.XXXXXX"); }

static void load(ws_series *s, const char *name, const char *text, ws_series_kind kind)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    fixture_write(path, text);
    ws_error err = {{0}};
    cr_assert_eq(ws_series_load(s, path, kind, NULL, &err), 0, "%s", err.msg);
}

/* The what-if: carbon (and price if with_price), start u = 600, every 45 min. */
static void whatif(ws_whatif *w, int with_price, double defer)
{
    memset(w, 0, sizeof *w);
    load(&w->carbon, "c.csv", "timestamp,duration,value\n2022-10-20T00:00:00Z,30,100\n"
         "2022-10-20T00:30:00Z,30,300\n2022-10-20T01:00:00Z,30,200\n"
         "2022-10-20T01:30:00Z,30,400\n", WS_SERIES_CARBON);
    w->has_carbon = 1;
    if (with_price) {
        load(&w->price, "p.csv", "timestamp,duration,value\n2022-10-20T00:00:00Z,60,0.10\n"
             "2022-10-20T01:00:00Z,60,0.30\n", WS_SERIES_PRICE);
        w->has_price = 1;
    }
    w->start = w->carbon.start + OFFSET;
    w->every = EVERY;
    w->defer = defer;
    w->defer_series = &w->carbon;
}

/* Simulate 4 recurrences of the fixture with default:PLO (PLO a file). */
static void simulate(const char *plo_file, const ws_whatif *w, fixture_runs *out, int *plo_abi)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    const ws_plo_type *pt = ws_registry_plo(reg, plo_file, &err);
    cr_assert(pt, "%s", err.msg);
    if (plo_abi) *plo_abi = pt->abi_version;
    ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
    ws_plo *p = ws_plo_new(pt, NULL, 1, &err);
    cr_assert(b && p, "%s", err.msg);
    ws_sim_params sp = {.recurrences = 4, .seed = 1};
    memset(out, 0, sizeof *out);
    ws_sim_totals tot;
    cr_assert_eq(ws_simulate_whatif(&jt.job, b, p, &sp, w, fixture_keep, out, &tot, &err), 0,
                 "%s", err.msg);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* The probe's records (its file is loaded while the test holds it). */
static const probe_rec *records(void *so, int *n)
{
    const probe_rec *(*get)(int *) =
        (const probe_rec *(*)(int *))dlsym(so, "forecast_probe_records");
    cr_assert(get, "forecast_probe_records: %s", dlerror());
    return get(n);
}

static void *hold_probe(void)
{
    void *so = dlopen(PLUGIN("forecast_probe"), RTLD_NOW);
    cr_assert(so, "%s", dlerror());
    return so;
}

#define SAME(a, b) ((isnan(a) && isnan(b)) || (a) == (b))

Test(forecast, clock_and_series_as_the_series_file_says, .init = mk, .fini = tmpdir_remove)
{
    void *so = hold_probe();
    for (int with_price = 1; with_price >= 0; with_price--) {
        ws_whatif w;
        whatif(&w, with_price, 0);
        fixture_runs r;
        simulate(PLUGIN("forecast_probe"), &w, &r, NULL);
        int n;
        const probe_rec *x = records(so, &n);
        /* create, register, then predict and observe_run per recurrence */
        cr_assert_eq(n, 2 + 2 * 4);
        cr_expect(x[0].what == 'c' && isnan(x[0].carbon) && isnan(x[0].price),
                  "no forecast in create: %g", x[0].carbon);
        cr_expect(x[1].what == 'R' && x[1].now_s == 0 && isnan(x[1].due_s)
                  && x[1].every_s == EVERY && x[1].defer_s == 0);
        cr_assert_eq(r.n, 4);
        for (int k = 2; k < n; k++) {
            const probe_rec *q = &x[k];
            const long rec = (k - 2) / 2 + 1;
            const double due = (double)(rec - 1) * EVERY;
            const double t = q->what == 'p' ? due : due + 50;  /* 200 W: 50 s */
            cr_expect(q->what == ((k % 2) ? 'r' : 'p') && q->recurrence == rec);
            cr_expect_eq(q->now_s, t, "call %d: now %g, want %g", k, q->now_s, t);
            cr_expect_eq(q->due_s, due, "call %d: due %g, want %g", k, q->due_s, due);
            cr_expect_eq(r.r[rec - 1].start_s, due);
            cr_expect_eq(q->carbon, carbon_at(t), "call %d: carbon at %g: %g, want %g", k,
                         t, q->carbon, carbon_at(t));
            const double mean = carbon_mean(t, PROBE_WINDOW);
            cr_expect(fabs(q->carbon_mean - mean) <= 1e-9 * mean,
                      "call %d: mean over [%g, +5400] %.17g, want %.17g", k, t,
                      q->carbon_mean, mean);
            const double next = 1800 * (floor((OFFSET + t) / 1800) + 1) - OFFSET;
            cr_expect(fabs(q->carbon_next - next) < 1e-6, "call %d: next %.17g, want %g",
                      k, q->carbon_next, next);
            cr_expect_eq(q->refused, 1.0, "call %d: a refused query was not NAN", k);
            if (with_price) {
                const double pnext = 3600 * (floor((OFFSET + t) / 3600) + 1) - OFFSET;
                cr_expect_eq(q->price, price_at(t), "call %d: price %g, want %g", k,
                             q->price, price_at(t));
                cr_expect(fabs(q->price_next - pnext) < 1e-6);
            } else {
                cr_expect(isnan(q->price) && isnan(q->price_next),
                          "no price series: price %g", q->price);
            }
        }
        /* Unbound after the simulation: a stale series is never read. */
        ws_whatif_free(&w);
    }
    dlclose(so);
}

/* Past the series' end it repeats from its start: recurrence 4 is due at
 * t = 8100 (u = 8700, 1500 s into the second period: C[0]). The closed
 * form of the test's mean across the wrap, [6300, 6300 + 5400] = u in
 * [6900, 12300]: 300 s at 400, 1800 at 100, 1800 at 300, 1500 at 200. */
Test(forecast, a_window_across_the_end_wraps_as_the_accounting, .init = mk,
     .fini = tmpdir_remove)
{
    cr_assert_eq(carbon_mean(6300, 5400),
                 (300 * 400 + 1800 * 100 + 1800 * 300 + 1500 * 200) / 5400.0);
    ws_whatif w;
    whatif(&w, 0, 0);
    void *so = hold_probe();
    fixture_runs r;
    simulate(PLUGIN("forecast_probe"), &w, &r, NULL);
    int n;
    const probe_rec *x = records(so, &n);
    /* recurrence 4 is due at 8100 (u = 8700, past the 7200 s period) */
    cr_assert_eq(x[8].now_s, 8100.0);
    cr_expect_eq(x[8].carbon, 100.0);
    dlclose(so);
    ws_whatif_free(&w);
}

/* Without a series there is a clock (back to back from 0) but no forecast. */
Test(forecast, no_series_no_forecast)
{
    void *so = hold_probe();
    fixture_runs r;
    simulate(PLUGIN("forecast_probe"), NULL, &r, NULL);
    int n;
    const probe_rec *x = records(so, &n);
    cr_assert_eq(n, 10);
    for (int k = 2; k < n; k++) {
        const double start = 50.0 * (double)((k - 2) / 2);
        cr_expect_eq(x[k].now_s, x[k].what == 'p' ? start : start + 50);
        cr_expect_eq(x[k].due_s, start);
        cr_expect(x[k].every_s == 0 && x[k].defer_s == 0);
        cr_expect(isnan(x[k].carbon) && isnan(x[k].price) && isnan(x[k].carbon_mean)
                  && isnan(x[k].carbon_next), "call %d: a forecast without a series", k);
    }
    dlclose(so);
}

/* Under --defer-up-to the knob is chosen at the due time; observe_run's
 * now_s is the end of the run as the engine ran it (after its wait). With
 * a 30 min window the run due at t = 0 (u = 600, 100 g) stays; the one
 * due at 2700 (u = 3300, 300 g) waits for u = 3600 (200 g): t = 3000. */
Test(forecast, deferred_runs_end_where_the_engine_ran_them, .init = mk,
     .fini = tmpdir_remove)
{
    ws_whatif w;
    whatif(&w, 0, 1800);
    void *so = hold_probe();
    fixture_runs r;
    simulate(PLUGIN("forecast_probe"), &w, &r, NULL);
    int n;
    const probe_rec *x = records(so, &n);
    cr_assert_eq(n, 10);
    cr_assert_eq(r.n, 4);
    cr_expect_eq(x[1].defer_s, 1800.0);
    cr_expect_eq(r.r[1].start_s, 3000.0);
    for (int q = 0; q < 4; q++) {
        cr_expect_eq(x[2 + 2 * q].now_s, (double)q * EVERY, "predict at the due time");
        cr_expect_eq(x[3 + 2 * q].now_s, r.r[q].start_s + r.r[q].time_s);
    }
    dlclose(so);
    ws_whatif_free(&w);
}

/* A 2.2 plugin loads as 2.2 and chooses by the rate at each recurrence's
 * start, as it did in a 2.2 host: the lowest limit (100 W) above 250 g.
 * Recurrences start at t = 0, 2700, 5400, 8100: u = 600, 3300, 6000,
 * 8700 -> 100, 300, 400, 100 g: 200, 100, 100, 200 W. */
Test(forecast, abi_2_2_plugin_chooses_as_before, .init = mk, .fini = tmpdir_remove)
{
    ws_whatif w;
    whatif(&w, 1, 0);
    fixture_runs r;
    int abi = 0;
    simulate(PLUGIN("abi22"), &w, &r, &abi);
    cr_expect_eq(abi, WS_ABI_VERSION_OF(2, 2));
    cr_assert_eq(r.n, 4);
    for (int q = 0; q < 4; q++) {
        const double t = (double)q * EVERY;
        const int want = carbon_at(t) > 250 ? 100 : 200;
        cr_expect_eq(r.r[q].pl, want, "recurrence %d (%g g): %d W, want %d", q + 1,
                     carbon_at(t), r.r[q].pl, want);
        cr_expect_eq(r.r[q].start_s, t);
        cr_expect_eq(r.r[q].time_s, want == 100 ? 60.0 : 50.0);
    }
    ws_whatif_free(&w);
}

/* ------------------------------------------- the carbon PLO's forecast */

/* A host whose forecast is the test's own closed form: carbon 100 g over
 * [0, 50) s of the clock and 1000 g after; no price. */
static double fake_forecast(void *ctx, int kind, double t, double dur)
{
    if (kind != WS_FORECAST_CARBON || !(t >= 0) || !(dur >= 0)) return NAN;
    if (dur == 0) return t < 50 ? 100 : 1000;
    const double clean = fmax(0, fmin(t + dur, 50) - t);
    return (100 * clean + 1000 * (dur - clean)) / dur;
}
static double fake_next(void *ctx, int kind, double t) { return t < 50 ? 50 : INFINITY; }

/* The carbon PLO's choice for bs 32 of the fixture (eta 0.5, maxPL 200 W;
 * 100 W: 12 s per epoch at 90 W, 200 W: 10 s at 160 W), at now_s = 0 with
 * intensity 100 at the start (the mean of the rates seen is 100), after
 * observing runs of `epochs` epochs (0: none), with a host of version
 * `host_abi` (before 2.3: no forecast). Per-epoch cost at weight w:
 * 540 w + 1200 at 100 W, 800 w + 1000 at 200 W. */
static int carbon_choice(int epochs, int host_abi)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_registry *reg = ws_registry_new();
    const ws_plo_type *t = fixture_plo(reg, "carbon");
    const ws_host host = {host_abi, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                          fake_forecast, fake_next, 1};
    void *state = calloc(1, t->state_size);
    cr_assert(state);
    ws_ctx ctx;
    ws_ctx_init(&ctx, 10);
    cr_assert_eq(t->create(state, NULL, &host), 0);
    cr_assert_eq(t->register_job(state, &jt.job, &ctx), 0);
    ctx.recurrence = ctx.attempt = 1;
    ctx.carbon_intensity = 100;
    ctx.now_s = 0;
    int pl = -1;
    cr_assert_eq(t->predict(state, &jt.job, &ctx, 32, &pl), 0);
    cr_assert_eq(pl, WS_PL_UNKNOWN, "not profiled yet");
    const struct { int pl; double t, p; } prof[] = {{200, 10, 160}, {100, 12, 90}};
    for (int q = 0; q < 2; q++) {
        ctx.profile_time_s = prof[q].t;
        ctx.profile_power_w = prof[q].p;
        cr_assert_eq(t->observe_profile(state, &jt.job, &ctx, 32, prof[q].pl, 0), 0);
    }
    ws_ctx_clear_run(&ctx);
    if (epochs) {
        ctx.run_started = 1;
        ctx.run_epochs = epochs;
        cr_assert_eq(t->observe_run(state, &jt.job, &ctx, 32, 100, 0, 1), 0);
        ws_ctx_clear_run(&ctx);
    }
    cr_assert_eq(t->predict(state, &jt.job, &ctx, 32, &pl), 0);
    t->destroy(state);
    free(state);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    return pl;
}

/* Runs of 5 epochs: at 200 W 50 s, all at 100 g (w = 1): 1800; at 100 W
 * 60 s, 50 s at 100 g and 10 s at 1000 g: mean 250, w = 2.5: 540 x 2.5 +
 * 1200 = 2550. The forecast picks 200 W; the rate at the start alone
 * (w = 1 for both: 1740 against 1800) picks 100 W, as does a run of one
 * epoch (12 s and 10 s, both clean) and a host before 2.3. */
Test(forecast, carbon_policy_weighs_the_run_over_its_forecast)
{
    cr_expect_eq(carbon_choice(5, WS_ABI_VERSION), 200);
    cr_expect_eq(carbon_choice(0, WS_ABI_VERSION), 100);
    cr_expect_eq(carbon_choice(5, WS_ABI_VERSION_OF(2, 2)), 100);
}
