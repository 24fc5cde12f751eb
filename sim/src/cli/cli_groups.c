/*
 * `wattsim groups`: concurrent recurrences (cluster replay).
 *
 *   groups synth   write a SYNTHETIC group trace (the paper's Alibaba group
 *                  file is not public): Poisson arrivals, a chosen overlap
 *                  rate, log-normal runtime ratios, seeded.
 *   groups replay  replay every group of a group trace with a policy pair
 *                  and with default/default; per-group and cluster-wide
 *                  ETA/TTA/cost and savings versus default (written by
 *                  cli_groups_report.c).
 *
 * Like the rest of the CLI: one-line errors naming file and line, exit
 * status 2, output files written through ws_outfile (never half-written).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_groups.h"
#include "cli_groups_report.h"
#include <stdint.h>
#include "wattsim/sweep.h"
#include "wattsim/progress.h"
#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/group.h"
#include "wattsim/outfile.h"
#include "wattsim/plugin.h"
#include "wattsim/report.h"
#include "wattsim/study.h"
#include "wattsim/trace.h"
#include "wattsim/whatif.h"


#define EXIT_USAGE WS_EXIT_USAGE

/* Mean time between two submissions of a synthetic group, seconds. */
#define SYNTH_MEAN_GAP 3600.0

static const char *GROUPS_HELP =
    "usage: wattsim groups synth|replay [OPTIONS]\n"
    "\n"
    "Recurring jobs whose submissions may overlap (cluster replay), as in the\n"
    "Alibaba experiment of the Zeus paper. A group trace is a CSV file\n"
    "group,start_time,end_time,dataset,runtime_ratio; one group is one\n"
    "recurring job (the catalogue's workload for its dataset).\n"
    "\n"
    "  synth    write a SYNTHETIC group trace (the paper's file is not public)\n"
    "  replay   replay a group trace with a policy pair and with default/default\n"
    "\n"
    "'wattsim groups synth --help', 'wattsim groups replay --help' for details.\n";

static const char *SYNTH_HELP =
    "usage: wattsim groups synth --out FILE [--groups N] [--jobs-per-group N]\n"
    "                            [--overlap RATE] [--seed N] [--datasets a,b,...]\n"
    "                            [--ratio-sigma S] [--force]\n"
    "\n"
    "Write a SYNTHETIC group trace. The Alibaba group trace of the Zeus paper\n"
    "is not available; this one only has its format and the features that\n"
    "matter to the replay. Group k (synth-0001, ...) takes the k-th dataset\n"
    "round-robin. Its submissions arrive as a Poisson process (exponential\n"
    "gaps, mean 3600 s). Each submission overlaps the next one (the next starts\n"
    "before it ends) with probability RATE: its wall duration is then 1.1 to 2\n"
    "times the gap to the next arrival, else 0.1 to 0.9 times it (uniform).\n"
    "Times are whole milliseconds. runtime_ratio is log-normal with mean 1:\n"
    "exp(N(-S^2/2, S^2)). Each group has its own random stream derived from\n"
    "(seed, group), so the same options give the same file, byte for byte.\n"
    "\n"
    "  --out FILE         output CSV (required)\n"
    "  --groups N         number of groups; default 12\n"
    "  --jobs-per-group N submissions per group; default 40\n"
    "  --overlap RATE     fraction of submissions that overlap the next, in\n"
    "                     [0, 1]; default 0.3\n"
    "  --seed N           default 1\n"
    "  --datasets LIST    comma-separated catalogue workloads; default all\n"
    "  --ratio-sigma S    log-normal sigma of runtime_ratio (0 = all 1);\n"
    "                     default 0.5\n"
    "  --force            replace an existing FILE\n";

static const char *REPLAY_HELP =
    "usage: wattsim groups replay --trace FILE [--gpu G] [--eta X] [--beta X]\n"
    "                             [--bso NAME] [--plo NAME] [--seed N]\n"
    "                             [--out DIR] [--format table|csv|json] [--force]\n"
    "                             [--carbon FILE] [--price X|FILE] [--start TIME]\n"
    "\n"
    "Replay every group of a group trace as the published Zeus simulator does\n"
    "(simulate_one_alibaba_group): a submission that starts while others of its\n"
    "group run uses the best batch size known so far; a failed one is\n"
    "resubmitted when it ends, with the same wall duration. Each group is\n"
    "replayed with the chosen policies and with default/default, with the\n"
    "same seed: zlib.adler32(group name) + N. Energy and time are scaled by the\n"
    "row's runtime_ratio. Prints per-group and cluster-wide ETA, TTA and cost\n"
    "and the savings versus default.\n"
    "\n"
    "With --carbon and/or --price, the earliest start_time of the trace is\n"
    "--start (default: the series' start) and every group runs on that one\n"
    "clock: policies see the carbon intensity and price at the start of each\n"
    "submission, and each run is charged grams CO2eq and dollars for its scaled\n"
    "energy over its scaled duration from its start; the outputs add co2_g/usd\n"
    "columns (table: CO2 kg, $ and their savings). The objective stays energy.\n"
    "\n"
    "  --trace FILE       group trace (CSV, plain or gzip); required\n"
    "  --gpu G            GPU; default v100\n"
    "  --eta X            cost weight of energy, in [0, 1]; default 0.5\n"
    "  --beta X           early-stopping factor (inf = off); default 2\n"
    "  --bso NAME         batch-size optimizer or path to a .so; default zeus\n"
    "  --plo NAME         power-limit optimizer or path to a .so; default jit\n"
    "  --seed N           added to every group's seed; default 0\n"
    "  --force            replace earlier outputs in --out DIR\n"
    "  --out DIR          also write groups.csv, groups.json and history.csv\n"
    "  --format F         stdout: table (default), csv or json\n"
    "\n" WS_CLI_WHATIF_HELP
    "                     (not here: the replay's costs stay energy costs)\n";

enum { O_OUT = 1000, O_GROUPS, O_JOBS, O_OVERLAP, O_SEED, O_DATASETS, O_SIGMA,
       O_TRACE, O_GPU, O_ETA, O_BETA, O_BSO, O_PLO, O_FORMAT, O_FORCE };






/* Strict number parsing for option values. */
static int opt_double(const char *cmd, const char *name, const char *s, double lo,
                      double hi, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || isnan(x) || x < lo || x > hi) {
        ws_line("wattsim groups %s: --%s '%s' must be a number in [%g, %g]"
                " (see 'wattsim groups %s --help')", cmd, name, s, lo, hi, cmd);
        return -1;
    }
    *out = x;
    return 0;
}

static int opt_long(const char *cmd, const char *name, const char *s, long lo,
                    long hi, long *out)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end || x < lo || x > hi) {
        ws_line("wattsim groups %s: --%s '%s' must be an integer in [%ld, %ld]"
                " (see 'wattsim groups %s --help')", cmd, name, s, lo, hi, cmd);
        return -1;
    }
    *out = x;
    return 0;
}

/* ------------------------------------------------------------ synth */

static int cmd_synth(int argc, char **argv, ws_cli_globals *co)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, O_OUT},
        {"groups", required_argument, 0, O_GROUPS},
        {"jobs-per-group", required_argument, 0, O_JOBS},
        {"overlap", required_argument, 0, O_OVERLAP},
        {"seed", required_argument, 0, O_SEED},
        {"datasets", required_argument, 0, O_DATASETS},
        {"ratio-sigma", required_argument, 0, O_SIGMA},
        {"force", no_argument, 0, O_FORCE},
        WS_CLI_GLOBAL_OPTIONS, {0, 0, 0, 0},
    };
    const char *out = NULL, *datasets = NULL;
    long groups = 12, jobs = 40, seed = 1;
    double overlap = 0.3, sigma = 0.5;
    int c, force = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_global_opt(co, c, optarg)) continue;
        switch (c) {
        case WS_OPT_HELP: fprintf(ws_cli_out, "%s\n%s", SYNTH_HELP, WS_CLI_GLOBAL_HELP); return 0;
        case O_FORCE: force = 1; break;
        case O_OUT: out = optarg; break;
        case O_GROUPS:
            if (opt_long("synth", "groups", optarg, 1, 100000, &groups)) return EXIT_USAGE;
            break;
        case O_JOBS:
            if (opt_long("synth", "jobs-per-group", optarg, 1, 1000000, &jobs))
                return EXIT_USAGE;
            break;
        case O_OVERLAP:
            if (opt_double("synth", "overlap", optarg, 0, 1, &overlap)) return EXIT_USAGE;
            break;
        case O_SEED:
            if (opt_long("synth", "seed", optarg, 0, 0x7fffffffL, &seed)) return EXIT_USAGE;
            break;
        case O_DATASETS: datasets = optarg; break;
        case O_SIGMA:
            if (opt_double("synth", "ratio-sigma", optarg, 0, 10, &sigma)) return EXIT_USAGE;
            break;
        default: return ws_cli_bad_option("groups synth", argv, c);
        }
    }
    if (optind != argc) return ws_cli_usage("groups synth", "unexpected argument '%s'", argv[optind]);
    if (!out) return ws_cli_usage("groups synth", "%s", "needs --out FILE");
    if (ws_cli_check_out("groups synth", "--out", out)) return EXIT_USAGE;

    ws_error err = {{0}};
    char shown[WS_CLI_SHOW];
    ws_catalogue cat = {0};
    ws_outfile of = {0};
    const char **names = NULL;
    char *list = NULL;
    size_t nd = 0;
    int rc = EXIT_USAGE;
    if (ws_cli_catalogue(co->catalogue, &cat, &err)) goto done;
    if (datasets) {
        list = strdup(datasets);
        names = calloc(strlen(datasets) + 1, sizeof *names);
        if (!list || !names) { ws_fail(&err, "out of memory"); goto done; }
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            if (!ws_catalogue_find(&cat, t)) {
                rc = ws_cli_usage("groups synth", "--datasets: '%s' is not a catalogue workload;"
                           " 'wattsim list workloads' lists them", t);
                goto done;
            }
            names[nd++] = t;
        }
        if (nd == 0) { rc = ws_cli_usage("groups synth", "%s", "--datasets is empty"); goto done; }
    } else {
        names = calloc(cat.n + 1, sizeof *names);
        if (!names) { ws_fail(&err, "out of memory"); goto done; }
        for (size_t i = 0; i < cat.n; i++) names[nd++] = cat.items[i].name;
        if (nd == 0) { ws_fail(&err, "the workload catalogue is empty"); goto done; }
    }
    ws_group_synth_params sp = {groups, jobs, overlap, sigma, SYNTH_MEAN_GAP,
                                (unsigned long)seed, names, nd};
    long n_overlap = 0;
    if (!force && access(out, F_OK) == 0) {
        ws_fail(&err, "%s: exists; pass --force to replace it", out);
        goto done;
    }
    ws_outfile_set_force(force);
    if (ws_outfile_open(&of, out, &err) || ws_group_synth(of.f, &sp, &n_overlap, &err))
        goto done;
    if (ws_outfile_commit(&of, &err)) goto done;
    long pairs = groups * (jobs - 1);
    fprintf(ws_cli_out, "wrote %s: SYNTHETIC group trace, %ld group%s x %ld submission%s,"
           " %ld of %ld consecutive pairs overlap (%.1f %%)\n",
           ws_name_show(out, shown, sizeof shown), groups, ws_s((unsigned long long)groups), jobs,
           ws_s((unsigned long long)jobs),
           n_overlap, pairs, pairs ? 100.0 * (double)n_overlap / (double)pairs : 0.0);
    rc = 0;
done:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_outfile_abort(&of);
    free(names);
    free(list);
    ws_catalogue_free(&cat);
    return rc;
}

/* ------------------------------------------------------------ replay */

typedef struct pair {
    const ws_bso_type *bt;
    const ws_plo_type *pt;
    ws_value *bv, *pv;
} pair;

static int resolve_pair(ws_registry *reg, const char *bso, const char *plo, pair *p,
                        ws_error *err)
{
    if (!(p->bt = ws_registry_bso(reg, bso, err))) return -1;
    if (!(p->pt = ws_registry_plo(reg, plo, err))) return -1;
    char who[96];
    snprintf(who, sizeof who, "bso %s", p->bt->name);
    if (ws_params_resolve(p->bt->params, NULL, 0, who, &p->bv, err)) return -1;
    snprintf(who, sizeof who, "plo %s", p->pt->name);
    return ws_params_resolve(p->pt->params, NULL, 0, who, &p->pv, err);
}

static void pair_free(pair *p)
{
    if (p->bt) ws_params_free(p->bt->params, p->bv);
    if (p->pt) ws_params_free(p->pt->params, p->pv);
}

static int run_group(const ws_job *job, const pair *p, const ws_group *g,
                     unsigned long seed, const ws_group_env *env, history_ctx *h,
                     ws_group_totals *tot, ws_error *err)
{
    ws_bso *bso = ws_bso_new(p->bt, p->bv, seed, err);
    ws_plo *plo = bso ? ws_plo_new(p->pt, p->pv, seed, err) : NULL;
    if (plo) {
        /* log lines: "[group NAME, seed S, recurrence ROW try A]" */
        char where[128];
        snprintf(where, sizeof where, "group %s", g->name);
        ws_policy_log_where(bso, plo, where);
    }
    int rc = !bso || !plo
             || ws_group_simulate(job, bso, plo, g, seed, env, ws_groups_history_row, h, tot,
                                  err);
    ws_plo_free(plo);
    ws_bso_free(bso);
    return rc ? -1 : 0;
}

/* What the command line asks of a replay. */
typedef struct replay_opts {
    const char *trace, *gpu, *bso, *plo, *out;
    int fmt, force;
    double eta, beta;
    long seed;
    const ws_whatif_spec *whatif;        /* --carbon, --price, --start, ... */
} replay_opts;

static int replay(const replay_opts *o, ws_cli_globals *co);

static int cmd_replay(int argc, char **argv, ws_cli_globals *co)
{
    static const struct option opts[] = {
        {"trace", required_argument, 0, O_TRACE},
        {"gpu", required_argument, 0, O_GPU},
        {"eta", required_argument, 0, O_ETA},
        {"beta", required_argument, 0, O_BETA},
        {"bso", required_argument, 0, O_BSO},
        {"plo", required_argument, 0, O_PLO},
        {"seed", required_argument, 0, O_SEED},
        {"out", required_argument, 0, O_OUT},
        {"format", required_argument, 0, O_FORMAT},
        {"force", no_argument, 0, O_FORCE},
        WS_CLI_WHATIF_OPTIONS, WS_CLI_GLOBAL_OPTIONS, {0, 0, 0, 0},
    };
    replay_opts o = {NULL, "v100", "zeus", "jit", NULL, 0, 0, 0.5, 2.0, 0, NULL};
    const char *format = "table";
    ws_error err = {{0}};
    ws_run_config wcfg;                  /* only its what-if keys are used */
    int c, is_wi, rc = EXIT_USAGE;
    ws_run_config_init(&wcfg);
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (ws_cli_global_opt(co, c, optarg)) continue;
        if ((is_wi = ws_cli_whatif_opt(&wcfg, c, optarg, &err)) < 0) goto out;
        if (is_wi) continue;
        switch (c) {
        case WS_OPT_HELP:
            fprintf(ws_cli_out, "%s\n%s", REPLAY_HELP, WS_CLI_GLOBAL_HELP);
            rc = 0;
            goto out;
        case O_FORCE: o.force = 1; break;
        case O_TRACE: o.trace = optarg; break;
        case O_GPU: o.gpu = optarg; break;
        case O_ETA:
            if (opt_double("replay", "eta", optarg, 0, 1, &o.eta)) goto out;
            break;
        case O_BETA:
            if (opt_double("replay", "beta", optarg, 1e-300, INFINITY, &o.beta)) goto out;
            break;
        case O_BSO: o.bso = optarg; break;
        case O_PLO: o.plo = optarg; break;
        case O_SEED:
            if (opt_long("replay", "seed", optarg, 0, 0x7fffffffL, &o.seed)) goto out;
            break;
        case O_OUT: o.out = optarg; break;
        case O_FORMAT: format = optarg; break;
        default: rc = ws_cli_bad_option("groups replay", argv, c); goto out;
        }
    }
    if (optind != argc) {
        rc = ws_cli_usage("groups replay", "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (!o.trace) { rc = ws_cli_usage("groups replay", "%s", "needs --trace FILE"); goto out; }
    if ((o.fmt = ws_format_parse(format)) < 0) {
        rc = ws_cli_usage("groups replay", "unknown format '%s' (table, csv or json)", format);
        goto out;
    }
    if (ws_whatif_spec_validate(&wcfg.whatif, &err)) goto out;
    o.whatif = &wcfg.whatif;
    rc = replay(&o, co);
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_run_config_free(&wcfg);
    return rc;
}

static int replay(const replay_opts *o, ws_cli_globals *co)
{
    const char *trace = o->trace, *gpu = o->gpu, *out = o->out;
    const int fmt = o->fmt, force = o->force;
    const double eta = o->eta, beta = o->beta;
    const long seed = o->seed;
    ws_progress bar = {0};                /* silent until started */
    ws_whatif wi = {0};
    ws_error err = {{0}};
    ws_catalogue cat = {0};
    ws_group_trace gt = {0};
    ws_traces tr = {0};
    ws_registry *reg = ws_registry_new();
    ws_job_table *jts = NULL;
    group_result *res = NULL;
    group_result all = {0};
    pair pol = {0}, def = {0};
    ws_outfile of[3] = {{0}};
    int rc = EXIT_USAGE;
    /* Under mpirun (an MPI build): rank r replays the groups i with
     * i mod R = r. Rank 0 goes through the groups in order, replaying its
     * own (their history straight into history.csv) and receiving each
     * other group, as one message, from the rank that replayed it (which
     * waits until rank 0 takes it before replaying its next): so the
     * files are one process's bytes, and no rank holds more than one
     * group's history. A rank that fails sends its message instead of the
     * group and stops; rank 0 keeps the first failure in group order (the
     * one a single process stops at) and takes (and drops) every message
     * still to come, so that no rank is left waiting: the ranks that did
     * not fail replay the rest of their share. */
    int mpi = 0, mrank = 0, msize = 1, mphase = 0, failed = 0;
    char *msg = NULL, *hb = NULL;
    size_t msg_cap = 0;
    int *gone = NULL;                     /* rank 0: ranks that sent a failure */
    (void)msg_cap;                        /* the MPI build's only */
#ifdef WS_HAVE_MPI
    mpi = ws_mpi_active(&mrank, &msize);
    if (mpi && mrank) ws_progress_set_quiet(1);
#endif
    if (!reg) { ws_fail(&err, "out of memory"); goto done; }
    if (out && ws_cli_check_out("groups replay", "--out", out)) goto done;
    const ws_csv_limits *lim = &co->limits;
    if (ws_cli_trace_limits(co, &err) || ws_whatif_load(&wi, o->whatif, lim, &err))
        goto done;
    if (wi.objective != WS_OBJ_ENERGY) {
        ws_fail(&err, "%s: groups replay weighs energy only (its costs and best batch"
                " sizes stay energy costs); drop --objective",
                o->whatif->where[WS_WI_OBJECTIVE] ? o->whatif->where[WS_WI_OBJECTIVE]
                                                  : "--objective");
        goto done;
    }
    if (ws_cli_catalogue(co->catalogue, &cat, &err)
        || ws_group_trace_load(trace, &cat, lim, &gt, &err)
        || resolve_pair(reg, o->bso, o->plo, &pol, &err)
        || resolve_pair(reg, "default", "default", &def, &err)
        || ws_traces_load(&tr, ws_cli_traces(co->traces, NULL), gpu, lim, &err))
        goto done;
    const ws_group_env env = {&wi, ws_group_trace_t0(&gt)};
    jts = calloc(cat.n, sizeof *jts);
    res = calloc(gt.n, sizeof *res);
    if (!jts || !res) { ws_fail(&err, "out of memory"); goto done; }
    history_ctx h = {NULL, NULL, NULL, &wi};
    if (out && mrank == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/groups.csv", out);
        if (!force && access(path, F_OK) == 0) {
            ws_fail(&err, "%s: outputs of an earlier replay are there; pass --force to"
                    " replace them or --out another folder", out);
            goto done;
        }
        ws_outfile_set_force(force);
        /* the group trace itself, say DIR/groups.csv, is never replaced */
        snprintf(path, sizeof path, "%s/groups.csv", out);
        if (ws_outfile_check(path, &err)) goto done;
        ws_input_dir_note(ws_cli_traces(co->traces, NULL));   /* never the output folder */
        if (ws_outdir_lock(out, &err)) goto done;
        snprintf(path, sizeof path, "%s/history.csv", out);
        if (ws_outfile_open(&of[0], path, &err)) goto done;
        h.f = of[0].f;
        ws_groups_history_header(h.f, &wi);
    }
    FILE *hist = h.f;                /* rank 0's history.csv (or NULL) */
    (void)hist;
#ifdef WS_HAVE_MPI
    if (mpi) {
        if (mrank == 0 && !(gone = calloc((size_t)msize, sizeof *gone))) {
            ws_fail(&err, "out of memory");
            goto done;
        }
        mphase = 1;
        if (!ws_mpi_agree(1, &err)) { mphase = 2; goto done; }
        mphase = 2;                       /* from here every rank ends the loop */
    }
#endif
    char pol_name[256];
    snprintf(pol_name, sizeof pol_name, "%s/%s", pol.bt->name, pol.pt->name);
    ws_progress_start(&bar, "groups", gt.n);
    for (size_t i = 0; i < gt.n; i++) {
        const int owner = (int)(i % (size_t)msize);
        if (mpi && owner != mrank) {
            if (mrank != 0 || gone[owner]) continue;
#ifdef WS_HAVE_MPI
            /* Group i from its rank: its index, its history's length, its
             * results, its history; or that rank's failure. */
            size_t len;
            if (!ws_mpi_recv_from(owner, &msg, &msg_cap, &len)) {
                gone[owner] = 1;
                if (!failed) ws_fail(&err, "%s", msg);
                failed = 1;
                continue;
            }
            uint64_t head[2];
            if (failed) continue;
            if (len >= sizeof head) memcpy(head, msg, sizeof head);
            if (len < sizeof head + sizeof *res || head[0] != i
                || head[1] != len - sizeof head - sizeof *res) {
                ws_fail(&err, "MPI: rank %d sent a cut-off or misplaced result for group %zu",
                        owner, i);
                failed = 1;
                continue;
            }
            memcpy(&res[i], msg + sizeof head, sizeof *res);
            if (hist && head[1] && fwrite(msg + sizeof head + sizeof *res, 1, head[1], hist)
                                       != head[1]) {
                ws_fail(&err, "%s/history.csv: cannot write", out);
                failed = 1;
                continue;
            }
            ws_groups_sum_into(&all.pol, &res[i].pol);
            ws_groups_sum_into(&all.def, &res[i].def);
            ws_progress_step(&bar, 1);
#endif
            continue;
        }
        if (failed) continue;             /* rank 0 taking what is still to come */
        size_t hl = 0;
        if (mpi && mrank && out) {
            if (!(h.f = open_memstream(&hb, &hl))) {
                ws_fail(&err, "out of memory");
                goto group_failed;
            }
        }
        const ws_group *g = &gt.groups[i];
        const size_t w = (size_t)(g->spec - cat.items);
        if (!jts[w].bs
            && ws_study_job(&wi, &tr, g->spec, eta, beta, &jts[w], mrank == 0, &err)) {
            ws_fail_prefix(&err, "%s: group '%s'", trace, g->name);
            goto group_failed;
        }
        res[i].max_power = jts[w].job.max_power;
        res[i].gpus_per_job = ws_job_gpus(&jts[w].job);
        const unsigned long s = ws_group_seed(g->name) + (unsigned long)seed;
        h.group = g->name;
        h.policy = pol_name;
        if (run_group(&jts[w].job, &pol, g, s, &env, &h, &res[i].pol, &err)) {
            ws_fail_prefix(&err, "%s: group '%s' (%s)", trace, g->name, pol_name);
            goto group_failed;
        }
        h.policy = "default/default";
        if (run_group(&jts[w].job, &def, g, s, &env, &h, &res[i].def, &err)) {
            ws_fail_prefix(&err, "%s: group '%s' (default/default)", trace, g->name);
            goto group_failed;
        }
        if (mpi && mrank) {
#ifdef WS_HAVE_MPI
            /* The group as one message (see above). */
            uint64_t head[2] = {i, 0};
            int bad = h.f && fclose(h.f);
            h.f = NULL;
            head[1] = hl;
            size_t len = sizeof head + sizeof *res + hl;
            char *m = bad || len > 0x7fffffff ? NULL : malloc(len);
            if (!m) {
                free(hb);
                hb = NULL;
                ws_fail(&err, bad || len <= 0x7fffffff ? "out of memory"
                                                       : "a group's history over 2 GiB");
                goto group_failed;
            }
            memcpy(m, head, sizeof head);
            memcpy(m + sizeof head, &res[i], sizeof *res);
            if (hl) memcpy(m + sizeof head + sizeof *res, hb, hl);
            free(hb);
            hb = NULL;
            ws_mpi_send0(m, len, 1);
            free(m);
#endif
        } else {
            ws_groups_sum_into(&all.pol, &res[i].pol);
            ws_groups_sum_into(&all.def, &res[i].def);
        }
        ws_progress_step(&bar, 1);
        continue;
    group_failed:
        if (!mpi) goto done;
        if (h.f && mrank) fclose(h.f);
        h.f = mrank ? NULL : hist;
        free(hb);
        hb = NULL;
        failed = 1;
#ifdef WS_HAVE_MPI
        if (mrank) {
            /* Rank 0 waits for group i: the failure instead, the message
             * a single process would print. */
            ws_mpi_send0(err.msg, strlen(err.msg), 0);
            break;
        }
#endif
    }
    ws_progress_end(&bar);
#ifdef WS_HAVE_MPI
    if (mpi) {
        /* Every rank knows whether the replay went through. */
        if (!ws_mpi_all_ok(!failed)) goto done;
        if (mrank) { rc = 0; goto done; }
    }
#endif
    replay_info in = {&gt, res, &all, gpu, pol.bt->name, pol.pt->name, eta, beta, &wi,
                      env.t0};
    if (out) {
        char path[4096];
        snprintf(path, sizeof path, "%s/groups.json", out);
        if (ws_outfile_open(&of[1], path, &err)) goto done;
        ws_groups_report(of[1].f, WS_FMT_JSON, &in);
        snprintf(path, sizeof path, "%s/groups.csv", out);
        if (ws_outfile_open(&of[2], path, &err)) goto done;
        ws_groups_report(of[2].f, WS_FMT_CSV, &in);
        if (ws_outfile_commit(&of[0], &err) || ws_outfile_commit(&of[1], &err)
            || ws_outfile_commit(&of[2], &err))
            goto done;
    }
    ws_groups_report(ws_cli_out, (ws_format)fmt, &in);
    ws_study_wrap_note(&wi, all.pol.wrapped + all.def.wrapped);
    rc = 0;
done:
#ifdef WS_HAVE_MPI
    /* A rank that stopped before a collective step releases the others;
     * only rank 0 prints. */
    if (mpi && mphase == 0 && !ws_mpi_agree(0, &err)) mphase = 2;
    if (mpi && mphase == 1) ws_mpi_agree(0, &err);
    if (mpi && mrank) err.msg[0] = '\0';
#endif
    (void)mphase;
    free(msg);
    free(hb);
    free(gone);
    ws_progress_end(&bar);
    if (rc && err.msg[0]) ws_cli_die(&err);
    for (int i = 0; i < 3; i++) ws_outfile_abort(&of[i]);
    if (jts)
        for (size_t i = 0; i < cat.n; i++)
            if (jts[i].bs) ws_job_free(&jts[i]);
    free(jts);
    free(res);
    pair_free(&pol);
    pair_free(&def);
    ws_traces_free(&tr);
    ws_group_trace_free(&gt);
    ws_registry_free(reg);
    ws_catalogue_free(&cat);
    ws_whatif_free(&wi);
    return rc;
}

/* ------------------------------------------------------------ dispatch */

int ws_cli_groups(int argc, char **argv)
{
    ws_cli_globals co = {0};
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(GROUPS_HELP, argc < 2 ? stderr : ws_cli_out);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    opterr = 0;
    optind = 1;
    if (!strcmp(argv[1], "synth")) return cmd_synth(argc - 1, argv + 1, &co);
    if (!strcmp(argv[1], "replay")) return cmd_replay(argc - 1, argv + 1, &co);
    ws_line("wattsim groups: unknown subcommand '%s' (synth or replay; see"
            " 'wattsim groups --help')", argv[1]);
    return EXIT_USAGE;
}
