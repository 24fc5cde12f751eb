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
 *
 * The clock: a GPU's timestamps go forward in the file's order, but for
 * jitter (clock_back); one that goes back further is a DST fall back or a
 * reset, refused by name. With an IANA zone (--log-tz America/New_York)
 * each wall time becomes its UTC instant, the repeated hour of a fall back
 * placed by the rows' order (the instant nearer the previous row's).
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/name.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N_TIME, N_INDEX, N_BUS, N_UUID, N_POWER, N_INSTANT, N_AVERAGE, N_LIMIT,
       N_ENFORCED, N_NAME, N_COLS };

/* "power.draw [W]" -> "power.draw" in buf. */
static const char *bare_name(const char *h, char *buf, size_t size)
{
    snprintf(buf, size, "%s", h);
    char *s = ws_imp_trim(buf);
    char *br = strchr(s, '[');
    if (br) *br = '\0';
    return ws_imp_trim(s);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A data row's time and line (a log without a GPU column). */
typedef struct row_time {
    double t;
    long line;
} row_time;

/* The scale to watts of a unit ("W", "mW", "kW"), 0 when not a power. */
static double unit_scale(const char *u)
{
    return !strcmp(u, "W") ? 1 : !strcmp(u, "mW") ? 1e-3 : !strcmp(u, "kW") ? 1e3 : 0;
}

/* The unit in brackets of header h ("power.draw [mW]" -> "mW"), in buf; ""
 * when none. */
static const char *header_unit(const char *h, char *buf, size_t size)
{
    const char *a = strchr(h, '['), *b = a ? strchr(a, ']') : NULL;
    if (!a || !b) return "";
    snprintf(buf, size, "%.*s", (int)(b - a - 1), a + 1);
    return ws_imp_trim(buf);
}

/* A reading "250.50 W", "250.50" (nounits, in the header's unit `scale`),
 * "250500 mW" or "0.25 kW": *v in W. 0 or -1. */
static int read_watts(char *p, double scale, double *v)
{
    char *sp = strrchr(p, ' ');
    if (sp) {
        const double k = unit_scale(sp + 1);
        if (k == 0) return -1;
        *sp = '\0';
        scale = k;
    }
    if (ws_imp_decimal(ws_imp_trim(p), v)) return -1;
    *v *= scale;
    return 0;
}

/* --gpu-cycle N: rows in order cycle through the GPUs, one per GPU per
 * sample; the rows of one cycle are read at about one time. A cycle whose
 * rows lie further from its first than half the step to the next cycle's
 * (or, for the last, from the previous) breaks it. t, line: every data
 * row's time and line, in the file's order. */
static int check_cycle(const char *path, int n, const row_time *r, size_t rows,
                       ws_error *err)
{
    const size_t N = (size_t)n;
    for (size_t c0 = 0; c0 < rows; c0 += N) {
        const double step = c0 + N < rows ? r[c0 + N].t - r[c0].t
                          : c0 >= N ? r[c0].t - r[c0 - N].t : INFINITY;
        for (size_t j = 1; j < N && c0 + j < rows; j++) {
            const double d = r[c0 + j].t - r[c0].t;
            if (d >= 0 && (d <= step / 2 || step <= 0)) continue;
            return ws_fail(err, "%s:%ld: --gpu-cycle %d: this row, GPU %zu of the sample"
                           " starting at line %ld, is %.6g s from that sample's first row,"
                           " %s: the rows do not cycle through %d GPUs; give the number of"
                           " GPUs the log was written with", path, r[c0 + j].line, n, j,
                           r[c0].line, d, d < 0 ? "before it" : "more than half the sample"
                           " interval", n);
        }
    }
    return 0;
}

/* A log without a GPU column read as one GPU, whose rows come in bursts
 * (a quarter or more of the steps under a tenth of the usual one): several
 * GPUs, one row each per sample. */
static int looks_interleaved(const row_time *r, size_t rows)
{
    if (rows < 8) return 0;
    double *d = malloc((rows - 1) * sizeof *d);
    if (!d) return 0;
    for (size_t i = 1; i < rows; i++) d[i - 1] = fabs(r[i].t - r[i - 1].t);
    qsort(d, rows - 1, sizeof *d, cmp_double);
    const double p90 = d[(rows - 1) * 9 / 10];
    size_t tiny = 0;
    for (size_t i = 0; i < rows - 1; i++) tiny += d[i] < p90 / 10;
    free(d);
    return p90 > 0 && tiny * 4 >= rows - 1;
}

int ws_import_nvsmi(const char *path, const ws_csv_limits *lim,
                    ws_telemetry *out, ws_warnings *w, ws_error *err)
{
    return ws_import_nvsmi_columns(path, lim, NULL, out, w, err);
}

int ws_import_nvsmi_columns(const char *path, const ws_csv_limits *lim, const char *columns,
                            ws_telemetry *out, ws_warnings *w, ws_error *err)
{
    const ws_nvsmi_opts o = {columns, NULL, 0};
    return ws_import_nvsmi_opts(path, lim, &o, out, w, err);
}

/* Jitter: how far a GPU's clock may step back, the larger of 2 s and 2
 * of its median steps (rows shuffled within a sample or two); a DST fall
 * back or a reset goes back by far more. */
static double jitter(const ws_tel_gpu *g, double *median)
{
    double *d = malloc(g->n * sizeof *d + 1);
    size_t m = 0;
    *median = 0;
    if (!d) return 2;
    for (size_t i = 1; i < g->n; i++)
        if (g->s[i].t != g->s[i - 1].t) d[m++] = fabs(g->s[i].t - g->s[i - 1].t);
    double med = 0;
    if (m) {
        qsort(d, m, sizeof *d, cmp_double);
        med = d[m / 2];
    }
    free(d);
    *median = med;
    return fmax(2, 2 * med);
}

/* How far a clock went back when a sample, due a step `step` after the
 * previous one, reads `d` before it: d + step; "1 h", "2 h" when that is
 * whole hours within a minute or a step, else d in seconds. */
static void fmt_back(double d, double step, char *buf, size_t size)
{
    const double h = round((d + step) / 3600);
    if (h >= 1 && fabs(d + step - 3600 * h) <= fmax(60, step)) snprintf(buf, size, "%g h", h);
    else snprintf(buf, size, "%.4g s", d);
}

/* The samples of every GPU, still in the file's order: a clock that goes
 * back is refused (see ws_import_nvsmi_opts). */
static int clock_back(const ws_telemetry *t, const char *zone, ws_error *err)
{
    for (size_t k = 0; k < t->n_gpu; k++) {
        const ws_tel_gpu *g = &t->gpu[k];
        if (g->n < 2) continue;
        double step;
        const double j = jitter(g, &step);
        for (size_t i = 1; i < g->n; i++) {
            const double d = g->s[i - 1].t - g->s[i].t;
            if (!(d > j)) continue;
            char back[32], a[32], b[32];
            fmt_back(d, step, back, sizeof back);
            ws_imp_fmt_time(g->s[i - 1].t, a, sizeof a);
            ws_imp_fmt_time(g->s[i].t, b, sizeof b);
            if (zone)
                return ws_fail(err, "%s: the clock goes back %s at line %ld (GPU %s: %s UTC"
                               " at line %ld, then %s UTC), even read in %s: a clock reset"
                               " (or another zone), not a DST change; the samples after it"
                               " cannot be placed: cut the log there", t->path, back,
                               g->s[i].line, g->id, a, g->s[i - 1].line, b, zone);
            return ws_fail(err, "%s: the clock goes back %s at line %ld (GPU %s: %s at line"
                           " %ld, then %s): a DST change or a clock reset; for a DST change"
                           " pass --log-tz with the zone's IANA name (e.g. America/New_York),"
                           " which places the repeated hour by the rows' order (no fixed"
                           " +HH:MM can); a reset cannot be placed: cut the log there",
                           t->path, back, g->s[i].line, g->id, a, g->s[i - 1].line, b);
        }
    }
    return 0;
}

int ws_import_nvsmi_opts(const char *path, const ws_csv_limits *lim,
                         const ws_nvsmi_opts *o, ws_telemetry *out, ws_warnings *w,
                         ws_error *err)
{
    const char *columns = o->columns;
    ws_zone_saved zsaved = {0};
    int zone_set = 0;
    double prev_u = NAN;              /* the last instant placed (zone only) */
    row_time *rt = NULL;              /* no GPU column: the rows' times */
    size_t rows = 0, rcap = 0;
    memset(out, 0, sizeof *out);
    out->kind = WS_TEL_POWER;
    switch (ws_imp_sniff(path)) {          /* other tools' text: named, not misread */
    case WS_IMP_NVSMI_DMON: return ws_imp_refuse_dmon(path, lim, err);
    case WS_IMP_DCGMI_DMON: return ws_fail(err, "%s: " WS_IMP_DCGMI_ADVICE, path);
    case WS_IMP_PROM:
        return ws_fail(err, "%s: a DCGM exporter scrape (Prometheus text): pass it with"
                       " --dcgm", path);
    case WS_IMP_JSON:
        return ws_fail(err, "%s: JSON, not nvidia-smi's CSV: a Prometheus query result goes"
                       " to --dcgm", path);
    case WS_IMP_ZEUSMON:
        if (ws_imp_sniff_zemo(path)) break;        /* zeus_monitor's: read below */
        return ws_fail(err, "%s: a ZeusMonitor log (start_time,window_name,...), not"
                       " nvidia-smi's CSV: pass it with --zeus-monitor", path);
    default: break;
    }
    if (!(out->path = strdup(path))) return ws_fail(err, "out of memory");
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -1;
    ws_csv_allow_nul_tail(c);          /* a killed logger's tail */
    static const char *names[N_COLS] = {"timestamp", "index", "pci.bus_id", "uuid",
                                        "power.draw", "power.draw.instant",
                                        "power.draw.average", "power.limit",
                                        "enforced.power.limit", "name"};
    int col[N_COLS];
    int rc = -1, r = ws_csv_next(c, err);
    size_t nf = 0;
    if (r < 0) goto out;
    if (r == 0) {
        ws_fail(err, "%s:1: empty file (expected nvidia-smi --format=csv output)", path);
        goto out;
    }
    if (ws_imp_is_zemo(c) && !columns) {   /* the old zeus_monitor's power log */
        ws_csv_close(c);
        ws_telemetry_free(out);
        if (o->zone || o->gpu_cycle)
            return ws_fail(err, "%s: zeus_monitor's power log (Time,Power) is in UTC and of"
                           " one GPU: %s does not apply", path,
                           o->zone ? "--log-tz" : "--gpu-cycle");
        return ws_import_zemo(path, lim, out, w, err);
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
            ws_fail(err, "%s:%ld: %zu field%s, but --columns names %zu; give the"
                    " --query-gpu list the log was written with", path, ws_csv_line(c), nf,
                    ws_s(nf), i + 1);
            goto out;
        }
    } else {
        if (nf != 3) {
            ws_fail(err, "%s:%ld: no header, and %zu field%s: a log without a header"
                    " (noheader) has the columns timestamp, index, power.draw, or pass"
                    " --columns with its --query-gpu list (e.g. --columns"
                    " timestamp,index,name,power.draw,power.limit)", path, ws_csv_line(c),
                    nf, ws_s(nf));
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
    if (col[N_TIME] < 0 || pw < 0) {
        ws_fail(err, "%s%s:%ld: missing column '%s' (query at least"
                " --query-gpu=timestamp,power.draw, and index with several GPUs)",
                header || !columns ? "" : "--columns: ", path, ws_csv_line(c),
                col[N_TIME] < 0 ? "timestamp" : "power.draw");
        goto out;
    }
    if (gpu >= 0 && o->gpu_cycle) {
        ws_fail(err, "--gpu-cycle: %s names its GPUs (column '%s'); --gpu-cycle is for a log"
                " without index, pci.bus_id or uuid", path,
                names[gpu == col[N_INDEX] ? N_INDEX : gpu == col[N_BUS] ? N_BUS : N_UUID]);
        goto out;
    }
    /* Units in the header ("power.draw [mW]"), honoured for values
     * without one (nounits); a unit not a power is refused. */
    double pscale = 1, lscale = 1;
    if (header) {
        char ub[64];
        const char *u = header_unit(ws_csv_field(c, (size_t)pw), ub, sizeof ub);
        if (*u && !(pscale = unit_scale(u))) {
            snprintf(buf, sizeof buf, "%s", ws_csv_field(c, (size_t)pw));
            ws_fail(err, "%s:%ld: column '%s': [%s] is not a unit of power (W, mW or kW)",
                    path, ws_csv_line(c), ws_imp_trim(buf), u);
            goto out;
        }
        u = lc >= 0 ? header_unit(ws_csv_field(c, (size_t)lc), ub, sizeof ub) : "";
        if (*u && !(lscale = unit_scale(u))) {
            snprintf(buf, sizeof buf, "%s", ws_csv_field(c, (size_t)lc));
            ws_fail(err, "%s:%ld: column '%s': [%s] is not a unit of power (W, mW or kW)",
                    path, ws_csv_line(c), ws_imp_trim(buf), u);
            goto out;
        }
    }

    if (o->zone) {
        if (ws_zone_set(o->zone, &zsaved, err)) goto out;
        zone_set = 1;
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
            ws_fail(err, "%s:%ld: %zu field%s, but the %s has %zu (a truncated line?)",
                    path, line, ws_csv_nfields(c), ws_s(ws_csv_nfields(c)),
                    header ? "header" : "first line", nf);
            goto bad_row;
        }
        char tb[128], gb[256], pb[128];
        snprintf(tb, sizeof tb, "%s", ws_csv_field(c, (size_t)col[N_TIME]));
        const char *ts = ws_imp_trim(tb);
        if (header && !strcmp(ts, "timestamp")) continue;    /* header again */
        if (gpu >= 0) snprintf(gb, sizeof gb, "%s", ws_csv_field(c, (size_t)gpu));
        else snprintf(gb, sizeof gb, "%zu", o->gpu_cycle ? rows % (size_t)o->gpu_cycle : 0);
        snprintf(pb, sizeof pb, "%s", ws_csv_field(c, (size_t)pw));
        const char *id = ws_imp_trim(gb);
        char *p = ws_imp_trim(pb);
        double t, v, limit = NAN;
        if (ws_imp_nvsmi_time(ts, &t)) {
            ws_fail(err, "%s:%ld: timestamp: expected YYYY/MM/DD HH:MM:SS.mmm, got \"%s\"",
                    path, line, ts);
            goto bad_row;
        }
        if (o->zone) {
            /* The wall time's instant in the zone; in the hour a fall back
             * repeats, the one nearer the row before (the file's order:
             * the first 01:30 is summer time, the second winter time). */
            double u[2];
            const int nu = ws_zone_instants(t, u);
            if (nu == 0) {
                ws_fail(err, "%s:%ld: timestamp \"%s\" does not exist in %s (its clock"
                        " springs forward over it): is %s the zone of the log's clock?",
                        path, line, ts, o->zone, o->zone);
                goto bad_row;
            }
            t = nu == 1 || isnan(prev_u) || fabs(u[0] - prev_u) <= fabs(u[1] - prev_u)
                ? u[0] : u[1];
            prev_u = t;
        }
        if (gpu < 0) {
            row_time *grown = ws_imp_grow(rt, &rcap, rows, sizeof *rt, 256, err);
            if (!grown) goto out;
            rt = grown;
            rt[rows++] = (row_time){t, line};
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
            if (*q != '[' && strcmp(q, "N/A")
                && (read_watts(q, lscale, &limit) || !(limit > 0))) {
                ws_fail(err, "%s:%ld: %s: expected watts (e.g. \"250.00 W\"), got \"%s\"",
                        path, line, names[lc == col[N_LIMIT] ? N_LIMIT : N_ENFORCED], q);
                goto bad_row;
            }
        }
        if (*p == '[' || !strcmp(p, "N/A")) {        /* [N/A], [Not Supported] */
            if (ws_telemetry_missing(out, id, line, err)) goto out;
            continue;
        }
        if (read_watts(p, pscale, &v) || v < 0) {
            snprintf(pb, sizeof pb, "%s", ws_csv_field(c, (size_t)pw));
            ws_fail(err, "%s:%ld: power.draw: expected watts (e.g. \"250.50 W\"), got"
                    " \"%s\"", path, line, ws_imp_trim(pb));
            goto bad_row;
        }
        if (ws_telemetry_add(out, id, t, v, line, err)) goto out;
        if (!isnan(limit)) ws_telemetry_set_limit(out, id, limit);
        if (col[N_NAME] >= 0) {            /* the model, to tell a mixed node */
            char mb[128];
            snprintf(mb, sizeof mb, "%s", ws_csv_field(c, (size_t)col[N_NAME]));
            const char *m = ws_imp_trim(mb);
            if (!ws_has_control(m) && ws_telemetry_set_model(out, id, m)) {
                ws_fail(err, "out of memory");
                goto out;
            }
        }
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
    if (r >= 0) ws_imp_cut_warning(c, path, cut, w);
    if (r < 0) goto out;
    if (out->n_gpu == 0) {
        ws_fail(err, "%s: no power readings (the log has no rows)", path);
        goto out;
    }
    if (gpu < 0 && o->gpu_cycle && check_cycle(path, o->gpu_cycle, rt, rows, err))
        goto out;
    if (gpu < 0 && !o->gpu_cycle && looks_interleaved(rt, rows)) {
        ws_fail(err, "%s: no GPU column (index, pci.bus_id or uuid), and the rows come in"
                " bursts at about one time, as nvidia-smi writes several GPUs (one row per"
                " GPU per sample): pass --gpu-cycle N with the number of GPUs, or log with"
                " --query-gpu=timestamp,index,power.draw", path);
        goto out;
    }
    if (clock_back(out, o->zone, err)) goto out;
    if (out->n_missing)
        ws_warn(w, "%s: %zu reading%s without a power value ([N/A] or [Not"
                " Supported]) skipped; the signal is interpolated across them",
                path, out->n_missing, out->n_missing == 1 ? "" : "s");
    rc = 0;
out:
    free(rt);
    if (zone_set) ws_zone_restore(&zsaved);
    ws_csv_close(c);
    return rc;
}
