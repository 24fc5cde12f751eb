/* `wattsim trace check` output: a table for people, or one JSON object
 * (see wattsim/trace_check.h). */
#include "wattsim/trace_check.h"
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
        fprintf(f, "  %8s %5s %8s %7s  %s\n", "bs", "runs", "reached", "reach", "power limits (W)");
        for (int i = 0; i < g->n_bs; i++) {
            const ws_check_bs *b = &g->bs[i];
            fprintf(f, "  %8d %5d %8d ", b->bs, b->runs, b->reached);
            if (b->runs) fprintf(f, "%6.0f%%  ", 100.0 * b->reached / b->runs);
            else fprintf(f, "%7s  ", "-");
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
    fputs("{\"dir\": ", f);
    ws_json_str(f, c->dir);
    fputs(", \"train\": ", f);
    ws_json_str(f, c->train_path);
    fprintf(f, ", \"train_rows\": %zu, \"gpus\": [", c->n_train);
    for (int i = 0; i < c->n_gpus; i++) {
        if (i) fputs(", ", f);
        ws_json_str(f, c->gpus[i]);
    }
    fputs("], \"workloads\": [", f);
    for (size_t k = 0; k < c->n; k++) {
        const ws_check_group *g = &c->g[k];
        fputs(k ? ",\n  {\"gpu\": " : "\n  {\"gpu\": ", f);
        ws_json_str(f, g->gpu);
        fputs(", \"dataset\": ", f);
        ws_json_str(f, g->dataset);
        fputs(", \"network\": ", f);
        ws_json_str(f, g->network);
        fputs(", \"optimizer\": ", f);
        ws_json_str(f, g->optimizer);
        fputs(", \"target_metric\": ", f);
        ws_json_num(f, g->target);
        fputs(", \"catalogue\": ", f);
        if (g->workload) ws_json_str(f, g->workload); else fputs("null", f);
        fputs(", \"max_epochs\": ", f);
        if (g->max_epochs) fprintf(f, "%d", g->max_epochs); else fputs("null", f);
        fputs(", \"batch_sizes\": [", f);
        for (int i = 0; i < g->n_bs; i++) {
            const ws_check_bs *b = &g->bs[i];
            fprintf(f, "%s{\"bs\": %d, \"runs\": %d, \"reached\": %d, \"reach_rate\": ",
                    i ? ", " : "", b->bs, b->runs, b->reached);
            ws_json_num(f, b->runs ? (double)b->reached / b->runs : NAN);
            fputs(", \"power_limits\": [", f);
            for (int m = 0; m < b->n_pl; m++) fprintf(f, m ? ", %d" : "%d", b->pl[m]);
            fputs("]}", f);
        }
        fputs("], \"frontier\": [", f);
        for (int i = 0; i < g->n_frontier; i++) {
            fprintf(f, "%s{\"bs\": %d, \"pl\": %d, \"tta_s\": ", i ? ", " : "",
                    g->frontier[i].bs, g->frontier[i].pl);
            ws_json_num(f, ws_req(g->frontier[i].tta));
            fputs(", \"eta_j\": ", f);
            ws_json_num(f, ws_req(g->frontier[i].eta));
            fputc('}', f);
        }
        fputs("], \"warnings\": [", f);
        for (size_t i = 0; i < g->warn.n; i++) {
            if (i) fputs(", ", f);
            ws_json_str(f, g->warn.msg[i]);
        }
        fputs("]}", f);
    }
    fprintf(f, "\n], \"n_warnings\": %zu}\n", c->n_warnings);
}

void ws_trace_check_print(FILE *f, const ws_trace_check *c, int as_json)
{
    if (as_json) json(f, c);
    else table(f, c);
}
