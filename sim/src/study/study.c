/* Run-plan execution; see wattsim/study.h. */
#include "wattsim/study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int ws_study_job(const ws_whatif *wi, const ws_traces *tr,
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
            bad = ws_study_job(env->whatif, &tr, specs[w], 0.5, 2.0, &tables[g * n_work + w], 1,
                               err);
        ws_traces_free(&tr);
        if (bad) goto out;
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
                r->recurrences = cfg->recurrences > 0 ? cfg->recurrences
                                                      : jt.default_recurrences;
                ws_job job = jt.job;          /* the view, with this cell's knobs */
                job.eta = r->cell.eta;
                job.beta = r->cell.beta;
                ws_sim_params sp = {.recurrences = r->recurrences, .seed = r->cell.seed};
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
