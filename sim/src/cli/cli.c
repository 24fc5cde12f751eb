/*
 * The wattsim command line: argument parsing and subcommands only. Every
 * failure prints one line "wattsim: ..." naming the file and line (or the
 * policy and call) and exits with status 2; nothing is written to stdout
 * or to output files before a command has all its results.
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
#ifdef WS_HAVE_MPI
#include <mpi.h>
#endif
#include "wattsim/engine.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/plugin.h"
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

#ifndef WS_VERSION
#define WS_VERSION "0.0.0"
#endif

#define EXIT_USAGE WS_EXIT_USAGE

/* Options every command takes. */
typedef struct globals {
    const char *traces;
    const char *catalogue;
    int verbose;
    const char *max_trace_bytes;     /* --max-trace-bytes, unparsed */
    ws_csv_limits limits;            /* filled by trace_limits() */
} globals;

enum { OPT_TRACES = 1000, OPT_CATALOGUE, OPT_SET, OPT_OUT, OPT_FORMAT, OPT_FORCE,
       OPT_GPU, OPT_WORKLOAD, OPT_ETA, OPT_BETA, OPT_SEED, OPT_RECURRENCES,
       OPT_BSO, OPT_PLO, OPT_BSO_PARAM, OPT_PLO_PARAM, OPT_HELP, OPT_VERBOSE,
       OPT_MAX_TRACE_BYTES, OPT_QUIET };

#define GLOBAL_OPTIONS                                         \
    {"traces", required_argument, 0, OPT_TRACES},              \
    {"catalogue", required_argument, 0, OPT_CATALOGUE},        \
    {"verbose", no_argument, 0, OPT_VERBOSE},                  \
    {"quiet", no_argument, 0, OPT_QUIET},                      \
    {"max-trace-bytes", required_argument, 0, OPT_MAX_TRACE_BYTES}, \
    {"help", no_argument, 0, OPT_HELP}

static const char *GLOBAL_HELP =
    "Options of every command:\n"
    "  --traces DIR       trace folder (default: $WATTSIM_TRACES, else the\n"
    "                     fetched Zeus traces in share/wattsim/traces/zeus-nsdi23\n"
    "                     beside the executable's folder)\n"
    "  --catalogue FILE   workload catalogue (default: $WATTSIM_CATALOGUE, else\n"
    "                     share/wattsim/workloads.yaml beside the executable's\n"
    "                     folder)\n"
    "  --verbose          let policies log what they do (stderr)\n"
    "  --quiet            no progress display (a bar on a terminal, else a\n"
    "                     line every 10 s, for commands running over 1 s)\n"
    "  --max-trace-bytes N  refuse a trace file larger than N bytes once\n"
    "                     decompressed (suffix K, M or G; default:\n"
    "                     $WATTSIM_MAX_TRACE_BYTES, else 1G)\n"
    "  --help             this help\n";



/* Handle a global option; 1 if it was one. */
static int global_opt(globals *g, int c, const char *arg)
{
    switch (c) {
    case OPT_TRACES: g->traces = arg; return 1;
    case OPT_CATALOGUE: g->catalogue = arg; return 1;
    case OPT_VERBOSE: g->verbose = 1; ws_policy_set_log_level(WS_LOG_DEBUG); return 1;
    case OPT_MAX_TRACE_BYTES: g->max_trace_bytes = arg; return 1;
    case OPT_QUIET: ws_progress_set_quiet(1); return 1;
    }
    return 0;
}

/* The decompressed-size limit per trace file, so that a gzip bomb fails
 * with a message instead of filling memory: --max-trace-bytes, else
 * $WATTSIM_MAX_TRACE_BYTES, else the reader's default (0 here). */
static int trace_limits(globals *g, ws_error *err)
{
    return ws_cli_limits(g->max_trace_bytes, &g->limits, err);
}




/* ------------------------------------------------------------ run */

static const char *RUN_HELP =
    "usage: wattsim run CONFIG [--set KEY=VALUE]... [--out DIR] [--format table|csv|json] [--force]\n"
    "\n"
    "Run every cell of a config's run plan (gpu x workload x eta x beta x seed)\n"
    "and write summary.csv, summary.json and history.csv into the output folder.\n"
    "The summary is printed in the chosen format (table: means over seeds).\n"
    "\n"
    "  --set KEY=VALUE    override a config key, e.g. --set eta=0.3,\n"
    "                     --set seeds=1..100, --set bso.params.window=10\n"
    "  --out DIR          output folder (default: the config's `out`)\n"
    "  --format F         stdout format: table (default), csv or json\n"
    "  --force            replace existing outputs in the folder\n"
    WS_CLI_JOB_HELP
    "                     (added to the config's workloads and jobs)\n"
    "\n" WS_CLI_WHATIF_HELP;

typedef struct history_ctx {
    FILE *f;
    const ws_whatif *wi;
} history_ctx;

static int history_sink(void *p, const ws_cell *c, const ws_run_record *r, ws_error *err)
{
    history_ctx *h = p;
    ws_report_history_row(h->f, c, r, h->wi);
    return 0;
}

static int write_summary(const char *dir, const char *name, ws_format fmt,
                         const ws_cell_result *res, size_t n, const char *bso,
                         const char *plo, const ws_whatif *wi, const ws_policy_prov *prov,
                         ws_outfile *o, ws_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ws_outfile_open(o, path, err)) return -1;
    ws_report_cells(o->f, fmt, res, n, bso, plo, wi, prov);
    return 0;
}

/* The run's policies: their parameters as resolved and their files' hashes. */
static int policy_prov(ws_registry *reg, const ws_run_config *cfg, ws_policy_prov *pv,
                       ws_error *err)
{
    const ws_bso_type *bt = ws_registry_bso(reg, cfg->bso.name, err);
    const ws_plo_type *pt = bt ? ws_registry_plo(reg, cfg->plo.name, err) : NULL;
    ws_value *bv = NULL, *pv_ = NULL;
    int rc = -1;
    if (!pt || ws_params_resolve(bt->params, cfg->bso.params, cfg->bso.n_params, "bso", &bv, err)
        || ws_params_resolve(pt->params, cfg->plo.params, cfg->plo.n_params, "plo", &pv_, err))
        goto out;
    if (ws_params_format(bt->params, bv, pv->bso_params, sizeof pv->bso_params)
        || ws_params_format(pt->params, pv_, pv->plo_params, sizeof pv->plo_params)) {
        ws_fail(err, "policy parameters too long to record");
        goto out;
    }
    rc = ws_registry_sha256(reg, bt, pv->bso_sha256, err)
         || ws_registry_sha256(reg, pt, pv->plo_sha256, err) ? -1 : 0;
out:
    if (bt) ws_params_free(bt->params, bv);
    if (pt) ws_params_free(pt->params, pv_);
    return rc;
}

/* One Pareto figure per (gpu, workload) of a run, in `out`, with the knob
 * the policies settled on in the first cell of that pair marked. */
static int plot_runs(const char *out, const ws_run_config *cfg, const ws_study_env *env,
                     const ws_cell_result *res, size_t n, const char *bso,
                     const char *plo, ws_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const ws_cell *c = &res[i].cell;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(res[j].cell.gpu, c->gpu) && !strcmp(res[j].cell.workload, c->workload);
        if (seen) continue;
        ws_traces tr = {0};
        ws_job_table jt = {0};
        ws_pareto par = {0};
        const ws_workload_spec *spec = ws_study_workload(cfg, env->catalogue, c->workload, err);
        int rc = !spec || ws_study_traces(cfg, env, c->gpu, &tr, err)
                 || ws_study_job(env->whatif, &tr, spec, c->eta, c->beta, &jt, 0, err)
                 || ws_pareto_compute(&jt.job, &par, err);
        if (!rc) {
            char label[128], path[4096];
            snprintf(label, sizeof label, "%s+%s settled (seed %lu)", bso, plo, c->seed);
            snprintf(path, sizeof path, "%s/pareto-%s-%s.png", out, c->gpu, c->workload);
            ws_settled st = {res[i].tot.final_bs, res[i].tot.final_pl, label};
            char subject[256];
            snprintf(subject, sizeof subject, "%s, %s", spec->display ? spec->display : spec->name,
                     ws_catalogue_gpu_display(env->catalogue, c->gpu));
            rc = ws_plot_pareto(path, &jt.job, &par, &st, subject, err);
        }
        ws_pareto_free(&par);
        ws_job_free(&jt);
        ws_traces_free(&tr);
        if (rc) return -1;
    }
    return 0;
}

static int cmd_run(int argc, char **argv, globals *g)
{
    static const struct option opts[] = {
        {"set", required_argument, 0, OPT_SET},
        {"out", required_argument, 0, OPT_OUT},
        {"format", required_argument, 0, OPT_FORMAT},
        {"force", no_argument, 0, OPT_FORCE},
        WS_CLI_JOB_OPTIONS, WS_CLI_WHATIF_OPTIONS, GLOBAL_OPTIONS, {0, 0, 0, 0},
    };
    const char *out = NULL, *format = NULL;
    ws_cli_job job = {0};
    int force = 0, c;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int n_sets = 0, n_wi = 0;
    struct { int c; const char *arg; } *wis = calloc((size_t)argc + 1, sizeof *wis);
    if (!sets || !wis) { free(sets); free(wis); return EXIT_USAGE; }
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (global_opt(g, c, optarg) || ws_cli_job_opt(&job, c, optarg)) continue;
        if (c >= WS_OPT_POWER_CAP && c <= WS_OPT_OBJECTIVE) {
            wis[n_wi].c = c;       /* applied after the config is read */
            wis[n_wi++].arg = optarg;
            continue;
        }
        switch (c) {
        case OPT_HELP: printf("%s\n%s", RUN_HELP, GLOBAL_HELP); free(sets); free(wis); return 0;
        case OPT_SET: sets[n_sets++] = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_FORCE: force = 1; break;
        default: free(sets); free(wis); return ws_cli_bad_option("run", argv, c);
        }
    }
    if (optind != argc - 1) {
        free(sets);
        free(wis);
        return ws_cli_usage("run", "%s", optind >= argc ? "needs a CONFIG file"
                                                         : "takes one CONFIG file");
    }
    ws_error err = {{0}};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_registry *reg = ws_registry_new();
    ws_cell_result *res = NULL;
    size_t n = 0;
    ws_outfile of[3] = {{0}};
    ws_whatif wi = {0};
    int rc = EXIT_USAGE;
    ws_run_config_init(&cfg);
    if (ws_run_config_load(argv[optind], &cfg, &err)) goto out;
    for (int i = 0; i < n_sets; i++)
        if (ws_run_config_set(&cfg, sets[i], &err)) goto out;
    for (int i = 0; i < n_wi; i++)
        if (ws_cli_whatif_opt(&cfg, wis[i].c, wis[i].arg, &err) < 0) goto out;
    if ((rc = ws_cli_job_apply(&job, &cfg, "run"))) goto out;
    rc = EXIT_USAGE;
    if (ws_run_config_validate(&cfg, &err)) goto out;
    if (!format) format = cfg.format ? cfg.format : "table";
    int fmt = ws_format_parse(format);
    if (fmt < 0) {
        rc = ws_cli_usage("run", "unknown format '%s' (table, csv or json)", format);
        goto out;
    }
    if (!out) out = cfg.out_dir;
    if (!out) {
        ws_fail(&err, "%s: no output folder: add `out: DIR` to the config or pass --out DIR",
                cfg.path);
        goto out;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.csv", out);
    struct stat st;
    if (!force && stat(path, &st) == 0) {
        ws_fail(&err, "%s: outputs of an earlier run are there; pass --force to replace"
                " them or --out another folder", out);
        goto out;
    }
    if (trace_limits(g, &err) || ws_cli_catalogue(g->catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, &g->limits, &err))
        goto out;
    /* A failed run leaves no trace: not even the folder, if it made it
     * (main's ws_outfile_cleanup removes every folder made on the way). */
    ws_outfile_set_force(force);
    if (ws_outdir_lock(out, &err)) goto out;
    snprintf(path, sizeof path, "%s/history.csv", out);
    if (ws_outfile_open(&of[0], path, &err)) goto out;
    ws_report_history_header(of[0].f, &wi);
    history_ctx hc = {of[0].f, &wi};
    ws_study_env env = {ws_cli_traces(g->traces, &cfg), &cat, reg, &g->limits, 1, &wi};
    if (ws_study_run(&cfg, &env, history_sink, &hc, &res, &n, &err)) goto out;
    const char *bso = ws_registry_bso(reg, cfg.bso.name, &err)->name;
    const char *plo = ws_registry_plo(reg, cfg.plo.name, &err)->name;
    ws_policy_prov prov;
    if (policy_prov(reg, &cfg, &prov, &err)
        || write_summary(out, "summary.csv", WS_FMT_CSV, res, n, bso, plo, &wi, &prov, &of[1],
                         &err)
        || write_summary(out, "summary.json", WS_FMT_JSON, res, n, bso, plo, &wi, &prov,
                         &of[2], &err))
        goto out;
    /* summary.csv last, after the figures: its presence marks a complete
     * run. */
    if (ws_outfile_commit(&of[0], &err) || ws_outfile_commit(&of[2], &err)
        || plot_runs(out, &cfg, &env, res, n, bso, plo, &err)
        || ws_outfile_commit(&of[1], &err))
        goto out;
    ws_report_cells(stdout, (ws_format)fmt, res, n, bso, plo, &wi, NULL);
    long wrapped = 0;
    for (size_t i = 0; i < n; i++) wrapped += res[i].tot.wrapped;
    ws_study_wrap_note(&wi, wrapped);
    if (fmt == WS_FMT_TABLE)
        printf("\n%zu cells; outputs in %s/ (summary.csv, summary.json, history.csv,"
               " pareto-GPU-WORKLOAD.png)\n", n, out);
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    for (int i = 0; i < 3; i++) ws_outfile_abort(&of[i]);
    ws_whatif_free(&wi);
    free(res);
    free(sets);
    free(wis);
    ws_registry_free(reg);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ simulate */

static const char *SIMULATE_HELP =
    "usage: wattsim simulate --gpu G (--workload W | --job D/N/O --target X\n"
    "                        --max-epochs N --b0 B) [--eta X] [--beta X] [--seed N]\n"
    "                        [--recurrences N] [--bso NAME] [--plo NAME]\n"
    "                        [--bso-param K=V]... [--plo-param K=V]... [--format table|json]\n"
    "\n"
    "Simulate one recurring job and print every run (table) or one JSON object\n"
    "with the totals and the history.\n"
    "\n"
    "  --gpu G            GPU (see 'wattsim list gpus'); default v100\n"
    "  --workload W       workload (see 'wattsim list workloads'); required\n"
    "  --eta X            cost weight of energy, in [0, 1]; default 0.5\n"
    "  --beta X           early-stopping factor (inf = off); default 2\n"
    "  --seed N           random seed; default 1\n"
    "  --recurrences N    default 2*|B|*|P|; at most 10000000\n"
    "  --bso NAME         batch-size optimizer or path to a .so; default zeus\n"
    "  --plo NAME         power-limit optimizer or path to a .so; default jit\n"
    "  --bso-param K=V    a BSO parameter (see 'wattsim list policies')\n"
    "  --plo-param K=V    a PLO parameter\n"
    "  --format F         table (default) or json\n"
    WS_CLI_JOB_HELP
    "\n" WS_CLI_WHATIF_HELP;

typedef struct records {
    ws_run_record *r;
    size_t n, cap;
} records;

static int collect(void *p, const ws_cell *c, const ws_run_record *r, ws_error *err)
{
    records *h = p;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        ws_run_record *q = realloc(h->r, cap * sizeof *q);
        if (!q) return ws_fail(err, "out of memory");
        h->r = q;
        h->cap = cap;
    }
    h->r[h->n++] = *r;
    return 0;
}

/* KEY=VALUE into the config from option `opt` (e.g. --eta), whose name
 * an error carries. */
static int set_kv(ws_run_config *cfg, const char *key, const char *value, const char *opt,
                  ws_error *err)
{
    size_t len = strlen(key) + strlen(value) + 2;
    char *s = malloc(len);
    if (!s) return ws_fail(err, "out of memory");
    snprintf(s, len, "%s=%s", key, value);
    int rc = ws_run_config_set(cfg, s, err);
    free(s);
    if (rc) ws_cli_relabel(err, key, opt);
    return rc;
}

/* Values given as --bso/--plo/--*-param went through ws_run_config_set,
 * which labels them "--set"; name the option the user typed instead. */
static int relabel_axis(char **where, const char *opt, ws_error *err)
{
    if (!*where || strcmp(*where, "--set")) return 0;
    free(*where);
    return (*where = strdup(opt)) ? 0 : ws_fail(err, "out of memory");
}

static int relabel(ws_policy_ref *p, const char *opt, const char *param_opt, ws_error *err)
{
    if (p->where && !strcmp(p->where, "--set")) {
        free(p->where);
        if (!(p->where = strdup(opt))) return ws_fail(err, "out of memory");
    }
    for (size_t i = 0; i < p->n_params; i++)
        if (p->params[i].where && !strcmp(p->params[i].where, "--set")) {
            free(p->params[i].where);
            if (!(p->params[i].where = strdup(param_opt))) return ws_fail(err, "out of memory");
        }
    return 0;
}

static int cmd_simulate(int argc, char **argv, globals *g)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, OPT_GPU},
        {"workload", required_argument, 0, OPT_WORKLOAD},
        {"eta", required_argument, 0, OPT_ETA},
        {"beta", required_argument, 0, OPT_BETA},
        {"seed", required_argument, 0, OPT_SEED},
        {"recurrences", required_argument, 0, OPT_RECURRENCES},
        {"bso", required_argument, 0, OPT_BSO},
        {"plo", required_argument, 0, OPT_PLO},
        {"bso-param", required_argument, 0, OPT_BSO_PARAM},
        {"plo-param", required_argument, 0, OPT_PLO_PARAM},
        {"format", required_argument, 0, OPT_FORMAT},
        WS_CLI_JOB_OPTIONS, WS_CLI_WHATIF_OPTIONS, GLOBAL_OPTIONS, {0, 0, 0, 0},
    };
    static const char *keys[] = {
        [OPT_GPU - OPT_GPU] = "gpu", [OPT_WORKLOAD - OPT_GPU] = "workload",
        [OPT_ETA - OPT_GPU] = "eta", [OPT_BETA - OPT_GPU] = "beta",
        [OPT_SEED - OPT_GPU] = "seed", [OPT_RECURRENCES - OPT_GPU] = "recurrences",
        [OPT_BSO - OPT_GPU] = "bso.name", [OPT_PLO - OPT_GPU] = "plo.name",
    };
    ws_error err = {{0}};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_registry *reg = ws_registry_new();
    ws_cell_result *res = NULL;
    records hist = {0};
    ws_whatif wi = {0};
    size_t n = 0;
    int rc = EXIT_USAGE, c, workload = 0, is_wi;
    const char *format = "table";
    ws_cli_job job = {0};
    ws_run_config_init(&cfg);
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (global_opt(g, c, optarg) || ws_cli_job_opt(&job, c, optarg)) continue;
        if ((is_wi = ws_cli_whatif_opt(&cfg, c, optarg, &err)) < 0) goto out;
        if (is_wi) continue;
        if (c >= OPT_GPU && c <= OPT_PLO) {
            workload |= c == OPT_WORKLOAD;
            char opt[32];
            snprintf(opt, sizeof opt, "--%s", keys[c - OPT_GPU]);
            if (set_kv(&cfg, keys[c - OPT_GPU], optarg, opt, &err)) goto out;
            continue;
        }
        switch (c) {
        case OPT_HELP: printf("%s\n%s", SIMULATE_HELP, GLOBAL_HELP); rc = 0; goto out;
        case OPT_BSO_PARAM:
        case OPT_PLO_PARAM: {
            const char *eq = strchr(optarg, '=');
            if (!eq) {
                rc = ws_cli_usage("simulate", "parameter '%s' is not KEY=VALUE", optarg);
                goto out;
            }
            char key[256];
            snprintf(key, sizeof key, "%s.params.%.*s", c == OPT_BSO_PARAM ? "bso" : "plo",
                     (int)(eq - optarg), optarg);
            if (set_kv(&cfg, key, eq + 1, c == OPT_BSO_PARAM ? "--bso-param" : "--plo-param",
                       &err))
                goto out;
            break;
        }
        case OPT_FORMAT: format = optarg; break;
        default: rc = ws_cli_bad_option("simulate", argv, c); goto out;
        }
    }
    if (optind != argc) {
        rc = ws_cli_usage("simulate", "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!workload == !job.job) {
        rc = ws_cli_usage("simulate", "%s", workload ? "takes --workload W or --job D/N/O,"
                          " not both" : "needs --workload W (or --job D/N/O)");
        goto out;
    }
    if ((rc = ws_cli_job_apply(&job, &cfg, "simulate"))) goto out;
    rc = EXIT_USAGE;
    if (relabel(&cfg.bso, "--bso", "--bso-param", &err)
        || relabel(&cfg.plo, "--plo", "--plo-param", &err)
        || relabel_axis(&cfg.where_gpus, "--gpu", &err)
        || relabel_axis(&cfg.where_workloads, "--workload", &err))
        goto out;
    int fmt = ws_format_parse(format);
    if (fmt != WS_FMT_TABLE && fmt != WS_FMT_JSON) {
        rc = ws_cli_usage("simulate", "unknown format '%s' (table or json)", format);
        goto out;
    }
    if (ws_run_config_validate(&cfg, &err) || trace_limits(g, &err)
        || ws_cli_catalogue(g->catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, &g->limits, &err))
        goto out;
    ws_study_env env = {ws_cli_traces(g->traces, NULL), &cat, reg, &g->limits, 0, &wi};
    if (ws_study_run(&cfg, &env, collect, &hist, &res, &n, &err)) goto out;
    const char *bso = ws_registry_bso(reg, cfg.bso.name, &err)->name;
    const char *plo = ws_registry_plo(reg, cfg.plo.name, &err)->name;
    for (size_t i = 0; i < n; i++) {
        ws_report_simulate(stdout, (ws_format)fmt, &res[i], bso, plo, hist.r, hist.n, &wi);
        ws_study_wrap_note(&wi, res[i].tot.wrapped);
    }
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_whatif_free(&wi);
    free(hist.r);
    free(res);
    ws_registry_free(reg);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    return rc;
}

/* ------------------------------------------------------------ pareto */

static const char *PARETO_HELP =
    "usage: wattsim pareto --gpu G (--workload W | --job D/N/O --target X\n"
    "                      --max-epochs N --b0 B) [--eta X] [--format table|csv|json]\n"
    "\n"
    "Every (batch size, power limit) knob of a job with its expected time- and\n"
    "energy-to-accuracy (TTA, ETA), the TTA/ETA Pareto frontier, the default\n"
    "knob (b0 at the highest power limit), the least-cost knob for eta and the\n"
    "power limit JIT profiling picks per batch size. No simulation: straight\n"
    "from the traces.\n"
    "\n"
    "  --gpu G            GPU; default v100\n"
    "  --workload W       workload; required\n"
    "  --eta X            cost weight for `cost` and `best`; default 0.5\n"
    "  --format F         table (default), csv or json\n"
    "  --plot FILE        also draw the figure: FILE.png, FILE.svg or FILE.pdf, with its\n"
    "                     data (.csv) and gnuplot script (.gp) beside it\n"
    "  --history FILE     mark the knob a policy settled on (last reached run of\n"
    "                     the first matching cell of a `wattsim run` history.csv)\n"
    "  --force            replace an existing FILE and its .csv and .gp (never an\n"
    "                     input of the command, such as a trace)\n"
    WS_CLI_JOB_HELP
    "\n" WS_CLI_WHATIF_HELP;

static int cmd_pareto(int argc, char **argv, globals *g)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, OPT_GPU},
        {"workload", required_argument, 0, OPT_WORKLOAD},
        {"eta", required_argument, 0, OPT_ETA},
        {"format", required_argument, 0, OPT_FORMAT},
        {"plot", required_argument, 0, 'P'},
        {"history", required_argument, 0, 'H'},
        {"force", no_argument, 0, OPT_FORCE},
        WS_CLI_JOB_OPTIONS, WS_CLI_WHATIF_OPTIONS, GLOBAL_OPTIONS, {0, 0, 0, 0},
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
        if (global_opt(g, c, optarg) || ws_cli_job_opt(&job, c, optarg)) continue;
        if ((is_wi = ws_cli_whatif_opt(&cfg, c, optarg, &err)) < 0) goto out;
        if (is_wi) continue;
        switch (c) {
        case OPT_HELP: printf("%s\n%s", PARETO_HELP, GLOBAL_HELP); rc = 0; goto out;
        case OPT_GPU: if (set_kv(&cfg, "gpu", optarg, "--gpu", &err)) goto out; break;
        case OPT_WORKLOAD:
            workload = 1;
            if (set_kv(&cfg, "workload", optarg, "--workload", &err)) goto out;
            break;
        case OPT_ETA: if (set_kv(&cfg, "eta", optarg, "--eta", &err)) goto out; break;
        case OPT_FORMAT: format = optarg; break;
        case 'P': plot = optarg; break;
        case 'H': history = optarg; break;
        case OPT_FORCE: ws_outfile_set_force(1); break;
        default: rc = ws_cli_bad_option("pareto", argv, c); goto out;
        }
    }
    if (optind != argc) {
        rc = ws_cli_usage("pareto", "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!workload == !job.job) {
        rc = ws_cli_usage("pareto", "%s", workload ? "takes --workload W or --job D/N/O,"
                          " not both" : "needs --workload W (or --job D/N/O)");
        goto out;
    }
    if (plot && ws_cli_check_plot_name("pareto", plot)) goto out;
    if ((rc = ws_cli_job_apply(&job, &cfg, "pareto"))) goto out;
    rc = EXIT_USAGE;
    if (relabel_axis(&cfg.where_gpus, "--gpu", &err)
        || relabel_axis(&cfg.where_workloads, "--workload", &err))
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
    if (ws_run_config_validate(&cfg, &err) || trace_limits(g, &err)
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
    if (history && !plot) {
        rc = ws_cli_usage("pareto", "%s", "--history needs --plot FILE");
        goto out;
    }
    if (plot && ws_cli_pareto_plot(plot, history, spec, &cat, &jt.job, &par, 0, NULL, &err))
        goto out;
    ws_report_pareto(stdout, (ws_format)fmt, &jt.job, &par, &wi);
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

static void print_params(const ws_param_spec *ps)
{
    for (size_t i = 0; ps && ps[i].name; i++) {
        const ws_param_spec *p = &ps[i];
        switch (p->kind) {
        case WS_PARAM_INT: printf("      %s (int, default %ld, %g..%g): %s\n", p->name,
                                  p->def.i, p->min, p->max, p->help); break;
        case WS_PARAM_DOUBLE: printf("      %s (number, default %g, %g..%g): %s\n", p->name,
                                     p->def.d, p->min, p->max, p->help); break;
        case WS_PARAM_BOOL: printf("      %s (bool, default %s): %s\n", p->name,
                                   p->def.b ? "true" : "false", p->help); break;
        case WS_PARAM_STRING: printf("      %s (string, default \"%s\"): %s\n", p->name,
                                     p->def.s ? p->def.s : "", p->help); break;
        }
    }
}

static void print_policies(const ws_registry *reg, int (*keep)(const char *file, void *),
                           void *ctx)
{
    printf("batch-size optimizers (bso):\n");
    for (size_t i = 0; i < ws_registry_n_bso(reg); i++) {
        const ws_bso_type *t = ws_registry_bso_at(reg, i);
        if (keep && !keep(ws_registry_bso_file(reg, i), ctx)) continue;
        printf("  %-10s %s\n", t->name, t->summary ? t->summary : "");
        print_params(t->params);
    }
    printf("power-limit optimizers (plo):\n");
    for (size_t i = 0; i < ws_registry_n_plo(reg); i++) {
        const ws_plo_type *t = ws_registry_plo_at(reg, i);
        if (keep && !keep(ws_registry_plo_file(reg, i), ctx)) continue;
        printf("  %-10s %s\n", t->name, t->summary ? t->summary : "");
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
    printf("%s: policy ABI %d.%d, sha256 %s\n", real ? real : path, abi / 100, abi % 100, hash);
    print_policies(reg, same_file, real);
    free(real);
    ws_registry_free(reg);
    return 0;
}

static int cmd_list(int argc, char **argv, globals *g)
{
    enum { OPT_PLUGIN = 300 };
    static const struct option opts[] = {
        GLOBAL_OPTIONS, {"plugin", required_argument, 0, OPT_PLUGIN}, {0, 0, 0, 0}};
    int c;
    const char **plugins = calloc((size_t)argc, sizeof *plugins);
    size_t n_plugins = 0;
    if (!plugins) return ws_cli_die(&(ws_error){"out of memory"});
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (global_opt(g, c, optarg)) continue;
        if (c == OPT_PLUGIN) { plugins[n_plugins++] = optarg; continue; }
        free(plugins);
        if (c == OPT_HELP) { printf("%s\n%s", LIST_HELP, GLOBAL_HELP); return 0; }
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
            if (i) printf("\n");
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
        printf("%-14s %-14s %-18s %-10s %8s %10s %6s\n", "workload", "dataset", "network",
               "optimizer", "target", "max_epochs", "b0");
        for (size_t i = 0; i < cat.n; i++) {
            const ws_workload_spec *w = &cat.items[i];
            printf("%-14s %-14s %-18s %-10s %8g %10d %6d\n", w->name, w->dataset,
                   w->network, w->optimizer, w->target_metric, w->max_epochs, w->b0);
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
            printf("%s\n", gpus[i]);
            free(gpus[i]);
        }
        free(gpus);
        if (n == 0) {
            fprintf(stderr, "wattsim: %s: no summary_power_<gpu>.csv[.gz] files\n", dir);
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
        printf("(from %s%s%s)\n", dir ? dir : "", dir && extra && *extra ? ":" : "",
               extra ? extra : "");
        const char *first;
        size_t broken = ws_registry_broken(reg, &first);
        if (broken)
            fprintf(stderr, "wattsim: warning: %zu plugin%s in the policy folders did not"
                    " load, first: %s\n", broken, broken > 1 ? "s" : "", first);
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
    "\n"
    "'wattsim COMMAND --help' describes a command.\n";

static int wattsim_main(int argc, char **argv);

int main(int argc, char **argv)
{
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
    globals g = {0};
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(MAIN_HELP, stdout);
        return ws_cli_exit(0);
    }
    if (!strcmp(cmd, "--version")) {
        printf("wattsim %s (policy ABI %d)\n", WS_VERSION, WS_ABI_VERSION);
        return ws_cli_exit(0);
    }
    opterr = 0;
    int rc;
    if (!strcmp(cmd, "run")) rc = cmd_run(argc - 1, argv + 1, &g);
    else if (!strcmp(cmd, "simulate")) rc = cmd_simulate(argc - 1, argv + 1, &g);
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
        rc = ws_cmd_sweep(argc - 1, argv + 1, 0, 1);     /* the sweep help covers merge */
    else if (!strcmp(cmd, "merge")) {
        fputs("wattsim merge: usage: wattsim merge sweep|curves CONFIG DIR... [options]"
              " (see 'wattsim sweep --help')\n", stderr);
        return EXIT_USAGE;
    }
    else if (!strcmp(cmd, "potential")) rc = ws_cmd_potential(argc - 1, argv + 1);
    else if (!strcmp(cmd, "frontiers")) rc = ws_cmd_frontiers(argc - 1, argv + 1);
    else if (!strcmp(cmd, "report")) rc = ws_cmd_report(argc - 1, argv + 1);
    else if (!strcmp(cmd, "groups")) rc = ws_cli_groups(argc - 1, argv + 1);
    else if (!strcmp(cmd, "trace")) rc = ws_cli_trace(argc - 1, argv + 1);
    else if (!strcmp(cmd, "plan")) rc = ws_cmd_plan(argc - 1, argv + 1);
    else if (!strcmp(cmd, "policy")) rc = ws_cmd_policy(argc - 1, argv + 1);
    else {
        fprintf(stderr, "wattsim: unknown command '%s' (see 'wattsim --help')\n", cmd);
        return EXIT_USAGE;
    }
    /* A failed command leaves no folder it made behind. */
    if (rc == EXIT_USAGE) ws_outfile_cleanup();
    return ws_cli_exit(rc);
}
