/* The groups replay report; see cli_groups_report.h. */
#include "cli_groups_report.h"
#include "cli_common.h"
#include "wattsim/json_writer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ws_groups_history_header(FILE *f, const ws_whatif *wi)
{
    fputs("group,policy,recurrence,attempt,start_time,end_time,runtime_ratio,"
          "concurrent,bs,pl,energy_j,time_s,cost,epochs,reached,profiled", f);
    if (wi->has_carbon) fputs(",co2_g", f);
    if (wi->has_price) fputs(",usd", f);
    fputc('\n', f);
}

int ws_groups_history_row(void *p, const ws_group_record *r)
{
    history_ctx *h = p;
    if (!h->f) return 0;
    /* Every number of a run is defined (ws_req: never inf or nan). */
    ws_csv_str(h->f, h->group);
    fprintf(h->f, ",%s,%ld,%d,", h->policy, r->run.recurrence, r->run.attempt);
    const double a[3] = {r->start, r->end, r->ratio}, b[3] = {r->run.energy_j,
                                                              r->run.time_s, r->run.cost};
    for (int i = 0; i < 3; i++) { ws_csv_num(h->f, ws_req(a[i])); fputc(',', h->f); }
    fprintf(h->f, "%d,%d,%d", r->concurrent, r->run.bs, r->run.pl);
    for (int i = 0; i < 3; i++) { fputc(',', h->f); ws_csv_num(h->f, ws_req(b[i])); }
    fprintf(h->f, ",%d,%d,%d", r->run.epochs, r->run.reached, r->run.profiled);
    if (h->wi->has_carbon) { fputc(',', h->f); ws_csv_num(h->f, ws_req(r->run.co2_g)); }
    if (h->wi->has_price) { fputc(',', h->f); ws_csv_num(h->f, ws_req(r->run.usd)); }
    fputc('\n', h->f);
    return 0;
}

static double saving(double pol, double def)
{
    return def > 0 ? 100.0 * (1.0 - pol / def) : NAN;
}

void ws_groups_sum_into(ws_group_totals *a, const ws_group_totals *b)
{
    a->energy_j += b->energy_j;
    a->time_s += b->time_s;
    a->cost += b->cost;
    a->submissions += b->submissions;
    a->runs += b->runs;
    a->retries += b->retries;
    a->skipped += b->skipped;
    a->concurrent += b->concurrent;
    a->co2_g += b->co2_g;
    a->usd += b->usd;
    a->wrapped += b->wrapped;
}

/* A group's numbers in column order: nine always, then three with a
 * carbon series and three with a price series (groups.csv puts final_bs
 * and final_pl between the two sets). */
enum { N_BASE = 9, N_NUM = 15 };
static const char *const NUM_NAME[N_NUM] = {
    "energy_j", "time_s", "cost", "default_energy_j", "default_time_s", "default_cost",
    "energy_saving_pct", "time_saving_pct", "cost_saving_pct",
    "co2_g", "default_co2_g", "co2_saving_pct", "usd", "default_usd", "usd_saving_pct"};

static void numbers(const group_result *r, double v[N_NUM])
{
    const double x[N_NUM] = {
        r->pol.energy_j, r->pol.time_s, r->pol.cost, r->def.energy_j, r->def.time_s,
        r->def.cost, saving(r->pol.energy_j, r->def.energy_j),
        saving(r->pol.time_s, r->def.time_s), saving(r->pol.cost, r->def.cost),
        r->pol.co2_g, r->def.co2_g, saving(r->pol.co2_g, r->def.co2_g),
        r->pol.usd, r->def.usd, saving(r->pol.usd, r->def.usd)};
    memcpy(v, x, sizeof x);
}

static int shown(const ws_whatif *wi, size_t i)
{
    return i < N_BASE || (i < N_BASE + 3 ? wi->has_carbon : wi->has_price);
}

static void csv_line(FILE *f, const char *group, const char *dataset, long rows,
                     const group_result *r, const ws_whatif *wi)
{
    ws_csv_str(f, group);
    fputc(',', f);
    ws_csv_str(f, dataset);
    fprintf(f, ",%ld,%ld,%ld,%ld,%ld,%ld", rows, r->pol.submissions, r->pol.runs,
            r->pol.retries, r->pol.concurrent, r->pol.skipped);
    double v[N_NUM];
    numbers(r, v);
    for (size_t i = 0; i < N_NUM; i++) {
        if (i == N_BASE) fprintf(f, ",%d,%d", r->pol.final_bs, r->pol.final_pl);
        if (!shown(wi, i)) continue;
        fputc(',', f);
        ws_csv_num(f, v[i]);
    }
    fputc('\n', f);
}

static void json_obj(ws_jw *w, const char *group, const char *dataset, long rows,
                     const group_result *r, const ws_whatif *wi)
{
    ws_jw_begin_object(w);
    if (group) ws_jw_kstring(w, "group", group);
    if (dataset) ws_jw_kstring(w, "dataset", dataset);
    if (group) {      /* the cluster's groups may be of different jobs */
        ws_jw_knumber(w, "max_power", ws_req(r->max_power));
        ws_jw_kint(w, "gpus_per_job", r->gpus_per_job);
    }
    ws_jw_kint(w, "rows", rows);
    ws_jw_kint(w, "submissions", r->pol.submissions);
    ws_jw_kint(w, "runs", r->pol.runs);
    ws_jw_kint(w, "retries", r->pol.retries);
    ws_jw_kint(w, "concurrent", r->pol.concurrent);
    ws_jw_kint(w, "skipped", r->pol.skipped);
    double v[N_NUM];
    numbers(r, v);
    for (size_t i = 0; i < N_NUM; i++)
        if (shown(wi, i)) ws_jw_knumber(w, NUM_NAME[i], v[i]);
    if (group) {
        ws_jw_kint(w, "final_bs", r->pol.final_bs);
        ws_jw_kint(w, "final_pl", r->pol.final_pl);
    }
    ws_jw_end_object(w);
}

/* A saving in a %7 column; "-" when there is none (a zero default). */
static void table_pct(FILE *f, double pct)
{
    char b[32];
    fprintf(f, "%7s", ws_tab(b, sizeof b, "%.1f", pct));
}

void ws_groups_report(FILE *f, ws_format fmt, const replay_info *in)
{
    const ws_group_trace *gt = in->gt;
    if (fmt == WS_FMT_CSV) {
        fputs("group,dataset,rows,submissions,runs,retries,concurrent,skipped", f);
        for (size_t i = 0; i < N_NUM; i++) {
            if (i == N_BASE) fputs(",final_bs,final_pl", f);
            if (shown(in->wi, i)) fprintf(f, ",%s", NUM_NAME[i]);
        }
        fputc('\n', f);
        for (size_t i = 0; i < gt->n; i++)
            csv_line(f, gt->groups[i].name, gt->groups[i].spec->name,
                     (long)gt->groups[i].n, &in->res[i], in->wi);
        return;
    }
    if (fmt == WS_FMT_JSON) {
        ws_jw w;
        ws_jw_init(&w, f);
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "trace", gt->path);
        ws_jw_kstring(&w, "gpu", in->gpu);
        ws_jw_kstring(&w, "bso", in->bso);
        ws_jw_kstring(&w, "plo", in->plo);
        ws_jw_knumber(&w, "eta", ws_req(in->eta));
        ws_jw_key(&w, "beta");                                  /* null = off */
        if (in->beta == INFINITY) ws_jw_null(&w);
        else ws_jw_number(&w, ws_req(in->beta));
        ws_jw_whatif(&w, in->wi);
        ws_jw_key(&w, "cluster");
        json_obj(&w, NULL, NULL, (long)gt->n_rows, in->all, in->wi);
        ws_jw_key(&w, "groups");
        ws_jw_begin_array_lines(&w);
        for (size_t i = 0; i < gt->n; i++)
            json_obj(&w, gt->groups[i].name, gt->groups[i].spec->name,
                     (long)gt->groups[i].n, &in->res[i], in->wi);
        ws_jw_end_array(&w);
        ws_jw_end_object(&w);
        ws_jw_newline(&w);
        return;
    }
    char beta[32], b[8][32];
    if (in->beta == INFINITY) snprintf(beta, sizeof beta, "inf");
    else ws_tab(beta, sizeof beta, "%g", ws_req(in->beta));
    /* Paths and policy specs as typed: shown escaped, as messages are. */
    static char sp[WS_CLI_SHOW], sb[WS_CLI_SHOW], so[WS_CLI_SHOW];
    fprintf(f, "%s on %s, eta %s, beta %s: %s/%s versus default/default\n",
            ws_name_show(gt->path, sp, sizeof sp), in->gpu,
            ws_tab(b[0], 32, "%g", ws_req(in->eta)), beta, ws_name_show(in->bso, sb, sizeof sb),
            ws_name_show(in->plo, so, sizeof so));
    if (ws_whatif_active(in->wi)) {
        char desc[1024];
        ws_whatif_describe(in->wi, desc, sizeof desc);
        fprintf(f, "what-if: %s (trace time %s s = the start)\n",
                ws_name_show(desc, sp, sizeof sp), ws_tab(b[0], 32, "%g", ws_req(in->t0)));
    }
    const int co2 = in->wi->has_carbon, usd = in->wi->has_price;
    fprintf(f, "\n%-16s %-13s %5s %5s %5s %10s %9s %10s %9s %7s %7s %7s", "group",
            "dataset", "rows", "retry", "conc", "ETA MJ", "TTA h", "def MJ", "def h",
            "ETA %", "TTA %", "cost %");
    if (co2) fprintf(f, " %9s %7s", "CO2 kg", "CO2 %");
    if (usd) fprintf(f, " %9s %7s", "$", "$ %");
    fputc('\n', f);
    for (size_t i = 0; i <= gt->n; i++) {
        const group_result *r = i < gt->n ? &in->res[i] : in->all;
        if (i == gt->n) {
            /* 114 columns, 18 more per amount */
            for (int d = 0; d < 114 + 18 * (co2 + usd); d++) fputc('-', f);
            fputc('\n', f);
        }
        fprintf(f, "%-16.16s %-13.13s %5ld %5ld %5ld %10s %9s %10s %9s",
                i < gt->n ? gt->groups[i].name : "cluster",
                i < gt->n ? gt->groups[i].spec->name : "",
                i < gt->n ? (long)gt->groups[i].n : (long)gt->n_rows,
                r->pol.retries, r->pol.concurrent,
                ws_tab(b[0], 32, "%.3f", ws_req(r->pol.energy_j / 1e6)),
                ws_tab(b[1], 32, "%.2f", ws_req(r->pol.time_s / 3600.0)),
                ws_tab(b[2], 32, "%.3f", ws_req(r->def.energy_j / 1e6)),
                ws_tab(b[3], 32, "%.2f", ws_req(r->def.time_s / 3600.0)));
        /* savings against a zero default (a zero-rate objective) are "-" */
        fputc(' ', f);
        table_pct(f, saving(r->pol.energy_j, r->def.energy_j));
        fputc(' ', f);
        table_pct(f, saving(r->pol.time_s, r->def.time_s));
        fputc(' ', f);
        table_pct(f, saving(r->pol.cost, r->def.cost));
        if (co2) {
            fprintf(f, " %9s ", ws_tab(b[4], 32, "%.3f", ws_req(r->pol.co2_g / 1e3)));
            table_pct(f, saving(r->pol.co2_g, r->def.co2_g));
        }
        if (usd) {
            fprintf(f, " %9s ", ws_tab(b[5], 32, "%.2f", ws_req(r->pol.usd)));
            table_pct(f, saving(r->pol.usd, r->def.usd));
        }
        fputc('\n', f);
    }
    fprintf(f, "\n%% = saving versus default (positive: %s/%s uses less); energy and"
            " time scaled by runtime_ratio\n", in->bso, in->plo);
}

