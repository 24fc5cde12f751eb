/*
 * libFuzzer harness for the carbon-intensity / price series readers
 * (sim/src/io/series.c, series_json.c): the plain CSV, the Electricity
 * Maps CSV export and API history (JSON), on both emission-factor bases,
 * and OpenEI tariffs (JSON) with their adj, tiers and demand charges.
 * The first byte chooses: odd, a price (a JSON one is read as a tariff
 * from a fixed start, bit 1 choosing a fixed zone, bit 2 adding adj);
 * even, a carbon series, read on the lifecycle and then the direct basis.
 * So a seed that opens with '{' (0x7b) is a tariff, and a history seed
 * opens with a blank or newline. On every series that reads, the
 * invariants the accounting relies on: contiguous intervals in order,
 * finite values >= 0, prefix integrals that add up, and integrals that
 * are additive over adjacent windows (also across the wrap-around); on a
 * tariff, its months and billing months in range, finite demand rates,
 * and a finite demand charge.
 */
#include <math.h>

#include "fuzz_util.h"
#include "wattsim/series.h"
#include "wattsim/whatif.h"

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

static void check(ws_series *s)
{
    if (!s->n || !(s->end > s->start)) abort();
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->value[i]) || s->value[i] < 0) abort();
        if (i && !(s->t0[i] > s->t0[i - 1])) abort();
        if (!(s->cum[i + 1] >= s->cum[i])) abort();
    }
    double period = s->end - s->start;
    if (isfinite(period) && period < 1e12) {
        double a = s->start + 0.3 * period, d1 = 0.45 * period, d2 = 0.9 * period;
        double whole = ws_series_integral(s, a, d1 + d2, NULL);
        double parts = ws_series_integral(s, a, d1, NULL) + ws_series_integral(s, a + d1, d2, NULL);
        double top = 0;
        for (size_t i = 0; i < s->n; i++) top = fmax(top, s->value[i]);
        double ulp = nextafter(fabs(s->end), INFINITY) - fabs(s->end);
        if (isfinite(whole) && !close_to(whole, parts, top * ulp)) abort();
    }
}

static void tariff(const char *path, int bits, const ws_csv_limits *lim)
{
    static ws_tariff_info info;
    ws_error err = {{0}};
    ws_tariff tf = {1700000000.0, bits & 2 ? "+05:30" : NULL, NULL, (bits & 4) != 0,
                    WS_BASIS_LIFECYCLE};
    ws_whatif w = {0};
    if (ws_series_load_tariff(&w.price, path, &tf, &info, lim, &err)) {
        fuzz_check_error(&err);
        return;
    }
    check(&w.price);
    if (info.n_billing < 12 || info.n_billing > 14) abort();
    for (size_t h = 0; h < w.price.n; h++)
        if (info.month[h] > 11 || info.billing[h] >= info.n_billing) abort();
    for (int m = 0; m < 12; m++)
        if (!isfinite(info.demand[m]) || info.demand[m] < 0 || info.demand[m] > info.max_demand)
            abort();
    if (!isfinite(info.adj) || info.tiered_periods < 0) abort();
    /* the demand charge of a 2 kW job over 40 days from the start: at
     * most two months' dearest rates per month touched */
    w.has_price = 1;
    w.tariff = &info;
    ws_demand_acc acc = {0};
    ws_whatif_demand_add(&w, &acc, w.price.start, 40 * 86400.0, 2000);
    if (!isfinite(acc.usd) || acc.usd < 0 || acc.usd > 2 * 3 * info.max_demand + 1e-9) abort();
    char note[1024];
    ws_whatif_tariff_note(&w, 2000, note, sizeof note);
    if (strchr(note, '\n')) abort();
    ws_series_free(&w.price);
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
    if (kind == WS_SERIES_PRICE) {
        const int json = ws_series_is_json(path, &err);
        if (json < 0) {
            fuzz_check_error(&err);
            return 0;
        }
        if (json) {
            tariff(path, data[0], &lim);
            return 0;
        }
    }
    for (int basis = 0; basis < (kind == WS_SERIES_CARBON ? 2 : 1); basis++) {
        if (ws_series_load_basis(&s, path, kind, (ws_carbon_basis)basis, &lim, &err)) {
            fuzz_check_error(&err);
            continue;
        }
        check(&s);
        ws_series_free(&s);
    }
    return 0;
}
