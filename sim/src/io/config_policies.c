/*
 * The config reader's policy axes (see config_parse.h, docs/commands.md "Policy pairs
 * in a config"):
 *
 *   bso: [zeus, {name: zeus, params: {window: 5}}]   a list: an axis
 *   plo: [jit, default]                               (pairs: bso x plo)
 *
 *   policies:                                         a list of pairs
 *     - {bso: zeus, plo: jit}
 *     - {bso: {name: zeus, params: {window: 10}}, plo: jit}
 *
 * Each policy is written as for a single `bso:` (parse_policy). A policy
 * may appear several times with different parameters, or from two .so
 * builds (FILE.so:NAME); the same policy with the same parameters twice in
 * a list, or the same pair twice, is an error: it would only run the same
 * simulations again under the same label.
 */
#include "config_parse.h"

static bool same_params(const ws_policy_ref *a, const ws_policy_ref *b)
{
    if (a->n_params != b->n_params) return false;
    for (size_t i = 0; i < a->n_params; i++) {
        size_t j = 0;
        while (j < b->n_params && strcmp(a->params[i].key, b->params[j].key)) j++;
        if (j == b->n_params || strcmp(a->params[i].value, b->params[j].value))
            return false;
    }
    return true;
}

/* The same name and the same parameters (in any order). */
bool policy_same(const ws_policy_ref *a, const ws_policy_ref *b)
{
    return a->name && b->name && !strcmp(a->name, b->name) && same_params(a, b);
}

/* "zeus{window=10}" for messages, cut to the buffer. */
static const char *policy_text(const ws_policy_ref *p, char *buf, size_t size)
{
    char shown[SHOW_SIZE];
    size_t used = 0;
    int n = snprintf(buf, size, "%s", show_text(p->name, shown, sizeof shown));
    for (size_t i = 0; n >= 0 && (used += (size_t)n) < size && i < p->n_params; i++)
        n = snprintf(buf + used, size - used, "%s%s=%s", i ? "," : "{",
                     p->params[i].key, p->params[i].value);
    if (p->n_params && used + 1 < size) strcat(buf, "}");
    return buf;
}

int policy_list(const ctx *c, const ynode *n, const char *what, ws_policy_ref **out,
                size_t *count)
{
    char got[DESCRIBE_SIZE], at[64], text[160];
    if (n->kind != Y_LIST || n->n == 0)
        return fail_at(c, n, "%s must be a policy name, a mapping {name, params},"
                       " or a non-empty list of them, got %s", what,
                       describe(n, got, sizeof got));
    /* Attached at once so the caller's free sees every entry. */
    if (!(*out = calloc(n->n, sizeof **out))) return fail_oom(c);
    *count = n->n;
    for (size_t i = 0; i < n->n; i++) {
        if (parse_policy(c, n->kids[i], what, &(*out)[i])) return -1;
        for (size_t j = 0; j < i; j++)
            if (policy_same(&(*out)[j], &(*out)[i]))
                return fail_at(c, n->kids[i], "%s %s is listed twice%s (give it"
                               " other parameters, or list it once)", what,
                               policy_text(&(*out)[i], text, sizeof text),
                               first_at(c, n->kids[j], at, sizeof at));
    }
    return 0;
}

void pair_free(ws_policy_pair_ref *p)
{
    policy_free(&p->bso);
    policy_free(&p->plo);
    free(p->where);
    memset(p, 0, sizeof *p);
}

enum { Q_BSO, Q_PLO, Q_COUNT };
static const keydef pair_keys[] = {
    { "bso", Q_BSO, true },
    { "plo", Q_PLO, true },
};

int pair_list(const ctx *c, const ynode *n, const char *what, ws_policy_pair_ref **out,
              size_t *count)
{
    char got[DESCRIBE_SIZE], at[64], field[48], b[160], p[160];
    const ynode *keys[Q_COUNT], *vals[Q_COUNT];
    if (n->kind != Y_LIST || n->n == 0)
        return fail_at(c, n, "%s must be a non-empty list of pairs {bso: ..., plo: ...},"
                       " got %s", what, describe(n, got, sizeof got));
    if (!(*out = calloc(n->n, sizeof **out))) return fail_oom(c);
    *count = n->n;
    for (size_t i = 0; i < n->n; i++) {
        const ynode *e = n->kids[i];
        ws_policy_pair_ref *q = &(*out)[i];
        if (e->kind != Y_MAP)
            return fail_at(c, e, "%s: each entry must be a mapping {bso: ..., plo: ...},"
                           " got %s", what, describe(e, got, sizeof got));
        snprintf(field, sizeof field, "%s entry", what);
        if (match_keys(c, e, field, pair_keys, Q_COUNT, Q_COUNT, keys, vals)) return -1;
        for (int k = 0; k < Q_COUNT; k++)
            if (!vals[k])
                return fail_at(c, e, "%s entry is missing key '%s'", what,
                               pair_keys[k].name);
        if (!(q->where = where_of(c, e))) return fail_oom(c);
        snprintf(field, sizeof field, "%s.bso", what);
        if (parse_policy(c, vals[Q_BSO], field, &q->bso)) return -1;
        snprintf(field, sizeof field, "%s.plo", what);
        if (parse_policy(c, vals[Q_PLO], field, &q->plo)) return -1;
        for (size_t j = 0; j < i; j++)
            if (policy_same(&(*out)[j].bso, &q->bso) && policy_same(&(*out)[j].plo, &q->plo))
                return fail_at(c, e, "%s: the pair %s:%s is listed twice%s", what,
                               policy_text(&q->bso, b, sizeof b),
                               policy_text(&q->plo, p, sizeof p),
                               first_at(c, n->kids[j], at, sizeof at));
    }
    return 0;
}
