/*
 * Times in imported files: Unix seconds, ISO 8601 with or without a zone
 * (parsed by ws_parse_time of io/series.c, which reads a time without a
 * zone as UTC wall time: exactly "on the log's own clock" here), and
 * nvidia-smi's "YYYY/MM/DD HH:MM:SS.mmm"; and a wall clock in an IANA zone
 * (--log-tz America/New_York) turned into instants through the system's
 * tz database (TZ and localtime_r, as --price-tz): a wall time has one
 * instant, none (skipped by a spring forward) or two (the hour a fall back
 * repeats), which the caller tells apart by the rows' order.
 */
#include "wattsim/import.h"
#include "wattsim/series.h"
#include "import_util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 2 digits into *v. */
static int two(const char *s, long *v)
{
    if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1])) return -1;
    *v = (s[0] - '0') * 10 + (s[1] - '0');
    return 0;
}

int ws_parse_tz(const char *s, double *seconds)
{
    long h, m = 0;
    if (!strcmp(s, "Z")) { *seconds = 0; return 0; }
    if ((*s != '+' && *s != '-') || two(s + 1, &h)) return -1;
    const char *p = s + 3;
    if (*p == ':') p++;
    if (*p && (two(p, &m) || p[2])) return -1;
    if (h > 23 || m > 59) return -1;
    *seconds = (*s == '-' ? -1 : 1) * (h * 3600.0 + m * 60.0);
    return 0;
}

int ws_parse_instant(const char *s, double *t, int *zoned)
{
    if (ws_imp_decimal(s, t) == 0) {          /* Unix seconds */
        *zoned = 1;
        return *t < 0 ? -1 : 0;
    }
    if (ws_parse_time(s, t)) return -1;
    /* A zone is "Z" or a sign after the date's "YYYY-MM-DD". */
    size_t n = strlen(s);
    *zoned = n > 10 && (s[n - 1] == 'Z' || s[n - 1] == 'z' || strpbrk(s + 10, "+-"));
    return 0;
}

int ws_imp_nvsmi_time(const char *s, double *t)
{
    char buf[64];
    size_t n = strlen(s);
    /* YYYY/MM/DD HH:MM:SS[.fff], nothing else (no zone: the local clock) */
    if (n < 19 || n >= sizeof buf || s[4] != '/' || s[7] != '/' || s[10] != ' '
        || s[16] != ':' || !isdigit((unsigned char)s[n - 1]))
        return -1;
    memcpy(buf, s, n + 1);
    buf[4] = buf[7] = '-';
    return ws_parse_time(buf, t);
}

void ws_imp_fmt_time(double t, char *buf, size_t size)
{
    if (!isfinite(t)) { snprintf(buf, size, "?"); return; }
    double s = floor(t);
    long ms = lround((t - s) * 1000);
    if (ms >= 1000) { s += 1; ms -= 1000; }
    char day[40];
    ws_format_time(s, day, sizeof day);        /* YYYY-MM-DDTHH:MM:SSZ */
    size_t n = strlen(day);
    if (n && day[n - 1] == 'Z') day[n - 1] = '\0';
    if (n > 10 && day[10] == 'T') day[10] = ' ';
    snprintf(buf, size, "%s.%03ld", day, ms);
}

/* ------------------------------------------------- wall clocks in a zone */

int ws_parse_log_tz(const char *s, double *offset, const char **zone)
{
    *zone = NULL;
    *offset = 0;
    if (ws_parse_tz(s, offset) == 0) return 0;
    if (!strcmp(s, "UTC")) return 0;
    /* An IANA name with a zone file (the check --price-tz makes). */
    if (!ws_series_tz_ok(s)) return -1;
    *zone = s;
    return 0;
}

int ws_zone_set(const char *zone, ws_zone_saved *saved, ws_error *err)
{
    const char *o = getenv("TZ");
    saved->old = NULL;
    saved->had = o != NULL;
    if (o && !(saved->old = strdup(o))) return ws_fail(err, "out of memory");
    if (setenv("TZ", zone, 1)) {
        free(saved->old);
        saved->old = NULL;
        return ws_fail(err, "out of memory");
    }
    tzset();
    return 0;
}

void ws_zone_restore(ws_zone_saved *saved)
{
    if (saved->had) setenv("TZ", saved->old, 1);
    else unsetenv("TZ");
    tzset();
    free(saved->old);
    saved->old = NULL;
}

/* Seconds east of UTC of the zone in TZ at UTC instant u. */
static long offset_at(double u)
{
    time_t tt = (time_t)floor(u);
    struct tm tm;
    if (!localtime_r(&tt, &tm)) return 0;
    return tm.tm_gmtoff;
}

int ws_zone_instants(double wall, double u[2])
{
    /* Offsets change at most once within a day either side (zones change
     * twice a year): the candidates are the wall time less the offset in
     * force a day before and a day after, each kept when it is the offset
     * in force at the instant it gives. */
    const long o[2] = {offset_at(wall - 86400), offset_at(wall + 86400)};
    int n = 0;
    for (int k = 0; k < 2; k++) {
        if (k == 1 && o[1] == o[0]) break;
        const double c = wall - (double)o[k];
        if (offset_at(c) == o[k]) u[n++] = c;
    }
    if (n == 2 && u[1] < u[0]) {
        const double x = u[0];
        u[0] = u[1];
        u[1] = x;
    }
    return n;
}
