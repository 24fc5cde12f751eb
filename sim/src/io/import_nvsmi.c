/*
 * nvidia-smi CSV logs, as printed by
 *   nvidia-smi --query-gpu=timestamp,index,power.draw[,...] --format=csv[,nounits][,noheader] -lms N
 *
 * Header fields are separated by ", " and carry units ("power.draw [W]");
 * values have them too ("250.50 W") unless `nounits`. Timestamps are
 * "YYYY/MM/DD HH:MM:SS.mmm" on the machine's local clock. One row per GPU
 * per sample. Columns are found by name in any order: `timestamp`, the GPU
 * (`index`, else `pci.bus_id`, else `uuid`) and the power (`power.draw`,
 * else `power.draw.instant`, else `power.draw.average`); others are
 * ignored. Without a header (`noheader`) the columns must be in the query
 * order timestamp, index, power.draw, or in the order --columns gives
 * (the --query-gpu list). "[N/A]", "[Not Supported]" and similar bracketed
 * readings are skipped and counted. A malformed last line (a logger
 * stopped mid-write) is skipped with a warning.
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/name.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N_TIME, N_INDEX, N_BUS, N_UUID, N_POWER, N_INSTANT, N_AVERAGE, N_LIMIT,
       N_ENFORCED, N_COLS };

/* "power.draw [W]" -> "power.draw" in buf. */
static const char *bare_name(const char *h, char *buf, size_t size)
{
    snprintf(buf, size, "%s", h);
    char *s = ws_imp_trim(buf);
    char *br = strchr(s, '[');
    if (br) *br = '\0';
    return ws_imp_trim(s);
}

int ws_import_nvsmi(const char *path, const ws_csv_limits *lim,
                    ws_telemetry *out, ws_warnings *w, ws_error *err)
{
    return ws_import_nvsmi_columns(path, lim, NULL, out, w, err);
}

int ws_import_nvsmi_columns(const char *path, const ws_csv_limits *lim, const char *columns,
                            ws_telemetry *out, ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    out->kind = WS_TEL_POWER;
    if (!(out->path = strdup(path))) return ws_fail(err, "out of memory");
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    static const char *names[N_COLS] = {"timestamp", "index", "pci.bus_id", "uuid",
                                        "power.draw", "power.draw.instant",
                                        "power.draw.average", "power.limit",
                                        "enforced.power.limit"};
    int col[N_COLS];
    int rc = -1, r = ws_csv_next(c, err);
    size_t nf = 0;
    if (r < 0) goto out;
    if (r == 0) {
        ws_fail(err, "%s:1: empty file (expected nvidia-smi --format=csv output)", path);
        goto out;
    }
    for (int k = 0; k < N_COLS; k++) col[k] = -1;
    nf = ws_csv_nfields(c);
    char buf[256];
    int header = 0;                   /* a header names the timestamp column */
    for (size_t i = 0; i < nf && !header; i++)
        header = !strcmp(bare_name(ws_csv_field(c, i), buf, sizeof buf), "timestamp");
    if (header) {
        for (size_t i = 0; i < nf; i++) {
            const char *h = bare_name(ws_csv_field(c, i), buf, sizeof buf);
            for (int k = 0; k < N_COLS; k++)
                if (!strcmp(h, names[k])) {
                    if (col[k] >= 0) {
                        ws_fail(err, "%s:%ld: column '%s' appears twice", path,
                                ws_csv_line(c), h);
                        goto out;
                    }
                    col[k] = (int)i;
                }
        }
        if (columns) {
            ws_fail(err, "--columns: %s has a header naming its columns; --columns is for"
                    " a log without one (--format=csv,noheader)", path);
            goto out;
        }
    } else if (columns) {
        /* The --query-gpu list, in its order: the fields of every line. */
        size_t i = 0;
        const char *p = columns;
        for (;; i++) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
            const char *h = ws_imp_trim(buf);
            for (int k = 0; k < N_COLS; k++)
                if (!strcmp(h, names[k])) {
                    if (col[k] >= 0) {
                        ws_fail(err, "--columns: '%s' appears twice", h);
                        goto out;
                    }
                    col[k] = (int)i;
                }
            if (!comma) break;
            p = comma + 1;
        }
        if (i + 1 != nf) {
            ws_fail(err, "%s:%ld: %zu fields, but --columns names %zu; give the"
                    " --query-gpu list the log was written with", path, ws_csv_line(c), nf,
                    i + 1);
            goto out;
        }
    } else {
        if (nf != 3) {
            ws_fail(err, "%s:%ld: no header, and %zu fields: a log without a header"
                    " (noheader) has the columns timestamp, index, power.draw, or pass"
                    " --columns with its --query-gpu list (e.g. --columns"
                    " timestamp,index,name,power.draw,power.limit)", path, ws_csv_line(c),
                    nf);
            goto out;
        }
        col[N_TIME] = 0;
        col[N_INDEX] = 1;
        col[N_POWER] = 2;
    }
    int gpu = col[N_INDEX] >= 0 ? col[N_INDEX] : col[N_BUS] >= 0 ? col[N_BUS] : col[N_UUID];
    int pw = col[N_POWER] >= 0 ? col[N_POWER] : col[N_INSTANT] >= 0 ? col[N_INSTANT]
                                                                     : col[N_AVERAGE];
    int lc = col[N_LIMIT] >= 0 ? col[N_LIMIT] : col[N_ENFORCED];
    if (col[N_TIME] < 0 || gpu < 0 || pw < 0) {
        ws_fail(err, "%s%s:%ld: missing column '%s' (query at least"
                " --query-gpu=timestamp,index,power.draw)", header || !columns ? "" :
                "--columns: ", path, ws_csv_line(c),
                col[N_TIME] < 0 ? "timestamp" : gpu < 0 ? "index" : "power.draw");
        goto out;
    }
    long cut = 0;                     /* a last line skipped as incomplete */
    for (r = header ? ws_csv_next(c, err) : 1; r == 1; r = ws_csv_next(c, err)) {
        long line = ws_csv_line(c);
        if (!ws_csv_ended(c)) {
            /* No line end: the file stopped inside its last line, which
             * may parse ("262.00 W" cut to "26") and still be wrong. */
            cut = line;
            r = 0;
            break;
        }
        if (ws_csv_nfields(c) != nf) {
            ws_fail(err, "%s:%ld: %zu fields, but the %s has %zu (a truncated line?)",
                    path, line, ws_csv_nfields(c), header ? "header" : "first line", nf);
            goto bad_row;
        }
        char tb[128], gb[256], pb[128];
        snprintf(tb, sizeof tb, "%s", ws_csv_field(c, (size_t)col[N_TIME]));
        const char *ts = ws_imp_trim(tb);
        if (header && !strcmp(ts, "timestamp")) continue;    /* header again */
        snprintf(gb, sizeof gb, "%s", ws_csv_field(c, (size_t)gpu));
        snprintf(pb, sizeof pb, "%s", ws_csv_field(c, (size_t)pw));
        const char *id = ws_imp_trim(gb);
        char *p = ws_imp_trim(pb);
        double t, v, limit = NAN;
        if (ws_imp_nvsmi_time(ts, &t)) {
            ws_fail(err, "%s:%ld: timestamp: expected YYYY/MM/DD HH:MM:SS.mmm, got \"%s\"",
                    path, line, ts);
            goto bad_row;
        }
        if (!*id) {
            ws_fail(err, "%s:%ld: %s: must not be empty", path, line,
                    names[gpu == col[N_INDEX] ? N_INDEX : gpu == col[N_BUS] ? N_BUS : N_UUID]);
            goto bad_row;
        }
        if (ws_has_control(id)) {        /* never echoed raw: ws_fail escapes it */
            ws_fail(err, "%s:%ld: %s: \"%s\" has control characters", path, line,
                    names[gpu == col[N_INDEX] ? N_INDEX : gpu == col[N_BUS] ? N_BUS : N_UUID],
                    id);
            goto out;
        }
        if (lc >= 0) {       /* the limit, to check EPOCHS.csv's power_limit against */
            char lb[128];
            snprintf(lb, sizeof lb, "%s", ws_csv_field(c, (size_t)lc));
            char *q = ws_imp_trim(lb);
            size_t m = strlen(q);
            if (m > 2 && !strcmp(q + m - 2, " W")) q[m - 2] = '\0';
            if (*q != '[' && strcmp(q, "N/A")
                && (ws_imp_decimal(q, &limit) || !(limit > 0))) {
                ws_fail(err, "%s:%ld: %s: expected watts (e.g. \"250.00 W\"), got \"%s\"",
                        path, line, names[lc == col[N_LIMIT] ? N_LIMIT : N_ENFORCED], q);
                goto bad_row;
            }
        }
        if (*p == '[' || !strcmp(p, "N/A")) {        /* [N/A], [Not Supported] */
            if (ws_telemetry_missing(out, id, line, err)) goto out;
            continue;
        }
        size_t n = strlen(p);
        if (n > 2 && !strcmp(p + n - 2, " W")) p[n - 2] = '\0';
        if (ws_imp_decimal(p, &v) || v < 0) {
            snprintf(pb, sizeof pb, "%s", ws_csv_field(c, (size_t)pw));
            ws_fail(err, "%s:%ld: power.draw: expected watts (e.g. \"250.50 W\"), got"
                    " \"%s\"", path, line, ws_imp_trim(pb));
            goto bad_row;
        }
        if (ws_telemetry_add(out, id, t, v, line, err)) goto out;
        if (!isnan(limit)) ws_telemetry_set_limit(out, id, limit);
        continue;
    bad_row:
        /* A malformed last line is a logger stopped mid-write: skipped,
         * with a warning. Anywhere else it is an error. */
        {
            ws_error saved = *err;
            int next = ws_csv_next(c, err);
            if (next < 0) goto out;
            if (next == 1) {
                *err = saved;
                goto out;
            }
            cut = line;
            r = 0;
            break;
        }
    }
    out->cut_line = cut;
    if (cut)
        ws_warn(w, "%s:%ld: the last line is incomplete (the logger stopped mid-write?);"
                " skipped", path, cut);
    if (r < 0) goto out;
    if (out->n_gpu == 0) {
        ws_fail(err, "%s: no power readings (the log has no rows)", path);
        goto out;
    }
    if (out->n_missing)
        ws_warn(w, "%s: %zu reading%s without a power value ([N/A] or [Not"
                " Supported]) skipped; the signal is interpolated across them",
                path, out->n_missing, out->n_missing == 1 ? "" : "s");
    rc = 0;
out:
    ws_csv_close(c);
    return rc;
}
