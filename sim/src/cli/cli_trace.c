/*
 * `wattsim trace import power|train` and `wattsim trace check`: argument
 * parsing only; the work is in io/import_*.c and study/trace_check.c.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/import.h"
#include "wattsim/name.h"
#include "wattsim/outfile.h"
#include "wattsim/trace_check.h"
#include "cli_common.h"
#include "cli_trace.h"

static const char *TRACE_HELP =
    "usage: wattsim trace import power|train [OPTIONS]\n"
    "       wattsim trace check DIR [--format table|json]\n"
    "\n"
    "Turn your own measurements into a trace folder that every wattsim command\n"
    "reads with --traces DIR, and check such a folder.\n"
    "\n"
    "  import power   GPU telemetry + epoch times -> summary_power_GPU.csv\n"
    "  import train   per-epoch validation metrics -> summary_train.csv\n"
    "  check          what a trace folder holds, per workload and GPU\n"
    "\n"
    "'wattsim trace import power --help' etc. describe each.\n";

static const char *POWER_HELP =
    "usage: wattsim trace import power --gpu NAME --epochs EPOCHS.csv\n"
    "         (--nvidia-smi LOG | --dcgm FILE | --zeus-monitor LOG)\n"
    "         [--gpus ID,...] --out DIR [--force] [--log-tz ZONE]\n"
    "         [--epochs-tz +HH:MM] [--max-gap N] [--match-tolerance S]\n"
    "         [--window NAMES] [--columns LIST] [--gpu-cycle N]\n"
    "       wattsim trace import power --gpu NAME --zeus-monitor PROFILE\n"
    "         --job D/N/O --batch-size B --steps-per-epoch S [--profile-steps P]\n"
    "         [--gpus ID,...] --out DIR [--force]\n"
    "\n"
    "Write DIR/summary_power_NAME.csv: per (dataset, network, optimizer, batch\n"
    "size, power limit) of EPOCHS.csv, time_per_epoch = mean epoch duration and\n"
    "average_power = energy of the epochs / their total duration, the energy\n"
    "summed over the selected GPUs. Refused, with the file and line: a reading\n"
    "above 10 kW for one GPU, a GPU without a usable reading, a GPU averaging\n"
    "more than 5 % above the epochs' power_limit, epochs shorter than 1 ms or\n"
    "longer than a year, epochs that overlap in time (their joules would count\n"
    "twice), two ZeusMonitor windows matching one epoch or one that does not\n"
    "last as long, and names with control characters, '/', ',', '\"' or a\n"
    "backslash (the dataset: a safe name). Each knob's energy_error, an\n"
    "estimate of the integration error (|E - E'|, E' from every other sample;\n"
    "see docs/planning.md), is written with it and warned about above 1 %.\n"
    "\n"
    "  --gpu NAME         the GPU model the trace is for (1-64 of A-Z a-z 0-9\n"
    "                     . _ + -); used as --gpu NAME by the other commands\n"
    "  --epochs FILE      dataset,network,optimizer,batch_size,power_limit,epoch,\n"
    "                     start,end: one row per measured epoch; start/end in Unix\n"
    "                     seconds or ISO 8601 (with a zone, or without one: the\n"
    "                     telemetry's own clock)\n"
    "  --nvidia-smi LOG   nvidia-smi --query-gpu=timestamp,index,power.draw\n"
    "                     --format=csv[,nounits][,noheader] -lms N output; power is\n"
    "                     integrated with the trapezoidal rule, clipped to epochs.\n"
    "                     Without a header the columns must be timestamp, index,\n"
    "                     power.draw, or those --columns names. With a power.limit\n"
    "                     column, each epoch's power_limit must agree with it. A\n"
    "                     malformed last line, or one without its line end (a\n"
    "                     logger stopped mid-write), is skipped with a warning\n"
    "  --columns LIST     the --query-gpu list of a log without a header, in its\n"
    "                     order, e.g. timestamp,index,name,power.draw,power.limit\n"
    "  --gpu-cycle N      a log without a GPU column (no index, pci.bus_id or\n"
    "                     uuid) of N GPUs: its rows cycle through them, one per GPU\n"
    "                     per sample, named 0 to N-1; refused where the times\n"
    "                     break the cycle. Without it such a log is one GPU's\n"
    "  --dcgm FILE        Prometheus /api/v1/query_range JSON of\n"
    "                     DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (preferred: counter\n"
    "                     differences, resets detected) or DCGM_FI_DEV_POWER_USAGE,\n"
    "                     or DCGM exporter scrapes (Prometheus text, timestamps in\n"
    "                     ms); nvidia-smi dmon and dcgmi dmon output is refused\n"
    "                     with the command that converts or records it\n"
    "  --zeus-monitor LOG ZeusMonitor CSV log (start_time,window_name,elapsed_time,\n"
    "                     gpu<i>_energy): the window starting with each epoch\n"
    "  --gpus ID,...      GPUs to sum (nvidia-smi index, else pci.bus_id or uuid;\n"
    "                     DCGM gpu label; ZeusMonitor i); default: all in the log\n"
    "  --out DIR          trace folder to write into (created if needed)\n"
    "  --force            replace an existing summary_power_NAME.csv\n"
    "  --log-tz ZONE      the zone of the nvidia-smi log's clock (its timestamps\n"
    "                     have no zone): an IANA name (America/New_York: the hour\n"
    "                     a fall back repeats is placed by the rows' order, and\n"
    "                     EPOCHS.csv times without a zone are read in it too), or\n"
    "                     +HH:MM for a clock that kept one offset; matters for\n"
    "                     epoch times in Unix seconds or with a zone; default\n"
    "                     +00:00. A clock that goes back (a DST change or a\n"
    "                     reset) is refused unless the zone places it (DCGM and\n"
    "                     ZeusMonitor logs are in Unix time: refused there)\n"
    "  --epochs-tz +HH:MM UTC offset of EPOCHS.csv times written without a zone;\n"
    "                     default: they are on the log's own clock (UTC for DCGM\n"
    "                     and ZeusMonitor)\n"
    "  --max-gap N        refuse an epoch with a gap between samples longer than\n"
    "                     N median sample intervals; default 5\n"
    "  --match-tolerance S  ZeusMonitor: a window matches an epoch when their\n"
    "                     starts, and their durations, differ by at most S\n"
    "                     seconds; default 1\n"
    "  --job D/N/O, --batch-size B, --steps-per-epoch S, --profile-steps P\n"
    "                     Zeus's GlobalPowerLimitOptimizer profile (windows named\n"
    "                     __GlobalPowerLimitOptimizer_<W>, one per limit W): each\n"
    "                     window is the knob at W, average_power its energy over\n"
    "                     its elapsed_time; they time P training steps (default\n"
    "                     40, Zeus's profile_steps), an epoch S: time_per_epoch =\n"
    "                     elapsed * S / P. Or --epochs with the run's epochs (one\n"
    "                     workload and batch size, each epoch wholly at its\n"
    "                     power_limit): their durations over the windows' of\n"
    "                     their limits scale the windows instead\n"
    "  --window NAMES     ZeusMonitor: the window_name that times whole epochs,\n"
    "                     or several, comma-separated, or shell patterns\n"
    "                     ('epoch_*');\n"
    "                     default: the name whose windows start with and last as\n"
    "                     long as the most epochs (so 'step' windows nested in\n"
    "                     'epoch' windows are passed over)\n"
    "  --max-trace-bytes N  refuse an input larger than N bytes once decompressed\n"
    "                     (suffix K, M or G; default: $WATTSIM_MAX_TRACE_BYTES,\n"
    "                     else 1G)\n";

static const char *TRAIN_HELP =
    "usage: wattsim trace import train --runs METRICS.csv --target-metric X\n"
    "         [--higher-is-better | --lower-is-better] --out DIR [--force]\n"
    "\n"
    "Write DIR/summary_train.csv: for each run of METRICS.csv\n"
    "(dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric, one\n"
    "row per evaluated epoch), the first epoch whose metric reaches X (empty\n"
    "when none does). Runs are numbered per batch size.\n"
    "\n"
    "  --runs FILE          the per-epoch metrics\n"
    "  --target-metric X    the target; use the same X as --target (or\n"
    "                       target_metric in a config) when simulating\n"
    "  --higher-is-better   reached when metric >= X (default; accuracy)\n"
    "  --lower-is-better    reached when metric <= X (loss, perplexity)\n"
    "  --out DIR            trace folder to write into (created if needed)\n"
    "  --force              replace an existing summary_train.csv\n"
    "  --max-trace-bytes N  refuse an input larger than N bytes once\n"
    "                       decompressed (suffix K, M or G; default:\n"
    "                       $WATTSIM_MAX_TRACE_BYTES, else 1G)\n";

static const char *CHECK_HELP =
    "usage: wattsim trace check DIR [--format table|json]\n"
    "\n"
    "Load every trace of DIR (summary_train.csv and each summary_power_GPU.csv)\n"
    "with the same checks as every other command, then print per workload\n"
    "(dataset/network/optimizer and target metric) and GPU: its batch sizes,\n"
    "power limits, runs per batch size, the share of runs that reach the\n"
    "target, the knobs on the TTA/ETA Pareto frontier (eta 0.5, no epoch cap\n"
    "unless the catalogue has the workload), and warnings: fewer than 4 runs\n"
    "at a batch size, batch sizes with power rows but no runs or runs but no\n"
    "power rows, batch sizes none of whose runs reach the target, power limits\n"
    "missing at some batch sizes. Exit status 0 when the folder loads (even\n"
    "with warnings), 2 when it does not.\n"
    "\n"
    "  --format F         table (default) or json\n"
    "  --catalogue FILE   where to look up max_epochs and b0 of known workloads\n"
    "  --max-trace-bytes N  as for every command\n";

static void print_warnings(const ws_warnings *w)
{
    for (size_t i = 0; i < w->n; i++) ws_line("wattsim: warning: %s", w->msg[i]);
}

enum { O_GPU = 1, O_EPOCHS, O_NVSMI, O_DCGM, O_ZEUS, O_GPUS, O_OUT, O_FORCE, O_TZ,
       O_GAP, O_TOL, O_HELP, O_MAXB, O_RUNS, O_TARGET, O_HIGHER, O_LOWER, O_FORMAT,
       O_CATALOGUE, O_EPOCHS_TZ, O_WINDOW, O_COLUMNS, O_GPU_CYCLE, O_BS, O_STEPS,
       O_PROFILE_STEPS, O_JOB };

static int import_power(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, O_GPU}, {"epochs", required_argument, 0, O_EPOCHS},
        {"nvidia-smi", required_argument, 0, O_NVSMI}, {"dcgm", required_argument, 0, O_DCGM},
        {"zeus-monitor", required_argument, 0, O_ZEUS}, {"gpus", required_argument, 0, O_GPUS},
        {"out", required_argument, 0, O_OUT}, {"force", no_argument, 0, O_FORCE},
        {"log-tz", required_argument, 0, O_TZ}, {"max-gap", required_argument, 0, O_GAP},
        {"match-tolerance", required_argument, 0, O_TOL},
        {"max-trace-bytes", required_argument, 0, O_MAXB},
        {"epochs-tz", required_argument, 0, O_EPOCHS_TZ},
        {"window", required_argument, 0, O_WINDOW},
        {"columns", required_argument, 0, O_COLUMNS},
        {"gpu-cycle", required_argument, 0, O_GPU_CYCLE},
        {"batch-size", required_argument, 0, O_BS},
        {"steps-per-epoch", required_argument, 0, O_STEPS},
        {"profile-steps", required_argument, 0, O_PROFILE_STEPS},
        {"job", required_argument, 0, O_JOB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0},
    };
    /* The options as typed; judged and run by io/import_args.c, as the
     * library API's trace-import-power. */
    ws_power_args a = {.kind = -1};
    const char *cmd = "trace import power", *out = NULL, *maxb = NULL;
    int force = 0, c;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_HELP: fputs(POWER_HELP, ws_cli_out); return 0;
        case O_GPU: a.gpu = optarg; break;
        case O_EPOCHS: a.epochs = optarg; break;
        case O_NVSMI: case O_DCGM: case O_ZEUS:
            if (a.log) return ws_cli_usage(cmd, "%s", "takes one of --nvidia-smi, --dcgm,"
                                           " --zeus-monitor");
            a.log = optarg;
            a.kind = c == O_NVSMI ? WS_LOG_NVSMI : c == O_DCGM ? WS_LOG_DCGM : WS_LOG_ZEUS;
            break;
        case O_GPUS: a.gpus = optarg; break;
        case O_OUT: out = optarg; break;
        case O_FORCE: force = 1; break;
        case O_TZ: a.log_tz = optarg; break;
        case O_EPOCHS_TZ: a.epochs_tz = optarg; break;
        case O_COLUMNS: a.columns = optarg; break;
        case O_BS: a.batch_size = optarg; break;
        case O_STEPS: a.steps_per_epoch = optarg; break;
        case O_PROFILE_STEPS: a.profile_steps = optarg; break;
        case O_JOB: a.job = optarg; break;
        case O_GPU_CYCLE: a.gpu_cycle = optarg; break;
        case O_WINDOW: a.window = optarg; break;
        case O_GAP: a.max_gap = optarg; break;
        case O_TOL: a.match_tolerance = optarg; break;
        case O_MAXB: maxb = optarg; break;
        default: return ws_cli_bad_option(cmd, argv, c);
        }
    }
    if (optind != argc) return ws_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    ws_error err = {{0}};
    ws_power_job job;
    ws_csv_limits lim;
    ws_warnings w = {0};
    char path[4096];
    int rc = WS_EXIT_USAGE;
    if (ws_power_args_judge(&a, &job, &err)) {
        rc = ws_cli_usage(cmd, "%s", err.msg);
        err.msg[0] = 0;
        goto out;
    }
    if (!out) {
        rc = ws_cli_usage(cmd, "%s", "needs --out DIR");
        goto out;
    }
    if (ws_cli_check_out(cmd, "--out", out)) goto out;
    if (ws_cli_limits(maxb, &lim, &err)) goto out;
    snprintf(path, sizeof path, "%s/summary_power_%s.csv", out, a.gpu);
    ws_outfile_set_force(force);
    if (ws_outfile_check(path, &err)) goto out;      /* before any work */
    int r = ws_power_args_import(&a, &job, &lim, &w, &err);
    if (r > 0) {
        rc = ws_cli_usage(cmd, "%s", err.msg);
        err.msg[0] = 0;
        goto out;
    }
    if (r) goto out;
    const ws_power_table table = job.table;
    const ws_telemetry tel = job.tel;
    const int is_plo = job.is_plo;
    const char *log = a.log;
    if (ws_outdir_lock(out, &err) || ws_power_table_write(&table, path, &err)) goto out;
    print_warnings(&w);
    size_t nb, np;
    long ne;
    if (ws_power_table_summary(&table, &nb, &np, &ne)) {
        ws_fail(&err, "out of memory");
        goto out;
    }
    static char shown[WS_CLI_SHOW];
    if (is_plo)
        fprintf(ws_cli_out, "wrote %s: %zu knob%s (%zu batch size%s, %zu power limit%s) from the"
                " GlobalPowerLimitOptimizer profile's windows, GPU%s ",
                ws_name_show(path, shown, sizeof shown), table.n, ws_s(table.n), nb, ws_s(nb),
                np, ws_s(np), ws_s(tel.n_gpu));
    else
        fprintf(ws_cli_out, "wrote %s: %zu knob%s (%zu batch size%s, %zu power limit%s) from %ld"
                " epoch%s, GPU%s ", ws_name_show(path, shown, sizeof shown), table.n,
                ws_s(table.n), nb, ws_s(nb), np, ws_s(np), ne, ws_s((unsigned long long)ne),
                ws_s(tel.n_gpu));
    for (size_t k = 0; k < tel.n_gpu; k++)
        fprintf(ws_cli_out, "%s%s", k ? "+" : "", ws_name_show(tel.gpu[k].id, shown, sizeof shown));
    /* The model, when the log names it; of a node of mixed models, each
     * GPU's, with its own limit and their sum, the job's MaxPower. */
    if (table.max_power > 0) {
        fputs(" (mixed models:", ws_cli_out);
        for (size_t k = 0; k < tel.n_gpu; k++) {
            fprintf(ws_cli_out, "%s GPU %s", k ? "," : "", ws_name_show(tel.gpu[k].id, shown, sizeof shown));
            fprintf(ws_cli_out, " %s %.6g W", ws_name_show(tel.gpu[k].model ? tel.gpu[k].model : "(unnamed)",
                    shown, sizeof shown), ws_tel_gpu_limit(&tel.gpu[k]));
        }
        fprintf(ws_cli_out, "; MaxPower %.6g W, the sum)", table.max_power);
    } else if (tel.n_gpu && tel.gpu[0].model)
        fprintf(ws_cli_out, " (%zu x %s)", tel.n_gpu, ws_name_show(tel.gpu[0].model, shown, sizeof shown));
    fprintf(ws_cli_out, " of %s\n", ws_name_show(log, shown, sizeof shown));
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_power_job_free(&job);
    ws_warnings_free(&w);
    return rc;
}

static int import_train(int argc, char **argv)
{
    static const struct option opts[] = {
        {"runs", required_argument, 0, O_RUNS},
        {"target-metric", required_argument, 0, O_TARGET},
        {"higher-is-better", no_argument, 0, O_HIGHER},
        {"lower-is-better", no_argument, 0, O_LOWER},
        {"out", required_argument, 0, O_OUT}, {"force", no_argument, 0, O_FORCE},
        {"max-trace-bytes", required_argument, 0, O_MAXB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0},
    };
    const char *cmd = "trace import train";
    const char *runs = NULL, *target = NULL, *out = NULL, *maxb = NULL;
    int force = 0, higher = 0, lower = 0, c;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_HELP: fputs(TRAIN_HELP, ws_cli_out); return 0;
        case O_RUNS: runs = optarg; break;
        case O_TARGET: target = optarg; break;
        case O_HIGHER: higher = 1; break;
        case O_LOWER: lower = 1; break;
        case O_OUT: out = optarg; break;
        case O_FORCE: force = 1; break;
        case O_MAXB: maxb = optarg; break;
        default: return ws_cli_bad_option(cmd, argv, c);
        }
    }
    if (optind != argc) return ws_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!runs) return ws_cli_usage(cmd, "%s", "needs --runs METRICS.csv");
    if (!target) return ws_cli_usage(cmd, "%s", "needs --target-metric X");
    if (higher && lower)
        return ws_cli_usage(cmd, "%s", "--higher-is-better and --lower-is-better"
                            " exclude each other");
    if (!out) return ws_cli_usage(cmd, "%s", "needs --out DIR");
    if (ws_cli_check_out(cmd, "--out", out)) return WS_EXIT_USAGE;
    ws_train_import in = {runs, target, 0, lower, NULL};
    if (ws_parse_number(target, &in.target))
        return ws_cli_usage(cmd, "--target-metric: expected a number, got '%s'", target);
    ws_error err = {{0}};
    ws_csv_limits lim;
    ws_warnings w = {0};
    ws_train_table table = {0};
    char path[4096];
    int rc = WS_EXIT_USAGE;
    snprintf(path, sizeof path, "%s/summary_train.csv", out);
    in.lim = &lim;
    ws_outfile_set_force(force);
    if (ws_cli_limits(maxb, &lim, &err) || ws_outfile_check(path, &err)) goto out;
    if (ws_import_train(&in, &table, &w, &err)) goto out;
    if (ws_outdir_lock(out, &err) || ws_train_table_write(&table, path, &err)) goto out;
    print_warnings(&w);
    size_t reached = 0;
    for (size_t i = 0; i < table.n; i++) reached += table.rows[i].target_epoch > 0;
    static char shown[WS_CLI_SHOW];
    fprintf(ws_cli_out, "wrote %s: %zu run%s, %zu reach%s %s %s\n",
           ws_name_show(path, shown, sizeof shown), table.n, ws_s(table.n), reached,
           reached == 1 ? "es" : "", lower ? "<=" : ">=", target);
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_train_table_free(&table);
    ws_warnings_free(&w);
    return rc;
}

static int check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, 0, O_FORMAT},
        {"catalogue", required_argument, 0, O_CATALOGUE},
        {"max-trace-bytes", required_argument, 0, O_MAXB},
        {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0},
    };
    const char *cmd = "trace check", *format = "table", *maxb = NULL, *catalogue = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_HELP: fputs(CHECK_HELP, ws_cli_out); return 0;
        case O_FORMAT: format = optarg; break;
        case O_CATALOGUE: catalogue = optarg; break;
        case O_MAXB: maxb = optarg; break;
        default: return ws_cli_bad_option(cmd, argv, c);
        }
    }
    if (optind != argc - 1)
        return ws_cli_usage(cmd, "%s", optind >= argc ? "needs a trace folder DIR"
                                                      : "takes one trace folder DIR");
    int json = !strcmp(format, "json");
    if (!json && strcmp(format, "table"))
        return ws_cli_usage(cmd, "unknown format '%s' (table or json)", format);
    ws_error err = {{0}};
    ws_csv_limits lim;
    ws_catalogue cat = {0};
    ws_trace_check chk = {0};
    int rc = WS_EXIT_USAGE;
    if (ws_cli_limits(maxb, &lim, &err) || ws_cli_catalogue(catalogue, &cat, &err)
        || ws_trace_check_run(argv[optind], &lim, &cat, &chk, &err))
        goto out;
    ws_trace_check_print(ws_cli_out, &chk, json);
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_trace_check_free(&chk);
    ws_catalogue_free(&cat);
    return rc;
}

int ws_cli_trace(int argc, char **argv)
{
    if (argc < 2) {
        fputs(TRACE_HELP, stderr);
        return WS_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        fputs(TRACE_HELP, ws_cli_out);
        return 0;
    }
    if (!strcmp(sub, "check")) return check(argc - 1, argv + 1);
    if (!strcmp(sub, "import")) {
        if (argc < 3)
            return ws_cli_usage("trace import", "%s", "needs 'power' or 'train'");
        if (!strcmp(argv[2], "power")) return import_power(argc - 2, argv + 2);
        if (!strcmp(argv[2], "train")) return import_train(argc - 2, argv + 2);
        if (!strcmp(argv[2], "--help")) { fputs(TRACE_HELP, ws_cli_out); return 0; }
        return ws_cli_usage("trace import", "unknown kind '%s' (power or train)", argv[2]);
    }
    ws_line("wattsim trace: unknown subcommand '%s' (import or check; see"
            " 'wattsim trace --help')", sub);
    return WS_EXIT_USAGE;
}
