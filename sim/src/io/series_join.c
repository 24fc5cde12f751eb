/*
 * Several series files as one (wattsim/series.h ws_series_join): Zeus's
 * carbon monitor stores a day of Electricity Maps history per file, and a
 * study over a month reads thirty of them.
 *
 * The parts are sorted by start (ties: the longer first). Walking them in
 * that order with `end` the joined series' end so far, a part that starts
 * after `end` leaves a gap (refused); where it starts before `end`, the
 * two step functions must agree over [part start, min(end, part end)):
 * both are piecewise constant and right-continuous, so they agree when
 * they agree at every interval start of either within that range. Then
 * the part's intervals from `end` on are appended (the one straddling
 * `end` cut to start there).
 */
#include "wattsim/series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rate of s at t in [s->start, s->end), without wrapping around. */
static double rate_at(const ws_series *s, double t)
{
    size_t lo = 0, hi = s->n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (s->t0[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return s->value[lo];
}

/* x goes before y: the earlier start, then the later end; else the order
 * given (an insertion sort is stable, and there are few parts). */
static int before(const ws_series *x, const ws_series *y)
{
    return x->start < y->start || (x->start == y->start && x->end > y->end);
}

static void sort_parts(ws_series *parts, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        ws_series v = parts[i];
        size_t j = i;
        for (; j > 0 && before(&v, &parts[j - 1]); j--) parts[j] = parts[j - 1];
        parts[j] = v;
    }
}

/* The first t0 of a part (or of the joined series so far, whose end is
 * `end`) at which the two differ over [lo, hi); NAN when none. */
static double first_difference(const ws_series *a, const ws_series *b, double lo, double hi)
{
    for (int k = 0; k < 2; k++) {
        const ws_series *s = k ? b : a;
        for (size_t i = 0; i < s->n; i++) {
            const double t = s->t0[i] < lo ? lo : s->t0[i];
            if (t >= hi) break;
            if (i + 1 < s->n && s->t0[i + 1] <= lo) continue;
            if (rate_at(a, t) != rate_at(b, t)) return t;
        }
    }
    return NAN;
}

int ws_series_join(ws_series *out, ws_series *parts, size_t n, const char *where,
                   ws_error *err)
{
    if (!where) where = "--carbon";
    memset(out, 0, sizeof *out);
    if (n == 1) {
        *out = parts[0];
        memset(&parts[0], 0, sizeof parts[0]);
        return 0;
    }
    int rc = -1;
    size_t len = 1, total = 0;
    for (size_t i = 0; i < n; i++) {
        len += strlen(parts[i].path) + 3;
        total += parts[i].n + 1;
    }
    sort_parts(parts, n);
    out->path = malloc(len);
    out->t0 = malloc(total * sizeof *out->t0);
    out->value = malloc(total * sizeof *out->value);
    out->cum = malloc((total + 1) * sizeof *out->cum);
    if (!out->path || !out->t0 || !out->value || !out->cum) {
        ws_fail(err, "out of memory");
        goto out;
    }
    /* named in the order given: by start */
    size_t pl = 0;
    for (size_t i = 0; i < n; i++)
        pl += (size_t)snprintf(out->path + pl, len - pl, "%s%s", i ? " + " : "",
                               parts[i].path);
    /* the first part whole */
    memcpy(out->t0, parts[0].t0, parts[0].n * sizeof *out->t0);
    memcpy(out->value, parts[0].value, parts[0].n * sizeof *out->value);
    out->n = parts[0].n;
    out->start = parts[0].start;
    out->end = parts[0].end;
    const ws_series *last = &parts[0];     /* the part that reaches `end` */
    for (size_t p = 1; p < n; p++) {
        const ws_series *s = &parts[p];
        char a[32], b[32];
        if (s->start > out->end) {
            ws_format_time(last->end, a, sizeof a);
            ws_format_time(s->start, b, sizeof b);
            ws_fail(err, "%s: %s ends at %s but %s starts at %s: a gap of %g h between"
                    " the files; add the file that covers it (the joined series must be"
                    " contiguous)", where, last->path, a, s->path, b,
                    (s->start - out->end) / 3600);
            goto out;
        }
        const double hi = s->end < out->end ? s->end : out->end;
        const double d = first_difference(out, s, s->start, hi);
        if (!isnan(d)) {
            /* name the earlier file that holds time d */
            const ws_series *o = &parts[0];
            for (size_t q = 0; q < p; q++)
                if (parts[q].start <= d && d < parts[q].end) o = &parts[q];
            ws_format_time(d, a, sizeof a);
            ws_fail(err, "%s: %s and %s overlap with different values at %s (%g and %g):"
                    " two histories of different zones or bases? give files that agree where"
                    " they overlap", where, o->path, s->path, a, rate_at(o, d), rate_at(s, d));
            goto out;
        }
        if (!(s->end > out->end)) continue;
        for (size_t i = 0; i < s->n; i++) {
            const double next = i + 1 < s->n ? s->t0[i + 1] : s->end;
            if (next <= out->end) continue;
            const double t = s->t0[i] < out->end ? out->end : s->t0[i];
            if (!(next - t >= WS_SERIES_MIN_SECONDS)) {
                char ta[32];
                ws_format_time(t, ta, sizeof ta);
                ws_fail(err, "%s: %s continues %s at %s with an interval shorter than"
                        " a second: their times are misaligned; give files on one grid of"
                        " times", where, s->path, last->path, ta);
                goto out;
            }
            out->t0[out->n] = t;
            out->value[out->n] = s->value[i];
            out->n++;
        }
        out->end = s->end;
        last = s;
    }
    out->cum[0] = 0.0;
    for (size_t i = 0; i < out->n; i++) {
        const double next = i + 1 < out->n ? out->t0[i + 1] : out->end;
        out->cum[i + 1] = out->cum[i] + out->value[i] * (next - out->t0[i]);
    }
    rc = 0;
out:
    for (size_t i = 0; i < n; i++) ws_series_free(&parts[i]);
    if (rc) ws_series_free(out);
    return rc;
}
