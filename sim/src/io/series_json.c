/*
 * Rate series from JSON (see wattsim/series.h):
 *  - carbon: an Electricity Maps API history, as Zeus's carbon monitor
 *    stores it (GET /v3/carbon-intensity/history):
 *      {"zone": "...", "history": [{"carbonIntensity": 501,
 *        "datetime": "2024-11-30T06:00:00.000Z",
 *        "emissionFactorType": "lifecycle", ...}, ...]}
 *    each entry lasts until the next one's datetime (1 s to 366 days),
 *    the last as long as the one before it (as the Electricity Maps CSV
 *    export); every entry's emissionFactorType (absent: the API's
 *    default, lifecycle) must be the basis asked for;
 *  - price: an OpenEI utility-rate response (api.openei.org/utility_rates,
 *    format=json), as Zeus's price monitor (zeus/monitor/price.py) reads
 *    it: {"items": [{"label": "...", "energyratestructure": [[{"rate":
 *    0.1}], ...], "energyweekdayschedule": [12 x 24 periods],
 *    "energyweekendschedule": [...]}, ...]}. The rate of an hour is
 *    energyratestructure[period][0].rate with period the weekday (Monday
 *    to Friday) or weekend schedule's [month][hour], month and hour read
 *    in the tariff's time zone (UTC by default, as Zeus does); "adj" is
 *    ignored, as Zeus ignores it, unless asked for (ws_tariff.adjustments),
 *    and tiers past the first are ignored: both are reported, with the
 *    demand charges (flatdemandstructure/flatdemandmonths,
 *    demandratestructure and its schedules), in a ws_tariff_info. The
 *    tariff becomes an hourly series of 53 weeks (371 days, so weekdays
 *    line up when it wraps) from the start, floored to the local hour.
 * Parsed with jansson, bounded by the trace size limit; a syntax error is
 * FILE:LINE:COL, a bad value FILE: its JSON path (a parsed value has no
 * line) and what is wrong.
 */
#include "wattsim/series.h"
#include "wattsim/input.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/json_input.h"

#define TARIFF_HOURS (371 * 24)

int ws_series_is_json(const char *path, ws_error *err)
{
    int fd = ws_input_open(path, err);
    if (fd < 0) return -1;
    unsigned char buf[256];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 0) return ws_fail(err, "%s: cannot read: %s", path, strerror(errno));
    ssize_t i = 0;
    if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf) i = 3;  /* BOM */
    while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    return i < n && buf[i] == '{';
}

static json_t *load(const char *path, const ws_csv_limits *lim, ws_error *err)
{
    return ws_json_input_load(path, lim && lim->max_bytes ? lim->max_bytes
                                                          : WS_CSV_MAX_BYTES_DEFAULT, err);
}

static int grow(ws_series *s, size_t n, ws_error *err)
{
    s->t0 = malloc(n * sizeof *s->t0);
    s->value = malloc(n * sizeof *s->value);
    s->cum = malloc((n + 1) * sizeof *s->cum);
    if (!s->t0 || !s->value || !s->cum) return ws_fail(err, "out of memory");
    return 0;
}

static void finish(ws_series *s, double last_duration)
{
    s->start = s->t0[0];
    s->end = s->t0[s->n - 1] + last_duration;
    s->cum[0] = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        double next = i + 1 < s->n ? s->t0[i + 1] : s->end;
        s->cum[i + 1] = s->cum[i] + s->value[i] * (next - s->t0[i]);
    }
}

/* ------------------------------------------------ Electricity Maps */

static int electricity_maps(ws_series *s, const char *path, json_t *root,
                            ws_carbon_basis basis, ws_error *err)
{
    const char *want = ws_carbon_basis_name(basis);
    json_t *h = json_object_get(root, "history");
    if (!json_is_array(h))
        return ws_fail(err, "%s: history: missing or not an array (expected an Electricity"
                       " Maps carbon-intensity history: {\"history\": [{\"carbonIntensity\":"
                       " ..., \"datetime\": ...}, ...]})", path);
    const size_t n = json_array_size(h);
    if (n < 2)
        return ws_fail(err, "%s: history: %zu entr%s: an Electricity Maps history needs two"
                       " to know the interval length", path, n, n == 1 ? "y" : "ies");
    if (grow(s, n, err)) return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(h, i);
        json_t *ci = json_is_object(e) ? json_object_get(e, "carbonIntensity") : NULL;
        json_t *dt = json_is_object(e) ? json_object_get(e, "datetime") : NULL;
        double t, v;
        if (!json_is_string(dt) || ws_parse_time(json_string_value(dt), &t))
            return ws_fail(err, "%s: history[%zu].datetime: missing or not an ISO 8601 time"
                           " (YYYY-MM-DDTHH:MM:SS[.fff]Z)", path, i);
        if (!json_is_number(ci))
            return ws_fail(err, "%s: history[%zu].carbonIntensity: missing, null or not a"
                           " number (a gap in the history: fill or cut it)", path, i);
        v = json_number_value(ci);
        if (!ws_series_value_ok(v))
            return ws_fail(err, "%s: history[%zu].carbonIntensity: carbon intensity must be "
                           WS_SERIES_VALUE_RULE ", got %g", path, i, v);
        if (i > 0 && !(t - s->t0[i - 1] >= WS_SERIES_MIN_SECONDS))
            return ws_fail(err, "%s: history[%zu].datetime: %s is not at least 1 s after the"
                           " previous entry's: entries must be in time order", path, i,
                           json_string_value(dt));
        if (i > 0 && t - s->t0[i - 1] > WS_SERIES_MAX_MINUTES * 60.0)
            return ws_fail(err, "%s: history[%zu].datetime: %s is more than 366 days after"
                           " the previous entry's: an interval lasts at most 366 days (a"
                           " gap in the history: fill or cut it)", path, i,
                           json_string_value(dt));
        /* The basis of each entry; an entry without one has the API's
         * default, lifecycle. */
        json_t *ef = json_object_get(e, "emissionFactorType");
        const char *got = json_is_string(ef) ? json_string_value(ef) : "lifecycle";
        if ((ef && !json_is_null(ef) && !json_is_string(ef))
            || (strcmp(got, "lifecycle") && strcmp(got, "direct")))
            return ws_fail(err, "%s: history[%zu].emissionFactorType: not \"lifecycle\" or"
                           " \"direct\"", path, i);
        if (strcmp(got, want))
            return ws_fail(err, "%s: history[%zu].emissionFactorType: \"%s\"%s, not the %s"
                           " basis (--carbon-basis %s): pass --carbon-basis %s, or fetch"
                           " the history with emissionFactorType=%s", path, i, got,
                           ef ? "" : " (none given: the API's default)", want, want, got,
                           want);
        s->t0[i] = t;
        s->value[i] = v;
        s->n = i + 1;
    }
    finish(s, s->t0[n - 1] - s->t0[n - 2]);
    return 0;
}

/* ------------------------------------------------------------- OpenEI */

/* Month (0-11), hour (0-23) and weekend flag of Unix time t in zone tz:
 * NULL or "UTC" for UTC, "+HH:MM"/"-HH:MM" for a fixed offset, else an
 * IANA name read through TZ and localtime_r (validated by the caller). */
static void local_fields(double t, const char *tz, long offset, int *month, int *hour,
                         int *weekend)
{
    time_t tt = (time_t)floor(t);
    struct tm tm;
    if (!tz || offset != LONG_MIN) {
        tt += offset == LONG_MIN ? 0 : offset;
        gmtime_r(&tt, &tm);
    } else {
        localtime_r(&tt, &tm);
    }
    *month = tm.tm_mon;
    *hour = tm.tm_hour;
    *weekend = tm.tm_wday == 0 || tm.tm_wday == 6;
}

/* The fixed offset of tz in seconds, or LONG_MIN for an IANA name. */
static int parse_tz(const char *tz, long *offset)
{
    if (!tz || !strcmp(tz, "UTC") || !strcmp(tz, "Z")) {
        *offset = 0;
        return 0;
    }
    if ((tz[0] == '+' || tz[0] == '-') && strlen(tz) == 6 && tz[3] == ':') {
        int h = 0, m = 0;
        if (sscanf(tz + 1, "%2d:%2d", &h, &m) != 2 || h > 14 || m > 59) return -1;
        *offset = (tz[0] == '-' ? -1 : 1) * (h * 3600L + m * 60L);
        return 0;
    }
    /* An IANA name: letters, digits, _ + - and / between parts, no "..",
     * and a zone file for it. */
    if (tz[0] == '/' || strstr(tz, "..") || strlen(tz) > 64) return -1;
    for (const char *p = tz; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
              || *p == '_' || *p == '+' || *p == '-' || *p == '/'))
            return -1;
    char f[96];
    snprintf(f, sizeof f, "/usr/share/zoneinfo/%s", tz);
    struct stat st;
    if (stat(f, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    *offset = LONG_MIN;
    return 0;
}

int ws_series_tz_ok(const char *tz)
{
    long off;
    return parse_tz(tz, &off) == 0;
}

static int schedule(const char *path, size_t item, json_t *it, const char *key,
                    size_t n_periods, int out[12][24], ws_error *err)
{
    json_t *s = json_object_get(it, key);
    if (!json_is_array(s) || json_array_size(s) != 12)
        return ws_fail(err, "%s: items[%zu].%s: missing or not 12 months of 24 hours",
                       path, item, key);
    for (size_t m = 0; m < 12; m++) {
        json_t *row = json_array_get(s, m);
        if (!json_is_array(row) || json_array_size(row) != 24)
            return ws_fail(err, "%s: items[%zu].%s[%zu]: not 24 hours", path, item, key, m);
        for (size_t h = 0; h < 24; h++) {
            json_t *p = json_array_get(row, h);
            if (!json_is_integer(p) || json_integer_value(p) < 0
                || (size_t)json_integer_value(p) >= n_periods)
                return ws_fail(err, "%s: items[%zu].%s[%zu][%zu]: not a period of"
                               " energyratestructure (0 to %zu)", path, item, key, m, h,
                               n_periods - 1);
            out[m][h] = (int)json_integer_value(p);
        }
    }
    return 0;
}

/* A tier's rate ($/kWh or $/kW): rate, plus adj when `adj_in`; NAN when
 * missing or out of a series' range. *adj gets adj (0 when absent). */
static double tier_rate(json_t *tier, int adj_in, double *adj)
{
    json_t *r = json_is_object(tier) ? json_object_get(tier, "rate") : NULL;
    json_t *a = json_is_object(tier) ? json_object_get(tier, "adj") : NULL;
    *adj = json_is_number(a) ? json_number_value(a) : 0.0;
    if (!json_is_number(r) || (a && !json_is_null(a) && !json_is_number(a))) return NAN;
    double v = json_number_value(r) + (adj_in ? *adj : 0.0);
    return ws_series_value_ok(v) ? v : NAN;
}

/* The demand charges of item `it` (see ws_tariff_info): 0, or -1 with err
 * set naming the JSON path of a malformed one. */
static int demand_charges(const char *path, size_t pick, json_t *it, int adj_in,
                          ws_tariff_info *info, ws_error *err)
{
    double adj;
    json_t *fs = json_object_get(it, "flatdemandstructure");
    json_t *fm = json_object_get(it, "flatdemandmonths");
    /* absent, null or [] (as URDB writes a tariff without one): none */
    if (fs && !json_is_null(fs) && !(json_is_array(fs) && !json_array_size(fs))) {
        if (!json_is_array(fs) || !json_is_array(fm) || json_array_size(fm) != 12)
            return ws_fail(err, "%s: items[%zu].flatdemandstructure: not a list of periods"
                           " with flatdemandmonths (12 periods)", path, pick);
        for (size_t m = 0; m < 12; m++) {
            json_t *p = json_array_get(fm, m);
            if (!json_is_integer(p) || json_integer_value(p) < 0
                || (size_t)json_integer_value(p) >= json_array_size(fs))
                return ws_fail(err, "%s: items[%zu].flatdemandmonths[%zu]: not a period of"
                               " flatdemandstructure", path, pick, m);
            json_t *per = json_array_get(fs, (size_t)json_integer_value(p));
            double v = tier_rate(json_array_get(per, 0), adj_in, &adj);
            if (isnan(v))
                return ws_fail(err, "%s: items[%zu].flatdemandstructure[%lld][0].rate:"
                               " missing or not a charge in $/kW (" WS_SERIES_VALUE_RULE ")",
                               path, pick, (long long)json_integer_value(p));
            info->flat[m] = v;
        }
    }
    json_t *ds = json_object_get(it, "demandratestructure");
    if (ds && !json_is_null(ds) && !(json_is_array(ds) && !json_array_size(ds))) {
        const size_t np = json_is_array(ds) ? json_array_size(ds) : 0;
        if (!np)
            return ws_fail(err, "%s: items[%zu].demandratestructure: not a list of periods",
                           path, pick);
        int wd[12][24], we[12][24];
        if (schedule(path, pick, it, "demandweekdayschedule", np, wd, err)
            || schedule(path, pick, it, "demandweekendschedule", np, we, err))
            return -1;
        for (size_t m = 0; m < 12; m++)
            for (size_t h = 0; h < 48; h++) {
                const int p = h < 24 ? wd[m][h] : we[m][h - 24];
                double v = tier_rate(json_array_get(json_array_get(ds, (size_t)p), 0), adj_in,
                                     &adj);
                if (isnan(v))
                    return ws_fail(err, "%s: items[%zu].demandratestructure[%d][0].rate:"
                                   " missing or not a charge in $/kW (" WS_SERIES_VALUE_RULE
                                   ")", path, pick, p);
                if (v > info->tou[m]) info->tou[m] = v;
            }
    }
    for (size_t m = 0; m < 12; m++) {
        info->demand[m] = info->flat[m] + info->tou[m];
        if (info->demand[m] > info->max_demand) info->max_demand = info->demand[m];
    }
    info->has_demand = info->max_demand > 0;
    return 0;
}

static int openei(ws_series *s, const char *path, json_t *root, const ws_tariff *tf,
                  ws_tariff_info *info, ws_error *err)
{
    json_t *items = json_object_get(root, "items");
    if (!json_is_array(items) || json_array_size(items) == 0)
        return ws_fail(err, "%s: items: missing or empty (expected an OpenEI utility-rate"
                       " response: {\"items\": [{\"label\": ..., \"energyratestructure\":"
                       " ..., \"energyweekdayschedule\": ..., \"energyweekendschedule\":"
                       " ...}]})", path);
    const size_t ni = json_array_size(items);
    size_t pick = 0;
    if (tf->label) {
        pick = ni;
        for (size_t i = 0; i < ni && pick == ni; i++) {
            json_t *l = json_object_get(json_array_get(items, i), "label");
            if (json_is_string(l) && !strcmp(json_string_value(l), tf->label)) pick = i;
        }
        if (pick == ni)
            return ws_fail(err, "%s: no item has label '%.64s' (--price-label): %zu item%s",
                           path, tf->label, ni, ni == 1 ? "" : "s");
    } else if (ni > 1) {
        json_t *l = json_object_get(json_array_get(items, 0), "label");
        return ws_fail(err, "%s: %zu tariff items: choose one with --price-label LABEL"
                       " (the first is '%.64s')", path, ni,
                       json_is_string(l) ? json_string_value(l) : "?");
    }
    json_t *it = json_array_get(items, pick);
    json_t *rs = json_is_object(it) ? json_object_get(it, "energyratestructure") : NULL;
    if (!json_is_array(rs) || json_array_size(rs) == 0)
        return ws_fail(err, "%s: items[%zu].energyratestructure: missing or empty", path,
                       pick);
    const size_t np = json_array_size(rs);
    double *rate = malloc(np * sizeof *rate);
    if (!rate) return ws_fail(err, "out of memory");
    for (size_t p = 0; p < np; p++) {
        json_t *per = json_array_get(rs, p);
        double adj;
        rate[p] = tier_rate(json_array_get(per, 0), tf->adjustments, &adj);
        if (isnan(rate[p])) {
            free(rate);
            return ws_fail(err, "%s: items[%zu].energyratestructure[%zu][0].rate: missing or"
                           " not a price in $/kWh (" WS_SERIES_VALUE_RULE ")%s", path, pick, p,
                           tf->adjustments ? " with its adj added" : "");
        }
        if (!tf->adjustments && adj != 0 && fabs(adj) > fabs(info->adj)) {
            info->adj = adj;
            info->adj_rate = rate[p];
            info->adj_period = (int)p;
        }
        /* Later tiers: a rate past `max` kWh a month, which an hourly
         * series cannot follow. */
        const size_t nt = json_is_array(per) ? json_array_size(per) : 0;
        if (nt > 1) {
            info->tiered_periods++;
            json_t *mx = json_object_get(json_array_get(per, 0), "max");
            if (json_is_number(mx) && (info->tier_max == 0
                                       || json_number_value(mx) < info->tier_max))
                info->tier_max = json_number_value(mx);
            for (size_t k = 1; k < nt; k++) {
                double v = tier_rate(json_array_get(per, k), tf->adjustments, &adj);
                if (v > info->tier_top_rate) info->tier_top_rate = v;
            }
        }
    }
    if (demand_charges(path, pick, it, tf->adjustments, info, err)) {
        free(rate);
        return -1;
    }
    int wd[12][24], we[12][24];
    if (schedule(path, pick, it, "energyweekdayschedule", np, wd, err)
        || schedule(path, pick, it, "energyweekendschedule", np, we, err)) {
        free(rate);
        return -1;
    }
    long off;
    if (parse_tz(tf->tz, &off)) {
        free(rate);
        return ws_fail(err, "--price-tz: '%.64s' is not a time zone (UTC, +HH:MM, -HH:MM"
                       " or an IANA name such as America/New_York)", tf->tz);
    }
    /* Local hours through TZ for an IANA name; restored after. */
    char *old = NULL;
    if (off == LONG_MIN) {
        const char *o = getenv("TZ");
        if (o && !(old = strdup(o))) {
            free(rate);
            return ws_fail(err, "out of memory");
        }
        setenv("TZ", tf->tz, 1);
        tzset();
    }
    int rc = grow(s, TARIFF_HOURS, err);
    if (!rc) {
        /* Floor the start to its local hour (a zone may be off by 30 min). */
        const double fixed = off == LONG_MIN ? 0 : (double)off;
        double t = tf->start - fmod(fmod(tf->start + fixed, 3600.0) + 3600.0, 3600.0);
        int billing = 0;
        for (size_t i = 0; i < TARIFF_HOURS; i++, t += 3600.0) {
            int m, h, wkend;
            local_fields(t, tf->tz, off, &m, &h, &wkend);
            s->t0[i] = t;
            s->value[i] = rate[wkend ? we[m][h] : wd[m][h]];
            if (i && m != info->month[i - 1]) billing++;
            info->month[i] = (unsigned char)m;
            info->billing[i] = (unsigned short)billing;
        }
        info->n_billing = billing + 1;
        s->n = TARIFF_HOURS;
        finish(s, 3600.0);
    }
    if (off == LONG_MIN) {
        if (old) setenv("TZ", old, 1);
        else unsetenv("TZ");
        tzset();
        free(old);
    }
    free(rate);
    return rc;
}

static int load_json(ws_series *s, const char *path, ws_series_kind kind,
                     const ws_tariff *tf, ws_tariff_info *info, const ws_csv_limits *lim,
                     ws_error *err);

int ws_series_load_json(ws_series *s, const char *path, ws_series_kind kind,
                        const ws_tariff *tf, const ws_csv_limits *lim, ws_error *err)
{
    ws_tariff_info *info = calloc(1, sizeof *info);
    if (!info) {
        memset(s, 0, sizeof *s);
        return ws_fail(err, "out of memory");
    }
    int rc = load_json(s, path, kind, tf, info, lim, err);
    free(info);
    return rc;
}

int ws_series_load_tariff(ws_series *s, const char *path, const ws_tariff *tf,
                          ws_tariff_info *info, const ws_csv_limits *lim, ws_error *err)
{
    if (!info) return ws_series_load_json(s, path, WS_SERIES_PRICE, tf, lim, err);
    return load_json(s, path, WS_SERIES_PRICE, tf, info, lim, err);
}

static int load_json(ws_series *s, const char *path, ws_series_kind kind,
                     const ws_tariff *tf, ws_tariff_info *info, const ws_csv_limits *lim,
                     ws_error *err)
{
    memset(s, 0, sizeof *s);
    memset(info, 0, sizeof *info);
    if (!(s->path = strdup(path))) return ws_fail(err, "out of memory");
    json_t *root = load(path, lim, err);
    int rc = -1;
    if (!root) goto out;
    if (!json_is_object(root)) {
        ws_fail(err, "%s: not a JSON object", path);
    } else if (kind == WS_SERIES_CARBON) {
        if (json_object_get(root, "items") && !json_object_get(root, "history"))
            ws_fail(err, "%s: an OpenEI tariff is a price, not a carbon series: give it to"
                    " --price", path);
        else
            rc = electricity_maps(s, path, root, tf ? tf->basis : WS_BASIS_LIFECYCLE, err);
    } else {
        if (json_object_get(root, "history") && !json_object_get(root, "items"))
            ws_fail(err, "%s: an Electricity Maps history is a carbon series, not a price:"
                    " give it to --carbon", path);
        else if (!tf || isnan(tf->start))
            ws_fail(err, "%s: an OpenEI tariff has no times of its own: give --start TIME"
                    " (or a --carbon series, whose start it then uses)", path);
        else
            rc = openei(s, path, root, tf, info, err);
    }
out:
    json_decref(root);
    if (rc) ws_series_free(s);
    return rc;
}
