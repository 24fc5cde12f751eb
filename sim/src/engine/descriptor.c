/*
 * Descriptor checks (see descriptor.h): the registry keeps its own copy of
 * every descriptor, normalised to this host's layout at load. A version-1
 * descriptor is copied up to the members version 1 had (the rest zeroed),
 * a newer one up to the members this host knows, and its parameter specs
 * are re-packed with this host's stride.
 */
#include "descriptor.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int name_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'
              || *s == '-'))
            return 0;
    return 1;
}

int ws_descriptor_check_version(const char *path, const char *what, const char *name,
                         int v, ws_error *err)
{
    int n = ws_abi_normalise(v);
    if (n < 100 || n / 100 > WS_ABI_MAJOR)
        return ws_fail(err, "%s: %s '%s' was built for policy ABI version %d,"
                       " but this wattsim speaks version %d.%d (and 1.0); rebuild"
                       " it against this wattsim's policy.h", path, what,
                       name ? name : "?", v, WS_ABI_MAJOR, WS_ABI_MINOR);
    return 0;
}

/* The descriptor's spec entry i, at the stride it was built with. */
static const ws_param_spec *spec_at(const ws_param_spec *ps, size_t stride, size_t i)
{
    return (const ws_param_spec *)(const void *)((const char *)ps + i * stride);
}

/* Size of a ws_param_spec and ws_value as the descriptor's version has
 * them: version 1 and 2.0 have today's layout. */
static int strides(const char *path, const char *kind, const char *name, int v,
                   size_t spec_size, size_t value_size, size_t *ss, size_t *vs,
                   ws_error *err)
{
    *ss = sizeof(ws_param_spec);
    *vs = sizeof(ws_value);
    if (ws_abi_normalise(v) < 200) return 0;
    if (spec_size) *ss = spec_size;
    if (value_size) *vs = value_size;
    if (*ss < sizeof(ws_param_spec) || *vs < sizeof(ws_value))
        return ws_fail(err, "%s: %s '%s' declares param_spec_size %zu and value_size"
                       " %zu, smaller than ABI 2.0's %zu and %zu", path, kind, name,
                       spec_size, value_size, sizeof(ws_param_spec), sizeof(ws_value));
    return 0;
}

/* Check a descriptor's parameter specs and copy them, NULL-terminated, at
 * this host's stride into *out (NULL when there are none). */
static int copy_params(const char *path, const char *kind, const char *name,
                       const ws_param_spec *ps, size_t stride,
                       ws_param_spec **out, ws_error *err)
{
    *out = NULL;
    size_t n = 0;
    for (; ps && spec_at(ps, stride, n)->name; n++)
        if (n >= 200)
            return ws_fail(err, "%s: %s '%s': parameter list is not terminated"
                           " by an entry with a NULL name", path, kind, name);
    for (size_t i = 0; i < n; i++) {
        const ws_param_spec *p = spec_at(ps, stride, i);
        if (p->kind < WS_PARAM_INT || p->kind > WS_PARAM_STRING)
            return ws_fail(err, "%s: %s '%s': parameter '%s' has an unknown kind %d",
                           path, kind, name, p->name, (int)p->kind);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(spec_at(ps, stride, j)->name, p->name))
                return ws_fail(err, "%s: %s '%s': parameter '%s' is declared twice",
                               path, kind, name, p->name);
        if (p->kind != WS_PARAM_INT && p->kind != WS_PARAM_DOUBLE) continue;
        if (isnan(p->min) || isnan(p->max) || p->min > p->max)
            return ws_fail(err, "%s: %s '%s': parameter '%s' has bounds [%g, %g];"
                           " want numbers with min <= max", path, kind, name,
                           p->name, p->min, p->max);
        double d = p->kind == WS_PARAM_INT ? (double)p->def.i : p->def.d;
        if (!(d >= p->min && d <= p->max))
            return ws_fail(err, "%s: %s '%s': parameter '%s' has default %g,"
                           " outside its bounds [%g, %g]", path, kind, name,
                           p->name, d, p->min, p->max);
    }
    if (n == 0) return 0;
    ws_param_spec *c = calloc(n + 1, sizeof *c);
    if (!c) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < n; i++) c[i] = *spec_at(ps, stride, i);
    *out = c;
    return 0;
}

#define NEED(T, member)                                                        \
    do {                                                                       \
        if (!(T)->member)                                                      \
            return ws_fail(err, "%s: %s '%s' has no %s function (required)",  \
                           path, kind, (T)->name, #member);                    \
    } while (0)

/* The members version 1 had end where param_spec_size begins. */
#define V1_SIZE(T) offsetof(T, param_spec_size)

/* What a BSO and a PLO descriptor share: a known ABI version and a valid
 * name (before anything is copied), then the host's own copy of the
 * parameter specs, read at the strides the plugin was built with. */
static int check_head(const char *path, const char *kind, const char *name,
                      int abi_version, ws_error *err)
{
    if (ws_descriptor_check_version(path, kind, name, abi_version, err)) return -1;
    if (!name_ok(name))
        return ws_fail(err, "%s: %s has an invalid name (want 1-64 of"
                       " [a-z0-9_-])", path, kind);
    return 0;
}

static int take_params(const char *path, const char *kind, const char *name,
                       int abi_version, const ws_param_spec *src_params,
                       const ws_param_spec **params, size_t *spec_size,
                       size_t *value_size, ws_error *err)
{
    size_t ss, vs;
    ws_param_spec *ps;
    if (strides(path, kind, name, abi_version, *spec_size, *value_size, &ss, &vs, err)
        || copy_params(path, kind, name, src_params, ss, &ps, err))
        return -1;
    *params = ps;
    *spec_size = ss;
    *value_size = vs;
    return 0;
}

int ws_descriptor_check_bso(const char *path, const ws_bso_type *src, ws_bso_type **out,
                     ws_error *err)
{
    const char *kind = "bso";
    *out = NULL;
    if (check_head(path, kind, src->name, src->abi_version, err)) return -1;
    ws_bso_type *t = calloc(1, sizeof *t);
    if (!t) return ws_fail(err, "out of memory");
    memcpy(t, src, ws_abi_normalise(src->abi_version) < 200 ? V1_SIZE(ws_bso_type) : sizeof *t);
    t->params = NULL;            /* the host's copy is set below */
    *out = t;
    NEED(t, create);
    NEED(t, destroy);
    NEED(t, register_job);
    NEED(t, predict);
    NEED(t, observe);
    return take_params(path, kind, t->name, t->abi_version, src->params, &t->params,
                       &t->param_spec_size, &t->value_size, err);
}

int ws_descriptor_check_plo(const char *path, const ws_plo_type *src, ws_plo_type **out,
                     ws_error *err)
{
    const char *kind = "plo";
    *out = NULL;
    if (check_head(path, kind, src->name, src->abi_version, err)) return -1;
    ws_plo_type *t = calloc(1, sizeof *t);
    if (!t) return ws_fail(err, "out of memory");
    memcpy(t, src, ws_abi_normalise(src->abi_version) < 200 ? V1_SIZE(ws_plo_type) : sizeof *t);
    t->params = NULL;            /* the host's copy is set below */
    *out = t;
    NEED(t, create);
    NEED(t, destroy);
    NEED(t, predict);
    NEED(t, observe_profile);
    return take_params(path, kind, t->name, t->abi_version, src->params, &t->params,
                       &t->param_spec_size, &t->value_size, err);
}
