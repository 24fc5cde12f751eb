/* The config reader's values: axes (gpu, workload, eta, beta, seed),
 * workload specs and policy references (see config_parse.h). */
#include "config_parse.h"
#include "wattsim/trace.h"   /* WS_MAX_GPUS_PER_JOB */

/* ------------------------------------------------------------ axes */

/* An axis is one item or a list of them; `single` is the kind of one item
 * (a scalar, or a mapping for `job`). */
static int check_axis(const ctx *c, const ynode *n, const char *what,
                      const char *expect, ykind single)
{
    char got[DESCRIBE_SIZE];
    if (n->kind == single || (n->kind == Y_LIST && n->n > 0)) return 0;
    return fail_at(c, n, "%s must be %s or a list of them, got %s", what,
                   expect, describe(n, got, sizeof got));
}

static size_t axis_len(const ynode *n, ykind single)
{
    return n->kind == single ? 1 : n->n;
}

static const ynode *axis_at(const ynode *n, ykind single, size_t i)
{
    return n->kind == single ? n : n->kids[i];
}

int string_axis(const ctx *c, const ynode *n, const char *what,
                       char ***out, size_t *count)
{
    char shown[SHOW_SIZE], at[64];
    if (check_axis(c, n, what, "a non-empty string", Y_SCALAR)) return -1;
    size_t len = axis_len(n, Y_SCALAR), first, again;
    /* Attach the array at once so the caller's free sees every string. */
    if (!(*out = calloc(len, sizeof **out))) return fail_oom(c);
    *count = len;
    for (size_t i = 0; i < len; i++)
        if (get_name(c, axis_at(n, Y_SCALAR, i), what, &(*out)[i])) return -1;
    if (find_repeat((const char *const *)*out, NULL, len, &first, &again))
        return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, axis_at(n, Y_SCALAR, again), "%s '%s' is listed twice%s",
                       what, show_text((*out)[again], shown, sizeof shown),
                       first_at(c, axis_at(n, Y_SCALAR, first), at, sizeof at));
    return 0;
}


int real_axis(const ctx *c, const ynode *n, const char *what,
                     const char *expect, bool allow_inf, bool (*ok)(double),
                     double **out, size_t *count)
{
    char got[DESCRIBE_SIZE], at[64];
    if (check_axis(c, n, what, expect, Y_SCALAR)) return -1;
    size_t len = axis_len(n, Y_SCALAR), first, again;
    if (!(*out = calloc(len, sizeof **out))) return fail_oom(c);
    *count = len;
    for (size_t i = 0; i < len; i++) {
        const ynode *it = axis_at(n, Y_SCALAR, i);
        if (it->kind != Y_SCALAR || !parse_real(it->text, allow_inf, &(*out)[i]) ||
            !ok((*out)[i]))
            return fail_at(c, it, "%s must be %s, got %s", what, expect,
                           describe(it, got, sizeof got));
    }
    if (find_repeat(NULL, *out, len, &first, &again)) return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, axis_at(n, Y_SCALAR, again), "%s %s is listed twice%s",
                       what, axis_at(n, Y_SCALAR, again)->text,
                       first_at(c, axis_at(n, Y_SCALAR, first), at, sizeof at));
    return 0;
}

static int cmp_ulong(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return (x > y) - (x < y);
}

/* One seed item: "N" or the inclusive range "A..B". */
static bool parse_seed_item(const char *s, unsigned long *lo, unsigned long *hi)
{
    const char *dots = strstr(s, "..");
    if (!dots) {
        if (!parse_ulong(s, lo)) return false;
        *hi = *lo;
        return true;
    }
    char a[32], b[32];
    size_t la = (size_t)(dots - s), lb = strlen(dots + 2);
    if (la >= sizeof a || lb >= sizeof b) return false;
    memcpy(a, s, la);
    a[la] = '\0';
    memcpy(b, dots + 2, lb + 1);
    return parse_ulong(a, lo) && parse_ulong(b, hi);
}

int seed_axis(const ctx *c, const ynode *n, const char *what,
                     unsigned long **out, size_t *count)
{
    const char *expect = "a non-negative integer or a range \"A..B\"";
    char got[DESCRIBE_SIZE];
    if (check_axis(c, n, what, expect, Y_SCALAR)) return -1;

    /* Check every item and count the seeds, then fill one array. */
    size_t items = axis_len(n, Y_SCALAR), total = 0;
    for (size_t i = 0; i < items; i++) {
        const ynode *it = axis_at(n, Y_SCALAR, i);
        unsigned long lo, hi;
        if (it->kind != Y_SCALAR || !parse_seed_item(it->text, &lo, &hi))
            return fail_at(c, it, "%s must be %s, got %s", what, expect,
                           describe(it, got, sizeof got));
        if (lo > hi)
            return fail_at(c, it, "%s range %s is empty: A must be <= B", what,
                           describe(it, got, sizeof got));
        if (hi - lo >= MAX_SEEDS)
            return fail_at(c, it, "%s range %s holds more than %lu seeds",
                           what, describe(it, got, sizeof got), MAX_SEEDS);
        if (hi - lo >= MAX_SEEDS - total)
            return fail_at(c, it, "%s lists more than %lu seeds in all", what,
                           MAX_SEEDS);
        total += hi - lo + 1;
    }
    if (!(*out = malloc(total * sizeof **out))) return fail_oom(c);
    *count = total;
    size_t k = 0;
    for (size_t i = 0; i < items; i++) {
        unsigned long lo, hi;
        parse_seed_item(axis_at(n, Y_SCALAR, i)->text, &lo, &hi);
        for (unsigned long s = lo;; s++) {
            (*out)[k++] = s;
            if (s == hi) break;      /* hi may be ULONG_MAX */
        }
    }

    /* Ranges make "which item repeated" vague, so point at the whole key. */
    unsigned long *sorted = malloc(total * sizeof *sorted);
    if (!sorted) return fail_oom(c);
    memcpy(sorted, *out, total * sizeof *sorted);
    qsort(sorted, total, sizeof *sorted, cmp_ulong);
    for (size_t i = 1; i < total; i++)
        if (sorted[i] == sorted[i - 1]) {
            unsigned long dup = sorted[i];
            free(sorted);
            return fail_at(c, n, "seed %lu is listed twice in %s", dup, what);
        }
    free(sorted);
    return 0;
}

/* ------------------------------------------------- workloads (specs) */

enum { S_NAME, S_DATASET, S_NETWORK, S_OPTIMIZER, S_TARGET, S_EPOCHS, S_B0,
       S_DISPLAY, S_GPUS, S_METRIC, S_BETTER, S_DRIFT, S_COUNT };
static const keydef spec_keys[] = {
    { "name", S_NAME, true },            /* jobs only: skipped for catalogue */
    { "dataset", S_DATASET, true },
    { "network", S_NETWORK, true },
    { "optimizer", S_OPTIMIZER, true },
    { "target_metric", S_TARGET, true },
    { "max_epochs", S_EPOCHS, true },
    { "b0", S_B0, true },
    { "display", S_DISPLAY, true },      /* optional */
    { "gpus_per_job", S_GPUS, true },    /* optional */
    { "metric", S_METRIC, true },        /* optional */
    { "better", S_BETTER, true },        /* optional: higher or lower */
    { "drift", S_DRIFT, true },          /* optional */
};

/* ------------------------------------------------------ drift phases */

enum { D_FROM, D_TRACES, D_DATASET, D_NETWORK, D_OPTIMIZER, D_TARGET, D_COUNT };
static const keydef drift_keys[] = {
    { "from", D_FROM, true },
    { "traces", D_TRACES, true },
    { "dataset", D_DATASET, true },
    { "network", D_NETWORK, true },
    { "optimizer", D_OPTIMIZER, true },
    { "target_metric", D_TARGET, true },
};

static void drift_free(ws_drift_spec *d)
{
    free(d->traces);
    free(d->dataset);
    free(d->network);
    free(d->optimizer);
    free(d->where);
}

/* One phase of `drift:` (index i, 0-based) into *d; prev is the `from` of
 * the phase before (1: the job itself). */
static int parse_drift_phase(const ctx *c, const ynode *m, const char *what, size_t i,
                             long prev, ws_drift_spec *d)
{
    const ynode *keys[D_COUNT], *vals[D_COUNT];
    char field[160], got[DESCRIBE_SIZE];
    snprintf(field, sizeof field, "%s[%zu]", what, i);
    d->target_metric = NAN;
    if (m->kind != Y_MAP)
        return fail_at(c, m, "%s must be a mapping {from, traces, dataset, network,"
                       " optimizer, target_metric}, got %s", field,
                       describe(m, got, sizeof got));
    if (match_keys(c, m, field, drift_keys, D_COUNT, D_COUNT, keys, vals)) return -1;
    if (!vals[D_FROM])
        return fail_at(c, m, "%s is missing key 'from' (the first recurrence of the"
                       " phase, e.g. {from: 41, traces: DIR})", field);
    if (!vals[D_TRACES] && !vals[D_DATASET] && !vals[D_NETWORK] && !vals[D_OPTIMIZER]
        && !vals[D_TARGET])
        return fail_at(c, m, "%s changes nothing: give the phase's traces, dataset,"
                       " network, optimizer or target_metric", field);
    for (int id = 0; id < D_COUNT; id++) {
        const ynode *v = vals[id];
        if (!v) continue;
        char key[200];
        snprintf(key, sizeof key, "%s.%s", field, drift_keys[id].name);
        unsigned long u;
        switch (id) {
        case D_FROM:
            if (v->kind != Y_SCALAR || !parse_int_in(v->text, 2, WS_MAX_RECURRENCES, &u))
                return fail_at(c, v, "%s must be a recurrence from 2 to %ld (the first"
                               " of the phase; recurrence 1 is the job's own), got %s",
                               key, WS_MAX_RECURRENCES, describe(v, got, sizeof got));
            if ((long)u <= prev)
                return fail_at(c, v, "%s is %lu, not after the phase before (from %ld):"
                               " list the phases in order, each from a later recurrence",
                               key, u, prev);
            d->from = (long)u;
            break;
        case D_TRACES:    if (set_string(c, v, key, &d->traces)) return -1; break;
        case D_DATASET:   if (set_string(c, v, key, &d->dataset)) return -1; break;
        case D_NETWORK:   if (set_string(c, v, key, &d->network)) return -1; break;
        case D_OPTIMIZER: if (set_string(c, v, key, &d->optimizer)) return -1; break;
        case D_TARGET:
            if (v->kind != Y_SCALAR || !parse_real(v->text, false, &d->target_metric))
                return fail_at(c, v, "%s must be a number, got %s", key,
                               describe(v, got, sizeof got));
            break;
        }
    }
    if (!(d->where = where_of(c, m))) return fail_oom(c);
    return 0;
}

/* `drift:` a list of phases, at most WS_MAX_DRIFT_PHASES. */
static int parse_drift(const ctx *c, const ynode *v, const char *what, ws_workload_spec *s)
{
    char got[DESCRIBE_SIZE];
    if (v->kind != Y_LIST || v->n == 0)
        return fail_at(c, v, "%s must be a list of phases, e.g. [{from: 41, traces: DIR}],"
                       " got %s", what, describe(v, got, sizeof got));
    if (v->n > WS_MAX_DRIFT_PHASES)
        return fail_at(c, v, "%s lists %zu phases, more than %d", what, v->n,
                       WS_MAX_DRIFT_PHASES);
    if (!(s->drift = calloc(v->n, sizeof *s->drift))) return fail_oom(c);
    long prev = 1;
    for (size_t i = 0; i < v->n; i++) {
        s->n_drift = i + 1;
        if (parse_drift_phase(c, v->kids[i], what, i, prev, &s->drift[i])) return -1;
        prev = s->drift[i].from;
    }
    return 0;
}

/* A workload mapping into *s. `what` prefixes field names in messages
 * ("job", "workloads.cifar100"); `with_name` allows the `name` key. */
int parse_spec(const ctx *c, const ynode *m, const char *what,
                      bool with_name, ws_workload_spec *s)
{
    const ynode *keys[S_COUNT], *vals[S_COUNT];
    const keydef *defs = with_name ? spec_keys : spec_keys + 1;
    size_t ndefs = sizeof spec_keys / sizeof *spec_keys - !with_name;
    char field[128], got[DESCRIBE_SIZE];

    if (match_keys(c, m, what, defs, ndefs, S_COUNT, keys, vals)) return -1;
    for (int id = S_DATASET; id < S_DISPLAY; id++)
        if (!vals[id])
            return fail_at(c, m, "%s is missing key '%s'", what,
                           spec_keys[id].name);

    for (int id = 0; id < S_COUNT; id++) {
        const ynode *v = vals[id];
        if (!v) continue;
        snprintf(field, sizeof field, "%s.%s", what, spec_keys[id].name);
        unsigned long u;
        switch (id) {
        case S_NAME:
            if (set_string(c, v, field, &s->name) || check_name(c, v, field, s->name)) return -1;
            break;
        case S_DATASET:   if (set_string(c, v, field, &s->dataset)) return -1; break;
        case S_NETWORK:   if (set_string(c, v, field, &s->network)) return -1; break;
        case S_OPTIMIZER: if (set_string(c, v, field, &s->optimizer)) return -1; break;
        case S_DISPLAY:   if (set_display(c, v, field, &s->display)) return -1; break;
        case S_METRIC:    if (set_display(c, v, field, &s->metric)) return -1; break;
        case S_BETTER:
            if (v->kind == Y_SCALAR && !strcmp(v->text, "higher")) s->better = 1;
            else if (v->kind == Y_SCALAR && !strcmp(v->text, "lower")) s->better = -1;
            else
                return fail_at(c, v, "%s must be higher or lower (which way the metric"
                               " improves), got %s", field, describe(v, got, sizeof got));
            break;
        case S_TARGET:
            if (v->kind != Y_SCALAR || !parse_real(v->text, false, &s->target_metric))
                return fail_at(c, v, "%s must be a number, got %s", field,
                               describe(v, got, sizeof got));
            break;
        case S_EPOCHS:
        case S_B0:
            if (v->kind != Y_SCALAR || !parse_int_in(v->text, 1, INT_MAX, &u))
                return fail_at(c, v, "%s must be a positive integer, got %s",
                               field, describe(v, got, sizeof got));
            *(id == S_EPOCHS ? &s->max_epochs : &s->b0) = (int)u;
            break;
        case S_GPUS:      /* the bound of the trace's column (trace.h says why) */
            if (v->kind != Y_SCALAR || !parse_int_in(v->text, 1, WS_MAX_GPUS_PER_JOB, &u))
                return fail_at(c, v, "%s must be an integer from 1 to %d (the GPUs one"
                               " job's power rows sum), got %s", field, WS_MAX_GPUS_PER_JOB,
                               describe(v, got, sizeof got));
            s->gpus_per_job = (int)u;
            break;
        case S_DRIFT:
            if (parse_drift(c, v, field, s)) return -1;
            break;
        }
    }
    if (!s->name) {             /* the dataset names the job */
        if (!(s->name = strdup(s->dataset))) return fail_oom(c);
        snprintf(field, sizeof field, "%s.dataset (the name, as no name is given)", what);
        if (check_name(c, vals[S_DATASET], field, s->name)) return -1;
    }
    if (!(s->where = where_of(c, m))) return fail_oom(c);
    return 0;
}

void spec_free(ws_workload_spec *s)
{
    for (size_t i = 0; i < s->n_drift; i++) drift_free(&s->drift[i]);
    free(s->drift);
    free(s->display);
    free(s->metric);
    free(s->where);
    free(s->name);
    free(s->dataset);
    free(s->network);
    free(s->optimizer);
}

int job_axis(const ctx *c, const ynode *n, const char *what,
                    ws_workload_spec **out, size_t *count)
{
    char shown[SHOW_SIZE], at[64];
    if (check_axis(c, n, what,
                   "a mapping {name, dataset, network, optimizer, "
                   "target_metric, max_epochs, b0}", Y_MAP))
        return -1;
    size_t len = axis_len(n, Y_MAP), first, again;
    if (!(*out = calloc(len, sizeof **out))) return fail_oom(c);
    *count = len;
    for (size_t i = 0; i < len; i++)
        if (parse_spec(c, axis_at(n, Y_MAP, i), what, true, &(*out)[i])) return -1;

    const char **names = malloc(len * sizeof *names);
    if (!names) return fail_oom(c);
    for (size_t i = 0; i < len; i++) names[i] = (*out)[i].name;
    int rc = find_repeat(names, NULL, len, &first, &again);
    free(names);
    if (rc) return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, axis_at(n, Y_MAP, again), "%s '%s' is listed twice%s",
                       what, show_text((*out)[again].name, shown, sizeof shown),
                       first_at(c, axis_at(n, Y_MAP, first), at, sizeof at));
    return 0;
}

/* ---------------------------------------------------------- policies */

void policy_free(ws_policy_ref *p)
{
    free(p->name);
    free(p->where);
    for (size_t i = 0; i < p->n_params; i++) {
        free(p->params[i].key);
        free(p->params[i].value);
        free(p->params[i].where);
    }
    free(p->params);
    memset(p, 0, sizeof *p);
}

static bool valid_param_name(const char *s);

void ws_policy_ref_free(ws_policy_ref *p) { policy_free(p); }

int ws_policy_ref_parse(const char *s, size_t len, const char *where, ws_policy_ref *out,
                        ws_error *err)
{
    memset(out, 0, sizeof *out);
    const char *brace = memchr(s, '{', len);
    size_t nlen = brace ? (size_t)(brace - s) : len;
    if (nlen == 0)
        return ws_fail(err, "%s: '%.*s' has no policy name", where, (int)len, s);
    if (brace && s[len - 1] != '}')
        return ws_fail(err, "%s: '%.*s': parameters must end with '}'", where, (int)len, s);
    if (!(out->name = strndup(s, nlen)) || !(out->where = strdup(where))) goto oom;
    if (!brace) return 0;
    const char *q = brace + 1, *end = s + len - 1;
    while (q < end) {
        size_t n = strcspn(q, ",}");
        if (q + n > end) n = (size_t)(end - q);
        const char *eq = memchr(q, '=', n);
        if (!eq || eq == q || eq + 1 == q + n) {
            ws_fail(err, "%s: '%.*s' is not KEY=VALUE in '%.*s'", where, (int)n, q, (int)len, s);
            policy_free(out);
            return -1;
        }
        ws_param_raw r = {strndup(q, (size_t)(eq - q)), strndup(eq + 1, (size_t)(q + n - eq - 1)),
                          strdup(where)};
        ws_param_raw *np = realloc(out->params, (out->n_params + 1) * sizeof *np);
        if (!r.key || !r.value || !r.where || !np) {
            free(r.key);
            free(r.value);
            free(r.where);
            if (np) out->params = np;
            goto oom;
        }
        out->params = np;
        if (!valid_param_name(r.key)) {
            ws_fail(err, "%s: bad parameter name '%s' in '%.*s'", where, r.key, (int)len, s);
            out->params[out->n_params++] = r;
            policy_free(out);
            return -1;
        }
        for (size_t i = 0; i < out->n_params; i++)
            if (!strcmp(out->params[i].key, r.key)) {
                ws_fail(err, "%s: parameter '%s' given twice in '%.*s'", where, r.key,
                        (int)len, s);
                out->params[out->n_params++] = r;
                policy_free(out);
                return -1;
            }
        out->params[out->n_params++] = r;
        q += n + (q + n < end);
    }
    return 0;
oom:
    policy_free(out);
    return ws_fail(err, "out of memory");
}

/* Parameter names must be reachable as `--set bso.params.NAME=...`. */
static bool valid_param_name(const char *s)
{
    return s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(s);
}

/* Set parameter `key` (written at node k, NULL for a --set) of *p to the
 * scalar node v, replacing an earlier value. */
int put_param(const ctx *c, ws_policy_ref *p, const char *what,
                     const char *key, const ynode *k, const ynode *v)
{
    char got[DESCRIBE_SIZE], shown[SHOW_SIZE];
    if (!valid_param_name(key))
        return fail_at(c, k ? k : v, "%s.params: bad parameter name '%s' (use letters, "
                       "digits, '_' and '-')", what,
                       show_text(key, shown, sizeof shown));
    /* Values stay text (only the plugin knows their types), but a list or
     * mapping, or nothing at all, cannot be one. */
    if (v->kind != Y_SCALAR || (v->plain && !v->text[0]))
        return fail_at(c, v, "%s.params.%s must be a single value, got %s",
                       what, key, describe(v, got, sizeof got));

    char *value = strdup(v->text), *where = where_of(c, v);
    if (!value || !where) goto oom;
    for (size_t i = 0; i < p->n_params; i++)
        if (!strcmp(p->params[i].key, key)) {
            free(p->params[i].value);
            free(p->params[i].where);
            p->params[i].value = value;
            p->params[i].where = where;
            return 0;
        }
    char *name = strdup(key);
    ws_param_raw *grown = realloc(p->params, (p->n_params + 1) * sizeof *grown);
    if (grown) p->params = grown;
    if (!name || !grown) {
        free(name);
        goto oom;
    }
    p->params[p->n_params++] = (ws_param_raw){ name, value, where };
    return 0;
oom:
    free(value);
    free(where);
    return fail_oom(c);
}

int parse_params(const ctx *c, const ynode *m, const char *what,
                        ws_policy_ref *p)
{
    char got[DESCRIBE_SIZE], ctxname[64];
    if (is_null(m)) return 0;     /* `params:` with every entry commented out */
    if (m->kind != Y_MAP)
        return fail_at(c, m, "%s.params must be a mapping, got %s", what,
                       describe(m, got, sizeof got));
    snprintf(ctxname, sizeof ctxname, "%s.params", what);
    if (check_name_keys(c, m, ctxname)) return -1;
    for (size_t i = 0; i < map_pairs(m); i++)
        if (put_param(c, p, what, map_key(m, i)->text, map_key(m, i),
                      map_val(m, i)))
            return -1;
    return 0;
}

enum { P_NAME, P_PARAMS, P_COUNT };
static const keydef policy_keys[] = {
    { "name", P_NAME, true },
    { "params", P_PARAMS, true },
};

/* `bso: zeus` or `bso: {name: zeus, params: {...}}` into *p (zeroed). */
int parse_policy(const ctx *c, const ynode *n, const char *what,
                        ws_policy_ref *p)
{
    const ynode *keys[P_COUNT], *vals[P_COUNT];
    char field[32], got[DESCRIBE_SIZE];
    if (n->kind != Y_MAP) {
        if (n->kind != Y_SCALAR || is_null(n) || !n->text[0])
            return fail_at(c, n, "%s must be a policy name or a mapping "
                           "{name, params}, got %s", what,
                           describe(n, got, sizeof got));
        if (get_string(c, n, what, &p->name)) return -1;
        if (!(p->where = where_of(c, n))) return fail_oom(c);
        p->in_file = c->file != NULL;
        return 0;
    }
    if (match_keys(c, n, what, policy_keys, P_COUNT, P_COUNT, keys, vals))
        return -1;
    if (!vals[P_NAME])
        return fail_at(c, n, "%s is missing key 'name'", what);
    snprintf(field, sizeof field, "%s.name", what);
    if (get_string(c, vals[P_NAME], field, &p->name)) return -1;
    if (!(p->where = where_of(c, vals[P_NAME]))) return fail_oom(c);
    p->in_file = c->file != NULL;
    return vals[P_PARAMS] ? parse_params(c, vals[P_PARAMS], what, p) : 0;
}
