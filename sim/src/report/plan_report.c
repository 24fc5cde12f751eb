/* wattsim plan: its table, JSON and figure; see wattsim/report.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/json_writer.h"
#include "wattsim/outfile.h"
#include "wattsim/plan.h"
#include "wattsim/plot.h"
#include "wattsim/report.h"

/* A break-even recurrence, or never (INFINITY: beyond the horizon). */
static void json_be(ws_jw *w, double r)
{
    if (isinf(r)) ws_jw_string(w, "never");
    else ws_jw_number(w, ws_req(r));
}

static const char *be_text(char *buf, double r)
{
    if (isinf(r)) return "never";
    return ws_tab(buf, 32, "%g", ws_req(r));
}

static void json_knob(ws_jw *w, const char *name, const ws_plan_knob *k, int bs_pl,
                      const ws_whatif *wi)
{
    ws_jw_key(w, name);
    ws_jw_begin_object(w);
    if (bs_pl) {
        ws_jw_kint(w, "bs", k->bs);
        ws_jw_kint(w, "pl", k->pl);
    }
    ws_jw_knumber(w, "tta_s", ws_req(k->tta_s));
    ws_jw_knumber(w, "eta_j", ws_req(k->eta_j));
    ws_jw_knumber(w, "cost", ws_req(k->cost));
    if (wi && wi->has_carbon) ws_jw_knumber(w, "co2_g", ws_req(k->co2_g));
    if (wi && wi->has_price) ws_jw_knumber(w, "usd", ws_req(k->usd));
    ws_jw_end_object(w);
}

static ws_plan_knob diff(const ws_plan_knob *a, const ws_plan_knob *b, double times)
{
    return (ws_plan_knob){0, 0, (a->tta_s - b->tta_s) * times, (a->eta_j - b->eta_j) * times,
                          (a->cost - b->cost) * times, (a->co2_g - b->co2_g) * times,
                          (a->usd - b->usd) * times};
}

static void table_row(FILE *f, const char *name, const ws_plan_knob *k, int bs_pl,
                      const ws_whatif *wi)
{
    if (bs_pl) fprintf(f, "  %-28s %6d %5d", name, k->bs, k->pl);
    else fprintf(f, "  %-28s %6s %5s", name, "", "");
    char b[5][32];
    fprintf(f, " %10s %11s", ws_tab(b[0], 32, "%.3f", ws_req(k->tta_s / 3600)),
            ws_tab(b[1], 32, "%.3f", ws_req(k->eta_j / 1e6)));
    if (wi && wi->has_carbon) fprintf(f, " %10s", ws_tab(b[2], 32, "%.3f", ws_req(k->co2_g / 1e3)));
    if (wi && wi->has_price) fprintf(f, " %9s", ws_tab(b[3], 32, "%.4g", ws_req(k->usd)));
    fprintf(f, " %14s\n", ws_tab(b[4], 32, "%.6g", ws_req(k->cost)));
}

static double pct(double saving, double base)
{
    return base != 0 ? 100 * saving / base : 0;
}

/* A list's item after `lead` (a comma, or nothing): on this line after a
 * space, or on the next, indented, when it would pass column 78. Returns
 * the column after it. */
static int put_wrapped(FILE *f, int col, const char *lead, const char *item)
{
    int n = (int)strlen(item);
    fputs(lead, f);
    col += (int)strlen(lead);
    if (col + 1 + n > 78) {
        fprintf(f, "\n  %s", item);
        return 2 + n;
    }
    fprintf(f, " %s", item);
    return col + 1 + n;
}

void ws_report_plan(FILE *f, ws_format fmt, const ws_plan *p, const ws_whatif *wi)
{
    const ws_job *j = p->job;
    const double n = (double)p->recurrences;
    ws_plan_knob per = diff(&p->dflt, &p->recommended, 1.0);
    ws_plan_knob all = diff(&p->dflt, &p->recommended, n);
    const int co2 = wi && wi->has_carbon, usd = wi && wi->has_price;
    if (fmt == WS_FMT_JSON) {
        ws_jw w;
        ws_jw_init(&w, f);
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "gpu", j->gpu);
        ws_jw_kstring(&w, "workload", j->workload);
        ws_jw_knumber(&w, "eta", ws_req(j->eta));
        ws_jw_key(&w, "beta");
        if (j->beta == INFINITY) ws_jw_null(&w);            /* null: early stopping off */
        else ws_jw_number(&w, ws_req(j->beta));
        ws_jw_kint(&w, "b0", j->b0);
        ws_jw_kint(&w, "recurrences", p->recurrences);
        ws_jw_kint(&w, "seeds", p->seeds);
        ws_jw_key(&w, "batch_sizes");
        ws_jw_begin_array(&w);
        for (int i = 0; i < p->n_bs; i++) {
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "bs", p->bs[i].bs);
            ws_jw_kint(&w, "runs", p->bs[i].runs);
            ws_jw_kint(&w, "reached", p->bs[i].reached);
            ws_jw_kbool(&w, "eligible", p->bs[i].runs && p->bs[i].reached == p->bs[i].runs);
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_knumber(&w, "tie_tolerance", ws_req(p->tie_tolerance));
        /* null: no energy_error recorded (NaN) */
        ws_jw_knumber(&w, "telemetry_error", p->tie_error);
        ws_jw_key(&w, "near_ties");
        ws_jw_begin_array(&w);
        for (int q = 0; q < p->n_ties; q++) {
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "bs", p->ties[q].bs);
            ws_jw_kint(&w, "pl", p->ties[q].pl);
            ws_jw_knumber(&w, "cost", ws_req(p->ties[q].cost));
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_kint(&w, "near_ties_all", p->n_ties_all);
        ws_jw_knumber(&w, "max_power", ws_req(j->max_power));
        ws_jw_kint(&w, "gpus_per_job", ws_job_gpus(j));
        ws_jw_whatif(&w, wi);
        json_knob(&w, "recommended", &p->recommended, 1, wi);
        json_knob(&w, "default", &p->dflt, 1, wi);
        ws_jw_kint(&w, "default_runs_reaching", p->dflt_reached);
        ws_jw_kint(&w, "default_runs", p->dflt_runs);
        json_knob(&w, "saving_per_run", &per, 0, wi);
        json_knob(&w, "saving_over_recurrences", &all, 0, wi);
        if (p->has_defer) {
            /* the default pair with deferral against without, over N */
            ws_jw_key(&w, "deferral_saving");
            ws_jw_begin_object(&w);
            ws_jw_knumber(&w, p->defer_carbon ? "co2_g" : "usd", ws_req(p->defer_saving));
            ws_jw_knumber(&w, "percent", ws_req(pct(p->defer_saving, p->defer_base)));
            ws_jw_knumber(&w, "cost", ws_req(p->defer_cost_saving));
            ws_jw_knumber(&w, "cost_percent",
                          ws_req(pct(p->defer_cost_saving, p->defer_cost_base)));
            ws_jw_end_object(&w);
        }
        ws_jw_key(&w, "policies");
        ws_jw_begin_array_lines(&w);
        for (size_t q = 0; q < p->n_policies; q++) {
            const ws_plan_policy *pp = &p->policies[q];
            ws_jw_begin_object(&w);
            ws_jw_kstring(&w, "policy", pp->label);
            ws_jw_identity(&w, &pp->identity.prov);
            /* over all seeds; "never": beyond the horizon */
            ws_jw_key(&w, "break_even");
            ws_jw_begin_object(&w);
            ws_jw_key(&w, "median"); json_be(&w, pp->break_even_median);
            ws_jw_key(&w, "lo"); json_be(&w, pp->break_even_lo);
            ws_jw_key(&w, "hi"); json_be(&w, pp->break_even_hi);
            ws_jw_end_object(&w);
            ws_jw_kint(&w, "seeds", pp->n_seeds);
            ws_jw_kint(&w, "seeds_never", pp->n_never);
            ws_jw_kint(&w, "seeds_failed", pp->n_failed);
            if (pp->n_failed) {
                ws_jw_kint(&w, "first_failed_seed", pp->first_failed_seed);
                ws_jw_kstring(&w, "failure", pp->failure);
            }
            ws_jw_knumber(&w, "energy_saving_j", ws_req(pp->energy_saving_j));
            if (co2) ws_jw_knumber(&w, "co2_saving_g", ws_req(pp->co2_saving_g));
            if (usd) ws_jw_knumber(&w, "usd_saving", ws_req(pp->usd_saving));
            ws_jw_key(&w, "cumulative_cost_saving");
            ws_jw_begin_array(&w);
            for (long r = 0; r < p->recurrences; r++)
                ws_jw_number(&w, ws_req(pp->saving_mean[r]));
            ws_jw_end_array(&w);
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_end_object(&w);
        ws_jw_newline(&w);
        return;
    }
    char beta[32], b[6][32];
    if (j->beta == INFINITY) snprintf(beta, sizeof beta, "inf");
    else ws_tab(beta, sizeof beta, "%g", ws_req(j->beta));
    fprintf(f, "plan: %s on %s, eta %s, beta %s, %ld recurrences, %d seeds\n", j->workload,
            j->gpu, ws_tab(b[0], 32, "%g", ws_req(j->eta)), beta, p->recurrences, p->seeds);
    /* Costs weigh time by MaxPower: say which (for a job of several GPUs
     * it is not one GPU's largest limit). */
    ws_maxpower_line(f, j->max_power, ws_job_gpus(j), p->max_power_summed);
    ws_table_whatif(f, wi);
    fprintf(f, "\n  %-28s %6s %5s %10s %11s", "expected per run", "bs", "pl", "TTA_h", "ETA_MJ");
    if (co2) fprintf(f, " %10s", "CO2_kg");
    if (usd) fprintf(f, " %9s", "price_$");
    fprintf(f, " %14s\n", "cost");
    table_row(f, "recommended (least cost)", &p->recommended, 1, wi);
    table_row(f, "default (b0, highest limit)", &p->dflt, 1, wi);
    if (p->dflt_reached < p->dflt_runs)
        fprintf(f, "  (the default knob reaches the target in %d of its %d recorded runs;"
                " its figures are over those)\n", p->dflt_reached, p->dflt_runs);
    table_row(f, "saving per run", &per, 0, wi);
    char over[64];
    snprintf(over, sizeof over, "saving over %ld recurrences", p->recurrences);
    table_row(f, over, &all, 0, wi);
    fprintf(f, "\nSet bs %d at %d W. Per run against the default: energy %s %%, time"
            " %s %%, cost %s %%", p->recommended.bs, p->recommended.pl,
            ws_tab(b[1], 32, "%+.1f", ws_req(0.0 - pct(per.eta_j, p->dflt.eta_j))),
            ws_tab(b[2], 32, "%+.1f", ws_req(0.0 - pct(per.tta_s, p->dflt.tta_s))),
            ws_tab(b[3], 32, "%+.1f", ws_req(0.0 - pct(per.cost, p->dflt.cost))));
    if (co2) fprintf(f, ", CO2 %s %%", ws_tab(b[4], 32, "%+.1f",
                                             ws_req(0.0 - pct(per.co2_g, p->dflt.co2_g))));
    if (usd) fprintf(f, ", money %s %%", ws_tab(b[5], 32, "%+.1f",
                                               ws_req(0.0 - pct(per.usd, p->dflt.usd))));
    fputs(".\n", f);
    if (p->n_eligible < p->n_bs) {
        /* only when it matters: every batch size eligible is the rule */
        int col = fprintf(f, "Eligible batch sizes (every recorded run reaches the target):");
        char item[96];
        for (int i = 0, c = 0; i < p->n_bs; i++)
            if (p->bs[i].runs && p->bs[i].reached == p->bs[i].runs) {
                snprintf(item, sizeof item, "%d", p->bs[i].bs);
                col = put_wrapped(f, col, c++ ? "," : "", item);
            }
        col = put_wrapped(f, col, ";", "not:");
        for (int i = 0, c = 0; i < p->n_bs; i++)
            if (!(p->bs[i].runs && p->bs[i].reached == p->bs[i].runs)) {
                snprintf(item, sizeof item, "%d (%d of %d runs reach)", p->bs[i].bs,
                         p->bs[i].reached, p->bs[i].runs);
                col = put_wrapped(f, col, c++ ? "," : "", item);
            }
        fputs(".\n", f);
    }
    if (p->has_defer) {
        /* waiting's own saving, apart from learning's (which is on the
         * deferred schedule, below) */
        char amount[64];
        if (p->defer_carbon)
            snprintf(amount, sizeof amount, "CO2 %s kg",
                     ws_tab(b[0], 32, "%+.4g", ws_req(0.0 - p->defer_saving / 1e3)));
        else                  /* the sign before the currency: -$0.01 */
            snprintf(amount, sizeof amount, "money %s$%s", p->defer_saving > 0 ? "-" : "+",
                     ws_tab(b[0], 32, "%.4g", ws_req(fabs(p->defer_saving))));
        fprintf(f, "Deferral alone (up to %s h), over %ld recurrences: %s (%s %%), cost %s"
                " (%s %%)\n  (the default pair with and without it, on the same seeds and"
                " schedule).\n", ws_tab(b[1], 32, "%g", ws_req(wi->defer / 3600)),
                p->recurrences, amount,
                ws_tab(b[2], 32, "%+.1f", ws_req(0.0 - pct(p->defer_saving, p->defer_base))),
                ws_tab(b[3], 32, "%+.6g", ws_req(0.0 - p->defer_cost_saving)),
                ws_tab(b[4], 32, "%+.1f", ws_req(0.0 - pct(p->defer_cost_saving,
                                                          p->defer_cost_base))));
    }
    if (p->n_ties) {
        int col = fprintf(f, "Within %s %% of its cost (as good, given the measurements):",
                          ws_tab(b[2], 32, "%.3g", ws_req(100 * p->tie_tolerance)));
        char item[96];
        for (int q = 0; q < p->n_ties; q++) {
            snprintf(item, sizeof item, "bs %d at %d W (%s %%)", p->ties[q].bs, p->ties[q].pl,
                     ws_tab(b[0], 32, "%+.2f", ws_req(pct(p->ties[q].cost - p->recommended.cost,
                                                          p->recommended.cost))));
            col = put_wrapped(f, col, q ? "," : "", item);
        }
        if (p->n_ties_all > p->n_ties) {
            snprintf(item, sizeof item, "and %d more", p->n_ties_all - p->n_ties);
            col = put_wrapped(f, col, "", item);
        }
        fputs(".\n", f);
        /* which tolerance, and why: each cost may be off by the worst
         * eligible knob's sampling error, and by about 1 % anyway (1 %
         * alone, without a recorded energy_error, needs no note) */
        if (!isnan(p->tie_error))
            fprintf(f, "  (tolerance: the larger of 1 %% and the eligible knobs' largest"
                    " energy_error,\n  %s %% at bs %d at %d W)\n",
                    ws_tab(b[1], 32, "%.2f", ws_req(100 * p->tie_error)), p->tie_error_bs,
                    p->tie_error_pl);
    }
    if (!p->n_policies) return;
    fprintf(f, "\nLearning it (cumulative cost, exploration included, vs default on the same"
            " seeds):\n  %-18s %-26s %7s %12s", "policy", "break-even recurrence", "never",
            "ETA_save_MJ");
    if (co2) fprintf(f, " %11s", "CO2_save_kg");
    if (usd) fprintf(f, " %10s", "save_$");
    fputc('\n', f);
    for (size_t q = 0; q < p->n_policies; q++) {
        const ws_plan_policy *pp = &p->policies[q];
        char be[64];
        if (isinf(pp->break_even_lo))
            snprintf(be, sizeof be, "never within %ld", p->recurrences);
        else
            snprintf(be, sizeof be, "%s [%s, %s]", be_text(b[0], pp->break_even_median),
                     be_text(b[1], pp->break_even_lo), be_text(b[2], pp->break_even_hi));
        char never[32];
        snprintf(never, sizeof never, "%d/%d", pp->n_never, pp->n_seeds);
        fprintf(f, "  %-18s %-26s %7s %12s", pp->label, be, never,
                ws_tab(b[3], 32, "%.3f", ws_req(pp->energy_saving_j / 1e6)));
        if (co2) fprintf(f, " %11s", ws_tab(b[4], 32, "%.3f", ws_req(pp->co2_saving_g / 1e3)));
        if (usd) fprintf(f, " %10s", ws_tab(b[5], 32, "%.4g", ws_req(pp->usd_saving)));
        fputc('\n', f);
    }
    /* which code ran, named as run and simulate name it; several pairs:
     * each under its label */
    for (size_t q = 0; q < p->n_policies; q++) {
        const ws_study_pair *id = &p->policies[q].identity;
        if (p->n_policies > 1) fprintf(f, "  %s:\n", p->policies[q].label);
        const char *ind = p->n_policies > 1 ? "    " : "  ";
        fputs(ind, f);
        ws_table_policy(f, "bso", id->bso, id->prov.bso_params, id->prov.bso_file,
                        id->prov.bso_sha256);
        fputs(ind, f);
        ws_table_policy(f, "plo", id->plo, id->prov.plo_params, id->prov.plo_file,
                        id->prov.plo_sha256);
    }
    int nevers = 0;
    for (size_t q = 0; q < p->n_policies; q++) nevers += p->policies[q].n_never;
    if (!nevers)        /* every seed breaks even: the two readings agree */
        fputs("\nbreak-even: median [95 % interval] over the seeds that break even; never: seeds"
              " whose\ncumulative cost is not below the default's by the last recurrence.\n", f);
    else
        fputs("\nbreak-even: median [95 % interval] over all seeds; a seed whose cumulative"
              " cost is not\nbelow the default's by the last recurrence never breaks even"
              " (counted beyond the horizon).\n", f);
    for (size_t q = 0; q < p->n_policies; q++)
        if (p->policies[q].n_failed)
            fprintf(f, "%s: failed on %d of %d seeds, its figures are over the other %d;"
                    " the first: %s\n", p->policies[q].label, p->policies[q].n_failed,
                    p->policies[q].n_failed + p->policies[q].n_seeds,
                    p->policies[q].n_seeds, p->policies[q].failure);
    for (size_t q = 0; q < p->n_policies; q++)
        if (p->policies[q].n_never)
            fprintf(f, "%s: never in %d of %d seeds\n", p->policies[q].label,
                    p->policies[q].n_never, p->policies[q].n_seeds);
}

int ws_plot_plan(const char *image, const ws_plan *p, const ws_catalogue *cat, ws_error *err)
{
    char *csv = ws_plot_sibling(image, ".csv"), *gp = ws_plot_sibling(image, ".gp");
    ws_outfile od = {0}, og = {0};
    int rc = -1;
    if (!csv || !gp) { ws_fail(err, "out of memory"); goto out; }
    const long n = p->recurrences;
    const double per = p->dflt.cost - p->recommended.cost;
    double top = fabs(per * (double)n);
    for (size_t q = 0; q < p->n_policies; q++)
        for (long r = 0; r < n; r++)
            top = fmax(top, fmax(fabs(p->policies[q].saving_lo[r]),
                                 fabs(p->policies[q].saving_hi[r])));
    ws_unit u = ws_unit_energy(top);
    if (ws_outfile_open(&od, csv, err) || ws_outfile_open(&og, gp, err)) goto out;
    FILE *f = od.f;
    fprintf(f, "# block 0: the recommended knob from the first recurrence;"
            " recurrence,cum_saving_%s\n", u.name);
    fprintf(f, "0,0\n");
    for (long r = 1; r <= n; r++) {
        fprintf(f, "%ld,", r);
        ws_csv_num(f, ws_req(per * (double)r / u.div));
        fputc('\n', f);
    }
    for (size_t q = 0; q < p->n_policies; q++) {
        const ws_plan_policy *pp = &p->policies[q];
        fprintf(f, "\n\n# block %zu: %s; recurrence,mean,lo,hi (%s)\n0,0,0,0\n", q + 1,
                pp->label, u.name);
        for (long r = 0; r < n; r++) {
            fprintf(f, "%ld,", r + 1);
            ws_csv_num(f, ws_req(pp->saving_mean[r] / u.div));
            fputc(',', f);
            ws_csv_num(f, pp->saving_lo[r] / u.div);     /* undefined with one seed */
            fputc(',', f);
            ws_csv_num(f, pp->saving_hi[r] / u.div);
            fputc('\n', f);
        }
    }
    f = og.f;
    char title[256];
    /* the display names every other figure's title uses ("ResNet-50 /
     * ImageNet on V100"), escaped with the rest of the title by
     * ws_plot_preamble */
    snprintf(title, sizeof title, "%s on %s (η = %g): learning vs the default knob",
             ws_catalogue_workload_display(cat, p->job->workload),
             ws_catalogue_gpu_display(cat, p->job->gpu), p->job->eta);
    const char *slash = strrchr(image, '/');
    ws_plot_preamble(f, slash ? slash + 1 : image, WS_PLOT_COL2, 3.0 * WS_PLOT_GROW, title);
    fprintf(f, "set key inside left top vertical Left reverse font ',%g' samplen 2 spacing 1\n"
               "set xlabel 'Recurrence'\n", WS_PLOT_FONT_SMALL);
    /* a cost is η·ETA + (1 − η)·MaxPower·TTA: energy-equivalent joules */
    char yl[96];
    snprintf(yl, sizeof yl, "Cumulative saving vs default / (%s-equivalent)", u.name);
    fputs("set ylabel ", f);
    ws_plot_str_lines(f, yl);
    fprintf(f, " font ',%g'\n", WS_PLOT_FONT_SMALL);
    fprintf(f, "set xrange [0:%ld]\nset xzeroaxis lt -1 lw 0.8\n", n);
    /* headroom above the highest curve for the key: a line of it, at 7 pt,
     * is 0.12 of the span (scaled with the font) */
    double hi = 0, lo = 0;
    for (long r = 0; r <= n; r++) hi = fmax(hi, per * (double)r / u.div);
    for (size_t q = 0; q < p->n_policies; q++)
        for (long r = 0; r < n; r++) {
            hi = fmax(hi, p->policies[q].saving_hi[r] / u.div);
            lo = fmin(lo, p->policies[q].saving_lo[r] / u.div);
        }
    double span = hi - lo > 0 ? hi - lo : 1;
    fprintf(f, "set yrange [%.6g:%.6g]\n", lo - 0.05 * span,
            hi + (0.12 * WS_PLOT_EM * (double)(p->n_policies + 1) + 0.05) * span);
    fprintf(f, "band = '95 %% CI over %d seeds'\n", p->seeds);
    fputs("set style fill transparent solid 0.3 noborder\n"
          "plot NaN with filledcurves lc rgb '#999999' title band, ", f);
    /* each policy in its look, as in every other figure (ws_plot_policy_looks) */
    const char *labels[64];
    ws_plot_look looks[64];
    size_t n_lab = p->n_policies < 64 ? p->n_policies : 64;
    for (size_t q = 0; q < n_lab; q++) labels[q] = p->policies[q].label;
    ws_plot_policy_looks(labels, n_lab, looks);
    for (size_t q = 0; q < p->n_policies; q++) {
        const ws_plan_policy *pp = &p->policies[q];
        const char *colour = q < n_lab ? looks[q].colour : ws_plot_colour((int)q);
        char t[200];
        if (pp->n_never == pp->n_seeds)
            snprintf(t, sizeof t, "%s (no seed breaks even)", pp->label);
        else if (isinf(pp->break_even_median))
            snprintf(t, sizeof t, "%s (%d/%d seeds break even, median never)", pp->label,
                     pp->n_seeds - pp->n_never, pp->n_seeds);
        else
            snprintf(t, sizeof t, "%s (%d/%d seeds break even, median recurrence %g)",
                     pp->label, pp->n_seeds - pp->n_never, pp->n_seeds,
                     pp->break_even_median);
        fprintf(f, "data index %zu using 1:3:4 with filledcurves lc rgb '%s' notitle, \\\n"
                "     data index %zu using 1:2 with lines lw 1.5 lc rgb '%s' title ", q + 1,
                colour, q + 1, colour);
        ws_plot_str(f, t);
        fputs(", \\\n     ", f);
    }
    char t[200];
    snprintf(t, sizeof t, "bs %d at %d W from the start", p->recommended.bs,
             p->recommended.pl);
    fputs("data index 0 using 1:2 with lines lw 1.2 dt 2 lc rgb '#000000' title ", f);
    ws_plot_str(f, t);
    fputc('\n', f);
    if (ws_outfile_commit(&od, err) || ws_outfile_commit(&og, err)) goto out;
    const char *imgs[1] = {image};
    rc = ws_plot_render(gp, imgs, 1, err);
out:
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    free(csv);
    free(gp);
    return rc;
}
