/*
 * Rate time series (carbon intensity, electricity price); see
 * wattsim/series.h. The integral over a window is computed from prefix
 * integrals (cum) in O(log n) per window, wrapping around the period:
 *   F(x) = cum[i] + value[i] * (x - t0[i] + start), t0[i] <= start + x,
 * integral over [a, a + d] = pieces of F within the first period, whole
 * periods times cum[n], and F of what is left.
 *
 * It reads CSV series itself and calls series_json.c for JSON ones; both
 * build on series_parts.c (times, value checks, basis names, freeing),
 * and neither reader calls this file back (scripts/check-layers).
 */
#include "wattsim/series.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int grow(ws_series *s, size_t *cap, ws_error *err)
{
    if (s->n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 256;
    double *t = realloc(s->t0, c * sizeof *t);
    if (t) s->t0 = t;
    double *v = t ? realloc(s->value, c * sizeof *v) : NULL;
    if (v) s->value = v;
    if (!t || !v) return ws_fail(err, "out of memory");
    *cap = c;
    return 0;
}

static int finish(ws_series *s, double last_duration, ws_error *err)
{
    s->cum = malloc((s->n + 1) * sizeof *s->cum);
    if (!s->cum) return ws_fail(err, "out of memory");
    s->start = s->t0[0];
    s->end = s->t0[s->n - 1] + last_duration;
    s->cum[0] = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        double next = i + 1 < s->n ? s->t0[i + 1] : s->end;
        s->cum[i + 1] = s->cum[i] + s->value[i] * (next - s->t0[i]);
    }
    return 0;
}

int ws_series_constant(ws_series *s, double value, ws_error *err)
{
    memset(s, 0, sizeof *s);
    size_t cap = 0;
    if (!(s->path = strdup("constant")) || grow(s, &cap, err)) {
        ws_series_free(s);
        return ws_fail(err, "out of memory");
    }
    s->t0[0] = 0.0;
    s->value[0] = value;
    s->n = 1;
    if (finish(s, 86400.0, err)) {
        ws_series_free(s);
        return -1;
    }
    return 0;
}

int ws_series_steps(ws_series *s, const char *name, double start, double step,
                    const double *values, size_t n, ws_error *err)
{
    memset(s, 0, sizeof *s);
    size_t cap = 0;
    if (!(s->path = strdup(name))) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (grow(s, &cap, err)) goto fail;
        s->t0[i] = start + (double)i * step;
        s->value[i] = values[i];
        s->n = i + 1;
    }
    if (n && !finish(s, step, err)) return 0;
    if (!n) ws_fail(err, "%s: a series needs at least one interval", name);
fail:
    ws_series_free(s);
    return -1;
}

/* Case-insensitive column match that ignores surrounding blanks. */
static int same_name(const char *field, const char *name)
{
    while (*field == ' ') field++;
    size_t n = strlen(field);
    while (n && field[n - 1] == ' ') n--;
    return n == strlen(name) && !strncasecmp(field, name, n);
}

static int parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    while (*s == ' ') s++;
    if (!*s) return -1;
    double v = strtod(s, &end);
    while (*end == ' ') end++;
    if (*end || errno == ERANGE || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

#define EM_DIRECT "Carbon intensity gCO\xe2\x82\x82" "eq/kWh (direct)"
#define EM_LCA "Carbon intensity gCO\xe2\x82\x82" "eq/kWh (LCA)"

int ws_series_load(ws_series *s, const char *path, ws_series_kind kind,
                   const ws_csv_limits *lim, ws_error *err)
{
    return ws_series_load_basis(s, path, kind, WS_BASIS_LIFECYCLE, lim, err);
}

int ws_series_load_basis(ws_series *s, const char *path, ws_series_kind kind,
                         ws_carbon_basis basis, const ws_csv_limits *lim, ws_error *err)
{
    memset(s, 0, sizeof *s);
    const int json = ws_series_is_json(path, err);
    if (json < 0) return -1;
    if (json) {
        ws_tariff tf = {NAN, NULL, NULL, 0, basis};
        return ws_series_load_json(s, path, kind, &tf, lim, err);
    }
    const char *em_col = basis == WS_BASIS_DIRECT ? EM_DIRECT : EM_LCA;
    const char *em_other = basis == WS_BASIS_DIRECT ? EM_LCA : EM_DIRECT;
    int other = 0;                     /* the other basis' column is there */
    const char *what = kind == WS_SERIES_CARBON ? "carbon intensity" : "price";
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    int rc = -1, r;
    size_t cap = 0;
    long col_t = -1, col_d = -1, col_v = -1;
    int em = 0;                        /* Electricity Maps export */
    double prev_d = NAN;
    if (!(s->path = strdup(path))) { ws_fail(err, "out of memory"); goto out; }
    if ((r = ws_csv_next(c, err)) <= 0) {
        if (r == 0) ws_fail(err, "%s:1: empty file: expected a header with"
                            " timestamp, duration and value columns", path);
        goto out;
    }
    for (size_t i = 0; i < ws_csv_nfields(c); i++) {
        const char *f = ws_csv_field(c, i);
        long *slot = same_name(f, "timestamp") ? &col_t
                   : same_name(f, "duration") ? &col_d
                   : same_name(f, "value") ? &col_v
                   : kind == WS_SERIES_CARBON && same_name(f, "Datetime (UTC)") ? &col_t
                   : kind == WS_SERIES_CARBON && same_name(f, em_col) ? &col_v : NULL;
        if (kind == WS_SERIES_CARBON && same_name(f, em_other)) other = 1;
        if (!slot) continue;
        if (*slot >= 0) {
            ws_fail(err, "%s:%ld: column '%s' appears twice", path, ws_csv_line(c), f);
            goto out;
        }
        *slot = (long)i;
        if (same_name(f, "Datetime (UTC)")) em = 1;
    }
    if (em && col_v < 0 && other) {
        ws_fail(err, "%s:%ld: no column '%s': this Electricity Maps export has the %s"
                " basis only; pass --carbon-basis %s, or export the %s one", path,
                ws_csv_line(c), em_col, ws_carbon_basis_name(!basis),
                ws_carbon_basis_name(!basis), ws_carbon_basis_name(basis));
        goto out;
    }
    if (col_t < 0 || col_v < 0 || (!em && col_d < 0)) {
        ws_fail(err, "%s:%ld: expected columns timestamp, duration (minutes) and"
                " value%s%s%s; missing %s", path, ws_csv_line(c),
                kind == WS_SERIES_CARBON ? " (or an Electricity Maps export with"
                " 'Datetime (UTC)' and '" : "", kind == WS_SERIES_CARBON ? em_col : "",
                kind == WS_SERIES_CARBON ? "')" : "",
                col_t < 0 ? "the time column" : col_v < 0 ? "the value column" : "duration");
        goto out;
    }
    if (em) col_d = -1;
    double next_start = NAN;
    while ((r = ws_csv_next(c, err)) == 1) {
        long line = ws_csv_line(c);
        size_t nf = ws_csv_nfields(c);
        if ((size_t)col_t >= nf || (size_t)col_v >= nf || (col_d >= 0 && (size_t)col_d >= nf)) {
            ws_fail(err, "%s:%ld: %zu field%s, fewer than the header's", path, line, nf,
                    ws_s(nf));
            goto out;
        }
        double t, d = NAN, v;
        const char *ft = ws_csv_field(c, (size_t)col_t);
        if (ws_parse_time(ft, &t)) {
            ws_fail(err, "%s:%ld: timestamp '%.40s' is not an ISO 8601 time"
                    " (YYYY-MM-DDTHH:MM:SS[Z|+HH:MM])", path, line, ft);
            goto out;
        }
        if (col_d >= 0) {
            const char *fd = ws_csv_field(c, (size_t)col_d);
            if (parse_number(fd, &d) || !(d * 60.0 >= WS_SERIES_MIN_SECONDS)
                || d > WS_SERIES_MAX_MINUTES) {
                ws_fail(err, "%s:%ld: duration must be a number of minutes from 1/60 (one"
                        " second) to %d (366 days), got \"%.40s\"", path, line,
                        WS_SERIES_MAX_MINUTES, fd);
                goto out;
            }
            d *= 60.0;
        }
        const char *fv = ws_csv_field(c, (size_t)col_v);
        if (parse_number(fv, &v) || !ws_series_value_ok(v)) {
            ws_fail(err, "%s:%ld: %s must be a number: " WS_SERIES_VALUE_RULE " (no real"
                    " rate is outside, and a tinier one would overflow the objective's"
                    " scale), got \"%.40s\"", path, line, what, fv);
            goto out;
        }
        if (s->n > 0) {
            if (em) {
                if (!(t > s->t0[s->n - 1])) {
                    ws_fail(err, "%s:%ld: time %.40s is not after the previous"
                            " row's: rows must be in time order", path, line, ft);
                    goto out;
                }
                if (!(t - s->t0[s->n - 1] >= WS_SERIES_MIN_SECONDS)) {
                    ws_fail(err, "%s:%ld: time %.40s is less than 1 s after the previous"
                            " row's: an interval lasts at least one second", path, line, ft);
                    goto out;
                }
                if (t - s->t0[s->n - 1] > WS_SERIES_MAX_MINUTES * 60.0) {
                    ws_fail(err, "%s:%ld: time %.40s is more than 366 days after the"
                            " previous row's: an interval lasts at most 366 days (a gap"
                            " in the export? fill or cut it)", path, line, ft);
                    goto out;
                }
                prev_d = t - s->t0[s->n - 1];
            } else if (t != next_start) {
                char want[32];
                ws_format_time(next_start, want, sizeof want);
                ws_fail(err, "%s:%ld: interval starts at %.40s but the previous one"
                        " ends at %s: intervals must be in time order, without"
                        " gaps or overlaps", path, line, ft, want);
                goto out;
            }
        }
        if (grow(s, &cap, err)) goto out;
        s->t0[s->n] = t;
        s->value[s->n] = v;
        s->n++;
        if (!em) { next_start = t + d; prev_d = d; }
    }
    if (r < 0) goto out;
    if (s->n == 0) {
        ws_fail(err, "%s:%ld: no rows after the header", path, ws_csv_line(c));
        goto out;
    }
    if (em && s->n < 2) {
        ws_fail(err, "%s:%ld: one row: an Electricity Maps export needs two to"
                " know the interval length", path, ws_csv_line(c));
        goto out;
    }
    rc = finish(s, prev_d, err);
out:
    ws_csv_close(c);
    if (rc) ws_series_free(s);
    return rc;
}

double ws_series_mean(const ws_series *s)
{
    return s->cum[s->n] / (s->end - s->start);
}

/* The interval holding time t of the first period: the last i with
 * t0[i] <= t. */
static size_t locate(const ws_series *s, double t)
{
    size_t lo = 0, hi = s->n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (s->t0[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Integral of the rate over [start, start + x], x in [0, period]. */
static double prefix(const ws_series *s, double x)
{
    double t = s->start + x;
    size_t i = locate(s, t);
    return s->cum[i] + s->value[i] * (t - s->t0[i]);
}

double ws_series_integral(const ws_series *s, double a, double dur, int *wrapped)
{
    const double period = s->end - s->start;
    double u = a - s->start;
    if (u < 0) u = 0;
    double laps = floor(u / period);
    double x = u - laps * period;
    if (x >= period) x = 0;            /* rounding */
    if (wrapped) *wrapped = a + dur > s->end;
    if (s->n == 1) return s->value[0] * dur;
    if (x + dur <= period) return prefix(s, x + dur) - prefix(s, x);
    double total = s->cum[s->n] - prefix(s, x);
    double rest = dur - (period - x);
    double full = floor(rest / period);
    total += full * s->cum[s->n];
    rest -= full * period;
    return total + prefix(s, rest);
}

double ws_series_at(const ws_series *s, double t)
{
    const double period = s->end - s->start;
    double u = t - s->start;
    if (u < 0) u = 0;
    double x = u - floor(u / period) * period;
    return s->value[locate(s, s->start + x)];
}

double ws_series_amount(const ws_series *s, double a, double dur,
                        double energy_j, int *wrapped)
{
    if (!(dur > 0)) {
        if (wrapped) *wrapped = a > s->end;
        return energy_j * ws_series_at(s, a) / 3.6e6;
    }
    double mean_rate = ws_series_integral(s, a, dur, wrapped) / dur;
    return energy_j * mean_rate / 3.6e6;
}

static double next_boundary(const ws_series *s, double t)
{
    const double period = s->end - s->start;
    if (t < s->start) return s->start;
    const double laps = floor((t - s->start) / period);
    const double shift = laps * period;
    /* the first t0[i] > t - shift within this lap, else the next lap's start */
    const size_t i = locate(s, t - shift) + 1;
    if (i < s->n) return s->t0[i] + shift;
    return s->start + shift + period;
}

double ws_series_next_boundary(const ws_series *s, double t)
{
    if (s->n == 1) return INFINITY;        /* a constant has no boundary */
    double r = next_boundary(s, t);
    /* Many laps out, t - shift may round back below the boundary t is on
     * and return t itself: step a millisecond on (intervals last >= 1 s,
     * so no boundary is skipped), so that callers walking boundaries
     * always advance. */
    if (!(r > t)) r = next_boundary(s, t + 1e-3);
    return r > t ? r : t + 1e-3;
}

int ws_series_varies(const ws_series *s)
{
    for (size_t i = 1; i < s->n; i++)
        if (s->value[i] != s->value[0]) return 1;
    return 0;
}
