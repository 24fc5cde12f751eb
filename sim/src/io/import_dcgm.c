/*
 * DCGM exporter metrics, as a Prometheus range-query result (the JSON body
 * of /api/v1/query_range):
 *   {"status": "success", "data": {"resultType": "matrix", "result": [
 *     {"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "0", ...},
 *      "values": [[1700000000.5, "250.3"], ...]}, ...]}}
 * Series of DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ since the driver
 * loaded) are preferred when present: energy is then the counter's
 * increase. Otherwise DCGM_FI_DEV_POWER_USAGE (W) is integrated. The `gpu`
 * label names the GPU. Values "NaN" are skipped and counted. Parsed with
 * jansson; a bad value is reported with its JSON path (JSON has no lines
 * for values once parsed), a syntax error with its line and column.
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/input.h"
#include "wattsim/name.h"
#include "wattsim/outfile.h"

#include <jansson.h>

#include "wattsim/json_input.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define POWER_METRIC "DCGM_FI_DEV_POWER_USAGE"
#define ENERGY_METRIC "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"

static const char *label(json_t *series, const char *key)
{
    json_t *m = json_object_get(series, "metric");
    json_t *v = m ? json_object_get(m, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int ws_import_dcgm(const char *path, size_t max_bytes, ws_telemetry *out,
                   ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    /* Text formats first: a JSON syntax error is no answer to them. */
    switch (ws_imp_sniff(path)) {
    case WS_IMP_PROM: return ws_import_prom(path, max_bytes, out, w, err);
    case WS_IMP_NVSMI_DMON: {
        ws_error e2 = {{0}};
        ws_imp_refuse_dmon(path, NULL, &e2);
        return ws_fail(err, "%s (then pass it with --nvidia-smi)", e2.msg);
    }
    case WS_IMP_DCGMI_DMON: return ws_fail(err, "%s: " WS_IMP_DCGMI_ADVICE, path);
    case WS_IMP_NVSMI_CSV:
        return ws_fail(err, "%s: an nvidia-smi CSV log, not DCGM metrics: pass it with"
                       " --nvidia-smi", path);
    case WS_IMP_ZEUSMON:
        return ws_fail(err, "%s: a ZeusMonitor log, not DCGM metrics: pass it with"
                       " --zeus-monitor", path);
    default: break;
    }
    if (!(out->path = strdup(path))) return ws_fail(err, "out of memory");
    json_t *root = ws_json_input_load(path, max_bytes, err);
    if (!root) return -1;
    int rc = -1;
    json_t *status = json_object_get(root, "status");
    json_t *data = json_object_get(root, "data");
    json_t *type = data ? json_object_get(data, "resultType") : NULL;
    json_t *result = data ? json_object_get(data, "result") : NULL;
    if (!json_is_object(root)) {
        ws_fail(err, "%s: not a Prometheus query result (expected a JSON object)", path);
        goto out;
    }
    if (status && (!json_is_string(status) || strcmp(json_string_value(status), "success"))) {
        ws_fail(err, "%s: status: the query did not succeed (\"status\" is not"
                " \"success\")", path);
        goto out;
    }
    if (!json_is_object(data) || !json_is_array(result)) {
        ws_fail(err, "%s: data.result: missing (expected the JSON of"
                " /api/v1/query_range)", path);
        goto out;
    }
    if (!json_is_string(type) || strcmp(json_string_value(type), "matrix")) {
        ws_fail(err, "%s: data.resultType: expected \"matrix\" (a range query,"
                " /api/v1/query_range), got %s", path,
                json_is_string(type) ? json_string_value(type) : "something else");
        goto out;
    }
    size_t n = json_array_size(result), other = 0;
    int energy = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = label(json_array_get(result, i), "__name__");
        if (name && !strcmp(name, ENERGY_METRIC)) energy = 1;
    }
    const char *want = energy ? ENERGY_METRIC : POWER_METRIC;
    out->kind = energy ? WS_TEL_ENERGY : WS_TEL_POWER;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(result, i);
        const char *name = label(s, "__name__"), *gpu = label(s, "gpu");
        if (!json_is_object(s) || !json_is_object(json_object_get(s, "metric"))) {
            ws_fail(err, "%s: data.result[%zu]: expected an object with \"metric\""
                    " and \"values\"", path, i);
            goto out;
        }
        if (!name) {
            ws_fail(err, "%s: data.result[%zu].metric: no __name__ label (query the"
                    " metric by name: " POWER_METRIC " or " ENERGY_METRIC ")", path, i);
            goto out;
        }
        if (strcmp(name, want)) { other++; continue; }
        if (!gpu || !*gpu) {
            ws_fail(err, "%s: data.result[%zu].metric: no gpu label", path, i);
            goto out;
        }
        if (ws_has_control(gpu)) {       /* never echoed raw: ws_fail escapes it */
            ws_fail(err, "%s: data.result[%zu].metric: the gpu label \"%s\" has control"
                    " characters", path, i, gpu);
            goto out;
        }
        if (ws_telemetry_has_gpu(out, gpu)) {
            ws_fail(err, "%s: data.result[%zu]: a second %s series for gpu %s"
                    " (several hosts?); query one host", path, i, name, gpu);
            goto out;
        }
        json_t *values = json_object_get(s, "values");
        if (!json_is_array(values)) {
            ws_fail(err, "%s: data.result[%zu].values: missing or not an array", path, i);
            goto out;
        }
        size_t nv = json_array_size(values);
        for (size_t k = 0; k < nv; k++) {
            json_t *pair = json_array_get(values, k);
            json_t *jt = json_array_get(pair, 0), *jv = json_array_get(pair, 1);
            double v;
            if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_number(jt)
                || !json_is_string(jv)) {
                ws_fail(err, "%s: data.result[%zu].values[%zu]: expected [time,"
                        " \"value\"]", path, i, k);
                goto out;
            }
            double t = json_number_value(jt);
            const char *text = json_string_value(jv);
            if (!isfinite(t) || t < 0) {
                ws_fail(err, "%s: data.result[%zu].values[%zu]: bad time %g", path, i, k, t);
                goto out;
            }
            if (!strcmp(text, "NaN")) {
                if (ws_telemetry_missing(out, gpu, -(long)k - 1, err)) goto out;
                continue;
            }
            if (ws_imp_decimal(text, &v) || v < 0) {
                ws_fail(err, "%s: data.result[%zu].values[%zu]: expected a"
                        " non-negative number, got \"%s\"", path, i, k, text);
                goto out;
            }
            if (energy) v /= 1000.0;                     /* mJ -> J */
            /* A negative line is a value index (see ws_imp_where). */
            if (ws_telemetry_add(out, gpu, t, v, -(long)k - 1, err)) goto out;
        }
        if (nv == 0 || !out->n_gpu || strcmp(out->gpu[out->n_gpu - 1].id, gpu)) {
            ws_fail(err, "%s: data.result[%zu]: gpu %s has no values", path, i, gpu);
            goto out;
        }
    }
    if (out->n_gpu == 0) {
        ws_fail(err, "%s: no " POWER_METRIC " or " ENERGY_METRIC " series", path);
        goto out;
    }
    if (other)
        ws_warn(w, "%s: %zu series of other metrics ignored (using %s)", path, other, want);
    if (out->n_missing)
        ws_warn(w, "%s: %zu NaN value%s skipped", path, out->n_missing,
                out->n_missing == 1 ? "" : "s");
    rc = 0;
out:
    json_decref(root);
    return rc;
}
