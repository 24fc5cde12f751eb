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

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
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
        if (isfinite(whole) && !close_to(whole, parts)) abort();
    }
    ws_series_free(&s);
    return 0;
}
