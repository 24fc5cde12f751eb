/*
 * The power log of Zeus's old `zeus_monitor` (Zeus's zeus_monitor/zemo,
 * before ZeusMonitor): `zeus_monitor LOGFILE DURATION SLEEP_MS [GPU_IDX]`
 * polls one GPU through NVML and writes
 *
 *   Time,Power[,Temp,SMFreq,Mem]
 *   2022-07-13 02:07:36.708783111,32402
 *
 * Time is std::chrono::system_clock printed by date.h (UTC, nanoseconds);
 * Power is nvmlDeviceGetPowerUsage, milliwatts. One GPU per file, named
 * "0" (the file does not say which). Read as a power series in W; the
 * readers of nvidia-smi and ZeusMonitor logs hand such a file here when
 * its header starts Time,Power.
 */
#include "wattsim/import.h"
#include "import_util.h"

#include <stdlib.h>
#include <string.h>

int ws_imp_is_zemo(ws_csv *c)
{
    return ws_csv_nfields(c) >= 2 && !strcmp(ws_csv_field(c, 0), "Time")
        && !strcmp(ws_csv_field(c, 1), "Power");
}

int ws_import_zemo(const char *path, const ws_csv_limits *lim, ws_telemetry *out,
                   ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    out->kind = WS_TEL_POWER;
    out->utc = 1;
    if (!(out->path = strdup(path))) return ws_fail(err, "out of memory");
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    ws_csv_allow_nul_tail(c);
    int rc = -1, r = ws_csv_next(c, err);
    long cut = 0;
    if (r <= 0) {
        if (r == 0) ws_fail(err, "%s:1: empty file", path);
        goto out;
    }
    if (!ws_imp_is_zemo(c)) {
        ws_fail(err, "%s:1: expected zeus_monitor's header Time,Power", path);
        goto out;
    }
    const size_t nf = ws_csv_nfields(c);
    while ((r = ws_csv_next(c, err)) == 1) {
        const long line = ws_csv_line(c);
        if (!ws_csv_ended(c)) {             /* the file stopped inside its last line */
            cut = line;
            r = 0;
            break;
        }
        if (ws_csv_nfields(c) != nf) {
            ws_fail(err, "%s:%ld: %zu field%s, but the header has %zu", path, line,
                    ws_csv_nfields(c), ws_s(ws_csv_nfields(c)), nf);
            goto out;
        }
        double t, mw;
        int zoned;
        const char *ts = ws_csv_field(c, 0), *ps = ws_csv_field(c, 1);
        if (ws_parse_instant(ts, &t, &zoned) || zoned) {
            ws_fail(err, "%s:%ld: Time: expected zeus_monitor's YYYY-MM-DD HH:MM:SS.fffffffff"
                    " (UTC), got \"%s\"", path, line, ts);
            goto out;
        }
        if (ws_imp_decimal(ps, &mw) || mw < 0) {
            ws_fail(err, "%s:%ld: Power: expected milliwatts (NVML's power usage), got"
                    " \"%s\"", path, line, ps);
            goto out;
        }
        if (ws_telemetry_add(out, "0", t, mw / 1000, line, err)) goto out;
    }
    if (r < 0) goto out;
    out->cut_line = cut;
    ws_imp_cut_warning(c, path, cut, w);
    if (out->n_gpu == 0) {
        ws_fail(err, "%s: no power readings (the log has no rows)", path);
        goto out;
    }
    rc = 0;
out:
    ws_csv_close(c);
    return rc;
}
