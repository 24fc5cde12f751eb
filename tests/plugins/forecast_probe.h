/* What tests/plugins/forecast_probe.c records per call, shared with
 * test_forecast.c. */
#ifndef WS_TEST_FORECAST_PROBE_H
#define WS_TEST_FORECAST_PROBE_H

#define PROBE_MAX 256
#define PROBE_WINDOW 5400.0    /* s: the window of carbon_mean */

typedef struct probe_rec {
    char what;                 /* c create, R register_job, p predict,
                                  r observe_run */
    long recurrence;
    int attempt;
    double now_s, due_s, every_s, defer_s;
    double carbon, price;      /* forecast(kind, now_s, 0) */
    double carbon_mean;        /* forecast(carbon, now_s, PROBE_WINDOW) */
    double carbon_next, price_next;
    double refused;            /* 1: every refused query was NAN */
} probe_rec;

#endif
