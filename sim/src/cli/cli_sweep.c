/*
 * `wattsim sweep` and `wattsim curves`: run a config's plan for several
 * policy pairs (ws_sweep_run) and write the summary tables, the learning
 * curves and their figures.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_sweep.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/plugin.h"
#include "wattsim/sweep.h"
#include "wattsim/whatif.h"
#include "cli_common.h"

static const char *SWEEP_HELP =
    "usage: wattsim sweep CONFIG [--set KEY=VALUE]... [--policies B:P,...] [--out DIR]\n"
    "                     [--threads N] [--force] [--no-plot]\n"
    "                     [--isolate] [--cell-timeout SECONDS] [--resume]\n"
    "       wattsim curves CONFIG [same options]\n"
    "\n"
    "sweep: run the config's plan (gpu x workload x eta x beta x seed) for every\n"
    "policy pair and summarise each cell (all axes but the seed) over seeds: mean\n"
    "and 95 % CI of total ETA, TTA and cost, the steady state (mean ETA/TTA per\n"
    "recurrence over the last 10 % of recurrences, at least 5), the final knobs,\n"
    "savings versus the default policy and regret versus oracle (both always\n"
    "run). Writes sweep.csv, sweep.json, sweep.md and per GPU x workload a figure\n"
    "steady-GPU-WORKLOAD.{csv,gp,png,svg} of each cell's steady state against the\n"
    "frontier.\n"
    "curves: cumulative cost and regret versus oracle per recurrence, mean and\n"
    "95 % band over seeds: curves.csv and per job curves-GPU-WORKLOAD-etaX-betaY.*.\n"
    "\n"
    "  --set KEY=VALUE    override a config key (eta=[0,0.5,1], seeds=1..10, ...)\n"
    "  --policies LIST    policy pairs BSO:PLO, comma-separated, e.g.\n"
    "                     zeus:jit,grid:grid (default: the config's bso:plo)\n"
    "  --out DIR          output folder (default: the config's `out`)\n"
    "  --threads N        worker threads (default: online CPUs); outputs do not\n"
    "                     depend on it\n"
    "  --force            replace existing outputs in the folder (and start over\n"
    "                     when an interrupted sweep left a journal)\n"
    "  --isolate          run each cell (all seeds of one policy pair x gpu x\n"
    "                     workload x eta x beta) in a child process: a policy\n"
    "                     that crashes, aborts or hangs fails only its cell;\n"
    "                     with --threads N, up to N children at a time\n"
    "  --cell-timeout S   with --isolate, kill a cell's process after S seconds\n"
    "                     and mark the cell failed (default: no limit)\n"
    "  --resume           reuse the simulations that an interrupted run of the\n"
    "                     same plan recorded in DIR/sweep.journal (curves.journal)\n"
    "\n"
    "A failed simulation (a policy error, a run that never reaches the target)\n"
    "does not stop the sweep: each cell is summarised over its successful seeds\n"
    "(columns seeds_ok, seeds_failed, error), one warning per failed cell is\n"
    "printed, and the exit status is 1. Exit status: 0 every simulation\n"
    "succeeded, 1 completed with failed cells, 2 usage, config, policy or trace\n"
    "error (nothing written).\n"
    "  --no-plot          tables only\n"
    "  --traces DIR, --catalogue FILE   as for every command\n";

/* Figure and table writers share this. */
typedef struct out_ctx {
    const char *dir;
    char *command;
    int plot;
} out_ctx;

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", dir, name);
    return s;
}

typedef void (*writer)(FILE *f, const ws_sweep *s);

static int write_table(const out_ctx *o, const char *name, const char *title,
                       writer w, const ws_sweep *s, ws_error *err)
{
    char *path = join(o->dir, name);
    ws_outfile of = {0};
    if (!path) return ws_fail(err, "out of memory");
    int rc = ws_outfile_open(&of, path, err);
    if (!rc) {
        w(of.f, s);
        rc = ws_outfile_commit(&of, err);
    }
    if (!rc) rc = ws_manifest_add(path, "table", title, o->command, err);
    ws_outfile_abort(&of);
    free(path);
    return rc;
}

/* A readable summary: savings in percent, units per table. */
static void write_md(FILE *f, const ws_sweep *s)
{
    double max_e = 0, max_t = 0;
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        max_e = fmax(max_e, o.energy.mean);
        max_t = fmax(max_t, o.time.mean);
    }
    ws_unit ue = ws_unit_energy(max_e), ut = ws_unit_time(max_t);
    fprintf(f, "| policy | gpu | workload | eta | beta | ETA (%s) | TTA (%s) | ETA saving | "
               "TTA saving | cost saving | regret vs oracle (%s) | final knob | seeds ok | "
               "seeds failed | error |\n",
            ue.name, ut.name, ue.name);
    fputs("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|\n", f);
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        /* The most frequent final knob. */
        int bs, pl;
        size_t best;
        ws_sweep_top_knob(s, c, &bs, &pl, &best);
        fprintf(f, "| %s | %s | %s | %g | %g | ", s->pairs[o.pair].label, s->gpus[o.gpu],
                s->work[o.work], s->etas[o.eta], s->betas[o.beta]);
        if (o.seeds_ok)
            fprintf(f, "%.4g ± %.2g | %.4g ± %.2g | %.1f %% | %.1f %% | %.1f %% | %.4g | "
                       "%d, %d W (%zu/%zu) | ",
                    o.energy.mean / ue.div,
                    isfinite(o.energy.hi) ? (o.energy.hi - o.energy.mean) / ue.div : 0.0,
                    o.time.mean / ut.div,
                    isfinite(o.time.hi) ? (o.time.hi - o.time.mean) / ut.div : 0.0,
                    100 * o.save_energy, 100 * o.save_time, 100 * o.save_cost,
                    o.regret.mean / ue.div, bs, pl, best, o.seeds_ok);
        else
            fputs("– | – | – | – | – | – | – | ", f);
        fprintf(f, "%zu | %zu | ", o.seeds_ok, o.seeds_failed);
        for (const char *p = o.error; *p; p++) {       /* a '|' would split the cell */
            if (*p == '|') fputc('\\', f);
            fputc(*p, f);
        }
        fputs(" |\n", f);
    }
    fprintf(f, "\nMeans over %zu seeds ± half-width of the 95 %% CI; savings are 1 - ours /"
               " default's (same seeds); cost is in energy units (J-equivalent).\n", s->n_seeds);
    if (s->n_failed)
        fprintf(f, "%zu of %zu simulations failed: a cell's numbers are over its successful"
                   " seeds, savings and regret over the seeds where the reference succeeded"
                   " too.\n", s->n_failed, s->n_sims);
}

/* Render a figure's script to PNG and SVG and list both in the manifest. */
static int publish(const out_ctx *o, const char *gp, const char *png, const char *svg,
                   const char *title, ws_error *err)
{
    const char *imgs[2] = {png, svg};
    if (ws_plot_render(gp, imgs, 2, err)
        || ws_manifest_add(png, "figure", title, o->command, err)
        || ws_manifest_add(svg, "figure", title, o->command, err))
        return -1;
    return 0;
}

/* Steady state of each cell against the frontier, one figure per job. */
static int steady_figure(const out_ctx *o, const ws_sweep *s, size_t g, size_t w,
                         ws_error *err)
{
    char stem[512];
    snprintf(stem, sizeof stem, "%s/steady-%s-%s", o->dir, s->gpus[g], s->work[w]);
    char png[600], svg[600], csv[600], gpp[600];
    snprintf(png, sizeof png, "%s.png", stem);
    snprintf(svg, sizeof svg, "%s.svg", stem);
    snprintf(csv, sizeof csv, "%s.csv", stem);
    snprintf(gpp, sizeof gpp, "%s.gp", stem);
    ws_job job = s->jobs[g * s->n_work + w].job;
    ws_pareto par = {0};
    ws_outfile od = {0}, og = {0};
    int rc = -1;
    /* Frontier and units from the knob landscape; the least-cost knob per eta. */
    job.eta = 0.5;
    if (ws_pareto_compute(&job, &par, err)) goto out;
    double max_t = 0, max_e = 0, min_t = INFINITY, min_e = INFINITY;
    for (int k = 0; k < par.n; k++)
        if (par.knobs[k].all_reach) {
            max_t = fmax(max_t, par.knobs[k].tta);
            max_e = fmax(max_e, par.knobs[k].eta);
            min_t = fmin(min_t, par.knobs[k].tta);
            min_e = fmin(min_e, par.knobs[k].eta);
        }
    ws_unit ut = ws_unit_time(max_t), ue = ws_unit_energy(max_e);
    if (ws_outfile_open(&od, csv, err) || ws_outfile_open(&og, gpp, err)) goto out;
    FILE *f = od.f;
    /* Blocks (gnuplot `index`): 0 knobs every run reaches, 1 frontier by
     * TTA, 2 steady states, 3 least-cost knob per eta. */
    fprintf(f, "# block 0: knobs; bs,pl,tta_%s,eta_%s,frontier\n", ut.name, ue.name);
    for (int k = 0; k < par.n; k++)
        if (par.knobs[k].all_reach)
            fprintf(f, "%d,%d,%.17g,%.17g,%d\n", par.knobs[k].bs, par.knobs[k].pl,
                    par.knobs[k].tta / ut.div, par.knobs[k].eta / ue.div, par.knobs[k].frontier);
    fprintf(f, "\n\n# block 1: frontier; bs,pl,tta_%s,eta_%s\n", ut.name, ue.name);
    for (int q = 0; q < par.n_frontier; q++) {
        const ws_knob_stat *k = &par.knobs[par.frontier[q]];
        fprintf(f, "%d,%d,%.17g,%.17g\n", k->bs, k->pl, k->tta / ut.div, k->eta / ue.div);
    }
    fprintf(f, "\n\n# block 2: steady state per recurrence; series,eta,beta,tta_%s,eta_%s,"
               "tta_lo,tta_hi,eta_lo,eta_hi\n", ut.name, ue.name);
    int n_series = 0;
    char titles[64][96];
    for (size_t p = 0; p < s->n_pairs; p++) {
        if (p == s->ref_oracle) continue;        /* sits on the least-cost knob */
        for (size_t b = 0; b < s->n_betas && n_series < 64; b++) {
            if (s->n_betas > 1)
                snprintf(titles[n_series], sizeof titles[0], "%s, β = %g", s->pairs[p].label,
                         s->betas[b]);
            else
                snprintf(titles[n_series], sizeof titles[0], "%s", s->pairs[p].label);
            n_series++;
            for (size_t e = 0; e < s->n_etas; e++) {
                ws_sweep_summary m;
                ws_sweep_summarise(s, ws_sweep_index(s, p, g, w, e, b, 0) / s->n_seeds, &m);
                if (!m.seeds_ok) continue;           /* every seed failed: no point */
                double lo_t = isfinite(m.steady_time.lo) ? m.steady_time.lo : m.steady_time.mean;
                double hi_t = isfinite(m.steady_time.hi) ? m.steady_time.hi : m.steady_time.mean;
                double lo_e = isfinite(m.steady_energy.lo) ? m.steady_energy.lo : m.steady_energy.mean;
                double hi_e = isfinite(m.steady_energy.hi) ? m.steady_energy.hi : m.steady_energy.mean;
                fprintf(f, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", n_series,
                        s->etas[e], s->betas[b], m.steady_time.mean / ut.div,
                        m.steady_energy.mean / ue.div, lo_t / ut.div, hi_t / ut.div,
                        lo_e / ue.div, hi_e / ue.div);
            }
        }
    }
    fprintf(f, "\n\n# block 3: least-cost knob per eta; eta,bs,pl,tta_%s,eta_%s\n", ut.name, ue.name);
    for (size_t e = 0; e < s->n_etas; e++) {
        ws_pareto pe = {0};
        job.eta = s->etas[e];
        if (ws_pareto_compute(&job, &pe, err)) { ws_pareto_free(&pe); goto out; }
        if (pe.best_knob >= 0) {
            const ws_knob_stat *k = &pe.knobs[pe.best_knob];
            fprintf(f, "%.17g,%d,%d,%.17g,%.17g\n", s->etas[e], k->bs, k->pl, k->tta / ut.div,
                    k->eta / ue.div);
        }
        ws_pareto_free(&pe);
    }

    f = og.f;
    char title[256];
    snprintf(title, sizeof title, "%s on %s: steady state of each η versus the frontier",
             s->work[w], s->gpus[g]);
    const char *slash = strrchr(png, '/');
    ws_plot_preamble(f, slash ? slash + 1 : png, 1100, 760, title);
    fprintf(f, "set xlabel 'Time to accuracy per recurrence (%s)'\n", ut.name);
    fprintf(f, "set ylabel 'Energy to accuracy per recurrence (%s)'\n", ue.name);
    ws_plot_ranges(f, min_t / ut.div, max_t / ut.div, min_e / ue.div, max_e / ue.div);
    fputs("set key outside right top vertical\n"
          "set rmargin at screen 0.66\n"
          "# viridis: sequential and colour-blind safe\n"
          "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
          "set cbrange [0:1]\n"
          "set cblabel 'η (weight of energy in the cost)'\n"
          "set colorbox user origin screen 0.80, screen 0.12 size screen 0.025, screen 0.35\n"
          "shapes = '7 5 9 11 13 15'\n", f);
    for (int i = 0; i < n_series; i++) {
        fprintf(f, "series%d = ", i + 1);
        ws_plot_str(f, titles[i]);
        fputc('\n', f);
    }
    fprintf(f, "n = %d\n", n_series);
    fputs("plot data index 0 using 3:4 with points pt 6 ps 0.9 lc rgb '#bbbbbb' title 'knobs (every run reaches)', \\\n"
          "     data index 1 using 3:4 with lines lw 2 lc rgb 'black' title 'Pareto frontier', \\\n"
          "     data index 3 using 4:5:1 with points pt 4 ps 2.6 lw 2.5 lc palette title 'least-cost knob of η', \\\n"
          "     for [i=1:n] data index 2 using ($1 == i ? $4 : NaN):5:6:7:8:9:2 with xyerrorbars \\\n"
          "       pt int(word(shapes, (i-1)%6+1)) ps 1.8 lw 1.5 lc palette \\\n"
          "       title 'steady state, '.value(sprintf('series%d', i))\n", f);
    if (ws_outfile_commit(&od, err) || ws_outfile_commit(&og, err)) goto out;
    rc = publish(o, gpp, png, svg, title, err);
out:
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    ws_pareto_free(&par);
    return rc;
}

/* Cumulative cost and regret per recurrence, one figure per job. */
static int curves_figure(const out_ctx *o, const ws_sweep *s, size_t g, size_t w,
                         size_t e, size_t b, ws_error *err)
{
    char stem[512];
    snprintf(stem, sizeof stem, "%s/curves-%s-%s-eta%g-beta%g", o->dir, s->gpus[g], s->work[w],
             s->etas[e], s->betas[b]);
    char png[600], svg[600], csv[600], gpp[600];
    snprintf(png, sizeof png, "%s.png", stem);
    snprintf(svg, sizeof svg, "%s.svg", stem);
    snprintf(csv, sizeof csv, "%s.csv", stem);
    snprintf(gpp, sizeof gpp, "%s.gp", stem);
    ws_outfile od = {0}, og = {0};
    int rc = -1;
    size_t n = s->n_seeds;
    double *cum = calloc(2 * n, sizeof *cum), *oc = calloc(2 * n, sizeof *oc);
    char *drawn = calloc(s->n_pairs, 1);       /* pairs with a curve */
    if (!cum || !oc || !drawn) { ws_fail(err, "out of memory"); goto out; }
    /* Unit from the largest cumulative cost (the default policy's, mostly). */
    double max_c = 0;
    for (size_t p = 0; p < s->n_pairs; p++)
        for (size_t i = 0; i < n; i++)
            max_c = fmax(max_c, s->sims[ws_sweep_index(s, p, g, w, e, b, i)].cost);
    /* (a failed simulation's numbers are zero: they do not count) */
    ws_unit uc = ws_unit_energy(max_c);
    if (ws_outfile_open(&od, csv, err) || ws_outfile_open(&og, gpp, err)) goto out;
    FILE *f = od.f;
    /* One block per policy (gnuplot `index`). */
    /* A policy whose every seed failed has no curve: it gets no block (an
     * empty block would make gnuplot complain) and no entry in `policies`. */
    size_t blk = 0;
    for (size_t p = 0; p < s->n_pairs; p++) {
        size_t base = ws_sweep_index(s, p, g, w, e, b, 0);
        size_t oref = ws_sweep_index(s, s->ref_oracle, g, w, e, b, 0);
        int any = 0;
        for (size_t i = 0; i < n; i++) any |= !s->sims[base + i].failed;
        if (!any) continue;
        drawn[p] = 1;
        fprintf(f, "%s# block %zu: %s; recurrence,cum_cost_%s,lo,hi,regret_%s,lo,hi\n",
                blk ? "\n\n" : "", blk, s->pairs[p].label, uc.name, uc.name);
        blk++;
        memset(cum, 0, n * sizeof *cum);
        memset(oc, 0, n * sizeof *oc);
        for (long r = 0; r < ws_sweep_recurrences(s, base); r++) {
            ws_stat a, d;
            ws_sweep_curve_step(s, base, oref, r, cum, oc, &a, &d);
            if (isnan(a.mean)) continue;             /* every seed failed */
            if (!isfinite(a.lo)) a.lo = a.hi = a.mean;
            if (!isfinite(d.lo)) d.lo = d.hi = d.mean;
            fprintf(f, "%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r + 1, a.mean / uc.div,
                    a.lo / uc.div, a.hi / uc.div, d.mean / uc.div, d.lo / uc.div, d.hi / uc.div);
        }
    }
    f = og.f;
    char title[256];
    snprintf(title, sizeof title, "%s on %s (η = %g, β = %g): learning curves over %zu seeds",
             s->work[w], s->gpus[g], s->etas[e], s->betas[b], n);
    const char *slash = strrchr(png, '/');
    ws_plot_preamble(f, slash ? slash + 1 : png, 1000, 900, title);
    fputs("colours = '", f);
    for (int i = 0; i < 8; i++) fprintf(f, "%s%s", i ? " " : "", ws_plot_colour(i < 3 ? i + 4 : i - 3));
    fputs("'\npolicies = '", f);
    for (size_t p = 0, k = 0; p < s->n_pairs; p++)
        if (drawn[p]) {
            if (k++) fputc(' ', f);
            ws_plot_chars(f, s->pairs[p].label);
        }
    fputs("'\nset multiplot layout 2,1 title ", f);
    ws_plot_str(f, title);
    fputs(" font ',16'\n", f);
    fputs("unset title\nset key left top\nset xlabel 'Recurrence'\n", f);
    fprintf(f, "set ylabel 'Cumulative cost (%s)'\n", uc.name);
    fputs("set style fill transparent solid 0.2 noborder\n"
          "plot for [i=1:words(policies)] data index (i-1) using 1:3:4 with filledcurves \\\n"
          "       lc rgb word(colours, (i-1)%8+1) notitle, \\\n"
          "     for [i=1:words(policies)] data index (i-1) using 1:2 with lines lw 2.5 \\\n"
          "       lc rgb word(colours, (i-1)%8+1) title word(policies, i)\n", f);
    fprintf(f, "set ylabel 'Regret vs oracle (%s)'\n", uc.name);
    fputs("plot for [i=1:words(policies)] data index (i-1) using 1:6:7 with filledcurves \\\n"
          "       lc rgb word(colours, (i-1)%8+1) notitle, \\\n"
          "     for [i=1:words(policies)] data index (i-1) using 1:5 with lines lw 2.5 \\\n"
          "       lc rgb word(colours, (i-1)%8+1) title word(policies, i)\n"
          "unset multiplot\n", f);
    if (ws_outfile_commit(&od, err) || ws_outfile_commit(&og, err)) goto out;
    rc = publish(o, gpp, png, svg, title, err);
out:
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    free(cum);
    free(oc);
    free(drawn);
    return rc;
}

/* One line per failed cell on stderr: "wattsim: warning: CELL: MESSAGE". */
static void warn_failed(const ws_sweep *s)
{
    fflush(stdout);                /* after the summary line, even in a pipe */
    for (size_t c = 0; s->n_failed && c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        if (!o.seeds_failed) continue;
        char cell[256];
        ws_sweep_cell_name(s, c, cell, sizeof cell);
        fprintf(stderr, "wattsim: warning: %s: %s\n", cell, o.error);
    }
}

int ws_cmd_sweep(int argc, char **argv, int curves)
{
    const char *cmd = curves ? "curves" : "sweep";
    static const struct option opts[] = {
        {"set", required_argument, 0, 's'},
        {"policies", required_argument, 0, 'p'},
        {"out", required_argument, 0, 'o'},
        {"threads", required_argument, 0, 'j'},
        {"force", no_argument, 0, 'f'},
        {"no-plot", no_argument, 0, 'n'},
        {"traces", required_argument, 0, 't'},
        {"catalogue", required_argument, 0, 'c'},
        {"isolate", no_argument, 0, 'i'},
        {"cell-timeout", required_argument, 0, 'T'},
        {"resume", no_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},
        WS_CLI_WHATIF_OPTIONS,
        {0, 0, 0, 0},
    };
    const char *out = NULL, *policies = NULL, *traces = NULL, *catalogue = NULL;
    int force = 0, plot = 1, isolate = 0, resume = 0, c;
    double cell_timeout = 0;
    char *journal = NULL;
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int n_sets = 0, n_wi = 0;
    struct { int c; const char *arg; } *wis = calloc((size_t)argc + 1, sizeof *wis);
    if (!sets || !wis) { free(sets); free(wis); return 2; }
    ws_whatif wi = {0};
    char *command = ws_command_line(argc + 1, argv - 1);
    ws_error err = {{0}};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_registry *reg = ws_registry_new();
    ws_policy_pair *pairs = NULL;
    size_t n_pairs = 0;
    ws_sweep sw = {0};
    int rc = 2;
    ws_run_config_init(&cfg);
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c >= WS_OPT_POWER_CAP && c <= WS_OPT_OBJECTIVE) {
            wis[n_wi].c = c;       /* applied after the config is read */
            wis[n_wi++].arg = optarg;
            continue;
        }
        switch (c) {
        case 'h': printf("%s\n%s", SWEEP_HELP, WS_CLI_WHATIF_HELP); rc = 0; goto out;
        case 's': sets[n_sets++] = optarg; break;
        case 'p': policies = optarg; break;
        case 'o': out = optarg; break;
        case 'f': force = 1; break;
        case 'n': plot = 0; break;
        case 't': traces = optarg; break;
        case 'c': catalogue = optarg; break;
        case 'i': isolate = 1; break;
        case 'r': resume = 1; break;
        case 'T': {
            char *end;
            cell_timeout = strtod(optarg, &end);
            if (end == optarg || *end || !(cell_timeout > 0) || cell_timeout > 1e6) {
                rc = ws_cli_usage(cmd, "--cell-timeout '%s' is not a number of seconds in"
                                  " (0, 1e6]", optarg);
                goto out;
            }
            break;
        }
        case 'j': {
            char *end;
            threads = strtol(optarg, &end, 10);
            if (*end || threads < 1 || threads > 256) {
                rc = ws_cli_usage(cmd, "--threads '%s' is not an integer in 1..256", optarg);
                goto out;
            }
            break;
        }
        case ':': rc = ws_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]); goto out;
        default: rc = ws_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]); goto out;
        }
    }
    if (cell_timeout > 0 && !isolate) {
        rc = ws_cli_usage(cmd, "%s needs --isolate (only a child process can be stopped)",
                          "--cell-timeout");
        goto out;
    }
    if (optind != argc - 1) {
        rc = ws_cli_usage(cmd, "%s", optind >= argc ? "needs a CONFIG file" : "takes one CONFIG file");
        goto out;
    }
    if (ws_run_config_load(argv[optind], &cfg, &err)) goto out;
    for (int i = 0; i < n_sets; i++)
        if (ws_run_config_set(&cfg, sets[i], &err)) goto out;
    for (int i = 0; i < n_wi; i++)
        if (ws_cli_whatif_opt(&cfg, wis[i].c, wis[i].arg, &err) < 0) goto out;
    if (ws_run_config_validate(&cfg, &err)) goto out;
    if (!out) out = cfg.out_dir;
    if (!out) {
        ws_fail(&err, "%s: no output folder: add `out: DIR` to the config or pass --out DIR", cfg.path);
        goto out;
    }
    if (policies) {
        if (ws_policy_pairs_parse(policies, &pairs, &n_pairs, &err)) goto out;
    } else {
        pairs = calloc(1, sizeof *pairs);
        if (!pairs) goto out;
        n_pairs = 1;
        pairs[0].bso = strdup(cfg.bso.name);
        pairs[0].plo = strdup(cfg.plo.name);
    }
    char *marker = join(out, curves ? "curves.csv" : "sweep.csv");
    struct stat st;
    int exists = marker && stat(marker, &st) == 0;
    free(marker);
    if (!force && exists) {
        ws_fail(&err, "%s: outputs of an earlier %s are there; pass --force to replace them or"
                " --out another folder", out, cmd);
        goto out;
    }
    /* The journal of this command in the folder: an interrupted run left it. */
    journal = join(out, curves ? "curves.journal" : "sweep.journal");
    if (!journal) goto out;
    if (!resume && !force && stat(journal, &st) == 0) {
        ws_fail(&err, "%s: an interrupted %s left this journal; pass --resume to continue it or"
                " --force to start over", journal, cmd);
        goto out;
    }
    /* --resume continues an earlier command in this folder: it rewrites
     * what that one wrote. */
    ws_outfile_set_force(force || resume);
    if (ws_outdir_lock(out, &err)) goto out;
    if (ws_cli_catalogue(catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, NULL, &err))
        goto out;
    ws_study_env env = {ws_cli_traces(traces, &cfg), &cat, reg, NULL, 1, &wi};
    ws_sweep_opts so = {(int)threads, isolate, cell_timeout, journal, resume, curves};
    if (ws_sweep_run_opts(&cfg, &env, pairs, n_pairs, &so, &sw, &err)) goto out;
    if (ws_mkdirs(out, &err)) goto out;
    out_ctx oc = {out, command, plot};
    char reused[64] = "";
    if (sw.n_reused)
        snprintf(reused, sizeof reused, " (%zu from the journal)", sw.n_reused);
    if (!curves) {
        if (write_table(&oc, "sweep.json", "sweep: per-cell summary (JSON)", ws_sweep_write_json, &sw, &err)
            || write_table(&oc, "sweep.md", "sweep: ETA/TTA savings versus default", write_md, &sw, &err))
            goto out;
        for (size_t g = 0; plot && g < sw.n_gpus; g++)
            for (size_t w = 0; w < sw.n_work; w++)
                if (steady_figure(&oc, &sw, g, w, &err)) goto out;
        /* sweep.csv last: its presence marks a complete sweep. */
        if (write_table(&oc, "sweep.csv", "sweep: per-cell summary", ws_sweep_write_csv, &sw, &err))
            goto out;
        printf("%zu simulations%s, %zu cells; outputs in %s/ (sweep.csv, sweep.json, sweep.md%s)\n",
               sw.n_sims, reused, ws_sweep_n_cells(&sw), out, plot ? ", steady-*" : "");
    } else {
        for (size_t g = 0; plot && g < sw.n_gpus; g++)
            for (size_t w = 0; w < sw.n_work; w++)
                for (size_t e = 0; e < sw.n_etas; e++)
                    for (size_t b = 0; b < sw.n_betas; b++)
                        if (curves_figure(&oc, &sw, g, w, e, b, &err)) goto out;
        if (write_table(&oc, "curves.csv", "learning curves: cumulative cost and regret",
                        ws_sweep_write_curves, &sw, &err))
            goto out;
        printf("%zu simulations%s; outputs in %s/ (curves.csv%s)\n", sw.n_sims, reused, out,
               plot ? ", curves-*" : "");
    }
    /* Every output is in place: the journal has served its purpose. */
    unlink(journal);
    warn_failed(&sw);
    rc = sw.n_failed ? 1 : 0;
out:
    if (rc == 2 && err.msg[0]) ws_cli_die(&err);
    free(journal);
    ws_sweep_free(&sw);
    ws_whatif_free(&wi);
    free(wis);
    ws_policy_pairs_free(pairs, n_pairs);
    free(sets);
    free(command);
    ws_registry_free(reg);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    return rc;
}
