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
        free(p[i].identity);
    }
    free(p);
}

static int ends_so(const char *s, const char *end)
{
    return end - s >= 3 && !memcmp(end - 3, ".so", 3);
}

/* Whether s[0, len) with `colons` colons outside braces can be one
 * policy: a name or path (none), FILE.so:NAME (one, after ".so") or
 * py:MODULE:CLASS (two, after "py"). */
static int one_policy(const char *s, size_t len, const char *first, size_t colons)
{
    if (colons == 0) return len > 0;
    if (colons == 1) return ends_so(s, first) && first + 1 < s + len;
    return colons == 2 && first - s == 2 && !memcmp(s, "py", 2);
}

/* The colon between BSO and PLO in q[0, len), where either may be
 * FILE.so:NAME or py:MODULE:CLASS (so a pair has 1 to 5 colons): the one
 * colon that leaves a policy on both sides; NULL if there is none, or
 * more than one. */
static const char *pair_colon(const char *q, size_t len)
{
    const char *c[6];
    size_t n = 0;
    int depth = 0;
    for (const char *p = q; p < q + len; p++)
        if (*p == '{') depth++;
        else if (*p == '}') depth--;
        else if (*p == ':' && depth == 0) {
            if (n == 5) return NULL;
            c[n++] = p;
        }
    const char *found = NULL;
    for (size_t k = 0; k < n; k++) {
        const char *rest = c[k] + 1;
        if (one_policy(q, (size_t)(c[k] - q), k ? c[0] : NULL, k)
            && one_policy(rest, (size_t)(q + len - rest), k + 1 < n ? c[k + 1] : NULL,
                          n - k - 1)) {
            if (found) return NULL;
            found = c[k];
        }
    }
    return found;
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
            return ws_fail(err, "--policies: '%.*s' is not BSO:PLO (e.g. zeus:jit, or"
                           " py:MODULE:CLASS:jit)", (int)len, q);
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
