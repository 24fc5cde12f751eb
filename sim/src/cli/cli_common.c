/* Helpers shared by the subcommands; see cli_common.h. */
#include <stdio.h>
#include <stdint.h>
#include <errno.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "wattsim/config_opts.h"
#include "wattsim/sweep.h"
#include "wattsim/plot.h"
#include "wattsim/name.h"
#include "wattsim/outfile.h"

FILE *ws_cli_out;
#include "wattsim/plugin.h"
#include "wattsim/progress.h"
#include "wattsim/provenance.h"


const char *ws_cli_data_path(const char *path_in_data, char *buf, size_t len)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    int w = snprintf(buf, len, "%s/%s/%s", exe, WS_REL_DATA_DIR, path_in_data);
    return w > 0 && (size_t)w < len ? buf : NULL;
}

/* Same precedence as cli.c: option, config, $WATTSIM_TRACES, data folder. */
const char *ws_cli_traces(const char *opt, const ws_run_config *cfg)
{
    static char dflt[4200];
    if (opt) return opt;
    if (cfg && cfg->traces) return cfg->traces;
    const char *env = getenv("WATTSIM_TRACES");
    if (env && *env) return env;
    const char *p = ws_cli_data_path("traces/zeus-nsdi23", dflt, sizeof dflt);
    return p ? p : "traces/fetched/zeus-nsdi23";
}

int ws_cli_catalogue(const char *opt, ws_catalogue *cat, ws_error *err)
{
    char dflt[4200];
    const char *p = opt;
    if (!p || !*p) p = getenv("WATTSIM_CATALOGUE");
    if (!p || !*p) p = ws_cli_data_path("workloads.yaml", dflt, sizeof dflt);
    if (!p) return ws_fail(err, "cannot find the workload catalogue (share/wattsim/"
                           "workloads.yaml beside the executable); give --catalogue FILE");
    return ws_catalogue_load(p, cat, err);
}

int ws_cli_limits(const char *opt, ws_csv_limits *out, ws_error *err)
{
    return ws_csv_limits_parse(opt, out, err);
}

int ws_cli_die(const ws_error *err)
{
    ws_line("wattsim: %s", err->msg);
    return WS_EXIT_USAGE;
}

int ws_cli_usage(const char *cmd, const char *fmt, const char *arg)
{
    /* The option's value as the user typed it: escaped by ws_line. */
    size_t len = strlen(fmt) + strlen(arg) + 1;
    char *what = malloc(len);
    if (what) snprintf(what, len, fmt, arg);
    ws_line("wattsim %s: %s (see 'wattsim %s --help')", cmd, what ? what : fmt, cmd);
    free(what);
    return WS_EXIT_USAGE;
}

int ws_cli_bad_option(const char *cmd, char **argv, int c)
{
    const char *arg = argv[optind - 1];
    if (c == ':') return ws_cli_usage(cmd, "option '%s' needs a value", arg);
    return ws_cli_usage(cmd, "unknown option '%s'", arg);
}

void ws_cli_relabel(ws_error *err, const char *key, const char *opt)
{
    ws_config_relabel(err, key, opt);
}

int ws_cli_set_list(ws_run_config *cfg, const char *key, const char *list, const char *opt,
                    ws_error *err)
{
    size_t len = strlen(list) + 3;
    char *s = malloc(len);
    if (!s) return ws_fail(err, "out of memory");
    snprintf(s, len, "[%s]", list);
    int rc = ws_config_set_kv(cfg, key, s, opt, err);
    free(s);
    return rc;
}

int ws_cli_check_out(const char *cmd, const char *opt, const char *path)
{
    char why[64];
    ws_error e = {{0}};
    if (!ws_path_check(path, why, sizeof why)) return 0;
    ws_fail(&e, "%s '%s' %s; an output's path is printed and made a file's or folder's name: "
            WS_PATH_RULE, opt, path, why);
    return ws_cli_usage(cmd, "%s", e.msg);   /* ws_fail escaped it */
}

int ws_cli_check_plot_name(const char *cmd, const char *plot)
{
    const char *base = strrchr(plot, '/');
    base = base ? base + 1 : plot;
    size_t n = strlen(base);
    char stem[WS_NAME_MAX + 8], why[64];
    ws_error e = {{0}};
    if (ws_cli_check_out(cmd, "--plot", plot)) return WS_EXIT_USAGE;
    if (ws_plot_kind(base) < 0)
        ws_fail(&e, "--plot '%s': the image's name must end in .png, .svg or .pdf", plot);
    else if (n - 4 >= sizeof stem)
        ws_fail(&e, "--plot '%s': the name is longer than %d characters", plot, WS_NAME_MAX);
    else {
        memcpy(stem, base, n - 4);
        stem[n - 4] = '\0';
        if (ws_name_check(stem, why, sizeof why))
            ws_fail(&e, "--plot '%s': the name %s; it names the image, its .csv and .gp: "
                        WS_NAME_RULE, plot, why);
    }
    if (!e.msg[0]) return 0;
    return ws_cli_usage(cmd, "%s", e.msg);   /* ws_fail made it one line */
}

static const struct {
    int opt;
    const char *name, *key;
    int slot;
} whatif_opts[] = {
#define WHATIF_OPT(id, name_, key_, slot_) {WS_OPT_##id, "--" name_, key_, slot_},
    WS_WHATIF_OPTIONS(WHATIF_OPT)
#undef WHATIF_OPT
};

int ws_cli_whatif_opt(ws_run_config *cfg, int c, const char *arg, ws_error *err)
{
    size_t i = 0, n = sizeof whatif_opts / sizeof *whatif_opts;
    while (i < n && whatif_opts[i].opt != c) i++;
    if (i == n) return 0;
    if (ws_config_set_whatif(cfg, whatif_opts[i].key, whatif_opts[i].slot,
                             whatif_opts[i].name, arg, err))
        return -1;
    return 1;
}

/* Whether fd is a pipe or socket whose reader has gone: its write end
 * then polls POLLERR (a pipe) or POLLHUP (a socket). Asked of the
 * descriptor, not of errno: errno after a failed stdio write may be
 * stale. */
static int reader_gone(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return 0;
    struct pollfd p = {fd, POLLOUT, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

int ws_cli_exit(int rc)
{
    ws_error err = {{0}};
    /* Tables on stdout print a non-finite number as a dash, and the
     * command then fails as the bug it is (wattsim/error.h); a command
     * that failed already said so (an output file's commit refused it). */
    if (ws_output_check("standard output", &err)) {
        fflush(ws_cli_out);
        if (!rc) ws_line("wattsim: %s", err.msg);
        return WS_EXIT_INTERNAL;
    }
    /* A second descriptor of stdout's pipe, to ask after the close: the
     * reader may go between a question asked before the final flush and
     * that flush (`wattsim ... | head` exiting as the last lines are
     * written), and the close then fails with EPIPE. */
    const int probe = fcntl(fileno(ws_cli_out), F_DUPFD_CLOEXEC, 3);
    const int failed = ws_stdout_close(ws_cli_out, &err);
    const int gone = failed && reader_gone(probe);
    if (probe >= 0) close(probe);
    if (!failed) return rc;
    /* The reader of stdout went away (SIGPIPE is ignored, see process.c):
     * the outputs are complete; end as a pipeline's writer does, without
     * a message no one would read. */
    if (gone) return 128 + SIGPIPE;
    ws_line("wattsim: %s", err.msg);
    return rc ? rc : 1;
}

int ws_cli_job_opt(ws_cli_job *j, int c, const char *arg)
{
    switch (c) {
    case WS_OPT_JOB: j->job = arg; return 1;
    case WS_OPT_TARGET: j->target = arg; return 1;
    case WS_OPT_MAX_EPOCHS: j->max_epochs = arg; return 1;
    case WS_OPT_B0: j->b0 = arg; return 1;
    }
    return 0;
}

int ws_cli_job_apply(const ws_cli_job *j, ws_run_config *cfg, const char *cmd)
{
    ws_error err = {{0}};
    int rc = ws_config_add_job(cfg, j->job, j->target, j->max_epochs, j->b0, &err);
    if (rc == -2) {
        fprintf(stderr, "wattsim: out of memory\n");
        return WS_EXIT_USAGE;
    }
    return rc ? ws_cli_usage(cmd, "%s", err.msg) : 0;
}

#define WS_CLI_INPUT_LINES                                                       \
    "  --traces DIR       trace folder (default: $WATTSIM_TRACES, else the\n"       \
    "                     fetched Zeus traces in share/wattsim/traces/zeus-nsdi23\n" \
    "                     beside the executable's folder)\n"                        \
    "  --catalogue FILE   workload catalogue (default: $WATTSIM_CATALOGUE, else\n"  \
    "                     share/wattsim/workloads.yaml beside the executable's\n"   \
    "                     folder)\n"
#define WS_CLI_LIMIT_LINES                                                       \
    "  --max-trace-bytes N  refuse a trace file larger than N bytes once\n"        \
    "                     decompressed (suffix K, M or G; default:\n"              \
    "                     $WATTSIM_MAX_TRACE_BYTES, else 1G)\n"

const char WS_CLI_GLOBAL_HELP[] =
    "Common options:\n"
    WS_CLI_INPUT_LINES
    "  --verbose          let policies log what they do (stderr)\n"
    "  --quiet            no progress display (a bar on a terminal, else a\n"
    "                     line every 10 s, for commands running over 1 s)\n"
    WS_CLI_LIMIT_LINES
    "  --help             this help\n";

const char WS_CLI_INPUT_HELP[] =
    "Common options:\n"
    WS_CLI_INPUT_LINES
    WS_CLI_LIMIT_LINES
    "  --help             this help\n";

int ws_cli_global_opt(ws_cli_globals *g, int c, const char *arg)
{
    switch (c) {
    case WS_OPT_TRACES: g->traces = arg; return 1;
    case WS_OPT_CATALOGUE: g->catalogue = arg; return 1;
    case WS_OPT_VERBOSE: g->verbose = 1; ws_policy_set_log_level(WS_LOG_DEBUG); return 1;
    case WS_OPT_MAX_TRACE_BYTES: g->max_trace_bytes = arg; return 1;
    case WS_OPT_QUIET: ws_progress_set_quiet(1); return 1;
    }
    return 0;
}

int ws_cli_trace_limits(ws_cli_globals *g, ws_error *err)
{
    return ws_cli_limits(g->max_trace_bytes, &g->limits, err);
}

int ws_cli_set_kv(ws_run_config *cfg, const char *key, const char *value, const char *opt,
                  ws_error *err)
{
    return ws_config_set_kv(cfg, key, value, opt, err);
}

int ws_cli_config_plugins(const ws_run_config *cfg, ws_error *err)
{
    return ws_policy_config_allowed(cfg, err);
}

int ws_cli_one_workload(const char *cmd, int argc, char **argv, int workload,
                        const ws_cli_job *j)
{
    if (optind != argc) return ws_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!workload == !j->job)
        return ws_cli_usage(cmd, "%s", workload ? "takes --workload W or --job D/N/O, not both"
                                                : "needs --workload W (or --job D/N/O)");
    return 0;
}

/* The option of opts that `name` (len bytes, no "--") names: exactly, else
 * as the unique prefix getopt_long took it for. */
static const struct option *find_option(const struct option *opts, const char *name,
                                        size_t len)
{
    const struct option *hit = NULL;
    for (const struct option *o = opts; o->name; o++) {
        if (strncmp(o->name, name, len)) continue;
        if (!o->name[len]) return o;
        hit = hit ? hit : o;
    }
    return hit;
}

/* The command of ws_cli_provenance; malloc'd, NULL when out of memory. */
static char *results_command(int argc, char **argv, const struct option *opts,
                             const char *const *neutral)
{
    char **v = calloc((size_t)argc + 2, sizeof *v), *config = NULL;
    if (!v) return NULL;
    /* v[2] is CONFIG, wherever it was typed (getopt_long has moved it
     * after the options by now) */
    int n = 3, positional = 0, rest = 0;
    v[0] = "wattsim";
    v[1] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!rest && !strcmp(a, "--")) { rest = 1; continue; }
        if (rest || strncmp(a, "--", 2) || !a[2]) {
            if (positional++) continue;            /* a shard folder of merge */
            config = realpath(a, NULL);
            v[2] = config ? config : argv[i];
            continue;
        }
        size_t len = strcspn(a + 2, "=");
        const struct option *o = find_option(opts, a + 2, len);
        int takes_next = o && o->has_arg == required_argument && !a[2 + len] && i + 1 < argc;
        int drop = 0;
        for (size_t k = 0; o && neutral[k] && !drop; k++) drop = !strcmp(o->name, neutral[k]);
        if (!drop) {
            v[n++] = argv[i];
            if (takes_next) v[n++] = argv[i + 1];
        }
        if (takes_next) i++;
    }
    if (!v[2]) memmove(v + 2, v + 3, (size_t)(n-- - 3) * sizeof *v);
    char *s = ws_command_line(n, v);
    free(config);
    free(v);
    return s;
}

int ws_cli_provenance(int argc, char **argv, const struct option *opts, const char *const *neutral,
                      const ws_run_config *cfg, const char *traces_dir, ws_error *err)
{
    char *results = results_command(argc, argv, opts, neutral);
    const int rc = results ? ws_provenance_set(results, cfg->path, traces_dir, cfg->gpus, cfg->n_gpus, err)
                           : ws_fail(err, "out of memory");
    free(results);
    return rc;
}

int ws_cli_style(const ws_run_config *cfg, ws_error *err)
{
    ws_style st;
    ws_style_default(&st);
    if (cfg->style && ws_style_parse(cfg->style, &st, err)) return -1;
    ws_plot_set_style(&st);
    return 0;
}
