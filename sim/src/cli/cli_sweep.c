/*
 * `wattsim sweep` and `wattsim curves`: run a config's plan for several
 * policy pairs (ws_sweep_run) and write the summary tables, the learning
 * curves and their figures.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_sweep.h"
#include "wattsim/figures.h"
#include "wattsim/markup.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/plugin.h"
#include "wattsim/progress.h"
#include "wattsim/report.h"
#include "wattsim/study.h"
#include "wattsim/sweep.h"
#include "wattsim/whatif.h"
#include "cli_common.h"

/* Help: sweep, curves and merge each have their own usage and description,
 * then the options they take, the what-ifs, and what happens on failure. */
#define SWEEP_OPTS_PLAN                                                        \
    "  --set KEY=VALUE    override a config key (eta=[0,0.5,1], seeds=1..10, ...)\n"\
    "  --policies LIST    policy pairs BSO:PLO, comma-separated, e.g.\n"         \
    "                     zeus:jit,grid:grid (default: the config's pairs: its\n"\
    "                     policies: list, or bso x plo); a side may be a path,\n"\
    "                     FILE.so:NAME, and carry parameters: zeus{window=10}:jit\n"\
    "  --out DIR          output folder (default: the config's `out`)\n"         \
    "  --force            replace existing outputs in the folder (and start over\n"\
    "                     when an interrupted run left a journal)\n"

#define SWEEP_OPTS_RUN                                                         \
    "  --threads N        worker threads (default: online CPUs); outputs do not\n"\
    "                     depend on it\n"                                         \
    "  --isolate          run each cell (all seeds of one policy pair x gpu x\n"  \
    "                     workload x eta x beta) in a child process: a policy\n"  \
    "                     that crashes, aborts or hangs fails only its cell;\n"   \
    "                     with --threads N, up to N children at a time\n"         \
    "  --cell-timeout S   with --isolate, kill a cell's process after S seconds\n"\
    "                     and mark the cell failed (default: no limit)\n"         \
    "  --cell-memory SIZE with --isolate, a cell's process may map SIZE bytes\n"  \
    "                     (suffix K, M, G, T: KiB, MiB...) beyond what it starts\n"\
    "                     with; an allocation past that fails, and so does its\n" \
    "                     cell, saying so (default: no limit)\n"                  \
    "  --shard K/N        run only the simulations i with i mod N = K (0 <= K < N),\n"\
    "                     e.g. one task of a Slurm job array, and keep the results\n"\
    "                     in DIR/sweep.journal (curves.journal) without writing\n"\
    "                     outputs; `wattsim merge` with the same config and\n"   \
    "                     options then writes them from every shard's folder,\n" \
    "                     byte-identical to a single run. Under mpirun (a\n"      \
    "                     -DWATTSIM_MPI=ON build) the ranks shard the\n"          \
    "                     simulations this way by themselves and rank 0 writes\n" \
    "                     the outputs (docs/sweeps.md)\n"                         \
    "  --resume           reuse the simulations that an interrupted run of the\n" \
    "                     same plan recorded in DIR/sweep.journal (curves.journal),\n"\
    "                     and in the journals of an interrupted mpirun with any\n"\
    "                     number of ranks (sweep.journal.K-of-N); at most the\n"  \
    "                     last second's simulations of a killed run are run again\n"\
    "  --keep-history     also write history.csv: every run (each try of each\n" \
    "                     recurrence) of every simulation in plan order, as\n"    \
    "                     `wattsim run`'s history.csv with status,error; a failed\n"\
    "                     simulation keeps its runs up to the failure, then a\n"  \
    "                     'failed' row with its error. Not with --isolate,\n"     \
    "                     --shard, --resume or mpirun (in process only)\n"

#define SWEEP_OPTS_TAIL                                                        \
    WS_CLI_PLUGIN_HELP                                                         \
    "  --no-plot          tables only\n"                                          \
    "  --quiet            no progress display (a bar on a terminal, else a line\n"\
    "                     every 10 s, once the run has taken over 1 s)\n"         \
    "  --traces DIR, --catalogue FILE   as for every command\n"

#define SWEEP_NOTES                                                            \
    "A failed simulation (a policy error, a run that never reaches the target)\n"\
    "does not stop the run: each cell is summarised over its successful seeds\n"\
    "(columns seeds_ok, seeds_failed, error) and one warning per failed cell is\n"\
    "printed. Memory does not grow with the seeds: past 262,144 simulations\n"  \
    "each one's numbers go to a temporary file in the output folder, deleted as\n"\
    "soon as it is made (64 bytes per simulation; WATTSIM_SPILL_SIMS=N sets the\n"\
    "number); the outputs are the same bytes.\n"                               \
    "\n"                                                                       \
    "Exit status: 0 every simulation succeeded, 1 completed with failed cells,\n"\
    "2 usage, config, policy or trace error (nothing written).\n"

static const char *SWEEP_HELP =
    "usage: wattsim sweep CONFIG [--set KEY=VALUE]... [--policies B:P,...]\n"
    "                     [--out DIR] [--threads N] [--force] [--no-plot] [--quiet]\n"
    "                     [--isolate] [--cell-timeout SECONDS] [--cell-memory SIZE]\n"
    "                     [--resume] [--shard K/N] [--keep-history]\n"
    "                     [--allow-plugins DIR]... [WHAT-IF OPTIONS]\n"
    "\n"
    "Run the config's plan (gpu x workload x eta x beta x seed) for every policy\n"
    "pair and summarise each cell (all axes but the seed) over seeds: mean and\n"
    "95 % CI of total ETA, TTA and cost, the steady state (mean ETA/TTA per\n"
    "recurrence over the last 10 % of recurrences, at least 5), the final knobs,\n"
    "savings versus the default policy and regret versus oracle (both always\n"
    "run). Writes sweep.csv, sweep.json, sweep.md and the figures (each with its\n"
    "data .csv and gnuplot script .gp, rendered to .png, .svg and .pdf):\n"
    "  savings.*   ETA and TTA savings of the first policy pair versus default\n"
    "              and the other pairs (not oracle), per workload, GPU and eta\n"
    "              (or beta), with 95 % CIs\n"
    "  steady-GPU-WORKLOAD.*   the steady state against the frontier: per eta\n"
    "              (labelled) with several etas, else per policy (one beta only)\n"
    "  beta-GPU.*  with several betas: total ETA and TTA versus beta, % of default\n"
    "\n"
    SWEEP_OPTS_PLAN SWEEP_OPTS_RUN SWEEP_OPTS_TAIL;

static const char *CURVES_HELP =
    "usage: wattsim curves CONFIG [--set KEY=VALUE]... [--policies B:P,...]\n"
    "                      [--out DIR] [--threads N] [--force] [--no-plot] [--quiet]\n"
    "                      [--isolate] [--cell-timeout SECONDS] [--cell-memory SIZE]\n"
    "                      [--resume] [--shard K/N] [--keep-history]\n"
    "                      [--allow-plugins DIR]... [WHAT-IF OPTIONS]\n"
    "\n"
    "Learning curves: run the config's plan for every policy pair, as `wattsim\n"
    "sweep` does, and write the cumulative cost and the regret versus oracle by\n"
    "recurrence, mean and 95 % band over seeds: curves.csv and, per job,\n"
    "curves-GPU-WORKLOAD-etaX-betaY.* (data .csv, gnuplot script .gp, .png,\n"
    ".svg and .pdf). The journal is DIR/curves.journal; its records also hold\n"
    "each recurrence's cost, which the curves need.\n"
    "\n"
    SWEEP_OPTS_PLAN SWEEP_OPTS_RUN SWEEP_OPTS_TAIL;

static const char *MERGE_HELP =
    "usage: wattsim merge sweep|curves CONFIG DIR... [--set KEY=VALUE]...\n"
    "                     [--policies B:P,...] [--out DIR] [--force] [--no-plot]\n"
    "                     [--quiet] [--allow-plugins DIR]... [WHAT-IF OPTIONS]\n"
    "\n"
    "Write the outputs of a sweep (or curves) that ran in shards (`--shard K/N`,\n"
    "one folder each) from the shards' journals, byte-identical to a single run.\n"
    "Give the config and the options the shards ran with: every journal's plan\n"
    "fingerprint must be this plan's, every record's checksum and values must\n"
    "hold, and every simulation must be there exactly once; any other journal\n"
    "is refused, naming it and what is wrong, and nothing is written.\n"
    "\n"
    SWEEP_OPTS_PLAN SWEEP_OPTS_TAIL;

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

/* Is `name` BASE or BASE.K-of-N (digits)? */
static int journal_name(const char *name, const char *base)
{
    size_t n = strlen(base);
    if (strncmp(name, base, n)) return 0;
    const char *p = name + n;
    if (!*p) return 1;
    if (*p++ != '.' || !isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
    if (strncmp(p, "-of-", 4) || !isdigit((unsigned char)p[4])) return 0;
    for (p += 4; isdigit((unsigned char)*p); p++) {}
    return !*p;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The journals of this command in `out` (BASE, BASE.K-of-N), as paths
 * "out/NAME", sorted; regular files only. 0, or -1 on out of memory. */
static int list_journals(const char *out, const char *base, char ***paths, size_t *n)
{
    *paths = NULL;
    *n = 0;
    int fd = ws_outdir_open(out);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return 0;                  /* no folder: no journal */
    }
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (!journal_name(e->d_name, base) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)
            || !S_ISREG(st.st_mode))
            continue;
        char **m = realloc(*paths, (*n + 1) * sizeof *m);
        if (!m || !(m[*n] = join(out, e->d_name))) {
            if (m) *paths = m;
            rc = -1;
            break;
        }
        *paths = m;
        ++*n;
    }
    closedir(d);
    if (*n) qsort(*paths, *n, sizeof **paths, cmp_str);
    return rc;
}

/*
 * MPI ranks stepping together. Every rank calls the same sequence of
 * agreements (after the lock, once the plan is known, once the journals
 * are started, after the run) until one of them fails; from then on no
 * rank makes another collective call (`done`). A rank that stops between
 * two of them agrees to stop at the next one (at `out:`), where the others
 * are waiting. Without MPI every agreement is the rank's own.
 */
typedef struct sweep_sync {
    int mpi, rank, done;
    char **stale;              /* journals to remove once every rank started its own
                                  (pointers into the list of journals) */
    size_t n_stale;
} sweep_sync;

static int sync_agree(sweep_sync *y, int ok, ws_error *err)
{
    if (!y->mpi) return ok;
    if (y->done) return 0;
#ifdef WS_HAVE_MPI
    if (!ws_mpi_agree(ok, err)) {
        y->done = 1;
        return 0;
    }
#endif
    return 1;
}

static int sweep_step(void *ctx, int step, const ws_sweep_fp *fp, ws_error *err)
{
    sweep_sync *y = ctx;
    if (step == WS_SWEEP_PLANNED && y->mpi) {
        /* Every rank has its plan: the same one? */
        if (!sync_agree(y, 1, err)) return -1;
#ifdef WS_HAVE_MPI
        int same = ws_mpi_same_plan(fp, err) == 0;
        if (!sync_agree(y, same, err)) return -1;
#endif
    }
    if (step == WS_SWEEP_JOURNALED) {
        /* Every rank's journal holds what it reuses: the journals of the
         * earlier run's sharding are read, and go. */
        if (!sync_agree(y, 1, err)) return -1;
        for (size_t k = 0; y->rank == 0 && k < y->n_stale; k++)
            if (ws_outfile_unlink(y->stale[k]))
                ws_line("wattsim: warning: %s: cannot remove the earlier journal: %s",
                        y->stale[k], strerror(errno));
    }
    return 0;
}

static int write_table(const out_ctx *o, const char *name, const char *title,
                       writer w, const ws_sweep *s, ws_error *err)
{
    char *path = join(o->dir, name);
    ws_outfile of = {0};
    if (!path) return ws_fail(err, "out of memory");
    int rc = ws_outfile_open(&of, path, err);
    if (!rc) {
        w(of.f, s);
        /* A read error of the spill file gave failed simulations: no output. */
        rc = ws_sweep_io_error(s, err);
        if (!rc) rc = ws_outfile_commit(&of, err);
    }
    if (!rc) rc = ws_manifest_add(path, "table", title, o->command, err);
    ws_outfile_abort(&of);
    free(path);
    return rc;
}

/* A policy of q as the tables name it, as Markdown text: "?" when that
 * text cannot be had (out of memory), as for paper.md's cells. */
static void identity_cell(FILE *f, const ws_policy_pair *q, int bso)
{
    const ws_study_pair *id = q->identity;
    char *t = NULL;
    size_t len = 0;
    FILE *m = id ? open_memstream(&t, &len) : NULL;
    if (m)
        ws_table_policy_words(m, bso ? id->bso : id->plo,
                              bso ? id->prov.bso_params : id->prov.plo_params,
                              bso ? id->prov.bso_file : id->prov.plo_file,
                              bso ? id->prov.bso_sha256 : id->prov.plo_sha256);
    ws_md_text(f, m && !fclose(m) && t ? t : id ? "?" : bso ? q->bso : q->plo);
    free(t);
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
    if (ws_whatif_active(s->whatif)) {
        char d[1024];
        ws_whatif_describe(s->whatif, d, sizeof d);
        fputs("What-if: ", f);
        ws_md_text(f, d);                  /* file names are text */
        fputs("\n\n", f);
    }
    /* A job of several GPUs says so: its MaxPower is not one GPU's. */
    for (size_t j = 0; s->jobs && j < s->n_gpus * s->n_work; j++) {
        const ws_job *job = &s->jobs[j].job;
        if (ws_job_gpus(job) > 1) {
            fprintf(f, "MaxPower %g W for ", job->max_power);
            ws_md_text(f, s->work[j % s->n_work]);
            fputs(" on ", f);
            ws_md_text(f, s->gpus[j / s->n_work]);
            fprintf(f, ": %d GPUs per job at %g W.\n\n", ws_job_gpus(job),
                    job->max_power / ws_job_gpus(job));
        }
    }
    const int co2 = s->whatif && s->whatif->has_carbon;
    fprintf(f, "| policy | gpu | workload | eta | beta | ETA (%s) | TTA (%s) | %sETA saving | "
               "TTA saving | cost saving | regret vs oracle (%s) | final knob | seeds ok | "
               "seeds failed | error |\n",
            ue.name, ut.name, co2 ? "CO2 (kg) | " : "", ue.name);
    fprintf(f, "|---|---|---|---|---|---:|---:|%s---:|---:|---:|---:|---|---:|---:|---|\n",
            co2 ? "---:|" : "");
    for (size_t c = 0; c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        /* The most frequent final knob. */
        int bs, pl;
        size_t best;
        ws_sweep_top_knob(s, c, &bs, &pl, &best);
        char v[12][32], beta[32];
        if (s->betas[o.beta] == INFINITY) snprintf(beta, sizeof beta, "inf");
        else ws_tab(beta, sizeof beta, "%g", ws_req(s->betas[o.beta]));
        /* A label may hold a path: text, not markup or a '|'. */
        fputs("| ", f);
        ws_md_text(f, s->pairs[o.pair].label);
        fprintf(f, " | %s | %s | %s | %s | ", s->gpus[o.gpu],
                s->work[o.work], ws_tab(v[0], 32, "%g", ws_req(s->etas[o.eta])), beta);
        if (o.seeds_ok) {
            /* A half-width of one seed is 0; a saving without a reference
             * (default failed on every seed, or its cost is 0) and a
             * regret without oracle are undefined: "-", never "nan %". */
            fprintf(f, "%s ± %s | %s ± %s | ",
                    ws_tab(v[0], 32, "%.4g", ws_req(o.energy.mean / ue.div)),
                    ws_tab(v[1], 32, "%.2g", isfinite(o.energy.hi)
                           ? (o.energy.hi - o.energy.mean) / ue.div : 0.0),
                    ws_tab(v[2], 32, "%.4g", ws_req(o.time.mean / ut.div)),
                    ws_tab(v[3], 32, "%.2g", isfinite(o.time.hi)
                           ? (o.time.hi - o.time.mean) / ut.div : 0.0));
            if (co2)
                fprintf(f, "%s ± %s | ", ws_tab(v[4], 32, "%.4g", ws_req(o.co2.mean / 1e3)),
                        ws_tab(v[5], 32, "%.2g", isfinite(o.co2.hi)
                               ? (o.co2.hi - o.co2.mean) / 1e3 : 0.0));
            fprintf(f, "%s | %s | %s | %s | %d, %d W (%zu/%zu) | ",
                    ws_tab(v[6], 32, "%.1f %%", 100 * o.save_energy),
                    ws_tab(v[7], 32, "%.1f %%", 100 * o.save_time),
                    ws_tab(v[8], 32, "%.1f %%", 100 * o.save_cost),
                    ws_tab(v[9], 32, "%.4g", o.regret.mean / ue.div), bs, pl, best, o.seeds_ok);
        } else {
            fputs(co2 ? "– | – | – | – | – | – | – | – | " : "– | – | – | – | – | – | – | ", f);
        }
        fprintf(f, "%zu | %zu | ", o.seeds_ok, o.seeds_failed);
        ws_md_text(f, o.error);     /* a policy's words: text, not markup or a '|' */
        fputs(" |\n", f);
    }
    fprintf(f, "\nMeans over %zu seed%s ± half-width of the 95 %% CI; savings are 1 - ours /"
               " default's (same seeds); cost is in energy units (J-equivalent).\n", s->n_seeds,
               ws_s(s->n_seeds));
    if (s->n_failed)
        fprintf(f, "%zu of %zu simulations failed: a cell's numbers are over its successful"
                   " seeds, savings and regret over the seeds where the reference succeeded"
                   " too.\n", s->n_failed, s->n_sims);
    /* Which code ran, each policy as the tables of simulate, run and plan
     * name it (ws_table_policy_words), a cell of text. */
    fputs("\nWhich code ran: each policy with its parameters as resolved, its file"
          " (built-in: wattsim's policy folder) and the sha256 of that file, cut to 12 hex"
          " digits (sweep.csv and sweep.json hold all 64).\n\n| policy | bso | plo |\n"
          "|---|---|---|\n", f);
    for (size_t p = 0; p < s->n_pairs; p++) {
        const ws_policy_pair *q = &s->pairs[p];
        fputs("| ", f);
        ws_md_text(f, q->label);
        for (int k = 0; k < 2; k++) {
            fputs(" | ", f);
            identity_cell(f, q, k == 0);
        }
        fputs(" |\n", f);
    }
}

/* One line per failed cell on stderr: "wattsim: warning: CELL: MESSAGE". */
static void warn_failed(const ws_sweep *s)
{
    fflush(ws_cli_out);                /* after the summary line, even in a pipe */
    for (size_t c = 0; s->n_failed && c < ws_sweep_n_cells(s); c++) {
        ws_sweep_summary o;
        ws_sweep_summarise(s, c, &o);
        if (!o.seeds_failed) continue;
        char cell[256];
        ws_sweep_cell_name(s, c, cell, sizeof cell);
        ws_line("wattsim: warning: %s: %s", cell, o.error);
    }
}

int ws_cmd_sweep(int argc, char **argv, int curves, int merge)
{
    const char *cmd = merge ? "merge" : curves ? "curves" : "sweep";
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
        {"cell-memory", required_argument, 0, 'M'},
        {"resume", no_argument, 0, 'r'},
        {"quiet", no_argument, 0, 'q'},
        {"shard", required_argument, 0, 'S'},
        {"keep-history", no_argument, 0, 'K'},
        {"help", no_argument, 0, 'h'},
        WS_CLI_PLUGIN_OPTIONS,
        WS_CLI_WHATIF_OPTIONS,
        {0, 0, 0, 0},
    };
    const char *out = NULL, *policies = NULL, *traces = NULL, *catalogue = NULL;
    int force = 0, plot = 1, isolate = 0, resume = 0, keep = 0, c;
    ws_outfile hof = {0};
    ws_sweep_history ho = {0};
    ws_sweep_opts so = {.threads = ws_sweep_default_threads()};
    size_t spill_sims = 0;
    char **journals = NULL;
    size_t n_journals = 0;
    unsigned long shard_k = 0, shard_n = 0;
    /* Under mpirun (an MPI build): this rank's shard, rank 0 reduces. */
    int mpi = 0, mpi_rank = 0, mpi_size = 1;
#ifdef WS_HAVE_MPI
    mpi = ws_mpi_active(&mpi_rank, &mpi_size);
#endif
    sweep_sync sync = {mpi, mpi_rank, 0, NULL, 0};
    char *journal = NULL;
    char **parts = NULL;
    size_t n_parts = 0;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    int n_sets = 0, n_wi = 0;
    struct { int c; const char *arg; } *wis = calloc((size_t)argc + 1, sizeof *wis);
    if (!sets || !wis) { free(sets); free(wis); return 2; }
    ws_whatif wi = {0};
    char *command = ws_command_line(argc + 1, argv - 1);
    ws_error err = {{0}};
    char shown[WS_CLI_SHOW];
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
        if (c >= WS_OPT_POWER_CAP && c <= WS_OPT_WHATIF_LAST) {
            wis[n_wi].c = c;       /* applied after the config is read */
            wis[n_wi++].arg = optarg;
            continue;
        }
        switch (c) {
        case 'h':
            fprintf(ws_cli_out, "%s\n%s\n%s",
                    merge ? MERGE_HELP : curves ? CURVES_HELP : SWEEP_HELP,
                    WS_CLI_WHATIF_HELP, SWEEP_NOTES);
            rc = 0;
            goto out;
        case 's': sets[n_sets++] = optarg; break;
        case 'p': policies = optarg; break;
        case 'o': out = optarg; break;
        case 'f': force = 1; break;
        case 'n': plot = 0; break;
        case 't': traces = optarg; break;
        case 'c': catalogue = optarg; break;
        case 'i': isolate = 1; break;
        case 'r': resume = 1; break;
        case 'K': keep = 1; break;
        case 'q': ws_progress_set_quiet(1); break;
        case WS_OPT_ALLOW_PLUGINS:
            if (ws_plugin_allow_dir(optarg, &err)) goto out;
            break;
        case WS_OPT_ALLOW_PYTHON:
            if (ws_plugin_allow_python(optarg, &err)) goto out;
            break;
        case 'S': {
            char *end;
            errno = 0;
            shard_k = strtoul(optarg, &end, 10);
            if (end != optarg && *end == '/') shard_n = strtoul(end + 1, &end, 10);
            if (errno || *end || !shard_n || shard_k >= shard_n || shard_n > 1000000
                || !isdigit((unsigned char)optarg[0])) {
                rc = ws_cli_usage(cmd, "--shard '%s' is not K/N with 0 <= K < N <= 1000000",
                                  optarg);
                goto out;
            }
            break;
        }
        case 'T':
            if (ws_sweep_parse_cell_timeout(optarg, &so, &err)) goto usage;
            break;
        case 'M':
            if (ws_sweep_parse_cell_memory(optarg, &so, &err)) goto usage;
            break;
        case 'j':
            if (ws_sweep_parse_threads(optarg, &so, &err)) goto usage;
            break;
        case ':': rc = ws_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]); goto out;
        default: rc = ws_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]); goto out;
        }
    }
    so.isolate = isolate;
    if (ws_sweep_check_limits(&so, &err)) goto usage;
    if (keep && (isolate || shard_n || resume || merge || mpi)) {
        rc = ws_cli_usage(cmd, "%s", isolate ? "--keep-history is not available with --isolate"
                                   " (a simulation's runs stay in its child process)"
                                   : shard_n && !mpi ? "--keep-history is not available with --shard"
                                   : resume ? "--keep-history is not available with --resume"
                                              " (the journal keeps no runs)"
                                   : merge ? "--keep-history is not available with merge"
                                   : "--keep-history is not available under mpirun");
        goto out;
    }
    if (merge ? optind > argc - 2 : optind != argc - 1) {
        rc = ws_cli_usage(cmd, "%s", merge ? "needs a CONFIG file and the shards' folders"
                                   : optind >= argc ? "needs a CONFIG file"
                                   : "takes one CONFIG file");
        goto out;
    }
    if (mpi && (merge || shard_n)) {
        rc = ws_cli_usage(cmd, "%s", "--shard and merge are for runs without mpirun (mpirun"
                                     " shards by itself)");
        goto out;
    }
    if (mpi && mpi_rank) ws_progress_set_quiet(1);
    if (merge && (shard_n || resume)) {
        rc = ws_cli_usage(cmd, "%s", "--shard and --resume are for the shards, not the merge");
        goto out;
    }
    /* A shard's folder (its journal in it) or the journal itself. */
    for (int a = optind + 1; merge && a < argc; a++) {
        if (!parts && !(parts = calloc((size_t)argc, sizeof *parts))) goto out;
        struct stat ps;
        const int folder = stat(argv[a], &ps) == 0 && S_ISDIR(ps.st_mode);
        parts[n_parts++] = folder ? join(argv[a], curves ? "curves.journal" : "sweep.journal")
                                  : strdup(argv[a]);
        if (!parts[n_parts - 1]) goto out;
        /* Inputs: the journal, which no output replaces or removes, and
         * its folder, which is never the output folder (ws_outdir_lock). */
        ws_input_note(parts[n_parts - 1]);
        char *slash = strrchr(parts[n_parts - 1], '/');
        if (slash) *slash = '\0';
        ws_input_dir_note(slash ? (slash == parts[n_parts - 1] ? "/" : parts[n_parts - 1]) : ".");
        if (slash) *slash = '/';
    }
    /* WATTSIM_SPILL_SIMS: past how many simulations results go to a file
     * in the output folder (tests make it tiny). */
    const char *spill = getenv("WATTSIM_SPILL_SIMS");
    if (spill && *spill) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(spill, &end, 10);
        if (errno || *end || !v || !isdigit((unsigned char)spill[0])) {
            ws_fail(&err, "WATTSIM_SPILL_SIMS='%s' is not a number of simulations >= 1", spill);
            goto out;
        }
        spill_sims = (size_t)v;
    }
    if (ws_run_config_load(argv[optind], &cfg, &err)) goto out;
    for (int i = 0; i < n_sets; i++)
        if (ws_run_config_set(&cfg, sets[i], &err)) goto out;
    for (int i = 0; i < n_wi; i++)
        if (ws_cli_whatif_opt(&cfg, wis[i].c, wis[i].arg, &err) < 0) goto out;
    if (ws_run_config_validate(&cfg, &err) || ws_cli_style(&cfg, &err)) goto out;
    if (ws_run_config_out(&cfg, out, &out, &err)) goto out;
    if (!out) {
        ws_fail(&err, "%s: no output folder: add `out: DIR` to the config or pass --out DIR", cfg.path);
        goto out;
    }
    if (policies) {
        if (ws_policy_pairs_parse(policies, &pairs, &n_pairs, &err)) goto out;
    } else if (ws_cli_config_plugins(&cfg, &err)
               || ws_policy_pairs_from_config(&cfg, &pairs, &n_pairs, &err)) {
        goto out;
    }
    /* The journal of this command in the folder: an interrupted run left it. */
    const char *jbase = curves ? "curves.journal" : "sweep.journal";
    if (mpi) {
        /* One journal per rank: each resumes its own. */
        char name[64];
        snprintf(name, sizeof name, "%s.%d-of-%d", jbase, mpi_rank, mpi_size);
        journal = join(out, name);
        shard_k = (unsigned long)mpi_rank;
        shard_n = (unsigned long)mpi_size;
    } else {
        journal = join(out, jbase);
    }
    if (!journal) goto out;
    /* --resume continues an earlier command in this folder: it rewrites
     * what that one wrote. */
    ws_outfile_set_force(force || resume);
    /* The traces are an input folder too: never the output folder. */
    const char *traces_dir = ws_cli_traces(traces, &cfg);
    ws_input_dir_note(traces_dir);
    ws_study_note_drift_inputs(&cfg, NULL);   /* its inline jobs' drift phases' traces */
    /* The lock first: a folder another command is writing into is that
     * command's, whatever it holds. Under mpirun rank 0 holds it for every
     * rank. */
    if ((!mpi || mpi_rank == 0) && ws_outdir_lock(out, &err)) goto out;
    if (!sync_agree(&sync, 1, &err)) goto out;
    char *marker = join(out, curves ? "curves.csv" : "sweep.csv");
    struct stat st;
    int exists = marker && stat(marker, &st) == 0;
    free(marker);
    if (!force && exists) {
        ws_fail(&err, "%s: outputs of an earlier %s are there; pass --force to replace them or"
                " --out another folder", out, cmd);
        goto out;
    }
    /* Every journal of this command there: this run's own, and those of a
     * run sharded otherwise (another number of ranks), which --resume reads
     * and which go once this run's own journals hold what they reuse. */
    if (list_journals(out, jbase, &journals, &n_journals)) {
        ws_fail(&err, "out of memory");
        goto out;
    }
    if (merge && n_journals) {
        /* A merge writes no journal and removes none: one in its output
         * folder is another run's (a shard left out of the merge?). */
        ws_fail(&err, "%s: a journal is in the output folder; a merge neither reads nor removes"
                " it (merge its shard from the folder it is in, if it is one): --out another"
                " folder", journals[0]);
        goto out;
    }
    if (!resume && !force && n_journals) {
        char more[64] = "";
        if (n_journals > 1) snprintf(more, sizeof more, " (and %zu more)", n_journals - 1);
        ws_fail(&err, "%s%s: an interrupted %s left this journal; pass --resume to continue it"
                " or --force to start over", journals[0], more, cmd);
        goto out;
    }
    if (n_journals && !(sync.stale = calloc(n_journals, sizeof *sync.stale))) {
        ws_fail(&err, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < n_journals; k++) {
        /* this run's own journals stay: this rank's, and under mpirun with
         * the same number of ranks the other ranks' */
        const char *name = strrchr(journals[k], '/') + 1;
        int ours = !strcmp(journals[k], journal);
        if (mpi) {
            for (int r = 0; r < mpi_size && !ours; r++) {
                char own[64];
                snprintf(own, sizeof own, "%s.%d-of-%d", jbase, r, mpi_size);
                ours = !strcmp(name, own);
            }
        }
        if (!ours) sync.stale[sync.n_stale++] = journals[k];
    }
    if (merge) sync.n_stale = 0;   /* a merge writes no journal: it removes none */
    if (ws_cli_catalogue(catalogue, &cat, &err)
        || ws_whatif_load(&wi, &cfg.whatif, NULL, &err))
        goto out;
    ws_study_env env = {traces_dir, &cat, reg, NULL, 1, &wi};
    so.journal = merge ? NULL : journal;
    so.resume = resume;
    so.curves = curves;
    so.shard_k = shard_k;
    so.shard_n = shard_n;
    so.merge = (const char *const *)parts;
    so.n_merge = n_parts;
    so.spill_sims = spill_sims;
    so.spill_dir = out;
    so.old_journals = (const char *const *)sync.stale;
    so.n_old_journals = sync.n_stale;
    so.step = sweep_step;
    so.step_ctx = &sync;
    if (keep) {
        /* Written as the simulations end; committed with the tables. */
        char *hp = join(out, "history.csv");
        if (!hp || ws_outfile_open(&hof, hp, &err)) { free(hp); goto out; }
        free(hp);
        ws_report_history_header_status(hof.f, &wi);
        ho.f = hof.f;
        ho.wi = &wi;
        so.history = ws_sweep_history_write;
        so.history_ctx = &ho;
    }
    int run_rc = ws_sweep_run_opts(&cfg, &env, pairs, n_pairs, &so, &sw, &err);
#ifdef WS_HAVE_MPI
    if (mpi) {
        int gathered = sync_agree(&sync, run_rc == 0, &err)
                       && !ws_sweep_gather(&sw, mpi_rank, mpi_size, &err);
        sync.done = 1;             /* no collective call after this one */
        if (!gathered) {
            rc = 2;
            goto out;
        }
        if (mpi_rank) { rc = 0; goto out; }         /* rank 0 writes the outputs */
    }
#endif
    if (run_rc == -2) {
        /* An I/O error of the spill file: not the input's fault. */
        ws_line("wattsim: %s", err.msg);
        rc = 1;
        goto out;
    }
    if (run_rc) goto out;
    if (shard_n && !mpi) {
        /* A shard's result is its journal: kept for the merge. */
        fprintf(ws_cli_out, "shard %lu/%lu: %zu of %zu simulations%s; journal %s (combine every shard's with"
               " `wattsim merge %s CONFIG DIR...`)\n", shard_k, shard_n, sw.n_run + sw.n_reused,
               sw.n_sims, sw.n_reused ? " (some from the journal)" : "",
               ws_name_show(journal, shown, sizeof shown), cmd);
        warn_failed(&sw);
        rc = sw.n_failed ? 1 : 0;
        goto out;
    }
    if (ws_mkdirs(out, &err)) goto out;
    /* sweep.json's provenance: the command that gives these results (a
     * merge's is the sweep's: its shard folders are no option), the
     * config's and the trace files' sha256 */
    static const char *const neutral[] = {"out", "threads", "force", "no-plot", "isolate",
                                          "cell-timeout", "cell-memory", "resume", "quiet",
                                          "shard", "keep-history", "help", NULL};
    if (ws_cli_provenance(argc, argv, opts, neutral, &cfg, env.traces_dir, &err)) goto out;
    out_ctx oc = {out, command, plot};
    if (keep) {
        char *hp = join(out, "history.csv");
        if (ho.oom) ws_fail(&err, "out of memory");
        int bad = ho.oom || !hp || ws_outfile_commit(&hof, &err)
                  || ws_manifest_add(hp, "table", "every run of every simulation (--keep-history)",
                                     command, &err);
        free(hp);
        if (bad) goto out;
    }
    char reused[64] = "";
    if (merge)
        snprintf(reused, sizeof reused, " (from %zu shard journals)", n_parts);
    else if (sw.n_reused)
        snprintf(reused, sizeof reused, " (%zu from the journal)", sw.n_reused);
    if (!curves) {
        if (write_table(&oc, "sweep.json", "sweep: per-cell summary (JSON)", ws_sweep_write_json, &sw, &err)
            || write_table(&oc, "sweep.md", "sweep: ETA/TTA savings versus default", write_md, &sw, &err))
            goto out;
        /* savings.csv is a table too: written with --no-plot, not drawn */
        ws_fig_ctx fc = {out, command, &cat, plot};
        if (ws_fig_savings(&fc, &sw, &err) || (plot && ws_fig_beta(&fc, &sw, &err))) goto out;
        /* With several betas the beta figure is the one that shows them
         * (beta changes the exploration cost, not the steady state). */
        for (size_t g = 0; plot && sw.n_betas == 1 && g < sw.n_gpus; g++)
            for (size_t w = 0; w < sw.n_work; w++)
                if (ws_fig_steady(&fc, &sw, g, w, &err)) goto out;
        /* sweep.csv last: its presence marks a complete sweep. */
        if (write_table(&oc, "sweep.csv", "sweep: per-cell summary", ws_sweep_write_csv, &sw, &err))
            goto out;
        fprintf(ws_cli_out, "%zu simulation%s%s, %zu cell%s; outputs in %s/ (sweep.csv, sweep.json, sweep.md%s%s)\n",
               sw.n_sims, ws_s(sw.n_sims), reused, ws_sweep_n_cells(&sw),
               ws_s(ws_sweep_n_cells(&sw)), ws_name_show(out, shown, sizeof shown),
               !plot ? ", savings.csv" : sw.n_betas > 1 ? ", savings.*, beta-*" : ", savings.*, steady-*",
               keep ? ", history.csv" : "");
    } else {
        ws_fig_ctx fc = {out, command, &cat, 1};
        for (size_t g = 0; plot && g < sw.n_gpus; g++)
            for (size_t w = 0; w < sw.n_work; w++)
                for (size_t e = 0; e < sw.n_etas; e++)
                    for (size_t b = 0; b < sw.n_betas; b++)
                        if (ws_fig_curves(&fc, &sw, g, w, e, b, &err)) goto out;
        if (write_table(&oc, "curves.csv", "learning curves: cumulative cost and regret",
                        ws_sweep_write_curves, &sw, &err))
            goto out;
        fprintf(ws_cli_out, "%zu simulations%s; outputs in %s/ (curves.csv%s%s)\n", sw.n_sims, reused,
               ws_name_show(out, shown, sizeof shown),
               plot ? ", curves-*" : "", keep ? ", history.csv" : "");
    }
    /* Every output is in place: the journal has served its purpose (under
     * mpirun every rank's). A merge's were its inputs: they stay. */
    if (!merge) ws_outfile_unlink(journal);
    for (int r = 1; mpi && r < mpi_size; r++) {
        char name[64];
        snprintf(name, sizeof name, "%s.%d-of-%d", jbase, r, mpi_size);
        char *p = join(out, name);
        if (p) ws_outfile_unlink(p);
        free(p);
    }
    warn_failed(&sw);
    rc = sw.n_failed ? 1 : 0;
    goto out;
usage:                             /* err holds an option's usage message */
    rc = ws_cli_usage(cmd, "%s", err.msg);
    err.msg[0] = '\0';
out:
    /* A rank that stopped before a collective step releases the others;
     * only rank 0 prints (the first failing rank's message). */
    if (mpi && !sync.done) sync_agree(&sync, 0, &err);
    if (mpi && mpi_rank) err.msg[0] = '\0';
    if (rc == 2 && err.msg[0]) ws_cli_die(&err);
    ws_outfile_abort(&hof);
    ws_sweep_history_free(&ho);
    free(journal);
    for (size_t k = 0; k < n_journals; k++) free(journals[k]);
    free(journals);
    free(sync.stale);
    for (size_t i = 0; i < n_parts; i++) free(parts[i]);
    free(parts);
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
