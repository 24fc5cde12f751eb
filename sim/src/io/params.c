/*
 * Policy parameters: raw text from a config or command line (key, value,
 * where) resolved against a plugin's ws_param_spec to typed values, with
 * bounds checked; and the canonical one-line form for provenance. See
 * wattsim/params.h. Called once per policy at set-up, never per event.
 */
#include "wattsim/params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* x as the shortest %g text that reads back as x (0.05, not
 * 0.050000000000000003): 15 significant digits, more only when needed. */
static void shortest(double x, char *buf, size_t len)
{
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, len, "%.*g", p, x);
        if (strtod(buf, NULL) == x) return;
    }
}

int ws_params_format(const ws_param_spec *spec, const ws_value *v, char *buf, size_t len)
{
    char num[40];
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; spec && spec[i].name; i++) {
        int n = 0;
        const char *sep = i ? "," : "";
        switch (spec[i].kind) {
        case WS_PARAM_INT: n = snprintf(buf + used, len - used, "%s%s=%ld", sep, spec[i].name, v[i].i); break;
        case WS_PARAM_DOUBLE:
            shortest(v[i].d, num, sizeof num);
            n = snprintf(buf + used, len - used, "%s%s=%s", sep, spec[i].name, num);
            break;
        case WS_PARAM_BOOL: n = snprintf(buf + used, len - used, "%s%s=%s", sep, spec[i].name, v[i].b ? "true" : "false"); break;
        case WS_PARAM_STRING: n = snprintf(buf + used, len - used, "%s%s=%s", sep, spec[i].name, v[i].s ? v[i].s : ""); break;
        }
        if (n < 0 || (size_t)n >= len - used) return -1;
        used += (size_t)n;
    }
    return 0;
}

size_t ws_params_count(const ws_param_spec *spec)
{
    size_t n = 0;
    while (spec && spec[n].name) n++;
    return n;
}

static int parse_value(const ws_param_spec *ps, const ws_param_raw *raw,
                       const char *who, ws_value *v, ws_error *err)
{
    const char *s = raw->value;
    char *end;
    errno = 0;
    switch (ps->kind) {
    case WS_PARAM_INT: {
        long x = strtol(s, &end, 10);
        if (!*s || *end || errno == ERANGE)
            return ws_fail(err, "%s: %s parameter '%s' must be an integer, got \"%s\"",
                           raw->where, who, ps->name, s);
        if ((double)x < ps->min || (double)x > ps->max)
            return ws_fail(err, "%s: %s parameter '%s' must be in [%.0f, %.0f], got %ld",
                           raw->where, who, ps->name, ps->min, ps->max, x);
        v->i = x;
        return 0;
    }
    case WS_PARAM_DOUBLE: {
        double x = strtod(s, &end);
        if (!*s || *end || isnan(x))
            return ws_fail(err, "%s: %s parameter '%s' must be a number, got \"%s\"",
                           raw->where, who, ps->name, s);
        if (x < ps->min || x > ps->max)
            return ws_fail(err, "%s: %s parameter '%s' must be in [%g, %g], got %g",
                           raw->where, who, ps->name, ps->min, ps->max, x);
        v->d = x;
        return 0;
    }
    case WS_PARAM_BOOL:
        if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1"))
            v->b = 1;
        else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0"))
            v->b = 0;
        else
            return ws_fail(err, "%s: %s parameter '%s' must be true or false, got \"%s\"",
                           raw->where, who, ps->name, s);
        return 0;
    case WS_PARAM_STRING:
        if (!(v->s = strdup(s))) return ws_fail(err, "out of memory");
        return 0;
    }
    return ws_fail(err, "%s: %s parameter '%s' has an unknown kind", raw->where, who, ps->name);
}

int ws_params_resolve(const ws_param_spec *spec, const ws_param_raw *raw,
                      size_t n_raw, const char *who, ws_value **out,
                      ws_error *err)
{
    size_t n = ws_params_count(spec);
    *out = NULL;
    for (size_t j = 0; j < n_raw; j++) {
        size_t i;
        for (i = 0; i < n; i++)
            if (!strcmp(spec[i].name, raw[j].key)) break;
        if (i == n) {
            char list[256] = "";
            for (size_t q = 0; q < n; q++) {
                strncat(list, spec[q].name, sizeof list - strlen(list) - 1);
                if (q + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return ws_fail(err, "%s: %s has no parameter '%s' (%s%s)", raw[j].where,
                           who, raw[j].key, n ? "its parameters: " : "it takes none",
                           list);
        }
    }
    if (n == 0) return 0;
    ws_value *v = calloc(n, sizeof *v);
    if (!v) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        v[i] = spec[i].def;
        if (spec[i].kind == WS_PARAM_STRING) v[i].s = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const ws_param_raw *given = NULL;
        for (size_t j = 0; j < n_raw; j++)
            if (!strcmp(spec[i].name, raw[j].key)) given = &raw[j];
        if (given) {
            if (parse_value(&spec[i], given, who, &v[i], err)) {
                ws_params_free(spec, v);
                return -1;
            }
        } else if (spec[i].kind == WS_PARAM_STRING) {
            if (!(v[i].s = strdup(spec[i].def.s ? spec[i].def.s : ""))) {
                ws_params_free(spec, v);
                return ws_fail(err, "out of memory");
            }
        }
    }
    *out = v;
    return 0;
}

void ws_params_free(const ws_param_spec *spec, ws_value *values)
{
    if (!values) return;
    for (size_t i = 0; spec && spec[i].name; i++)
        if (spec[i].kind == WS_PARAM_STRING) free((char *)values[i].s);
    free(values);
}
