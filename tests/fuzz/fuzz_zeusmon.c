/*
 * libFuzzer harness for the ZeusMonitor log reader
 * (sim/src/io/import_zeusmon.c): every window read has a finite start,
 * a positive elapsed time and, per GPU column, one energy (NAN or >= 0).
 * A log with zeus_monitor's Time,Power header is read as a power series
 * (import_zemo.c) and checked as every series is (fuzz_telemetry.h).
 */
#include <math.h>
#include "fuzz_telemetry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    const char *path = fuzz_memfd_path(&fd);
    fuzz_put_fd(fd, data, size);
    ws_csv_limits lim = {FUZZ_MAX_LINE, FUZZ_MAX_BYTES};
    ws_error err = {{0}};
    ws_telemetry t;
    ws_warnings w = {0};
    if (ws_import_zeusmon(path, &lim, &t, &w, &err)) {
        fuzz_check_error(&err);
    } else if (t.kind == WS_TEL_POWER) {         /* zeus_monitor's Time,Power */
        if (t.n_win || t.n_gpu != 1) abort();
        fuzz_telemetry_check(&t, &w);
    } else {
        if (t.kind != WS_TEL_WINDOWS || t.n_win == 0 || t.n_gpu == 0) abort();
        for (size_t k = 0; k < t.n_win; k++)
            if (!isfinite(t.win[k].start) || !(t.win[k].elapsed > 0)) abort();
        for (size_t g = 0; g < t.n_gpu; g++) {
            if (t.gpu[g].n != t.n_win) abort();
            for (size_t k = 0; k < t.n_win; k++)
                if (t.gpu[g].s[k].v < 0) abort();
        }
    }
    ws_telemetry_free(&t);
    ws_warnings_free(&w);
    return 0;
}
