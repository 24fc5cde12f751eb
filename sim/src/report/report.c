/* Output formatting; see wattsim/report.h. */
#include "wattsim/provenance.h"
#include "wattsim/report.h"
#include "wattsim/plugin.h"

#include "wattsim/json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ws_format_parse(const char *s)
{
    if (!strcmp(s, "table")) return WS_FMT_TABLE;
    if (!strcmp(s, "csv")) return WS_FMT_CSV;
    if (!strcmp(s, "json")) return WS_FMT_JSON;
    return -1;
}

double ws_req(double x)
{
    if (!isfinite(x)) ws_output_bad_number(x);
    return x;
}

/* beta as JSON: null when early stopping is off. */
static void jw_beta(ws_jw *w, double beta)
{
    if (beta == INFINITY) ws_jw_null(w);
    else ws_jw_number(w, ws_req(beta));
}

void ws_csv_num(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else if (!isnan(x)) ws_output_bad_number(x);
}

void ws_csv_nums(FILE *f, size_t n, const double *x, int required)
{
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', f);
        ws_csv_num(f, required ? ws_req(x[i]) : x[i]);
    }
}

void ws_csv_beta(FILE *f, double beta)
{
    if (beta == INFINITY) fputs("inf", f);
    else ws_csv_num(f, ws_req(beta));
}

const char *ws_tab(char *buf, size_t size, const char *fmt, double x)
{
    if (isfinite(x)) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(buf, size, fmt, x);
#pragma GCC diagnostic pop
        return buf;
    }
    if (!isnan(x)) ws_output_bad_number(x);
    snprintf(buf, size, "-");
    return buf;
}

/* beta is INFINITY when early stopping is off. */
static void fmt_beta(char *buf, size_t n, double beta)
{
    if (beta == INFINITY) snprintf(buf, n, "inf");
    else ws_tab(buf, n, "%g", ws_req(beta));
}

/* ------------------------------------------------------------ what-if */

int ws_report_has_whatif(const ws_whatif *wi)
{
    return ws_whatif_active(wi);
}

void ws_jw_whatif(ws_jw *w, const ws_whatif *wi)
{
    if (!ws_report_has_whatif(wi)) return;
    char d[1024];
    ws_whatif_describe(wi, d, sizeof d);
    ws_jw_kstring(w, "whatif", d);
}

void ws_jw_allowed(ws_jw *w)
{
    const char *const *dirs;
    size_t n = ws_plugin_allowed(&dirs);
    if (n) {
        ws_jw_key(w, "allow_plugins");
        ws_jw_begin_array(w);
        for (size_t i = 0; i < n; i++) ws_jw_string(w, dirs[i]);
        ws_jw_end_array(w);
    }
    if ((n = ws_plugin_allowed_python(&dirs))) {
        ws_jw_key(w, "allow_python");
        ws_jw_begin_array(w);
        for (size_t i = 0; i < n; i++) ws_jw_string(w, dirs[i]);
        ws_jw_end_array(w);
    }
}

void ws_maxpower_line(FILE *f, double max_power, int gpus, int summed)
{
    char b[2][32];
    ws_tab(b[0], sizeof b[0], "%g", ws_req(max_power));
    /* A node of mixed models: MaxPower is the sum of each GPU's own
     * largest limit, not one limit times the GPUs. */
    if (summed)
        fprintf(f, "MaxPower %s W: %d GPUs per job, the sum of each one's own largest limit\n",
                b[0], gpus);
    else
        fprintf(f, "MaxPower %s W: %d GPU%s per job at %s W\n", b[0], gpus, gpus > 1 ? "s" : "",
                ws_tab(b[1], sizeof b[1], "%g", ws_req(max_power / gpus)));
}

void ws_table_whatif(FILE *f, const ws_whatif *wi)
{
    if (!ws_report_has_whatif(wi)) return;
    char d[1024], shown[4 * sizeof d];
    ws_whatif_describe(wi, d, sizeof d);
    ws_text_escape(shown, sizeof shown, d);     /* series files' names: any bytes */
    fprintf(f, "what-if: %s\n", shown);
}

/* `"co2_g": X, "usd": Y` for the series given. */
static void json_amounts(ws_jw *w, const ws_whatif *wi, double co2, double usd)
{
    if (wi && wi->has_carbon) ws_jw_knumber(w, "co2_g", ws_req(co2));
    if (wi && wi->has_price) ws_jw_knumber(w, "usd", ws_req(usd));
}

/* ",X,Y" CSV fields for the series given. */
static void csv_amounts(FILE *f, const ws_whatif *wi, double co2, double usd)
{
    if (wi && wi->has_carbon) { fputc(',', f); ws_csv_num(f, ws_req(co2)); }
    if (wi && wi->has_price) { fputc(',', f); ws_csv_num(f, ws_req(usd)); }
}

static void csv_amounts_header(FILE *f, const ws_whatif *wi)
{
    if (wi && wi->has_carbon) fputs(",co2_g", f);
    if (wi && wi->has_price) fputs(",usd", f);
}

/* ------------------------------------------------------------ simulate */

static void report_simulate(FILE *f, ws_format fmt, const ws_cell_result *r,
                            const char *bso, const char *plo, const ws_run_record *h,
                            size_t n, const ws_whatif *wi, int with_status,
                            const char *error);

/* A pair's identity, as sweep.csv records it (parameters as resolved,
 * sha256 of the file) and where each policy came from: the keys of
 * simulate's JSON, of every cell of summary.json and of plan's policies. */
void ws_jw_identity(ws_jw *w, const ws_policy_prov *pv)
{
    ws_jw_kstring(w, "bso_params", pv->bso_params);
    ws_jw_kstring(w, "bso_sha256", pv->bso_sha256);
    ws_jw_kstring(w, "bso_file", pv->bso_file);
    ws_jw_kstring(w, "plo_params", pv->plo_params);
    ws_jw_kstring(w, "plo_sha256", pv->plo_sha256);
    ws_jw_kstring(w, "plo_file", pv->plo_file);
}

/* Whether s (NULL: none) can stand in a table line as it is. */
static int plain_word(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s <= ' ' || *s == '"' || *s == '\\' || *s == 0x7f) return 0;
    return 1;
}

/* A word of a table line (params NULL: s; else "s{params}") as is, or in
 * double quotes with C escapes when it has a blank, a quote, a backslash
 * or a control character (a path or a string parameter is data: it must
 * not break or forge a line). */
static void table_word(FILE *f, const char *s, const char *params)
{
    if (plain_word(s) && plain_word(params)) {
        fprintf(f, params ? "%s{%s}" : "%s", s, params);
        return;
    }
    fputc('"', f);
    for (int part = 0; part < 3; part++) {
        const char *q = part == 0 ? s : part == 1 ? params : NULL;
        if (part == 1 && params) fputc('{', f);
        if (part == 2 && params) fputc('}', f);
        for (; q && *q; q++) {
            unsigned char c = (unsigned char)*q;
            if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
            else if (c == '\n') fputs("\\n", f);
            else if (c == '\t') fputs("\\t", f);
            else if (c < ' ' || c == 0x7f) fprintf(f, "\\x%02x", c);
            else fputc(c, f);
        }
    }
    fputc('"', f);
}

void ws_table_policy_words(FILE *f, const char *name, const char *params, const char *file,
                           const char *sha256)
{
    table_word(f, name, params ? params : "");
    fputc(' ', f);
    table_word(f, file && file[0] ? file : "-", NULL);
    if (sha256 && sha256[0]) fprintf(f, " sha256 %.12s", sha256);
}

void ws_table_policy(FILE *f, const char *role, const char *name, const char *params,
                     const char *file, const char *sha256)
{
    fprintf(f, "%s ", role);
    ws_table_policy_words(f, name, params, file, sha256);
    fputc('\n', f);
}

void ws_table_identity(FILE *f, const ws_study_pair *pair)
{
    const ws_policy_prov *pv = &pair->prov;
    ws_table_policy(f, "bso", pair->bso, pv->bso_params, pv->bso_file, pv->bso_sha256);
    ws_table_policy(f, "plo", pair->plo, pv->plo_params, pv->plo_file, pv->plo_sha256);
}

void ws_report_simulate(FILE *f, ws_format fmt, const ws_cell_result *r,
                        const char *bso, const char *plo,
                        const ws_run_record *h, size_t n, const ws_whatif *wi)
{
    report_simulate(f, fmt, r, bso, plo, h, n, wi, 0, NULL);
}

void ws_report_simulate_status(FILE *f, ws_format fmt, const ws_cell_result *r,
                               const char *bso, const char *plo,
                               const ws_run_record *h, size_t n, const ws_whatif *wi,
                               const char *error)
{
    report_simulate(f, fmt, r, bso, plo, h, n, wi, 1, error);
}

/* with_status: the status and error of --keep-history (error NULL: ok). */
static void report_simulate(FILE *f, ws_format fmt, const ws_cell_result *r,
                            const char *bso, const char *plo, const ws_run_record *h,
                            size_t n, const ws_whatif *wi, int with_status,
                            const char *error)
{
    const int co2 = wi && wi->has_carbon, usd = wi && wi->has_price;
    const ws_cell *c = &r->cell;
    const ws_sim_totals *t = &r->tot;
    if (fmt == WS_FMT_JSON) {
        ws_jw w;
        ws_jw_init(&w, f);
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "gpu", c->gpu);
        ws_jw_kstring(&w, "workload", c->workload);
        ws_jw_knumber(&w, "eta", ws_req(c->eta));
        ws_jw_key(&w, "beta"); jw_beta(&w, c->beta);
        ws_jw_kbool(&w, "early_stopping", !isinf(c->beta));
        ws_jw_key(&w, "seed"); ws_jw_uint(&w, c->seed);
        ws_jw_kstring(&w, "bso", bso);
        ws_jw_kstring(&w, "plo", plo);
        if (c->policy) ws_jw_identity(&w, &c->policy->prov);
        ws_jw_kint(&w, "b0", r->b0);
        ws_jw_kint(&w, "recurrences", r->recurrences);
        ws_jw_knumber(&w, "max_power", ws_req(r->max_power));
        ws_jw_kint(&w, "gpus_per_job", r->gpus_per_job);
        ws_jw_knumber(&w, "energy_j", ws_req(t->energy_j));
        ws_jw_knumber(&w, "time_s", ws_req(t->time_s));
        ws_jw_knumber(&w, "cost", ws_req(t->cost));
        ws_jw_kint(&w, "runs", t->runs);
        ws_jw_kint(&w, "skipped", t->skipped);
        ws_jw_kint(&w, "final_bs", t->final_bs);
        ws_jw_kint(&w, "final_pl", t->final_pl);
        json_amounts(&w, wi, t->co2_g, t->usd);
        if (co2 || usd) ws_jw_kint(&w, "wrapped_runs", t->wrapped);
        if (wi && wi->every > 0) ws_jw_kint(&w, "late_recurrences", t->late);
        if (wi && wi->defer > 0) ws_jw_knumber(&w, "deferred_s", ws_req(t->waited_s));
        ws_jw_whatif(&w, wi);
        if (with_status) {
            ws_jw_kstring(&w, "status", error ? "failed" : "ok");
            ws_jw_kstring(&w, "error", error);           /* NULL: null */
            if (error) {
                ws_jw_kint(&w, "failed_recurrence", t->fail_recurrence);
                ws_jw_kint(&w, "failed_try", t->fail_attempt);
            }
        }
        ws_jw_key(&w, "history");
        ws_jw_begin_array_lines(&w);
        for (size_t i = 0; i < n; i++) {
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "recurrence", h[i].recurrence);
            ws_jw_kint(&w, "try", h[i].attempt);
            ws_jw_kint(&w, "bs", h[i].bs);
            ws_jw_kint(&w, "pl", h[i].pl);
            ws_jw_knumber(&w, "energy_j", ws_req(h[i].energy_j));
            ws_jw_knumber(&w, "time_s", ws_req(h[i].time_s));
            ws_jw_knumber(&w, "cost", ws_req(h[i].cost));
            ws_jw_kint(&w, "epochs", h[i].epochs);
            ws_jw_kbool(&w, "reached", h[i].reached);
            ws_jw_kbool(&w, "profiled", h[i].profiled);
            json_amounts(&w, wi, h[i].co2_g, h[i].usd);
            if (co2 || usd) ws_jw_knumber(&w, "start_s", ws_req(h[i].start_s));
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_end_object(&w);
        ws_jw_newline(&w);
        return;
    }
    char beta[32], eta[32], b[8][32];
    fmt_beta(beta, sizeof beta, c->beta);
    fprintf(f, "%s on %s: bso %s, plo %s, eta %s, beta %s, seed %lu, b0 %d, %ld recurrences\n",
            c->workload, c->gpu, bso, plo, ws_tab(eta, sizeof eta, "%g", ws_req(c->eta)), beta,
            c->seed, r->b0, r->recurrences);
    if (c->policy) ws_table_identity(f, c->policy);
    /* The cost column weighs time by MaxPower: say which (for a job of
     * several GPUs it is not one GPU's largest limit). */
    ws_maxpower_line(f, r->max_power, r->gpus_per_job, r->max_power_summed);
    ws_table_whatif(f, wi);
    fputc('\n', f);
    fprintf(f, "%5s %3s %6s %5s %6s %12s", "rec", "try", "bs", "pl", "epochs", "energy_kJ");
    if (co2) fprintf(f, " %10s", "CO2_kg");
    if (usd) fprintf(f, " %9s", "price_$");
    fprintf(f, " %12s %14s %7s %8s\n", "time_min", "cost", "reached", "profiled");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%5ld %3d %6d %5d %6d %12s", h[i].recurrence, h[i].attempt, h[i].bs,
                h[i].pl, h[i].epochs, ws_tab(b[0], 32, "%.1f", ws_req(h[i].energy_j / 1e3)));
        if (co2) fprintf(f, " %10s", ws_tab(b[1], 32, "%.3f", ws_req(h[i].co2_g / 1e3)));
        if (usd) fprintf(f, " %9s", ws_tab(b[2], 32, "%.2f", ws_req(h[i].usd)));
        /* a blank `profiled` ends the line: no line ends in spaces */
        fprintf(f, " %12s %14s %7s", ws_tab(b[3], 32, "%.2f", ws_req(h[i].time_s / 60)),
                ws_tab(b[4], 32, "%.1f", ws_req(h[i].cost)), h[i].reached ? "yes" : "no");
        if (h[i].profiled) fprintf(f, " %8s", "yes");
        fputc('\n', f);
    }
    fprintf(f, "\ntotal: %ld runs (%ld not started), energy %s MJ", t->runs, t->skipped,
            ws_tab(b[0], 32, "%.4f", ws_req(t->energy_j / 1e6)));
    if (co2) fprintf(f, ", %s kg CO2eq", ws_tab(b[1], 32, "%.3f", ws_req(t->co2_g / 1e3)));
    if (usd) fprintf(f, ", $%s", ws_tab(b[2], 32, "%.2f", ws_req(t->usd)));
    fprintf(f, ", time %s h, cost %s", ws_tab(b[3], 32, "%.3f", ws_req(t->time_s / 3600)),
            ws_tab(b[4], 32, "%.6g", ws_req(t->cost)));
    if (t->final_bs >= 0) fprintf(f, "; settled on bs %d at %d W\n", t->final_bs, t->final_pl);
    else fputs("; no run reached the target\n", f);
    if (wi && wi->every > 0)
        fprintf(f, "schedule: every %g h; %ld of %ld recurrences started late (the previous"
                " one still ran)\n", wi->every / 3600, t->late, t->recurrences);
    if (wi && wi->defer > 0)
        fprintf(f, "deferral: up to %g h each, %s h waited in all (perfect forecast)\n",
                wi->defer / 3600, ws_tab(b[5], 32, "%.2f", ws_req(t->waited_s / 3600)));
    if (error)
        fprintf(f, "failed in recurrence %ld, try %d: %s\n", t->fail_recurrence,
                t->fail_attempt, error);
}

/* ------------------------------------------------------------ pareto */

void ws_report_pareto(FILE *f, ws_format fmt, const ws_job *job, const ws_pareto *p,
                      const ws_whatif *wi)
{
    if (fmt == WS_FMT_CSV) {
        char wdesc[1024] = "";
        if (ws_report_has_whatif(wi)) ws_whatif_describe(wi, wdesc, sizeof wdesc);
        fputs("bs,pl,runs,reached,epochs,tta_s,eta_j,cost,frontier,default,best,jit,"
              "time_per_epoch_s,average_power_w", f);
        fputs(wdesc[0] ? ",whatif\n" : "\n", f);
        for (int k = 0; k < p->n; k++) {
            const ws_knob_stat *s = &p->knobs[k];
            fprintf(f, "%d,%d,%d,%d,", s->bs, s->pl, s->runs, s->reached);
            ws_csv_num(f, s->epochs); fputc(',', f);
            ws_csv_num(f, s->tta); fputc(',', f);
            ws_csv_num(f, s->eta); fputc(',', f);
            ws_csv_num(f, s->cost);
            fprintf(f, ",%d,%d,%d,%d,", s->frontier, s->is_default, s->is_best, s->is_jit);
            ws_csv_num(f, ws_req(s->time_per_epoch)); fputc(',', f);
            ws_csv_num(f, ws_req(s->average_power));
            if (wdesc[0]) { fputc(',', f); ws_csv_str(f, wdesc); }
            fputc('\n', f);
        }
        return;
    }
    if (fmt == WS_FMT_JSON) {
        ws_jw w;
        ws_jw_init(&w, f);
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "gpu", job->gpu);
        ws_jw_kstring(&w, "workload", job->workload);
        ws_jw_knumber(&w, "eta", ws_req(job->eta));
        ws_jw_knumber(&w, "max_power", ws_req(job->max_power));
        ws_jw_kint(&w, "gpus_per_job", ws_job_gpus(job));
        ws_jw_kint(&w, "b0", job->b0);
        ws_jw_kint(&w, "max_epochs", job->max_epochs);
        ws_jw_whatif(&w, wi);
        if (p->objective_runs) ws_jw_kint(&w, "objective_runs", p->objective_runs);
        ws_jw_key(&w, "knobs");
        ws_jw_begin_array_lines(&w);
        for (int k = 0; k < p->n; k++) {
            const ws_knob_stat *s = &p->knobs[k];
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "bs", s->bs);
            ws_jw_kint(&w, "pl", s->pl);
            ws_jw_kint(&w, "runs", s->runs);
            ws_jw_kint(&w, "reached", s->reached);
            /* NaN (never reached): null by design */
            ws_jw_knumber(&w, "epochs", s->epochs);
            ws_jw_knumber(&w, "tta_s", s->tta);
            ws_jw_knumber(&w, "eta_j", s->eta);
            ws_jw_knumber(&w, "cost", s->cost);
            ws_jw_kint(&w, "frontier", s->frontier);
            ws_jw_kint(&w, "default", s->is_default);
            ws_jw_kint(&w, "best", s->is_best);
            ws_jw_kint(&w, "jit", s->is_jit);
            ws_jw_knumber(&w, "time_per_epoch_s", ws_req(s->time_per_epoch));
            ws_jw_knumber(&w, "average_power_w", ws_req(s->average_power));
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_key(&w, "frontier");
        ws_jw_begin_array(&w);
        for (int q = 0; q < p->n_frontier; q++) {
            const ws_knob_stat *s = &p->knobs[p->frontier[q]];
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "bs", s->bs);
            ws_jw_kint(&w, "pl", s->pl);
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_end_object(&w);
        ws_jw_newline(&w);
        return;
    }
    char v[8][32];
    char gpus[48] = "";
    if (ws_job_gpus(job) > 1) snprintf(gpus, sizeof gpus, " (%d GPUs)", ws_job_gpus(job));
    fprintf(f, "%s on %s: %d knobs, MaxPower %s W%s, b0 %d, max %d epochs,"
            " eta %s\n", job->workload, job->gpu, p->n,
            ws_tab(v[0], 32, "%g", ws_req(job->max_power)), gpus, job->b0, job->max_epochs, ws_tab(v[1], 32, "%g", ws_req(job->eta)));
    ws_table_whatif(f, wi);
    if (p->objective_runs)
        fprintf(f, "cost: the %s objective's expected cost per run over %ld runs back to"
                " back from the start\n", wi->objective == WS_OBJ_CARBON ? "carbon" : "price",
                p->objective_runs);
    fputc('\n', f);
    fprintf(f, "%6s %5s %4s %7s %7s %11s %12s %14s  %s\n", "bs", "pl", "runs", "reached",
            "epochs", "TTA_min", "ETA_kJ", "cost", "marks");
    for (int k = 0; k < p->n; k++) {
        const ws_knob_stat *s = &p->knobs[k];
        char marks[64] = "";
        if (s->frontier) strcat(marks, "frontier ");
        if (s->is_default) strcat(marks, "default ");
        if (s->is_best) strcat(marks, "best ");
        if (s->is_jit) strcat(marks, "jit ");
        /* no trailing blanks: a table is text people diff and paste */
        size_t nm = strlen(marks);
        if (nm) marks[nm - 1] = '\0';
        const char *gap = nm ? "  " : "";
        if (s->reached)
            fprintf(f, "%6d %5d %4d %7d %7s %11s %12s %14s%s%s\n", s->bs, s->pl,
                    s->runs, s->reached, ws_tab(v[0], 32, "%.2f", ws_req(s->epochs)),
                    ws_tab(v[1], 32, "%.2f", ws_req(s->tta / 60)),
                    ws_tab(v[2], 32, "%.2f", ws_req(s->eta / 1e3)),
                    ws_tab(v[3], 32, "%.1f", ws_req(s->cost)), gap, marks);
        else
            fprintf(f, "%6d %5d %4d %7d %7s %11s %12s %14s%s%s\n", s->bs, s->pl, s->runs,
                    s->reached, "-", "-", "-", "-", gap, marks);
    }
    if (p->best_knob >= 0 && p->default_knob >= 0) {
        const ws_knob_stat *b = &p->knobs[p->best_knob], *d = &p->knobs[p->default_knob];
        char bb[3][32];
        /* the default reaches (TTA, ETA > 0: bounded traces), so the ratios
         * are defined; its cost is 0 only under a zero-rate objective */
        fprintf(f, "\nbest (bs %d, %d W) vs default (bs %d, %d W): TTA %s %%, ETA %s %%,"
                " cost %s %%\n", b->bs, b->pl, d->bs, d->pl,
                ws_tab(bb[0], 32, "%+.1f", ws_req(100 * (b->tta / d->tta - 1))),
                ws_tab(bb[1], 32, "%+.1f", ws_req(100 * (b->eta / d->eta - 1))),
                ws_tab(bb[2], 32, "%+.1f", d->cost > 0 ? 100 * (b->cost / d->cost - 1) : NAN));
    }
}

/* ------------------------------------------------------------ run */

static void history_header(FILE *f, const ws_whatif *wi)
{
    fputs("simulation,gpu,workload,eta,beta,seed,recurrence,try,bs,pl,epochs,energy_j,time_s,"
          "cost,reached,profiled", f);
    csv_amounts_header(f, wi);
    if (ws_whatif_accounts(wi)) fputs(",start_s", f);
    fputs(",policy", f);
}

/* The simulation's columns (its index in the plan, its coordinates), then
 * recurrence and try. */
static void history_cell(FILE *f, const ws_cell *c, long recurrence, int attempt)
{
    fprintf(f, "%zu,", c->index);
    ws_csv_str(f, c->gpu); fputc(',', f);
    ws_csv_str(f, c->workload); fputc(',', f);
    ws_csv_num(f, ws_req(c->eta)); fputc(',', f);
    ws_csv_beta(f, c->beta);
    fprintf(f, ",%lu,%ld,%d", c->seed, recurrence, attempt);
}

static void history_policy(FILE *f, const ws_cell *c)
{
    fputc(',', f);
    ws_csv_str(f, c->policy ? c->policy->label : "");
}

static void history_row(FILE *f, const ws_cell *c, const ws_run_record *r,
                        const ws_whatif *wi)
{
    history_cell(f, c, r->recurrence, r->attempt);
    fprintf(f, ",%d,%d,%d,", r->bs, r->pl, r->epochs);
    ws_csv_num(f, ws_req(r->energy_j)); fputc(',', f);
    ws_csv_num(f, ws_req(r->time_s)); fputc(',', f);
    ws_csv_num(f, ws_req(r->cost));
    fprintf(f, ",%d,%d", r->reached, r->profiled);
    csv_amounts(f, wi, r->co2_g, r->usd);
    if (ws_whatif_accounts(wi)) { fputc(',', f); ws_csv_num(f, ws_req(r->start_s)); }
    history_policy(f, c);
}

void ws_report_history_header(FILE *f, const ws_whatif *wi)
{
    history_header(f, wi);
    fputc('\n', f);
}

void ws_report_history_row(FILE *f, const ws_cell *c, const ws_run_record *r,
                           const ws_whatif *wi)
{
    history_row(f, c, r, wi);
    fputc('\n', f);
}

void ws_report_history_header_status(FILE *f, const ws_whatif *wi)
{
    history_header(f, wi);
    fputs(",status,error\n", f);
}

void ws_report_history_row_status(FILE *f, const ws_cell *c, const ws_run_record *r,
                                  const ws_whatif *wi)
{
    history_row(f, c, r, wi);
    fputs(",ok,\n", f);
}

void ws_report_history_failed(FILE *f, const ws_cell *c, const ws_sim_totals *t,
                              const ws_whatif *wi, const char *error)
{
    history_cell(f, c, t->fail_recurrence, t->fail_attempt);
    /* bs, pl, epochs, energy_j, time_s, cost, reached, profiled: no run */
    int empty = 8 + (wi && wi->has_carbon) + (wi && wi->has_price) + !!ws_whatif_accounts(wi);
    for (int i = 0; i < empty; i++) fputc(',', f);
    history_policy(f, c);
    fputs(",failed,", f);
    ws_csv_str(f, error);
    fputc('\n', f);
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int same_group(const ws_cell *a, const ws_cell *b)
{
    return a->pair == b->pair && !strcmp(a->gpu, b->gpu) && !strcmp(a->workload, b->workload)
        && a->eta == b->eta && a->beta == b->beta;
}

/* The head of a block of the run table: the pair's identity (pair set),
 * or its names (bso set), or neither. */
static void table_head(FILE *f, const ws_whatif *wi, const ws_study_pair *pair,
                       const char *bso, const char *plo, int co2, int usd)
{
    if (pair) ws_table_identity(f, pair);
    else if (bso) fprintf(f, "bso %s, plo %s\n", bso, plo);
    ws_table_whatif(f, wi);
    fprintf(f, "%-8s %-14s %5s %5s %5s %6s %12s", "gpu", "workload", "eta", "beta", "seeds",
            "recur", "energy_MJ");
    if (co2) fprintf(f, " %10s", "CO2_kg");
    if (usd) fprintf(f, " %10s", "price_$");
    fprintf(f, " %12s %14s %8s  %s\n", "time_h", "cost", "runs", "final bs (seeds)");
}

/* A job of several GPUs says so above the table, as simulate and plan do:
 * its MaxPower is not one GPU's. A pair's cells are GPU-, then
 * workload-major, so each job's cells are consecutive; every pair has the
 * same jobs. */
static void multi_gpu_notes(FILE *f, const ws_cell_result *r, size_t n)
{
    char b[2][32];
    for (size_t i = 0; i < n && r[i].cell.pair == r[0].cell.pair; i++)
        if (r[i].gpus_per_job > 1
            && (i == 0 || strcmp(r[i].cell.gpu, r[i - 1].cell.gpu)
                || strcmp(r[i].cell.workload, r[i - 1].cell.workload)))
            fprintf(f, "MaxPower %s W for %s on %s: %d GPUs per job at %s W\n",
                    ws_tab(b[0], 32, "%g", ws_req(r[i].max_power)), r[i].cell.workload,
                    r[i].cell.gpu, r[i].gpus_per_job,
                    ws_tab(b[1], 32, "%g", ws_req(r[i].max_power / r[i].gpus_per_job)));
}

int ws_report_cells(FILE *f, ws_format fmt, const ws_cell_result *r, size_t n,
                    const char *bso, const char *plo, const ws_whatif *wi,
                    const ws_policy_prov *prov)
{
    const int has_wi = ws_report_has_whatif(wi);
    char desc[1024] = "";
    if (has_wi) ws_whatif_describe(wi, desc, sizeof desc);
    /* The policies of cell i: its run's pair, else the arguments. */
#define CELL_BSO(i) (r[i].cell.policy ? r[i].cell.policy->bso : bso)
#define CELL_PLO(i) (r[i].cell.policy ? r[i].cell.policy->plo : plo)
#define CELL_PROV(i) (r[i].cell.policy ? &r[i].cell.policy->prov : prov)
#define CELL_LABEL(i) (r[i].cell.policy ? r[i].cell.policy->label : "")
    if (fmt == WS_FMT_CSV) {
        fputs("simulation,gpu,workload,eta,beta,seed,bso,plo,policy,b0,recurrences,runs,skipped,"
              "energy_j,time_s,cost,final_bs,final_pl", f);
        csv_amounts_header(f, wi);
        if (has_wi) fputs(",whatif", f);
        fputs(prov ? ",bso_params,bso_sha256,plo_params,plo_sha256\n" : "\n", f);
        for (size_t i = 0; i < n; i++) {
            const ws_cell *c = &r[i].cell;
            fprintf(f, "%zu,", c->index);
            ws_csv_str(f, c->gpu); fputc(',', f);
            ws_csv_str(f, c->workload); fputc(',', f);
            ws_csv_num(f, ws_req(c->eta)); fputc(',', f);
            ws_csv_beta(f, c->beta);
            fprintf(f, ",%lu,", c->seed);
            ws_csv_str(f, CELL_BSO(i)); fputc(',', f);
            ws_csv_str(f, CELL_PLO(i)); fputc(',', f);
            ws_csv_str(f, CELL_LABEL(i));
            fprintf(f, ",%d,%ld,%ld,%ld,", r[i].b0, r[i].recurrences, r[i].tot.runs,
                    r[i].tot.skipped);
            ws_csv_num(f, ws_req(r[i].tot.energy_j)); fputc(',', f);
            ws_csv_num(f, ws_req(r[i].tot.time_s)); fputc(',', f);
            ws_csv_num(f, ws_req(r[i].tot.cost));
            fprintf(f, ",%d,%d", r[i].tot.final_bs, r[i].tot.final_pl);
            csv_amounts(f, wi, r[i].tot.co2_g, r[i].tot.usd);
            if (has_wi) { fputc(',', f); ws_csv_str(f, desc); }
            if (prov) {
                const ws_policy_prov *pv = CELL_PROV(i);
                fputc(',', f); ws_csv_str(f, pv->bso_params);
                fprintf(f, ",%s,", pv->bso_sha256);
                ws_csv_str(f, pv->plo_params);
                fprintf(f, ",%s", pv->plo_sha256);
            }
            fputc('\n', f);
        }
        return 0;
    }
    if (fmt == WS_FMT_JSON) {
        ws_jw w;
        ws_jw_init(&w, f);
        ws_jw_begin_array_lines(&w);
        w.indent = " ";                    /* summary.json: one blank */
        for (size_t i = 0; i < n; i++) {
            const ws_cell *c = &r[i].cell;
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "simulation", (long long)c->index);
            ws_jw_kstring(&w, "gpu", c->gpu);
            ws_jw_kstring(&w, "workload", c->workload);
            ws_jw_knumber(&w, "eta", ws_req(c->eta));
            ws_jw_key(&w, "beta"); jw_beta(&w, c->beta);
            ws_jw_key(&w, "seed"); ws_jw_uint(&w, c->seed);
            ws_jw_kstring(&w, "bso", CELL_BSO(i));
            ws_jw_kstring(&w, "plo", CELL_PLO(i));
            ws_jw_kstring(&w, "policy", CELL_LABEL(i));
            if (prov) {
                ws_jw_identity(&w, CELL_PROV(i));
                ws_jw_allowed(&w);
                ws_jw_version(&w);
                ws_jw_provenance(&w);
            }
            ws_jw_knumber(&w, "max_power", ws_req(r[i].max_power));
            ws_jw_kint(&w, "gpus_per_job", r[i].gpus_per_job);
            ws_jw_kint(&w, "b0", r[i].b0);
            ws_jw_kint(&w, "recurrences", r[i].recurrences);
            ws_jw_kint(&w, "runs", r[i].tot.runs);
            ws_jw_kint(&w, "skipped", r[i].tot.skipped);
            ws_jw_knumber(&w, "energy_j", ws_req(r[i].tot.energy_j));
            ws_jw_knumber(&w, "time_s", ws_req(r[i].tot.time_s));
            ws_jw_knumber(&w, "cost", ws_req(r[i].tot.cost));
            ws_jw_kint(&w, "final_bs", r[i].tot.final_bs);
            ws_jw_kint(&w, "final_pl", r[i].tot.final_pl);
            json_amounts(&w, wi, r[i].tot.co2_g, r[i].tot.usd);
            ws_jw_whatif(&w, wi);
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_newline(&w);
        return 0;                          /* the caller checks the file */
    }
    /* Table: one line per (gpu, workload, eta, beta), means over seeds. */
    int *sorted = malloc((n ? n : 1) * sizeof *sorted);    /* a group's final sizes */
    if (!sorted) return -1;
    const int co2 = wi && wi->has_carbon, usd = wi && wi->has_price;
    /* One block per policy pair (a run's cells are pair-major). */
    const int several = n && r[n - 1].cell.pair != r[0].cell.pair;
    multi_gpu_notes(f, r, n);
    if (n == 0) table_head(f, wi, NULL, bso, plo, co2, usd);
    for (size_t i = 0; i < n;) {
        if (i == 0 || r[i].cell.pair != r[i - 1].cell.pair) {
            if (several) {
                fprintf(f, "%spolicy ", i ? "\n" : "");
                table_word(f, CELL_LABEL(i), NULL);
                fputc('\n', f);
            }
            table_head(f, wi, r[i].cell.policy, several ? NULL : CELL_BSO(i), CELL_PLO(i),
                       co2, usd);
        }
        size_t j = i;
        double e = 0, t = 0, c = 0, runs = 0, g = 0, d = 0;
        while (j < n && same_group(&r[i].cell, &r[j].cell)) {
            g += r[j].tot.co2_g;
            d += r[j].tot.usd;
            e += r[j].tot.energy_j;
            t += r[j].tot.time_s;
            c += r[j].tot.cost;
            runs += (double)r[j].tot.runs;
            j++;
        }
        double m = (double)(j - i);
        /* Final batch sizes with their counts, most frequent first (ties:
         * the smaller first), up to four, stopping at a negative one (no
         * final size): counted on the group's sizes sorted, n log n. */
        char fin[128] = "";
        for (size_t a = i; a < j; a++) sorted[a - i] = r[a].tot.final_bs;
        qsort(sorted, j - i, sizeof *sorted, cmp_int);
        int done[4];
        for (int rounds = 0; rounds < 4; rounds++) {
            int best = -1;
            size_t cnt = 0;
            for (size_t a = 0, b; a < j - i; a = b) {
                for (b = a + 1; b < j - i && sorted[b] == sorted[a];) b++;
                int seen = 0;
                for (int q = 0; q < rounds; q++) seen |= done[q] == sorted[a];
                if (!seen && b - a > cnt) { cnt = b - a; best = sorted[a]; }
            }
            if (best < 0) break;
            done[rounds] = best;
            char one[40];
            snprintf(one, sizeof one, "%s%d (%zu)", rounds ? ", " : "", best, cnt);
            strncat(fin, one, sizeof fin - strlen(fin) - 1);
        }
        char beta[32], b[7][32];
        fmt_beta(beta, sizeof beta, r[i].cell.beta);
        fprintf(f, "%-8s %-14s %5s %5s %5zu %6ld %12s", r[i].cell.gpu, r[i].cell.workload,
                ws_tab(b[0], 32, "%g", ws_req(r[i].cell.eta)), beta, j - i, r[i].recurrences,
                ws_tab(b[1], 32, "%.4f", ws_req(e / m / 1e6)));
        if (co2) fprintf(f, " %10s", ws_tab(b[2], 32, "%.3f", ws_req(g / m / 1e3)));
        if (usd) fprintf(f, " %10s", ws_tab(b[3], 32, "%.2f", ws_req(d / m)));
        fprintf(f, " %12s %14s %8s  %s\n", ws_tab(b[4], 32, "%.3f", ws_req(t / m / 3600)),
                ws_tab(b[5], 32, "%.6g", ws_req(c / m)), ws_tab(b[6], 32, "%.1f", runs / m), fin);
        i = j;
    }
    free(sorted);
#undef CELL_BSO
#undef CELL_PLO
#undef CELL_PROV
#undef CELL_LABEL
    return 0;
}
