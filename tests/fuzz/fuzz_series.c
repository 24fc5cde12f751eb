/*
 * libFuzzer harness for the carbon-intensity / price series reader
 * (sim/src/io/series.c). On every series that reads, the invariants the
 * accounting relies on: contiguous intervals in order, finite values >= 0,
 * prefix integrals that add up, and integrals that are additive over
 * adjacent windows (also across the wrap-around).
 */
#include <math.h>

#include "fuzz_util.h"
#include "wattsim/series.h"

/* Equal up to rounding: relative 1e-9, plus what the window's ends can
 * move by. Times are absolute Unix seconds, so a window's ends are only
 * known to an ulp of the time (2.4e-7 s in 2022): at the series' highest
 * rate that is `quantum` of the integral per end, and a sum of two
 * windows has a few more ends than one (the fuzzer found a 16 s series at
 * 532,901 g/kWh, whose parts differ by 0.13 in 1.2e7). */
static int close_to(double a, double b, double quantum)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b))) + 8 * quantum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);
    ws_csv_limits lim = {FUZZ_MAX_LINE, FUZZ_MAX_BYTES};
    ws_error err = {{0}};
    ws_series s;
    ws_series_kind kind = size && (data[0] & 1) ? WS_SERIES_PRICE : WS_SERIES_CARBON;
    if (ws_series_load(&s, path, kind, &lim, &err)) {
        fuzz_check_error(&err);
        return 0;
    }
    if (!s.n || !(s.end > s.start)) abort();
    for (size_t i = 0; i < s.n; i++) {
        if (!isfinite(s.value[i]) || s.value[i] < 0) abort();
        if (i && !(s.t0[i] > s.t0[i - 1])) abort();
        if (!(s.cum[i + 1] >= s.cum[i])) abort();
    }
    double period = s.end - s.start;
    if (isfinite(period) && period < 1e12) {
        double a = s.start + 0.3 * period, d1 = 0.45 * period, d2 = 0.9 * period;
        double whole = ws_series_integral(&s, a, d1 + d2, NULL);
        double parts = ws_series_integral(&s, a, d1, NULL)
                       + ws_series_integral(&s, a + d1, d2, NULL);
        double top = 0;
        for (size_t i = 0; i < s.n; i++) top = fmax(top, s.value[i]);
        double ulp = nextafter(fabs(s.end), INFINITY) - fabs(s.end);
        if (isfinite(whole) && !close_to(whole, parts, top * ulp)) abort();
    }
    ws_series_free(&s);
    return 0;
}
