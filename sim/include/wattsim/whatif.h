/*
 * What-if transforms (docs/model.md, "What-if transforms"): questions about a job
 * that its traces did not measure, answered by changing the numbers the
 * engine works on, never the engine's loop.
 *
 *  - power cap W (per GPU): knobs whose power limit is above W are
 *    removed; a batch size left without a knob drops out with its runs.
 *    If b0's default knob (b0 at its highest limit) goes, the default
 *    becomes b0 at the highest remaining limit; if b0 has no limit left,
 *    it is an error. MaxPower (the price of time in the cost) stays the
 *    uncapped job's, so costs with and without a cap compare.
 *  - job power cap W: the same for a knob whose limit x gpus_per_job is
 *    above W (a rack's or a job's budget over all its GPUs).
 *  - idle power W is one GPU's; a job waits at W x gpus_per_job = I.
 *  - input stall S: a fraction S of every epoch's wall time is spent
 *    waiting for input at I watts:
 *        t' = t / (1 - S),   e' = t p + (t' - t) I,   p' = e' / t'.
 *  - input rate R with N samples per epoch: the pipeline delivers an
 *    epoch's samples in N / R seconds, and the GPUs wait for the rest:
 *        t' = max(t, N / R), e' = t p + (t' - t) I,   p' = e' / t'.
 *  - carbon / price series: each run's grams CO2eq and dollars integrate
 *    its energy, at its average power, over the intervals its wall time
 *    spans on the simulated clock (recurrences back to back from `start`).
 *  - objective carbon (price): the cost policies minimise becomes
 *        eta * G * k + (1 - eta) * MaxPower * T,   k = 3.6e6 / mean rate,
 *    G the run's grams (dollars) and mean rate the series' time-weighted
 *    mean (gCO2/kWh, $/kWh): G * k is in joules-equivalent at the series'
 *    mean rate, so eta keeps its meaning and a constant series gives the
 *    energy cost. The early-stopping budget stays in the time-invariant
 *    cost eta * E + (1 - eta) * MaxPower * T (least cost so far and epoch
 *    alike; engine.c says why), so a series never starves a run.
 *
 *  - schedule (--every D): recurrence k (from 0) is due at start + k D and
 *    starts then, or when recurrence k - 1 finished if later (late).
 *  - deferral (--defer-up-to D): a recurrence due at t starts its first
 *    try at the s in [t, t + D] that minimises the integral of the rate
 *    over [s, s + T], T the run's duration (its knob chosen at t, its
 *    path drawn as usual): the run's grams (dollars) at constant power. On
 *    a piecewise-constant series that integral is piecewise linear in s,
 *    so the least is at t, t + D, an interval boundary b or b - T within
 *    [t, t + D]; ties go to the earliest. A perfect forecast; waiting
 *    costs nothing. Later tries follow back to back.
 *
 * The table transforms are pure functions from one knob table to a new
 * one; the per-run accounting is a pure function of the run's energy,
 * duration and start time.
 */
#ifndef WATTSIM_WHATIF_H
#define WATTSIM_WHATIF_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/series.h"
#include "wattsim/trace.h"

typedef enum ws_objective { WS_OBJ_ENERGY, WS_OBJ_CARBON, WS_OBJ_PRICE } ws_objective;

typedef struct ws_whatif {
    double power_cap;          /* W; 0 = none */
    double input_stall;        /* 0 = none */
    double idle_power;
    int has_carbon, has_price; /* series loaded */
    ws_series carbon;          /* gCO2eq/kWh */
    ws_series price;           /* $/kWh (a constant price is a series too) */
    double start;              /* Unix s of the first recurrence */
    ws_objective objective;
    double k;                  /* J-equivalent per g (carbon) or per $ */
    const char *where_cap;     /* where the cap was given, for errors */
    double every;              /* s between scheduled recurrences; 0: back
                                  to back */
    double defer;              /* s a recurrence may wait; 0: none */
    const ws_series *defer_series;  /* what deferral minimises: the
                                  objective's series, else carbon, else price */
    double job_power_cap;      /* W over the job's GPUs; 0 = none */
    const char *where_job_cap;
    double input_rate;         /* samples/s; 0 = none */
    double samples_per_epoch;
    ws_tariff_info *tariff;    /* an OpenEI price's adj, tiers and demand
                                  charges; NULL for any other price */
    int demand_charge;         /* plan --demand-charge include: add the
                                  job's demand charge (ws_whatif_demand_add) */
    int carbon_basis;          /* ws_carbon_basis the carbon series was read on */
    int price_adjustments;     /* a tariff's adj added (--price-adjustments) */
    char **carbon_files;       /* the files joined into carbon when several
                                  (as given), for provenance; else NULL */
    size_t n_carbon_files;
} ws_whatif;

/* Resolve a config's what-ifs: load the series, fix start and k. A
 * missing or malformed series file is an error naming FILE:LINE; a start
 * outside the series names the key or option. */
int ws_whatif_load(ws_whatif *w, const ws_whatif_spec *spec,
                   const ws_csv_limits *lim, ws_error *err);
void ws_whatif_free(ws_whatif *w);

/* Nonzero when w changes anything (a transform, a series, an objective). */
int ws_whatif_active(const ws_whatif *w);

/* Nonzero when w's price is a constant (--price 0.12), not a file. */
int ws_whatif_price_constant(const ws_whatif *w);

/* Nonzero when runs carry emissions / money (a series is given). */
int ws_whatif_accounts(const ws_whatif *w);

/* Nonzero when w changes the knob table (a cap, a stall, an input rate). */
int ws_whatif_transforms(const ws_whatif *w);

/* The knob-table transforms (power caps, input stall or rate) of `in` into a new
 * table `out` (which owns its arrays; free with ws_job_free). `note`
 * (may be NULL) gets one line when the cap moves the default knob or
 * drops batch sizes, else "". */
int ws_whatif_apply(const ws_job_table *in, const ws_whatif *w,
                    ws_job_table *out, char *note, size_t note_size,
                    ws_error *err);

/* One run's accounting: what it emits and costs when it draws energy_j
 * over [clock, clock + time_s]. co2_g / usd are 0 without their series.
 * *cost is replaced by the objective's cost when the objective is carbon
 * or price (left as is for energy). *wrapped is set when the run reaches
 * past the end of a series. */
void ws_whatif_run(const ws_whatif *w, double clock, double energy_j,
                   double time_s, double eta, double max_power,
                   double *co2_g, double *usd, double *cost, int *wrapped);

/* The deferred start of a run of duration dur due at time t (Unix s):
 * t itself without deferral. */
double ws_whatif_defer(const ws_whatif *w, double t, double dur);

/* The carbon intensity (gCO2eq/kWh) and price ($/kWh) at time `clock`,
 * NAN for a series not given: what policies see in ws_ctx. */
void ws_whatif_rates(const ws_whatif *w, double clock, double *carbon_intensity,
                     double *price);

/* What a tariff holds that the hourly price leaves out, for a job whose
 * highest power (its most power-hungry knob, all its GPUs) is peak_w: an
 * ignored adj with its size, tiers with the hours at peak_w that the first
 * tier lasts a month, demand charges with their cost at peak_w; "" when
 * none (or no tariff). One line, "; "-separated. */
void ws_whatif_tariff_note(const ws_whatif *w, double peak_w, char *buf, size_t size);

/* The demand charge (plan --demand-charge include): runs added in time
 * order, each drawing power_w over [a, a + dur]; a billing month of the
 * tariff (its local calendar month, counted along the series, wrapping
 * around as the price does) that any run touches is charged once, at
 * power_w x the month's dearest demand rate (flat + the highest
 * time-of-use demand rate of its schedule, ws_tariff_info.demand): as if
 * the job's power added to the site's peak at its dearest hour, an upper
 * bound. acc starts zeroed; acc->usd is the total so far. */
typedef struct ws_demand_acc {
    double usd;
    double last_key;           /* the last billing month charged; 0: none */
    int any;
} ws_demand_acc;
void ws_whatif_demand_add(const ws_whatif *w, ws_demand_acc *acc, double a, double dur,
                          double power_w);
/* plan's --demand-charge VALUE (opt as typed; value NULL: not given):
 * include or ignore; include needs an OpenEI tariff with demand charges.
 * Sets w->demand_charge; 0, or -1 with err set. */
int ws_whatif_set_demand_charge(ws_whatif *w, const char *value, const char *opt,
                                ws_error *err);

/* One line describing the active what-ifs ("" when none), e.g.
 * "power cap 175 W; carbon FILE from 2022-10-20T06:20:00Z; objective carbon". */
void ws_whatif_describe(const ws_whatif *w, char *buf, size_t size);

#endif
