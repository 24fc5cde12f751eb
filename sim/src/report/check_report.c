/* `wattsim trace check` output: a table for people, or one JSON object
 * (see wattsim/trace_check.h). */
#include "wattsim/trace_check.h"
#include "wattsim/json_writer.h"
#include "wattsim/report.h"

#include <math.h>
#include <string.h>

static void pl_list(FILE *f, const ws_check_bs *b)
{
    if (!b->n_pl) { fputs("-", f); return; }
    for (int i = 0; i < b->n_pl; i++) fprintf(f, i ? ",%d" : "%d", b->pl[i]);
}

static void table(FILE *f, const ws_trace_check *c)
{
    fprintf(f, "%s: %zu train rows (%s); power traces:", c->dir, c->n_train, c->train_path);
    for (int i = 0; i < c->n_gpus; i++) fprintf(f, " %s", c->gpus[i]);
    fputc('\n', f);
    for (size_t k = 0; k < c->n; k++) {
        const ws_check_group *g = &c->g[k];
        fprintf(f, "\n%s/%s/%s", g->dataset, g->network, g->optimizer);
        char nb[3][32];
        if (!isnan(g->target))
            fprintf(f, ", target %s", ws_tab(nb[0], 32, "%g", ws_req(g->target)));
        fprintf(f, " on %s", g->gpu);
        if (g->workload)
            fprintf(f, " (catalogue workload %s: max_epochs %d, b0 %d)\n", g->workload,
                    g->max_epochs, g->b0);
        else if (!isnan(g->target))
            fprintf(f, " (not in the catalogue: no epoch cap)\n");
        else
            fputc('\n', f);
        fprintf(f, "  %8s %5s %8s %7s %10s  %s\n", "bs", "runs", "reached", "reach",
                "energy err", "power limits (W)");
        for (int i = 0; i < g->n_bs; i++) {
            const ws_check_bs *b = &g->bs[i];
            fprintf(f, "  %8d %5d %8d ", b->bs, b->runs, b->reached);
            if (b->runs) fprintf(f, "%6.0f%%  ", 100.0 * b->reached / b->runs);
            else fprintf(f, "%7s  ", "-");
            /* the largest energy_error of its limits, when recorded */
            if (isnan(b->max_err)) fprintf(f, "%9s  ", "-");
            else fprintf(f, "%8.2f%%  ", 100 * b->max_err);
            pl_list(f, b);
            fputc('\n', f);
        }
        if (g->n_frontier) {
            fprintf(f, "  frontier (TTA ascending):");
            for (int i = 0; i < g->n_frontier; i++)
                fprintf(f, "%s %d@%dW (%s h, %s MJ)", i ? "," : "", g->frontier[i].bs,
                        g->frontier[i].pl,
                        ws_tab(nb[1], 32, "%.4g", ws_req(g->frontier[i].tta / 3600)),
                        ws_tab(nb[2], 32, "%.4g", ws_req(g->frontier[i].eta / 1e6)));
            fputc('\n', f);
        }
        for (size_t i = 0; i < g->warn.n; i++) fprintf(f, "  warning: %s\n", g->warn.msg[i]);
    }
    fprintf(f, "\n%zu workload x GPU group%s, %zu warning%s\n", c->n, c->n == 1 ? "" : "s",
            c->n_warnings, c->n_warnings == 1 ? "" : "s");
}

static void json(FILE *f, const ws_trace_check *c)
{
    ws_jw w;
    ws_jw_init(&w, f);
    ws_jw_begin_object(&w);
    ws_jw_kstring(&w, "dir", c->dir);
    ws_jw_kstring(&w, "train", c->train_path);
    ws_jw_kint(&w, "train_rows", (long long)c->n_train);
    ws_jw_key(&w, "gpus");
    ws_jw_begin_array(&w);
    for (int i = 0; i < c->n_gpus; i++) ws_jw_string(&w, c->gpus[i]);
    ws_jw_end_array(&w);
    ws_jw_key(&w, "workloads");
    ws_jw_begin_array_lines(&w);
    for (size_t k = 0; k < c->n; k++) {
        const ws_check_group *g = &c->g[k];
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "gpu", g->gpu);
        ws_jw_kstring(&w, "dataset", g->dataset);
        ws_jw_kstring(&w, "network", g->network);
        ws_jw_kstring(&w, "optimizer", g->optimizer);
        ws_jw_knumber(&w, "target_metric", g->target);
        ws_jw_kstring(&w, "catalogue", g->workload);           /* NULL: null */
        ws_jw_key(&w, "max_epochs");
        if (g->max_epochs) ws_jw_int(&w, g->max_epochs); else ws_jw_null(&w);
        ws_jw_key(&w, "batch_sizes");
        ws_jw_begin_array(&w);
        for (int i = 0; i < g->n_bs; i++) {
            const ws_check_bs *b = &g->bs[i];
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "bs", b->bs);
            ws_jw_kint(&w, "runs", b->runs);
            ws_jw_kint(&w, "reached", b->reached);
            ws_jw_knumber(&w, "reach_rate", b->runs ? (double)b->reached / b->runs : NAN);
            ws_jw_key(&w, "power_limits");
            ws_jw_begin_array(&w);
            for (int m = 0; m < b->n_pl; m++) ws_jw_int(&w, b->pl[m]);
            ws_jw_end_array(&w);
            ws_jw_key(&w, "energy_error");          /* per limit, null: not recorded */
            ws_jw_begin_array(&w);
            for (int m = 0; m < b->n_pl; m++) ws_jw_number(&w, b->err[m]);
            ws_jw_end_array(&w);
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_key(&w, "frontier");
        ws_jw_begin_array(&w);
        for (int i = 0; i < g->n_frontier; i++) {
            ws_jw_begin_object(&w);
            ws_jw_kint(&w, "bs", g->frontier[i].bs);
            ws_jw_kint(&w, "pl", g->frontier[i].pl);
            ws_jw_knumber(&w, "tta_s", ws_req(g->frontier[i].tta));
            ws_jw_knumber(&w, "eta_j", ws_req(g->frontier[i].eta));
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_key(&w, "warnings");
        ws_jw_begin_array(&w);
        for (size_t i = 0; i < g->warn.n; i++) ws_jw_string(&w, g->warn.msg[i]);
        ws_jw_end_array(&w);
        ws_jw_end_object(&w);
    }
    ws_jw_end_array(&w);
    ws_jw_kint(&w, "n_warnings", (long long)c->n_warnings);
    ws_jw_end_object(&w);
    ws_jw_newline(&w);
}

void ws_trace_check_print(FILE *f, const ws_trace_check *c, int as_json)
{
    if (as_json) json(f, c);
    else table(f, c);
}
