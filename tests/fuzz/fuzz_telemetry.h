/*
 * Shared by the telemetry harnesses (fuzz_nvsmi, fuzz_dcgm, fuzz_zeusmon
 * for zeus_monitor's power logs): once a log
 * reads, select every GPU and prepare the series; then the energy over
 * any window must be finite and >= 0, and additive: E(a, b) = E(a, m) +
 * E(m, b) (the integral of a piecewise-linear signal, or of a counter's
 * increases, splits exactly up to rounding); its error estimate is >= 0.
 */
#ifndef WS_FUZZ_TELEMETRY_H
#define WS_FUZZ_TELEMETRY_H

#include <math.h>
#include "fuzz_util.h"
#include "wattsim/import.h"

static inline void fuzz_telemetry_check(ws_telemetry *t, ws_warnings *w)
{
    ws_error err = {{0}};
    if (ws_telemetry_select(t, NULL, 0, "--gpus", &err)
        || ws_telemetry_prepare(t, w, &err)) {
        fuzz_check_error(&err);
        return;
    }
    for (size_t k = 0; k < t->n_gpu; k++) {
        const ws_tel_gpu *g = &t->gpu[k];
        double a = g->s[0].t, b = g->s[g->n - 1].t, gap;
        long line;
        for (int i = 0; i < 4; i++) {
            double lo = a + (b - a) * i / 8, hi = b - (b - a) * i / 8, m = (lo + hi) / 2;
            if (!(lo <= m && m <= hi)) continue;
            double whole = ws_tel_energy(g, t->kind, lo, hi, &gap, &line);
            double left = ws_tel_energy(g, t->kind, lo, m, &gap, &line);
            double right = ws_tel_energy(g, t->kind, m, hi, &gap, &line);
            if (!isfinite(whole)) continue;          /* huge values may overflow */
            if (whole < 0 || left < -1e-9 * fabs(whole) || right < -1e-9 * fabs(whole))
                abort();
            double scale = fabs(whole) + fabs(left) + fabs(right);
            if (fabs(whole - left - right) > 1e-6 * scale + 1e-9) abort();
            /* the error estimate is a size: never negative or NaN */
            if (!(ws_tel_energy_bound(g, t->kind, lo, hi) >= 0)) abort();
        }
    }
}

#endif
