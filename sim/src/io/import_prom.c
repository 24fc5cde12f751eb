/*
 * Telemetry in text formats other than nvidia-smi's CSV: recognised by
 * their first lines (ws_imp_sniff), then read or refused by name.
 *
 * DCGM exporter scrapes, the Prometheus text exposition format
 * (curl http://HOST:9400/metrics, appended scrape after scrape):
 *   # HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
 *   # TYPE DCGM_FI_DEV_POWER_USAGE gauge
 *   DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-...",modelName="..."} 61.5 1700000000000
 * A sample line is a metric name, optional {label="value",...} (values
 * with \", \\ and \n escapes), a value and an optional timestamp in
 * milliseconds. As the JSON of a range query (import_dcgm.c):
 * DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ) is preferred to
 * DCGM_FI_DEV_POWER_USAGE (W); the `gpu` label names the GPU; NaN
 * readings are skipped and counted; other metrics are ignored. A sample
 * without a timestamp -- the exporter writes none: one scrape is one
 * instant -- is refused, naming that and the query that gives a series.
 *
 * `nvidia-smi dmon` ("# gpu pwr ..." and "# Idx W ..." header lines,
 * columns separated by blanks) and `dcgmi dmon` ("#Entity POWER ...") are
 * recognised and refused with the command that records or converts them
 * into a format read here: dmon -o DT lines into nvidia-smi's CSV (an awk
 * line built from the file's own header), a log without timestamps into
 * a new recording.
 */
#include "wattsim/infile.h"
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/input.h"
#include "wattsim/name.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POWER_METRIC "DCGM_FI_DEV_POWER_USAGE"
#define ENERGY_METRIC "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"

/* The first non-blank line's start: what the file is. */
ws_imp_format ws_imp_sniff(const char *path)
{
    ws_error err;
    int fd = ws_input_open(path, &err);
    if (fd < 0) return WS_IMP_OTHER;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return WS_IMP_OTHER;
    buf[n] = '\0';
    const char *p = buf;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p == '{' || *p == '[') return WS_IMP_JSON;
    if (!strncmp(p, "#Entity", 7) || !strncmp(p, "# Entity", 8)) return WS_IMP_DCGMI_DMON;
    if (*p == '#') {
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t') q++;
        if (!strncmp(q, "gpu ", 4) || !strncmp(q, "Date ", 5) || !strncmp(q, "Time ", 5))
            return WS_IMP_NVSMI_DMON;
        if (!strncmp(q, "HELP ", 5) || !strncmp(q, "TYPE ", 5)) return WS_IMP_PROM;
        return WS_IMP_OTHER;
    }
    if (!strncmp(p, "DCGM_", 5)) return WS_IMP_PROM;
    if (!strncmp(p, "timestamp", 9)
        || (isdigit((unsigned char)p[0]) && p[4] == '/' && p[7] == '/'))
        return WS_IMP_NVSMI_CSV;
    if (!strncmp(p, "start_time,", 11) || !strncmp(p, "Time,Power", 10))
        return WS_IMP_ZEUSMON;         /* either: zeus_monitor's Time,Power too */
    return WS_IMP_OTHER;
}

int ws_imp_sniff_zemo(const char *path)
{
    ws_error err;
    int fd = ws_input_open(path, &err);
    if (fd < 0) return 0;
    char buf[16] = "";
    const ssize_t n = read(fd, buf, 10);
    close(fd);
    return n == 10 && !strncmp(buf, "Time,Power", 10);
}

/* The whole file, NUL-terminated (at most max_bytes). */
static char *slurp(const char *path, size_t max_bytes, size_t *len, ws_error *err)
{
    size_t size;
    int fd = ws_infile_open_input(path, max_bytes, &size, err);
    if (fd < 0) return NULL;
    size_t cap = size + 1, n = 0;
    char *b = malloc(cap);
    if (!b) {
        close(fd);
        ws_fail(err, "out of memory");
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (max_bytes && n >= max_bytes) {
                free(b);
                close(fd);
                ws_fail(err, "%s: more than the limit of %zu bytes", path, max_bytes);
                return NULL;
            }
            char *g = realloc(b, cap * 2);
            if (!g) {
                free(b);
                close(fd);
                ws_fail(err, "out of memory");
                return NULL;
            }
            b = g;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            ws_fail(err, "%s: cannot read: %s", path, strerror(errno));
            free(b);
            close(fd);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    b[n] = '\0';
    if (memchr(b, '\0', n)) {
        free(b);
        ws_fail(err, "%s: NUL byte in a text file", path);
        return NULL;
    }
    *len = n;
    return b;
}

/* Parse `{label="value",...}` at *p into the value of `want` (buf). 0, or
 * -1 on a syntax error. */
static int labels(const char **pp, const char *want, char *buf, size_t size)
{
    const char *p = *pp;
    buf[0] = '\0';
    if (*p != '{') return 0;
    p++;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == '}') { p++; break; }
        const char *k = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        const size_t kl = (size_t)(p - k);
        if (!kl || *p != '=' || p[1] != '"') return -1;
        p += 2;
        char val[256];
        size_t vl = 0;
        for (; *p && *p != '"' && *p != '\n'; p++) {
            char ch = *p;
            if (ch == '\\') {
                p++;
                ch = *p == 'n' ? '\n' : *p;
                if (!*p || *p == '\n') return -1;
            }
            if (vl + 1 < sizeof val) val[vl++] = ch;
        }
        if (*p != '"') return -1;
        p++;
        val[vl] = '\0';
        if (kl == strlen(want) && !strncmp(k, want, kl)) snprintf(buf, size, "%s", val);
        while (*p == ' ') p++;
        if (*p == ',') { p++; continue; }
        if (*p == '}') { p++; break; }
        return -1;
    }
    *pp = p;
    return 0;
}

int ws_import_prom(const char *path, size_t max_bytes, ws_telemetry *out, ws_warnings *w,
                   ws_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(out->path = strdup(path))) return ws_fail(err, "out of memory");
    size_t len;
    char *text = slurp(path, max_bytes, &len, err);
    if (!text) return -1;
    int rc = -1;
    /* Energy counters are preferred: a first pass says whether any. */
    int energy = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, ENERGY_METRIC, strlen(ENERGY_METRIC))
            && (l[strlen(ENERGY_METRIC)] == '{' || l[strlen(ENERGY_METRIC)] == ' '))
            energy = 1;
    const char *metric = energy ? ENERGY_METRIC : POWER_METRIC;
    const size_t ml = strlen(metric);
    out->kind = energy ? WS_TEL_ENERGY : WS_TEL_POWER;
    long line = 0;
    size_t samples = 0;
    for (char *l = text; *l;) {
        char *nl = strchr(l, '\n');
        if (nl) *nl = '\0';
        line++;
        size_t ll = strlen(l);
        if (ll && l[ll - 1] == '\r') l[--ll] = '\0';
        if (strncmp(l, metric, ml) || (l[ml] != '{' && l[ml] != ' ')) goto next;
        const char *p = l + ml;
        char gpu[256];
        if (labels(&p, "gpu", gpu, sizeof gpu)) {
            ws_fail(err, "%s:%ld: %s: a label set that is not {name=\"value\",...}", path,
                    line, metric);
            goto out;
        }
        if (!gpu[0]) {
            ws_fail(err, "%s:%ld: %s: no gpu label to tell the GPU by", path, line, metric);
            goto out;
        }
        if (ws_has_control(gpu)) {
            ws_fail(err, "%s:%ld: gpu label \"%s\" has control characters", path, line, gpu);
            goto out;
        }
        while (*p == ' ' || *p == '\t') p++;
        char vb[64], tb[64];
        vb[0] = tb[0] = '\0';
        if (sscanf(p, "%63s %63s", vb, tb) < 1) {
            ws_fail(err, "%s:%ld: %s: no value", path, line, metric);
            goto out;
        }
        if (!tb[0]) {
            ws_fail(err, "%s:%ld: %s has no timestamp: a scrape of the DCGM exporter (its"
                    " /metrics page) is one instant, not a series; let Prometheus scrape it"
                    " and pass the JSON of /api/v1/query_range?query=%s to --dcgm", path, line,
                    metric, metric);
            goto out;
        }
        double v, ts;
        if (ws_imp_decimal(tb, &ts) || ts < 0 || ts != floor(ts)) {
            ws_fail(err, "%s:%ld: timestamp: expected milliseconds since 1970, got \"%s\"",
                    path, line, tb);
            goto out;
        }
        if (!strcmp(vb, "NaN")) {
            if (ws_telemetry_missing(out, gpu, line, err)) goto out;
            goto next;
        }
        if (ws_imp_decimal(vb, &v) || v < 0) {
            ws_fail(err, "%s:%ld: %s: expected a reading %s, got \"%s\"", path, line, metric,
                    energy ? "in mJ" : "in W", vb);
            goto out;
        }
        if (ws_telemetry_add(out, gpu, ts / 1000, energy ? v / 1000 : v, line, err)) goto out;
        samples++;
    next:
        if (!nl) break;
        l = nl + 1;
    }
    if (!samples && !out->n_gpu) {
        ws_fail(err, "%s: no %s or %s samples (a DCGM exporter scrape)", path, POWER_METRIC,
                ENERGY_METRIC);
        goto out;
    }
    if (out->n_missing)
        ws_warn(w, "%s: %zu NaN reading%s skipped", path, out->n_missing,
                out->n_missing == 1 ? "" : "s");
    rc = 0;
out:
    free(text);
    return rc;
}

/* `nvidia-smi dmon`: refused, with the recording or conversion to use. */
int ws_imp_refuse_dmon(const char *path, const ws_csv_limits *lim, ws_error *err)
{
    ws_error e2;
    FILE *f = ws_input_fopen(path, &e2);
    if (!f) return ws_fail(err, "%s", e2.msg);
    char line[1024] = "";
    (void)lim;
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
    /* Column positions (from 1) of Date, Time, gpu and pwr in the header. */
    int pos[4] = {0, 0, 0, 0}, k = 0;
    static const char *want[4] = {"Date", "Time", "gpu", "pwr"};
    char *save = NULL;
    for (char *tok = strtok_r(line + 1, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        k++;
        for (int i = 0; i < 4; i++)
            if (!strcmp(tok, want[i]) && !pos[i]) pos[i] = k;
    }
    if (!pos[2] || !pos[3])
        return ws_fail(err, "%s: nvidia-smi dmon output without %s: record the power with"
                       " `nvidia-smi dmon -s p -o DT`, or better `nvidia-smi"
                       " --query-gpu=timestamp,index,power.draw --format=csv -lms 1000`", path,
                       !pos[3] ? "its power (pwr) column" : "its gpu column");
    if (!pos[0] || !pos[1])
        return ws_fail(err, "%s: nvidia-smi dmon output without dates and times on its lines:"
                       " it cannot be placed against the epochs; record with `nvidia-smi dmon"
                       " -s p -o DT`, or `nvidia-smi --query-gpu=timestamp,index,power.draw"
                       " --format=csv -lms 1000`", path);
    return ws_fail(err, "%s: nvidia-smi dmon output (1 s, whole watts); convert it to"
                   " nvidia-smi's CSV: awk 'BEGIN{print \"timestamp, index, power.draw [W]\"}"
                   " !/^#/ && $%d != \"-\" {printf \"%%s/%%s/%%s %%s.000, %%s, %%s W\\n\","
                   " substr($%d,1,4), substr($%d,5,2), substr($%d,7,2), $%d, $%d, $%d}' FILE >"
                   " nv.csv", path, pos[3], pos[0], pos[0], pos[0], pos[1], pos[2], pos[3]);
}
