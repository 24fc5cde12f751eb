/*
 * `wattsim run CONFIG` and `wattsim simulate`: a config's run plan, or one
 * recurring job given by options, through ws_study_run. Errors follow the
 * CLI's convention (cli.c): one line "wattsim: ...", exit status 2, and no
 * output file is left half-written.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/config_opts.h"
#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/plugin.h"
#include "wattsim/report.h"
#include "wattsim/study.h"
#include "wattsim/trace.h"
#include "wattsim/whatif.h"
#include "cli_run.h"

#define EXIT_USAGE WS_EXIT_USAGE

/* ------------------------------------------------------------ run */

static const char *RUN_HELP =
    "usage: wattsim run CONFIG [--set KEY=VALUE]... [--out DIR] [--force]\n"
    "                  [--format table|csv|json] [--keep-history]\n"
    "                  [--allow-plugins DIR]... [--allow-python PKG]...\n"
    "                  [--job D/N/O --target X --max-epochs N --b0 B]\n"
    "                  [WHAT-IF OPTIONS]\n"
    "\n"
    "Run every simulation of a config's run plan (policy pair x gpu x workload x\n"
    "eta x beta x seed; bso: and plo: lists, or a policies: list, make the\n"
    "pairs) and write summary.csv, summary.json (a row per simulation) and\n"
    "history.csv (every run) into the output folder. The summary is printed in\n"
    "the chosen format (table: a row per cell, every seed of one pair x gpu x\n"
    "workload x eta x beta, with means over its seeds).\n"
    "\n"
    "  --set KEY=VALUE    override a config key, e.g. --set eta=0.3,\n"
    "                     --set seeds=1..100, --set bso.params.window=10\n"
    "  --out DIR          output folder (default: the config's `out`)\n"
    "  --format F         stdout format: table (default), csv or json\n"
    "  --force            replace existing outputs in the folder\n"
    "  --keep-history     when a simulation fails, keep history.csv up to the\n"
    "                     failure (columns status,error added; its last row\n"
    "                     is the failure) and exit 1; without it a failed run\n"
    "                     leaves no outputs and exits 2\n"
    WS_CLI_PLUGIN_HELP
    WS_CLI_JOB_HELP
    "                     (added to the config's workloads and jobs)\n"
    "\n" WS_CLI_WHATIF_HELP;

typedef struct history_ctx {
    FILE *f;
    const ws_whatif *wi;
    int status;                /* --keep-history: status,error columns */
} history_ctx;

static int history_sink(void *p, const ws_cell *c, const ws_run_record *r, ws_error *err)
{
    history_ctx *h = p;
    if (h->status) ws_report_history_row_status(h->f, c, r, h->wi);
    else ws_report_history_row(h->f, c, r, h->wi);
    return 0;
}

/* run --keep-history after a failed simulation: history.csv as far as it
 * got, its last row the failure, committed; the completion mark of an
 * earlier run that --force was replacing (summary.csv, summary.json) goes,
 * since this run did not complete. Returns 1 (the exit status), or 2 when
 * that itself failed (err then names the file). */
static int keep_history(const char *out, ws_outfile *hist, const ws_study_failure *fail,
                        const ws_whatif *wi, ws_error *err)
{
    ws_report_history_failed(hist->f, &fail->res.cell, &fail->res.tot, wi, err->msg);
    ws_error werr = {{0}};
    if (ws_outfile_commit(hist, &werr)) {
        *err = werr;
        return WS_EXIT_USAGE;
    }
    const char *stale[] = {"summary.csv", "summary.json"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", out, stale[i]);
        if (ws_outfile_unlink(path)) {
            ws_fail(err, "%s: cannot remove the earlier run's file: %s", path,
                    strerror(errno));
            return WS_EXIT_USAGE;
        }
    }
    return 1;
}

static int write_summary(const char *dir, const char *name, ws_format fmt,
                         const ws_cell_result *res, size_t n, const char *bso,
                         const char *plo, const ws_whatif *wi, const ws_policy_prov *prov,
                         ws_outfile *o, ws_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ws_outfile_open(o, path, err)) return -1;
    if (ws_report_cells(o->f, fmt, res, n, bso, plo, wi, prov)) return ws_fail(err, "out of memory");
    return 0;
}

/* What a run's Pareto figure of one (gpu, workload) marks: the knobs the
 * first policy pair settled on, every seed of its first eta and beta (the
 * figure's least-cost knob is of one eta), and what the title says of
 * them: the seeds, and which of several etas, betas and pairs it shows.
 * The cells of that (gpu, workload) are res[i, end). */
static void settled_of(const ws_cell_result *res, size_t i, size_t end, size_t n_pairs,
                       ws_settled *st)
{
    const ws_cell *c0 = &res[i].cell;
    memset(st, 0, sizeof *st);
    snprintf(st->policy, sizeof st->policy, "%s", c0->policy ? c0->policy->label : "");
    unsigned long lo = ULONG_MAX, hi = 0;
    size_t n_seeds = 0, n_etas = 0, n_betas = 0;
    for (size_t j = i; j < end; j++) {
        const ws_cell *c = &res[j].cell;
        int eta_new = 1, beta_new = 1;
        for (size_t k = i; k < j; k++) {
            if (res[k].cell.eta == c->eta) eta_new = 0;
            if (res[k].cell.beta == c->beta) beta_new = 0;
        }
        n_etas += eta_new;
        n_betas += beta_new;
        if (c->eta != c0->eta || c->beta != c0->beta) continue;
        n_seeds++;
        lo = c->seed < lo ? c->seed : lo;
        hi = c->seed > hi ? c->seed : hi;
        if (res[j].tot.final_bs > 0) ws_settled_add(st, res[j].tot.final_bs, res[j].tot.final_pl);
    }
    if (n_seeds == 1) snprintf(st->seeds, sizeof st->seeds, "seed %lu", lo);
    else if (hi - lo + 1 == n_seeds) snprintf(st->seeds, sizeof st->seeds, "seeds %lu–%lu", lo, hi);
    else snprintf(st->seeds, sizeof st->seeds, "%zu seeds", n_seeds);
    /* the rest of the run is in summary.csv: say it is not drawn */
    char more[3][48];
    int n_more = 0;
    if (n_etas > 1) snprintf(more[n_more++], sizeof more[0], "first of %zu η", n_etas);
    if (n_betas > 1) snprintf(more[n_more++], sizeof more[0], "first of %zu β", n_betas);
    if (n_pairs > 1) snprintf(more[n_more++], sizeof more[0], "first of %zu policy pairs", n_pairs);
    for (int k = 0; k < n_more; k++) {
        size_t at = strlen(st->shown);
        snprintf(st->shown + at, sizeof st->shown - at, "%s%s", k ? ", " : "", more[k]);
    }
}

/* One Pareto figure per (gpu, workload) of a run, in `out`, with the knobs
 * the first policy pair settled on marked (settled_of). A run's cells are
 * pair-major, then gpu, then workload: within the first pair each (gpu,
 * workload) is one block, and each gpu's blocks are together, so its
 * traces are loaded once. */
static int plot_runs(const char *out, const ws_run_config *cfg, const ws_study_env *env,
                     const ws_cell_result *res, size_t n, ws_error *err)
{
    ws_traces tr = {0};
    int rc = 0;
    size_t n_pairs = 0;
    for (size_t i = 0; i < n; i++) n_pairs = res[i].cell.pair + 1 > n_pairs ? res[i].cell.pair + 1 : n_pairs;
    for (size_t i = 0; i < n && res[i].cell.pair == res[0].cell.pair && !rc; i++) {
        const ws_cell *c = &res[i].cell, *prev = i ? &res[i - 1].cell : NULL;
        const int same_gpu = prev && !strcmp(prev->gpu, c->gpu);
        if (same_gpu && !strcmp(prev->workload, c->workload)) continue;
        if (!same_gpu) {
            ws_traces_free(&tr);
            if (ws_study_traces(cfg, env, c->gpu, &tr, err)) { rc = -1; break; }
        }
        size_t end = i;
        while (end < n && res[end].cell.pair == c->pair && !strcmp(res[end].cell.gpu, c->gpu)
               && !strcmp(res[end].cell.workload, c->workload))
            end++;
        ws_job_table jt = {0};
        ws_pareto par = {0};
        const ws_workload_spec *spec = ws_study_workload(cfg, env->catalogue, c->workload, err);
        /* A drifting workload settles in its last phase: that phase's
         * frontier, said in the title. */
        rc = !spec || ws_study_job_drift(env->whatif, &tr, env->limits, spec, c->eta, c->beta,
                                         &jt, 0, err);
        const ws_job *fj = rc || !jt.n_phases ? &jt.job : &jt.phase[jt.n_phases - 1].job;
        rc = rc || ws_pareto_compute(fj, &par, err);
        if (!rc) {
            char path[4096];
            snprintf(path, sizeof path, "%s/pareto-%s-%s.png", out, c->gpu, c->workload);
            ws_settled st;
            settled_of(res, i, end, n_pairs, &st);
            char subject[256];
            int len = snprintf(subject, sizeof subject, "%s, %s",
                               spec->display ? spec->display : spec->name,
                               ws_catalogue_gpu_display(env->catalogue, c->gpu));
            if (jt.n_phases && len > 0 && (size_t)len < sizeof subject)
                snprintf(subject + len, sizeof subject - (size_t)len,
                         ", drift phase from recurrence %ld", jt.phase_from[jt.n_phases - 1]);
            rc = ws_plot_pareto(path, fj, &par, &st, subject, err);
        }
        ws_pareto_free(&par);
        ws_job_free(&jt);
    }
    ws_traces_free(&tr);
    return rc ? -1 : 0;
}

int ws_cmd_run(int argc, char **argv, ws_cli_globals *g)
{
    static const struct option opts[] = {
        {"set", required_argument, 0, OPT_SET},
        {"out", required_argument, 0, OPT_OUT},
        {"format", required_argument, 0, OPT_FORMAT},
        {"force", no_argument, 0, OPT_FORCE},
        {"keep-history", no_argument, 0, OPT_KEEP_HISTORY},
        WS_CLI_JOB_OPTIONS, WS_CLI_WHATIF_OPTIONS, WS_CLI_GLOBAL_OPTIONS,
        WS_CLI_PLUGIN_OPTIONS, {0, 0, 0, 0},
    };
    const char *out = NULL, *format = NULL;
    ws_cli_job job = {0};
    int force = 0, keep = 0, c;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int n_sets = 0, n_wi = 0;
    struct { int c; const char *arg; } *wis = calloc((size_t)argc + 1, sizeof *wis);
    if (!sets || !wis) { free(sets); free(wis); return EXIT_USAGE; }
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_global_opt(g, c, optarg) || ws_cli_job_opt(&job, c, optarg)) continue;
        if (c >= WS_OPT_POWER_CAP && c <= WS_OPT_WHATIF_LAST) {
            wis[n_wi].c = c;       /* applied after the config is read */
            wis[n_wi++].arg = optarg;
            continue;
        }
        switch (c) {
        case WS_OPT_HELP:
            fprintf(ws_cli_out, "%s\n%s", RUN_HELP, WS_CLI_GLOBAL_HELP);
            free(sets);
            free(wis);
            return 0;
        case OPT_SET: sets[n_sets++] = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_FORMAT: format = optarg; break;
        case OPT_FORCE: force = 1; break;
        case OPT_KEEP_HISTORY: keep = 1; break;
        case WS_OPT_ALLOW_PLUGINS: {
            ws_error e = {{0}};
            if (!ws_plugin_allow_dir(optarg, &e)) break;
            free(sets);
            free(wis);
            return ws_cli_die(&e);
        }
        case WS_OPT_ALLOW_PYTHON: {
            ws_error e = {{0}};
            if (!ws_plugin_allow_python(optarg, &e)) break;
            free(sets);
            free(wis);
            return ws_cli_die(&e);
        }
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
    char shown[WS_CLI_SHOW];
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
    if (ws_run_config_validate(&cfg, &err) || ws_cli_config_plugins(&cfg, &err)
        || ws_cli_style(&cfg, &err))
        goto out;
    if (!format) format = cfg.format ? cfg.format : "table";
    int fmt = ws_format_parse(format);
    if (fmt < 0) {
        rc = ws_cli_usage("run", "unknown format '%s' (table, csv or json)", format);
        goto out;
    }
    if (ws_run_config_out(&cfg, out, &out, &err)) goto out;
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
    if (ws_cli_trace_limits(g, &err) || ws_cli_catalogue(g->catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, &g->limits, &err))
        goto out;
    /* A failed run leaves no trace: not even the folder, if it made it
     * (main's ws_outfile_cleanup removes every folder made on the way). */
    ws_outfile_set_force(force);
    ws_input_dir_note(ws_cli_traces(g->traces, &cfg));   /* never the output folder */
    ws_study_note_drift_inputs(&cfg, &cat);               /* nor a drift phase's traces */
    if (ws_outdir_lock(out, &err)) goto out;
    snprintf(path, sizeof path, "%s/history.csv", out);
    if (ws_outfile_open(&of[0], path, &err)) goto out;
    if (keep) ws_report_history_header_status(of[0].f, &wi);
    else ws_report_history_header(of[0].f, &wi);
    history_ctx hc = {of[0].f, &wi, keep};
    ws_study_env env = {ws_cli_traces(g->traces, &cfg), &cat, reg, &g->limits, 1, &wi};
    ws_study_failure fail;
    if (ws_study_run_failure(&cfg, &env, history_sink, &hc, &res, &n, &fail, &err)) {
        if (keep && fail.failed) rc = keep_history(out, &of[0], &fail, &wi, &err);
        goto out;
    }
    /* summary.json's provenance: the command that gives these results
     * (without the options that change none), the config's and the trace
     * files' sha256 */
    static const char *const neutral[] = {"out", "format", "force", "keep-history", "verbose",
                                          "quiet", "max-trace-bytes", "help", NULL};
    if (ws_cli_provenance(argc, argv, opts, neutral, &cfg, env.traces_dir, &err)) goto out;
    /* Each cell carries its pair's names and provenance (cell.policy). */
    const ws_study_pair *first = res[0].cell.policy;
    const char *bso = first->bso, *plo = first->plo;
    if (write_summary(out, "summary.csv", WS_FMT_CSV, res, n, bso, plo, &wi, &first->prov,
                      &of[1], &err)
        || write_summary(out, "summary.json", WS_FMT_JSON, res, n, bso, plo, &wi,
                         &first->prov, &of[2], &err))
        goto out;
    /* summary.csv last, after the figures: its presence marks a complete
     * run. */
    if (ws_outfile_commit(&of[0], &err) || ws_outfile_commit(&of[2], &err)
        || plot_runs(out, &cfg, &env, res, n, &err)
        || ws_outfile_commit(&of[1], &err))
        goto out;
    /* stdout in csv or json is summary.csv / summary.json, provenance too */
    if (ws_report_cells(ws_cli_out, (ws_format)fmt, res, n, bso, plo, &wi, &first->prov)) {
        ws_fail(&err, "out of memory");
        goto out;
    }
    long wrapped = 0;
    for (size_t i = 0; i < n; i++) wrapped += res[i].tot.wrapped;
    ws_study_wrap_note(&wi, wrapped);
    if (fmt == WS_FMT_TABLE)
        /* the plan is a cross product, seed fastest: a cell is every seed
         * of one pair x gpu x workload x eta x beta */
        fprintf(ws_cli_out, "\n%zu simulation%s, %zu cell%s; outputs in %s/ (summary.csv,"
               " summary.json, history.csv, pareto-GPU-WORKLOAD.png)\n", n, ws_s(n),
               cfg.n_seeds ? n / cfg.n_seeds : n, ws_s(cfg.n_seeds ? n / cfg.n_seeds : n),
               ws_name_show(out, shown, sizeof shown));
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
    "usage: wattsim simulate [--gpu G] (--workload W | --job D/N/O --target X\n"
    "                        --max-epochs N --b0 B) [--eta X] [--beta X] [--seed N]\n"
    "                        [--recurrences N] [--bso NAME] [--plo NAME]\n"
    "                        [--bso-param K=V]... [--plo-param K=V]...\n"
    "                        [--format table|json] [--keep-history] [--allow-remote]\n"
    "                        [WHAT-IF OPTIONS]\n"
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
    "  --bso NAME         batch-size optimizer or path to a .so; default zeus;\n"
    "                     http://HOST:PORT: a server of Zeus's batch-size\n"
    "                     optimizer API (loopback; others with --allow-remote;\n"
    "                     see docs/serve.md)\n"
    "  --plo NAME         power-limit optimizer or path to a .so; default jit\n"
    "  --bso-param K=V    a BSO parameter (see 'wattsim list policies')\n"
    "  --plo-param K=V    a PLO parameter\n"
    "  --format F         table (default) or json\n"
    "  --keep-history     when the simulation fails, print its runs up to the\n"
    "                     failure and the failure (table: a last line; json:\n"
    "                     \"status\", \"error\", \"failed_recurrence\", \"failed_try\")\n"
    "                     and exit 1; without it a failed simulation prints\n"
    "                     nothing on stdout and exits 2\n"
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

int ws_cmd_simulate(int argc, char **argv, ws_cli_globals *g)
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
        {"keep-history", no_argument, 0, OPT_KEEP_HISTORY},
        WS_CLI_JOB_OPTIONS, WS_CLI_WHATIF_OPTIONS, WS_CLI_GLOBAL_OPTIONS, {0, 0, 0, 0},
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
    int rc = EXIT_USAGE, c, workload = 0, is_wi, keep = 0;
    const char *format = "table";
    ws_cli_job job = {0};
    ws_run_config_init(&cfg);
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_global_opt(g, c, optarg) || ws_cli_job_opt(&job, c, optarg)) continue;
        if ((is_wi = ws_cli_whatif_opt(&cfg, c, optarg, &err)) < 0) goto out;
        if (is_wi) continue;
        if (c >= OPT_GPU && c <= OPT_PLO) {
            workload |= c == OPT_WORKLOAD;
            char opt[32];
            /* the option typed: --bso for the key bso.name */
            snprintf(opt, sizeof opt, "--%.*s", (int)strcspn(keys[c - OPT_GPU], "."),
                     keys[c - OPT_GPU]);
            if (ws_cli_set_kv(&cfg, keys[c - OPT_GPU], optarg, opt, &err)) goto out;
            continue;
        }
        switch (c) {
        case WS_OPT_HELP:
            fprintf(ws_cli_out, "%s\n%s", SIMULATE_HELP, WS_CLI_GLOBAL_HELP);
            rc = 0;
            goto out;
        case OPT_BSO_PARAM:
        case OPT_PLO_PARAM: {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {         /* "=3": a value of no parameter */
                rc = ws_cli_usage("simulate", "parameter '%s' is not KEY=VALUE", optarg);
                goto out;
            }
            char key[256];
            snprintf(key, sizeof key, "%s.params.%.*s", c == OPT_BSO_PARAM ? "bso" : "plo",
                     (int)(eq - optarg), optarg);
            if (ws_cli_set_kv(&cfg, key, eq + 1, c == OPT_BSO_PARAM ? "--bso-param" : "--plo-param",
                       &err))
                goto out;
            break;
        }
        case OPT_FORMAT: format = optarg; break;
        case OPT_KEEP_HISTORY: keep = 1; break;
        default: rc = ws_cli_bad_option("simulate", argv, c); goto out;
        }
    }
    if ((rc = ws_cli_one_workload("simulate", argc, argv, workload, &job))) goto out;
    rc = EXIT_USAGE;
    if ((rc = ws_cli_job_apply(&job, &cfg, "simulate"))) goto out;
    rc = EXIT_USAGE;
    if (ws_config_relabel_policy(&cfg.bso, "--bso", "--bso-param", &err)
        || ws_config_relabel_policy(&cfg.plo, "--plo", "--plo-param", &err)
        || ws_config_relabel_axis(&cfg.where_gpus, "--gpu", &err)
        || ws_config_relabel_axis(&cfg.where_workloads, "--workload", &err))
        goto out;
    int fmt = ws_format_parse(format);
    if (fmt != WS_FMT_TABLE && fmt != WS_FMT_JSON) {
        rc = ws_cli_usage("simulate", "unknown format '%s' (table or json)", format);
        goto out;
    }
    /* One job, one pair: --bso and --plo name one policy each, so this
     * only guards the invariant. */
    if (ws_run_config_n_pairs(&cfg) != 1) {
        rc = ws_cli_usage("simulate", "%s", "runs one policy pair; use run or sweep for several");
        goto out;
    }
    ws_error one;
    if (!ws_run_config_one_simulation(&cfg, &one)) {
        rc = ws_cli_usage("simulate", "%s", one.msg);
        goto out;
    }
    if (ws_run_config_validate(&cfg, &err) || ws_cli_trace_limits(g, &err)
        || ws_cli_catalogue(g->catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, &g->limits, &err))
        goto out;
    ws_study_env env = {ws_cli_traces(g->traces, NULL), &cat, reg, &g->limits, 0, &wi};
    ws_study_failure fail;
    if (ws_study_run_failure(&cfg, &env, collect, &hist, &res, &n, &fail, &err)) {
        if (keep && fail.failed) {
            /* the runs before the failure, then the failure */
            ws_report_simulate_status(ws_cli_out, (ws_format)fmt, &fail.res, fail.pair.bso,
                                      fail.pair.plo, hist.r, hist.n, &wi, err.msg);
            rc = 1;
        }
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const ws_study_pair *pair = res[i].cell.policy;
        if (keep)
            ws_report_simulate_status(ws_cli_out, (ws_format)fmt, &res[i], pair->bso, pair->plo,
                                      hist.r, hist.n, &wi, NULL);
        else
            ws_report_simulate(ws_cli_out, (ws_format)fmt, &res[i], pair->bso, pair->plo, hist.r,
                               hist.n, &wi);
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
