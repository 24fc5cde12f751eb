/*
 * Policy pairs as given in --policies ("zeus:jit,default:default"), each
 * side a policy reference with optional parameters; see wattsim/sweep.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "wattsim/sweep.h"

void ws_policy_pairs_free(ws_policy_pair *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i].bso);
        free(p[i].plo);
        free(p[i].label);
        ws_policy_ref_free(&p[i].bso_ref);
        ws_policy_ref_free(&p[i].plo_ref);
        free(p[i].bso_params);
        free(p[i].plo_params);
    }
    free(p);
}

static int ends_so(const char *s, const char *end)
{
    return end - s >= 3 && !memcmp(end - 3, ".so", 3);
}

/* The colon between BSO and PLO in q[0, len), where either may be
 * FILE.so:NAME (so a pair has 1, 2 or 3 colons); NULL if there is none. */
static const char *pair_colon(const char *q, size_t len)
{
    const char *c[4];
    size_t n = 0;
    int depth = 0;
    for (const char *p = q; p < q + len; p++)
        if (*p == '{') depth++;
        else if (*p == '}') depth--;
        else if (*p == ':' && depth == 0) {
            if (n == 3) return NULL;
            c[n++] = p;
        }
    if (n == 1) return c[0];
    if (n == 3) return c[1];
    if (n == 2) /* FILE.so:NAME:PLO or BSO:FILE.so:NAME */
        return ends_so(q, c[0]) && !ends_so(c[0] + 1, c[1]) ? c[1] : c[0];
    return NULL;
}

int ws_policy_pairs_parse(const char *s, ws_policy_pair **out, size_t *n,
                          ws_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 1;
    for (const char *q = s; *q; q++) cap += *q == ',';
    ws_policy_pair *p = calloc(cap, sizeof *p);
    if (!p) return ws_fail(err, "out of memory");
    size_t k = 0;
    for (const char *q = s;; k++) {
        size_t len = 0;              /* up to a ',' outside braces */
        for (int depth = 0; q[len] && (q[len] != ',' || depth); len++)
            depth += (q[len] == '{') - (q[len] == '}');
        const char *colon = pair_colon(q, len);
        if (!colon || colon == q || colon + 1 == q + len) {
            ws_policy_pairs_free(p, k);
            return ws_fail(err, "--policies: '%.*s' is not BSO:PLO (e.g. zeus:jit)",
                           (int)len, q);
        }
        if (ws_policy_ref_parse(q, (size_t)(colon - q), "--policies", &p[k].bso_ref, err)
            || ws_policy_ref_parse(colon + 1, (size_t)(q + len - colon - 1), "--policies",
                                   &p[k].plo_ref, err)) {
            ws_policy_pairs_free(p, k + 1);
            return -1;
        }
        p[k].bso = strdup(p[k].bso_ref.name);
        p[k].plo = strdup(p[k].plo_ref.name);
        if (!p[k].bso || !p[k].plo) {
            ws_policy_pairs_free(p, k + 1);
            return ws_fail(err, "out of memory");
        }
        q += len;
        if (!*q) { k++; break; }
        q++;
    }
    *out = p;
    *n = k;
    return 0;
}
