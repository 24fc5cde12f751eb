/*
 * The wattsim command line: argument parsing and subcommands only. Every
 * failure prints one line "wattsim: ..." naming the file and line (or the
 * policy and call) and exits with status 2; nothing is written to stdout
 * or to output files before a command has all its results.
 *
 * This file: the dispatcher, the main help, pareto and list. The other
 * commands live one concept a file: run and simulate in cli_run.c, sweep,
 * curves and merge in cli_sweep.c, potential and frontiers in
 * cli_landscape.c, report in cli_report.c, groups in cli_groups.c, trace in
 * cli_trace.c, plan in cli_plan.c, policy in cli_policy.c, serve in
 * cli_serve.c; what they share
 * (global options, trace and catalogue lookup, errors) in cli_common.c.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/config.h"
#include "wattsim/config_opts.h"
#ifdef WS_HAVE_MPI
#include <mpi.h>
#endif
#include "wattsim/engine.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/plugin.h"
#include "wattsim/process.h"
#include "wattsim/progress.h"
#include "wattsim/sha256.h"
#include "wattsim/report.h"
#include "wattsim/study.h"
#include "wattsim/trace.h"
#include "wattsim/whatif.h"
#include "cli_common.h"
#include "cli_sweep.h"
#include "cli_policy.h"
#include "cli_groups.h"
#include "cli_trace.h"
#include "cli_plan.h"
#include "cli_run.h"
#include "cli_serve.h"
#ifdef WS_HAVE_SERVE
#include "serve.h"
#endif

#define EXIT_USAGE WS_EXIT_USAGE


/* ------------------------------------------------------------ pareto */

static const char *PARETO_HELP =
    "usage: wattsim pareto [--gpu G] (--workload W | --job D/N/O --target X\n"
    "                      --max-epochs N --b0 B) [--eta X] [--recurrences N]\n"
    "                      [--format table|csv|json]\n"
    "                      [--plot FILE] [--history FILE] [--style SPEC] [--force]\n"
    "                      [WHAT-IF OPTIONS]\n"
    "\n"
    "Every (batch size, power limit) knob of a job with its expected time- and\n"
    "energy-to-accuracy (TTA, ETA), the TTA/ETA Pareto frontier, the default\n"
    "knob (b0 at the highest power limit), the least-cost knob for eta and the\n"
    "power limit JIT profiling picks per batch size. No simulation: straight\n"
    "from the traces.\n"
    "\n"
    "  --gpu G            GPU; default v100\n"
    "  --workload W       workload of the catalogue; or --job (below)\n"
    "  --eta X            cost weight for `cost` and `best`; default 0.5\n"
    "  --recurrences N    under --objective carbon or price, `cost` and `best` are\n"
    "                     the expected cost per run over N runs from --start on\n"
    "                     the schedule (--every), as `wattsim plan` ranks them;\n"
    "                     default 2*|B|*|P|\n"
    "  --format F         table (default), csv or json\n"
    "  --plot FILE        also draw the figure: FILE.png, FILE.svg or FILE.pdf,\n"
    "                     with its data (.csv) and gnuplot script (.gp) beside it\n"
    "  --history FILE     mark the knob a policy settled on (last reached run of\n"
    "                     the first matching simulation of a `wattsim run`\n"
    "                     history.csv)\n"
    "  --style SPEC       the figure's style, as a config's `style` key:\n"
    "                     \"font=NAME, size=PT, col2=IN, palette=NAME\"\n"
    "  --force            replace an existing FILE and its .csv and .gp (never an\n"
    "                     input of the command, such as a trace)\n"
    WS_CLI_JOB_HELP
    "\n" WS_CLI_WHATIF_HELP;

static int cmd_pareto(int argc, char **argv, ws_cli_globals *g)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, OPT_GPU},
        {"workload", required_argument, 0, OPT_WORKLOAD},
        {"eta", required_argument, 0, OPT_ETA},
        {"recurrences", required_argument, 0, 'R'},
        {"format", required_argument, 0, OPT_FORMAT},
        {"plot", required_argument, 0, 'P'},
        {"history", required_argument, 0, 'H'},
        {"style", required_argument, 0, 'S'},
        {"force", no_argument, 0, OPT_FORCE},
        WS_CLI_JOB_OPTIONS, WS_CLI_WHATIF_OPTIONS, WS_CLI_GLOBAL_OPTIONS, {0, 0, 0, 0},
    };
    const char *plot = NULL, *history = NULL;
    ws_error err = {{0}};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_traces tr = {0};
    ws_job_table jt = {0};
    ws_pareto par = {0};
    ws_whatif wi = {0};
    int rc = EXIT_USAGE, c, workload = 0, is_wi;
    const char *format = "table";
    ws_cli_job job = {0};
    ws_run_config_init(&cfg);
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_global_opt(g, c, optarg) || ws_cli_job_opt(&job, c, optarg)) continue;
        if ((is_wi = ws_cli_whatif_opt(&cfg, c, optarg, &err)) < 0) goto out;
        if (is_wi) continue;
        switch (c) {
        case WS_OPT_HELP:
            fprintf(ws_cli_out, "%s\n%s", PARETO_HELP, WS_CLI_GLOBAL_HELP);
            rc = 0;
            goto out;
        case OPT_GPU: if (ws_cli_set_kv(&cfg, "gpu", optarg, "--gpu", &err)) goto out; break;
        case OPT_WORKLOAD:
            workload = 1;
            if (ws_cli_set_kv(&cfg, "workload", optarg, "--workload", &err)) goto out;
            break;
        case OPT_ETA: if (ws_cli_set_kv(&cfg, "eta", optarg, "--eta", &err)) goto out; break;
        case OPT_FORMAT: format = optarg; break;
        case 'R':
            if (ws_cli_set_kv(&cfg, "recurrences", optarg, "--recurrences", &err)) goto out;
            break;
        case 'P': plot = optarg; break;
        case 'H': history = optarg; break;
        case 'S': if (ws_cli_set_kv(&cfg, "style", optarg, "--style", &err)) goto out; break;
        case OPT_FORCE: ws_outfile_set_force(1); break;
        default: rc = ws_cli_bad_option("pareto", argv, c); goto out;
        }
    }
    if ((rc = ws_cli_one_workload("pareto", argc, argv, workload, &job))) goto out;
    rc = EXIT_USAGE;
    if (plot && ws_cli_check_plot_name("pareto", plot)) goto out;
    if ((rc = ws_cli_job_apply(&job, &cfg, "pareto"))) goto out;
    rc = EXIT_USAGE;
    if (ws_config_relabel_axis(&cfg.where_gpus, "--gpu", &err)
        || ws_config_relabel_axis(&cfg.where_workloads, "--workload", &err))
        goto out;
    int fmt = ws_format_parse(format);
    if (fmt < 0) {
        rc = ws_cli_usage("pareto", "unknown format '%s' (table, csv or json)", format);
        goto out;
    }
    if (cfg.n_gpus != 1 || cfg.n_workloads + cfg.n_jobs != 1 || cfg.n_etas != 1) {
        ws_fail(&err, "pareto takes one GPU, one workload and one eta");
        goto out;
    }
    if (ws_run_config_validate(&cfg, &err) || ws_cli_style(&cfg, &err) || ws_cli_trace_limits(g, &err)
        || ws_cli_catalogue(g->catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, &g->limits, &err))
        goto out;
    const ws_workload_spec *spec = cfg.n_jobs ? &cfg.jobs[0]
        : ws_study_workload(&cfg, &cat, cfg.workloads[0], &err);
    ws_study_env env = {ws_cli_traces(g->traces, NULL), &cat, NULL, &g->limits, 0, &wi};
    if (!spec || ws_study_traces(&cfg, &env, cfg.gpus[0], &tr, &err)
        || ws_study_job(&wi, &tr, spec, cfg.etas[0], INFINITY, &jt, 1, &err)
        || ws_pareto_compute(&jt.job, &par, &err))
        goto out;
    /* Rank by the objective, over the horizon plan uses. */
    ws_pareto_objective(&jt.job, &wi,
                        cfg.recurrences > 0 ? cfg.recurrences : jt.default_recurrences, &par);
    if (history && !plot) {
        rc = ws_cli_usage("pareto", "%s", "--history needs --plot FILE");
        goto out;
    }
    if (plot && ws_cli_pareto_plot(plot, history, spec, &cat, &jt.job, &par, 0, NULL, &err))
        goto out;
    ws_report_pareto(ws_cli_out, (ws_format)fmt, &jt.job, &par, &wi);
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_whatif_free(&wi);
    ws_pareto_free(&par);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ list */

static const char *LIST_HELP =
    "usage: wattsim list workloads|gpus|policies [--plugin FILE.so]...\n"
    "\n"
    "  workloads   the workload catalogue (dataset, network, optimizer, target,\n"
    "              max epochs, b0)\n"
    "  gpus        GPUs with a power trace in the trace folder\n"
    "  policies    BSO and PLO policies with their parameters: the built-in\n"
    "              ones and those of the folders in $WATTSIM_POLICY_DIR\n"
    "  --plugin F  with policies: describe the plugin file F instead (its ABI\n"
    "              version, sha256 and policies); may be repeated\n";

/* A plugin's text (a name, a summary, a parameter's help or default) as
 * messages show it: escaped (wattsim/error.h), so that a plugin cannot
 * drive the terminal of whoever lists it. One of three buffers, in turn. */
static const char *shown(const char *s)
{
    static char buf[3][2048];
    static int k;
    k = (k + 1) % 3;
    ws_text_escape(buf[k], sizeof buf[k], s ? s : "");
    return buf[k];
}

static void print_params(const ws_param_spec *ps)
{
    for (size_t i = 0; ps && ps[i].name; i++) {
        const ws_param_spec *p = &ps[i];
        switch (p->kind) {
        /* an int's bounds as integers (0..1000000000, not 0..1e+09) */
        case WS_PARAM_INT: fprintf(ws_cli_out, "      %s (int, default %ld, %.0f..%.0f): %s\n",
                                  shown(p->name), p->def.i, p->min, p->max,
                                  shown(p->help)); break;
        case WS_PARAM_DOUBLE: fprintf(ws_cli_out, "      %s (number, default %g, %g..%g): %s\n",
                                     shown(p->name), p->def.d, p->min, p->max,
                                     shown(p->help)); break;
        case WS_PARAM_BOOL: fprintf(ws_cli_out, "      %s (bool, default %s): %s\n", shown(p->name),
                                   p->def.b ? "true" : "false", shown(p->help)); break;
        case WS_PARAM_STRING: fprintf(ws_cli_out, "      %s (string, default \"%s\"): %s\n", shown(p->name),
                                     shown(p->def.s), shown(p->help)); break;
        }
    }
}

static void print_policies(const ws_registry *reg, int (*keep)(const char *file, void *),
                           void *ctx)
{
    fprintf(ws_cli_out, "batch-size optimizers (bso):\n");
    for (size_t i = 0; i < ws_registry_n_bso(reg); i++) {
        const ws_bso_type *t = ws_registry_bso_at(reg, i);
        if (keep && !keep(ws_registry_bso_file(reg, i), ctx)) continue;
        fprintf(ws_cli_out, "  %-10s %s\n", shown(t->name), shown(t->summary));
        print_params(t->params);
    }
    fprintf(ws_cli_out, "power-limit optimizers (plo):\n");
    for (size_t i = 0; i < ws_registry_n_plo(reg); i++) {
        const ws_plo_type *t = ws_registry_plo_at(reg, i);
        if (keep && !keep(ws_registry_plo_file(reg, i), ctx)) continue;
        fprintf(ws_cli_out, "  %-10s %s\n", shown(t->name), shown(t->summary));
        print_params(t->params);
    }
}

static int same_file(const char *file, void *want) { return !strcmp(file, want); }

/* `list policies --plugin FILE`: one plugin, loaded on its own (so that it
 * can be described even when its names clash with the built-ins). */
static int list_plugin(const char *path)
{
    ws_error err = {{0}};
    char hash[65];
    ws_registry *reg = ws_registry_new();
    if (!reg) return ws_cli_die(&(ws_error){"out of memory"});
    if (ws_registry_load_file(reg, path, &err) || ws_sha256_file(path, hash, &err)) {
        ws_registry_free(reg);
        return ws_cli_die(&err);
    }
    char *real = realpath(path, NULL);
    int abi = ws_registry_n_bso(reg) ? ws_registry_bso_abi(reg, 0) : ws_registry_plo_abi(reg, 0);
    fprintf(ws_cli_out, "%s: policy ABI %d.%d, sha256 %s\n", shown(real ? real : path), abi / 100, abi % 100,
           hash);
    print_policies(reg, same_file, real);
    free(real);
    ws_registry_free(reg);
    return 0;
}

static int cmd_list(int argc, char **argv, ws_cli_globals *g)
{
    enum { OPT_PLUGIN = 300 };
    static const struct option opts[] = {
        WS_CLI_INPUT_OPTIONS, {"plugin", required_argument, 0, OPT_PLUGIN}, {0, 0, 0, 0}};
    int c;
    const char **plugins = calloc((size_t)argc, sizeof *plugins);
    size_t n_plugins = 0;
    if (!plugins) return ws_cli_die(&(ws_error){"out of memory"});
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_global_opt(g, c, optarg)) continue;
        if (c == OPT_PLUGIN) { plugins[n_plugins++] = optarg; continue; }
        free(plugins);
        if (c == WS_OPT_HELP) {
            fprintf(ws_cli_out, "%s\n%s", LIST_HELP, WS_CLI_INPUT_HELP);
            return 0;
        }
        return ws_cli_bad_option("list", argv, c);
    }
    if (optind != argc - 1) {
        free(plugins);
        return ws_cli_usage("list", "%s", "needs one of: workloads, gpus, policies");
    }
    const char *what = argv[optind];
    if (n_plugins && strcmp(what, "policies")) {
        free(plugins);
        return ws_cli_usage("list", "%s", "--plugin goes with 'list policies'");
    }
    if (n_plugins) {
        int rc = 0;
        for (size_t i = 0; i < n_plugins && !rc; i++) {
            if (i) fprintf(ws_cli_out, "\n");
            rc = list_plugin(plugins[i]);
        }
        free(plugins);
        return rc;
    }
    free(plugins);
    ws_error err = {{0}};
    if (!strcmp(what, "workloads")) {
        ws_catalogue cat = {0};
        if (ws_cli_catalogue(g->catalogue, &cat, &err)) { ws_catalogue_free(&cat); return ws_cli_die(&err); }
        fprintf(ws_cli_out, "%-14s %-14s %-18s %-10s %-16s %10s %6s\n", "workload", "dataset",
                "network", "optimizer", "target", "max_epochs", "b0");
        for (size_t i = 0; i < cat.n; i++) {
            const ws_workload_spec *w = &cat.items[i];
            /* the target with its metric and which way it improves:
             * "accuracy >= 0.6", "WER <= 40"; the number alone when the
             * catalogue does not say */
            char target[WS_DISPLAY_MAX + 40];
            snprintf(target, sizeof target, "%s%s%g", w->metric ? w->metric : "",
                     !w->metric ? "" : w->better > 0 ? " >= " : w->better < 0 ? " <= " : " ",
                     w->target_metric);
            fprintf(ws_cli_out, "%-14s %-14s %-18s %-10s %-16s %10d %6d\n", w->name, w->dataset,
                    w->network, w->optimizer, shown(target), w->max_epochs, w->b0);
        }
        ws_catalogue_free(&cat);
        return 0;
    }
    if (!strcmp(what, "gpus")) {
        char **gpus;
        const char *dir = ws_cli_traces(g->traces, NULL);
        int n = ws_trace_gpus(dir, &gpus, &err);
        if (n < 0) return ws_cli_die(&err);
        for (int i = 0; i < n; i++) {
            fprintf(ws_cli_out, "%s\n", gpus[i]);
            free(gpus[i]);
        }
        free(gpus);
        if (n == 0) {
            ws_line("wattsim: %s: no summary_power_<gpu>.csv[.gz] files", dir);
            return EXIT_USAGE;
        }
        return 0;
    }
    if (!strcmp(what, "policies")) {
        ws_registry *reg = ws_registry_new();
        if (!reg || ws_registry_scan(reg, &err)) {
            ws_registry_free(reg);
            return ws_cli_die(&err);
        }
        print_policies(reg, NULL, NULL);
        const char *dir = ws_policy_dir(), *extra = getenv("WATTSIM_POLICY_DIR");
        fprintf(ws_cli_out, "(from %s%s%s)\n", shown(dir), dir && extra && *extra ? ":" : "", shown(extra));
        const char *first;
        size_t broken = ws_registry_broken(reg, &first);
        if (broken)
            ws_line("wattsim: warning: %zu plugin%s in the policy folders did not"
                    " load, first: %s", broken, broken > 1 ? "s" : "", first);
        ws_registry_free(reg);
        return 0;
    }
    return ws_cli_usage("list", "unknown list '%s' (workloads, gpus or policies)", what);
}

/* ------------------------------------------------------------ main */

static const char *MAIN_HELP =
    "usage: wattsim [--version] [--help] COMMAND [ARGS]\n"
    "\n"
    "Trace-driven simulation of the energy/time trade-off of recurring DNN\n"
    "training jobs (batch size and GPU power limit chosen by pluggable\n"
    "policies), replaying the Zeus (NSDI'23) traces.\n"
    "\n"
    "Commands:\n"
    "  run CONFIG     run a study described by a YAML config\n"
    "  simulate       simulate one recurring job and print its history\n"
    "  plan           what to set for a job, what it saves, when learning pays\n"
    "  pareto         the TTA/ETA trade-off of every knob of a job\n"
    "  list           workloads, GPUs or policies\n"
    "  sweep CONFIG   a run plan over policies with CIs, savings and regret\n"
    "  curves CONFIG  cumulative cost and regret per recurrence, per policy\n"
    "  merge sweep|curves CONFIG DIR...  outputs from the journals of --shard runs\n"
    "  potential      energy saving potential of every GPU and workload\n"
    "  frontiers      pareto figures of every GPU x workload of a config\n"
    "  report DIR     index (REPORT.md, report.html) of figures and tables\n"
    "  groups         concurrent recurrences: synth or replay a group trace\n"
    "  trace          import your own telemetry and metrics; check a trace folder\n"
    "  policy         new: a policy skeleton; check: a plugin's conformance\n"
    "  serve          Zeus's batch-size optimizer REST API, state in SQLite\n"
    "\n"
    "'wattsim COMMAND --help' describes a command.\n";

static int wattsim_main(int argc, char **argv);

int main(int argc, char **argv)
{
    /* Before anything opens a file: descriptors 0-2 open, SIGXFSZ ignored,
     * this thread in the C locale, the working folder held; results on a
     * private duplicate of stdout, descriptor 1 on stderr from here on. */
    if (ws_process_init()) return EXIT_USAGE;
    if (!(ws_cli_out = ws_stdout_private())) {
        ws_line("wattsim: standard output: cannot duplicate it: %s", strerror(errno));
        return 1;
    }
    ws_outfile_init();
#ifdef WS_HAVE_MPI
    /* Started by mpirun/srun: join MPI_COMM_WORLD (sweep and curves shard
     * their simulations over it). A plain start stays a plain process. */
    int launched = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK")
                   || getenv("PMI_RANK") || getenv("PMI_SIZE");
    if (launched) MPI_Init(&argc, &argv);
    int rc = wattsim_main(argc, argv);
    if (launched) MPI_Finalize();
    return rc;
#else
    return wattsim_main(argc, argv);
#endif
}

static int wattsim_main(int argc, char **argv)
{
    ws_cli_globals g = {0};
    ws_host_signals_install();     /* no half-written output outlives a crash */
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(MAIN_HELP, ws_cli_out);
        return ws_cli_exit(0);
    }
    if (!strcmp(cmd, "--version")) {
        fprintf(ws_cli_out, "%s\n", ws_version_line());
        return ws_cli_exit(0);
    }
    opterr = 0;
    /* --allow-remote (run, simulate, sweep, curves): an http:// BSO may be
     * a server on another host (docs/serve.md). Taken out here, where the
     * client is installed, before the command parses the rest. */
    int remote = 0;
    if (!strcmp(cmd, "run") || !strcmp(cmd, "simulate") || !strcmp(cmd, "sweep") || !strcmp(cmd, "curves")) {
        int k = 2;
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "--")) {
                while (i < argc) argv[k++] = argv[i++];
                break;
            }
            if (!strcmp(argv[i], "--allow-remote")) remote = 1;
            else argv[k++] = argv[i];
        }
        argc = k;
        argv[argc] = NULL;
    }
#ifdef WS_HAVE_SERVE
    ws_serve_client_install(remote);
#else
    if (remote) {
        ws_line("wattsim %s: --allow-remote: this wattsim was built without the http:// client (WS_SERVE)", cmd);
        return EXIT_USAGE;
    }
#endif
    int rc;
    if (!strcmp(cmd, "run")) rc = ws_cmd_run(argc - 1, argv + 1, &g);
    else if (!strcmp(cmd, "simulate")) rc = ws_cmd_simulate(argc - 1, argv + 1, &g);
    else if (!strcmp(cmd, "pareto")) rc = cmd_pareto(argc - 1, argv + 1, &g);
    else if (!strcmp(cmd, "list")) rc = cmd_list(argc - 1, argv + 1, &g);
    else if (!strcmp(cmd, "sweep")) rc = ws_cmd_sweep(argc - 1, argv + 1, 0, 0);
    else if (!strcmp(cmd, "curves")) rc = ws_cmd_sweep(argc - 1, argv + 1, 1, 0);
    else if (!strcmp(cmd, "merge") && argc > 2 && !strcmp(argv[2], "sweep"))
        rc = ws_cmd_sweep(argc - 2, argv + 2, 0, 1);
    else if (!strcmp(cmd, "merge") && argc > 2 && !strcmp(argv[2], "curves"))
        rc = ws_cmd_sweep(argc - 2, argv + 2, 1, 1);
    else if (!strcmp(cmd, "merge") && argc > 2
             && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
        rc = ws_cmd_sweep(argc - 1, argv + 1, 0, 1);     /* merge's own help */
    else if (!strcmp(cmd, "merge")) {
        fputs("wattsim merge: usage: wattsim merge sweep|curves CONFIG DIR... [options]"
              " (see 'wattsim merge --help')\n", stderr);
        return EXIT_USAGE;
    }
    else if (!strcmp(cmd, "potential")) rc = ws_cmd_potential(argc - 1, argv + 1);
    else if (!strcmp(cmd, "frontiers")) rc = ws_cmd_frontiers(argc - 1, argv + 1);
    else if (!strcmp(cmd, "report")) rc = ws_cmd_report(argc - 1, argv + 1);
    else if (!strcmp(cmd, "groups")) rc = ws_cli_groups(argc - 1, argv + 1);
    else if (!strcmp(cmd, "trace")) rc = ws_cli_trace(argc - 1, argv + 1);
    else if (!strcmp(cmd, "plan")) rc = ws_cmd_plan(argc - 1, argv + 1);
    else if (!strcmp(cmd, "policy")) rc = ws_cmd_policy(argc - 1, argv + 1);
    else if (!strcmp(cmd, "serve")) rc = ws_cmd_serve(argc - 1, argv + 1);
    else {
        ws_line("wattsim: unknown command '%s' (see 'wattsim --help')", cmd);
        return EXIT_USAGE;
    }
    /* A failed command leaves no folder it made behind. */
    if (rc == EXIT_USAGE) ws_outfile_cleanup();
    return ws_cli_exit(rc);
}
