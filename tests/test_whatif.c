/*
 * What-if transforms and rate series against closed forms, on the tiny
 * fixture trace (fixture.h):
 *   bs  pl   time/epoch  power   target epochs
 *   16  100  20          80      4, 4
 *   16  200  15          150
 *   32  100  12          90      5, 5        (b0)
 *   32  200  10          160
 *   64  100   8          95      12, 12 (never within 10 epochs)
 *   64  200   7          190
 * Its TTA/ETA frontier is {32@200 (50 s, 8000 J), 32@100 (60 s, 5400 J)}.
 */
#include <math.h>

#include "fixture.h"
#include "tmpdir.h"
#include "wattsim/engine.h"
#include "wattsim/group.h"
#include "wattsim/pareto.h"
#include "wattsim/params.h"
#include "wattsim/series.h"
#include "wattsim/whatif.h"

#define REL(a, b) (fabs((a) - (b)) <= 1e-12 * fmax(1.0, fabs(b)))

TestSuite(whatif, .init = NULL);

static void capped(double cap, ws_job_table *out, char *note, size_t n, int *rc,
                   ws_error *err)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_whatif w = {0};
    w.power_cap = cap;
    w.where_cap = "--power-cap";
    *rc = ws_whatif_apply(&jt, &w, out, note, n, err);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

Test(whatif, cap_removes_knobs_and_changes_the_frontier_exactly)
{
    ws_job_table jt;
    ws_error err = {{0}};
    char note[256];
    int rc;
    capped(150, &jt, note, sizeof note, &rc, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    const ws_job *j = &jt.job;
    /* Every 200 W knob is gone; each batch size keeps its 100 W knob. */
    cr_assert_eq(j->n_bs, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(j->knob_start[i + 1] - j->knob_start[i], 1);
        cr_assert_eq(j->knob_pl[j->knob_start[i]], 100);
    }
    cr_assert_eq(j->b0, 32);
    cr_assert_eq(j->max_power, 200.0, "MaxPower stays the uncapped GPU's");
    cr_assert_eq(jt.default_recurrences, 2 * 3 * 1);
    cr_assert_str_eq(note, "power cap 150 W: the default knob is now b0 32 at 100 W"
                     " (was 200 W)");
    ws_pareto p;
    cr_assert_eq(ws_pareto_compute(j, &p, &err), 0, "%s", err.msg);
    /* Frontier: 32@100 alone (16@100 is slower and costlier). */
    cr_assert_eq(p.n_frontier, 1);
    cr_assert_eq(p.knobs[p.frontier[0]].bs, 32);
    cr_assert_eq(p.knobs[p.frontier[0]].pl, 100);
    cr_assert_eq(p.knobs[p.default_knob].pl, 100);
    cr_assert_eq(p.knobs[p.frontier[0]].tta, 60.0);
    cr_assert_eq(p.knobs[p.frontier[0]].eta, 5400.0);
    ws_pareto_free(&p);
    ws_job_free(&jt);

    /* A cap at or above every limit changes nothing. */
    capped(200, &jt, note, sizeof note, &rc, &err);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(note, "");
    cr_assert_eq(jt.job.knob_start[jt.job.n_bs], 6);
    cr_assert_eq(ws_pareto_compute(&jt.job, &p, &err), 0);
    cr_assert_eq(p.n_frontier, 2);
    ws_pareto_free(&p);
    ws_job_free(&jt);
}

Test(whatif, cap_below_every_limit_of_b0_is_an_error)
{
    ws_job_table jt;
    ws_error err = {{0}};
    int rc;
    capped(90, &jt, NULL, 0, &rc, &err);
    cr_assert_eq(rc, -1);
    cr_assert_str_eq(err.msg, "--power-cap: power cap 90 W leaves the default batch"
                     " size 32 of w on g1 no power limit (its lowest is 100 W)");
}

/* A hand-made table: bs 8 only at 250 W, bs 16 at 100 and 250 W (b0). */
static void two_sizes(ws_job_table *jt)
{
    memset(jt, 0, sizeof *jt);
    jt->workload = strdup("w");
    jt->gpu = strdup("g");
    jt->bs = malloc(2 * sizeof *jt->bs);
    jt->knob_start = malloc(3 * sizeof *jt->knob_start);
    jt->run_start = malloc(3 * sizeof *jt->run_start);
    jt->knob_pl = malloc(3 * sizeof *jt->knob_pl);
    jt->knob_time = malloc(3 * sizeof *jt->knob_time);
    jt->knob_power = malloc(3 * sizeof *jt->knob_power);
    jt->run_epoch = malloc(3 * sizeof *jt->run_epoch);
    memcpy(jt->bs, (int[]){8, 16}, 2 * sizeof(int));
    memcpy(jt->knob_start, (int[]){0, 1, 3}, 3 * sizeof(int));
    memcpy(jt->run_start, (int[]){0, 2, 3}, 3 * sizeof(int));
    memcpy(jt->knob_pl, (int[]){250, 100, 250}, 3 * sizeof(int));
    memcpy(jt->knob_time, (double[]){5, 9, 6}, 3 * sizeof(double));
    memcpy(jt->knob_power, (double[]){240, 95, 230}, 3 * sizeof(double));
    memcpy(jt->run_epoch, (double[]){3, 4, 6}, 3 * sizeof(double));
    jt->b0_index = 1;
    jt->n_pl_distinct = 2;
    jt->default_recurrences = 8;
    jt->job = (ws_job){WS_ABI_VERSION, jt->workload, jt->gpu, 0.5, 2.0, 250, 10, 16, 0,
                       2, jt->bs, jt->knob_start, jt->knob_pl, jt->knob_time,
                       jt->knob_power, jt->run_start, jt->run_epoch, NULL, NULL, NULL, NULL, 1,
                       NULL, NULL, NULL, NAN};
}

Test(whatif, a_batch_size_without_a_knob_drops_out_with_its_runs)
{
    ws_job_table in, out;
    two_sizes(&in);
    ws_whatif w = {.power_cap = 200};
    ws_error err = {{0}};
    char note[256];
    cr_assert_eq(ws_whatif_apply(&in, &w, &out, note, sizeof note, &err), 0, "%s", err.msg);
    cr_assert_eq(out.job.n_bs, 1);
    cr_assert_eq(out.job.bs[0], 16);
    cr_assert_eq(out.b0_index, 0);
    cr_assert_eq(out.job.run_start[1], 1);
    cr_assert_eq(out.job.run_epoch[0], 6.0, "bs 16's own run");
    cr_assert_eq(out.job.knob_pl[0], 100);
    cr_assert_eq(out.job.knob_time[0], 9.0);
    cr_assert_str_eq(note, "power cap 200 W: the default knob is now b0 16 at 100 W"
                     " (was 250 W); power cap 200 W: batch size 8 has no power limit"
                     " left and drops out");
    ws_job_free(&out);
    ws_job_free(&in);
}

Test(whatif, input_stall_stretches_time_and_energy_by_the_formula)
{
    ws_traces tr;
    ws_job_table jt, st;
    fixture_job(&tr, &jt, 0.5, 2.0);
    const double S = 0.25, W = 40;
    ws_whatif w = {.input_stall = S, .idle_power = W};
    ws_error err = {{0}};
    cr_assert_eq(ws_whatif_apply(&jt, &w, &st, NULL, 0, &err), 0, "%s", err.msg);
    const ws_job *a = &jt.job, *b = &st.job;
    cr_assert_eq(b->knob_start[b->n_bs], 6);
    for (int k = 0; k < 6; k++) {
        const double t = a->knob_time[k], p = a->knob_power[k];
        const double t2 = t / (1 - S);
        cr_assert(REL(b->knob_time[k], t2));
        /* e' = t p + (t' - t) W */
        cr_assert(REL(b->knob_time[k] * b->knob_power[k], t * p + (t2 - t) * W),
                  "knob %d: e' %g", k, b->knob_time[k] * b->knob_power[k]);
    }
    /* Every TTA stretches by 1 / (1 - S); 32@100: 60 s -> 80 s, ETA
     * 5 * (12 * 90 + 4 * 40) = 6200 J. */
    ws_pareto p0, p1;
    cr_assert_eq(ws_pareto_compute(a, &p0, &err), 0);
    cr_assert_eq(ws_pareto_compute(b, &p1, &err), 0);
    for (int k = 0; k < p0.n; k++)
        if (p0.knobs[k].reached)
            cr_assert(REL(p1.knobs[k].tta, p0.knobs[k].tta / (1 - S)));
    cr_assert(REL(p1.knobs[2].tta, 80.0));
    cr_assert(REL(p1.knobs[2].eta, 6200.0));
    ws_pareto_free(&p0);
    ws_pareto_free(&p1);
    ws_job_free(&st);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* ------------------------------------------------------------ series */

static const char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    fixture_write(path, text);
    return path;
}

/* 2022-10-20 00:00, 00:30, 01:00 UTC: 100, 200, 400 g/kWh, 30 min each. */
static const char *THREE =
    "location,timestamp,duration,value,hist\n"
    "X,2022-10-20T00:00:00+00:00,30,100,1\n"
    "X,2022-10-20T00:30:00+00:00,30,200,1\n"
    "X,2022-10-20T01:00:00+00:00,30,400,1\n";

static void load(ws_series *s, const char *text, ws_series_kind kind)
{
    ws_error err = {{0}};
    cr_assert_eq(ws_series_load(s, write_tmp("s.csv", text), kind, NULL, &err), 0,
                 "%s", err.msg);
}

static void mk(void) { tmpdir_make("/tmp/wswhatif.XXXXXX"); }

Test(whatif, emissions_inside_one_interval_are_energy_times_intensity, .init = mk,
     .fini = tmpdir_remove)
{
    ws_series s;
    load(&s, THREE, WS_SERIES_CARBON);
    double t0;
    cr_assert_eq(ws_parse_time("2022-10-20T00:00:00Z", &t0), 0);
    cr_assert_eq(t0, 1666224000.0);
    cr_assert_eq(s.start, t0);
    cr_assert_eq(s.end, t0 + 5400);
    cr_assert(REL(ws_series_mean(&s), 700.0 / 3));
    int wrapped = -1;
    /* 1 kWh over 10 minutes from 00:05: 100 g. */
    cr_assert(REL(ws_series_amount(&s, t0 + 300, 600, 3.6e6, &wrapped), 100.0));
    cr_assert_eq(wrapped, 0);
    /* 2 kWh inside the third interval: 800 g. */
    cr_assert(REL(ws_series_amount(&s, t0 + 3700, 1000, 7.2e6, &wrapped), 800.0));
    ws_series_free(&s);
}

Test(whatif, emissions_over_two_intervals_split_in_proportion_to_time, .init = mk,
     .fini = tmpdir_remove)
{
    ws_series s;
    load(&s, THREE, WS_SERIES_CARBON);
    int wrapped;
    /* From 00:20 for 20 min: half at 100, half at 200 -> 150 g per kWh. */
    cr_assert(REL(ws_series_amount(&s, s.start + 1200, 1200, 3.6e6, &wrapped), 150.0));
    /* From 00:25 for 10 min: 1/2 at 100, 1/2 at 200; from 00:20 for 40 min:
     * 1/4 at 100, 3/4 at 200 -> 175 g per kWh. */
    cr_assert(REL(ws_series_amount(&s, s.start + 1200, 2400, 3.6e6, &wrapped), 175.0));
    /* All three: 10 min at 100, 30 at 200, 20 at 400 -> (1000 + 6000 + 8000)/60. */
    cr_assert(REL(ws_series_amount(&s, s.start + 1200, 3600, 3.6e6, &wrapped), 250.0));
    cr_assert_eq(wrapped, 0);
    ws_series_free(&s);
}

Test(whatif, a_run_past_the_end_wraps_around, .init = mk, .fini = tmpdir_remove)
{
    ws_series s;
    load(&s, THREE, WS_SERIES_CARBON);
    int wrapped = 0;
    /* From 01:20 for 20 min: 10 min at 400, then 10 min at 100 (the start). */
    cr_assert(REL(ws_series_amount(&s, s.start + 4800, 1200, 3.6e6, &wrapped), 250.0));
    cr_assert_eq(wrapped, 1);
    /* Two whole periods and 30 minutes more from the start: the 30 minutes
     * at 100; mean (2 * 700 * 1800 + 100 * 1800) / 12600 s. */
    double g = ws_series_amount(&s, s.start, 2 * 5400 + 1800, 3.6e6, &wrapped);
    cr_assert(REL(g, (2 * 700 * 1800.0 + 100 * 1800.0) / 12600.0), "%.17g", g);
    /* A start one period later reads the same as the start. */
    cr_assert(REL(ws_series_amount(&s, s.start + 5400 + 300, 600, 3.6e6, &wrapped), 100.0));
    cr_assert_eq(ws_series_at(&s, s.start + 3 * 5400 + 1900), 200.0);
    ws_series_free(&s);
}

Test(whatif, price_is_the_same_integral_in_dollars, .init = mk, .fini = tmpdir_remove)
{
    ws_series s;
    load(&s, "timestamp,duration,value\n"
             "2022-10-20T00:00:00Z,60,0.10\n2022-10-20T01:00:00Z,60,0.30\n",
         WS_SERIES_PRICE);
    int wrapped;
    /* 10 kWh from 00:30 for an hour: half at 0.10, half at 0.30 -> $2. */
    cr_assert(REL(ws_series_amount(&s, s.start + 1800, 3600, 3.6e7, &wrapped), 2.0));
    ws_series_free(&s);
    ws_error err = {{0}};
    cr_assert_eq(ws_series_constant(&s, 0.12, &err), 0);
    cr_assert(REL(ws_series_amount(&s, 1666224000.0, 7200, 3.6e7, &wrapped), 1.2));
    ws_series_free(&s);
}

Test(whatif, electricity_maps_export_is_read_by_column_name, .init = mk,
     .fini = tmpdir_remove)
{
    ws_series s;
    load(&s, "Datetime (UTC),Country,Zone Name,Zone Id,"
             "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (direct),"
             "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (LCA)\n"
             "2022-01-01 00:00:00,DE,Germany,DE,300,350\n"
             "2022-01-01 01:00:00,DE,Germany,DE,500,550\n",
         WS_SERIES_CARBON);
    cr_assert_eq(s.n, 2);
    cr_assert_eq(s.end - s.start, 7200.0, "the last hour lasts as the one before");
    int wrapped;
    /* the lifecycle basis (LCA column) by default: 350 and 550 */
    cr_assert(REL(ws_series_amount(&s, s.start + 1800, 3600, 3.6e6, &wrapped), 450.0));
    ws_series_free(&s);
    /* the direct basis when asked: 300 and 500 */
    ws_error err = {{0}};
    char path[256];
    snprintf(path, sizeof path, "%s/s.csv", tmp);
    cr_assert_eq(ws_series_load_basis(&s, path, WS_SERIES_CARBON,
                                      WS_BASIS_DIRECT, NULL, &err), 0, "%s", err.msg);
    cr_assert(REL(ws_series_amount(&s, s.start + 1800, 3600, 3.6e6, &wrapped), 400.0));
    ws_series_free(&s);
}

Test(whatif, series_errors_name_file_and_line, .init = mk, .fini = tmpdir_remove)
{
    ws_series s;
    ws_error err = {{0}};
    char want[512];
    const char *p = write_tmp("gap.csv", "timestamp,duration,value\n"
                              "2022-10-20T00:00:00Z,30,1\n2022-10-20T01:00:00Z,30,1\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), -1);
    snprintf(want, sizeof want, "%s:3: interval starts at 2022-10-20T01:00:00Z but the"
             " previous one ends at 2022-10-20T00:30:00Z: intervals must be in time"
             " order, without gaps or overlaps", p);
    cr_assert_str_eq(err.msg, want);
    p = write_tmp("neg.csv", "timestamp,duration,value\n2022-10-20T00:00:00Z,30,-1\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_PRICE, NULL, &err), -1);
    snprintf(want, sizeof want, "%s:2: price must be a number: 0, or from 0.000001 to 1000000 (no real rate is outside, and a tinier one would overflow the objective's scale), got \"-1\"", p);
    cr_assert_str_eq(err.msg, want);
}

Test(whatif, iso_times)
{
    double t;
    cr_assert_eq(ws_parse_time("1970-01-01T00:00:00Z", &t), 0);
    cr_assert_eq(t, 0.0);
    cr_assert_eq(ws_parse_time("2022-10-20T06:20:00+00:00", &t), 0);
    cr_assert_eq(t, 1666246800.0);
    cr_assert_eq(ws_parse_time("2022-10-20T08:20:00+02:00", &t), 0);
    cr_assert_eq(t, 1666246800.0);
    cr_assert_eq(ws_parse_time("2024-02-29", &t), 0);
    cr_assert_eq(ws_parse_time("2023-02-29", &t), -1);
    cr_assert_eq(ws_parse_time("2022-10-20T25:00:00Z", &t), -1);
    cr_assert_eq(ws_parse_time("2022-10-20T06:20:00 junk", &t), -1);
    char buf[32];
    ws_format_time(1666246800.0, buf, sizeof buf);
    cr_assert_str_eq(buf, "2022-10-20T06:20:00Z");
    /* Past year 9999 (the fuzzer's 8.9e49-minute interval): seconds, not an
     * overflowing date (UBSan: the conversion to long was undefined). */
    char far[64];
    ws_format_time(5.33e52, far, sizeof far);
    cr_assert_str_eq(far, "5.33e+52 s after 1970-01-01T00:00:00Z");
    ws_format_time(253402300799.0, far, sizeof far);
    cr_assert_str_eq(far, "9999-12-31T23:59:59Z");
    ws_format_time(NAN, far, sizeof far);
    cr_assert_str_eq(far, "(no time)");
}

/* ------------------------------------------------------------ engine */

typedef struct grecs {
    ws_group_record r[64];
    int n;
} grecs;

static int keep_group(void *p, const ws_group_record *r)
{
    grecs *c = p;
    cr_assert_lt(c->n, 64);
    c->r[c->n++] = *r;
    return 0;
}

static void simulate(const ws_whatif *w, fixture_runs *out, ws_sim_totals *tot)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
    ws_plo *p = ws_plo_new(fixture_plo(reg, "default"), NULL, 1, &err);
    cr_assert(b && p, "%s", err.msg);
    ws_sim_params sp = {.recurrences = 6, .seed = 1};
    memset(out, 0, sizeof *out);
    cr_assert_eq(ws_simulate_whatif(&jt.job, b, p, &sp, w, fixture_keep, out, tot, &err), 0,
                 "%s", err.msg);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

Test(whatif, engine_accounts_each_run_on_the_simulated_clock, .init = mk,
     .fini = tmpdir_remove)
{
    ws_whatif w = {0};
    load(&w.carbon, THREE, WS_SERIES_CARBON);
    w.has_carbon = 1;
    w.start = w.carbon.start;
    fixture_runs r;
    ws_sim_totals tot, plain;
    simulate(&w, &r, &tot);
    /* default: b0 32 at 200 W, 5 epochs: 50 s, 8000 J per run, back to back. */
    cr_assert_eq(r.n, 6);
    double sum = 0;
    for (int i = 0; i < r.n; i++) {
        cr_assert_eq(r.r[i].start_s, 50.0 * i);
        cr_assert(REL(r.r[i].co2_g, 8000 / 3.6e6 * 100));   /* all in 00:00-00:30 */
        sum += r.r[i].co2_g;
    }
    cr_assert(REL(tot.co2_g, sum));
    /* The energy objective's numbers are exactly those without what-ifs. */
    fixture_runs r0;
    simulate(NULL, &r0, &plain);
    cr_assert_eq(plain.cost, tot.cost);
    cr_assert_eq(plain.energy_j, tot.energy_j);
    cr_assert_eq(plain.co2_g, 0.0);

    /* Objective carbon: cost = eta * g * k + (1 - eta) * 200 * T with
     * k = 3.6e6 / mean; mean 700/3, every run at 100 g/kWh. */
    w.objective = WS_OBJ_CARBON;
    w.k = 3.6e6 / ws_series_mean(&w.carbon);
    simulate(&w, &r, &tot);
    for (int i = 0; i < r.n; i++)
        cr_assert(REL(r.r[i].cost, 0.5 * 8000 * 100 / (700.0 / 3) + 0.5 * 200 * 50));
    ws_series_free(&w.carbon);
}

/* The carbon PLO on b0 32 (eta 0.5, maxPL 200): epoch cost at weight w =
 * I / mean I is 540 w + 1200 at 100 W and 800 w + 1000 at 200 W, so it
 * picks 100 W while w > 200/260 and 200 W below; I is the forecast's mean
 * over the run (n epochs: 12 n s at 100 W, 10 n s at 200 W), mean I that
 * of the rates at the recurrences' starts. Intensity 400 for the first
 * minute, 100 after:
 *  run 1 at 0 s, n = 1 (no run seen): I = 400 over 12 s and 10 s, w = 1:
 *    100 W (profiled, 59 s, 5 epochs);
 *  run 2 at 59 s, mean 400, n = 5: over [59, 119] I = (400 + 59 x 100)/60
 *    = 105, w = 0.2625: 1341.75 at 100 W; over [59, 109] I = 106,
 *    w = 0.265: 1212 at 200 W: 200 W (50 s). The rule before the
 *    forecast (the rate at the start, w = 1) kept 100 W here;
 *  run 3 at 109 s: mean 300, w = 1/3: 200 W; run 4 at 159 s: mean 250,
 *    w = 0.4: 200 W. */
Test(whatif, carbon_plo_follows_the_intensity_each_recurrence, .init = mk,
     .fini = tmpdir_remove)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_whatif w = {0};
    load(&w.carbon, "timestamp,duration,value\n2022-10-20T00:00:00Z,1,400\n"
                    "2022-10-20T00:01:00Z,60,100\n", WS_SERIES_CARBON);
    w.has_carbon = 1;
    w.start = w.carbon.start;
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    for (int with = 1; with >= 0; with--) {
        ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
        ws_plo *p = ws_plo_new(fixture_plo(reg, "carbon"), NULL, 1, &err);
        cr_assert(b && p, "%s", err.msg);
        ws_sim_params sp = {.recurrences = 4, .seed = 1};
        fixture_runs r = {0};
        ws_sim_totals tot;
        cr_assert_eq(ws_simulate_whatif(&jt.job, b, p, &sp, with ? &w : NULL, fixture_keep, &r,
                                        &tot, &err), 0, "%s", err.msg);
        cr_assert_eq(r.n, 4);
        int want[2][4] = {{100, 100, 100, 100}, {100, 200, 200, 200}};
        for (int i = 0; i < 4; i++)
            cr_assert_eq(r.r[i].pl, want[with][i], "%s series, run %d: %d W",
                         with ? "with" : "without", i + 1, r.r[i].pl);
        if (with) {
            cr_assert_eq(r.r[1].start_s, 59.0);
            cr_assert_eq(r.r[2].start_s, 109.0);
            cr_assert(REL(r.r[2].co2_g, 5 * 1600 / 3.6e6 * 100));
        }
        ws_bso_free(b);
        ws_plo_free(p);
    }
    ws_registry_free(reg);
    ws_series_free(&w.carbon);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* The same carbon PLO in a group replay (ws_group_simulate with an
 * environment): intensity 400 for ten minutes, 100 after; four
 * submissions that never overlap, at trace times 1000, 1120, 1700 and
 * 1900, with t0 = 1000 the series' start. They start at series times 0,
 * 120, 700 and 900 s: intensities 400, 400, 100, 100, so the PLO's weights
 * are 1, 1, 100/300 and 100/250 and it picks 100, 100, 200, 200 W (as in
 * the engine test above); without the environment it sees NAN and stays
 * at 100 W. Each run (at most 60 s) is charged its energy at its start's
 * intensity. An objective other than energy is refused. */
Test(whatif, carbon_plo_sees_the_intensity_in_a_group_replay, .init = mk,
     .fini = tmpdir_remove)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_whatif w = {0};
    load(&w.carbon, "timestamp,duration,value\n2022-10-20T00:00:00Z,10,400\n"
                    "2022-10-20T00:10:00Z,60,100\n", WS_SERIES_CARBON);
    w.has_carbon = 1;
    w.start = w.carbon.start;
    ws_group_row rows[4] = {{1000, 1010, 1, 2}, {1120, 1130, 1, 3}, {1700, 1710, 1, 4},
                            {1900, 1910, 1, 5}};
    ws_group g = {"g", NULL, rows, 4};
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    for (int with = 1; with >= 0; with--) {
        ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
        ws_plo *p = ws_plo_new(fixture_plo(reg, "carbon"), NULL, 1, &err);
        cr_assert(b && p, "%s", err.msg);
        grecs r = {0};
        ws_group_totals tot;
        ws_group_env env = {with ? &w : NULL, 1000};
        cr_assert_eq(ws_group_simulate(&jt.job, b, p, &g, 1, &env, keep_group, &r, &tot,
                                       &err), 0, "%s", err.msg);
        cr_assert_eq(r.n, 4);
        const int want[2][4] = {{100, 100, 100, 100}, {100, 100, 200, 200}};
        const double rate[4] = {400, 400, 100, 100}, start[4] = {0, 120, 700, 900};
        double co2 = 0;
        for (int i = 0; i < 4; i++) {
            const ws_run_record *x = &r.r[i].run;
            cr_assert_eq(x->pl, want[with][i], "%s series, run %d: %d W",
                         with ? "with" : "without", i + 1, x->pl);
            cr_assert(x->reached);
            cr_assert_eq(x->start_s, with ? start[i] : 0.0);
            cr_assert(REL(x->co2_g, with ? x->energy_j / 3.6e6 * rate[i] : 0.0),
                      "run %d: %g g", i + 1, x->co2_g);
            co2 += x->co2_g;
        }
        if (with) cr_assert(REL(r.r[2].run.co2_g, 8000 / 3.6e6 * 100));
        cr_assert(REL(tot.co2_g, co2));
        cr_assert_eq(tot.usd, 0.0);
        cr_assert_eq(tot.wrapped, 0);
        ws_bso_free(b);
        ws_plo_free(p);
    }
    w.objective = WS_OBJ_CARBON;
    ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
    ws_plo *p = ws_plo_new(fixture_plo(reg, "carbon"), NULL, 1, &err);
    ws_group_env env = {&w, 1000};
    ws_group_totals tot;
    cr_assert_eq(ws_group_simulate(&jt.job, b, p, &g, 1, &env, NULL, NULL, &tot, &err), -1);
    cr_assert_str_eq(err.msg, "group replay weighs energy only: objective carbon is not"
                     " supported");
    ws_bso_free(b);
    ws_plo_free(p);
    ws_registry_free(reg);
    ws_series_free(&w.carbon);
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* ------------------------------------------------------------ the CLI */

#include "run_cli.h"

/* simulate --carbon on the fixture: default:default runs 32@200 (8000 J,
 * 50 s) back to back inside the first interval (100 g/kWh). */
Test(whatif, simulate_reports_grams_next_to_energy, .init = mk, .fini = tmpdir_remove)
{
    const char *dir = fixture_dir();
    const char *carbon = write_tmp("c.csv", THREE);
    const char *argv[] = {"wattsim", "simulate", "--traces", dir, "--gpu", "g1", "--job",
                          "d/n/o", "--target", "0.5", "--max-epochs", "10", "--b0", "32",
                          "--bso", "default", "--plo", "default", "--recurrences", "3",
                          "--carbon", carbon, "--price", "0.25", "--format", "json", NULL};
    cli_result r = cli_run(argv);
    fixture_rmdir(dir);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *g = strstr(r.out, "\"co2_g\": "), *u = strstr(r.out, "\"usd\": ");
    cr_assert(g && u, "%s", r.out);
    cr_assert(REL(strtod(g + 9, NULL), 3 * 8000 / 3.6e6 * 100), "%s", g);
    cr_assert(REL(strtod(u + 7, NULL), 3 * 8000 / 3.6e6 * 0.25), "%s", u);
    cr_assert(strstr(r.out, "\"wrapped_runs\": 0"), "%s", r.out);
    cr_assert(strstr(r.out, "\"whatif\": \"carbon "), "%s", r.out);
    cr_assert_str_eq(r.err, "");
    cli_free(&r);
}

/* A sweep's journal belongs to its what-ifs: resuming a crashed sweep with
 * another cap (per GPU or per job), stall, input rate, series, objective
 * or schedule is refused naming the option, and with the same what-ifs it
 * resumes. */
Test(whatif, sweep_fingerprint_covers_the_whatifs, .init = mk, .fini = tmpdir_remove,
     .timeout = 120)
{
    char text[1024];
    snprintf(text, sizeof text,
             "gpu: v100\nworkload: squad\nseed: 1..2\nrecurrences: 10\n"
             "bso: {name: %s/crash.so, params: {how: segv}}\nplo: jit\n", WS_TEST_PLUGIN_DIR);
    write_tmp("c.yaml", text);
    const char *carbon = WS_SOURCE_DIR "/traces/fetched/carbon/miso_mason_city_2022-10.csv";
#define SWEEP WS_BUILD_DIR "/sim/wattsim sweep %s/c.yaml --policies zeus:jit," \
    WS_TEST_PLUGIN_DIR "/crash.so:jit --threads 1 --no-plot --out %s/s" \
    " --traces " WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23 --catalogue " \
    WS_SOURCE_DIR "/configs/workloads.yaml"
    int st = run_shell("ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0\" "
                       SWEEP " --power-cap 250 --carbon %s >/dev/null 2>&1", tmp, tmp, carbon);
    cr_assert(st != 0 && st != 2, "the sweep should have crashed (status %d)", st);
    const char *other[] = {"--power-cap 200 --carbon %s", "--power-cap 250",
                           "--power-cap 250 --carbon %s --start 2022-10-21T00:00:00Z",
                           "--power-cap 250 --carbon %s --objective carbon",
                           "--power-cap 250 --carbon %s --input-stall 0.1 --idle-power 50",
                           /* v100's limits above 200 W go */
                           "--power-cap 250 --carbon %s --job-power-cap 200",
                           /* 1e5 samples at 10/s: every epoch waits for input */
                           "--power-cap 250 --carbon %s --input-rate 10"
                           " --samples-per-epoch 100000 --idle-power 50",
                           "--power-cap 250 --carbon %s --every 24h",
                           "--power-cap 250 --carbon %s --every 24h --defer-up-to 2h"};
    /* each refusal names what changed */
    const char *named[] = {"cannot resume: the what-if transforms (--power-cap,",
                           "cannot resume: the carbon series (--carbon) changed",
                           "cannot resume: the start (--start) changed",
                           "cannot resume: the objective (--objective) changed (energy in the"
                           " journal; carbon now)",
                           "cannot resume: the what-if transforms (--power-cap,",
                           "cannot resume: the what-if transforms (--power-cap,",
                           "cannot resume: the what-if transforms (--power-cap,",
                           "cannot resume: the schedule (--every, --defer-up-to) changed",
                           "cannot resume: the schedule (--every, --defer-up-to) changed"};
    _Static_assert(sizeof named == sizeof other, "a message for each change");
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        char opts[512], cmd[2048];
        snprintf(opts, sizeof opts, other[i], carbon);
        snprintf(cmd, sizeof cmd, SWEEP " %s --resume >/dev/null 2>%s/e.txt", tmp, tmp, opts,
                 tmp);
        cr_expect_eq(run_shell("%s", cmd), 2, "%s", other[i]);
        snprintf(cmd, sizeof cmd, "grep -qF -e '%s' %s/e.txt", named[i], tmp);
        cr_expect_eq(run_shell("%s", cmd), 0, "%s", other[i]);
    }
    st = run_shell(SWEEP " --power-cap 250 --carbon %s --resume --isolate >%s/o.txt 2>/dev/null",
                   tmp, tmp, carbon, tmp);
    cr_expect_eq(st, 1, "resumed; the crash cell failed");
    cr_expect_eq(run_shell("grep -q 'from the journal' %s/o.txt", tmp), 0);
    /* Grams from the journal's records equal grams computed afresh. */
    char fresh[600];
    snprintf(fresh, sizeof fresh, "%s/f", tmp);
    st = run_shell(WS_BUILD_DIR "/sim/wattsim sweep %s/c.yaml --policies zeus:jit," WS_TEST_PLUGIN_DIR
                   "/crash.so:jit --isolate --no-plot --out %s --traces " WS_SOURCE_DIR
                   "/traces/fetched/zeus-nsdi23 --catalogue " WS_SOURCE_DIR
                   "/configs/workloads.yaml --power-cap 250 --carbon %s >/dev/null 2>&1",
                   tmp, fresh, carbon);
    cr_expect_eq(st, 1);
    cr_expect_eq(run_shell("grep -q co2_g %s/s/sweep.csv && cmp -s %s/s/sweep.csv %s/sweep.csv",
                           tmp, tmp, fresh), 0, "resumed and fresh sweep.csv differ");
#undef SWEEP
}

/* A rate of 0 (an hour of all-renewable power) makes the carbon cost of a
 * run 0 at eta = 1: the early-stopping budget must not divide by it or
 * stop every later run; each run still trains its 5 epochs. */
Test(whatif, zero_intensity_does_not_break_early_stopping, .init = mk, .fini = tmpdir_remove)
{
    ws_whatif w = {0};
    load(&w.carbon, "timestamp,duration,value\n2022-10-20T00:00:00Z,60,0\n"
                    "2022-10-20T01:00:00Z,60,100\n", WS_SERIES_CARBON);
    w.has_carbon = 1;
    w.start = w.carbon.start;
    w.objective = WS_OBJ_CARBON;
    w.k = 3.6e6 / ws_series_mean(&w.carbon);
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 1.0, 2.0);
    ws_registry *reg = ws_registry_new();
    ws_error err = {{0}};
    ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
    ws_plo *p = ws_plo_new(fixture_plo(reg, "default"), NULL, 1, &err);
    ws_sim_params sp = {.recurrences = 4, .seed = 1};
    fixture_runs r = {0};
    ws_sim_totals tot;
    cr_assert_eq(ws_simulate_whatif(&jt.job, b, p, &sp, &w, fixture_keep, &r, &tot, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(r.n, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(r.r[i].epochs, 5);
        cr_assert_eq(r.r[i].cost, 0.0);
        cr_assert_eq(r.r[i].co2_g, 0.0);
    }
    cr_assert_eq(tot.skipped, 0);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    ws_series_free(&w.carbon);
}

/* Simulate n recurrences of bso+plo at (eta, beta 2) with what-ifs w. */
static int simulate_pair(const ws_whatif *w, double eta, const char *bso, const char *plo,
                         long n, fixture_runs *out, ws_sim_totals *tot, ws_error *err)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, eta, 2.0);
    ws_registry *reg = ws_registry_new();
    const ws_bso_type *bt = fixture_bso(reg, bso);
    const ws_plo_type *pt = fixture_plo(reg, plo);
    ws_value *bv = NULL, *pv = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso", &bv, err), 0, "%s", err->msg);
    cr_assert_eq(ws_params_resolve(pt->params, NULL, 0, "plo", &pv, err), 0, "%s", err->msg);
    ws_bso *b = ws_bso_new(bt, bv, 1, err);
    ws_plo *p = ws_plo_new(pt, pv, 1, err);
    cr_assert(b && p, "%s", err->msg);
    ws_sim_params sp = {.recurrences = n, .seed = 1};
    memset(out, 0, sizeof *out);
    int rc = ws_simulate_whatif(&jt.job, b, p, &sp, w, fixture_keep, out, tot, err);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_params_free(bt->params, bv);
    ws_params_free(pt->params, pv);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    return rc;
}

/* The early-stopping budget compares like with like: at eta 1 the default
 * knob (32 @ 200 W, 5 epochs of 10 s at 160 W: 8000 J, 50 s) costs
 * 8000 * 10 / mean in the clean first minute (mean (10 * 60 + 1000 * 3600)
 * / 3660 = 983.6 g/kWh): 81.3. A budget in that cost, 2 * 81.3, buys
 * floor(162.7 / (1600 * 1000 / 983.6)) = 0 epochs from 100 s on, when
 * the intensity is 1000: every try was skipped and recurrence 3 failed
 * after 20 tries. In the time-invariant cost the budget is 2 * 8000 /
 * 1600 = 10 epochs at any hour: every run trains its 5 epochs, as under
 * the energy objective. */
Test(whatif, a_dirty_hour_does_not_starve_the_budget_set_in_a_clean_one, .init = mk,
     .fini = tmpdir_remove)
{
    ws_whatif w = {0};
    load(&w.carbon, "timestamp,duration,value\n2022-10-20T00:00:00Z,1,10\n"
                    "2022-10-20T00:01:00Z,60,1000\n", WS_SERIES_CARBON);
    w.has_carbon = 1;
    w.start = w.carbon.start;
    w.objective = WS_OBJ_CARBON;
    w.k = 3.6e6 / ws_series_mean(&w.carbon);
    fixture_runs r, e;
    ws_sim_totals tot, te;
    ws_error err = {{0}};
    cr_assert_eq(simulate_pair(&w, 1.0, "default", "default", 6, &r, &tot, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(tot.skipped, 0);
    cr_assert_eq(r.n, 6);
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(r.r[i].epochs, 5);
        cr_assert_eq(r.r[i].energy_j, 8000.0);
        cr_assert_eq(r.r[i].start_s, 50.0 * i);
    }
    /* run 3 on, all at 1000 g/kWh: 8000 * 1000 / mean */
    cr_assert(REL(r.r[2].cost, 8000.0 * 1000.0 / (3600600.0 / 3660.0)));
    cr_assert_eq(simulate_pair(NULL, 1.0, "default", "default", 6, &e, &te, &err), 0);
    cr_assert_eq(te.energy_j, tot.energy_j);
    ws_series_free(&w.carbon);
}

/* A constant series gives the energy objective's histories run for run,
 * with a policy that learns from the costs it sees (zeus + jit), carbon
 * and price alike: same knobs, epochs, energy and time, costs equal to
 * rounding (G * k = E * c / 3.6e6 * 3.6e6 / c). */
Test(whatif, a_constant_series_gives_the_energy_objectives_histories, .init = mk,
     .fini = tmpdir_remove)
{
    for (int obj = WS_OBJ_CARBON; obj <= WS_OBJ_PRICE; obj++) {
        for (int q = 0; q < 3; q++) {
            const double eta = q == 0 ? 0.2 : q == 1 ? 0.5 : 0.9;
            ws_whatif w = {0};
            ws_series *s = obj == WS_OBJ_CARBON ? &w.carbon : &w.price;
            load(s, "timestamp,duration,value\n2022-10-20T00:00:00Z,600,0.37\n",
                 obj == WS_OBJ_CARBON ? WS_SERIES_CARBON : WS_SERIES_PRICE);
            w.has_carbon = obj == WS_OBJ_CARBON;
            w.has_price = obj == WS_OBJ_PRICE;
            w.start = s->start;
            w.objective = (ws_objective)obj;
            w.k = 3.6e6 / ws_series_mean(s);
            static fixture_runs r, e;
            ws_sim_totals tot, te;
            ws_error err = {{0}};
            cr_assert_eq(simulate_pair(&w, eta, "zeus", "jit", 40, &r, &tot, &err), 0, "%s",
                         err.msg);
            cr_assert_eq(simulate_pair(NULL, eta, "zeus", "jit", 40, &e, &te, &err), 0, "%s",
                         err.msg);
            cr_assert_eq(r.n, e.n, "eta %g: %d runs against %d", eta, r.n, e.n);
            for (int i = 0; i < r.n; i++) {
                cr_assert(r.r[i].recurrence == e.r[i].recurrence
                          && r.r[i].attempt == e.r[i].attempt && r.r[i].bs == e.r[i].bs
                          && r.r[i].pl == e.r[i].pl && r.r[i].epochs == e.r[i].epochs
                          && r.r[i].reached == e.r[i].reached
                          && r.r[i].energy_j == e.r[i].energy_j
                          && r.r[i].time_s == e.r[i].time_s, "eta %g, run %d differs", eta, i);
                cr_assert(fabs(r.r[i].cost - e.r[i].cost) <= 1e-12 * e.r[i].cost);
            }
            ws_series_free(s);
        }
    }
}

/* A day/night ("duck") carbon series, hourly over 30 days from 2022-10-01:
 * clean around noon (130 g/kWh at 12:00), dirty in the evening (700 at
 * 19:00). Written from first principles, not from a file of the project. */
static const char *duck_series(void)
{
    static const int duck[24] = {520, 510, 500, 495, 500, 520, 540, 480, 380, 280, 200, 150,
                                 130, 140, 180, 260, 380, 520, 650, 700, 680, 640, 590, 550};
    size_t cap = 24 * 30 * 48 + 64, n = 0;
    char *text = malloc(cap);
    cr_assert(text);
    n += (size_t)snprintf(text, cap, "timestamp,duration,value\n");
    for (int h = 0; h < 24 * 30; h++)
        n += (size_t)snprintf(text + n, cap - n, "2022-10-%02dT%02d:00:00Z,60,%d\n",
                              1 + h / 24, h % 24, duck[h % 24]);
    const char *path = write_tmp("duck.csv", text);
    free(text);
    return path;
}

static const char *json_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    cr_assert(p, "no %s in %s", key, s);
    return p + strlen(key);
}

/* The measured failure: plan --objective carbon at eta 0.8 from a noon
 * start, 100 recurrences, stopped with "default+default seed 1: ...
 * recurrence 30 did not reach the target metric in 20 tries" (the budget
 * set at noon starved the evening). With the invariant budget it plans,
 * every 7 h (so runs meet every hour of the day), and pareto ranks the
 * knobs as plan does. */
Test(whatif, carbon_plan_survives_a_day_night_series, .init = mk, .fini = tmpdir_remove,
     .timeout = 120)
{
    const char *duck = duck_series();
    const char *plan[] = {"wattsim", "plan", "--workload", "cifar100", "--eta", "0.8",
                          "--carbon", duck, "--start", "2022-10-01T12:00:00Z",
                          "--objective", "carbon", "--every", "7h", "--recurrences", "100",
                          "--seeds", "3",
                          "--policies", "zeus:jit", "--format", "json", "--traces",
                          WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23", NULL};
    cli_result r = cli_run(plan);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* exit 0 alone is not enough: a policy failing on some seeds is
     * reported and the plan goes on; none may fail because of the series */
    cr_assert(strstr(r.out, "\"seeds\": 3, \"seeds_never\": ")
              && strstr(r.out, "\"seeds_failed\": 0")
              && !strstr(r.out, "\"seeds_failed\": 1")
              && !strstr(r.out, "\"seeds_failed\": 2"), "%s", r.out);
    int bs = 0, pl = 0;
    cr_assert_eq(sscanf(json_after(r.out, "\"recommended\": "), "{\"bs\": %d, \"pl\": %d",
                        &bs, &pl), 2, "%s", r.out);
    const char *par[] = {"wattsim", "pareto", "--workload", "cifar100", "--eta", "0.8",
                         "--carbon", duck, "--start", "2022-10-01T12:00:00Z",
                         "--objective", "carbon", "--every", "7h", "--recurrences", "100",
                         "--format", "csv",
                         "--traces", WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23", NULL};
    cli_result q = cli_run(par);
    cr_assert_eq(q.status, 0, "%s", q.err);
    /* bs,pl,runs,reached,epochs,tta_s,eta_j,cost,frontier,default,best,... */
    int found = 0;
    for (const char *line = strchr(q.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int b, p, f, d, best;
        char rest[64];
        if (sscanf(line + 1, "%d,%d,%*d,%*d,%*[^,],%*[^,],%*[^,],%*[^,],%d,%d,%d,%63s", &b, &p,
                   &f, &d, &best, rest) == 6 && best) {
            cr_assert(b == bs && p == pl, "pareto best %d@%d, plan %d@%d", b, p, bs, pl);
            found++;
        }
    }
    cr_assert_eq(found, 1, "%s", q.out);
    cli_free(&r);
    cli_free(&q);
}

/* An Electricity Maps history (Zeus's carbon monitor stores the API's
 * JSON as is): each entry lasts until the next, the last as long as the
 * one before. 100, 200, 400 g/kWh at 06:00, 07:00, 08:00: an hour each,
 * mean 700 / 3, and a window over 07:30-08:30 integrates 200 * 1800 +
 * 400 * 1800. */
Test(whatif, electricity_maps_history_json_is_a_carbon_series, .init = mk,
     .fini = tmpdir_remove)
{
    ws_series s;
    load(&s, "{\"zone\":\"US-MIDW-MISO\",\"history\":[\n"
             "{\"zone\":\"US-MIDW-MISO\",\"carbonIntensity\":100,\"datetime\":"
             "\"2024-11-30T06:00:00.000Z\",\"isEstimated\":true,\"estimationMethod\":null},\n"
             "{\"zone\":\"US-MIDW-MISO\",\"carbonIntensity\":200,\"datetime\":"
             "\"2024-11-30T07:00:00.000Z\",\"isEstimated\":false},\n"
             "{\"zone\":\"US-MIDW-MISO\",\"carbonIntensity\":400,\"datetime\":"
             "\"2024-11-30T08:00:00.000Z\"}]}\n", WS_SERIES_CARBON);
    double t0;
    cr_assert_eq(ws_parse_time("2024-11-30T06:00:00Z", &t0), 0);
    cr_assert_eq(s.n, 3);
    cr_assert_eq(s.start, t0);
    cr_assert_eq(s.end, t0 + 3 * 3600);
    cr_assert(REL(ws_series_mean(&s), 700.0 / 3));
    cr_assert(REL(ws_series_integral(&s, t0 + 5400, 3600, NULL), 200 * 1800.0 + 400 * 1800.0));
    ws_series_free(&s);
}

/* An OpenEI tariff as Zeus's price monitor reads it. Period p of the
 * structure has rate (p + 1) / 1000 $/kWh; the weekday schedule gives
 * hour h of month m period 2 * (24 m + h), the weekend one that plus 1,
 * so every hour names its own month, hour and day type. */
static const char *tariff_json(void)
{
    size_t cap = 200000, n = 0;
    char *t = malloc(cap);
    cr_assert(t);
    n += (size_t)snprintf(t + n, cap - n, "{\"items\": [{\"label\": \"other\","
                          " \"energyratestructure\": [[{\"rate\": 9}]],"
                          " \"energyweekdayschedule\": [");
    for (int m = 0; m < 12; m++)
        n += (size_t)snprintf(t + n, cap - n, "%s[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
                              "0,0,0,0]", m ? "," : "");
    n += (size_t)snprintf(t + n, cap - n, "], \"energyweekendschedule\": [");
    for (int m = 0; m < 12; m++)
        n += (size_t)snprintf(t + n, cap - n, "%s[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
                              "0,0,0,0]", m ? "," : "");
    n += (size_t)snprintf(t + n, cap - n, "]},\n {\"label\": \"tou\", \"energyratestructure\": [");
    for (int p = 0; p < 576; p++)
        n += (size_t)snprintf(t + n, cap - n, "%s[{\"rate\": %d.%03d, \"adj\": 0.5,"
                              " \"unit\": \"kWh\"}]", p ? "," : "", (p + 1) / 1000,
                              (p + 1) % 1000);
    for (int we = 0; we < 2; we++) {
        n += (size_t)snprintf(t + n, cap - n, "], \"%s\": [",
                              we ? "energyweekendschedule" : "energyweekdayschedule");
        for (int m = 0; m < 12; m++) {
            n += (size_t)snprintf(t + n, cap - n, "%s[", m ? "," : "");
            for (int h = 0; h < 24; h++)
                n += (size_t)snprintf(t + n, cap - n, "%s%d", h ? "," : "",
                                      2 * (24 * m + h) + we);
            n += (size_t)snprintf(t + n, cap - n, "]");
        }
    }
    n += (size_t)snprintf(t + n, cap - n, "]}]}\n");
    const char *path = write_tmp("tariff.json", t);
    free(t);
    return path;
}

static double tou(int month, int hour, int weekend)
{
    return (2 * (24 * (month - 1) + hour) + weekend + 1) / 1000.0;
}

static double at(const ws_series *s, const char *iso)
{
    double t;
    cr_assert_eq(ws_parse_time(iso, &t), 0);
    return ws_series_at(s, t);
}

Test(whatif, openei_tariff_becomes_an_hourly_series, .init = mk, .fini = tmpdir_remove)
{
    const char *path = tariff_json();
    ws_error err = {{0}};
    ws_series s;
    double start;
    /* UTC (Zeus's default). Friday 2024-11-29 22:30Z: the series starts at
     * the hour, 22:00, and runs 53 weeks of hours. */
    cr_assert_eq(ws_parse_time("2024-11-29T22:30:00Z", &start), 0);
    ws_tariff tf = {start, NULL, "tou", 0, WS_BASIS_LIFECYCLE};
    cr_assert_eq(ws_series_load_json(&s, path, WS_SERIES_PRICE, &tf, NULL, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(s.start, start - 1800);
    cr_assert_eq(s.n, 371 * 24);
    cr_assert_eq(s.end - s.start, 371 * 86400.0);
    cr_assert_eq(at(&s, "2024-11-29T22:59:59Z"), tou(11, 22, 0), "Friday: a weekday");
    cr_assert_eq(at(&s, "2024-11-30T05:10:00Z"), tou(11, 5, 1), "Saturday");
    cr_assert_eq(at(&s, "2024-12-01T23:00:00Z"), tou(12, 23, 1), "Sunday, December");
    cr_assert_eq(at(&s, "2024-12-02T00:00:00Z"), tou(12, 0, 0), "Monday");
    cr_assert_eq(at(&s, "2025-02-28T13:00:00Z"), tou(2, 13, 0));
    /* An hour over two rates integrates both: 12:30-13:30 on a Monday. */
    double a;
    cr_assert_eq(ws_parse_time("2024-12-02T12:30:00Z", &a), 0);
    cr_assert(REL(ws_series_integral(&s, a, 3600, NULL),
                  1800 * tou(12, 12, 0) + 1800 * tou(12, 13, 0)));
    ws_series_free(&s);

    /* A fixed offset: at 2024-11-30T04:30Z it is Friday 23:30 at -05:00. */
    tf.tz = "-05:00";
    cr_assert_eq(ws_series_load_json(&s, path, WS_SERIES_PRICE, &tf, NULL, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(at(&s, "2024-11-30T04:30:00Z"), tou(11, 23, 0));
    cr_assert_eq(at(&s, "2024-11-30T05:00:00Z"), tou(11, 0, 1));
    ws_series_free(&s);

    /* An IANA zone, across the end of daylight saving time in New York
     * (2024-11-03 06:00Z): 12:00Z is 08:00 EDT on Saturday the 2nd and
     * 07:00 EST on Monday the 4th. */
    cr_assert_eq(ws_parse_time("2024-11-01T00:00:00Z", &tf.start), 0);
    tf.tz = "America/New_York";
    cr_assert_eq(ws_series_load_json(&s, path, WS_SERIES_PRICE, &tf, NULL, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(at(&s, "2024-11-02T12:00:00Z"), tou(11, 8, 1));
    cr_assert_eq(at(&s, "2024-11-04T12:00:00Z"), tou(11, 7, 0));
    cr_assert_eq(at(&s, "2024-11-01T03:59:00Z"), tou(10, 23, 0), "Thursday October 31st");
    ws_series_free(&s);
}

/* plan --objective price on an OpenEI time-of-use tariff (peak 0.31 $/kWh
 * from 12:00 to 20:00 on weekdays, 0.07 otherwise) with the default beta:
 * the budget no longer starves the peak hours. */
Test(whatif, price_plan_survives_an_openei_tariff, .init = mk, .fini = tmpdir_remove,
     .timeout = 120)
{
    size_t cap = 8192, n = 0;
    char text[8192];
    n += (size_t)snprintf(text + n, cap - n, "{\"items\": [{\"label\": \"tou\","
                          " \"energyratestructure\": [[{\"rate\": 0.07}], [{\"rate\": 0.31}]]");
    for (int we = 0; we < 2; we++) {
        n += (size_t)snprintf(text + n, cap - n, ", \"%s\": [",
                              we ? "energyweekendschedule" : "energyweekdayschedule");
        for (int m = 0; m < 12; m++) {
            n += (size_t)snprintf(text + n, cap - n, "%s[", m ? "," : "");
            for (int h = 0; h < 24; h++)
                n += (size_t)snprintf(text + n, cap - n, "%s%d", h ? "," : "",
                                      !we && h >= 12 && h < 20);
            n += (size_t)snprintf(text + n, cap - n, "]");
        }
        n += (size_t)snprintf(text + n, cap - n, "]");
    }
    snprintf(text + n, cap - n, "}]}\n");
    const char *path = write_tmp("tou.json", text);
    const char *plan[] = {"wattsim", "plan", "--workload", "cifar100", "--eta", "0.8",
                          "--price", path, "--start", "2022-10-03T12:00:00Z",
                          "--objective", "price", "--every", "7h", "--recurrences", "100",
                          "--seeds", "3",
                          "--policies", "zeus:jit", "--traces",
                          WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23", NULL};
    cli_result r = cli_run(plan);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "what-if: price "), "%s", r.out);
    /* exit 0 alone is not enough: a policy failing on some seeds is
     * reported and the plan goes on; here none may fail (all 3 counted) */
    cr_assert_null(strstr(r.out, "failed on"), "%s", r.out);
    const char *row = strstr(r.out, "\n  zeus+jit ");
    cr_assert(row, "%s", r.out);
    const char *eol = strchr(row + 1, '\n'), *of3 = strstr(row, "/3 ");
    cr_assert(of3 && eol && of3 < eol, "%s", r.out);
    cli_free(&r);
}

/* --every and --defer-up-to against a brute force written here: the
 * default knob (32 @ 200 W: 50 s, 8000 J at 160 W) every 5 min, each
 * allowed to wait up to 150 s, on a series of ten 1-min intervals (it
 * wraps after 10 min). All boundaries and the run length are whole
 * seconds, so the integral of the rate over [s, s + 50] is linear in s
 * between whole seconds and its least over the window is at a whole
 * second: the least over s = due .. due + 150 of sum_{x = s}^{s + 49}
 * v[(x / 60) mod 10], the earliest on a tie. */
Test(whatif, defer_up_to_starts_each_run_at_the_least_integral, .init = mk,
     .fini = tmpdir_remove)
{
    static const int v[10] = {500, 100, 300, 50, 400, 60, 700, 20, 900, 800};
    char text[1024];
    size_t n = (size_t)snprintf(text, sizeof text, "timestamp,duration,value\n");
    for (int i = 0; i < 10; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "2022-10-20T00:%02d:00Z,1,%d\n", i,
                              v[i]);
    for (int defer = 0; defer <= 1; defer++) {
        ws_whatif w = {0};
        load(&w.carbon, text, WS_SERIES_CARBON);
        w.has_carbon = 1;
        w.start = w.carbon.start;
        w.every = 300;
        w.defer = defer ? 150 : 0;
        w.defer_series = &w.carbon;
        fixture_runs r;
        ws_sim_totals tot;
        ws_error err = {{0}};
        cr_assert_eq(simulate_pair(&w, 0.5, "default", "default", 4, &r, &tot, &err), 0, "%s",
                     err.msg);
        cr_assert_eq(r.n, 4);
        double waited = 0;
        for (int k = 0; k < 4; k++) {
            const long due = 300L * k;
            long best = due, least = -1;
            for (long s = due; s <= due + (defer ? 150 : 0); s++) {
                long sum = 0;
                for (long x = s; x < s + 50; x++) sum += v[(x / 60) % 10];
                if (least < 0 || sum < least) {
                    least = sum;
                    best = s;
                }
            }
            cr_assert_eq(r.r[k].start_s, (double)best, "recurrence %d: starts at %g, not %ld",
                         k + 1, r.r[k].start_s, best);
            /* grams: 8000 J at the window's mean rate (g/kWh) */
            cr_assert(REL(r.r[k].co2_g, 8000.0 * ((double)least / 50.0) / 3.6e6),
                      "recurrence %d: %g g", k + 1, r.r[k].co2_g);
            waited += (double)(best - due);
        }
        cr_assert_eq(tot.late, 0);
        cr_assert_eq(tot.waited_s, waited);
        if (defer) cr_assert_gt(waited, 0, "the series rewards waiting");
        ws_series_free(&w.carbon);
    }
}

/* A run longer than the period between recurrences starts late: every
 * 30 s, each run 50 s: recurrence k (from 0) starts at 50 k, late from
 * the second on. */
Test(whatif, every_counts_the_recurrences_that_start_late, .init = mk, .fini = tmpdir_remove)
{
    ws_whatif w = {0};
    load(&w.carbon, THREE, WS_SERIES_CARBON);
    w.has_carbon = 1;
    w.start = w.carbon.start;
    w.every = 30;
    fixture_runs r;
    ws_sim_totals tot;
    ws_error err = {{0}};
    cr_assert_eq(simulate_pair(&w, 0.5, "default", "default", 4, &r, &tot, &err), 0, "%s",
                 err.msg);
    for (int k = 0; k < 4; k++) cr_assert_eq(r.r[k].start_s, 50.0 * k);
    cr_assert_eq(tot.late, 3);
    w.every = 3600;
    cr_assert_eq(simulate_pair(&w, 0.5, "default", "default", 3, &r, &tot, &err), 0);
    for (int k = 0; k < 3; k++) cr_assert_eq(r.r[k].start_s, 3600.0 * k);
    cr_assert_eq(tot.late, 0);
    ws_series_free(&w.carbon);
}
