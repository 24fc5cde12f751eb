/*
 * wattsim plan: argument parsing only; the plan is computed by
 * study/plan.c and printed by report/plan_report.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/config_opts.h"
#include "wattsim/outfile.h"
#include "wattsim/plan.h"
#include "wattsim/plot.h"
#include "wattsim/report.h"
#include "wattsim/study.h"
#include "wattsim/sweep.h"
#include "wattsim/whatif.h"
#include "cli_common.h"
#include "cli_plan.h"

static const char *PLAN_HELP =
    "usage: wattsim plan [--gpu G] (--workload W | --job D/N/O --target X\n"
    "                    --max-epochs N --b0 B) [--eta X] [--beta X]\n"
    "                    [--recurrences N] [--seeds N] [--policies B:P,...]\n"
    "                    [WHAT-IF OPTIONS]\n"
    "                    [--format table|json] [--plot FILE] [--style SPEC]\n"
    "                    [--out DIR] [--force]\n"
    "\n"
    "What to set for a recurring job, what it saves, and when learning it pays\n"
    "off: the knob of least expected cost per run (expected over the recorded\n"
    "runs of its batch size) against the default knob (b0 at its highest\n"
    "limit), per run and over N recurrences; for each policy pair, the\n"
    "recurrence after which its cumulative cost (exploration included) stays\n"
    "below the default's, median and 95 % interval over seeds 1..S. Near ties:\n"
    "knobs within max(1 %, the power trace's largest energy_error) of the least\n"
    "cost. With --defer-up-to, deferral's own saving: the default pair with it\n"
    "against without, on the same seeds and schedule.\n"
    "\n"
    "  --gpu G            GPU; default v100\n"
    "  --workload W       workload of the catalogue; or\n"
    WS_CLI_JOB_HELP
    "  --eta X            cost weight of energy (or carbon, price), in [0, 1];\n"
    "                     default 0.5\n"
    "  --beta X           early-stopping factor (inf = off); default 2\n"
    "  --recurrences N    default 2*|B|*|P|\n"
    "  --seeds N          seeds per policy, 1..1000; default 20\n"
    "  --policies LIST    policy pairs BSO:PLO, comma-separated; default zeus:jit\n"
    "  --demand-charge include|ignore  with an OpenEI tariff: add the demand\n"
    "                     charge of each knob's power, per billing month the runs\n"
    "                     touch, to its dollars (and cost under --objective price);\n"
    "                     default ignore (a note gives its size)\n"
    "  --format F         table (default) or json\n"
    "  --plot FILE        cumulative savings by recurrence, FILE.png, .svg or .pdf,\n"
    "                     with its data (.csv) and gnuplot script (.gp) beside it\n"
    "  --style SPEC       the figure's style, as a config's `style` key:\n"
    "                     \"font=NAME, size=PT, col2=IN, palette=NAME\"\n"
    "  --out DIR          also write plan.json and plan.txt into DIR\n"
    "  --force            replace existing outputs (plan files, the figure)\n"
    "  --traces DIR       trace folder (default: $WATTSIM_TRACES, else the\n"
    "                     fetched Zeus traces)\n"
    "  --catalogue FILE   workload catalogue\n"
    "  --max-trace-bytes N  size limit of a trace file once decompressed\n"
    "\n" WS_CLI_WHATIF_HELP;

enum { P_GPU = 1, P_WORKLOAD, P_ETA, P_BETA, P_RECURRENCES, P_SEEDS, P_POLICIES,
       P_FORMAT, P_PLOT, P_OUT, P_FORCE, P_TRACES, P_CATALOGUE, P_MAX_BYTES, P_HELP,
       P_DEMAND, P_STYLE };

static int write_one(const char *dir, const char *name, ws_format fmt, const ws_plan *p,
                     const ws_whatif *wi, ws_outfile *o, ws_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ws_outfile_open(o, path, err)) return -1;
    ws_report_plan(o->f, fmt, p, wi);
    return 0;
}

int ws_cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, P_GPU},
        {"workload", required_argument, 0, P_WORKLOAD},
        {"eta", required_argument, 0, P_ETA},
        {"beta", required_argument, 0, P_BETA},
        {"recurrences", required_argument, 0, P_RECURRENCES},
        {"seeds", required_argument, 0, P_SEEDS},
        {"demand-charge", required_argument, 0, P_DEMAND},
        {"policies", required_argument, 0, P_POLICIES},
        {"format", required_argument, 0, P_FORMAT},
        {"plot", required_argument, 0, P_PLOT},
        {"style", required_argument, 0, P_STYLE},
        {"out", required_argument, 0, P_OUT},
        {"force", no_argument, 0, P_FORCE},
        {"traces", required_argument, 0, P_TRACES},
        {"catalogue", required_argument, 0, P_CATALOGUE},
        {"max-trace-bytes", required_argument, 0, P_MAX_BYTES},
        {"help", no_argument, 0, P_HELP},
        WS_CLI_WHATIF_OPTIONS, WS_CLI_JOB_OPTIONS,
        {0, 0, 0, 0},
    };
    static const char *keys[] = {[P_GPU] = "gpu", [P_WORKLOAD] = "workload", [P_ETA] = "eta",
                                 [P_BETA] = "beta", [P_RECURRENCES] = "recurrences",
                                 [P_STYLE] = "style"};
    const char *policies = "zeus:jit", *format = "table", *plot = NULL, *out = NULL, *demand = NULL;
    const char *traces = NULL, *catalogue = NULL, *max_bytes = NULL;
    long seeds = 20;
    int workload = 0, c, is_wi, rc = WS_EXIT_USAGE;
    char *command = ws_command_line(argc + 1, argv - 1);
    ws_error err = {{0}};
    ws_run_config cfg;
    ws_catalogue cat = {0};
    ws_traces tr = {0};
    ws_job_table jt = {0};
    ws_whatif wi = {0};
    ws_plan plan = {0};
    ws_csv_limits lim = {0};
    ws_policy_pair *pairs = NULL;
    size_t n_pairs = 0;
    ws_registry *reg = ws_registry_new();
    ws_outfile of[2] = {{0}};
    ws_cli_job job = {0};
    ws_run_config_init(&cfg);
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_job_opt(&job, c, optarg)) continue;
        if ((is_wi = ws_cli_whatif_opt(&cfg, c, optarg, &err)) < 0) goto out;
        if (is_wi) continue;
        switch (c) {
        case P_HELP: fprintf(ws_cli_out, "%s", PLAN_HELP); rc = 0; goto out;
        case P_GPU: case P_WORKLOAD: case P_ETA: case P_BETA: case P_RECURRENCES:
        case P_STYLE: {
            /* Errors name the option as typed ("--eta must be ..."), not
             * the "--set eta" that carries it into the config. */
            char opt[32];
            workload |= c == P_WORKLOAD;
            snprintf(opt, sizeof opt, "--%s", keys[c]);
            if (ws_cli_set_kv(&cfg, keys[c], optarg, opt, &err)) goto out;
            break;
        }
        case P_SEEDS: {
            char *end;
            errno = 0;
            seeds = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || seeds < 1 || seeds > 1000) {
                rc = ws_cli_usage("plan", "--seeds '%s' is not an integer in 1..1000", optarg);
                goto out;
            }
            break;
        }
        case P_POLICIES: policies = optarg; break;
        case P_DEMAND: demand = optarg; break;
        case P_FORMAT: format = optarg; break;
        case P_PLOT: plot = optarg; break;
        case P_OUT: out = optarg; break;
        case P_FORCE: ws_outfile_set_force(1); break;
        case P_TRACES: traces = optarg; break;
        case P_CATALOGUE: catalogue = optarg; break;
        case P_MAX_BYTES: max_bytes = optarg; break;
        default: rc = ws_cli_bad_option("plan", argv, c); goto out;
        }
    }
    if (optind != argc) {
        rc = ws_cli_usage("plan", "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!workload == !job.job) {
        rc = ws_cli_usage("plan", "%s", workload ? "takes --workload W or --job D/N/O,"
                          " not both" : "needs --workload W (or --job D/N/O)");
        goto out;
    }
    if (ws_config_relabel_axis(&cfg.where_gpus, "--gpu", &err)
        || ws_config_relabel_axis(&cfg.where_workloads, "--workload", &err))
        goto out;
    if ((rc = ws_cli_job_apply(&job, &cfg, "plan"))) goto out;
    rc = WS_EXIT_USAGE;
    int fmt = ws_format_parse(format);
    if (fmt != WS_FMT_TABLE && fmt != WS_FMT_JSON) {
        rc = ws_cli_usage("plan", "unknown format '%s' (table or json)", format);
        goto out;
    }
    if (plot && ws_cli_check_plot_name("plan", plot)) goto out;
    if (out && ws_cli_check_out("plan", "--out", out)) goto out;
    if (cfg.n_gpus != 1 || cfg.n_workloads + cfg.n_jobs != 1 || cfg.n_etas != 1
        || cfg.n_betas != 1) {
        rc = ws_cli_usage("plan", "%s", "takes one GPU, one workload, one eta and one beta");
        goto out;
    }
    if (ws_policy_pairs_parse(policies, &pairs, &n_pairs, &err)) goto out;
    if (ws_run_config_validate(&cfg, &err) || ws_cli_style(&cfg, &err)
        || ws_cli_limits(max_bytes, &lim, &err) || ws_cli_catalogue(catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, &lim, &err)
        || ws_whatif_set_demand_charge(&wi, demand, "--demand-charge", &err))
        goto out;
    const ws_workload_spec *spec = cfg.n_jobs ? &cfg.jobs[0]
        : ws_study_workload(&cfg, &cat, cfg.workloads[0], &err);
    ws_study_env env = {ws_cli_traces(traces, NULL), &cat, reg, &lim, 0, &wi};
    if (!spec || ws_study_traces(&cfg, &env, cfg.gpus[0], &tr, &err)
        || ws_study_job(&wi, &tr, spec, cfg.etas[0], cfg.betas[0], &jt, 1, &err))
        goto out;
    /* The folder is this command's from now on: locked, as every command's
     * output folder is (and written through its descriptor). */
    ws_input_dir_note(env.traces_dir);                  /* never the output folder */
    if (out && ws_outdir_lock(out, &err)) goto out;     /* made, or created, it goes on error */
    long n = cfg.recurrences > 0 ? cfg.recurrences : jt.default_recurrences;
    if (ws_plan_compute(&jt.job, jt.knob_error, &wi, n, (int)seeds, pairs, n_pairs, reg,
                        &plan, &err))
        goto out;
    plan.max_power_summed = jt.max_power_summed;
    if (out && (write_one(out, "plan.txt", WS_FMT_TABLE, &plan, &wi, &of[0], &err)
                || write_one(out, "plan.json", WS_FMT_JSON, &plan, &wi, &of[1], &err)
                || ws_outfile_commit(&of[0], &err) || ws_outfile_commit(&of[1], &err)))
        goto out;
    if (plot) {
        char title[256];
        snprintf(title, sizeof title, "%s on %s: cumulative cost saving vs default",
                 ws_catalogue_workload_display(&cat, jt.job.workload),
                 ws_catalogue_gpu_display(&cat, jt.job.gpu));
        if (ws_plot_plan(plot, &plan, &cat, &err)
            || ws_manifest_add(plot, "figure", title, command, &err))
            goto out;
    }
    ws_report_plan(ws_cli_out, (ws_format)fmt, &plan, &wi);
    if (plan.wrapped)
        ws_line("wattsim: note: %ld of the %ld recurrences of bs %d at %d W reach past the"
                " end of the %s series and wrap around to its start", plan.wrapped, n,
                plan.recommended.bs, plan.recommended.pl,
                wi.has_carbon ? wi.carbon.path : wi.price.path);
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_outfile_abort(&of[0]);
    ws_outfile_abort(&of[1]);
    ws_plan_free(&plan);
    ws_policy_pairs_free(pairs, n_pairs);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    ws_whatif_free(&wi);
    ws_catalogue_free(&cat);
    ws_run_config_free(&cfg);
    ws_registry_free(reg);
    free(command);
    return rc;
}
