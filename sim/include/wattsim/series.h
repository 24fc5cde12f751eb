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
 *    `Carbon intensity gCO₂eq/kWh (LCA)` (the lifecycle basis, the
 *    default) or `... (direct)` (ws_carbon_basis; case-insensitive); each
 *    interval lasts until the next row's time, the last one as long as the
 *    one before it, and at most 366 days (WS_SERIES_MAX_MINUTES).
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

/* Which emission factors an Electricity Maps carbon intensity counts
 * (--carbon-basis): lifecycle (the default: the API's default and what
 * Zeus's carbon monitor stores, "emissionFactorType": "lifecycle"; the
 * export's "(LCA)" column) or direct (combustion only; the export's
 * "(direct)" column, a history fetched with emissionFactorType=direct).
 * A file lacking the chosen basis is refused, naming it. The plain
 * timestamp,duration,value shape carries no basis and is read as given. */
typedef enum ws_carbon_basis { WS_BASIS_LIFECYCLE, WS_BASIS_DIRECT } ws_carbon_basis;
/* "lifecycle" or "direct". */
const char *ws_carbon_basis_name(ws_carbon_basis b);

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

/* Read a series file. Returns 0, or -1 with err set (FILE:LINE: ...).
 * A carbon series is read on the lifecycle basis (ws_series_load_basis
 * chooses). */
int ws_series_load(ws_series *s, const char *path, ws_series_kind kind,
                   const ws_csv_limits *lim, ws_error *err);
int ws_series_load_basis(ws_series *s, const char *path, ws_series_kind kind,
                         ws_carbon_basis basis, const ws_csv_limits *lim, ws_error *err);
/* JSON series (series_json.c): an Electricity Maps carbon history, or an
 * OpenEI utility-rate tariff (price), which has no times of its own and
 * becomes an hourly series of 53 weeks from `start` in zone `tz`. */
typedef struct ws_tariff {
    double start;           /* Unix s; NAN: not known (an error for a tariff) */
    const char *tz;         /* NULL or "UTC", "+HH:MM", "-HH:MM", IANA name */
    const char *label;      /* the item's label; NULL: the only item */
    int adjustments;        /* nonzero: a tier's rate is rate + adj
                               (--price-adjustments include); else rate */
    ws_carbon_basis basis;  /* for a carbon history */
} ws_tariff;

/* What an OpenEI tariff holds beyond the first tier's energy rate, for
 * notes (wattsim/whatif.h ws_whatif_tariff_note) and the demand charge:
 *  - adj: the largest |adj| of a first tier that was ignored (0: none),
 *    with its period and rate;
 *  - tiers: periods with more than one tier, the first tier's limit
 *    (`max`, kWh per month; 0 when absent) and the highest rate of a
 *    later tier;
 *  - demand charges ($/kW per billing month): `flatdemandstructure` with
 *    `flatdemandmonths` (flat[m], 0 when none) and the time-of-use
 *    `demandratestructure` with its schedules: tou[m], the highest rate
 *    of a period the month's weekday or weekend schedule names. demand[m]
 *    = flat[m] + tou[m], the dearest a kW of peak can cost in month m;
 *    month[h] the local month (0-11) of the series' hour h, billing[h] its
 *    billing month counted from the series' start (0, 1, ...). */
typedef struct ws_tariff_info {
    double adj, adj_rate;
    int adj_period;
    int tiered_periods;
    double tier_max, tier_top_rate;
    int has_demand;
    double flat[12], tou[12], demand[12];
    double max_demand;          /* the largest demand[m] */
    unsigned char month[371 * 24];
    unsigned short billing[371 * 24];
    int n_billing;              /* billing months in one period (billing[n-1] + 1) */
} ws_tariff_info;
/* As ws_series_load_json; info (may be NULL) gets what a tariff holds
 * beyond its energy rates (zeroed for a carbon history). */
int ws_series_load_tariff(ws_series *s, const char *path, const ws_tariff *tf,
                          ws_tariff_info *info, const ws_csv_limits *lim, ws_error *err);
/* 1 when path's first non-blank byte opens a JSON object, 0 when not
 * (a CSV, or gzip), -1 with err set when it cannot be read. */
int ws_series_is_json(const char *path, ws_error *err);
int ws_series_load_json(ws_series *s, const char *path, ws_series_kind kind,
                        const ws_tariff *tf, const ws_csv_limits *lim, ws_error *err);
/* Nonzero when tz is a zone --price-tz accepts. */
int ws_series_tz_ok(const char *tz);

/* Several series of one kind (the files of repeated --carbon, e.g. Zeus's
 * daily history files) as one, in time order whatever the order given:
 * each must start at or before the end of those before it (a gap is
 * refused, naming both files and times), and where two overlap they
 * must hold the same rate throughout (else refused, naming both files,
 * the time and the two rates; errors start with `where`, the option or
 * config key given, NULL: "--carbon"); the joined series runs from the
 * earliest start to the latest end. Takes the n parts (freed, also on
 * failure);
 * out's path names them all ("a.json + b.json"). */
int ws_series_join(ws_series *out, ws_series *parts, size_t n, const char *where,
                   ws_error *err);

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
