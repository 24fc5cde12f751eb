/*
 * Configuration files: the workload catalogue and run configs (see
 * wattsim/config.h for the structs, configs/default.yaml for an example).
 *
 * Reading happens in two steps:
 *
 *  1. YAML text -> a small tree of scalars, lists and mappings, each node
 *     remembering its 1-based line and column (config_yaml.c). It uses
 *     libyaml's event API rather than its document API because the latter
 *     resolves aliases silently; anchors and aliases are rejected outright
 *     (nothing here needs them, and it rules out alias-expansion bombs).
 *  2. tree -> C structs (here), checking types, ranges, unknown and duplicate keys,
 *     so every error names the node it is about.
 *
 * `--set key=value` parses the value alone into a tree and reuses step 2,
 * so an override is checked exactly like the same key in a file.
 *
 * Updates are transactional: a run config is parsed into a zeroed scratch
 * struct and only the keys actually given are swapped into the caller's
 * struct once everything parsed. A failed load or --set therefore leaves
 * the caller's config unchanged (and freeable).
 *
 * Map, in file order:
 *   run configs  the keys (K_*), what-if keys (apply_whatif), one key to
 *                its field (apply_key), the swap of given keys
 *                (swap_key); ws_run_config_init/free/load; --set
 *                (ws_run_config_set: policy parts, conflicting keys);
 *                validation of the whole (ws_run_config_validate, the
 *                what-if spec, the plan's size); its policy pairs
 *   catalogue    workloads.yaml: workloads and GPU display names
 *                (ws_catalogue_load/find/free)
 * Axes and workload specs are parsed in config_axes.c, policy axes in
 * config_policies.c, options in config_opts.c.
 */
#include <ctype.h>

#include "config_parse.h"
#include "wattsim/style.h"
#include "wattsim/trace.h"

/* -------------------------------------------------------- run configs */

enum { K_GPU, K_WORKLOAD, K_JOB, K_ETA, K_BETA, K_SEED, K_RECURRENCES, K_BSO,
       K_PLO, K_OUT, K_TRACES, K_FORMAT, K_POWER_CAP, K_INPUT_STALL, K_IDLE_POWER,
       K_CARBON, K_START, K_PRICE, K_OBJECTIVE, K_PRICE_TZ, K_PRICE_LABEL, K_EVERY,
       K_DEFER, K_JOB_POWER_CAP, K_INPUT_RATE, K_SAMPLES_PER_EPOCH, K_CARBON_BASIS,
       K_PRICE_ADJ, K_POLICIES, K_STYLE, K_COUNT };
static const keydef run_keys[] = {
    { "gpu", K_GPU, true },           { "gpus", K_GPU, false },
    { "workload", K_WORKLOAD, true }, { "workloads", K_WORKLOAD, false },
    { "job", K_JOB, true },           { "jobs", K_JOB, false },
    { "eta", K_ETA, true },
    { "beta", K_BETA, true },
    { "seed", K_SEED, true },         { "seeds", K_SEED, false },
    { "recurrences", K_RECURRENCES, true },
    { "bso", K_BSO, true },
    { "plo", K_PLO, true },
    { "policies", K_POLICIES, true },
    { "out", K_OUT, true },
    { "traces", K_TRACES, true },
    { "format", K_FORMAT, true },
    { "power_cap", K_POWER_CAP, true },
    { "input_stall", K_INPUT_STALL, true },
    { "idle_power", K_IDLE_POWER, true },
    { "carbon", K_CARBON, true },
    { "start", K_START, true },
    { "price", K_PRICE, true },
    { "objective", K_OBJECTIVE, true },
    { "price_tz", K_PRICE_TZ, true },
    { "price_label", K_PRICE_LABEL, true },
    { "every", K_EVERY, true },
    { "defer_up_to", K_DEFER, true },
    { "job_power_cap", K_JOB_POWER_CAP, true },
    { "input_rate", K_INPUT_RATE, true },
    { "samples_per_epoch", K_SAMPLES_PER_EPOCH, true },
    { "carbon_basis", K_CARBON_BASIS, true },
    { "price_adjustments", K_PRICE_ADJ, true },
    { "style", K_STYLE, true },
};
#define N_RUN_KEYS (sizeof run_keys / sizeof *run_keys)

static const char *const formats[] = { "table", "csv", "json" };

static bool valid_format(const char *s)
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (!strcmp(s, formats[i])) return true;
    return false;
}

static bool cap_ok(double v) { return v > 0.0; }

/* A duration: a number and a unit, s, m, h or d ("24h", "90m", "1.5d"),
 * from 1 s to 366 days. */
static bool parse_duration(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) return false;
    double unit = !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600
                : !strcmp(end, "d") ? 86400 : 0;
    if (!unit) return false;
    v *= unit;
    if (!(v >= 1.0 && v <= 366 * 86400.0)) return false;
    *out = v;
    return true;
}
static bool stall_ok(double v) { return v >= 0.0 && v < 1.0; }
static bool rate_ok(double v) { return v > 0.0 && v <= WS_MAX_INPUT_RATE; }
static bool samples_ok(double v) { return v >= 1.0 && v <= WS_MAX_SAMPLES_PER_EPOCH; }
/* What a GPU draws while it waits for input: a trace row's power bound
 * (wattsim/trace.h), so that a stalled epoch's energy stays finite. */
static bool idle_ok(double v) { return v >= 0.0 && v <= WS_MAX_AVERAGE_POWER; }

/* A number written as zero ("0", "0.0e5"), not one too small for a
 * double ("1e-400", which strtod reads as 0). */
static bool zero_text(const char *s)
{
    for (; *s && *s != 'e' && *s != 'E'; s++)
        if (*s >= '1' && *s <= '9') return false;
    return true;
}

/* Does strtod read all of s as a number (nan, inf and 1e400 included)? */
static bool spells_number(const char *s)
{
    char *end = NULL;
    if (!s[0] || isspace((unsigned char)s[0])) return false;
    double x = strtod(s, &end);
    (void)x;
    return end != s && !*end;
}

/* One number of a what-if key into *out, checked by ok(). */
static int whatif_real(const ctx *c, const ynode *v, const char *what,
                       const char *expect, bool (*ok)(double), double *out)
{
    char got[DESCRIBE_SIZE];
    if (v->kind != Y_SCALAR || !parse_real(v->text, false, out) || !ok(*out))
        return fail_at(c, v, "%s must be %s, got %s", what, expect,
                       describe(v, got, sizeof got));
    return 0;
}

/* The what-if keys (wattsim/config.h ws_whatif_spec). */
static int apply_whatif(const ctx *c, int id, const char *what, const ynode *v,
                        ws_whatif_spec *w)
{
    char got[DESCRIBE_SIZE];
    int slot = id - K_POWER_CAP;
    if (!(w->where[slot] = where_of(c, v))) return fail_oom(c);
    switch (id) {
    case K_POWER_CAP:
        return whatif_real(c, v, what, "a power in W > 0", cap_ok, &w->power_cap);
    case K_INPUT_STALL:
        return whatif_real(c, v, what, "a fraction in [0, 1)", stall_ok,
                           &w->input_stall);
    case K_IDLE_POWER:
        return whatif_real(c, v, what, "a power in W from 0 to 100000", idle_ok,
                           &w->idle_power);
    case K_CARBON:
        /* one file, or a list of files joined in time order */
        if (v->kind != Y_LIST) return get_string(c, v, what, &w->carbon);
        if (!v->n)
            return fail_at(c, v, "%s must be a series file or a list of them, got an empty"
                           " list", what);
        if (get_string(c, v->kids[0], what, &w->carbon)) return -1;
        if (v->n > 1
            && !(w->carbon_more = calloc(v->n - 1, sizeof *w->carbon_more)))
            return fail_oom(c);
        for (size_t i = 1; i < v->n; i++) {
            if (get_string(c, v->kids[i], what, &w->carbon_more[i - 1])) return -1;
            w->n_carbon_more = i;
        }
        return 0;
    case K_CARBON_BASIS:
        if (v->kind != Y_SCALAR || (strcmp(v->text, "lifecycle") && strcmp(v->text, "direct")))
            return fail_at(c, v, "%s must be lifecycle or direct, got %s", what,
                           describe(v, got, sizeof got));
        w->carbon_basis = !strcmp(v->text, "direct");
        return 0;
    case K_PRICE_ADJ:
        if (v->kind != Y_SCALAR || (strcmp(v->text, "include") && strcmp(v->text, "ignore")))
            return fail_at(c, v, "%s must be include or ignore, got %s", what,
                           describe(v, got, sizeof got));
        w->price_adjustments = !strcmp(v->text, "include");
        return 0;
    case K_START: {
        double t;
        if (v->kind != Y_SCALAR || ws_parse_time(v->text, &t))
            return fail_at(c, v, "%s must be an ISO 8601 time (e.g."
                           " 2022-10-20T06:20:00Z), got %s", what,
                           describe(v, got, sizeof got));
        return get_string(c, v, what, &w->start);
    }
    case K_PRICE: {
        w->price_value = NAN;
        /* A constant price obeys a series' rule (wattsim/series.h), so
         * that dollars and the price objective's scale stay finite. Text
         * that reads as a number to strtod (nan, inf, -inf, 1e400, 0x10)
         * is a number that breaks the rule, not a file's name (a file so
         * named is ./nan). */
        const int numeric = v->kind == Y_SCALAR && spells_number(v->text);
        const int number = v->kind == Y_SCALAR && parse_real(v->text, false, &w->price_value);
        if ((numeric && !number)
            || (number && (!ws_series_value_ok(w->price_value)
                           || (w->price_value == 0 && !zero_text(v->text)))))  /* underflowed */
            return fail_at(c, v, "%s must be a price in $/kWh (" WS_SERIES_VALUE_RULE
                           ") or a series file, got %s", what, describe(v, got, sizeof got));
        return get_string(c, v, what, &w->price);
    }
    case K_OBJECTIVE:
        if (v->kind != Y_SCALAR || (strcmp(v->text, "energy") && strcmp(v->text, "carbon")
                                    && strcmp(v->text, "price")))
            return fail_at(c, v, "%s must be one of energy, carbon, price, got %s",
                           what, describe(v, got, sizeof got));
        return get_string(c, v, what, &w->objective);
    case K_PRICE_TZ:
        if (v->kind != Y_SCALAR || !ws_series_tz_ok(v->text))
            return fail_at(c, v, "%s must be a time zone: UTC, +HH:MM, -HH:MM or an IANA"
                           " name such as America/New_York, got %s", what,
                           describe(v, got, sizeof got));
        return get_string(c, v, what, &w->price_tz);
    case K_PRICE_LABEL:
        if (v->kind != Y_SCALAR || !v->text[0] || strlen(v->text) > 256)
            return fail_at(c, v, "%s must be a tariff label (1 to 256 characters), got %s",
                           what, describe(v, got, sizeof got));
        return get_string(c, v, what, &w->price_label);
    case K_EVERY: case K_DEFER:
        if (v->kind != Y_SCALAR
            || !parse_duration(v->text, id == K_EVERY ? &w->every : &w->defer_up_to))
            return fail_at(c, v, "%s must be a duration from 1s to 366d: a number and a unit"
                           " s, m, h or d (e.g. 24h, 90m), got %s", what,
                           describe(v, got, sizeof got));
        return 0;
    case K_JOB_POWER_CAP:
        return whatif_real(c, v, what, "a power in W > 0", cap_ok, &w->job_power_cap);
    case K_INPUT_RATE:
        return whatif_real(c, v, what, "a rate in samples/s > 0 and at most 1e12",
                           rate_ok, &w->input_rate);
    case K_SAMPLES_PER_EPOCH:
        return whatif_real(c, v, what, "a number of samples from 1 to 1e15", samples_ok,
                           &w->samples_per_epoch);
    }
    return fail_at(c, v, "internal error: no key %d", id);
}

/* A config's `out` stays below the folder the command runs in: a config
 * received from someone else must not write over /etc/... or ../../x.
 * Checked when it is used: --out or --set out=... (typed by the user, and
 * allowed to name any folder) make it moot. */
int ws_run_config_out(const ws_run_config *cfg, const char *opt, const char **out,
                      ws_error *err)
{
    *out = opt ? opt : cfg->out_dir;
    char why[64];
    if (opt && ws_path_check(opt, why, sizeof why))
        return ws_fail(err, "--out '%s' %s; an output folder's path is printed and made a"
                       " folder: " WS_PATH_RULE, opt, why);
    if (opt || !cfg->out_dir || !cfg->where_out) return 0;
    const char *dir = cfg->out_dir;
    if (dir[0] == '/')
        return ws_fail(err, "%s: out '%s' is an absolute path; a config's output folder must"
                       " stay below the current folder: make it relative, or pass --out %s",
                       cfg->where_out, dir, dir);
    for (const char *p = dir; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && !strncmp(p, "..", 2))
            return ws_fail(err, "%s: out '%s' climbs out of the current folder with '..'; a"
                           " config's output folder must stay below it: pass --out %s to"
                           " write there", cfg->where_out, dir, dir);
        p += n;
        while (*p == '/') p++;
    }
    return 0;
}

/* Parse the value of top-level key `id` (written as `what`) into the
 * zeroed scratch config t. */
static int apply_key(const ctx *c, int id, const char *what, const ynode *v,
                     ws_run_config *t)
{
    char got[DESCRIBE_SIZE];
    unsigned long u;
    switch (id) {
    case K_GPU:
        if (!(t->where_gpus = where_of(c, v))) return fail_oom(c);
        return string_axis(c, v, what, &t->gpus, &t->n_gpus);
    case K_WORKLOAD:
        if (!(t->where_workloads = where_of(c, v))) return fail_oom(c);
        return string_axis(c, v, what, &t->workloads, &t->n_workloads);
    case K_JOB:      return job_axis(c, v, what, &t->jobs, &t->n_jobs);
    case K_ETA:
        return real_axis(c, v, what, "a number in [0, 1]", false, eta_ok,
                         &t->etas, &t->n_etas);
    case K_BETA:
        return real_axis(c, v, what, "a number > 0 or .inf", true, beta_ok,
                         &t->betas, &t->n_betas);
    case K_SEED:     return seed_axis(c, v, what, &t->seeds, &t->n_seeds);
    case K_RECURRENCES:
        if (v->kind == Y_SCALAR && !strcmp(v->text, "default")) {
            t->recurrences = 0;
            return 0;
        }
        if (v->kind != Y_SCALAR || !parse_int_in(v->text, 1, WS_MAX_RECURRENCES, &u))
            return fail_at(c, v, "%s must be an integer in 1..%ld or 'default', "
                           "got %s", what, (long)WS_MAX_RECURRENCES, describe(v, got, sizeof got));
        t->recurrences = (long)u;
        return 0;
    case K_BSO:
        if (v->kind != Y_LIST) return parse_policy(c, v, what, &t->bso);
        if (!(t->where_bsos = where_of(c, v))) return fail_oom(c);
        return policy_list(c, v, what, &t->bsos, &t->n_bsos);
    case K_PLO:
        if (v->kind != Y_LIST) return parse_policy(c, v, what, &t->plo);
        if (!(t->where_plos = where_of(c, v))) return fail_oom(c);
        return policy_list(c, v, what, &t->plos, &t->n_plos);
    case K_POLICIES:
        if (!(t->where_pairs = where_of(c, v))) return fail_oom(c);
        return pair_list(c, v, what, &t->pairs, &t->n_pairs);
    case K_OUT: {
        if (c->file && !(t->where_out = where_of(c, v))) return fail_oom(c);
        if (get_string(c, v, what, &t->out_dir)) return -1;
        /* A folder's name and printed ("outputs in DIR/"): no byte that
         * would drive the terminal (wattsim/name.h). */
        char why[64], shown[SHOW_SIZE];
        if (!ws_path_check(t->out_dir, why, sizeof why)) return 0;
        return fail_at(c, v, "%s '%s' %s; an output folder's path is printed and made a"
                       " folder: " WS_PATH_RULE, what,
                       show_text(t->out_dir, shown, sizeof shown), why);
    }
    case K_STYLE: {
        ws_style st;
        ws_error e = {{0}};
        if (v->kind != Y_SCALAR || ws_style_parse(v->text, &st, &e))
            return v->kind != Y_SCALAR
                   ? fail_at(c, v, "%s must be one string, \"font=NAME, size=PT, col1=IN,"
                             " col2=IN, palette=NAME\"", what)
                   : fail_at(c, v, "%s", e.msg);
        return get_string(c, v, what, &t->style);
    }
    case K_TRACES:   return get_string(c, v, what, &t->traces);
    case K_FORMAT:
        if (v->kind != Y_SCALAR || !valid_format(v->text))
            return fail_at(c, v, "%s must be one of table, csv, json, got %s",
                           what, describe(v, got, sizeof got));
        return get_string(c, v, what, &t->format);
    case K_POWER_CAP: case K_INPUT_STALL: case K_IDLE_POWER: case K_CARBON:
    case K_START: case K_PRICE: case K_OBJECTIVE: case K_PRICE_TZ: case K_PRICE_LABEL:
    case K_EVERY: case K_DEFER: case K_JOB_POWER_CAP: case K_INPUT_RATE:
    case K_SAMPLES_PER_EPOCH: case K_CARBON_BASIS: case K_PRICE_ADJ:
        return apply_whatif(c, id, what, v, &t->whatif);
    }
    return fail_at(c, v, "internal error: no key %d", id);
}

static void swap_mem(void *a, void *b, size_t n)
{
    unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        unsigned char t = x[i];
        x[i] = y[i];
        y[i] = t;
    }
}
#define SWAP_FIELD(a, b, f) swap_mem(&(a)->f, &(b)->f, sizeof (a)->f)

/* Move key `id` from the scratch config into cfg; the old value lands in
 * the scratch config, which the caller frees. */
static void swap_key(ws_run_config *cfg, ws_run_config *t, int id)
{
    switch (id) {
    case K_GPU:         SWAP_FIELD(cfg, t, gpus); SWAP_FIELD(cfg, t, n_gpus);
                        SWAP_FIELD(cfg, t, where_gpus); break;
    case K_WORKLOAD:    SWAP_FIELD(cfg, t, workloads);
                        SWAP_FIELD(cfg, t, n_workloads);
                        SWAP_FIELD(cfg, t, where_workloads); break;
    case K_JOB:         SWAP_FIELD(cfg, t, jobs); SWAP_FIELD(cfg, t, n_jobs); break;
    case K_ETA:         SWAP_FIELD(cfg, t, etas); SWAP_FIELD(cfg, t, n_etas); break;
    case K_BETA:        SWAP_FIELD(cfg, t, betas); SWAP_FIELD(cfg, t, n_betas); break;
    case K_SEED:        SWAP_FIELD(cfg, t, seeds); SWAP_FIELD(cfg, t, n_seeds); break;
    case K_RECURRENCES: SWAP_FIELD(cfg, t, recurrences); break;
    case K_BSO:         SWAP_FIELD(cfg, t, bso); SWAP_FIELD(cfg, t, bsos);
                        SWAP_FIELD(cfg, t, n_bsos); SWAP_FIELD(cfg, t, where_bsos); break;
    case K_PLO:         SWAP_FIELD(cfg, t, plo); SWAP_FIELD(cfg, t, plos);
                        SWAP_FIELD(cfg, t, n_plos); SWAP_FIELD(cfg, t, where_plos); break;
    case K_POLICIES:    SWAP_FIELD(cfg, t, pairs); SWAP_FIELD(cfg, t, n_pairs);
                        SWAP_FIELD(cfg, t, where_pairs); break;
    case K_OUT:         SWAP_FIELD(cfg, t, out_dir); SWAP_FIELD(cfg, t, where_out); break;
    case K_TRACES:      SWAP_FIELD(cfg, t, traces); break;
    case K_STYLE:       SWAP_FIELD(cfg, t, style); break;
    case K_FORMAT:      SWAP_FIELD(cfg, t, format); break;
    case K_POWER_CAP:   SWAP_FIELD(cfg, t, whatif.power_cap); break;
    case K_INPUT_STALL: SWAP_FIELD(cfg, t, whatif.input_stall); break;
    case K_IDLE_POWER:  SWAP_FIELD(cfg, t, whatif.idle_power); break;
    case K_CARBON:      SWAP_FIELD(cfg, t, whatif.carbon);
                        SWAP_FIELD(cfg, t, whatif.carbon_more);
                        SWAP_FIELD(cfg, t, whatif.n_carbon_more); break;
    case K_CARBON_BASIS: SWAP_FIELD(cfg, t, whatif.carbon_basis); break;
    case K_PRICE_ADJ:   SWAP_FIELD(cfg, t, whatif.price_adjustments); break;
    case K_START:       SWAP_FIELD(cfg, t, whatif.start); break;
    case K_PRICE:       SWAP_FIELD(cfg, t, whatif.price);
                        SWAP_FIELD(cfg, t, whatif.price_value); break;
    case K_OBJECTIVE:   SWAP_FIELD(cfg, t, whatif.objective); break;
    case K_PRICE_TZ:    SWAP_FIELD(cfg, t, whatif.price_tz); break;
    case K_PRICE_LABEL: SWAP_FIELD(cfg, t, whatif.price_label); break;
    case K_EVERY:       SWAP_FIELD(cfg, t, whatif.every); break;
    case K_DEFER:       SWAP_FIELD(cfg, t, whatif.defer_up_to); break;
    case K_JOB_POWER_CAP: SWAP_FIELD(cfg, t, whatif.job_power_cap); break;
    case K_INPUT_RATE:  SWAP_FIELD(cfg, t, whatif.input_rate); break;
    case K_SAMPLES_PER_EPOCH: SWAP_FIELD(cfg, t, whatif.samples_per_epoch); break;
    }
    if (id >= K_POWER_CAP && id <= K_PRICE_ADJ)
        SWAP_FIELD(cfg, t, whatif.where[id - K_POWER_CAP]);
}

static char **one_string(const char *s, size_t *n)
{
    char **a = malloc(sizeof *a);
    if (a && !(a[0] = strdup(s))) {
        free(a);
        a = NULL;
    }
    *n = a != NULL;
    return a;
}

static double *one_real(double v, size_t *n)
{
    double *a = malloc(sizeof *a);
    if (a) *a = v;
    *n = a != NULL;
    return a;
}

static void default_policy(ws_policy_ref *p, const char *name)
{
    p->name = strdup(name);
    p->where = strdup("default");
}

/* Out of memory here leaves lists empty; ws_run_config_validate then
 * reports them, so init itself never fails. */
void ws_run_config_init(ws_run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->path = strdup("");
    cfg->gpus = one_string("v100", &cfg->n_gpus);
    cfg->etas = one_real(0.5, &cfg->n_etas);
    cfg->betas = one_real(2.0, &cfg->n_betas);
    if ((cfg->seeds = malloc(sizeof *cfg->seeds))) {
        cfg->seeds[0] = 1;
        cfg->n_seeds = 1;
    }
    cfg->recurrences = 0;
    cfg->whatif.price_value = NAN;
    default_policy(&cfg->bso, "zeus");
    default_policy(&cfg->plo, "jit");
}

void ws_run_config_free(ws_run_config *cfg)
{
    if (!cfg) return;
    free(cfg->path);
    for (size_t i = 0; i < cfg->n_gpus; i++) free(cfg->gpus[i]);
    free(cfg->gpus);
    free(cfg->where_gpus);
    free(cfg->where_workloads);
    for (size_t i = 0; i < cfg->n_workloads; i++) free(cfg->workloads[i]);
    free(cfg->workloads);
    for (size_t i = 0; i < cfg->n_jobs; i++) spec_free(&cfg->jobs[i]);
    free(cfg->jobs);
    free(cfg->etas);
    free(cfg->betas);
    free(cfg->seeds);
    policy_free(&cfg->bso);
    policy_free(&cfg->plo);
    for (size_t i = 0; i < cfg->n_bsos; i++) policy_free(&cfg->bsos[i]);
    free(cfg->bsos);
    for (size_t i = 0; i < cfg->n_plos; i++) policy_free(&cfg->plos[i]);
    free(cfg->plos);
    for (size_t i = 0; i < cfg->n_pairs; i++) pair_free(&cfg->pairs[i]);
    free(cfg->pairs);
    free(cfg->where_bsos);
    free(cfg->where_plos);
    free(cfg->where_pairs);
    free(cfg->out_dir);
    free(cfg->where_out);
    free(cfg->style);
    free(cfg->traces);
    free(cfg->format);
    free(cfg->whatif.carbon);
    for (size_t i = 0; i < cfg->whatif.n_carbon_more; i++) free(cfg->whatif.carbon_more[i]);
    free(cfg->whatif.carbon_more);
    free(cfg->whatif.start);
    free(cfg->whatif.price);
    free(cfg->whatif.objective);
    free(cfg->whatif.price_tz);
    free(cfg->whatif.price_label);
    for (int i = 0; i < WS_WI_COUNT; i++) free(cfg->whatif.where[i]);
    memset(cfg, 0, sizeof *cfg);   /* a second free is harmless */
}

int ws_run_config_load(const char *path, ws_run_config *cfg, ws_error *err)
{
    ctx c = { path ? path : "(null)", NULL, 0, err };
    const ynode *keys[K_COUNT] = {0}, *vals[K_COUNT] = {0};
    ynode *root;
    ws_run_config t;

    if (!path || !cfg) return ws_fail(err, "no config file or struct given");
    if (read_file_tree(&c, &root)) return -1;
    memset(&t, 0, sizeof t);
    int rc = match_keys(&c, root, "", run_keys, N_RUN_KEYS, K_COUNT, keys, vals);
    /* Both would say which policies run: refuse rather than pick one
     * (vals are set only when match_keys succeeded). */
    if (rc == 0 && vals[K_POLICIES] && (vals[K_BSO] || vals[K_PLO])) {
        const ynode *other = vals[K_BSO] ? keys[K_BSO] : keys[K_PLO];
        rc = fail_at(&c, keys[K_POLICIES], "'policies' and '%s' (line %lu) both say"
                     " which policies run; give the pairs in 'policies' only, or drop"
                     " it and give bso and plo (lists for an axis)", other->text,
                     other->line);
    }
    /* Values in file order, so the first bad one in the file is reported. */
    for (size_t i = 0; rc == 0 && i < map_pairs(root); i++) {
        int id = key_id(run_keys, N_RUN_KEYS, map_key(root, i)->text);
        rc = apply_key(&c, id, map_key(root, i)->text, map_val(root, i), &t);
    }
    if (rc == 0 && !(t.path = strdup(path))) rc = fail_oom(&c);
    if (rc == 0) {
        for (int id = 0; id < K_COUNT; id++)
            if (vals[id]) swap_key(cfg, &t, id);
        SWAP_FIELD(cfg, &t, path);
    }
    ws_run_config_free(&t);
    ynode_free(root);
    return rc;
}

/* --set bso.name=X, bso.params=..., bso.params.NAME=X (and plo). */
static int set_policy_part(const ctx *c, ws_policy_ref *p, const char *what,
                           const char *rest, const ynode *v)
{
    char field[32];
    if (!strcmp(rest, "name")) {
        char *name, *where;
        snprintf(field, sizeof field, "%s.name", what);
        if (get_string(c, v, field, &name)) return -1;
        if (!(where = strdup("--set"))) {
            free(name);
            return fail_oom(c);
        }
        free(p->name);
        free(p->where);
        p->name = name;
        p->where = where;
        p->in_file = 0;                 /* typed on the command line */
        return 0;
    }
    if (!strcmp(rest, "params")) {          /* replace them all */
        ws_policy_ref t = { 0 };
        if (parse_params(c, v, what, &t)) {
            policy_free(&t);
            return -1;
        }
        SWAP_FIELD(p, &t, params);
        SWAP_FIELD(p, &t, n_params);
        policy_free(&t);
        return 0;
    }
    return put_param(c, p, what, rest + strlen("params."), NULL, v);
}

/* Is `key` one of PREFIX.name, PREFIX.params or PREFIX.params.NAME? */
static bool is_policy_key(const char *key, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(key, prefix, n) || key[n] != '.') return false;
    key += n + 1;
    return !strcmp(key, "name") || !strcmp(key, "params") ||
           (!strncmp(key, "params.", 7) && key[7]);
}

/* A --set that would make the policy axis ambiguous: part of a policy
 * that is a list (which one?), bso/plo beside a `policies:` list, or
 * `policies` beside bso/plo given in the config. */
static int set_conflict(const ctx *c, const ws_run_config *cfg, int id,
                        const ws_policy_ref *part)
{
    int bso = part ? part == &cfg->bso : id == K_BSO;
    const char *side = bso ? "bso" : "plo";
    const char *list = bso ? cfg->where_bsos : cfg->where_plos;
    if (part && list)
        return fail_at(c, NULL, "%s is a list (%s); set the whole list instead,"
                       " e.g. --set '%s=[zeus, gts]'", side, list, side);
    if ((part || id == K_BSO || id == K_PLO) && cfg->where_pairs)
        return fail_at(c, NULL, "the config gives its policy pairs in 'policies' (%s);"
                       " set policies instead, or pass --policies", cfg->where_pairs);
    if (id == K_POLICIES) {
        const char *given = cfg->where_bsos ? cfg->where_bsos
                          : cfg->where_plos ? cfg->where_plos
                          : cfg->bso.where && strcmp(cfg->bso.where, "default") ? cfg->bso.where
                          : cfg->plo.where && strcmp(cfg->plo.where, "default") ? cfg->plo.where
                          : NULL;
        if (given)
            return fail_at(c, NULL, "the config gives bso/plo (%s); policies would"
                           " replace them: set bso and plo instead", given);
    }
    return 0;
}

int ws_run_config_set(ws_run_config *cfg, const char *assignment, ws_error *err)
{
    char shown[SHOW_SIZE], keyshown[SHOW_SIZE], exp[400];
    if (!cfg) return ws_fail(err, "--set: no run config");
    if (!assignment) return ws_fail(err, "--set: expected KEY=VALUE");
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return ws_fail(err, "--set %s: expected KEY=VALUE",
                       show_text(assignment, shown, sizeof shown));

    /* The key without surrounding blanks ("eta = 0.3" from a quoted shell
     * word); the value is YAML, which skips blanks itself. */
    const char *kb = assignment, *ke = eq;
    while (kb < ke && (*kb == ' ' || *kb == '\t')) kb++;
    while (ke > kb && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
    char *key = strndup(kb, (size_t)(ke - kb));
    if (!key) return ws_fail(err, "--set: out of memory");
    const char *value = eq + 1;
    ctx c = { NULL, show_text(key, shown, sizeof shown), strlen(value), err };

    /* The key first: a typo in it is the likelier mistake. */
    int id = key_id(run_keys, N_RUN_KEYS, key);
    ws_policy_ref *policy = is_policy_key(key, "bso") ? &cfg->bso
                          : is_policy_key(key, "plo") ? &cfg->plo : NULL;
    if (id < 0 && !policy) {
        expected_list(run_keys, N_RUN_KEYS, exp, sizeof exp);
        fail_at(&c, NULL, "unknown key '%s' (expected one of: %s, bso.name, "
                "bso.params.NAME, plo.name, plo.params.NAME)",
                show_text(key, keyshown, sizeof keyshown), exp);
        free(key);
        return -1;
    }

    if (set_conflict(&c, cfg, id, policy)) {
        free(key);
        return -1;
    }
    ynode *v = NULL;
    int rc = read_tree(&c, (const unsigned char *)value, strlen(value), &v);
    if (rc == 0 && !v) {        /* "key=" or only a comment: an empty value */
        if (!(v = calloc(1, sizeof *v)) || !(v->text = strdup(""))) {
            rc = fail_oom(&c);
        } else {
            v->kind = Y_SCALAR;
            v->plain = true;
            v->line = v->col = 1;
        }
    }
    if (rc == 0 && id >= 0) {
        ws_run_config t;
        memset(&t, 0, sizeof t);
        if ((rc = apply_key(&c, id, key, v, &t)) == 0) swap_key(cfg, &t, id);
        ws_run_config_free(&t);
    } else if (rc == 0) {
        rc = set_policy_part(&c, policy, policy == &cfg->bso ? "bso" : "plo",
                             key + 4, v);
    }
    ynode_free(v);
    free(key);
    return rc;
}

__attribute__((format(printf, 3, 4)))
static int fail_cfg(const ws_run_config *cfg, ws_error *err, const char *fmt, ...)
{
    char msg[WS_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cfg->path && cfg->path[0]) return ws_fail(err, "%s: %s", cfg->path, msg);
    return ws_fail(err, "%s", msg);
}

static bool nonempty(const char *s) { return s && s[0]; }

int ws_whatif_spec_validate(const ws_whatif_spec *w, ws_error *err)
{
    char *const *at = w->where;
    if (at[WS_WI_INPUT_STALL] && w->input_stall > 0 && !at[WS_WI_IDLE_POWER])
        return ws_fail(err, "%s: an input stall needs the power the GPU draws while"
                       " it waits: give idle_power (--idle-power W)", at[WS_WI_INPUT_STALL]);
    if (at[WS_WI_INPUT_RATE] && at[WS_WI_INPUT_STALL])
        return ws_fail(err, "%s: the input rate and an input stall are two models of"
                       " the same wait: give input_rate with samples_per_epoch"
                       " (--input-rate R --samples-per-epoch N) or input_stall"
                       " (--input-stall S), not both", at[WS_WI_INPUT_RATE]);
    if (at[WS_WI_INPUT_RATE] && !at[WS_WI_SAMPLES_PER_EPOCH])
        return ws_fail(err, "%s: an input rate needs the samples of one epoch: give"
                       " samples_per_epoch (--samples-per-epoch N)", at[WS_WI_INPUT_RATE]);
    if (at[WS_WI_SAMPLES_PER_EPOCH] && !at[WS_WI_INPUT_RATE])
        return ws_fail(err, "%s: samples per epoch only matter with the rate the input"
                       " pipeline delivers them: give input_rate (--input-rate R)",
                       at[WS_WI_SAMPLES_PER_EPOCH]);
    if (at[WS_WI_INPUT_RATE] && !at[WS_WI_IDLE_POWER])
        return ws_fail(err, "%s: waiting for input needs the power each GPU draws"
                       " while it waits: give idle_power (--idle-power W)",
                       at[WS_WI_INPUT_RATE]);
    if (at[WS_WI_INPUT_RATE] && !(w->samples_per_epoch / w->input_rate <= WS_MAX_TIME_PER_EPOCH))
        return ws_fail(err, "%s: %g samples per epoch at %g samples/s take %g s, more"
                       " than a year per epoch: check the rate's and the count's units",
                       at[WS_WI_SAMPLES_PER_EPOCH], w->samples_per_epoch, w->input_rate,
                       w->samples_per_epoch / w->input_rate);
    if (at[WS_WI_IDLE_POWER] && !at[WS_WI_INPUT_STALL] && !at[WS_WI_INPUT_RATE])
        return ws_fail(err, "%s: idle power is drawn while waiting for input: give"
                       " input_stall (--input-stall S) or input_rate and"
                       " samples_per_epoch (--input-rate R --samples-per-epoch N) too",
                       at[WS_WI_IDLE_POWER]);
    if (at[WS_WI_START] && !w->carbon && !(w->price && isnan(w->price_value)))
        return ws_fail(err, "%s: start places the first recurrence on a carbon or"
                       " price series: give carbon (--carbon FILE) or a price series"
                       " (--price FILE)",
                       at[WS_WI_START]);
    if ((at[WS_WI_PRICE_TZ] || at[WS_WI_PRICE_LABEL]) && !(w->price && isnan(w->price_value)))
        return ws_fail(err, "%s: %s applies to an OpenEI tariff: give it with price"
                       " (--price FILE)", at[WS_WI_PRICE_TZ] ? at[WS_WI_PRICE_TZ]
                       : at[WS_WI_PRICE_LABEL], at[WS_WI_PRICE_TZ] ? "the time zone"
                       : "a tariff label");
    if (at[WS_WI_CARBON_BASIS] && !w->carbon)
        return ws_fail(err, "%s: the basis of carbon intensities applies to a carbon series:"
                       " give carbon (--carbon FILE)", at[WS_WI_CARBON_BASIS]);
    if (at[WS_WI_PRICE_ADJ] && !(w->price && isnan(w->price_value)))
        return ws_fail(err, "%s: adj applies to an OpenEI tariff: give it with price"
                       " (--price FILE)", at[WS_WI_PRICE_ADJ]);
    if ((at[WS_WI_EVERY] || at[WS_WI_DEFER]) && !w->carbon && !w->price)
        return ws_fail(err, "%s: a schedule places recurrences on the clock of a carbon or"
                       " price series: give carbon (--carbon FILE) or price (--price)",
                       at[WS_WI_EVERY] ? at[WS_WI_EVERY] : at[WS_WI_DEFER]);
    if (w->objective && !strcmp(w->objective, "carbon") && !w->carbon)
        return ws_fail(err, "%s: objective carbon needs a carbon-intensity series:"
                       " give carbon (--carbon FILE)", at[WS_WI_OBJECTIVE]);
    if (w->objective && !strcmp(w->objective, "price") && !w->price)
        return ws_fail(err, "%s: objective price needs a price: give price (--price"
                       " $/kWh or FILE)",
                       at[WS_WI_OBJECTIVE]);
    return 0;
}

int ws_run_config_plan_size(const ws_run_config *cfg, size_t n_pairs, size_t *sims,
                            ws_error *err)
{
    const size_t axes[] = { n_pairs, cfg->n_gpus, cfg->n_workloads + cfg->n_jobs,
                            cfg->n_etas, cfg->n_betas, cfg->n_seeds };
    size_t n = 1;
    int over = 0;
    double approx = 1;
    for (size_t i = 0; i < sizeof axes / sizeof *axes; i++) {
        approx *= (double)axes[i];
        over |= __builtin_mul_overflow(n, axes[i], &n);
    }
    if (sims) *sims = over ? SIZE_MAX : n;
    if (!over && n <= WS_MAX_PLAN_SIMS) return 0;
    char size[48];
    if (over) snprintf(size, sizeof size, "%.3g", approx);
    else snprintf(size, sizeof size, "%zu", n);
    return fail_cfg(cfg, err, "the run plan is %s simulations (%zu policy pairs x %zu gpus x"
                    " %zu workloads x %zu etas x %zu betas x %zu seeds), more than the %lu"
                    " one plan may hold; shrink an axis or split the plan into several configs",
                    size, axes[0], axes[1], axes[2], axes[3], axes[4], axes[5],
                    (unsigned long)WS_MAX_PLAN_SIMS);
}

int ws_run_config_one_simulation(const ws_run_config *cfg, ws_error *err)
{
    /* A list of seeds (or GPUs, etas, betas) would run several, whose
     * histories one report cannot tell apart. */
    if (cfg->n_gpus == 1 && cfg->n_workloads + cfg->n_jobs == 1 && cfg->n_etas == 1
        && cfg->n_betas == 1 && cfg->n_seeds == 1)
        return 1;
    ws_fail(err, "takes one GPU, one workload, one eta, one beta and one seed; use run or"
            " sweep for several");
    return 0;
}

int ws_run_config_validate(const ws_run_config *cfg, ws_error *err)
{
    if (!cfg) return ws_fail(err, "no run config");
    if (cfg->n_workloads + cfg->n_jobs == 0)
        return fail_cfg(cfg, err, "no workload to run: give 'workload' (a "
                        "name from the catalogue) or an inline 'job'");
    if (!cfg->n_gpus) return fail_cfg(cfg, err, "no gpu given");
    if (!cfg->n_etas) return fail_cfg(cfg, err, "no eta given");
    if (!cfg->n_betas) return fail_cfg(cfg, err, "no beta given");
    if (!cfg->n_seeds) return fail_cfg(cfg, err, "no seed given");

    /* The rest can only go wrong when a caller fills the struct itself (or
     * init ran out of memory): the parser already enforces it. */
    for (size_t i = 0; i < cfg->n_gpus; i++)
        if (!nonempty(cfg->gpus[i])) return fail_cfg(cfg, err, "empty gpu name");
    for (size_t i = 0; i < cfg->n_etas; i++)
        if (!eta_ok(cfg->etas[i]))
            return fail_cfg(cfg, err, "eta %g is not in [0, 1]", cfg->etas[i]);
    for (size_t i = 0; i < cfg->n_betas; i++)
        if (!beta_ok(cfg->betas[i]))
            return fail_cfg(cfg, err, "beta %g is not > 0", cfg->betas[i]);
    if (cfg->recurrences < 0)
        return fail_cfg(cfg, err, "recurrences %ld is negative", cfg->recurrences);
    if (!cfg->n_pairs && !cfg->n_bsos && !nonempty(cfg->bso.name))
        return fail_cfg(cfg, err, "no bso policy given");
    if (!cfg->n_pairs && !cfg->n_plos && !nonempty(cfg->plo.name))
        return fail_cfg(cfg, err, "no plo policy given");
    if (cfg->n_pairs && (cfg->n_bsos || cfg->n_plos))
        return fail_cfg(cfg, err, "policies and bso/plo lists both given");
    if (ws_whatif_spec_validate(&cfg->whatif, err)) return -1;
    if (cfg->format && !valid_format(cfg->format))
        return fail_cfg(cfg, err, "format must be one of table, csv, json, "
                        "got '%s'", cfg->format);
    for (size_t i = 0; i < cfg->n_jobs; i++) {
        const ws_workload_spec *j = &cfg->jobs[i];
        if (!nonempty(j->name) || !nonempty(j->dataset) ||
            !nonempty(j->network) || !nonempty(j->optimizer) ||
            !isfinite(j->target_metric) || j->max_epochs <= 0 || j->b0 <= 0)
            return fail_cfg(cfg, err, "job %zu is incomplete", i + 1);
    }

    /* The run plan is the cross product: refused here, before anything
     * is allocated for it, when it is too large to run. */
    if (ws_run_config_plan_size(cfg, ws_run_config_n_pairs(cfg), NULL, err)) return -1;

    /* Results are keyed by workload name, so a name may run only once
     * whether it comes from the catalogue or an inline job. */
    size_t n = cfg->n_workloads + cfg->n_jobs, first, again;
    const char **names = malloc(n * sizeof *names);
    if (!names) return fail_cfg(cfg, err, "out of memory");
    for (size_t i = 0; i < cfg->n_workloads; i++) {
        if (!nonempty(cfg->workloads[i])) {
            free(names);
            return fail_cfg(cfg, err, "empty workload name");
        }
        names[i] = cfg->workloads[i];
    }
    for (size_t i = 0; i < cfg->n_jobs; i++) names[cfg->n_workloads + i] = cfg->jobs[i].name;
    int rc = find_repeat(names, NULL, n, &first, &again);
    free(names);
    if (rc) return fail_cfg(cfg, err, "out of memory");
    if (again != SIZE_MAX) {
        char shown[SHOW_SIZE];
        const char *name = again < cfg->n_workloads
                               ? cfg->workloads[again]
                               : cfg->jobs[again - cfg->n_workloads].name;
        if (first < cfg->n_workloads && again >= cfg->n_workloads)
            return fail_cfg(cfg, err, "workload '%s' is given both as a "
                            "workload and as a job name; rename the job",
                            show_text(name, shown, sizeof shown));
        return fail_cfg(cfg, err, "workload '%s' is listed twice",
                        show_text(name, shown, sizeof shown));
    }
    return 0;
}

size_t ws_run_config_n_pairs(const ws_run_config *cfg)
{
    if (cfg->n_pairs) return cfg->n_pairs;
    return (cfg->n_bsos ? cfg->n_bsos : 1) * (cfg->n_plos ? cfg->n_plos : 1);
}

void ws_run_config_pair(const ws_run_config *cfg, size_t i, const ws_policy_ref **bso,
                        const ws_policy_ref **plo)
{
    if (cfg->n_pairs) {
        *bso = &cfg->pairs[i].bso;
        *plo = &cfg->pairs[i].plo;
        return;
    }
    size_t np = cfg->n_plos ? cfg->n_plos : 1;
    *bso = cfg->n_bsos ? &cfg->bsos[i / np] : &cfg->bso;
    *plo = cfg->n_plos ? &cfg->plos[i % np] : &cfg->plo;
}

const char *ws_run_config_pairs_where(const ws_run_config *cfg)
{
    if (ws_run_config_n_pairs(cfg) < 2) return NULL;
    if (cfg->n_pairs) return cfg->where_pairs;
    return cfg->n_bsos > 1 ? cfg->where_bsos : cfg->where_plos;
}

/* ---------------------------------------------------------- catalogue */

enum { C_GPUS, C_WORKLOADS, C_GPU_DISPLAY, C_COUNT };
static const keydef catalogue_keys[] = {
    { "gpus", C_GPUS, true },
    { "workloads", C_WORKLOADS, true },
    { "gpu_display", C_GPU_DISPLAY, true },       /* optional */
};

/* gpu_display: {v100: "V100", ...}: every key one of `gpus`. */
static int load_gpu_display(const ctx *c, const ynode *m, ws_catalogue *out)
{
    char got[DESCRIBE_SIZE], what[128], shown[SHOW_SIZE];
    if (m->kind != Y_MAP)
        return fail_at(c, m, "gpu_display must be a mapping of GPU names to display"
                       " names, got %s", describe(m, got, sizeof got));
    if (check_name_keys(c, m, "gpu_display")) return -1;
    if (!(out->gpu_display = calloc(out->n_gpus, sizeof *out->gpu_display)))
        return fail_oom(c);
    for (size_t i = 0; i < map_pairs(m); i++) {
        const char *name = map_key(m, i)->text;
        size_t g = 0;
        while (g < out->n_gpus && strcmp(out->gpus[g], name)) g++;
        if (g == out->n_gpus)
            return fail_at(c, map_key(m, i), "gpu_display: '%s' is not one of gpus",
                           show_text(name, shown, sizeof shown));
        snprintf(what, sizeof what, "gpu_display.%s", show_text(name, shown, sizeof shown));
        if (set_display(c, map_val(m, i), what, &out->gpu_display[g])) return -1;
    }
    return 0;
}

static int load_catalogue(const ctx *c, const ynode *root, ws_catalogue *out)
{
    const ynode *keys[C_COUNT], *vals[C_COUNT];
    char got[DESCRIBE_SIZE], what[128], shown[SHOW_SIZE];

    if (match_keys(c, root, "the catalogue", catalogue_keys, C_COUNT, C_COUNT,
                   keys, vals))
        return -1;
    for (int id = 0; id < C_GPU_DISPLAY; id++)
        if (!vals[id])
            return fail_at(c, root, "the catalogue is missing key '%s'",
                           catalogue_keys[id].name);
    if (string_axis(c, vals[C_GPUS], "gpus", &out->gpus, &out->n_gpus)) return -1;
    if (vals[C_GPU_DISPLAY] && load_gpu_display(c, vals[C_GPU_DISPLAY], out)) return -1;

    const ynode *w = vals[C_WORKLOADS];
    if (w->kind != Y_MAP || map_pairs(w) == 0)
        return fail_at(c, w, "workloads must be a mapping of workload names "
                       "to {dataset, network, ...}, got %s",
                       describe(w, got, sizeof got));
    if (check_name_keys(c, w, "workloads")) return -1;
    if (!(out->items = calloc(map_pairs(w), sizeof *out->items))) return fail_oom(c);
    out->n = map_pairs(w);
    for (size_t i = 0; i < out->n; i++) {
        snprintf(what, sizeof what, "workloads.%s",
                 show_text(map_key(w, i)->text, shown, sizeof shown));
        if (check_name(c, map_key(w, i), "workload", map_key(w, i)->text)) return -1;
        if (!(out->items[i].name = strdup(map_key(w, i)->text))) return fail_oom(c);
        if (parse_spec(c, map_val(w, i), what, false, &out->items[i])) return -1;
    }
    return 0;
}

int ws_catalogue_load(const char *path, ws_catalogue *out, ws_error *err)
{
    ctx c = { path, NULL, 0, err };
    ynode *root;
    if (!out) return ws_fail(err, "no catalogue to fill");
    memset(out, 0, sizeof *out);
    if (!path) return ws_fail(err, "no catalogue file given");
    if (read_file_tree(&c, &root)) return -1;
    int rc = load_catalogue(&c, root, out);
    ynode_free(root);
    if (rc) ws_catalogue_free(out);
    return rc;
}

const ws_workload_spec *ws_catalogue_find(const ws_catalogue *c, const char *name)
{
    if (!c || !name) return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].name && !strcmp(c->items[i].name, name)) return &c->items[i];
    return NULL;
}

const char *ws_catalogue_workload_display(const ws_catalogue *c, const char *name)
{
    const ws_workload_spec *w = ws_catalogue_find(c, name);
    return w && w->display ? w->display : name;
}

const char *ws_catalogue_gpu_display(const ws_catalogue *c, const char *name)
{
    for (size_t g = 0; c && c->gpu_display && g < c->n_gpus; g++)
        if (!strcmp(c->gpus[g], name) && c->gpu_display[g]) return c->gpu_display[g];
    return name;
}

void ws_catalogue_free(ws_catalogue *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) spec_free(&c->items[i]);
    free(c->items);
    for (size_t i = 0; i < c->n_gpus; i++) {
        free(c->gpus[i]);
        if (c->gpu_display) free(c->gpu_display[i]);
    }
    free(c->gpus);
    free(c->gpu_display);
    memset(c, 0, sizeof *c);
}
