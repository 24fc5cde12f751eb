/*
 * Grid series as real tools write them (issues 26 and 28): Electricity
 * Maps CSV exports and API histories on either emission-factor basis,
 * intervals bounded at 366 days, several history files joined in time
 * order, and OpenEI tariffs' adj, tiers and demand charges. Fixtures are
 * written from the formats' documentation: the Electricity Maps data
 * portal's hourly CSV (Datetime (UTC), Country, Zone Name, Zone Id, Carbon
 * Intensity gCO₂eq/kWh (direct), ... (LCA), Low Carbon Percentage, ...),
 * the API's GET /v3/carbon-intensity/history ({"zone", "history": [{
 * "carbonIntensity", "datetime", "updatedAt", "createdAt",
 * "emissionFactorType", "isEstimated", "estimationMethod"}]}) and the
 * OpenEI U.S. Utility Rate Database's JSON (energyratestructure periods of
 * tiers {max, rate, adj, unit}, flatdemandstructure with flatdemandmonths,
 * demandratestructure with its weekday and weekend schedules).
 */
#include <math.h>

#include "fixture.h"
#include "tmpdir.h"
#include "wattsim/config.h"
#include "wattsim/config_opts.h"
#include "wattsim/pareto.h"
#include "wattsim/series.h"
#include "wattsim/whatif.h"

#define REL(a, b) (fabs((a) - (b)) <= 1e-12 * fmax(1.0, fabs(b)))

static void mk(void) { tmpdir_make("/tmp/wsgrid.XXXXXX"); }

TestSuite(grid, .init = mk, .fini = tmpdir_remove);

static const char *put(const char *name, const char *text)
{
    static char paths[8][256];
    static int k;
    char *p = paths[k++ % 8];
    snprintf(p, 256, "%s/%s", tmp, name);
    fixture_write(p, text);
    return p;
}

#define EM_HEADER "Datetime (UTC),Country,Zone Name,Zone Id,"                 \
    "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (direct),"                    \
    "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (LCA),"                       \
    "Low Carbon Percentage,Renewable Percentage,Data Source,Data Estimated,"  \
    "Data Estimation Method\n"

static double iso(const char *s)
{
    double t;
    cr_assert_eq(ws_parse_time(s, &t), 0, "%s", s);
    return t;
}

/* ------------------------------------------- interval bound (issue 26) */

Test(grid, an_export_interval_over_366_days_is_refused)
{
    ws_series s;
    ws_error err = {{0}};
    char want[512];
    /* 366 days exactly (2023-01-01 to 2024-01-02) is an interval */
    const char *p = put("ok.csv", EM_HEADER
        "2023-01-01 00:00:00,Germany,Germany,DE,335.2,395.34,55.51,48.09,entsoe.eu,false,\n"
        "2024-01-02 00:00:00,Germany,Germany,DE,301.0,360.00,57.00,50.00,entsoe.eu,false,\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(s.end - s.start, 2 * 366 * 86400.0);
    ws_series_free(&s);
    /* a 50-year gap would stretch one value across it */
    p = put("gap.csv", EM_HEADER
        "2000-01-01 00:00:00,Germany,Germany,DE,335.2,395.34,55.51,48.09,entsoe.eu,false,\n"
        "2050-01-01 00:00:00,Germany,Germany,DE,301.0,360.00,57.00,50.00,entsoe.eu,false,\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), -1);
    snprintf(want, sizeof want, "%s:3: time 2050-01-01 00:00:00 is more than 366 days after"
             " the previous row's: an interval lasts at most 366 days (a gap in the export?"
             " fill or cut it)", p);
    cr_assert_str_eq(err.msg, want);
    /* 367 days */
    p = put("gap2.csv", EM_HEADER
        "2023-01-01 00:00:00,Germany,Germany,DE,335.2,395.34,55.51,48.09,entsoe.eu,false,\n"
        "2024-01-03 00:00:00,Germany,Germany,DE,301.0,360.00,57.00,50.00,entsoe.eu,false,\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), -1);
}

#define HIST_ENTRY(ci, dt, basis)                                               \
    "{\"zone\":\"DE\",\"carbonIntensity\":" ci ",\"datetime\":\"" dt "\","      \
    "\"updatedAt\":\"2024-12-01T10:00:00.000Z\",\"createdAt\":"                 \
    "\"2024-11-28T10:00:00.000Z\"" basis ",\"isEstimated\":false,"              \
    "\"estimationMethod\":null}"
#define LCA ",\"emissionFactorType\":\"lifecycle\""
#define DIRECT ",\"emissionFactorType\":\"direct\""

Test(grid, a_history_interval_over_366_days_is_refused)
{
    ws_series s;
    ws_error err = {{0}};
    char want[512];
    const char *p = put("h.json", "{\"zone\":\"DE\",\"history\":["
        HIST_ENTRY("302", "1990-05-21T00:00:00.000Z", LCA) ","
        HIST_ENTRY("310", "2040-05-21T00:00:00.000Z", LCA) "]}\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), -1);
    snprintf(want, sizeof want, "%s: history[1].datetime: 2040-05-21T00:00:00.000Z is more"
             " than 366 days after the previous entry's: an interval lasts at most 366 days"
             " (a gap in the history: fill or cut it)", p);
    cr_assert_str_eq(err.msg, want);
}

/* ------------------------------------------------- basis (issue 28) */

Test(grid, the_export_is_read_on_the_chosen_basis)
{
    ws_series s;
    ws_error err = {{0}};
    const char *p = put("em.csv", EM_HEADER
        "2023-01-01 00:00:00,Germany,Germany,DE,300,350,55.51,48.09,entsoe.eu,false,\n"
        "2023-01-01 01:00:00,Germany,Germany,DE,500,550,57.00,50.00,entsoe.eu,true,TIME_SLICER_AVERAGE\n");
    cr_assert_eq(ws_series_load_basis(&s, p, WS_SERIES_CARBON, WS_BASIS_LIFECYCLE, NULL, &err),
                 0, "%s", err.msg);
    cr_assert_eq(s.value[0], 350.0);
    cr_assert_eq(s.value[1], 550.0);
    ws_series_free(&s);
    cr_assert_eq(ws_series_load_basis(&s, p, WS_SERIES_CARBON, WS_BASIS_DIRECT, NULL, &err), 0,
                 "%s", err.msg);
    cr_assert_eq(s.value[0], 300.0);
    cr_assert_eq(s.value[1], 500.0);
    ws_series_free(&s);
}

Test(grid, an_export_lacking_the_chosen_basis_is_refused_naming_it)
{
    ws_series s;
    ws_error err = {{0}};
    char want[512];
    const char *p = put("direct.csv", "Datetime (UTC),Country,Zone Name,Zone Id,"
        "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (direct)\n"
        "2023-01-01 00:00:00,Germany,Germany,DE,300\n"
        "2023-01-01 01:00:00,Germany,Germany,DE,500\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), -1);
    snprintf(want, sizeof want, "%s:1: no column 'Carbon intensity gCO\xe2\x82\x82" "eq/kWh"
             " (LCA)': this Electricity Maps export has the direct basis only; pass"
             " --carbon-basis direct, or export the lifecycle one", p);
    cr_assert_str_eq(err.msg, want);
    p = put("lca.csv", "Datetime (UTC),Carbon Intensity gCO\xe2\x82\x82" "eq/kWh (LCA)\n"
        "2023-01-01 00:00:00,350\n2023-01-01 01:00:00,550\n");
    cr_assert_eq(ws_series_load_basis(&s, p, WS_SERIES_CARBON, WS_BASIS_DIRECT, NULL, &err),
                 -1);
    cr_assert(strstr(err.msg, "has the lifecycle basis only; pass --carbon-basis lifecycle"),
              "%s", err.msg);
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), 0, "%s", err.msg);
    ws_series_free(&s);
}

Test(grid, a_history_is_read_on_its_emission_factor_type)
{
    ws_series s;
    ws_error err = {{0}};
    char want[512];
    /* Zeus's files: lifecycle, read by default, refused under direct */
    const char *p = put("zeus.json", "{\"zone\":\"DE\",\"history\":["
        HIST_ENTRY("302", "2024-11-30T06:00:00.000Z", LCA) ","
        HIST_ENTRY("310", "2024-11-30T07:00:00.000Z", LCA) "]}\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(s.value[1], 310.0);
    ws_series_free(&s);
    cr_assert_eq(ws_series_load_basis(&s, p, WS_SERIES_CARBON, WS_BASIS_DIRECT, NULL, &err),
                 -1);
    snprintf(want, sizeof want, "%s: history[0].emissionFactorType: \"lifecycle\", not the"
             " direct basis (--carbon-basis direct): pass --carbon-basis lifecycle, or fetch"
             " the history with emissionFactorType=direct", p);
    cr_assert_str_eq(err.msg, want);
    /* a direct history: the other way round */
    p = put("direct.json", "{\"zone\":\"DE\",\"history\":["
        HIST_ENTRY("250", "2024-11-30T06:00:00.000Z", DIRECT) ","
        HIST_ENTRY("260", "2024-11-30T07:00:00.000Z", DIRECT) "]}\n");
    cr_assert_eq(ws_series_load_basis(&s, p, WS_SERIES_CARBON, WS_BASIS_DIRECT, NULL, &err), 0,
                 "%s", err.msg);
    ws_series_free(&s);
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), -1);
    cr_assert(strstr(err.msg, "history[0].emissionFactorType: \"direct\", not the lifecycle"
                     " basis"), "%s", err.msg);
    /* no emissionFactorType: the API's default, lifecycle */
    p = put("old.json", "{\"zone\":\"DE\",\"history\":["
        HIST_ENTRY("302", "2024-11-30T06:00:00.000Z", "") ","
        HIST_ENTRY("310", "2024-11-30T07:00:00.000Z", "") "]}\n");
    cr_assert_eq(ws_series_load(&s, p, WS_SERIES_CARBON, NULL, &err), 0, "%s", err.msg);
    ws_series_free(&s);
    cr_assert_eq(ws_series_load_basis(&s, p, WS_SERIES_CARBON, WS_BASIS_DIRECT, NULL, &err),
                 -1);
    cr_assert(strstr(err.msg, "\"lifecycle\" (none given: the API's default), not the direct"),
              "%s", err.msg);
}

/* ------------------------------------------------ joined files (28) */

/* Zeus's carbon monitor stores a day of history per file: three days,
 * each 06:00 to 05:00 the next day in 1-hour entries (the last lasting
 * an hour like the one before), days 2 and 3 overlapping the day before
 * by two hours with the same values. Values: 100 + the hour since the
 * first day's 06:00. */
static const char *day_file(const char *name, int first_hour, int n, int bump_at, int gap)
{
    char *text = malloc(16384);
    cr_assert(text);
    size_t k = (size_t)snprintf(text, 16384, "{\"zone\":\"DE\",\"history\":[");
    for (int i = 0; i < n; i++) {
        int h = first_hour + i + gap;
        double t = iso("2024-11-30T06:00:00Z") + h * 3600.0;
        char dt[32];
        ws_format_time(t, dt, sizeof dt);
        k += (size_t)snprintf(text + k, 16384 - k, "%s{\"zone\":\"DE\",\"carbonIntensity\":%d,"
                              "\"datetime\":\"%s\",\"emissionFactorType\":\"lifecycle\"}",
                              i ? "," : "", 100 + h + (h == bump_at ? 7 : 0), dt);
    }
    snprintf(text + k, 16384 - k, "]}\n");
    const char *p = put(name, text);
    free(text);
    return p;
}

static int load_joined(ws_whatif *w, const char **files, size_t n, ws_error *err)
{
    ws_whatif_spec sp = {0};
    sp.price_value = NAN;
    sp.carbon = (char *)files[0];
    sp.carbon_more = (char **)(files + 1);
    sp.n_carbon_more = n - 1;
    return ws_whatif_load(w, &sp, NULL, err);
}

Test(grid, history_files_are_joined_in_time_order)
{
    const char *f[3];
    f[2] = day_file("d1.json", 0, 24, -1, 0);       /* 06:00 .. 05:00 (+1 h) */
    f[0] = day_file("d2.json", 22, 24, -1, 0);      /* overlaps 2 h */
    f[1] = day_file("d3.json", 44, 24, -1, 0);
    ws_whatif w;
    ws_error err = {{0}};
    cr_assert_eq(load_joined(&w, f, 3, &err), 0, "%s", err.msg);
    const double t0 = iso("2024-11-30T06:00:00Z");
    cr_assert_eq(w.carbon.start, t0);
    cr_assert_eq(w.carbon.end, t0 + 68 * 3600.0);
    cr_assert_eq(w.carbon.n, 68);
    for (size_t i = 0; i < 68; i++) {
        cr_assert_eq(w.carbon.t0[i], t0 + 3600.0 * (double)i);
        cr_assert_eq(w.carbon.value[i], 100.0 + (double)i);
    }
    /* mean of 100..167 */
    cr_assert(REL(ws_series_mean(&w.carbon), 133.5));
    cr_assert(strstr(w.carbon.path, "d1.json + "), "%s", w.carbon.path);
    ws_whatif_free(&w);
}

Test(grid, a_gap_between_files_is_refused_naming_both)
{
    const char *f[2] = {day_file("d1.json", 0, 24, -1, 0), day_file("d2.json", 24, 24, -1, 3)};
    ws_whatif w;
    ws_error err = {{0}};
    char want[768];
    cr_assert_eq(load_joined(&w, f, 2, &err), -1);
    snprintf(want, sizeof want, "--carbon: %s ends at 2024-12-01T06:00:00Z but %s starts at"
             " 2024-12-01T09:00:00Z: a gap of 3 h between the files; add the file that covers"
             " it (the joined series must be contiguous)", f[0], f[1]);
    cr_assert_str_eq(err.msg, want);
}

Test(grid, an_overlap_with_different_values_is_refused_naming_both)
{
    /* day 2 says 129 at hour 22 (2024-12-01T04:00Z); day 1 says 122 */
    const char *f[2] = {day_file("d1.json", 0, 24, -1, 0), day_file("d2.json", 22, 24, 22, 0)};
    ws_whatif w;
    ws_error err = {{0}};
    char want[768];
    cr_assert_eq(load_joined(&w, f, 2, &err), -1);
    snprintf(want, sizeof want, "--carbon: %s and %s overlap with different values at"
             " 2024-12-01T04:00:00Z (122 and 129): two histories of different zones or bases?"
             " give files that agree where they overlap", f[0], f[1]);
    cr_assert_str_eq(err.msg, want);
}

Test(grid, carbon_takes_a_list_and_a_repeated_option)
{
    ws_run_config cfg;
    ws_error err = {{0}};
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_set(&cfg, "carbon=[a.json, b.json, c.json]", &err), 0, "%s",
                 err.msg);
    cr_assert_str_eq(cfg.whatif.carbon, "a.json");
    cr_assert_eq(cfg.whatif.n_carbon_more, 2);
    cr_assert_str_eq(cfg.whatif.carbon_more[1], "c.json");
    /* --carbon replaces a config's series, then adds to its own */
    cr_assert_eq(ws_config_set_whatif(&cfg, "carbon", WS_WI_CARBON, "--carbon", "x.json", &err),
                 0, "%s", err.msg);
    cr_assert_str_eq(cfg.whatif.carbon, "x.json");
    cr_assert_eq(cfg.whatif.n_carbon_more, 0);
    cr_assert_eq(ws_config_set_whatif(&cfg, "carbon", WS_WI_CARBON, "--carbon", "y.json", &err),
                 0, "%s", err.msg);
    cr_assert_str_eq(cfg.whatif.carbon, "x.json");
    cr_assert_eq(cfg.whatif.n_carbon_more, 1);
    cr_assert_str_eq(cfg.whatif.carbon_more[0], "y.json");
    cr_assert_eq(ws_config_set_whatif(&cfg, "carbon_basis", WS_WI_CARBON_BASIS, "--carbon-basis",
                                      "direct", &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.whatif.carbon_basis, WS_BASIS_DIRECT);
    cr_assert_eq(ws_config_set_whatif(&cfg, "carbon_basis", WS_WI_CARBON_BASIS, "--carbon-basis",
                                      "LCA", &err), -1);
    cr_assert_str_eq(err.msg, "--carbon-basis must be lifecycle or direct, got \"LCA\"");
    ws_run_config_free(&cfg);
}

/* ------------------------------------------------------ OpenEI (28) */

static void months(char *t, size_t cap, size_t *k, const char *key, int period_from_hour)
{
    *k += (size_t)snprintf(t + *k, cap - *k, ", \"%s\": [", key);
    for (int m = 0; m < 12; m++) {
        *k += (size_t)snprintf(t + *k, cap - *k, "%s[", m ? "," : "");
        for (int h = 0; h < 24; h++)
            *k += (size_t)snprintf(t + *k, cap - *k, "%s%d", h ? "," : "",
                                   period_from_hour >= 0 && h >= period_from_hour ? 1 : 0);
        *k += (size_t)snprintf(t + *k, cap - *k, "]");
    }
    *k += (size_t)snprintf(t + *k, cap - *k, "]");
}

/* A ConEd SC-9-like tariff: one energy period of two tiers (0.10171 $/kWh
 * up to 500 kWh a month, then 0.12, both with adj 0.031), a flat demand
 * charge of 20.5 $/kW every month, and a time-of-use demand charge of
 * 12 $/kW from 08:00 on weekdays (0 otherwise). */
static const char *sc9(int demand)
{
    static char t[16384];
    size_t k = (size_t)snprintf(t, sizeof t, "{\"items\": [{\"label\": \"5cc9\", \"name\":"
        " \"SC-9 General Large\", \"uri\": \"https://apps.openei.org/IURDB/rate/view/5cc9\","
        " \"energyratestructure\": [[{\"max\": 500, \"rate\": 0.10171, \"adj\": 0.031, \"unit\":"
        " \"kWh\"}, {\"rate\": 0.12, \"adj\": 0.031, \"unit\": \"kWh\"}]]");
    months(t, sizeof t, &k, "energyweekdayschedule", -1);
    months(t, sizeof t, &k, "energyweekendschedule", -1);
    if (demand == 1) {
        k += (size_t)snprintf(t + k, sizeof t - k, ", \"flatdemandstructure\": [[{\"rate\":"
                              " 20.5, \"unit\": \"kW\"}]], \"flatdemandmonths\": [0,0,0,0,0,0,"
                              "0,0,0,0,0,0], \"flatdemandunit\": \"kW\", \"demandratestructure\":"
                              " [[{\"rate\": 0}], [{\"rate\": 12.0, \"adj\": 0.5}]]");
        months(t, sizeof t, &k, "demandweekdayschedule", 8);
        months(t, sizeof t, &k, "demandweekendschedule", -1);
    }
    if (demand == 2)         /* URDB's way of saying none */
        k += (size_t)snprintf(t + k, sizeof t - k, ", \"flatdemandstructure\": [],"
                              " \"demandratestructure\": []");
    snprintf(t + k, sizeof t - k, "}]}\n");
    return put(demand == 1 ? "sc9d.json" : demand ? "sc9e.json" : "sc9.json", t);
}

static int load_tariff(ws_whatif *w, const char *path, int adj, ws_error *err)
{
    ws_whatif_spec sp = {0};
    sp.price_value = NAN;
    sp.price = (char *)path;
    sp.start = (char *)"2024-01-31T20:00:00Z";
    sp.where[WS_WI_START] = (char *)"--start";
    sp.price_adjustments = adj;
    if (adj) sp.where[WS_WI_PRICE_ADJ] = (char *)"--price-adjustments";
    return ws_whatif_load(w, &sp, NULL, err);
}

Test(grid, an_ignored_adj_and_tiers_get_a_note_with_their_size)
{
    const char *p = sc9(0);
    ws_whatif w;
    ws_error err = {{0}};
    cr_assert_eq(load_tariff(&w, p, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(w.price.value[0], 0.10171, "adj ignored by default, as Zeus");
    char note[1024], want[1024];
    /* a job whose highest power is 2 kW: 500 kWh last 250 h a month */
    ws_whatif_tariff_note(&w, 2000, note, sizeof note);
    snprintf(want, sizeof want, "%s: adj 0.031 $/kWh on the rate 0.10171 of period 0 is"
             " ignored, as Zeus ignores it (the price is 23.4 %% low if it applies);"
             " --price-adjustments include adds it; %s: 1 period is tiered: only the first"
             " tier's rate is used (up to 500 kWh a month, 250 h at this job's peak of 2 kW;"
             " past it up to 0.12 $/kWh)", p, p);
    cr_assert_str_eq(note, want);
    ws_whatif_free(&w);
    /* included: rate + adj, and no adj note */
    cr_assert_eq(load_tariff(&w, p, 1, &err), 0, "%s", err.msg);
    cr_assert(REL(w.price.value[0], 0.10171 + 0.031));
    ws_whatif_tariff_note(&w, 2000, note, sizeof note);
    cr_assert(!strstr(note, "adj"), "%s", note);
    cr_assert(strstr(note, "past it up to 0.151 $/kWh"), "%s", note);
    ws_whatif_free(&w);
}

Test(grid, demand_charges_get_a_note_and_count_once_per_billing_month)
{
    const char *p = sc9(1);
    ws_whatif w;
    ws_error err = {{0}};
    cr_assert_eq(load_tariff(&w, p, 0, &err), 0, "%s", err.msg);
    cr_assert(w.tariff && w.tariff->has_demand);
    /* flat 20.5 + the dearest time-of-use period 12 (adj ignored) */
    cr_assert_eq(w.tariff->demand[0], 32.5);
    cr_assert_eq(w.tariff->max_demand, 32.5);
    char note[1024];
    ws_whatif_tariff_note(&w, 2000, note, sizeof note);
    cr_assert(strstr(note, "demand charges up to 32.5 $/kW a month are not in usd: at this"
                     " job's peak of 2 kW up to $65.00 a month; plan --demand-charge include"
                     " adds them"), "%s", note);
    /* Ten 1-hour runs at 2 kW from 2024-01-31T20:00Z: January and
     * February, 2 x 2 kW x 32.5 $/kW = $130; a third run in February adds
     * nothing. */
    ws_demand_acc acc = {0};
    const double t0 = iso("2024-01-31T20:00:00Z");
    ws_whatif_demand_add(&w, &acc, t0, 10 * 3600.0, 2000);
    cr_assert(REL(acc.usd, 130.0), "%g", acc.usd);
    ws_whatif_demand_add(&w, &acc, t0 + 20 * 3600.0, 3600.0, 2000);
    cr_assert(REL(acc.usd, 130.0), "%g", acc.usd);
    /* March: one more month */
    ws_whatif_demand_add(&w, &acc, iso("2024-03-05T00:00:00Z"), 3600.0, 2000);
    cr_assert(REL(acc.usd, 195.0), "%g", acc.usd);

    /* plan --demand-charge include: a knob of 1 h at 2 kW run 10 times
     * back to back carries $130 / 10 more per run. */
    cr_assert_eq(ws_whatif_set_demand_charge(&w, "include", "--demand-charge", &err), 0, "%s",
                 err.msg);
    char line[512];
    ws_whatif_describe(&w, line, sizeof line);
    cr_assert(strstr(line, "from 2024-01-31T20:00:00Z; demand charges included"), "%s", line);
    ws_job job = {0};
    job.eta = 0.5;
    job.max_power = 2000;
    ws_knob_stat s = {0};
    s.tta = 3600;
    s.eta = 7.2e6;
    s.cost = 1;
    double cost, g, usd_with, usd_without;
    long wraps = 0;
    ws_knob_objective(&job, &s, &w, 10, &cost, &g, &usd_with, &wraps);
    w.demand_charge = 0;
    ws_knob_objective(&job, &s, &w, 10, &cost, &g, &usd_without, &wraps);
    cr_assert(REL(usd_without, 2 * 0.10171));
    cr_assert(REL(usd_with - usd_without, 13.0), "%g", usd_with - usd_without);
    ws_whatif_free(&w);
}

Test(grid, demand_charge_include_needs_a_tariff_with_demand_charges)
{
    ws_whatif w;
    ws_error err = {{0}};
    char want[512];
    const char *p = sc9(0);
    cr_assert_eq(load_tariff(&w, p, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_whatif_set_demand_charge(&w, "include", "--demand-charge", &err), -1);
    snprintf(want, sizeof want, "--demand-charge include: %s has no demand charges (no"
             " flatdemandstructure or demandratestructure with a rate above 0)", p);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(ws_whatif_set_demand_charge(&w, "yes", "--demand-charge", &err), -1);
    cr_assert_str_eq(err.msg, "--demand-charge must be include or ignore, got 'yes'");
    ws_whatif_free(&w);
    /* empty demand structures are none */
    p = sc9(2);
    cr_assert_eq(load_tariff(&w, p, 0, &err), 0, "%s", err.msg);
    cr_assert(!w.tariff->has_demand);
    cr_assert_eq(ws_whatif_set_demand_charge(&w, "include", "--demand-charge", &err), -1);
    ws_whatif_free(&w);
    ws_whatif none = {0};
    cr_assert_eq(ws_whatif_set_demand_charge(&none, "include", "--demand-charge", &err), -1);
    cr_assert_str_eq(err.msg, "--demand-charge include: demand charges come with an OpenEI"
                     " tariff: give one with --price FILE.json");
}
