/*
 * ZeusMonitor CSV logs (zeus.monitor.ZeusMonitor(log_file=...)): one row
 * per measurement window,
 *   start_time,window_name,elapsed_time,gpu0_energy[,gpu1_energy,...]
 * with start_time in Unix seconds, elapsed_time in s and energies in J.
 * GPU i is named "i" (the column gpu<i>_energy). An empty energy field is
 * kept as NAN and is an error only if an epoch uses that window.
 */
#include "wattsim/import.h"
#include "import_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ws_import_zeusmon(const char *path, const ws_csv_limits *lim,
                      ws_telemetry *out, ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    out->kind = WS_TEL_WINDOWS;
    if (!(out->path = strdup(path))) return ws_fail(err, "out of memory");
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    ws_csv_allow_nul_tail(c);          /* a killed logger's tail */
    ws_imp_names names = {0};
    int rc = -1, r = ws_csv_next(c, err);
    size_t nf = 0, cap = 0;
    ws_imp_col cols[3] = {{"start_time", 1, -1}, {"window_name", 1, -1},
                          {"elapsed_time", 1, -1}};
    if (r < 0) goto out;
    if (r == 0) {
        ws_fail(err, "%s:1: empty file (expected a ZeusMonitor log header"
                " start_time,window_name,elapsed_time,gpu0_energy,...)", path);
        goto out;
    }
    if (ws_imp_is_zemo(c)) {             /* the old zeus_monitor's power log */
        ws_csv_close(c);
        ws_telemetry_free(out);
        return ws_import_zemo(path, lim, out, w, err);
    }
    if (ws_imp_columns(c, cols, 3, 0, err)) goto out;
    nf = ws_csv_nfields(c);
    for (size_t i = 0; i < nf; i++) {
        const char *h = ws_csv_field(c, i);
        long idx;
        char num[32];
        size_t len = strlen(h);
        if ((int)i == cols[0].index || (int)i == cols[1].index || (int)i == cols[2].index)
            continue;
        if (len < 11 || len > 40 || strncmp(h, "gpu", 3) || strcmp(h + len - 7, "_energy")) {
            ws_fail(err, "%s:%ld: unknown column '%s' (expected start_time,"
                    "window_name,elapsed_time,gpu<i>_energy...)", path, ws_csv_line(c), h);
            goto out;
        }
        snprintf(num, sizeof num, "%.*s", (int)(len - 10), h + 3);
        /* The GPU is named by its index as a number: gpu01_energy is GPU 1
         * (ZeusMonitor itself writes no leading zeros), and a second
         * column for it, gpu1_energy beside gpu01_energy, is refused
         * rather than summed as another GPU. */
        if (strspn(num, "0123456789") != strlen(num) || !num[0] || strlen(num) > 7) {
            ws_fail(err, "%s:%ld: bad GPU column '%s'", path, ws_csv_line(c), h);
            goto out;
        }
        idx = strtol(num, NULL, 10);
        snprintf(num, sizeof num, "%ld", idx);
        if (ws_telemetry_has_gpu(out, num)) {
            const char *first = h;
            for (size_t j = 0; j < i; j++) {
                const char *o = ws_csv_field(c, j);
                size_t m = strlen(o);
                if (m > 10 && !strncmp(o, "gpu", 3) && !strcmp(o + m - 7, "_energy")
                    && strtol(o + 3, NULL, 10) == idx) { first = o; break; }
            }
            if (strcmp(first, h))
                ws_fail(err, "%s:%ld: columns '%s' and '%s' both name GPU %ld; keep one",
                        path, ws_csv_line(c), first, h, idx);
            else
                ws_fail(err, "%s:%ld: column '%s' appears twice", path, ws_csv_line(c), h);
            goto out;
        }
        /* A GPU with no samples yet: created by adding then clearing one. */
        if (ws_telemetry_add(out, num, 0, 0, 0, err)) goto out;
        out->gpu[out->n_gpu - 1].n = 0;
    }
    if (out->n_gpu == 0) {
        ws_fail(err, "%s:%ld: no gpu<i>_energy column", path, ws_csv_line(c));
        goto out;
    }
    long cut = 0;                     /* a last line skipped as incomplete */
    while ((r = ws_csv_next(c, err)) == 1) {
        long line = ws_csv_line(c);
        if (!ws_csv_ended(c)) {
            /* No line end: the file stopped inside its last line, which
             * may parse (an energy cut short) and still be wrong. */
            cut = line;
            break;
        }
        if (ws_csv_nfields(c) != nf) {
            /* The last line, short: a logger stopped mid-write; skipped
             * with a warning. Anywhere else it is an error. */
            ws_error saved = *err;
            ws_fail(&saved, "%s:%ld: %zu field%s, but the header has %zu (a truncated"
                    " line?)", path, line, ws_csv_nfields(c), ws_s(ws_csv_nfields(c)), nf);
            if ((r = ws_csv_next(c, err)) < 0) goto out;
            if (r == 1) {
                *err = saved;
                goto out;
            }
            cut = line;
            break;
        }
        double start, elapsed;
        const char *s = ws_csv_field(c, (size_t)cols[0].index);
        const char *e = ws_csv_field(c, (size_t)cols[2].index);
        if (ws_imp_decimal(s, &start) || start < 0) {
            ws_fail(err, "%s:%ld: start_time: expected Unix seconds, got \"%s\"", path,
                    line, s);
            goto out;
        }
        if (ws_imp_decimal(e, &elapsed) || !(elapsed > 0)) {
            ws_fail(err, "%s:%ld: elapsed_time: expected positive seconds, got \"%s\"",
                    path, line, e);
            goto out;
        }
        ws_tel_window *grown = ws_imp_grow(out->win, &cap, out->n_win,
                                           sizeof *out->win, 256, err);
        if (!grown) goto out;
        out->win = grown;
        size_t at;
        if (!ws_imp_intern_at(&names, ws_csv_field(c, (size_t)cols[1].index), &at)) {
            ws_fail(err, "out of memory");
            goto out;
        }
        out->win[out->n_win++] = (ws_tel_window){start, elapsed, line, at};
        size_t g = 0;
        for (size_t i = 0; i < nf; i++) {
            if ((int)i == cols[0].index || (int)i == cols[1].index || (int)i == cols[2].index)
                continue;
            const char *f = ws_csv_field(c, i);
            double v = NAN;
            if (*f && (ws_imp_decimal(f, &v) || v < 0)) {
                ws_fail(err, "%s:%ld: gpu%s_energy: expected joules, got \"%s\"",
                        path, line, out->gpu[g].id, f);
                goto out;
            }
            if (ws_telemetry_add(out, out->gpu[g].id, start, v, line, err)) goto out;
            g++;
        }
    }
    if (r < 0) goto out;
    out->cut_line = cut;
    if (r >= 0) ws_imp_cut_warning(c, path, cut, w);
    if (out->n_win == 0) {
        ws_fail(err, "%s:2: no windows after the header", path);
        goto out;
    }
    rc = 0;
out:
    ws_csv_close(c);
    out->win_name = names.s;                   /* moved: the telemetry frees them */
    out->n_win_name = names.n;
    ws_hindex_free(&names.index);
    return rc;
}
