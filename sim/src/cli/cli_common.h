/*
 * What every wattsim subcommand shares: where traces and the workload
 * catalogue come from, and the one-line error convention (exit status 2).
 */
#ifndef WATTSIM_CLI_COMMON_H
#define WATTSIM_CLI_COMMON_H

#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/name.h"

#define WS_EXIT_USAGE 2

/* A buffer for ws_name_show (wattsim/name.h) of a path or name the user
 * gave, printed on stdout ("outputs in DIR/"): each byte may become \xHH. */
#define WS_CLI_SHOW (4 * 4096 + 1)

/* Where an installed wattsim keeps its data, relative to the folder of the
 * executable (set by the build from the install layout; the build tree
 * mirrors it: build/share/wattsim links to configs/ and traces/fetched/). */
#ifndef WS_REL_DATA_DIR
#define WS_REL_DATA_DIR "../share/wattsim"
#endif

/* PATH_IN_DATA under the data folder beside the running executable
 * (e.g. "workloads.yaml" -> /opt/ws/bin/../share/wattsim/workloads.yaml),
 * into buf; returns buf, or NULL if /proc/self/exe cannot be read. */
const char *ws_cli_data_path(const char *path_in_data, char *buf, size_t len);

/* The trace folder: the option, else the config's `traces`, else
 * $WATTSIM_TRACES, else the data folder's traces/zeus-nsdi23 (the fetched
 * Zeus traces). */
const char *ws_cli_traces(const char *opt, const ws_run_config *cfg);
/* Load the workload catalogue: the option, else $WATTSIM_CATALOGUE, else
 * the data folder's workloads.yaml. */
int ws_cli_catalogue(const char *opt, ws_catalogue *cat, ws_error *err);
/* Trace size limits: `opt` (the --max-trace-bytes value, N with an
 * optional K/M/G suffix), else $WATTSIM_MAX_TRACE_BYTES, else the reader's
 * default (1 GiB, as zeros). */
int ws_cli_limits(const char *opt, ws_csv_limits *out, ws_error *err);
/* Print "wattsim: MESSAGE"; returns WS_EXIT_USAGE. */
int ws_cli_die(const ws_error *err);
/* Print "wattsim CMD: <fmt with arg> (see 'wattsim CMD --help')"; returns
 * WS_EXIT_USAGE. */
int ws_cli_usage(const char *cmd, const char *fmt, const char *arg);
/* getopt_long's unknown option or missing value, as a usage error. */
int ws_cli_bad_option(const char *cmd, char **argv, int c);
/* An option naming an output (--out DIR, --out FILE, --plot FILE) obeys
 * the path rule (wattsim/name.h ws_path_check: no control characters):
 * else prints the usage error naming `opt` and returns WS_EXIT_USAGE; 0 if
 * it does. */
int ws_cli_check_out(const char *cmd, const char *opt, const char *path);
/* A --plot FILE option (ws_cli_check_out too): its base name must end in .png, .svg or .pdf and its
 * stem be a safe name (wattsim/name.h), as it names the .csv and .gp too.
 * Prints the usage error and returns WS_EXIT_USAGE, or returns 0. */
int ws_cli_check_plot_name(const char *cmd, const char *plot);
/* Where results go: a private duplicate of the stdout wattsim was started
 * with (ws_stdout_private, first thing in main). Descriptor 1, and stdio's
 * `stdout` with it, point at stderr for the whole run, so that nothing
 * policy code prints, from any thread at any time, reaches the results. */
extern FILE *ws_cli_out;
/* The exit status of a command that returned `rc`: the results stream
 * (ws_cli_out) is flushed and closed, and a failed write there (full disk,
 * /dev/full, closed pipe) is one line on stderr and status 1 (rc if that
 * was already nonzero). */
int ws_cli_exit(int rc);
/* "v100,a40" -> the config key `key` set to [v100, a40]; an error names
 * `opt` (the option the user typed, e.g. "--gpus"), or "--set KEY" when
 * opt is NULL. */
int ws_cli_set_list(ws_run_config *cfg, const char *key, const char *list, const char *opt,
                    ws_error *err);
/* An error of ws_run_config_set("KEY=..."), which reads "--set KEY: KEY
 * must be ...", rewritten to name the option the user typed: "OPT must
 * be ..." (or "OPT: ..."). Nothing changes when opt is NULL. */
void ws_cli_relabel(ws_error *err, const char *key, const char *opt);

/* The what-if options (plan, simulate, run, pareto, sweep, curves, groups
 * replay): they set the config keys of the same name (wattsim/config.h
 * ws_whatif_spec), and errors name the option. */
enum { WS_OPT_POWER_CAP = 3000, WS_OPT_INPUT_STALL, WS_OPT_IDLE_POWER,
       WS_OPT_CARBON, WS_OPT_START, WS_OPT_PRICE, WS_OPT_OBJECTIVE, WS_OPT_PRICE_TZ,
       WS_OPT_PRICE_LABEL, WS_OPT_EVERY, WS_OPT_DEFER, WS_OPT_JOB_POWER_CAP,
       WS_OPT_INPUT_RATE, WS_OPT_SAMPLES_PER_EPOCH, WS_OPT_CARBON_BASIS, WS_OPT_PRICE_ADJ };
/* the last of them, for a range test */
#define WS_OPT_WHATIF_LAST WS_OPT_PRICE_ADJ
#define WS_CLI_WHATIF_OPTIONS                                       \
    {"power-cap", required_argument, 0, WS_OPT_POWER_CAP},         \
    {"input-stall", required_argument, 0, WS_OPT_INPUT_STALL},     \
    {"idle-power", required_argument, 0, WS_OPT_IDLE_POWER},       \
    {"carbon", required_argument, 0, WS_OPT_CARBON},               \
    {"start", required_argument, 0, WS_OPT_START},                 \
    {"price", required_argument, 0, WS_OPT_PRICE},                 \
    {"objective", required_argument, 0, WS_OPT_OBJECTIVE},         \
    {"price-tz", required_argument, 0, WS_OPT_PRICE_TZ},           \
    {"price-label", required_argument, 0, WS_OPT_PRICE_LABEL},     \
    {"every", required_argument, 0, WS_OPT_EVERY},                 \
    {"defer-up-to", required_argument, 0, WS_OPT_DEFER},           \
    {"job-power-cap", required_argument, 0, WS_OPT_JOB_POWER_CAP}, \
    {"input-rate", required_argument, 0, WS_OPT_INPUT_RATE},       \
    {"samples-per-epoch", required_argument, 0, WS_OPT_SAMPLES_PER_EPOCH}, \
    {"carbon-basis", required_argument, 0, WS_OPT_CARBON_BASIS},   \
    {"price-adjustments", required_argument, 0, WS_OPT_PRICE_ADJ}
#define WS_CLI_WHATIF_HELP                                                    \
    "What-if options (also config keys power_cap, input_stall, ...; see\n"    \
    "docs/model.md, \"What-if transforms\"):\n"                               \
    "  --power-cap W      knobs whose limit is above W watts (per GPU) are\n" \
    "                     unavailable\n"                                       \
    "  --job-power-cap W  knobs whose limit x gpus_per_job is above W watts\n" \
    "                     (a job's or rack's budget) are unavailable\n"        \
    "  --input-stall S    a fraction S in [0, 1) of each epoch waits for input\n"\
    "  --input-rate R     the input pipeline delivers R samples/s: an epoch\n" \
    "                     takes at least N/R s (with --samples-per-epoch N;\n" \
    "                     not with --input-stall)\n"                           \
    "  --samples-per-epoch N  samples in one epoch (with --input-rate)\n"     \
    "  --idle-power W     power one GPU draws while waiting for input (with\n" \
    "                     --input-stall or --input-rate; times gpus_per_job)\n"\
    "  --carbon FILE      carbon-intensity series (gCO2eq/kWh): report grams;\n"\
    "                     CSV, or an Electricity Maps history JSON; repeated,\n"\
    "                     the files are joined in time order\n"                 \
    "  --carbon-basis B   an Electricity Maps file's basis: lifecycle (default,\n"\
    "                     the API's and Zeus's) or direct\n"                    \
    "  --start TIME       ISO 8601 time of the first recurrence (default: the\n"\
    "                     series' start)\n"                                     \
    "  --price X|FILE     electricity price, $/kWh or a series: report dollars;\n"\
    "                     a series is CSV, or an OpenEI utility-rate JSON\n"    \
    "                     (expanded hourly over 53 weeks from --start)\n"        \
    "  --price-tz TZ      the tariff's hours are in TZ: UTC (default), +HH:MM,\n"\
    "                     -HH:MM or an IANA name (America/New_York)\n"          \
    "  --price-label L    the tariff item with label L, when the file has several\n"\
    "  --price-adjustments include|ignore  add a tariff's adj to its rates\n"    \
    "                     (default ignore, as Zeus; a note gives its size)\n"   \
    "  --objective O      what eta weighs: energy (default), carbon or price\n"\
    "  --every D          recurrence k starts at start + k*D (24h, 6h, 90m), or\n"\
    "                     when the previous one finishes if later; default: back\n"\
    "                     to back\n"                                            \
    "  --defer-up-to D    each recurrence may wait up to D after its time for the\n"\
    "                     start that minimises the objective's series (carbon,\n"\
    "                     else price) x power over its run (a perfect forecast)\n"

/* Handle a what-if option: 1 if `c` was one (set in cfg), 0 if not, -1
 * with err set (naming the option) on a bad value. */
int ws_cli_whatif_opt(ws_run_config *cfg, int c, const char *arg, ws_error *err);

/*
 * A user-defined workload on the command line (simulate, run, pareto, and
 * any command that adds WS_CLI_JOB_OPTIONS): --job DATASET/NETWORK/OPTIMIZER
 * --target X --max-epochs N --b0 B, the same as an inline `job:` in a
 * config, named after its dataset.
 */
enum { WS_OPT_JOB = 3100, WS_OPT_TARGET, WS_OPT_MAX_EPOCHS, WS_OPT_B0 };
#define WS_CLI_JOB_OPTIONS                                         \
    {"job", required_argument, 0, WS_OPT_JOB},                     \
    {"target", required_argument, 0, WS_OPT_TARGET},               \
    {"max-epochs", required_argument, 0, WS_OPT_MAX_EPOCHS},       \
    {"b0", required_argument, 0, WS_OPT_B0}
#define WS_CLI_JOB_HELP                                                         \
    "  --job D/N/O        a workload not in the catalogue: dataset/network/\n"  \
    "                     optimizer of the train and power traces (named D);\n" \
    "                     needs --target X (the traces' target_metric),\n"      \
    "                     --max-epochs N and --b0 B (the default batch size)\n"

typedef struct ws_cli_job {
    const char *job, *target, *max_epochs, *b0;
} ws_cli_job;

/* Record a --job/--target/--max-epochs/--b0 value; 1 if c was one. */
int ws_cli_job_opt(ws_cli_job *j, int c, const char *arg);
/* Add the job to cfg->jobs. Returns 0 (also when no --job was given), or
 * prints a usage error for `cmd` and returns WS_EXIT_USAGE. */
int ws_cli_job_apply(const ws_cli_job *j, ws_run_config *cfg, const char *cmd);
/* After getopt_long: no operand left (optind == argc), and exactly one of
 * --workload W (workload nonzero) and --job D/N/O. Returns 0, or prints
 * the usage error for `cmd` and returns WS_EXIT_USAGE. */
int ws_cli_one_workload(const char *cmd, int argc, char **argv, int workload,
                        const ws_cli_job *j);

/*
 * The options every command takes (run, simulate, pareto, list, groups):
 * where traces and the catalogue are, --verbose, --quiet,
 * --max-trace-bytes, --help.
 */
typedef struct ws_cli_globals {
    const char *traces;
    const char *catalogue;
    int verbose;
    const char *max_trace_bytes;     /* --max-trace-bytes, unparsed */
    ws_csv_limits limits;            /* filled by ws_cli_trace_limits() */
} ws_cli_globals;

enum { WS_OPT_TRACES = 3200, WS_OPT_CATALOGUE, WS_OPT_VERBOSE, WS_OPT_QUIET,
       WS_OPT_MAX_TRACE_BYTES, WS_OPT_HELP };
#define WS_CLI_GLOBAL_OPTIONS                                          \
    {"traces", required_argument, 0, WS_OPT_TRACES},                   \
    {"catalogue", required_argument, 0, WS_OPT_CATALOGUE},             \
    {"verbose", no_argument, 0, WS_OPT_VERBOSE},                       \
    {"quiet", no_argument, 0, WS_OPT_QUIET},                           \
    {"max-trace-bytes", required_argument, 0, WS_OPT_MAX_TRACE_BYTES}, \
    {"help", no_argument, 0, WS_OPT_HELP}
/* Their --help text. */
extern const char WS_CLI_GLOBAL_HELP[];
/* The options of a command that runs no policy and shows no progress
 * (`list`): the inputs' options only, and their --help text. */
#define WS_CLI_INPUT_OPTIONS                                           \
    {"traces", required_argument, 0, WS_OPT_TRACES},                   \
    {"catalogue", required_argument, 0, WS_OPT_CATALOGUE},             \
    {"max-trace-bytes", required_argument, 0, WS_OPT_MAX_TRACE_BYTES}, \
    {"help", no_argument, 0, WS_OPT_HELP}
extern const char WS_CLI_INPUT_HELP[];
/* Handle a global option; 1 if it was one (--help is not: the command
 * prints its own help). */
int ws_cli_global_opt(ws_cli_globals *g, int c, const char *arg);
/* The decompressed-size limit per trace file, so that a gzip bomb fails
 * with a message instead of filling memory: --max-trace-bytes, else
 * $WATTSIM_MAX_TRACE_BYTES, else the reader's default (0 here); into
 * g->limits. */
int ws_cli_trace_limits(ws_cli_globals *g, ws_error *err);
/* KEY=VALUE into the config from option `opt` (e.g. --eta), whose name
 * an error carries. */
int ws_cli_set_kv(ws_run_config *cfg, const char *key, const char *value, const char *opt,
                  ws_error *err);
/* --allow-plugins DIR (run, sweep, curves, merge): a config may name
 * plugin files in DIR (wattsim/plugin.h ws_plugin_allow_dir). */
enum { WS_OPT_ALLOW_PLUGINS = 3300, WS_OPT_ALLOW_PYTHON = 3301 };
#define WS_CLI_PLUGIN_OPTIONS {"allow-plugins", required_argument, 0, WS_OPT_ALLOW_PLUGINS}, \
    {"allow-python", required_argument, 0, WS_OPT_ALLOW_PYTHON}
#define WS_CLI_PLUGIN_HELP                                                    \
    "  --allow-plugins DIR  let the config name plugin files (.so) in DIR\n"   \
    "                     (repeatable). A config runs no code: without this,\n"\
    "                     it may name only plugins of the policy folders\n"    \
    "                     (built-in, $WATTSIM_POLICY_DIR); options typed here\n"\
    "                     (--set, --policies) may name any .so. Recorded in\n" \
    "                     the JSON outputs; give it again to --resume/merge\n" \
    "  --allow-python PKG   let the config name Python policies\n"            \
    "                     (py:PKG.MODULE:CLASS) of package PKG (repeatable;\n"\
    "                     docs/python.md); recorded as --allow-plugins is\n"
/* Every policy the config file itself names (not --set) that is a plugin
 * file must pass ws_plugin_config_check: checked before anything loads. */
int ws_cli_config_plugins(const ws_run_config *cfg, ws_error *err);

/* Set a study's provenance (wattsim/provenance.h, ws_provenance_set): the
 * config's path, the traces of its GPUs, and the command that gives its
 * results: "wattsim", argv[0] (the command's name), the first positional
 * argument (CONFIG) by its real path, and each option of opts as typed,
 * with its value, except those `neutral` names (long names without "--",
 * NULL-terminated: options that change no result) and except further
 * positional arguments (merge's shard folders). An abbreviated option
 * (--thr 2) is recognised as getopt_long recognised it. 0, or -1 with err
 * set. */
struct option;
int ws_cli_provenance(int argc, char **argv, const struct option *opts, const char *const *neutral,
                      const ws_run_config *cfg, const char *traces_dir, ws_error *err);

/* Draw the figures in the config's style (its `style`, checked when the
 * config was read), or the default. */
int ws_cli_style(const ws_run_config *cfg, ws_error *err);

#endif
