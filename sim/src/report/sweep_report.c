/*
 * A sweep's tables (see wattsim/sweep.h): the per-cell summaries as CSV
 * (sweep.csv) and JSON (sweep.json), and the learning curves (curves.csv).
 * Numbers are printed with 17 significant digits, so they read back
 * bit for bit.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/provenance.h"
#include "wattsim/json_writer.h"
#include "wattsim/report.h"
#include "wattsim/sweep.h"

/* A number: ws_csv_num (empty when undefined; never inf or nan). */
static void num(FILE *f, double x)
{
    ws_csv_num(f, x);
}

/* A CSV field, quoted when it holds a comma, a quote or a line end. */
static void str_csv(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void stat_csv(FILE *f, const ws_stat *st)
{
    fputc(',', f); num(f, st->mean);
    fputc(',', f); num(f, st->lo);
    fputc(',', f); num(f, st->hi);
}

void ws_sweep_write_csv(FILE *f, const ws_sweep *s)
{
    fputs("bso,plo,policy,gpu,workload,eta,beta,seeds,seeds_ok,seeds_failed,recurrences,"
          "energy_j,energy_j_lo,energy_j_hi,time_s,time_s_lo,time_s_hi,"
          "cost,cost_lo,cost_hi,steady_energy_j,steady_energy_j_lo,steady_energy_j_hi,"
          "steady_time_s,steady_time_s_lo,steady_time_s_hi,"
          "saving_energy,saving_time,saving_cost,saving_steady_energy,saving_steady_time,"
          "regret,regret_lo,regret_hi,final_knobs,error", f);
    const int co2 = s->whatif && s->whatif->has_carbon, usd = s->whatif && s->whatif->has_price;
    if (co2) fputs(",co2_g,co2_g_lo,co2_g_hi", f);
    if (usd) fputs(",usd,usd_lo,usd_hi", f);
    char wdesc[1024] = "";
    if (ws_whatif_active(s->whatif)) {
        ws_whatif_describe(s->whatif, wdesc, sizeof wdesc);
        fputs(",whatif", f);
    }
    fputs(",bso_params,bso_sha256,plo_params,plo_sha256", f);
    fputc('\n', f);
    ws_knob_count *k = malloc(ws_sweep_knob_room(s) * sizeof *k);
    if (!k) return;
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        const ws_policy_pair *p = &s->pairs[o.pair];
        str_csv(f, p->bso); fputc(',', f);
        str_csv(f, p->plo); fputc(',', f);
        str_csv(f, p->label);
        fprintf(f, ",%s,%s,", s->gpus[o.gpu], s->work[o.work]);
        num(f, ws_req(s->etas[o.eta])); fputc(',', f);
        ws_csv_beta(f, s->betas[o.beta]);
        fprintf(f, ",%zu,%zu,%zu,%ld", s->n_seeds, o.seeds_ok, o.seeds_failed, o.recurrences);
        stat_csv(f, &o.energy);
        stat_csv(f, &o.time);
        stat_csv(f, &o.cost);
        stat_csv(f, &o.steady_energy);
        stat_csv(f, &o.steady_time);
        double sv[5] = {o.save_energy, o.save_time, o.save_cost, o.save_steady_energy,
                        o.save_steady_time};
        for (int i = 0; i < 5; i++) { fputc(',', f); num(f, sv[i]); }
        stat_csv(f, &o.regret);
        fputc(',', f);
        size_t m = ws_sweep_final_knobs(s, c, k);
        for (size_t i = 0; i < m; i++) fprintf(f, "%s%d:%d=%zu", i ? ";" : "", k[i].bs, k[i].pl, k[i].n);
        fputc(',', f);
        str_csv(f, o.error);
        if (co2) stat_csv(f, &o.co2);
        if (usd) stat_csv(f, &o.usd);
        if (wdesc[0]) { fputc(',', f); str_csv(f, wdesc); }
        fputc(',', f); str_csv(f, p->bso_params ? p->bso_params : "");
        fprintf(f, ",%s,", p->bso_sha256);
        str_csv(f, p->plo_params ? p->plo_params : "");
        fprintf(f, ",%s\n", p->plo_sha256);
    }
    free(k);
}

static void stat_json(ws_jw *w, const char *name, const ws_stat *st)
{
    ws_jw_key(w, name);
    ws_jw_begin_object(w);
    ws_jw_knumber(w, "mean", st->mean);
    ws_jw_key(w, "ci95");
    ws_jw_begin_array(w);
    ws_jw_number(w, st->lo);
    ws_jw_number(w, st->hi);
    ws_jw_end_array(w);
    ws_jw_end_object(w);
}

void ws_sweep_write_json(FILE *f, const ws_sweep *s)
{
    ws_knob_count *k = malloc(ws_sweep_knob_room(s) * sizeof *k);
    if (!k) return;
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_object(&w);
    /* The seeds as ranges [first, last] of consecutive ones, in plan order
     * (seed: 1..1000000 is one pair, not a million numbers). */
    ws_jw_kint(&w, "n_seeds", (long long)s->n_seeds);
    ws_jw_key(&w, "seed_ranges");
    ws_jw_begin_array(&w);
    for (size_t i = 0; i < s->n_seeds;) {
        size_t j = i;
        while (j + 1 < s->n_seeds && s->seeds[j + 1] == s->seeds[j] + 1) j++;
        ws_jw_begin_array(&w);
        ws_jw_uint(&w, s->seeds[i]);
        ws_jw_uint(&w, s->seeds[j]);
        ws_jw_end_array(&w);
        i = j + 1;
    }
    ws_jw_end_array(&w);
    ws_jw_whatif(&w, s->whatif);
    ws_jw_allowed(&w);
    ws_jw_version(&w);
    ws_jw_provenance(&w);
    ws_jw_key(&w, "cells");
    ws_jw_begin_array_lines(&w);
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        const ws_policy_pair *p = &s->pairs[o.pair];
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "bso", p->bso);
        ws_jw_kstring(&w, "plo", p->plo);
        ws_jw_kstring(&w, "policy", p->label);
        ws_jw_kstring(&w, "bso_params", p->bso_params ? p->bso_params : "");
        ws_jw_kstring(&w, "bso_sha256", p->bso_sha256);
        ws_jw_kstring(&w, "plo_params", p->plo_params ? p->plo_params : "");
        ws_jw_kstring(&w, "plo_sha256", p->plo_sha256);
        ws_jw_kstring(&w, "gpu", s->gpus[o.gpu]);
        ws_jw_kstring(&w, "workload", s->work[o.work]);
        ws_jw_knumber(&w, "eta", ws_req(s->etas[o.eta]));
        ws_jw_key(&w, "beta");
        if (s->betas[o.beta] == INFINITY) ws_jw_null(&w);     /* null: early stopping off */
        else ws_jw_number(&w, ws_req(s->betas[o.beta]));
        ws_jw_kint(&w, "seeds_ok", (long long)o.seeds_ok);
        ws_jw_kint(&w, "seeds_failed", (long long)o.seeds_failed);
        ws_jw_kstring(&w, "error", o.error);
        ws_jw_kint(&w, "recurrences", o.recurrences);
        const ws_job *job = &s->jobs[o.gpu * s->n_work + o.work].job;
        ws_jw_knumber(&w, "max_power", ws_req(job->max_power));
        ws_jw_kint(&w, "gpus_per_job", ws_job_gpus(job));
        stat_json(&w, "energy_j", &o.energy);
        stat_json(&w, "time_s", &o.time);
        stat_json(&w, "cost", &o.cost);
        stat_json(&w, "steady_energy_j", &o.steady_energy);
        stat_json(&w, "steady_time_s", &o.steady_time);
        stat_json(&w, "regret", &o.regret);
        if (s->whatif && s->whatif->has_carbon) stat_json(&w, "co2_g", &o.co2);
        if (s->whatif && s->whatif->has_price) stat_json(&w, "usd", &o.usd);
        ws_jw_key(&w, "saving");
        ws_jw_begin_object(&w);
        ws_jw_knumber(&w, "energy", o.save_energy);
        ws_jw_knumber(&w, "time", o.save_time);
        ws_jw_knumber(&w, "cost", o.save_cost);
        ws_jw_knumber(&w, "steady_energy", o.save_steady_energy);
        ws_jw_knumber(&w, "steady_time", o.save_steady_time);
        ws_jw_end_object(&w);
        ws_jw_key(&w, "final_knobs");
        ws_jw_begin_object(&w);
        size_t m = ws_sweep_final_knobs(s, c, k);
        for (size_t i = 0; i < m; i++) {
            char knob[32];
            snprintf(knob, sizeof knob, "%d:%d", k[i].bs, k[i].pl);
            ws_jw_kint(&w, knob, (long long)k[i].n);
        }
        ws_jw_end_object(&w);
        ws_jw_end_object(&w);
    }
    ws_jw_end_array(&w);
    ws_jw_end_object(&w);
    ws_jw_newline(&w);
    free(k);
}

void ws_sweep_write_curves(FILE *f, const ws_sweep *s)
{
    fputs("policy,gpu,workload,eta,beta,recurrence,cum_cost,cum_cost_lo,cum_cost_hi,"
          "regret,regret_lo,regret_hi", f);
    char wdesc[1024] = "";
    if (ws_whatif_active(s->whatif)) {
        ws_whatif_describe(s->whatif, wdesc, sizeof wdesc);
        fputs(",whatif", f);
    }
    fputs(",bso_params,bso_sha256,plo_params,plo_sha256\n", f);
    size_t n = s->n_seeds;
    double *cum = calloc(2 * (n ? n : 1), sizeof *cum), *oc = calloc(2 * (n ? n : 1), sizeof *oc);
    if (!cum || !oc) goto out;
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        size_t ax[6], base = c * n;
        ws_sweep_axes(s, base, ax);
        size_t oref = ws_sweep_index(s, s->ref_oracle, ax[1], ax[2], ax[3], ax[4], 0);
        memset(cum, 0, n * sizeof *cum);
        memset(oc, 0, n * sizeof *oc);
        long R = s->curves ? ws_sweep_recurrences(s, base) : 0;
        for (long r = 0; r < R; r++) {
            ws_stat a, b;
            ws_sweep_curve_step(s, base, oref, r, cum, oc, &a, &b);
            const ws_policy_pair *p = &s->pairs[ax[0]];
            str_csv(f, p->label);
            fprintf(f, ",%s,%s,", s->gpus[ax[1]], s->work[ax[2]]);
            num(f, ws_req(s->etas[ax[3]])); fputc(',', f);
            ws_csv_beta(f, s->betas[ax[4]]);
            fprintf(f, ",%ld", r + 1);
            stat_csv(f, &a);
            stat_csv(f, &b);
            if (wdesc[0]) { fputc(',', f); str_csv(f, wdesc); }
            /* Provenance, as sweep.csv: parameters as resolved, .so sha256. */
            fputc(',', f); str_csv(f, p->bso_params ? p->bso_params : "");
            fprintf(f, ",%s,", p->bso_sha256);
            str_csv(f, p->plo_params ? p->plo_params : "");
            fprintf(f, ",%s\n", p->plo_sha256);
        }
    }
out:
    free(cum);
    free(oc);
}

void ws_sweep_history_write(void *ctx, const ws_sweep *s, size_t i, const ws_run_record *runs,
                            size_t n, const ws_sim_totals *tot, const char *error)
{
    ws_sweep_history *h = ctx;
    if (!h->pairs) {
        h->pairs = calloc(s->n_pairs, sizeof *h->pairs);
        if (!h->pairs) { h->oom = 1; return; }
        for (size_t p = 0; p < s->n_pairs; p++)
            snprintf(h->pairs[p].label, sizeof h->pairs[p].label, "%s", s->pairs[p].label);
    }
    size_t ax[6];
    ws_sweep_axes(s, i, ax);
    ws_cell c = {i, s->gpus[ax[1]], s->work[ax[2]], s->etas[ax[3]], s->betas[ax[4]],
                 s->seeds[ax[5]], ax[0], &h->pairs[ax[0]]};
    for (size_t k = 0; k < n; k++) ws_report_history_row_status(h->f, &c, &runs[k], h->wi);
    if (error) ws_report_history_failed(h->f, &c, tot, h->wi, error);
}

void ws_sweep_history_free(ws_sweep_history *h)
{
    free(h->pairs);
    h->pairs = NULL;
}
