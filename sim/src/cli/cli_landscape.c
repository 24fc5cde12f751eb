/*
 * Figures of the knob landscape, straight from the traces (no simulation):
 * `wattsim potential` (energy saving potential of the least-ETA knob over
 * the default knob), `wattsim frontiers` (the pareto figure of every GPU x
 * workload of a config) and `wattsim pareto --plot`.
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_sweep.h"
#include "wattsim/progress.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/report.h"
#include "wattsim/plot.h"
#include "wattsim/study.h"
#include "wattsim/trace.h"

int ws_cli_pareto_plot(const char *image, const char *history, const ws_workload_spec *spec,
                       const ws_catalogue *cat, const ws_job *job, const ws_pareto *p,
                       int argc, char **argv, ws_error *err)
{
    ws_settled st = {0};
    char subject[256];
    snprintf(subject, sizeof subject, "%s, %s", spec->display ? spec->display : spec->name,
             ws_catalogue_gpu_display(cat, job->gpu));
    if (history && ws_history_settled(history, job->gpu, job->workload, &st, err)) return -1;
    if (ws_plot_pareto(image, job, p, history ? &st : NULL, subject, err)) return -1;
    if (argc <= 0) return 0;                    /* no manifest */
    char *cmd = ws_command_line(argc, argv);
    char title[512];
    snprintf(title, sizeof title, "%s: TTA and ETA of every knob (η = %g)", subject, job->eta);
    int rc = ws_manifest_add(image, "figure", title, cmd, err);
    free(cmd);
    return rc;
}

/* Options shared by potential and frontiers. */
typedef struct land_opts {
    const char *out, *traces, *catalogue, *gpus, *workloads;
    int force;
} land_opts;

/* Parse options and build the config: CONFIG if given, else every GPU and
 * workload of the catalogue; --gpus / --workloads / --set override. */
static int land_setup(const char *cmd, const char *help, int argc, char **argv,
                      land_opts *lo, ws_run_config *cfg, ws_catalogue *cat, int *rc,
                      ws_error *err)
{
    static const struct option opts[] = {
        {"set", required_argument, 0, 's'},
        {"gpus", required_argument, 0, 'g'},
        {"workloads", required_argument, 0, 'w'},
        {"out", required_argument, 0, 'o'},
        {"force", no_argument, 0, 'f'},
        {"traces", required_argument, 0, 't'},
        {"catalogue", required_argument, 0, 'c'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int n_sets = 0, c;
    *rc = 2;
    if (!sets) return -1;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'h': fprintf(ws_cli_out, "%s", help); *rc = 0; free(sets); return -1;
        case 's': sets[n_sets++] = optarg; break;
        case 'g': lo->gpus = optarg; break;
        case 'w': lo->workloads = optarg; break;
        case 'o': lo->out = optarg; break;
        case 'f': lo->force = 1; break;
        case 't': lo->traces = optarg; break;
        case 'c': lo->catalogue = optarg; break;
        case 'q': ws_progress_set_quiet(1); break;
        case ':': free(sets); ws_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]); return -1;
        default: free(sets); ws_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]); return -1;
        }
    }
    int r = -1;
    if (optind < argc - 1) {
        ws_cli_usage(cmd, "%s", "takes at most one CONFIG file");
        goto out;
    }
    if (ws_cli_catalogue(lo->catalogue, cat, err)) goto out;
    if (optind == argc - 1) {
        if (ws_run_config_load(argv[optind], cfg, err)) goto out;
    } else {
        /* Everything in the catalogue. */
        size_t len = 1;
        for (size_t i = 0; i < cat->n_gpus; i++) len += strlen(cat->gpus[i]) + 1;
        for (size_t i = 0; i < cat->n; i++) len += strlen(cat->items[i].name) + 1;
        char *buf = malloc(len);
        if (!buf) { ws_fail(err, "out of memory"); goto out; }
        buf[0] = '\0';
        for (size_t i = 0; i < cat->n_gpus; i++) {
            if (i) strcat(buf, ",");
            strcat(buf, cat->gpus[i]);
        }
        int bad = cat->n_gpus && ws_cli_set_list(cfg, "gpu", buf, NULL, err);
        buf[0] = '\0';
        for (size_t i = 0; i < cat->n; i++) {
            if (i) strcat(buf, ",");
            strcat(buf, cat->items[i].name);
        }
        bad = bad || ws_cli_set_list(cfg, "workload", buf, NULL, err);
        free(buf);
        if (bad) goto out;
    }
    if ((lo->gpus && ws_cli_set_list(cfg, "gpu", lo->gpus, "--gpus", err))
        || (lo->workloads && ws_cli_set_list(cfg, "workload", lo->workloads, "--workloads", err)))
        goto out;
    for (int i = 0; i < n_sets; i++)
        if (ws_run_config_set(cfg, sets[i], err)) goto out;
    if (ws_run_config_validate(cfg, err) || ws_cli_style(cfg, err)) goto out;
    if (ws_run_config_out(cfg, lo->out, &lo->out, err)) goto out;
    if (!lo->out) {
        ws_fail(err, "%s: no output folder: pass --out DIR", cmd);
        goto out;
    }
    ws_input_dir_note(ws_cli_traces(lo->traces, cfg));   /* never the output folder */
    r = 0;
out:
    free(sets);
    return r;
}

static const char *POTENTIAL_HELP =
    "usage: wattsim potential [CONFIG] [--gpus LIST] [--workloads LIST]\n"
    "                         [--set K=V]... --out DIR [--force] [--quiet]\n"
    "\n"
    "Energy-saving potential: for each GPU and workload, the ETA of the default\n"
    "knob (b0 at the highest power limit) versus the least-ETA knob among those\n"
    "every recorded run reaches (eta = 1). Writes potential.csv (also the\n"
    "figure's data), potential.gp and the figure potential.{png,svg,pdf}: one\n"
    "panel, a group of bars per workload, a bar per GPU.\n"
    "Without CONFIG: every GPU and workload of the catalogue.\n"
    "\n"
    "  --gpus LIST        e.g. v100,a40\n"
    "  --workloads LIST   e.g. cifar100,imagenet\n"
    "  --out DIR          output folder\n"
    "  --force            replace existing outputs\n"
    "  --traces DIR, --catalogue FILE   as for every command\n";

int ws_cmd_potential(int argc, char **argv)
{
    land_opts lo = {0};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_error err = {{0}};
    char shown[WS_CLI_SHOW];
    ws_outfile od = {0}, og = {0};
    char *command = ws_command_line(argc + 1, argv - 1);
    int rc;
    ws_run_config_init(&cfg);
    if (land_setup("potential", POTENTIAL_HELP, argc, argv, &lo, &cfg, &cat, &rc, &err)) {
        rc = rc ? 2 : 0;
        goto out;
    }
    rc = 2;
    char csv[4096], gp[4096], png[4096], svg[4096], pdf[4096];
    snprintf(csv, sizeof csv, "%s/potential.csv", lo.out);
    snprintf(gp, sizeof gp, "%s/potential.gp", lo.out);
    snprintf(png, sizeof png, "%s/potential.png", lo.out);
    snprintf(svg, sizeof svg, "%s/potential.svg", lo.out);
    snprintf(pdf, sizeof pdf, "%s/potential.pdf", lo.out);
    struct stat st;
    if (!lo.force && stat(csv, &st) == 0) {
        ws_fail(&err, "%s: outputs of an earlier run are there; pass --force to replace them", lo.out);
        goto out;
    }
    ws_outfile_set_force(lo.force);
    if (ws_outdir_lock(lo.out, &err)) goto out;
    if (ws_outfile_open(&od, csv, &err) || ws_outfile_open(&og, gp, &err)) goto out;
    double pot_max = 0;                       /* the highest bar */
    fputs("gpu,workload,x,default_bs,default_pl,default_eta_j,best_bs,best_pl,best_eta_j,"
          "best_pct_of_default,saving_pct,gpu_index\n", od.f);
    for (size_t g = 0; g < cfg.n_gpus; g++) {
        ws_traces tr = {0};
        ws_csv_limits lim;
        if (ws_cli_limits(NULL, &lim, &err)
            || ws_traces_load(&tr, ws_cli_traces(lo.traces, &cfg), cfg.gpus[g], &lim, &err)) {
            ws_traces_free(&tr);
            goto out;
        }
        for (size_t w = 0; w < cfg.n_workloads; w++) {
            ws_job_table jt = {0};
            ws_pareto p = {0};
            const ws_workload_spec *spec = ws_study_workload(&cfg, &cat, cfg.workloads[w], &err);
            int bad = !spec || ws_job_build(&jt, &tr, spec, 1.0, INFINITY, &err)
                      || ws_pareto_compute(&jt.job, &p, &err);
            if (!bad && (p.default_knob < 0 || p.best_knob < 0 || !p.knobs[p.default_knob].all_reach)) {
                ws_fail(&err, "%s/%s: the default knob or no knob reaches the target in every run",
                        cfg.gpus[g], cfg.workloads[w]);
                bad = 1;
            }
            if (!bad) {
                /* eta = 1: cost is ETA, so the least-cost knob is the least-ETA one. */
                const ws_knob_stat *d = &p.knobs[p.default_knob], *b = &p.knobs[p.best_knob];
                fprintf(od.f, "%s,%s,%zu,%d,%d,", cfg.gpus[g], spec->name, w, d->bs, d->pl);
                ws_csv_num(od.f, ws_req(d->eta));
                fprintf(od.f, ",%d,%d,", b->bs, b->pl);
                const double x[3] = {b->eta, 100.0 * b->eta / d->eta,
                                     100.0 * (1.0 - b->eta / d->eta)};
                ws_csv_nums(od.f, 3, x, 1);
                fprintf(od.f, ",%zu\n", g);
                pot_max = fmax(pot_max, 100.0 * (1.0 - b->eta / d->eta));
            }
            ws_pareto_free(&p);
            ws_job_free(&jt);
            if (bad) { ws_traces_free(&tr); goto out; }
        }
        ws_traces_free(&tr);
    }
    FILE *f = og.f;
    /* One panel of grouped bars: a group per workload, a bar per GPU, the
     * saving written above each bar; in points from the top of the page:
     * the title, the key (a swatch before each GPU's name), the panel, the
     * workloads' names (two lines). Lengths that hold text were measured
     * at 8 pt and scale with the font (WS_PLOT_EM). */
    const char *title = "Energy-saving potential: least-ETA knob versus the default knob";
    const double em = WS_PLOT_EM, wp = 72 * WS_PLOT_COL2, hp = 72 * 2.9 * WS_PLOT_GROW;
    double top = hp - 36 * em, bottom = 3 + 6.9 * em + 2 * 8.8 * em;
    ws_plot_axis ay;
    /* 14 pt over the highest bar for its number */
    ws_plot_axis_opts oy = {top - bottom, 1, WS_PLOT_FONT_PT, 0, 14 * em, 0, 1};
    ws_plot_axis_linear(&ay, 0, pot_max, &oy);
    ws_plot_preamble(f, "potential.png", WS_PLOT_COL2, hp / 72, NULL);
    fprintf(f, "G = %zu\nbw = 0.8 / G\n", cfg.n_gpus);
    for (size_t g = 0; g < cfg.n_gpus; g++) {
        fprintf(f, "gpu%zu = ", g);
        ws_plot_str(f, ws_catalogue_gpu_display(&cat, cfg.gpus[g]));
        fputc('\n', f);
    }
    fputs("colours = '", f);
    for (size_t g = 0; g < 8; g++) fprintf(f, "%s%s", g ? " " : "", ws_plot_colour((int)g));
    fputs("'\n", f);
    fputs("set multiplot title ", f);
    ws_plot_str(f, title);
    fprintf(f, " font ',%g'\n", WS_PLOT_FONT_TITLE);
    const double left = 3 + ws_plot_left_room(&ay, WS_PLOT_FONT_PT);
    ws_plot_area(f, WS_PLOT_COL2, hp / 72, left, bottom, wp - 6, top);
    ws_plot_axis_write(f, "y", &ay, 0);
    fprintf(f, "set style fill solid 0.9 border lc rgb '#333333'\n"
               "set boxwidth bw * 0.92\n"
               "set grid noxtics ytics\n"
               "set ylabel 'ETA saving (%%)'\n"
               "set key at screen 0.5, screen %.5f center top horizontal Left reverse"
               " samplen 1.5 width 1 font ',%g'\n", (hp - 20 * em) / hp, WS_PLOT_FONT_SMALL);
    /* the workloads' names in the small font, or smaller where one is
     * wider than 90 % of its group of bars */
    const char *names[64];
    size_t n_names = cfg.n_workloads < 64 ? cfg.n_workloads : 64;
    for (size_t w = 0; w < n_names; w++)
        names[w] = ws_catalogue_workload_display(&cat, cfg.workloads[w]);
    double tic_pt = ws_plot_fit_font(names, n_names, 0.9 * (wp - 6 - left)
                                     / (double)(cfg.n_workloads ? cfg.n_workloads : 1),
                                     WS_PLOT_FONT_SMALL);
    fputs("set xtics (", f);
    for (size_t w = 0; w < cfg.n_workloads; w++) {
        fputs(w ? ", " : "", f);
        ws_plot_str_lines(f, ws_catalogue_workload_display(&cat, cfg.workloads[w]));
        fprintf(f, " %zu", w);
    }
    fprintf(f, ") scale 0 font ',%.3g'\nset xrange [-0.5:%g]\n", tic_pt,
            (double)cfg.n_workloads - 0.5);
    /* the bars' numbers half a point under the small font */
    fprintf(f, "x(g) = $3 - 0.4 + (g + 0.5) * bw\n"
               "plot for [g=0:G-1] data skip 1 using ($12 == g ? x(g) : NaN):11 with boxes \\\n"
               "       lc rgb word(colours, g %% 8 + 1) title value(sprintf('gpu%%d', g)), \\\n"
               "     for [g=0:G-1] data skip 1 using ($12 == g ? x(g) : NaN):11:(sprintf('%%.0f', $11)) \\\n"
               "       with labels left rotate by 90 offset 0,0.25 font ',%g' tc rgb '#333333' notitle\n"
               "unset multiplot\n", WS_PLOT_FONT_SMALL - 0.5);
    if (ws_outfile_commit(&od, &err) || ws_outfile_commit(&og, &err)) goto out;
    const char *imgs[3] = {png, svg, pdf};
    if (ws_plot_render(gp, imgs, 3, &err)) goto out;
    if (ws_manifest_add(csv, "table", "energy-saving potential per GPU and workload", command, &err)
        || ws_manifest_add(png, "figure", title, command, &err)
        || ws_manifest_add(svg, "figure", title, command, &err)
        || ws_manifest_add(pdf, "figure", title, command, &err))
        goto out;
    fprintf(ws_cli_out, "outputs in %s/ (potential.csv, potential.gp, potential.png, potential.svg,"
           " potential.pdf)\n", ws_name_show(lo.out, shown, sizeof shown));
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    free(command);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    return rc;
}

static const char *FRONTIERS_HELP =
    "usage: wattsim frontiers [CONFIG] [--gpus LIST] [--workloads LIST]\n"
    "                         [--set K=V]... --out DIR [--force] [--quiet]\n"
    "\n"
    "The pareto figure (see 'wattsim pareto --plot') of every GPU x workload x\n"
    "eta of CONFIG (default: every GPU and workload of the catalogue, eta 0.5):\n"
    "frontier-GPU-WORKLOAD[-etaX].{csv,gp,png,svg,pdf}. Progress (figures done)\n"
    "on stderr once it has taken a second; --quiet turns it off.\n"
    "\n"
    "  --gpus LIST        e.g. v100,a40\n"
    "  --workloads LIST   e.g. cifar100,imagenet\n"
    "  --out DIR          output folder\n"
    "  --force            replace existing outputs\n"
    "  --traces DIR, --catalogue FILE   as for every command\n";

int ws_cmd_frontiers(int argc, char **argv)
{
    ws_progress bar = {0};                    /* silent until started */
    land_opts lo = {0};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_error err = {{0}};
    char shown[WS_CLI_SHOW];
    char *command = ws_command_line(argc + 1, argv - 1);
    int rc;
    ws_run_config_init(&cfg);
    if (land_setup("frontiers", FRONTIERS_HELP, argc, argv, &lo, &cfg, &cat, &rc, &err)) {
        rc = rc ? 2 : 0;
        goto out;
    }
    rc = 2;
    ws_outfile_set_force(lo.force);
    if (ws_outdir_lock(lo.out, &err)) goto out;
    size_t made = 0;
    ws_progress_start(&bar, "figures", cfg.n_gpus * cfg.n_workloads * cfg.n_etas);
    for (size_t g = 0; g < cfg.n_gpus; g++) {
        ws_traces tr = {0};
        ws_csv_limits lim;
        if (ws_cli_limits(NULL, &lim, &err)
            || ws_traces_load(&tr, ws_cli_traces(lo.traces, &cfg), cfg.gpus[g], &lim, &err)) {
            ws_traces_free(&tr);
            goto out;
        }
        for (size_t w = 0; w < cfg.n_workloads; w++)
            for (size_t e = 0; e < cfg.n_etas; e++) {
                ws_job_table jt = {0};
                ws_pareto p = {0};
                const ws_workload_spec *spec = ws_study_workload(&cfg, &cat, cfg.workloads[w], &err);
                int bad = !spec || ws_job_build(&jt, &tr, spec, cfg.etas[e], INFINITY, &err)
                          || ws_pareto_compute(&jt.job, &p, &err);
                char stem[4096], img[4200];
                if (cfg.n_etas > 1)
                    snprintf(stem, sizeof stem, "%s/frontier-%s-%s-eta%g", lo.out, cfg.gpus[g],
                             cfg.workloads[w], cfg.etas[e]);
                else
                    snprintf(stem, sizeof stem, "%s/frontier-%s-%s", lo.out, cfg.gpus[g],
                             cfg.workloads[w]);
                struct stat st;
                snprintf(img, sizeof img, "%s.csv", stem);
                if (!bad && !lo.force && stat(img, &st) == 0) {
                    ws_fail(&err, "%s: exists; pass --force to replace it", img);
                    bad = 1;
                }
                /* png last: the script's default output is then the png. */
                static const char *ext[] = {"svg", "pdf", "png"};
                for (int k = 0; k < 3 && !bad; k++) {
                    snprintf(img, sizeof img, "%s.%s", stem, ext[k]);
                    bad = ws_cli_pareto_plot(img, NULL, spec, &cat, &jt.job, &p, argc + 1,
                                             argv - 1, &err);
                }
                made += !bad;
                ws_progress_step(&bar, 1);
                ws_pareto_free(&p);
                ws_job_free(&jt);
                if (bad) { ws_traces_free(&tr); goto out; }
            }
        ws_traces_free(&tr);
    }
    ws_progress_end(&bar);
    fprintf(ws_cli_out, "%zu frontier figure%s in %s/\n", made, ws_s(made),
            ws_name_show(lo.out, shown, sizeof shown));
    rc = 0;
out:
    ws_progress_end(&bar);
    if (rc && err.msg[0]) ws_cli_die(&err);
    free(command);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    return rc;
}
