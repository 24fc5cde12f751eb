/*
 * wattsim-bench: how fast the engine and the sweeps run. Not a test:
 * figures depend on the machine (and on what else runs on it); scripts/bench
 * runs it.
 *
 * Engine: for a BSO/PLO pair (default zeus + jit) on every GPU x workload
 * of the catalogue, one core, seeds 1, 2, ... with default recurrences
 * until --seconds of this thread's CPU time have passed (or exactly --seeds
 * seeds): recurrences per CPU second and ns per recurrence. Next to it the random-draw floor: the same
 * number of normal and bounded-integer draws the policies and the engine
 * made (counted by the policy host; the engine draws one recorded run per
 * try), timed alone, plus seeding the three streams of each simulation
 * (the simulation's, the BSO's and the PLO's); and the ratio engine /
 * floor.
 *
 * Sweeps (unless --no-sweeps): `wattsim sweep` run as a child process, one
 * thread, --no-plot: the paper-scale plan (configs/paper/eta-sensitivity.yaml
 * on every GPU, 100 seeds: 4 x 6 x 11 x 100 x 3 policy pairs = 79,200
 * simulations) and one job (v100 squad, zeus + jit, default + oracle) with
 * 10^3, 10^4 and 10^5 seeds: wall time, peak RSS of the child, and for the
 * paper-scale plan recurrences per second (from the job tables'
 * recurrences) against the engine's.
 *
 * Python policies (with the sweeps, when WATTSIM_PYTHON or /usr/bin/python3
 * exists): the same sweep (every GPU x workload, 20 seeds, one thread)
 * with gts + jit in C and with their Python ports (py:wattsim.policies:
 * GaussianTS and JIT, docs/python.md), whole process each: what running
 * the policy in Python costs. At beta 3, not 2: gts explores without
 * pruning, and at beta 2 the budget starves seeds 4 and 7 (librispeech and
 * movielens-1m on v100: 20 tries without reaching the target), which
 * would make both sweeps exit 1 for a reason that is not about speed.
 *
 * Readers (unless --no-readers; --readers-only runs them alone): `wattsim`
 * as a child on inputs that made a reader quadratic before issue 18, at a
 * size n and at 2n -- simulate with n jobs in one trace, trace check of n
 * batch sizes, trace import power of n knobs, trace import train of n
 * runs of one batch size, an nvidia-smi log of n GPUs -- wall time at n
 * and 2n and their ratio (2 for a linear reader, 4 for a quadratic one);
 * and the peak RSS of reading a .csv.gz of one row repeated (300 MB once
 * decompressed), which fails on its third line.
 *
 * Output: a table on stdout; with --json FILE the same figures as JSON.
 * --quick runs every phase at a token size (tests/test_bench.c: that the
 * bench runs and prints each table once).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "wattsim/json_writer.h"
#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/outfile.h"
#include "wattsim/process.h"
#include "wattsim/plugin.h"
#include "wattsim/rng.h"
#include "wattsim/trace.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This thread's CPU time: the engine's and the floor's clock, so that
 * other processes on a shared machine slow the figures less than wall
 * time would (they still share caches and memory bandwidth). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *HELP =
    "usage: wattsim-bench [--bso NAME] [--plo NAME] [--eta X] [--beta X]\n"
    "                     [--seconds S | --seeds N] [--no-sweeps] [--json FILE]\n"
    "                     [--no-readers | --readers-only] [--reader-n N]\n"
    "                     [--traces DIR] [--catalogue FILE] [--quick]\n"
    "\n"
    "Engine speed on every GPU x workload of the catalogue (one core): recurrences\n"
    "per second, ns per recurrence, the random-draw floor (the same Gaussian and\n"
    "integer draws plus stream seeding, timed alone) and engine / floor. Then, as\n"
    "child processes on one thread, the paper-scale sweep and a one-job sweep with\n"
    "10^3, 10^4 and 10^5 seeds: wall time and peak RSS; and a sweep (every GPU x\n"
    "workload, 20 seeds, beta 3) with gts + jit in C and with their Python ports\n"
    "(docs/python.md).\n"
    "\n"
    "  --seconds S   at least S s of CPU time per GPU x workload (default 0.5);\n"
    "                engine and floor are timed in this thread's CPU time\n"
    "  --seeds N     exactly N seeds per GPU x workload instead (fixed work, for\n"
    "                instruction counts)\n"
    "  --no-sweeps   engine only\n"
    "  --no-readers  no reader rows (time at n and 2n of simulate, trace check,\n"
    "                trace import power/train and an nvidia-smi log)\n"
    "  --readers-only  the reader rows alone\n"
    "  --reader-n N  the readers' n (default 40000)\n"
    "  --json FILE   also write the figures as JSON to FILE\n"
    "  --quick       every phase at a token size (1 seed per GPU x workload and\n"
    "                per sweep, reader n 100): that it runs and what it prints,\n"
    "                not figures to compare\n";

typedef struct row {
    char gpu[32], work[64];
    long recur, seeds, recs;
    double secs, floor_secs;
} row;

/* The draws of one simulation, replayed alone. */
typedef struct draws {
    unsigned long gaussian, uniform;
} draws;

static volatile double sink_d;
static volatile unsigned long sink_u;

/* Seeding the 3 streams of a simulation and its draws, as the engine and
 * the policy host seed and draw them (inline, from wattsim/rng.h). Not
 * inlined (nor is engine()): a profile of the benchmark then tells the
 * floor's samples from the engine's by the call stack. */
__attribute__((noinline))
static double floor_time(long sims, const draws *d)
{
    double t0 = cpu_now(), acc = 0;
    unsigned long acc_u = 0;
    for (long s = 0; s < sims; s++) {
        ws_rng r[3];
        ws_rng_seed(&r[0], (uint64_t)s + 1);          /* the simulation's */
        ws_rng_seed(&r[1], (uint64_t)s + 1);          /* the BSO's */
        ws_rng_seed_spawn(&r[2], (uint64_t)s + 1, 2); /* the PLO's */
        for (unsigned long i = 0; i < d[s].gaussian; i++) acc += ws_rng_normal(&r[1], 0.0, 1.0);
        for (unsigned long i = 0; i < d[s].uniform; i++) acc_u += ws_rng_integers(&r[0], 7);
        acc_u += r[2].has32;
    }
    sink_d = acc;
    sink_u = acc_u;
    return cpu_now() - t0;
}

__attribute__((noinline))
static int engine(const ws_catalogue *cat, const ws_bso_type *bt, const ws_plo_type *pt,
                  const ws_value *bp, const ws_value *pp, const char *traces, double eta,
                  double beta, double seconds, long fixed_seeds, row **out, size_t *n_out,
                  ws_error *err)
{
    size_t n = 0, cap = cat->n_gpus * cat->n;
    row *rows = calloc(cap ? cap : 1, sizeof *rows);
    draws *d = NULL;
    size_t d_cap = 0;
    if (!rows) return ws_fail(err, "out of memory");
    ws_policy_hold();
    int rc = -1;
    for (size_t g = 0; g < cat->n_gpus; g++) {
        ws_traces tr = {0};
        if (ws_traces_load(&tr, traces, cat->gpus[g], NULL, err)) { ws_traces_free(&tr); goto out; }
        for (size_t w = 0; w < cat->n; w++) {
            ws_job_table jt;
            if (ws_job_build(&jt, &tr, &cat->items[w], eta, beta, err)) {
                ws_job_free(&jt);
                ws_traces_free(&tr);
                goto out;
            }
            row *r = &rows[n++];
            snprintf(r->gpu, sizeof r->gpu, "%s", cat->gpus[g]);
            snprintf(r->work, sizeof r->work, "%s", cat->items[w].name);
            r->recur = jt.default_recurrences;
            ws_sim_params sp = {.recurrences = jt.default_recurrences, .seed = 0};
            double t0 = cpu_now();
            for (;;) {
                if (fixed_seeds ? r->seeds >= fixed_seeds : r->secs >= seconds) break;
                sp.seed = (unsigned long)++r->seeds;
                if ((size_t)r->seeds > d_cap) {
                    size_t nc = d_cap ? 2 * d_cap : 4096;
                    draws *nd = realloc(d, nc * sizeof *nd);
                    if (!nd) { ws_fail(err, "out of memory"); ws_job_free(&jt); ws_traces_free(&tr); goto out; }
                    d = nd;
                    d_cap = nc;
                }
                ws_bso *b = ws_bso_new(bt, bp, sp.seed, err);
                ws_plo *p = b ? ws_plo_new(pt, pp, sp.seed, err) : NULL;
                ws_sim_totals tot;
                int bad = !b || !p || ws_simulate(&jt.job, b, p, &sp, NULL, NULL, &tot, err);
                draws *x = &d[r->seeds - 1];
                if (!bad) {
                    unsigned long g1, u1, g2, u2;
                    ws_bso_draws(b, &g1, &u1);
                    ws_plo_draws(p, &g2, &u2);
                    x->gaussian = g1 + g2;
                    x->uniform = u1 + u2 + (unsigned long)(tot.runs + tot.skipped);
                }
                ws_plo_free(p);
                ws_bso_free(b);
                if (bad) { ws_job_free(&jt); ws_traces_free(&tr); goto out; }
                r->recs += tot.recurrences;
                /* The thread's CPU clock is a system call (about a
                 * microsecond, 5 % of a short simulation): read it every
                 * 16 seeds, and after the last. */
                if ((r->seeds & 15) == 0 || (fixed_seeds && r->seeds >= fixed_seeds))
                    r->secs = cpu_now() - t0;
            }
            r->floor_secs = floor_time(r->seeds, d);
            ws_job_free(&jt);
        }
        ws_traces_free(&tr);
    }
    rc = 0;
out:
    ws_policy_release();
    free(d);
    if (rc) { free(rows); return rc; }
    *out = rows;
    *n_out = n;
    return 0;
}

/* ------------------------------------------------------------ sweeps */

typedef struct sweep_fig {
    char name[64];
    long sims;
    double recs;             /* recurrences, 0 when not counted */
    double secs, cpu_secs;   /* wall; the child's user + system time */
    long rss_kib;
    int status;
} sweep_fig;

/* Run `wattsim ARGS...` (output to /dev/null; stderr too when quiet_err):
 * wall time and peak RSS. */
static int quiet_err;
static int quick;              /* --quick: token sizes */

static int run_child(char *const argv[], sweep_fig *f)
{
    double t0 = now();
    /* What this process's stdio holds (the tables printed so far) is
     * written once, here, not by the child too: freopen() in the child
     * flushed its copy of the buffer into the same file (issue 26: the
     * sweep table came out 12 times on a file). The child changes its
     * descriptors only, and execs or _exits. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul < 0 || dup2(nul, 1) < 0 || (quiet_err && dup2(nul, 2) < 0)) _exit(126);
        if (nul > 2) close(nul);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR) return -1;
    f->secs = now() - t0;
    f->cpu_secs = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec
                  + (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    f->rss_kib = ru.ru_maxrss;
    f->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

/* nftw's visit for remove_tree: each entry after its contents. */
static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st; (void)type; (void)ftw;
    return remove(path) && errno != ENOENT ? -1 : 0;
}

/* Removes the folder `path` and everything in it, following no symbolic
 * link (no shell: the path is never parsed). 0, or -1 with err saying
 * what could not be removed. */
static int remove_tree(const char *path, ws_error *err)
{
    errno = 0;
    if (!nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS)) return 0;
    return ws_fail(err, "%s: cannot remove the temporary folder: %s", path,
                   errno ? strerror(errno) : "nftw failed");
}

/* The temporary folder `dir` removed after a phase that returned rc: a
 * failure to remove it fails a phase that succeeded, and is a warning
 * after one that failed (whose error stays the one reported). */
static int cleanup(const char *dir, int rc, ws_error *err)
{
    ws_error rm = {{0}};
    if (!remove_tree(dir, &rm)) return rc;
    if (!rc) return ws_fail(err, "%s", rm.msg);
    ws_line("wattsim-bench: warning: %s", rm.msg);
    return rc;
}

static int sweeps_in(const char *dir, const char *traces, const char *catalogue,
                     const row *rows, size_t n_rows, const ws_catalogue *cat, sweep_fig *figs,
                     size_t *n_figs, ws_error *err);

static int sweeps(const char *traces, const char *catalogue, const row *rows, size_t n_rows,
                  const ws_catalogue *cat, sweep_fig *figs, size_t *n_figs, ws_error *err)
{
    char dir[] = "/tmp/wattsim-bench-XXXXXX";
    if (!mkdtemp(dir)) return ws_fail(err, "cannot make a temporary folder: %s", strerror(errno));
    /* Every return of the phase, early ones included, leaves no folder. */
    return cleanup(dir, sweeps_in(dir, traces, catalogue, rows, n_rows, cat, figs, n_figs, err),
                   err);
}

static int sweeps_in(const char *dir, const char *traces, const char *catalogue,
                     const row *rows, size_t n_rows, const ws_catalogue *cat, sweep_fig *figs,
                     size_t *n_figs, ws_error *err)
{
    char exe[PATH_MAX], wattsim[PATH_MAX + 16];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return ws_fail(err, "cannot find this executable");
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(wattsim, sizeof wattsim, "%s/wattsim", exe);
    char cfg[PATH_MAX], one[PATH_MAX], out[PATH_MAX], set_gpu[512] = "gpu=[", seeds[64];
    snprintf(cfg, sizeof cfg, "%s", WS_PAPER_ETA_CONFIG);
    snprintf(one, sizeof one, "%s/one.yaml", dir);
    for (size_t g = 0; g < cat->n_gpus; g++) {
        strncat(set_gpu, cat->gpus[g], sizeof set_gpu - strlen(set_gpu) - 2);
        strncat(set_gpu, g + 1 < cat->n_gpus ? "," : "]", sizeof set_gpu - strlen(set_gpu) - 1);
    }
    FILE *f = fopen(one, "w");
    if (!f || fputs("gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\nbso: zeus\n"
                    "plo: jit\n", f) < 0 || fclose(f)) {
        return ws_fail(err, "%s: cannot write", one);
    }
    size_t n = 0;
    /* Paper scale: 11 etas x 100 seeds x 3 pairs per GPU x workload. */
    const long paper_seeds = quick ? 1 : 100;
    char paper_set[32];
    snprintf(paper_set, sizeof paper_set, "seeds=1..%ld", paper_seeds);
    sweep_fig *p = &figs[n++];
    snprintf(p->name, sizeof p->name, "paper-scale");
    p->sims = (long)(cat->n_gpus * cat->n) * 11 * paper_seeds * 3;
    for (size_t i = 0; i < n_rows; i++)
        p->recs += 11.0 * (double)paper_seeds * 3 * (double)rows[i].recur;
    snprintf(out, sizeof out, "%s/paper", dir);
    char *a1[] = {wattsim, "sweep", cfg, "--set", set_gpu, "--set", paper_set, "--threads",
                  "1", "--no-plot", "--quiet", "--traces", (char *)traces, "--catalogue",
                  (char *)catalogue, "--out", out, NULL};
    if (run_child(a1, p)) return ws_fail(err, "cannot run %s", wattsim);
    long counts[3] = {1000, 10000, 100000};
    if (quick) counts[0] = counts[1] = counts[2] = 1;
    for (int c = 0; c < 3; c++) {
        sweep_fig *q = &figs[n++];
        snprintf(q->name, sizeof q->name, "one job, %ld seed%s", counts[c],
                 ws_s((unsigned long long)counts[c]));
        q->sims = 3 * counts[c];
        snprintf(seeds, sizeof seeds, "seeds=1..%ld", counts[c]);
        snprintf(out, sizeof out, "%s/one%d", dir, c);
        char *a2[] = {wattsim, "sweep", one, "--set", seeds, "--threads", "1", "--no-plot",
                      "--quiet", "--traces", (char *)traces, "--catalogue", (char *)catalogue,
                      "--out", out, NULL};
        if (run_child(a2, q)) return ws_fail(err, "cannot run %s", wattsim);
    }
    /* A Python policy against the same policy in C. */
    const char *py = getenv("WATTSIM_PYTHON");
    if (!py || !*py) py = "/usr/bin/python3";
    if (access(py, X_OK) == 0) {
        char sw[PATH_MAX];
        snprintf(sw, sizeof sw, "%s/py.yaml", dir);
        f = fopen(sw, "w");
        const char *py_cfg = quick ? "eta: 0.5\nbeta: 3\nseed: 1\n"
                                   : "eta: 0.5\nbeta: 3\nseed: 1..20\n";
        if (!f || fputs(py_cfg, f) < 0 || fclose(f))
            return ws_fail(err, "%s: cannot write", sw);
        const char *pols[2] = {"gts:jit", "py:wattsim.policies:GaussianTS:py:wattsim.policies:JIT"};
        char set_work[1024] = "workload=[";
        for (size_t w = 0; w < cat->n; w++) {
            strncat(set_work, cat->items[w].name, sizeof set_work - strlen(set_work) - 2);
            strncat(set_work, w + 1 < cat->n ? "," : "]", sizeof set_work - strlen(set_work) - 1);
        }
        setenv("PYTHONPATH", WS_SOURCE_PYTHON, 0);
        for (int lang = 0; lang < 2; lang++) {
            sweep_fig *q = &figs[n++];
            snprintf(q->name, sizeof q->name, lang ? "gts+jit in Python" : "gts+jit in C");
            q->sims = (long)(cat->n_gpus * cat->n) * (quick ? 1 : 20) * 3;
            snprintf(out, sizeof out, "%s/py%d", dir, lang);
            char *a3[] = {wattsim, "sweep", sw, "--set", set_gpu, "--set", set_work,
                          "--policies", (char *)pols[lang], "--threads", "1", "--no-plot",
                          "--quiet", "--traces", (char *)traces, "--catalogue",
                          (char *)catalogue, "--out", out, NULL};
            if (run_child(a3, q)) return ws_fail(err, "cannot run %s", wattsim);
        }
    }
    *n_figs = n;
    return 0;
}

/* ------------------------------------------------------------ readers */

typedef struct reader_fig {
    const char *name;
    long n;
    double secs[2];          /* wall at n and 2n */
    long rss_kib;            /* at 2n */
    int status[2];
} reader_fig;

/* The input of reader `k` at size n in dir; argv of the command. */
enum { R_JOBS, R_CHECK, R_POWER, R_TRAIN, R_GPUS, R_N };
static const char *const READER_NAME[R_N] = {
    "simulate, n jobs", "trace check, n sizes", "import power, n knobs",
    "import train, n runs", "nvidia-smi, n GPUs"};

static int reader_input(int k, long n, const char *dir)
{
    char path[PATH_MAX + 32];
    FILE *a = NULL, *b = NULL;
#define OPEN(f, name) (snprintf(path, sizeof path, "%s/%s", dir, name), (f) = fopen(path, "w"))
    if (k == R_JOBS || k == R_CHECK) {
        if (!OPEN(a, "summary_train.csv") || !OPEN(b, "summary_power_g1.csv")) goto fail;
        fputs("dataset,network,batch_size,optimizer,learning_rate,run,target_metric,"
              "target_epoch\n", a);
        fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,"
              "average_power\n", b);
        for (long i = 0; i < n; i++) {
            if (k == R_JOBS) {
                for (int bs = 8; bs <= 16; bs += 8) {
                    fprintf(a, "d%ld,n,%d,o,0.1,1,0.5,%ld\n", i, bs, 3 + i % 5);
                    for (int pl = 100; pl <= 150; pl += 50)
                        fprintf(b, "d%ld,n,%d,o,%d,%d,%d\n", i, bs, pl, 10 + bs, pl - 20);
                }
            } else {
                long bs = 1 + (i * 7919) % n;
                fprintf(a, "d,n,%ld,o,0.1,1,0.5,%ld\n", bs, 3 + bs % 5);
                fprintf(b, "d,n,%ld,o,100,%ld,%ld\n", bs, 10 + bs % 7, 80 + bs % 11);
            }
        }
    } else if (k == R_POWER || k == R_GPUS) {
        if (!OPEN(a, "epochs.csv") || !OPEN(b, "nv.csv")) goto fail;
        fputs("dataset,network,optimizer,batch_size,power_limit,epoch,start,end\n", a);
        fputs("timestamp, index, power.draw [W]\n", b);
        long knobs = k == R_POWER ? n : 1, gpus = k == R_GPUS ? n : 1;
        /* limits above the ~200 W drawn: an average above its limit is refused */
        for (long i = 0; i < knobs; i++)
            fprintf(a, "d,n,o,%ld,%ld,1,%ld,%ld\n", 1 + i / 100, 300 + i % 100,
                    1700000000 + 10 * i + 1, 1700000000 + 10 * i + 9);
        for (long t = 0; t <= 10 * knobs + 10; t += 2)
            for (long g = 0; g < gpus; g++) {
                time_t tt = 1700000000 + t;
                struct tm tm;
                gmtime_r(&tt, &tm);
                fprintf(b, "%04d/%02d/%02d %02d:%02d:%02d.000, %ld, %ld.00 W\n",
                        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                        tm.tm_sec, g, 200 + t % 7);
            }
    } else {
        if (!OPEN(a, "metrics.csv")) goto fail;
        fputs("dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric\n", a);
        for (long r = 1; r <= n; r++)
            fprintf(a, "d,n,o,32,0.1,%ld,1,0.3\nd,n,o,32,0.1,%ld,2,0.6\n", r, r);
    }
#undef OPEN
    int bad = (a && fclose(a)) | (b && fclose(b));
    return bad ? -1 : 0;
fail:
    if (a) fclose(a);
    if (b) fclose(b);
    return -1;
}

static int reader_run(const char *wattsim, int k, const char *dir, sweep_fig *f)
{
    char p1[PATH_MAX + 32], p2[PATH_MAX + 32], out[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/out", dir);
    if (k == R_JOBS) {
        char *a[] = {(char *)wattsim, "simulate", "--traces", (char *)dir, "--gpu", "g1",
                     "--job", "d7/n/o", "--target", "0.5", "--max-epochs", "50", "--b0", "8",
                     "--quiet", NULL};
        return run_child(a, f);
    }
    if (k == R_CHECK) {
        char *a[] = {(char *)wattsim, "trace", "check", (char *)dir, NULL};
        return run_child(a, f);
    }
    if (k == R_TRAIN) {
        snprintf(p1, sizeof p1, "%s/metrics.csv", dir);
        char *a[] = {(char *)wattsim, "trace", "import", "train", "--runs", p1,
                     "--target-metric", "0.5", "--out", out, NULL};
        return run_child(a, f);
    }
    snprintf(p1, sizeof p1, "%s/epochs.csv", dir);
    snprintf(p2, sizeof p2, "%s/nv.csv", dir);
    char *a[] = {(char *)wattsim, "trace", "import", "power", "--gpu", "g1", "--epochs", p1,
                 "--nvidia-smi", p2, "--out", out, "--gpus", "0", NULL};
    return run_child(a, f);
}

/* A .csv.gz of one train row repeated, `bytes` once decompressed. */
static int repeated_gz(const char *dir, long bytes)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/summary_train.csv.gz", dir);
    gzFile g = gzopen(path, "wb1");
    if (!g) return -1;
    static char block[1 << 16];
    const char *line = "d,n,8,o,0.1,0,0.9,5\n";
    size_t rl = strlen(line), per = sizeof block / rl;
    for (size_t i = 0; i < per; i++) memcpy(block + i * rl, line, rl);
    int rc = gzputs(g, "dataset,network,batch_size,optimizer,learning_rate,run,"
                       "target_metric,target_epoch\n") > 0 ? 0 : -1;
    for (long done = 0; rc == 0 && done < bytes; done += (long)(per * rl))
        if (gzwrite(g, block, (unsigned)(per * rl)) != (int)(per * rl)) rc = -1;
    if (gzclose(g) != Z_OK) rc = -1;
    snprintf(path, sizeof path, "%s/summary_power_g1.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
          "d,n,8,o,100,12.5,90\n", f);
    return fclose(f) || rc ? -1 : 0;
}

static int readers(long n, reader_fig *figs, sweep_fig *gz, ws_error *err)
{
    char exe[PATH_MAX], wattsim[PATH_MAX + 16], top[] = "/tmp/wattsim-bench-readers-XXXXXX";
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return ws_fail(err, "cannot find this executable");
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(wattsim, sizeof wattsim, "%s/wattsim", exe);
    if (!mkdtemp(top)) return ws_fail(err, "cannot make a temporary folder: %s", strerror(errno));
    int rc = 0;
    quiet_err = 1;                   /* the repeated rows fail, as they should */
    for (int r = 0; r < R_N && !rc; r++) {
        reader_fig *f = &figs[r];
        f->name = READER_NAME[r];
        f->n = n;
        for (int d = 0; d < 2 && !rc; d++) {
            char dir[128];
            snprintf(dir, sizeof dir, "%s/r%d-%d", top, r, d);
            sweep_fig one = {0};
            if (mkdir(dir, 0700) || reader_input(r, n << d, dir)
                || reader_run(wattsim, r, dir, &one))
                rc = ws_fail(err, "%s: cannot run the reader at n = %ld", READER_NAME[r], n << d);
            f->secs[d] = one.secs;
            f->status[d] = one.status;
            if (d) f->rss_kib = one.rss_kib;
        }
    }
    char dir[128];
    snprintf(dir, sizeof dir, "%s/gz", top);
    snprintf(gz->name, sizeof gz->name, "repeated-row .csv.gz");
    if (!rc && (mkdir(dir, 0700) || repeated_gz(dir, 300L << 20)))
        rc = ws_fail(err, "%s: cannot write the repeated-row input", dir);
    if (!rc) {
        char *a[] = {wattsim, "pareto", "--traces", dir, "--gpu", "g1", "--job", "d/n/o",
                     "--target", "0.9", "--max-epochs", "10", "--b0", "8", NULL};
        if (run_child(a, gz)) rc = ws_fail(err, "cannot run %s", wattsim);
    }
    quiet_err = 0;
    return cleanup(top, rc, err);
}

static void print_readers(FILE *f, const reader_fig *r, const sweep_fig *gz)
{
    fprintf(f, "%-24s %8s %9s %9s %7s %10s\n", "reader (wall, 1 thread)", "n", "secs_n",
            "secs_2n", "ratio", "rss_2n_kib");
    for (int i = 0; i < R_N; i++)
        fprintf(f, "%-24s %8ld %9.3f %9.3f %7.2f %10ld%s\n", r[i].name, r[i].n, r[i].secs[0],
                r[i].secs[1], r[i].secs[1] / r[i].secs[0], r[i].rss_kib,
                r[i].status[0] || r[i].status[1] ? "  (failed)" : "");
    fprintf(f, "%-24s %8s %9.3f %9s %7s %10ld  (exit %d: refused on line 3)\n", gz->name,
            "300MB", gz->secs, "-", "-", gz->rss_kib, gz->status);
}

static void readers_json(ws_jw *w, const reader_fig *r, const sweep_fig *gz)
{
    ws_jw_key(w, "readers");
    ws_jw_begin_array_lines(w);
    for (int i = 0; i < R_N; i++) {
        ws_jw_begin_object(w);
        ws_jw_kstring(w, "name", r[i].name);
        ws_jw_kint(w, "n", r[i].n);
        ws_jw_key(w, "seconds_n"); ws_jw_fixed(w, 4, r[i].secs[0]);
        ws_jw_key(w, "seconds_2n"); ws_jw_fixed(w, 4, r[i].secs[1]);
        ws_jw_key(w, "ratio"); ws_jw_fixed(w, 3, r[i].secs[1] / r[i].secs[0]);
        ws_jw_kint(w, "peak_rss_kib_2n", r[i].rss_kib);
        ws_jw_end_object(w);
    }
    ws_jw_end_array(w);
    ws_jw_key(w, "repeated_row_gz");
    ws_jw_begin_object(w);
    ws_jw_kint(w, "decompressed_bytes", 300L << 20);
    ws_jw_key(w, "seconds"); ws_jw_fixed(w, 4, gz->secs);
    ws_jw_kint(w, "peak_rss_kib", gz->rss_kib);
    ws_jw_kint(w, "exit_status", gz->status);
    ws_jw_end_object(w);
}

static int write_readers_json(const char *path, const reader_fig *r, const sweep_fig *gz,
                              ws_error *err)
{
    FILE *j = fopen(path, "w");
    if (!j) return ws_fail(err, "%s: cannot write: %s", path, strerror(errno));
    ws_jw w;
    ws_jw_init(&w, j);
    ws_jw_begin_object(&w);
    ws_jw_kbool(&w, "readers_only", 1);
    readers_json(&w, r, gz);
    ws_jw_end_object(&w);
    ws_jw_newline(&w);
    int bad = ws_jw_error(&w);
    if (fclose(j) || bad) return ws_fail(err, "%s: cannot write", path);
    return 0;
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    /* The tables on a private duplicate of stdout; descriptor 1 (and a
     * policy's printf) on stderr for the whole run (wattsim/process.h). */
    FILE *out = NULL;
    if (ws_process_init() || !(out = ws_stdout_private())) {
        fprintf(stderr, "wattsim-bench: cannot set up standard output: %s\n", strerror(errno));
        return 1;
    }
    const char *bso_name = "zeus", *plo_name = "jit", *json = NULL;
    const char *traces = getenv("WATTSIM_TRACES"), *catalogue = getenv("WATTSIM_CATALOGUE");
    double eta = 0.5, beta = 2.0, seconds = 0.5;
    long fixed = 0;
    int do_sweeps = 1, do_readers = 1, only_readers = 0;
    long reader_n = 40000;
    if (!traces || !*traces) traces = WS_DEFAULT_TRACES;
    if (!catalogue || !*catalogue) catalogue = WS_DEFAULT_CATALOGUE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(HELP, out); return 0; }
        if (!strcmp(a, "--no-sweeps")) { do_sweeps = 0; continue; }
        if (!strcmp(a, "--no-readers")) { do_readers = 0; continue; }
        if (!strcmp(a, "--readers-only")) { only_readers = 1; continue; }
        if (!strcmp(a, "--quick")) { quick = 1; continue; }
        if (!v) { fputs(HELP, stderr); return 2; }
        if (!strcmp(a, "--bso")) bso_name = v;
        else if (!strcmp(a, "--plo")) plo_name = v;
        else if (!strcmp(a, "--eta")) eta = atof(v);
        else if (!strcmp(a, "--beta")) beta = strtod(v, NULL);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--seeds")) fixed = atol(v);
        else if (!strcmp(a, "--json")) json = v;
        else if (!strcmp(a, "--traces")) traces = v;
        else if (!strcmp(a, "--catalogue")) catalogue = v;
        else if (!strcmp(a, "--reader-n")) reader_n = atol(v);
        else { fputs(HELP, stderr); return 2; }
        i++;
    }
    ws_error err = {{0}};
    ws_catalogue cat = {0};
    ws_registry *reg = ws_registry_new();
    int rc = 2;
    const ws_bso_type *bt = NULL;
    const ws_plo_type *pt = NULL;
    ws_value *bp = NULL, *pp = NULL;
    row *rows = NULL;
    size_t n_rows = 0, n_figs = 0;
    sweep_fig figs[6], gz_fig;
    reader_fig rfigs[R_N];
    memset(figs, 0, sizeof figs);
    memset(rfigs, 0, sizeof rfigs);
    memset(&gz_fig, 0, sizeof gz_fig);
    if (reader_n < 100) { fputs(HELP, stderr); return 2; }
    if (quick) {
        fixed = 1;
        reader_n = 100;
    }
    if (only_readers) {
        if (readers(reader_n, rfigs, &gz_fig, &err)) goto out;
        print_readers(out, rfigs, &gz_fig);
        if (json && write_readers_json(json, rfigs, &gz_fig, &err)) goto out;
        rc = 0;
        goto out;
    }
    if (ws_catalogue_load(catalogue, &cat, &err)
        || !(bt = ws_registry_bso(reg, bso_name, &err))
        || !(pt = ws_registry_plo(reg, plo_name, &err))
        || ws_params_resolve(bt->params, NULL, 0, "bso", &bp, &err)
        || ws_params_resolve(pt->params, NULL, 0, "plo", &pp, &err))
        goto out;
    fprintf(out, "wattsim-bench: %s + %s, eta %g, beta %g, one core, ", bt->name, pt->name, eta,
            beta);
    if (fixed) fprintf(out, "%ld seed%s per GPU x workload\n", fixed,
                       ws_s((unsigned long long)fixed));
    else fprintf(out, ">= %g s per GPU x workload\n", seconds);
    fflush(out);
    if (engine(&cat, bt, pt, bp, pp, traces, eta, beta, seconds, fixed, &rows, &n_rows, &err))
        goto out;
    fprintf(out, "%-8s %-14s %6s %8s %11s %12s %9s %11s %7s\n", "gpu", "workload", "recur", "seeds",
            "recurrences", "recur_per_s", "ns_per_r", "floor_ns_r", "x_floor");
    double sum_rate = 0, sum_ratio = 0, tot_recs = 0, tot_secs = 0;
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        double rate = (double)r->recs / r->secs, ns = 1e9 * r->secs / (double)r->recs;
        double fl = 1e9 * r->floor_secs / (double)r->recs;
        fprintf(out, "%-8s %-14s %6ld %8ld %11ld %12.0f %9.1f %11.1f %7.2f\n", r->gpu, r->work,
                r->recur, r->seeds, r->recs, rate, ns, fl, ns / fl);
        sum_rate += rate;
        sum_ratio += ns / fl;
        tot_recs += (double)r->recs;
        tot_secs += r->secs;
    }
    double mean_rate = sum_rate / (double)n_rows, mean_ratio = sum_ratio / (double)n_rows;
    fprintf(out,
            "mean over %zu GPU x workload pairs: %.0f recurrences/s per thread, %.2f x the floor\n",
            n_rows, mean_rate, mean_ratio);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(out, "engine peak RSS: %ld KiB\n", ru.ru_maxrss);
    fflush(out);
    if (do_sweeps) {
        if (sweeps(traces, catalogue, rows, n_rows, &cat, figs, &n_figs, &err)) goto out;
        fprintf(out, "\n%-22s %9s %9s %9s %10s %14s %9s\n", "sweep (1 thread)", "sims", "wall_s",
                "cpu_s", "rss_kib", "recur_per_s", "x_engine");
        for (size_t i = 0; i < n_figs; i++) {
            const sweep_fig *f = &figs[i];
            fprintf(out, "%-22s %9ld %9.2f %9.2f %10ld ", f->name, f->sims, f->secs, f->cpu_secs,
                    f->rss_kib);
            /* per CPU second, like the engine's figures */
            if (f->recs > 0)
                fprintf(out, "%14.0f %9.2f", f->recs / f->cpu_secs,
                        (tot_recs / tot_secs) / (f->recs / f->cpu_secs));
            else
                fprintf(out, "%14s %9s", "-", "-");
            fprintf(out, "%s\n", f->status ? "  (failed)" : "");
        }
    }
    if (do_readers) {
        if (readers(reader_n, rfigs, &gz_fig, &err)) goto out;
        fputc('\n', out);
        print_readers(out, rfigs, &gz_fig);
    }
    if (json) {
        FILE *j = fopen(json, "w");
        if (!j) { ws_fail(&err, "%s: cannot write: %s", json, strerror(errno)); goto out; }
        ws_jw w;
        ws_jw_init(&w, j);
        ws_jw_begin_object(&w);
        ws_jw_kstring(&w, "bso", bt->name);
        ws_jw_kstring(&w, "plo", pt->name);
        ws_jw_key(&w, "eta"); ws_jw_g(&w, eta);
        ws_jw_key(&w, "beta"); ws_jw_g(&w, beta);       /* inf (no early stopping): null */
        ws_jw_key(&w, "engine");
        ws_jw_begin_array_lines(&w);
        for (size_t i = 0; i < n_rows; i++) {
            const row *r = &rows[i];
            ws_jw_begin_object(&w);
            ws_jw_kstring(&w, "gpu", r->gpu);
            ws_jw_kstring(&w, "workload", r->work);
            ws_jw_kint(&w, "recurrences", r->recs);
            ws_jw_kint(&w, "seeds", r->seeds);
            ws_jw_key(&w, "cpu_seconds"); ws_jw_fixed(&w, 6, r->secs);
            ws_jw_key(&w, "recur_per_s"); ws_jw_fixed(&w, 0, (double)r->recs / r->secs);
            ws_jw_key(&w, "ns_per_recurrence");
            ws_jw_fixed(&w, 2, 1e9 * r->secs / (double)r->recs);
            ws_jw_key(&w, "floor_ns_per_recurrence");
            ws_jw_fixed(&w, 2, 1e9 * r->floor_secs / (double)r->recs);
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        ws_jw_key(&w, "engine_mean_recur_per_s"); ws_jw_fixed(&w, 0, mean_rate);
        ws_jw_key(&w, "engine_mean_x_floor"); ws_jw_fixed(&w, 3, mean_ratio);
        ws_jw_kint(&w, "engine_peak_rss_kib", ru.ru_maxrss);
        ws_jw_key(&w, "sweeps");
        ws_jw_begin_array_lines(&w);
        for (size_t i = 0; i < n_figs; i++) {
            const sweep_fig *f = &figs[i];
            ws_jw_begin_object(&w);
            ws_jw_kstring(&w, "name", f->name);
            ws_jw_kint(&w, "simulations", f->sims);
            ws_jw_kint(&w, "threads", 1);
            ws_jw_key(&w, "seconds"); ws_jw_fixed(&w, 3, f->secs);
            ws_jw_key(&w, "cpu_seconds"); ws_jw_fixed(&w, 3, f->cpu_secs);
            ws_jw_kint(&w, "peak_rss_kib", f->rss_kib);
            ws_jw_kint(&w, "exit_status", f->status);
            if (f->recs > 0) {
                ws_jw_key(&w, "recur_per_cpu_s");
                ws_jw_fixed(&w, 0, f->recs / f->cpu_secs);
            }
            ws_jw_end_object(&w);
        }
        ws_jw_end_array(&w);
        if (do_readers) readers_json(&w, rfigs, &gz_fig);
        ws_jw_end_object(&w);
        ws_jw_newline(&w);
        int bad = ws_jw_error(&w);      /* an earlier write failed, or the close */
        if (fclose(j) || bad) { ws_fail(&err, "%s: cannot write", json); goto out; }
    }
    rc = 0;
out:
    if (rc) ws_line("wattsim-bench: %s", err.msg);
    if (bt) ws_params_free(bt->params, bp);
    if (pt) ws_params_free(pt->params, pp);
    free(rows);
    ws_catalogue_free(&cat);
    ws_registry_free(reg);
    ws_error werr = {{0}};
    if (ws_stdout_close(out, &werr)) {
        ws_line("wattsim-bench: %s", werr.msg);
        rc = 1;
    }
    return rc;
}
