/*
 * What every rate series reader shares (see wattsim/series.h), below the
 * readers and the series module that call it, calling nothing of theirs:
 *   ws_parse_time / ws_format_time   UTC times in ISO 8601, in and out
 *   ws_series_value_ok               a rate within the accepted range
 *   ws_carbon_basis_name             "direct" / "lifecycle"
 *   ws_series_free                   a series' arrays
 * series.c (CSV, the integrals), series_json.c (Electricity Maps, OpenEI)
 * and series_join.c (joining a series onto a run) build on it.
 */
#include "wattsim/series.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ times */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static long days_from_civil(long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long)doe - 719468;
}

static int digits(const char **p, int n, long *out)
{
    long v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

int ws_parse_time(const char *s, double *out)
{
    const char *p = s;
    long y, mo, d, h = 0, mi = 0, sec = 0;
    double frac = 0.0;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-'
        || digits(&p, 2, &d))
        return -1;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1]) return -1;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return -1;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi)) return -1;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec)) return -1;
            if (*p == '.' || *p == ',') {
                double scale = 0.1;
                p++;
                if (!isdigit((unsigned char)*p)) return -1;
                for (; isdigit((unsigned char)*p); p++, scale /= 10)
                    frac += (*p - '0') * scale;
            }
        }
        if (h > 23 || mi > 59 || sec > 60) return -1;
    }
    long zone = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        long zh, zm = 0;
        if (digits(&p, 2, &zh)) return -1;
        if (*p == ':') p++;
        if (*p && digits(&p, 2, &zm)) return -1;
        if (zh > 23 || zm > 59) return -1;
        zone = sign * (zh * 3600 + zm * 60);
    }
    if (*p) return -1;
    *out = (double)(days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400L
                    + h * 3600 + mi * 60 + sec - zone) + frac;
    return 0;
}

void ws_format_time(double t, char *buf, size_t size)
{
    /* Years 1 to 9999 as ISO 8601; beyond (a far end of a series, say),
     * seconds since the epoch rather than an overflowing date. */
    if (!isfinite(t)) {
        snprintf(buf, size, "(no time)");
        return;
    }
    if (!(t >= -62135596800.0 && t < 253402300800.0)) {
        snprintf(buf, size, "%.6g s after 1970-01-01T00:00:00Z", t);
        return;
    }
    long s = (long)floor(t);
    long days = s >= 0 ? s / 86400 : -((-s + 86399) / 86400);
    long rem = s - days * 86400;
    /* civil_from_days (H. Hinnant) */
    long z = days + 719468;
    const long era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long y = (long)yoe + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    snprintf(buf, size, "%04ld-%02u-%02uT%02ld:%02ld:%02ldZ", y, m, d, rem / 3600,
             rem / 60 % 60, rem % 60);
}

/* ------------------------------------------------------------ values */

int ws_series_value_ok(double v)
{
    return v == 0 || (v >= WS_SERIES_MIN_VALUE && v <= WS_SERIES_MAX_VALUE);
}

const char *ws_carbon_basis_name(ws_carbon_basis b)
{
    return b == WS_BASIS_DIRECT ? "direct" : "lifecycle";
}

void ws_series_free(ws_series *s)
{
    if (!s) return;
    free(s->path);
    free(s->t0);
    free(s->value);
    free(s->cum);
    memset(s, 0, sizeof *s);
}
