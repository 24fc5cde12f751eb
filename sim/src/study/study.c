/* Run-plan execution; see wattsim/study.h. */
#include "wattsim/study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/outfile.h"
#include "wattsim/progress.h"
#include "wattsim/trace.h"
#include "study_pairs.h"

const ws_workload_spec *ws_study_workload(const ws_run_config *cfg,
                                          const ws_catalogue *cat,
                                          const char *name, ws_error *err)
{
    for (size_t i = 0; cfg && i < cfg->n_jobs; i++)
        if (!strcmp(cfg->jobs[i].name, name)) return &cfg->jobs[i];
    const ws_workload_spec *w = cat ? ws_catalogue_find(cat, name) : NULL;
    if (w) return w;
    char list[512] = "";
    for (size_t i = 0; cat && i < cat->n; i++) {
        strncat(list, cat->items[i].name, sizeof list - strlen(list) - 1);
        if (i + 1 < cat->n) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    ws_fail(err, "unknown workload '%s' (known: %s; or define it inline with"
            " `job:` in a config)", name, list);
    if (cfg && cfg->where_workloads) ws_fail_prefix(err, "%s", cfg->where_workloads);
    return NULL;
}

int ws_study_traces(const ws_run_config *cfg, const ws_study_env *env,
                    const char *gpu, ws_traces *tr, ws_error *err)
{
    int rc = ws_traces_load(tr, env->traces_dir, gpu, env->limits, err);
    if (rc == WS_TRACE_UNKNOWN_GPU && cfg && cfg->where_gpus)
        ws_fail_prefix(err, "%s", cfg->where_gpus);
    return rc ? -1 : 0;
}

/* The table of one set of rows (no drift). */
static int study_job_one(const ws_whatif *wi, const ws_traces *tr,
                         const ws_workload_spec *spec, double eta, double beta,
                         ws_job_table *jt, int note_it, ws_error *err)
{
    if (!ws_whatif_transforms(wi)) {
        if (ws_job_build(jt, tr, spec, eta, beta, err)) return -1;
    } else {
        ws_job_table raw;
        char note[512];
        int rc = ws_job_build(&raw, tr, spec, eta, beta, err)
                 || ws_whatif_apply(&raw, wi, jt, note, sizeof note, err);
        ws_job_free(&raw);
        if (rc) return -1;
        if (note_it && note[0]) ws_line("wattsim: note: %s on %s: %s", spec->name, tr->gpu, note);
    }
    /* b0 capped (ws_job_build): the default knob is not the one asked for. */
    if (note_it && spec->b0 > jt->job.b0)
        ws_line("wattsim: note: %s on %s: default batch size b0 = %d capped to %d, the"
                " largest batch size of %s's power trace for the workload (as the paper's"
                " scripts do)", spec->name, tr->gpu, spec->b0, jt->job.b0, tr->gpu);
    /* What the tariff holds beyond its hourly price, sized for this job. */
    if (note_it && wi && wi->tariff) {
        char note[1024];
        double peak = 0;
        const ws_job *j = &jt->job;
        for (int k = 0; k < j->knob_start[j->n_bs]; k++)
            if (j->knob_power[k] > peak) peak = j->knob_power[k];
        ws_whatif_tariff_note(wi, peak, note, sizeof note);
        if (note[0]) ws_line("wattsim: note: %s on %s: %s", spec->name, tr->gpu, note);
    }
    return 0;
}

int ws_study_job(const ws_whatif *wi, const ws_traces *tr,
                 const ws_workload_spec *spec, double eta, double beta,
                 ws_job_table *jt, int note_it, ws_error *err)
{
    if (spec->n_drift) {
        memset(jt, 0, sizeof *jt);
        return ws_fail(err, "%s: workload '%s' drifts (its rows change from recurrence"
                       " %ld on, %s): this command takes one trace set per workload;"
                       " run, sweep and curves simulate drift, or remove"
                       " `drift:`", spec->drift[0].where ? spec->drift[0].where : "config",
                       spec->name, spec->drift[0].from, spec->where ? spec->where : "");
    }
    return study_job_one(wi, tr, spec, eta, beta, jt, note_it, err);
}

/* "8,16,32" (at most n items of a, into buf; "..." past the buffer). */
static void int_list(char *buf, size_t size, const int *a, int n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 16 < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%d", i ? "," : "", a[i]);
    if (len + 16 >= size && size > 4) strcpy(buf + size - 4, "...");
}

/* The first difference between the job's knobs and a phase's, or 0. */
static int knobs_differ(const ws_job *a, const ws_job *b, char *why, size_t size)
{
    char x[256], y[256];
    if (a->n_bs != b->n_bs || memcmp(a->bs, b->bs, (size_t)a->n_bs * sizeof *a->bs)) {
        int_list(x, sizeof x, a->bs, a->n_bs);
        int_list(y, sizeof y, b->bs, b->n_bs);
        snprintf(why, size, "its batch sizes are %s, the job's %s", y, x);
        return 1;
    }
    for (int i = 0; i < a->n_bs; i++) {
        const int k0 = a->knob_start[i], n = a->knob_start[i + 1] - k0;
        const int m0 = b->knob_start[i], m = b->knob_start[i + 1] - m0;
        if (n != m || memcmp(a->knob_pl + k0, b->knob_pl + m0, (size_t)n * sizeof(int))) {
            int_list(x, sizeof x, a->knob_pl + k0, n);
            int_list(y, sizeof y, b->knob_pl + m0, m);
            snprintf(why, size, "its power limits of batch size %d are %s W, the job's %s W",
                     a->bs[i], y, x);
            return 1;
        }
    }
    if (ws_job_gpus(a) != ws_job_gpus(b)) {
        snprintf(why, size, "its rows sum %d GPUs per job, the job's %d", ws_job_gpus(b),
                 ws_job_gpus(a));
        return 1;
    }
    return 0;
}

int ws_study_job_drift(const ws_whatif *wi, const ws_traces *tr, const ws_csv_limits *lim,
                       const ws_workload_spec *spec, double eta, double beta,
                       ws_job_table *jt, int note_it, ws_error *err)
{
    if (study_job_one(wi, tr, spec, eta, beta, jt, note_it, err)) return -1;
    if (!spec->n_drift) return 0;
    jt->phase = calloc(spec->n_drift, sizeof *jt->phase);
    jt->phase_from = calloc(spec->n_drift, sizeof *jt->phase_from);
    if (!jt->phase || !jt->phase_from) {
        ws_job_free(jt);
        return ws_fail(err, "out of memory");
    }
    for (size_t p = 0; p < spec->n_drift; p++) {
        const ws_drift_spec *d = &spec->drift[p];
        ws_workload_spec ps = *spec;            /* the job, with the phase's rows */
        ps.drift = NULL;
        ps.n_drift = 0;
        if (d->dataset) ps.dataset = d->dataset;
        if (d->network) ps.network = d->network;
        if (d->optimizer) ps.optimizer = d->optimizer;
        if (!isnan(d->target_metric)) ps.target_metric = d->target_metric;
        ps.where = d->where;
        ws_traces own;
        const ws_traces *use = tr;
        int bad = 0;
        if (d->traces) {
            bad = ws_traces_load(&own, d->traces, tr->gpu, lim, err) != 0;
            use = &own;
        }
        jt->n_phases = p + 1;
        bad = bad || study_job_one(wi, use, &ps, eta, beta, &jt->phase[p], note_it, err);
        if (d->traces) ws_traces_free(&own);
        char why[700];
        if (!bad && knobs_differ(&jt->job, &jt->phase[p].job, why, sizeof why)) {
            ws_fail(err, "%s; every phase must have the job's batch sizes, power limits and"
                    " GPUs per job (a drift changes epochs, times and powers, not the knobs):"
                    " use rows of the same knobs", why);
            bad = 1;
        }
        if (bad) {
            ws_fail_prefix(err, "%s: drift phase %zu of '%s' on %s (from recurrence %ld)",
                           d->where ? d->where : "config", p + 2, spec->name, tr->gpu,
                           d->from);
            ws_job_free(jt);
            return -1;
        }
        jt->phase_from[p] = d->from;
    }
    return 0;
}

int ws_study_drift_phases(const ws_job_table *jt, const ws_workload_spec *spec, long R,
                          ws_drift_phase *out, ws_error *err)
{
    if (!jt->n_phases) return 0;
    const size_t last = jt->n_phases - 1;
    if (jt->phase_from[last] > R)
        return ws_fail(err, "%s: drift phase %zu of '%s' starts at recurrence %ld, after"
                       " the run's last (%ld): it would never run; raise recurrences or"
                       " start the phase earlier",
                       spec->drift[last].where ? spec->drift[last].where : "config",
                       last + 2, spec->name, jt->phase_from[last], R);
    for (size_t p = 0; p < jt->n_phases; p++)
        out[p] = (ws_drift_phase){jt->phase_from[p], &jt->phase[p].job};
    return (int)jt->n_phases;
}

static void note_phases(const ws_workload_spec *spec)
{
    for (size_t p = 0; spec && p < spec->n_drift; p++)
        if (spec->drift[p].traces) ws_input_dir_note(spec->drift[p].traces);
}

void ws_study_note_drift_inputs(const ws_run_config *cfg, const ws_catalogue *cat)
{
    for (size_t j = 0; j < cfg->n_jobs; j++) note_phases(&cfg->jobs[j]);
    for (size_t w = 0; cat && w < cfg->n_workloads; w++)
        note_phases(ws_catalogue_find(cat, cfg->workloads[w]));
}

int ws_study_pair_informed(const char *bso, const char *plo)
{
    return !strcmp(bso, "oracle") && !strcmp(plo, "oracle");
}

void ws_study_wrap_note(const ws_whatif *wi, long wrapped)
{
    if (!wi || wrapped <= 0) return;
    ws_line("wattsim: note: %ld run%s reached past the end of the %s series"
            " and wrapped around to its start", wrapped, wrapped > 1 ? "s" : "",
            wi->has_carbon ? wi->carbon.path : wi->price.path);
}

typedef struct sink_ctx {
    ws_cell_sink sink;
    void *ctx;
    const ws_cell *cell;
    ws_error *err;
} sink_ctx;

static int forward(void *p, const ws_run_record *r)
{
    sink_ctx *s = p;
    return s->sink(s->ctx, s->cell, r, s->err);
}

int ws_study_run(const ws_run_config *cfg, const ws_study_env *env,
                 ws_cell_sink sink, void *ctx, ws_cell_result **out,
                 size_t *n_out, ws_error *err)
{
    return ws_study_run_failure(cfg, env, sink, ctx, out, n_out, NULL, err);
}

int ws_study_run_failure(const ws_run_config *cfg, const ws_study_env *env,
                         ws_cell_sink sink, void *ctx, ws_cell_result **out,
                         size_t *n_out, ws_study_failure *failure, ws_error *err)
{
    if (failure) failure->failed = 0;
    *out = NULL;
    *n_out = 0;
    size_t n_work = cfg->n_workloads + cfg->n_jobs;
    size_t n_pairs = ws_run_config_n_pairs(cfg);
    size_t per_pair = cfg->n_gpus * n_work * cfg->n_etas * cfg->n_betas * cfg->n_seeds;
    size_t total = n_pairs * per_pair;
    if (total == 0) return ws_fail(err, "%s: the run plan is empty", cfg->path);

    ws_progress bar = {0};                  /* mode 0: silent until started */
    /* Resolve everything that can fail before running anything. */
    const ws_workload_spec **specs = calloc(n_work, sizeof *specs);
    if (!specs) return ws_fail(err, "out of memory");
    for (size_t w = 0; w < cfg->n_workloads; w++)
        if (!(specs[w] = ws_study_workload(cfg, env->catalogue, cfg->workloads[w], err))) {
            free(specs);
            return -1;
        }
    for (size_t w = 0; w < cfg->n_jobs; w++) specs[cfg->n_workloads + w] = &cfg->jobs[w];

    int rc = -1;
    ws_job_table *tables = NULL;
    size_t n_tables = 0;
    /* The pairs live after the results, in one block: free(*out) frees both. */
    ws_cell_result *res = calloc(1, total * sizeof *res + n_pairs * sizeof(ws_study_pair));
    ws_study_pair *pairs = res ? (ws_study_pair *)(void *)(res + total) : NULL;
    ws_study_policy *pol = calloc(n_pairs, sizeof *pol);
    if (!res || !pol) {
        ws_fail(err, "%s: out of memory for the results of a plan of %zu simulations",
                cfg->path, total);
        goto out;
    }
    if (ws_study_pairs_resolve(cfg, env->registry, pairs, pol, n_pairs, err)) goto out;

    /* Job tables, built once for every pair (as a sweep's), each gpu's
     * traces parsed once and freed: parsing costs more than a small plan's
     * simulations. */
    n_tables = cfg->n_gpus * n_work;
    if (!(tables = calloc(n_tables ? n_tables : 1, sizeof *tables))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < cfg->n_gpus; g++) {
        ws_traces tr;
        int bad = ws_study_traces(cfg, env, cfg->gpus[g], &tr, err);
        for (size_t w = 0; w < n_work && !bad; w++)
            bad = ws_study_job_drift(env->whatif, &tr, env->limits, specs[w], 0.5, 2.0,
                                     &tables[g * n_work + w], 1, err);
        ws_traces_free(&tr);
        if (bad) goto out;
    }
    /* Every drift phase starts within the run: checked before any cell runs. */
    for (size_t t = 0; t < n_tables; t++) {
        ws_drift_phase drift[WS_MAX_DRIFT_PHASES];
        const long R = cfg->recurrences > 0 ? cfg->recurrences : tables[t].default_recurrences;
        if (ws_study_drift_phases(&tables[t], specs[t % n_work], R, drift, err) < 0) goto out;
    }
    size_t idx = 0;
    if (env->progress) ws_progress_start(&bar, "simulations", total);
    for (size_t p = 0; p < n_pairs; p++)
    for (size_t g = 0; g < cfg->n_gpus; g++) {
        const ws_study_policy *use = &pol[p];
        for (size_t w = 0; w < n_work; w++) {
            const ws_job_table jt = tables[g * n_work + w];
            for (size_t e = 0; e < cfg->n_etas; e++)
            for (size_t b = 0; b < cfg->n_betas; b++)
            for (size_t s = 0; s < cfg->n_seeds; s++, idx++) {
                ws_cell_result *r = &res[idx];
                r->cell = (ws_cell){idx, cfg->gpus[g], specs[w]->name,
                                    cfg->etas[e], cfg->betas[b], cfg->seeds[s], p, &pairs[p]};
                r->b0 = jt.job.b0;
                r->n_bs = jt.job.n_bs;
                r->max_power = jt.job.max_power;
                r->gpus_per_job = ws_job_gpus(&jt.job);
                r->max_power_summed = jt.max_power_summed;
                r->recurrences = cfg->recurrences > 0 ? cfg->recurrences
                                                      : jt.default_recurrences;
                ws_job job = jt.job;          /* the view, with this cell's knobs */
                job.eta = r->cell.eta;
                job.beta = r->cell.beta;
                ws_sim_params sp = {.recurrences = r->recurrences, .seed = r->cell.seed};
                ws_drift_phase drift[WS_MAX_DRIFT_PHASES];
                const int n_drift = ws_study_drift_phases(&jt, specs[w], r->recurrences,
                                                          drift, err);   /* checked above */
                sp.drift = drift;
                sp.n_drift = n_drift > 0 ? n_drift : 0;
                sp.drift_informed = ws_study_pair_informed(pairs[p].bso, pairs[p].plo);
                ws_bso *bso = ws_bso_new(use->bt, use->bp, r->cell.seed, err);
                ws_plo *plo = bso ? ws_plo_new(use->pt, use->pp, r->cell.seed, err) : NULL;
                if (plo) {
                    char where[128];
                    snprintf(where, sizeof where, "simulation %zu %s/%s eta %g beta %g", idx,
                             r->cell.gpu, r->cell.workload, r->cell.eta, r->cell.beta);
                    ws_policy_log_where(bso, plo, where);
                }
                sink_ctx sc = {sink, ctx, &r->cell, err};
                int bad = !bso || !plo
                          || ws_simulate_whatif(&job, bso, plo, &sp, env->whatif,
                                                sink ? forward : NULL, &sc, &r->tot, err);
                ws_plo_free(plo);
                ws_bso_free(bso);
                if (bad) {
                    ws_fail_prefix(err, "%s/%s eta %g beta %g seed %lu", r->cell.gpu,
                                   r->cell.workload, r->cell.eta, r->cell.beta,
                                   r->cell.seed);
                    if (n_pairs > 1) ws_fail_prefix(err, "%s", pairs[p].label);
                    if (failure) {
                        /* a copy: the results (and their pairs) are freed */
                        failure->failed = 1;
                        failure->res = *r;
                        failure->pair = pairs[p];
                        failure->res.cell.policy = &failure->pair;
                    }
                    goto out;
                }
                ws_progress_step(&bar, 1);
            }
        }
    }
    ws_progress_end(&bar);
    *out = res;
    *n_out = total;
    res = NULL;
    rc = 0;
out:
    ws_progress_end(&bar);
    for (size_t t = 0; tables && t < n_tables; t++) ws_job_free(&tables[t]);
    free(tables);
    ws_study_policies_free(pol, n_pairs);
    free(pol);
    free(res);
    free(specs);
    return rc;
}
