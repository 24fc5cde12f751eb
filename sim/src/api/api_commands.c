/*
 * The library API's commands (wattsim/api.h): each one the CLI command of
 * the same name (cli/), from the call's options to the CLI's JSON on
 * `out`, with the same checks and the same messages, but no output file
 * unless an option names one, nothing on stdout, and the call's hook
 * polled while it runs. Errors return -1 with err set and c->status the
 * kind (WS_API_INPUT unless set otherwise).
 */
#define _GNU_SOURCE                /* strcasecmp, open_memstream */
#include "api_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/import.h"
#include "wattsim/name.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plan.h"
#include "wattsim/json_writer.h"
#include "wattsim/report.h"
#include "wattsim/study.h"
#include "wattsim/sweep.h"
#include "wattsim/trace.h"
#include "wattsim/trace_check.h"

/* ------------------------------------------------------------ shared */

/* Exactly one of --workload and --job (simulate, pareto, plan). */
static int one_workload(const ws_api_call *c, ws_error *err)
{
    int w = api_get(c, "workload") != NULL, j = api_get(c, "job") != NULL;
    if (w && j) return api_usage(c, err, "takes --workload W or --job D/N/O, not both");
    if (!w && !j) return api_usage(c, err, "needs --workload W (or --job D/N/O)");
    return 0;
}

static int note_study_pair(ws_api_call *c, const ws_run_config *cfg, size_t i,
                           const ws_study_pair *p)
{
    const ws_policy_ref *b, *q;
    ws_run_config_pair(cfg, i, &b, &q);
    return api_note_pair(c, p->label, b->name, q->name, p->prov.bso_params,
                         p->prov.plo_params, p->prov.bso_sha256, p->prov.plo_sha256);
}

/* --allow-plugins DIR and --allow-python PACKAGE, in the order given. */
static int allow(const ws_api_call *c, ws_error *err)
{
    for (size_t i = 0; i < c->n_v; i++) {
        const char *name = c->v[i].opt->name;
        if (!strcmp(name, "allow-plugins") && ws_plugin_allow_dir(c->v[i].value, err)) return -1;
        if (!strcmp(name, "allow-python") && ws_plugin_allow_python(c->v[i].value, err))
            return -1;
    }
    return 0;
}

/* A config file's, then the "set" values, in the order given. */
static int load_config(const ws_api_call *c, ws_run_config *cfg, int need, ws_error *err)
{
    const char *path = api_get(c, "config");
    ws_run_config_init(cfg);
    if (!path && need) return api_usage(c, err, "needs a CONFIG file (config=...)");
    if (path && ws_run_config_load(path, cfg, err)) return -1;
    for (size_t i = 0; i < c->n_v; i++)
        if (!strcmp(c->v[i].opt->name, "set") && ws_run_config_set(cfg, c->v[i].value, err))
            return -1;
    return 0;
}

/* simulate, pareto and plan: one job, from options only: exactly one of
 * --workload and --job, the config options, the job, and the axes' errors
 * naming --gpu and --workload. */
static int one_job_options(const ws_api_call *c, ws_run_config *cfg, ws_error *err)
{
    return one_workload(c, err) || api_apply_config(c, cfg, err) || api_apply_job(c, cfg, err)
           || api_relabel_axes(cfg, err) ? -1 : 0;
}

/* What a command reads once its config is complete. */
typedef struct inputs {
    ws_catalogue cat;
    ws_whatif wi;
    ws_csv_limits lim;
    ws_study_env env;
} inputs;

enum {
    IN_POLICIES = 1,       /* the policy registry (live policies too) */
    IN_VALIDATE = 2,       /* the config checked, after the registry */
    IN_ONE_JOB = 4         /* simulate, pareto, plan: the traces of the config's
                              first GPU, and no config file's `traces` */
};

/* The registry, the config's check, the trace limits, the catalogue and
 * the what-ifs, in that order (the first error is the one reported), then
 * the provenance noted: the traces read and the what-ifs. Free with
 * inputs_free, also after an error. */
static int inputs_open(ws_api_call *c, const ws_run_config *cfg, int flags, inputs *in,
                       ws_error *err)
{
    ws_registry *reg = NULL;
    if ((flags & IN_POLICIES) && !(reg = api_registry(c, err))) return -1;
    if (((flags & IN_VALIDATE) && ws_run_config_validate(cfg, err))
        || api_limits(c, &in->lim, err) || api_catalogue(c, &in->cat, err)
        || ws_whatif_load(&in->wi, &cfg->whatif, &in->lim, err))
        return -1;
    const int one = flags & IN_ONE_JOB;
    in->env = (ws_study_env){api_traces(c, one ? NULL : cfg), &in->cat, reg, &in->lim, 0,
                             &in->wi};
    for (size_t g = 0; g < (one ? 1 : cfg->n_gpus); g++)
        if (api_note_traces(c, in->env.traces_dir, cfg->gpus[g]))
            return ws_fail(err, "out of memory");
    api_note_whatif(c, &in->wi);
    return 0;
}

static void inputs_free(inputs *in)
{
    ws_whatif_free(&in->wi);
    ws_catalogue_free(&in->cat);
}

/* pareto and plan: the one job's knob table (its workload's, or --job's),
 * on the config's GPU and eta, with `beta`. */
static int one_job_table(const ws_run_config *cfg, const inputs *in, double beta,
                         ws_traces *tr, ws_job_table *jt, ws_error *err)
{
    const ws_workload_spec *spec = cfg->n_jobs ? &cfg->jobs[0]
        : ws_study_workload(cfg, &in->cat, cfg->workloads[0], err);
    return !spec || ws_study_traces(cfg, &in->env, cfg->gpus[0], tr, err)
           || ws_study_job(&in->wi, tr, spec, cfg->etas[0], beta, jt, 1, err) ? -1 : 0;
}

/* ------------------------------------------------------------ simulate */

typedef struct records {
    ws_run_record *r;
    size_t n, cap;
    ws_api_call *c;
    double total;              /* recurrences planned, 0 when not known */
    int status;                /* run: history.csv with status,error */
    FILE *csv;                 /* run: history rows go here */
    const ws_whatif *wi;
    unsigned long calls;
} records;

static int collect(void *p, const ws_cell *cell, const ws_run_record *r, ws_error *err)
{
    records *h = p;
    if (h->csv) {
        if (h->status) ws_report_history_row_status(h->csv, cell, r, h->wi);
        else ws_report_history_row(h->csv, cell, r, h->wi);
    } else {
        if (h->n == h->cap) {
            size_t cap = h->cap ? h->cap * 2 : 256;
            ws_run_record *q = realloc(h->r, cap * sizeof *q);
            if (!q) return ws_fail(err, "out of memory");
            h->r = q;
            h->cap = cap;
        }
        h->r[h->n++] = *r;
    }
    /* the hook, every 64 runs (its clock read is what it costs): simulate
     * counts recurrences, run its simulations */
    if ((++h->calls & 63) == 0
        && api_tick(h->c, h->csv ? (double)cell->index : (double)r->recurrence, h->total, 0))
        return ws_fail(err, "cancelled");
    return 0;
}

int api_simulate(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_run_config cfg;
    inputs in = {0};
    ws_cell_result *res = NULL;
    size_t n = 0;
    records hist = {.c = c};
    int rc = -1, keep = api_flag(c, "keep-history");
    ws_run_config_init(&cfg);
    if (one_job_options(c, &cfg, err)) goto out;
    if (api_flag(c, "verbose")) ws_policy_set_log_level(WS_LOG_DEBUG);
    if (ws_run_config_n_pairs(&cfg) != 1) {
        api_usage(c, err, "runs one policy pair; use run or sweep for several");
        goto out;
    }
    ws_error one;
    if (!ws_run_config_one_simulation(&cfg, &one)) {
        api_usage(c, err, "%s", one.msg);
        goto out;
    }
    if (inputs_open(c, &cfg, IN_POLICIES | IN_VALIDATE | IN_ONE_JOB, &in, err)) goto out;
    const ws_whatif *wi = &in.wi;
    hist.total = cfg.recurrences > 0 ? (double)cfg.recurrences : 0;
    ws_study_failure fail;
    if (ws_study_run_failure(&cfg, &in.env, collect, &hist, &res, &n, &fail, err)) {
        if (fail.failed) {
            c->status = api_sim_status(err->msg, fail.pair.bso, fail.pair.plo);
            if (note_study_pair(c, &cfg, 0, &fail.pair)) { ws_fail(err, "out of memory"); goto out; }
            if (keep && !c->cancelled) {
                /* the runs before the failure, then the failure */
                ws_report_simulate_status(out, WS_FMT_JSON, &fail.res, fail.pair.bso,
                                          fail.pair.plo, hist.r, hist.n, wi, err->msg);
                rc = 0;
            }
        }
        goto out;
    }
    const ws_study_pair *pair = res[0].cell.policy;
    if (note_study_pair(c, &cfg, 0, pair)) { ws_fail(err, "out of memory"); goto out; }
    if (keep)
        ws_report_simulate_status(out, WS_FMT_JSON, &res[0], pair->bso, pair->plo, hist.r,
                                  hist.n, wi, NULL);
    else
        ws_report_simulate(out, WS_FMT_JSON, &res[0], pair->bso, pair->plo, hist.r, hist.n, wi);
    api_tick(c, (double)res[0].recurrences, (double)res[0].recurrences, 1);
    rc = 0;
out:
    inputs_free(&in);
    free(hist.r);
    free(res);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ run */

int api_run_config(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_run_config cfg;
    inputs in = {0};
    const ws_whatif *wi = &in.wi;
    ws_cell_result *res = NULL;
    size_t n = 0;
    char *hbuf = NULL;
    size_t hlen = 0;
    FILE *hf = NULL;
    int rc = -1, keep = api_flag(c, "keep-history");
    if (load_config(c, &cfg, 1, err) || api_apply_config(c, &cfg, err)
        || api_apply_job(c, &cfg, err) || allow(c, err) || ws_run_config_validate(&cfg, err)
        || ws_policy_config_allowed(&cfg, err))
        goto out;
    if (api_flag(c, "verbose")) ws_policy_set_log_level(WS_LOG_DEBUG);
    if (inputs_open(c, &cfg, IN_POLICIES, &in, err)) goto out;
    if (!(hf = open_memstream(&hbuf, &hlen))) { ws_fail(err, "out of memory"); goto out; }
    if (keep) ws_report_history_header_status(hf, wi);
    else ws_report_history_header(hf, wi);
    size_t sims = 0;
    ws_run_config_plan_size(&cfg, ws_run_config_n_pairs(&cfg), &sims, NULL);
    records rec = {.c = c, .total = (double)sims, .status = keep, .csv = hf, .wi = wi};
    ws_study_failure fail;
    if (ws_study_run_failure(&cfg, &in.env, collect, &rec, &res, &n, &fail, err)) {
        if (!fail.failed) goto out;
        c->status = api_sim_status(err->msg, fail.pair.bso, fail.pair.plo);
        if (!keep || c->cancelled) goto out;
        /* --keep-history: the history up to the failure, no summary */
        ws_report_history_failed(hf, &fail.res.cell, &fail.res.tot, wi, err->msg);
        if (fflush(hf)) { ws_fail(err, "out of memory"); goto out; }
        ws_jw j;
        ws_jw_init(&j, out);
        ws_jw_begin_object(&j);
        ws_jw_key(&j, "cells"); ws_jw_null(&j);
        ws_jw_kstring(&j, "status", "failed");
        ws_jw_kstring(&j, "error", err->msg);
        ws_jw_kstring(&j, "history_csv", hbuf);
        ws_jw_end_object(&j);
        rc = 0;
        goto out;
    }
    for (size_t p = 0; p < n; p++)
        if (!p || res[p].cell.pair != res[p - 1].cell.pair) {
            if (note_study_pair(c, &cfg, res[p].cell.pair, res[p].cell.policy)) {
                ws_fail(err, "out of memory");
                goto out;
            }
        }
    const ws_study_pair *first = res[0].cell.policy;
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_object(&j);
    ws_jw_key(&j, "cells");
    ws_jw_raw(&j, NULL, 0);                      /* summary.json, written by the report */
    if (ws_report_cells(out, WS_FMT_JSON, res, n, first->bso, first->plo, wi, &first->prov)) {
        ws_fail(err, "out of memory");
        goto out;
    }
    if (fflush(hf)) { ws_fail(err, "out of memory"); goto out; }
    ws_jw_kstring(&j, "status", "ok");
    ws_jw_kstring(&j, "error", NULL);
    ws_jw_kstring(&j, "history_csv", hbuf);
    ws_jw_end_object(&j);
    api_tick(c, (double)n, (double)n, 1);
    rc = 0;
out:
    if (hf) fclose(hf);
    free(hbuf);
    inputs_free(&in);
    free(res);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ pareto */

int api_pareto(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_run_config cfg;
    inputs in = {0};
    ws_traces tr = {0};
    ws_job_table jt = {0};
    ws_pareto par = {0};
    int rc = -1;
    ws_run_config_init(&cfg);
    if (one_job_options(c, &cfg, err)) goto out;
    if (cfg.n_gpus != 1 || cfg.n_workloads + cfg.n_jobs != 1 || cfg.n_etas != 1) {
        ws_fail(err, "pareto takes one GPU, one workload and one eta");
        goto out;
    }
    if (inputs_open(c, &cfg, IN_VALIDATE | IN_ONE_JOB, &in, err)) goto out;
    if (one_job_table(&cfg, &in, INFINITY, &tr, &jt, err)
        || ws_pareto_compute(&jt.job, &par, err))
        goto out;
    ws_report_pareto(out, WS_FMT_JSON, &jt.job, &par, &in.wi);
    rc = 0;
out:
    inputs_free(&in);
    ws_pareto_free(&par);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ plan */

int api_plan(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_run_config cfg;
    inputs in = {0};
    ws_traces tr = {0};
    ws_job_table jt = {0};
    ws_plan plan = {0};
    ws_policy_pair *pairs = NULL;
    size_t n_pairs = 0;
    int rc = -1;
    long seeds = 20;
    ws_run_config_init(&cfg);
    const char *s = api_get(c, "seeds"), *policies = api_get(c, "policies");
    if (s) {
        char *end;
        errno = 0;
        seeds = strtol(s, &end, 10);
        if (end == s || *end || errno || seeds < 1 || seeds > 1000) {
            api_usage(c, err, "--seeds '%s' is not an integer in 1..1000", s);
            goto out;
        }
    }
    if (one_job_options(c, &cfg, err)) goto out;
    if (cfg.n_gpus != 1 || cfg.n_workloads + cfg.n_jobs != 1 || cfg.n_etas != 1
        || cfg.n_betas != 1) {
        api_usage(c, err, "takes one GPU, one workload, one eta and one beta");
        goto out;
    }
    if (ws_policy_pairs_parse(policies ? policies : "zeus:jit", &pairs, &n_pairs, err))
        goto out;
    if (inputs_open(c, &cfg, IN_POLICIES | IN_VALIDATE | IN_ONE_JOB, &in, err)
        || ws_whatif_set_demand_charge(&in.wi, api_get(c, "demand-charge"), "--demand-charge",
                                       err))
        goto out;
    ws_registry *reg = in.env.registry;
    if (one_job_table(&cfg, &in, cfg.betas[0], &tr, &jt, err)) goto out;
    long n = cfg.recurrences > 0 ? cfg.recurrences : jt.default_recurrences;
    api_tick(c, 0, (double)n_pairs, 1);
    if (ws_plan_compute(&jt.job, jt.knob_error, &in.wi, n, (int)seeds, pairs, n_pairs, reg,
                        &plan, err)) {
        if (!c->cancelled && strstr(err->msg, ": seed ") && n_pairs)
            c->status = WS_API_FAILED;
        for (size_t i = 0; i < n_pairs; i++)
            if (api_sim_status(err->msg, pairs[i].bso, pairs[i].plo) == WS_API_POLICY)
                c->status = WS_API_POLICY;
        goto out;
    }
    plan.max_power_summed = jt.max_power_summed;
    for (size_t i = 0; i < n_pairs; i++) {
        char bsha[65] = "", psha[65] = "";
        ws_error ignored;
        const ws_bso_type *bt = ws_registry_bso(reg, pairs[i].bso, &ignored);
        const ws_plo_type *pt = ws_registry_plo(reg, pairs[i].plo, &ignored);
        if (bt) ws_registry_sha256(reg, bt, bsha, &ignored);
        if (pt) ws_registry_sha256(reg, pt, psha, &ignored);
        const ws_policy_prov *pv = &plan.policies[i].identity.prov;
        if (api_note_pair(c, plan.policies[i].label, pairs[i].bso, pairs[i].plo, pv->bso_params,
                          pv->plo_params, bsha, psha)) {
            ws_fail(err, "out of memory");
            goto out;
        }
    }
    ws_report_plan(out, WS_FMT_JSON, &plan, &in.wi);
    api_tick(c, (double)n_pairs, (double)n_pairs, 1);
    rc = 0;
out:
    ws_plan_free(&plan);
    ws_policy_pairs_free(pairs, n_pairs);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    inputs_free(&in);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ sweep */

static int sweep_tick(void *ctx, size_t done, size_t total)
{
    return api_tick(ctx, (double)done, (double)total, done == total);
}

static void write_summary(FILE *f, const void *s) { ws_sweep_write_json(f, s); }
static void write_curves(FILE *f, const void *s) { ws_sweep_write_curves(f, s); }

int api_sweep(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_run_config cfg;
    inputs in = {0};
    ws_policy_pair *pairs = NULL;
    size_t n_pairs = 0;
    ws_sweep sw = {0};
    char *hbuf = NULL;
    size_t hlen = 0;
    ws_sweep_history ho = {0};
    int rc = -1, keep = api_flag(c, "keep-history");
    ws_sweep_opts so = {.threads = ws_sweep_default_threads(), .isolate = api_flag(c, "isolate"),
                        .curves = api_flag(c, "curves"), .tick = sweep_tick, .tick_ctx = c};
    const char *v;
    if (((v = api_get(c, "threads")) && ws_sweep_parse_threads(v, &so, err))
        || ((v = api_get(c, "cell-timeout")) && ws_sweep_parse_cell_timeout(v, &so, err))
        || ((v = api_get(c, "cell-memory")) && ws_sweep_parse_cell_memory(v, &so, err))
        || ws_sweep_check_limits(&so, err)
        || (keep && so.isolate
            && ws_fail(err, "--keep-history is not available with --isolate (a simulation's"
                       " runs stay in its child process)"))) {
        ws_fail_prefix(err, "%s", c->cmd->name);
        ws_run_config_init(&cfg);          /* for out: */
        goto out;
    }
    if (load_config(c, &cfg, 0, err) || api_apply_config(c, &cfg, err) || allow(c, err)
        || ws_run_config_validate(&cfg, err))
        goto out;
    if (!cfg.path[0]) {              /* named in messages: "PATH: the run plan is ..." */
        free(cfg.path);
        if (!(cfg.path = strdup("sweep"))) { ws_fail(err, "out of memory"); goto out; }
    }
    if (api_flag(c, "verbose")) ws_policy_set_log_level(WS_LOG_DEBUG);
    if ((v = api_get(c, "policies"))) {
        if (ws_policy_pairs_parse(v, &pairs, &n_pairs, err)) goto out;
    } else if (ws_policy_config_allowed(&cfg, err)
               || ws_policy_pairs_from_config(&cfg, &pairs, &n_pairs, err)) {
        goto out;
    }
    if (inputs_open(c, &cfg, IN_POLICIES, &in, err)) goto out;
    if (keep) {
        if (!(ho.f = open_memstream(&hbuf, &hlen))) { ws_fail(err, "out of memory"); goto out; }
        ws_report_history_header_status(ho.f, &in.wi);
        ho.wi = &in.wi;
        so.history = ws_sweep_history_write;
        so.history_ctx = &ho;
    }
    int run_rc = ws_sweep_run_opts(&cfg, &in.env, pairs, n_pairs, &so, &sw, err);
    if (run_rc == -2) c->status = WS_API_IO;
    if (run_rc) goto out;
    if (ho.oom) { ws_fail(err, "out of memory"); goto out; }
    for (size_t p = 0; p < sw.n_pairs; p++) {
        const ws_policy_pair *q = &sw.pairs[p];
        if (api_note_pair(c, q->label, q->bso, q->plo, q->bso_params, q->plo_params,
                          q->bso_sha256, q->plo_sha256)) {
            ws_fail(err, "out of memory");
            goto out;
        }
    }
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_object(&j);
    ws_jw_kint(&j, "n_failed", (long long)sw.n_failed);
    if (api_json_text(&j, "summary_json", write_summary, &sw, err)) goto out;
    if (so.curves) {
        if (api_json_text(&j, "curves_csv", write_curves, &sw, err)) goto out;
    } else {
        ws_jw_kstring(&j, "curves_csv", NULL);
    }
    if (ws_sweep_io_error(&sw, err)) { c->status = WS_API_IO; goto out; }
    ws_jw_key(&j, "history_csv");
    if (keep) {
        if (fflush(ho.f)) { ws_fail(err, "out of memory"); goto out; }
        ws_jw_string(&j, hbuf);
    } else {
        ws_jw_null(&j);
    }
    ws_jw_end_object(&j);
    rc = 0;
out:
    if (ho.f) fclose(ho.f);
    free(hbuf);
    ws_sweep_history_free(&ho);
    ws_sweep_free(&sw);
    inputs_free(&in);
    ws_policy_pairs_free(pairs, n_pairs);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ traces */

int api_trace_check(ws_api_call *c, FILE *out, ws_error *err)
{
    const char *dir = api_get(c, "dir");
    if (!dir) return api_usage(c, err, "needs a trace folder DIR");
    ws_csv_limits lim;
    ws_catalogue cat = {0};
    ws_trace_check chk = {0};
    int rc = -1;
    if (api_limits(c, &lim, err) || api_catalogue(c, &cat, err)
        || ws_trace_check_run(dir, &lim, &cat, &chk, err))
        goto out;
    if (api_note_traces(c, dir, NULL)) { ws_fail(err, "out of memory"); goto out; }
    for (int g = 0; g < chk.n_gpus; g++)
        if (api_note_traces(c, dir, chk.gpus[g])) { ws_fail(err, "out of memory"); goto out; }
    ws_trace_check_print(out, &chk, 1);
    rc = 0;
out:
    ws_trace_check_free(&chk);
    ws_catalogue_free(&cat);
    return rc;
}

static void json_warnings(ws_jw *j, const ws_warnings *w)
{
    ws_jw_key(j, "warnings");
    ws_jw_begin_array(j);
    for (size_t i = 0; i < w->n; i++) ws_jw_string(j, w->msg[i]);
    ws_jw_end_array(j);
}

/* An imported table's row, opened: {"dataset": ..., "network": ...,
 * "optimizer": ... (the caller adds its columns and closes it). */
static void json_row_names(ws_jw *j, const char *dataset, const char *network,
                           const char *optimizer)
{
    ws_jw_begin_object(j);
    ws_jw_kstring(j, "dataset", dataset);
    ws_jw_kstring(j, "network", network);
    ws_jw_kstring(j, "optimizer", optimizer);
}

/* An import's result, closed: its warnings and the file written (null
 * without --out). */
static void json_import_end(ws_jw *j, const ws_warnings *w, const char *dir, const char *path)
{
    json_warnings(j, w);
    ws_jw_kstring(j, "written", dir ? path : NULL);         /* NULL: null */
    ws_jw_end_object(j);
}

/* The folder's lock, then the table: an I/O failure is WS_API_IO. */
static int write_table(ws_api_call *c, const char *out, const char *path,
                       int (*write)(const void *, const char *, ws_error *), const void *table,
                       ws_error *err)
{
    if (ws_outdir_lock(out, err)) return -1;
    if (write(table, path, err)) {
        c->status = WS_API_IO;
        return -1;
    }
    return 0;
}

static int write_power(const void *t, const char *path, ws_error *err)
{
    return ws_power_table_write(t, path, err);
}

static int write_train(const void *t, const char *path, ws_error *err)
{
    return ws_train_table_write(t, path, err);
}

/* The options of the CLI's trace import power, judged and run by one
 * definition (io/import_args.c). */
int api_import_power(ws_api_call *c, FILE *out, ws_error *err)
{
    const char *kinds[3] = {"nvidia-smi", "dcgm", "zeus-monitor"}, *dir = api_get(c, "out");
    ws_power_args a = {.kind = -1};
    for (int k = 0; k < 3; k++)
        if (api_get(c, kinds[k])) {
            if (a.log) return api_usage(c, err, "takes one of --nvidia-smi, --dcgm, --zeus-monitor");
            a.log = api_get(c, kinds[k]);
            a.kind = k == 0 ? WS_LOG_NVSMI : k == 1 ? WS_LOG_DCGM : WS_LOG_ZEUS;
        }
    a.gpu = api_get(c, "gpu");
    a.epochs = api_get(c, "epochs");
    a.gpus = api_get(c, "gpus");
    a.log_tz = api_get(c, "log-tz");
    a.epochs_tz = api_get(c, "epochs-tz");
    a.window = api_get(c, "window");
    a.columns = api_get(c, "columns");
    a.gpu_cycle = api_get(c, "gpu-cycle");
    a.batch_size = api_get(c, "batch-size");
    a.steps_per_epoch = api_get(c, "steps-per-epoch");
    a.profile_steps = api_get(c, "profile-steps");
    a.job = api_get(c, "job");
    a.max_gap = api_get(c, "max-gap");
    a.match_tolerance = api_get(c, "match-tolerance");
    ws_power_job job;
    if (ws_power_args_judge(&a, &job, err)) {
        ws_power_job_free(&job);
        return api_usage(c, err, "%s", err->msg);
    }
    ws_csv_limits lim;
    ws_warnings w = {0};
    const ws_power_table *tp = &job.table;
    const ws_telemetry *tl = &job.tel;
    char path[4096] = "";
    int rc = -1;
    if (api_limits(c, &lim, err)) goto out;
    if (dir) {
        snprintf(path, sizeof path, "%s/summary_power_%s.csv", dir, a.gpu);
        ws_outfile_set_force(api_flag(c, "force"));
        if (ws_outfile_check(path, err)) goto out;      /* before any work */
    }
    int r = ws_power_args_import(&a, &job, &lim, &w, err);
    if (r > 0) {
        ws_error msg = *err;
        api_usage(c, err, "%s", msg.msg);
    }
    if (r) goto out;
    if (dir && write_table(c, dir, path, write_power, tp, err)) goto out;
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_object(&j);
    ws_jw_key(&j, "rows");
    ws_jw_begin_array_rows(&j);
    for (size_t i = 0; i < tp->n; i++) {
        const ws_power_out_row *q = &tp->rows[i];
        json_row_names(&j, q->dataset, q->network, q->optimizer);
        ws_jw_kint(&j, "batch_size", q->bs);
        ws_jw_kint(&j, "power_limit", q->pl);
        ws_jw_kint(&j, "epochs", q->epochs);
        ws_jw_knumber(&j, "time_per_epoch", q->time_per_epoch);
        ws_jw_knumber(&j, "average_power", q->average_power);
        ws_jw_end_object(&j);
    }
    ws_jw_end_array(&j);
    ws_jw_key(&j, "gpus");
    ws_jw_begin_array(&j);
    for (size_t k = 0; k < tl->n_gpu; k++) ws_jw_string(&j, tl->gpu[k].id);
    ws_jw_end_array(&j);
    /* a node of mixed models: the job's MaxPower, the sum of its GPUs'
     * own limits (the trace's max_power column) */
    if (tp->max_power > 0) ws_jw_knumber(&j, "max_power", tp->max_power);
    json_import_end(&j, &w, dir, path);
    rc = 0;
out:
    ws_power_job_free(&job);
    ws_warnings_free(&w);
    return rc;
}

int api_import_train(ws_api_call *c, FILE *out, ws_error *err)
{
    const char *runs = api_get(c, "runs"), *target = api_get(c, "target-metric");
    const char *dir = api_get(c, "out");
    int higher = api_flag(c, "higher-is-better"), lower = api_flag(c, "lower-is-better");
    if (!runs) return api_usage(c, err, "needs --runs METRICS.csv");
    if (!target) return api_usage(c, err, "needs --target-metric X");
    if (higher && lower)
        return api_usage(c, err, "--higher-is-better and --lower-is-better exclude each other");
    ws_train_import in = {runs, target, 0, lower, NULL};
    if (ws_parse_number(target, &in.target))
        return api_usage(c, err, "--target-metric: expected a number, got '%s'", target);
    ws_csv_limits lim;
    ws_warnings w = {0};
    ws_train_table table = {0};
    char path[4096] = "";
    int rc = -1;
    in.lim = &lim;
    if (api_limits(c, &lim, err)) goto out;
    if (dir) {
        snprintf(path, sizeof path, "%s/summary_train.csv", dir);
        ws_outfile_set_force(api_flag(c, "force"));
        if (ws_outfile_check(path, err)) goto out;
    }
    if (ws_import_train(&in, &table, &w, err)) goto out;
    if (dir && write_table(c, dir, path, write_train, &table, err)) goto out;
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_object(&j);
    ws_jw_key(&j, "rows");
    ws_jw_begin_array_rows(&j);
    for (size_t i = 0; i < table.n; i++) {
        const ws_train_out_row *q = &table.rows[i];
        json_row_names(&j, q->dataset, q->network, q->optimizer);
        ws_jw_kint(&j, "batch_size", q->bs);
        ws_jw_kstring(&j, "learning_rate", q->lr);
        ws_jw_kint(&j, "run", q->run);
        ws_jw_knumber(&j, "target_metric", in.target);
        ws_jw_key(&j, "target_epoch");
        if (q->target_epoch > 0) ws_jw_int(&j, q->target_epoch);
        else ws_jw_null(&j);
        ws_jw_end_object(&j);
    }
    ws_jw_end_array(&j);
    json_import_end(&j, &w, dir, path);
    rc = 0;
out:
    ws_train_table_free(&table);
    ws_warnings_free(&w);
    return rc;
}

/* ------------------------------------------------------------ lists */

int api_workloads(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_catalogue cat = {0};
    if (api_catalogue(c, &cat, err)) {
        ws_catalogue_free(&cat);
        return -1;
    }
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_array_rows(&j);
    for (size_t i = 0; i < cat.n; i++) {
        const ws_workload_spec *w = &cat.items[i];
        ws_jw_begin_object(&j);
        ws_jw_kstring(&j, "workload", w->name);
        ws_jw_kstring(&j, "dataset", w->dataset);
        ws_jw_kstring(&j, "network", w->network);
        ws_jw_kstring(&j, "optimizer", w->optimizer);
        ws_jw_knumber(&j, "target_metric", w->target_metric);
        /* as `wattsim list workloads` shows them: the metric's name and
         * which way it improves ("higher", "lower"), "" where the
         * catalogue does not say */
        ws_jw_kstring(&j, "metric", w->metric ? w->metric : "");
        ws_jw_kstring(&j, "better", w->better > 0 ? "higher" : w->better < 0 ? "lower" : "");
        ws_jw_kint(&j, "max_epochs", w->max_epochs);
        ws_jw_kint(&j, "b0", w->b0);
        ws_jw_kstring(&j, "display", ws_catalogue_workload_display(&cat, w->name));
        ws_jw_end_object(&j);
    }
    ws_jw_end_array(&j);
    ws_catalogue_free(&cat);
    return 0;
}

int api_gpus(ws_api_call *c, FILE *out, ws_error *err)
{
    char **gpus;
    const char *dir = api_traces(c, NULL);
    int n = ws_trace_gpus(dir, &gpus, err);
    if (n < 0) return -1;
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_array(&j);
    for (int i = 0; i < n; i++) {
        ws_jw_string(&j, gpus[i]);
        free(gpus[i]);
    }
    ws_jw_end_array(&j);
    free(gpus);
    if (n == 0) return ws_fail(err, "%s: no summary_power_<gpu>.csv[.gz] files", dir);
    return 0;
}

static void json_params(ws_jw *j, const ws_param_spec *ps)
{
    static const char *kinds[] = {"", "int", "number", "bool", "string"};
    ws_jw_begin_array(j);
    for (size_t i = 0; ps && ps[i].name; i++) {
        const ws_param_spec *p = &ps[i];
        ws_jw_begin_object(j);
        ws_jw_kstring(j, "name", p->name);
        ws_jw_kstring(j, "kind", kinds[p->kind]);
        ws_jw_key(j, "default");
        switch (p->kind) {
        case WS_PARAM_INT: ws_jw_int(j, p->def.i); break;
        case WS_PARAM_DOUBLE: ws_jw_number(j, p->def.d); break;
        case WS_PARAM_BOOL: ws_jw_bool(j, p->def.b); break;
        case WS_PARAM_STRING: ws_jw_string(j, p->def.s ? p->def.s : ""); break;
        default: ws_jw_null(j); break;
        }
        if (p->kind == WS_PARAM_INT || p->kind == WS_PARAM_DOUBLE) {
            ws_jw_knumber(j, "min", p->min);
            ws_jw_knumber(j, "max", p->max);
        }
        ws_jw_kstring(j, "help", p->help ? p->help : "");
        ws_jw_end_object(j);
    }
    ws_jw_end_array(j);
}

int api_policies(ws_api_call *c, FILE *out, ws_error *err)
{
    ws_registry *reg = api_registry(c, err);
    if (!reg || ws_registry_scan(reg, err)) return -1;
    for (size_t i = 0; i < c->n_v; i++)
        if (!strcmp(c->v[i].opt->name, "plugin") && ws_registry_load_file(reg, c->v[i].value, err))
            return -1;
    ws_jw j;
    ws_jw_init(&j, out);
    ws_jw_begin_object(&j);
    for (int kind = 0; kind < 2; kind++) {
        ws_jw_key(&j, kind ? "plo" : "bso");
        ws_jw_begin_array_rows(&j);
        size_t n = kind ? ws_registry_n_plo(reg) : ws_registry_n_bso(reg);
        for (size_t i = 0; i < n; i++) {
            const ws_bso_type *b = kind ? NULL : ws_registry_bso_at(reg, i);
            const ws_plo_type *p = kind ? ws_registry_plo_at(reg, i) : NULL;
            ws_jw_begin_object(&j);
            ws_jw_kstring(&j, "name", b ? b->name : p->name);
            const char *sum = b ? b->summary : p->summary;
            ws_jw_kstring(&j, "summary", sum ? sum : "");
            ws_jw_kstring(&j, "file", kind ? ws_registry_plo_file(reg, i)
                                           : ws_registry_bso_file(reg, i));
            ws_jw_key(&j, "params");
            json_params(&j, b ? b->params : p->params);
            ws_jw_end_object(&j);
        }
        ws_jw_end_array(&j);
    }
    ws_jw_end_object(&j);
    return 0;
}
