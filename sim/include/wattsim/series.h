/*
 * Time series of a rate that moves over time: grid carbon intensity
 * (gCO2eq/kWh) or electricity price ($/kWh). A series is a list of
 * back-to-back intervals [t_i, t_i + d_i) with one value each.
 *
 * Accepted files (CSV, plain or gzip; columns found by name, any order):
 *  - the Zeus/WattTime shape of ../shared/traces/carbon/:
 *      location,timestamp,duration,value,hist
 *    `timestamp` ISO 8601 (a zone, or none meaning UTC), `duration` in
 *    minutes, `value` the rate; other columns are ignored;
 *  - (carbon only) an Electricity Maps export: `Datetime (UTC)` and
 *    `Carbon intensity gCO₂eq/kWh (direct)` (case-insensitive); each
 *    interval lasts until the next row's time, the last one as long as the
 *    one before it.
 *  - JSON: an Electricity Maps API history (carbon) or an OpenEI tariff
 *    (price); see ws_series_load_json.
 * Rows must be in time order and contiguous (an interval ends where the
 * next starts); values finite and >= 0. Errors name FILE:LINE.
 *
 * Integrals over a window wrap around: a time t past the series' end reads
 * the value at start + ((t - start) mod period), so a long study replays
 * the series from its start.
 */
#ifndef WATTSIM_SERIES_H
#define WATTSIM_SERIES_H

#include <stddef.h>
#include "wattsim/csv.h"
#include "wattsim/error.h"

typedef enum ws_series_kind { WS_SERIES_CARBON, WS_SERIES_PRICE } ws_series_kind;

/* Bounds on a series' rows, so that every time, gram and dollar derived
 * from them -- and the objective's scale k = 3.6e6 / mean rate
 * (wattsim/whatif.h) -- is finite and normal:
 *  - an interval lasts from 1 s to 366 days;
 *  - a rate (g/kWh or $/kWh) is 0, or from 1e-6 to 1e6: a positive rate
 *    below 1e-6 (a millionth of a gram or dollar per kWh) is no grid's or
 *    market's and is refused rather than read as 0, and it would make the
 *    scale overflow (a rate of 1e-300 for a minute, then 0 for a year,
 *    has a mean of 2e-306). With these bounds the mean rate of a series
 *    that is not 0 throughout is at least 1e-6 x 1 s / (rows x 366 days),
 *    so k stays below 1e28 even for a billion rows.
 * A constant price (--price X) obeys the same rule (ws_series_value_ok). */
#define WS_SERIES_MIN_SECONDS 1.0
#define WS_SERIES_MAX_MINUTES 527040
#define WS_SERIES_MIN_VALUE 1e-6
#define WS_SERIES_MAX_VALUE 1e6
#define WS_SERIES_VALUE_RULE "0, or from 0.000001 to 1000000"

/* Nonzero when v is a rate a series may hold: 0, or within
 * [WS_SERIES_MIN_VALUE, WS_SERIES_MAX_VALUE]. */
int ws_series_value_ok(double v);

typedef struct ws_series {
    char *path;
    size_t n;
    double *t0;             /* interval starts, Unix seconds, n entries */
    double *value;          /* rate per interval, n entries */
    double *cum;            /* cum[i] = integral of the rate over
                               [t0[0], t0[i]] (rate x s), n + 1 entries */
    double start, end;      /* t0[0] and the end of the last interval */
} ws_series;

/* Read a series file. Returns 0, or -1 with err set (FILE:LINE: ...). */
int ws_series_load(ws_series *s, const char *path, ws_series_kind kind,
                   const ws_csv_limits *lim, ws_error *err);
/* JSON series (series_json.c): an Electricity Maps carbon history, or an
 * OpenEI utility-rate tariff (price), which has no times of its own and
 * becomes an hourly series of 53 weeks from `start` in zone `tz`. */
typedef struct ws_tariff {
    double start;           /* Unix s; NAN: not known (an error for a tariff) */
    const char *tz;         /* NULL or "UTC", "+HH:MM", "-HH:MM", IANA name */
    const char *label;      /* the item's label; NULL: the only item */
} ws_tariff;
/* 1 when path's first non-blank byte opens a JSON object, 0 when not
 * (a CSV, or gzip), -1 with err set when it cannot be read. */
int ws_series_is_json(const char *path, ws_error *err);
int ws_series_load_json(ws_series *s, const char *path, ws_series_kind kind,
                        const ws_tariff *tf, const ws_csv_limits *lim, ws_error *err);
/* Nonzero when tz is a zone --price-tz accepts. */
int ws_series_tz_ok(const char *tz);

/* A constant series (value over all time), for `--price 0.12`. */
int ws_series_constant(ws_series *s, double value, ws_error *err);
/* A series built in memory: n intervals of `step` s from `start` (Unix
 * s), values[i] in the i-th, named `name` in messages (n >= 1, step > 0). */
int ws_series_steps(ws_series *s, const char *name, double start, double step,
                    const double *values, size_t n, ws_error *err);
void ws_series_free(ws_series *s);

/* Nonzero when the rate is not the same throughout. */
int ws_series_varies(const ws_series *s);

/* Mean rate over one period of the series (time-weighted). */
double ws_series_mean(const ws_series *s);

/* Integral of the rate over [a, a + dur] (rate x s), wrapping around past
 * the end; a >= s->start. Sets *wrapped (if not NULL) when the window
 * reaches past the series' end. */
double ws_series_integral(const ws_series *s, double a, double dur, int *wrapped);

/* The first time after t at which the rate may change (an interval's
 * start, wrapping around); INFINITY for a constant series. */
double ws_series_next_boundary(const ws_series *s, double t);

/* The rate at time t (wrapping around). */
double ws_series_at(const ws_series *s, double t);

/* Grams (carbon) or dollars (price) for energy_j joules drawn at constant
 * power over [a, a + dur]: energy x time-weighted mean rate / 3.6e6
 * (rate per kWh). dur == 0: the rate at a. */
double ws_series_amount(const ws_series *s, double a, double dur,
                        double energy_j, int *wrapped);

/* Parse an ISO 8601 time (YYYY-MM-DD[T| ]HH:MM[:SS[.frac]][Z|+HH:MM|-HH:MM],
 * or a date alone; no zone = UTC) into Unix seconds. 0 on success. */
int ws_parse_time(const char *s, double *out);

/* Format Unix seconds as "YYYY-MM-DDTHH:MM:SSZ" (buffer >= 24 bytes). */
void ws_format_time(double t, char *buf, size_t size);

#endif
