/*
 * Options that set config keys, shared by the CLI and the library API
 * (wattsim/config_opts.h).
 */
#define _GNU_SOURCE                /* strndup */
#include "wattsim/config_opts.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/name.h"

void ws_config_relabel(ws_error *err, const char *key, const char *opt)
{
    char prefix[400], msg[WS_ERROR_MAX], k[160];
    if (!opt) return;
    /* the message quotes the key escaped (ws_fail): match it so */
    ws_text_escape(k, sizeof k, key);
    key = k;
    /* "--set style: style: size ..." (a parser that names its key) */
    snprintf(prefix, sizeof prefix, "--set %s: %s: ", key, key);
    size_t n = strlen(prefix);
    if (!strncmp(err->msg, prefix, n)) {
        snprintf(msg, sizeof msg, "%s: %s", opt, err->msg + n);
        ws_fail(err, "%s", msg);
        return;
    }
    snprintf(prefix, sizeof prefix, "--set %s: %s ", key, key);
    n = strlen(prefix);
    if (!strncmp(err->msg, prefix, n)) {
        snprintf(msg, sizeof msg, "%s %s", opt, err->msg + n);
        ws_fail(err, "%s", msg);
        return;
    }
    snprintf(prefix, sizeof prefix, "--set %s: ", key);
    n = strlen(prefix);
    if (!strncmp(err->msg, prefix, n)) {
        snprintf(msg, sizeof msg, "%s: %s", opt, err->msg + n);
        ws_fail(err, "%s", msg);
    }
}

int ws_config_set_kv(ws_run_config *cfg, const char *key, const char *value, const char *opt,
                     ws_error *err)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *s = malloc(len);
    if (!s) return ws_fail(err, "out of memory");
    snprintf(s, len, "%s=%s", key, value);
    int rc = ws_run_config_set(cfg, s, err);
    free(s);
    if (rc) ws_config_relabel(err, key, opt);
    return rc;
}

int ws_config_set_whatif(ws_run_config *cfg, const char *key, int slot, const char *opt,
                         const char *value, ws_error *err)
{
    /* --carbon given again: one more file to join (wattsim/series.h
     * ws_series_join), not a replacement of the first. */
    if (slot == WS_WI_CARBON && cfg->whatif.carbon && cfg->whatif.where[slot]
        && !strcmp(cfg->whatif.where[slot], opt)) {
        ws_whatif_spec *w = &cfg->whatif;
        if (!value[0]) return ws_fail(err, "%s: an empty file name", opt);
        char **m = realloc(w->carbon_more, (w->n_carbon_more + 1) * sizeof *m);
        if (!m) return ws_fail(err, "out of memory");
        w->carbon_more = m;
        if (!(m[w->n_carbon_more] = strdup(value))) return ws_fail(err, "out of memory");
        w->n_carbon_more++;
        return 0;
    }
    /* The value as a single-quoted YAML scalar: a file name is data. */
    size_t len = strlen(key) + 2 * strlen(value) + 4;
    char *s = malloc(len), *p = s;
    if (!s) return ws_fail(err, "out of memory");
    p += sprintf(p, "%s='", key);
    for (const char *a = value; *a; a++) {
        if (*a == '\'') *p++ = '\'';
        *p++ = *a;
    }
    strcpy(p, "'");
    int rc = ws_run_config_set(cfg, s, err);
    free(s);
    if (rc) {
        /* "--set KEY: KEY must be ..." -> "--power-cap must be ..." */
        ws_config_relabel(err, key, opt);
        return -1;
    }
    char **where = &cfg->whatif.where[slot];
    free(*where);
    return (*where = strdup(opt)) ? 0 : ws_fail(err, "out of memory");
}

int ws_config_relabel_axis(char **where, const char *opt, ws_error *err)
{
    if (!*where || strcmp(*where, "--set")) return 0;
    free(*where);
    return (*where = strdup(opt)) ? 0 : ws_fail(err, "out of memory");
}

int ws_config_relabel_policy(ws_policy_ref *p, const char *opt, const char *param_opt,
                             ws_error *err)
{
    if (ws_config_relabel_axis(&p->where, opt, err)) return -1;
    for (size_t i = 0; i < p->n_params; i++)
        if (ws_config_relabel_axis(&p->params[i].where, param_opt, err)) return -1;
    return 0;
}

static int pos_int(const char *s, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!isdigit((unsigned char)*s) || *end || errno || x <= 0 || x > INT_MAX) return -1;
    *v = (int)x;
    return 0;
}

int ws_config_add_job(ws_run_config *cfg, const char *a, const char *target,
                      const char *max_epochs, const char *b0, ws_error *err)
{
    if (!a) {
        const char *stray = target ? "--target" : max_epochs ? "--max-epochs" : b0 ? "--b0" : NULL;
        return stray ? ws_fail(err, "%s needs --job DATASET/NETWORK/OPTIMIZER", stray) : 0;
    }
    const char *s1 = strchr(a, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s1 || !s2 || s1 == a || s2 == s1 + 1 || !s2[1] || strchr(s2 + 1, '/'))
        return ws_fail(err, "--job: expected DATASET/NETWORK/OPTIMIZER, got '%s'", a);
    if (!target) return ws_fail(err, "--job needs --target X");
    if (!max_epochs) return ws_fail(err, "--job needs --max-epochs N");
    if (!b0) return ws_fail(err, "--job needs --b0 B");
    char *end;
    double t = strtod(target, &end);
    if (end == target || *end || !isfinite(t) || isspace((unsigned char)*target))
        return ws_fail(err, "--target: expected a number, got '%s'", target);
    char name[WS_NAME_MAX + 1], why[64];
    snprintf(name, sizeof name, "%.*s", (int)(s1 - a), a);
    if ((size_t)(s1 - a) > WS_NAME_MAX || ws_name_check(name, why, sizeof why))
        return ws_fail(err, "--job: the dataset names the job, and '%s' is not a safe"
                       " name (" WS_NAME_RULE ")", a);
    /* Network and optimizer are labels, as trace readers and imports take
     * them: what --job accepts, an import wrote (wattsim/name.h). */
    for (int k = 0; k < 2; k++) {
        const char *from = k ? s2 + 1 : s1 + 1;
        size_t len = k ? strlen(s2 + 1) : (size_t)(s2 - s1 - 1);
        char label[WS_LABEL_MAX + 2], shown[160];
        snprintf(label, sizeof label, "%.*s", (int)(len > WS_LABEL_MAX ? WS_LABEL_MAX + 1 : len),
                 from);
        if (ws_label_check(label, why, sizeof why))
            return ws_fail(err, "--job: the %s '%s' %s (" WS_LABEL_RULE ")",
                           k ? "optimizer" : "network",
                           ws_name_show(label, shown, sizeof shown), why);
    }
    ws_workload_spec w = {0};
    if (pos_int(max_epochs, &w.max_epochs))
        return ws_fail(err, "--max-epochs: expected a positive integer, got '%s'", max_epochs);
    if (pos_int(b0, &w.b0))
        return ws_fail(err, "--b0: expected a positive integer, got '%s'", b0);
    w.target_metric = t;
    w.dataset = strndup(a, (size_t)(s1 - a));
    w.network = strndup(s1 + 1, (size_t)(s2 - s1 - 1));
    w.optimizer = strdup(s2 + 1);
    w.name = strndup(a, (size_t)(s1 - a));
    w.where = strdup("--job");
    ws_workload_spec *p = realloc(cfg->jobs, (cfg->n_jobs + 1) * sizeof *p);
    if (p) cfg->jobs = p;
    if (!p || !w.dataset || !w.network || !w.optimizer || !w.name || !w.where) {
        free(w.dataset); free(w.network); free(w.optimizer); free(w.name); free(w.where);
        ws_fail(err, "out of memory");
        return -2;
    }
    cfg->jobs[cfg->n_jobs++] = w;
    return 0;
}
