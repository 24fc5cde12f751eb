/*
 * paper.md: the reproduction beside the Zeus paper's published numbers;
 * see wattsim/paper.h. Every number is read back from the CSVs the figures
 * are drawn from, so the table and the figures cannot disagree.
 *
 *   read_potential, read_savings, read_steady   the summary rows
 *   read_history      comparison/history.csv streamed: each simulation's
 *                     runs reduced (ws_est_add/ws_est_end) as they pass,
 *                     kept per job and seed for zeus+jit and default
 *   hist_estimate     pairs them by seed; the estimators and the cost
 *                     (wattsim/estimators.h)
 *   est_tables        one estimator per column, the gap of each estimator
 *                     x set-up to the abstract, what remains per workload,
 *                     the jobs where zeus's cost is above the default's
 */
#define _GNU_SOURCE   /* O_DIRECTORY, O_CLOEXEC */
#include "wattsim/paper.h"
#include "wattsim/report.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/csv.h"
#include "wattsim/infile.h"
#include "wattsim/markup.h"

/* Published in Zeus (NSDI'23): the motivation's energy-saving potential
 * over the default on V100 and the abstract's energy-efficiency gain. */
#define PAPER_POT_LO 23.8
#define PAPER_POT_HI 74.7
#define PAPER_ETA_LO 15.3
#define PAPER_ETA_HI 75.8

/* Columns of interest in the header of an open CSV; -1 when absent. */
static int columns(ws_csv *c, const char *path, const char *const *names, long *col, int n,
                   ws_error *err)
{
    int r = ws_csv_next(c, err);
    if (r <= 0) return r ? -1 : ws_fail(err, "%s: empty file", path);
    for (int k = 0; k < n; k++) col[k] = -1;
    for (size_t i = 0; i < ws_csv_nfields(c); i++)
        for (int k = 0; k < n; k++)
            if (!strcmp(ws_csv_field(c, i), names[k])) col[k] = (long)i;
    for (int k = 0; k < n; k++)
        if (col[k] < 0) return ws_fail(err, "%s:1: no column '%s'", path, names[k]);
    return 0;
}

static const char *fld(ws_csv *c, long i)
{
    return i >= 0 && (size_t)i < ws_csv_nfields(c) ? ws_csv_field(c, (size_t)i) : "";
}

/* A number field, or NAN when empty; -1 with err set when malformed. */
static int number(ws_csv *c, const char *path, long i, double *v, ws_error *err)
{
    const char *s = fld(c, i);
    char *end;
    if (!*s) { *v = NAN; return 0; }
    *v = strtod(s, &end);
    if (*end || !isfinite(*v))
        return ws_fail(err, "%s:%ld: '%s' is not a finite number", path, ws_csv_line(c), s);
    return 0;
}

static void range(double *lo, double *hi, double v)
{
    if (!isfinite(v)) return;
    if (isnan(*lo) || v < *lo) *lo = v;
    if (isnan(*hi) || v > *hi) *hi = v;
}

/* DIR/SUB/NAME: 1 a regular file reached without a symbolic link, 0
 * nothing there, -1 (err set) something else there (a link, a FIFO, a
 * device): DIR may come from someone else, and its files are read only
 * when they are what they claim. */
static int input_at(const char *dir, const char *sub, const char *name, ws_error *err)
{
    char why[128];
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) return 0;
    int s = ws_infile_dir_at(d, sub, why, sizeof why);
    close(d);
    if (s < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return ws_fail(err, "%s/%s: %s; the report reads only what is in the folder", dir,
                       sub, why);
    }
    int rc = ws_infile_check_at(s, name, why, sizeof why);
    close(s);
    if (rc == WS_INFILE_REFUSED)
        return ws_fail(err, "%s/%s/%s: %s; the report reads only regular files", dir, sub,
                       name, why);
    return rc == WS_INFILE_OK;
}

int ws_paper_inputs(const char *dir, ws_error *err)
{
    int a = input_at(dir, "potential", "potential.csv", err);
    int b = a < 0 ? -1 : input_at(dir, "comparison", "savings.csv", err);
    return a < 0 || b < 0 ? -1 : a || b;
}

static int read_potential(const char *path, ws_paper_numbers *o, ws_error *err)
{
    static const char *const names[] = {"gpu", "saving_pct"};
    long col[2];
    ws_csv *c = ws_csv_open(path, NULL, err);
    if (!c) return -1;
    int r, rc = columns(c, path, names, col, 2, err);
    while (!rc && (r = ws_csv_next(c, err)) == 1) {
        double v;
        if ((rc = number(c, path, col[1], &v, err))) break;
        range(&o->pot_all_lo, &o->pot_all_hi, v);
        if (!strcmp(fld(c, col[0]), "v100")) range(&o->pot_v100_lo, &o->pot_v100_hi, v);
    }
    if (!rc && r < 0) rc = -1;
    ws_csv_close(c);
    o->have_potential = !rc;
    return rc;
}

/* Workloads in first-seen order with the sum and count of their ETA
 * savings versus default, for the smallest two. */
typedef struct wsum {
    char name[64];
    double sum;
    size_t n;
} wsum;

static int read_savings(const char *path, const ws_catalogue *cat, ws_paper_numbers *o,
                        ws_error *err)
{
    static const char *const names[] = {"policy", "versus", "gpu", "workload", "seeds",
                                        "eta_saving_pct", "tta_saving_pct", "eta_index", "eta",
                                        "beta", "beta_index"};
    long col[11];
    wsum w[64];
    size_t nw = 0;
    char gpus[16][64];
    size_t ng = 0;
    ws_csv *c = ws_csv_open(path, NULL, err);
    if (!c) return -1;
    int r, rc = columns(c, path, names, col, 11, err);
    while (!rc && (r = ws_csv_next(c, err)) == 1) {
        /* versus default, at the sweep's first η and β */
        if (strcmp(fld(c, col[1]), "default+default") || strcmp(fld(c, col[7]), "0")
            || strcmp(fld(c, col[10]), "0"))
            continue;
        snprintf(o->eta, sizeof o->eta, "%s", fld(c, col[8]));
        snprintf(o->beta, sizeof o->beta, "%s", fld(c, col[9]));
        double e, t;
        if ((rc = number(c, path, col[5], &e, err)) || (rc = number(c, path, col[6], &t, err)))
            break;
        snprintf(o->policy, sizeof o->policy, "%s", fld(c, col[0]));
        o->seeds = (size_t)strtoul(fld(c, col[4]), NULL, 10);
        o->n_jobs++;
        range(&o->eta_lo, &o->eta_hi, e);
        range(&o->tta_lo, &o->tta_hi, t);
        const char *gpu = fld(c, col[2]), *work = fld(c, col[3]);
        if (!strcmp(gpu, "v100")) range(&o->eta_v100_lo, &o->eta_v100_hi, e);
        size_t g = 0;
        while (g < ng && strcmp(gpus[g], gpu)) g++;
        if (g == ng && ng < 16) snprintf(gpus[ng++], sizeof gpus[0], "%s", gpu);
        size_t k = 0;
        while (k < nw && strcmp(w[k].name, work)) k++;
        if (k == nw && nw < 64) {
            snprintf(w[nw].name, sizeof w[0].name, "%s", work);
            w[nw].sum = 0;
            w[nw++].n = 0;
        }
        if (k < nw && isfinite(e)) { w[k].sum += e; w[k].n++; }
    }
    if (!rc && r < 0) rc = -1;
    ws_csv_close(c);
    o->n_gpus = ng;
    /* the two workloads of the smallest mean saving over GPUs */
    for (int s = 0; !rc && s < 2; s++) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < nw; k++) {
            if (!w[k].n || (s && !strcmp(w[k].name, o->smallest[0]))) continue;
            if (s && !strcmp(ws_catalogue_workload_display(cat, w[k].name), o->smallest[0]))
                continue;
            if (best == SIZE_MAX || w[k].sum / (double)w[k].n < w[best].sum / (double)w[best].n)
                best = k;
        }
        if (best == SIZE_MAX) break;
        snprintf(o->smallest[s], sizeof o->smallest[s], "%s",
                 ws_catalogue_workload_display(cat, w[best].name));
        o->smallest_pct[s] = w[best].sum / (double)w[best].n;
    }
    o->have_savings = !rc && o->n_jobs > 0;
    return rc;
}

static int read_steady(const char *path, const char *policy, ws_paper_numbers *o,
                       ws_error *err)
{
    static const char *const names[] = {"policy", "saving_steady_energy"};
    long col[2];
    ws_csv *c = ws_csv_open(path, NULL, err);
    if (!c) return -1;
    int r, rc = columns(c, path, names, col, 2, err);
    while (!rc && (r = ws_csv_next(c, err)) == 1) {
        if (strcmp(fld(c, col[0]), policy)) continue;
        double v;
        if ((rc = number(c, path, col[1], &v, err))) break;
        range(&o->steady_lo, &o->steady_hi, 100 * v);
    }
    if (!rc && r < 0) rc = -1;
    ws_csv_close(c);
    o->have_steady = !rc && isfinite(o->steady_lo);
    return rc;
}

/* ------------------------------------------------------------ history.csv */

/* One pair's simulations of one job, by seed. */
typedef struct seed_sims {
    unsigned long *seed;
    ws_est_sim *sim;
    size_t n, cap;
} seed_sims;

typedef struct hist_job {
    seed_sims z, d;                    /* subject, default */
} hist_job;

static int seed_put(seed_sims *a, unsigned long seed, const ws_est_sim *s)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        unsigned long *p = realloc(a->seed, cap * sizeof *p);
        if (!p) return -1;
        a->seed = p;
        ws_est_sim *q = realloc(a->sim, cap * sizeof *q);
        if (!q) return -1;
        a->sim = q;
        a->cap = cap;
    }
    a->seed[a->n] = seed;
    a->sim[a->n++] = *s;
    return 0;
}

/* The simulation being read: its job, pair and seed, and whether it failed. */
typedef struct hist_cur {
    long sim;                          /* -1: none */
    long job;                          /* -1: not of interest */
    int subject, failed;
    unsigned long seed;
} hist_cur;

static int hist_close(hist_cur *cur, ws_est_reducer *red, hist_job *hj, ws_paper_numbers *o)
{
    if (cur->sim < 0 || cur->job < 0) return 0;
    ws_est_sim s;
    ws_est_end(red, &s);
    if (cur->failed) { o->failed_sims++; return 0; }
    return seed_put(cur->subject ? &hj[cur->job].z : &hj[cur->job].d, cur->seed, &s);
}

/* Which job (gpu, workload) is, adding it: -1 when there is no room. */
static long job_of(ws_paper_numbers *o, const char *gpu, const char *work)
{
    for (size_t k = 0; k < o->n_est_jobs; k++)
        if (!strcmp(o->jobs[k].gpu, gpu) && !strcmp(o->jobs[k].workload, work)) return (long)k;
    if (o->n_est_jobs == WS_PAPER_MAX_JOBS) return -1;
    ws_paper_job *j = &o->jobs[o->n_est_jobs];
    memset(j, 0, sizeof *j);
    snprintf(j->gpu, sizeof j->gpu, "%s", gpu);
    snprintf(j->workload, sizeof j->workload, "%s", work);
    j->potential = NAN;
    return (long)o->n_est_jobs++;
}

/* The estimators of each job over the seeds both pairs have. */
static int hist_estimate(hist_job *hj, ws_paper_numbers *o)
{
    size_t kept = 0;
    for (size_t k = 0; k < o->n_est_jobs; k++) {
        seed_sims *z = &hj[k].z, *d = &hj[k].d;
        size_t cap = z->n ? z->n : 1;
        ws_est_sim *zs = malloc(cap * sizeof *zs), *ds = malloc(cap * sizeof *ds);
        if (!zs || !ds) { free(zs); free(ds); return -1; }
        size_t n = 0;
        for (size_t i = 0; i < z->n; i++)
            for (size_t j = 0; j < d->n; j++)
                if (z->seed[i] == d->seed[j]) {
                    zs[n] = z->sim[i];
                    ds[n++] = d->sim[j];
                    break;
                }
        ws_paper_job *job = &o->jobs[k];
        if (n) {
            job->seeds = n;
            for (int e = 0; e < WS_EST_N; e++)
                job->est[e] = ws_est_saving((ws_estimator)e, zs, ds, n);
            ws_est_cost_of(zs, ds, n, &job->cost);
            if (kept != k) o->jobs[kept] = *job;
            kept++;
        }
        free(zs);
        free(ds);
    }
    o->n_est_jobs = kept;
    return 0;
}

static int read_history(const char *path, ws_paper_numbers *o, ws_error *err)
{
    static const char *const names[] = {"simulation", "gpu", "workload", "eta", "beta",
                                        "seed", "recurrence", "bs", "energy_j", "time_s",
                                        "cost", "policy", "status"};
    enum { C_SIM, C_GPU, C_WORK, C_ETA, C_BETA, C_SEED, C_REC, C_BS, C_E, C_T, C_C, C_POL,
           C_STATUS, C_N };
    long col[C_N];
    hist_job *hj = calloc(WS_PAPER_MAX_JOBS, sizeof *hj);
    ws_est_reducer red = {0};
    hist_cur cur = {-1, -1, 0, 0, 0};
    double eta = strtod(o->eta, NULL), beta = strtod(o->beta, NULL);
    ws_csv *c = hj ? ws_csv_open(path, NULL, err) : NULL;
    int r = 0, rc = hj ? (c ? columns(c, path, names, col, C_N, err) : -1)
                       : ws_fail(err, "out of memory");
    while (!rc && (r = ws_csv_next(c, err)) == 1) {
        char *end;
        long sim = strtol(fld(c, col[C_SIM]), &end, 10);
        if (*end || sim < 0) {
            rc = ws_fail(err, "%s:%ld: simulation '%s' is not an index", path, ws_csv_line(c),
                         fld(c, col[C_SIM]));
            break;
        }
        if (sim != cur.sim) {
            if (hist_close(&cur, &red, hj, o)) { rc = ws_fail(err, "out of memory"); break; }
            const char *pol = fld(c, col[C_POL]);
            int subject = !strcmp(pol, o->policy), ref = !strcmp(pol, "default+default");
            double e, b;
            if ((rc = number(c, path, col[C_ETA], &e, err))) break;
            /* β is a number or "inf" */
            b = strtod(fld(c, col[C_BETA]), NULL);
            cur = (hist_cur){sim, -1, subject, 0, 0};
            if ((subject || ref) && e == eta && b == beta) {
                cur.job = job_of(o, fld(c, col[C_GPU]), fld(c, col[C_WORK]));
                if (cur.job < 0) o->jobs_left_out++;
                cur.seed = strtoul(fld(c, col[C_SEED]), NULL, 10);
            }
        }
        if (cur.job < 0) continue;
        if (strcmp(fld(c, col[C_STATUS]), "ok")) { cur.failed = 1; continue; }
        double rec, bs, e, t, cost;
        if ((rc = number(c, path, col[C_REC], &rec, err)) || (rc = number(c, path, col[C_BS], &bs, err))
            || (rc = number(c, path, col[C_E], &e, err)) || (rc = number(c, path, col[C_T], &t, err))
            || (rc = number(c, path, col[C_C], &cost, err)))
            break;
        if (isnan(rec) || isnan(e) || isnan(t) || isnan(cost) || isnan(bs)) {
            rc = ws_fail(err, "%s:%ld: a run of an ok simulation without recurrence, batch size,"
                         " energy, time or cost; expected a history.csv of `wattsim sweep"
                         " --keep-history`", path, ws_csv_line(c));
            break;
        }
        if (!(rec >= 1 && rec <= (double)WS_MAX_RECURRENCES && rec == floor(rec))
            || !(bs >= 1 && bs <= INT_MAX && bs == floor(bs))) {
            rc = ws_fail(err, "%s:%ld: recurrence %g or batch size %g is not an integer in"
                         " range (recurrence 1..%ld)", path, ws_csv_line(c), rec, bs,
                         WS_MAX_RECURRENCES);
            break;
        }
        /* bounded, so that no sum over a file from elsewhere overflows */
        if (!(e >= 0 && e <= 1e18 && t >= 0 && t <= 1e18 && cost >= 0 && cost <= 1e18)) {
            rc = ws_fail(err, "%s:%ld: energy, time or cost outside 0..1e18", path,
                         ws_csv_line(c));
            break;
        }
        int added = ws_est_add(&red, (long)rec, (int)bs, e, t, cost);
        if (added) {
            rc = added == -2 ? ws_fail(err, "out of memory")
                             : ws_fail(err, "%s:%ld: simulation %ld tries more than %d batch"
                                       " sizes", path, ws_csv_line(c), sim, WS_EST_MAX_BS);
            break;
        }
    }
    if (!rc && r < 0) rc = -1;
    if (!rc && hist_close(&cur, &red, hj, o)) rc = ws_fail(err, "out of memory");
    if (!rc && hist_estimate(hj, o)) rc = ws_fail(err, "out of memory");
    if (c) ws_csv_close(c);
    ws_est_free(&red);
    for (size_t k = 0; hj && k < WS_PAPER_MAX_JOBS; k++) {
        free(hj[k].z.seed); free(hj[k].z.sim); free(hj[k].d.seed); free(hj[k].d.sim);
    }
    free(hj);
    o->have_history = !rc && o->n_est_jobs > 0;
    return rc;
}

/* Each job's potential, from potential.csv. */
static int attach_potential(const char *path, ws_paper_numbers *o, ws_error *err)
{
    static const char *const names[] = {"gpu", "workload", "saving_pct"};
    long col[3];
    ws_csv *c = ws_csv_open(path, NULL, err);
    if (!c) return -1;
    int r, rc = columns(c, path, names, col, 3, err);
    while (!rc && (r = ws_csv_next(c, err)) == 1) {
        double v;
        if ((rc = number(c, path, col[2], &v, err))) break;
        for (size_t k = 0; k < o->n_est_jobs; k++)
            if (!strcmp(o->jobs[k].gpu, fld(c, col[0]))
                && !strcmp(o->jobs[k].workload, fld(c, col[1])))
                o->jobs[k].potential = v;
    }
    if (!rc && r < 0) rc = -1;
    ws_csv_close(c);
    return rc;
}

int ws_paper_numbers_read(const char *dir, const ws_catalogue *cat, ws_paper_numbers *o,
                          ws_error *err)
{
    memset(o, 0, sizeof *o);
    double *nan_fields[] = {&o->pot_v100_lo, &o->pot_v100_hi, &o->pot_all_lo, &o->pot_all_hi,
                            &o->eta_lo, &o->eta_hi, &o->eta_v100_lo, &o->eta_v100_hi,
                            &o->steady_lo, &o->steady_hi, &o->tta_lo, &o->tta_hi,
                            &o->smallest_pct[0], &o->smallest_pct[1]};
    for (size_t i = 0; i < sizeof nan_fields / sizeof *nan_fields; i++) *nan_fields[i] = NAN;
    char path[4200];
    int have;
    snprintf(path, sizeof path, "%s/potential/potential.csv", dir);
    if ((have = input_at(dir, "potential", "potential.csv", err)) < 0
        || (have && read_potential(path, o, err)))
        return -1;
    snprintf(path, sizeof path, "%s/comparison/savings.csv", dir);
    if ((have = input_at(dir, "comparison", "savings.csv", err)) < 0
        || (have && read_savings(path, cat, o, err)))
        return -1;
    snprintf(path, sizeof path, "%s/comparison/sweep.csv", dir);
    if (o->have_savings && ((have = input_at(dir, "comparison", "sweep.csv", err)) < 0
                            || (have && read_steady(path, o->policy, o, err))))
        return -1;
    snprintf(path, sizeof path, "%s/comparison/history.csv", dir);
    if (o->have_savings && ((have = input_at(dir, "comparison", "history.csv", err)) < 0
                            || (have && read_history(path, o, err))))
        return -1;
    snprintf(path, sizeof path, "%s/potential/potential.csv", dir);
    if (o->have_history && o->have_potential && attach_potential(path, o, err)) return -1;
    for (size_t k = 0; k < o->n_est_jobs; k++) {
        snprintf(o->gpu_display[k], sizeof o->gpu_display[k], "%s",
                 cat ? ws_catalogue_gpu_display(cat, o->jobs[k].gpu) : o->jobs[k].gpu);
        snprintf(o->work_display[k], sizeof o->work_display[k], "%s",
                 cat ? ws_catalogue_workload_display(cat, o->jobs[k].workload)
                     : o->jobs[k].workload);
    }
    return 0;
}

/* "a %–b %", or "–" when unknown. */
static void pct_range(FILE *f, double lo, double hi)
{
    char a[32], b[32];
    if (isnan(lo)) fputs("–", f);
    else fprintf(f, "%s %%–%s %%", ws_tab(a, sizeof a, "%.1f", ws_req(lo)),
                 ws_tab(b, sizeof b, "%.1f", ws_req(hi)));
}

/* The difference to the paper's range, in percentage points. */
static void diff(FILE *f, double lo, double hi, double plo, double phi)
{
    if (isnan(lo) || isnan(plo)) { fputs("not published", f); return; }
    double a = lo - plo, b = hi - phi;
    char x[32], y[32];
    /* no "-0.0": a difference that rounds to zero is zero */
    fprintf(f, "%s pp (low end), %s pp (high end)",
            ws_tab(x, sizeof x, "%+.1f", ws_req(fabs(a) < 0.05 ? 0.0 : a)),
            ws_tab(y, sizeof y, "%+.1f", ws_req(fabs(b) < 0.05 ? 0.0 : b)));
}

static void row(FILE *f, const char *what, double plo, double phi, double lo, double hi,
                const char *metric)
{
    fprintf(f, "| %s | ", what);
    pct_range(f, plo, phi);
    fputs(" | ", f);
    pct_range(f, lo, hi);
    fprintf(f, " | %s | ", metric);
    diff(f, lo, hi, plo, phi);
    fputs(" |\n", f);
}

/* Text read from the folder's CSVs as Markdown text, into buf. */
static const char *md(const char *s, char *buf, size_t size)
{
    char *t = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&t, &len);
    if (f) ws_md_text(f, s);
    if (!f || fclose(f) || !t) snprintf(buf, size, "?");
    else snprintf(buf, size, "%s", t);
    free(t);
    return buf;
}

/* ------------------------------------------------------------ estimators */

static const char *p1(char *buf, size_t size, double x)
{
    return ws_tab(buf, size, "%.1f", x);
}

/* The two ends of estimator k over the jobs (V100 only: v100), with the
 * jobs there; 0 when no job has it. */
static int ends(const ws_paper_numbers *n, int k, int v100, size_t *lo, size_t *hi)
{
    int any = 0;
    for (size_t j = 0; j < n->n_est_jobs; j++) {
        double v = k < 0 ? n->jobs[j].potential : n->jobs[j].est[k];
        if (isnan(v) || (v100 && strcmp(n->jobs[j].gpu, "v100"))) continue;
        double l = k < 0 ? n->jobs[*lo].potential : n->jobs[*lo].est[k];
        double h = k < 0 ? n->jobs[*hi].potential : n->jobs[*hi].est[k];
        if (!any || v < l) *lo = j;
        if (!any || v > h) *hi = j;
        any = 1;
    }
    return any;
}

static double est_of(const ws_paper_numbers *n, int k, size_t j)
{
    return k < 0 ? n->jobs[j].potential : n->jobs[j].est[k];
}

/* "GPU workload" of job j, as Markdown text. */
static void job_name(FILE *f, const ws_paper_numbers *n, size_t j)
{
    ws_md_text(f, n->gpu_display[j]);
    fputc(' ', f);
    ws_md_text(f, n->work_display[j]);
}

static void est_range(FILE *f, const ws_paper_numbers *n, int k, int v100)
{
    size_t lo = 0, hi = 0;
    if (!ends(n, k, v100, &lo, &hi)) { fputs(" – |", f); return; }
    char a[32], b[32];
    fprintf(f, " %s %%–%s %% |", p1(a, sizeof a, est_of(n, k, lo)),
            p1(b, sizeof b, est_of(n, k, hi)));
}

static double gap(double v, double paper)
{
    double g = v - paper;
    return fabs(g) < 0.05 ? 0.0 : g;
}

static void est_tables(FILE *f, const ws_paper_numbers *n, const char *pol, const char *eta,
                       const char *beta)
{
    char a[32], b[32], c[32], d[32];
    size_t seeds = n->n_est_jobs ? n->jobs[0].seeds : 0;
    int same_seeds = 1;
    for (size_t j = 0; j < n->n_est_jobs; j++) same_seeds &= n->jobs[j].seeds == seeds;
    fprintf(f, "\nEnergy saving of %s vs default per GPU × workload, one estimator per column"
            " (η = %s, β = %s, ", pol, eta, beta);
    if (same_seeds) fprintf(f, "%zu seeds", seeds);
    else fputs("seeds as in the last column", f);
    fputs("; from every run in comparison/history.csv). The exploration phase is Zeus's"
          " pruning: it ends at the last recurrence with a first or second try of a batch"
          " size (each of the 2 pruning rounds tries a size at most once; the bandit"
          " afterwards picks only sizes tried twice). After exploration: ETA per recurrence"
          " after it, against the default's per recurrence over all recurrences (the default"
          " has no exploration).", f);
    if (n->failed_sims) fprintf(f, " %zu failed simulations are left out.", n->failed_sims);
    if (n->jobs_left_out) fprintf(f, " Only the first %d jobs are shown.", WS_PAPER_MAX_JOBS);
    fputs("\n\n| GPU | Workload | potential (least-ETA knob vs default, one run) |", f);
    for (int k = 0; k < WS_EST_N; k++) fprintf(f, " %s |", ws_est_name((ws_estimator)k));
    fputs(" exploration ends (recurrence of R, mean over seeds) | seeds |\n|---|---|---:|", f);
    for (int k = 0; k < WS_EST_N; k++) fputs("---:|", f);
    fputs("---:|---:|\n", f);
    for (size_t j = 0; j < n->n_est_jobs; j++) {
        const ws_paper_job *J = &n->jobs[j];
        fputs("| ", f);
        ws_md_text(f, n->gpu_display[j]);
        fputs(" | ", f);
        ws_md_text(f, n->work_display[j]);
        fprintf(f, " | %s |", p1(a, sizeof a, J->potential));
        for (int k = 0; k < WS_EST_N; k++) fprintf(f, " %s |", p1(a, sizeof a, J->est[k]));
        fprintf(f, " %s of %ld | %zu |\n", p1(a, sizeof a, J->cost.explore_end), J->cost.R,
                J->seeds);
    }
    for (int v = 0; v < 2; v++) {
        fprintf(f, "| range, %s | |", v ? "V100" : "every GPU");
        for (int k = -1; k < WS_EST_N; k++) est_range(f, n, k, v);
        fputs(" | |\n", f);
    }
    fputs("| Zeus paper (NSDI'23) | | 23.8 %–74.7 % (motivation, V100) |", f);
    for (int k = 0; k < WS_EST_N; k++) fputs(" 15.3 %–75.8 % (abstract) |", f);
    fputs(" | |\n", f);

    /* every estimator x set-up against the abstract's two ends */
    fputs("\nEach estimator and set-up against the abstract's 15.3 %–75.8 %, in percentage"
          " points (wattsim minus the paper):\n\n| Estimator | GPUs | wattsim | lowest"
          " | highest | gap at 15.3 % | gap at 75.8 % | largest gap |\n"
          "|---|---|---:|---|---|---:|---:|---:|\n", f);
    int best_k = -1, best_v = 0;
    double best = NAN;
    for (int k = 0; k < WS_EST_N; k++)
        for (int v = 0; v < 2; v++) {
            size_t lo = 0, hi = 0;
            if (!ends(n, k, v, &lo, &hi)) continue;
            double gl = gap(est_of(n, k, lo), PAPER_ETA_LO), gh = gap(est_of(n, k, hi), PAPER_ETA_HI);
            double worst = fmax(fabs(gl), fabs(gh));
            if (isnan(best) || worst < best) { best = worst; best_k = k; best_v = v; }
            fprintf(f, "| %s | %s |", ws_est_name((ws_estimator)k), v ? "V100" : "every GPU");
            est_range(f, n, k, v);
            fputc(' ', f);
            job_name(f, n, lo);
            fputs(" | ", f);
            job_name(f, n, hi);
            fprintf(f, " | %s | %s | %s |\n", ws_tab(a, sizeof a, "%+.1f", gl),
                    ws_tab(b, sizeof b, "%+.1f", gh), p1(c, sizeof c, worst));
        }
    if (best_k >= 0)
        fprintf(f, "\nClosest to both ends: %s, %s (largest gap %s pp); %s estimator and set-up"
                " is within 0.5 pp at both ends.\n", ws_est_name((ws_estimator)best_k),
                best_v ? "V100 only" : "every GPU", p1(a, sizeof a, best),
                best <= 0.5 ? "an" : "no");

    /* what remains, per workload */
    fputs("\nWhat remains, per workload (over its GPUs):\n", f);
    for (size_t j = 0; j < n->n_est_jobs; j++) {
        size_t first = 0;
        while (strcmp(n->jobs[first].workload, n->jobs[j].workload)) first++;
        if (first != j) continue;
        double plo = NAN, phi = NAN, alo = NAN, ahi = NAN, dlo = NAN, dhi = NAN;
        double xs = 0, rs = 0, explore_pp = 0, rest_pp = 0;
        size_t m = 0, mp = 0;
        for (size_t i = j; i < n->n_est_jobs; i++) {
            const ws_paper_job *J = &n->jobs[i];
            if (strcmp(J->workload, n->jobs[j].workload)) continue;
            range(&plo, &phi, J->potential);
            range(&alo, &ahi, J->est[WS_EST_MEAN_TOTAL]);
            range(&dlo, &dhi, J->est[WS_EST_POST_EXPLORE]);
            xs += J->cost.explore_end;
            rs += (double)J->cost.R;
            explore_pp += J->est[WS_EST_POST_EXPLORE] - J->est[WS_EST_MEAN_TOTAL];
            if (!isnan(J->potential)) {
                rest_pp += J->potential - J->est[WS_EST_POST_EXPLORE];
                mp++;
            }
            m++;
        }
        char e[32], g[32], h[32], x[32], y[32], z[32];
        fputs("\n", f);
        ws_md_text(f, n->work_display[j]);
        fprintf(f, ": %s saves %s %%–%s %% of the total ETA (mean of per-seed savings) and"
                " %s %%–%s %% after exploration. Exploration (about the first %s of %s"
                " recurrences, mean over GPUs) costs %s pp on average: the difference of the"
                " two.", pol, p1(a, sizeof a, alo), p1(b, sizeof b, ahi),
                p1(c, sizeof c, dlo), p1(d, sizeof d, dhi), p1(e, sizeof e, xs / (double)m),
                ws_tab(g, sizeof g, "%.0f", rs / (double)m),
                p1(h, sizeof h, explore_pp / (double)m));
        if (mp)
            fprintf(f, " The potential is %s %%–%s %%; %s pp on average of it is not taken"
                    " after exploration: at η = %s zeus+jit minimises the cost, not the ETA the"
                    " potential ranks knobs by, and its Thompson sampling keeps trying every"
                    " batch size that survived pruning.", p1(x, sizeof x, plo),
                    p1(y, sizeof y, phi), p1(z, sizeof z, rest_pp / (double)mp), eta);
        fputc('\n', f);
    }

    /* where zeus's cost is above the default's */
    size_t above = 0, sig = 0;
    for (size_t j = 0; j < n->n_est_jobs; j++)
        if (n->jobs[j].cost.cost_z > n->jobs[j].cost.cost_d) {
            above++;
            sig += n->jobs[j].cost.saving_hi < 0;
        }
    fprintf(f, "\nCost (η · ETA + (1 − η) · MaxPower · TTA, the quantity Zeus minimises) of %s"
            " above the default's, at η = %s: %zu of %zu jobs (%zu with the 95 %% CI of the"
            " per-seed cost saving below 0).", pol, eta, above, n->n_est_jobs, sig);
    if (!above) { fputc('\n', f); return; }
    fputs(" Exploration's extra cost: its recurrences' cost minus the default's per-recurrence"
          " cost times their number (mean over seeds); saving per recurrence: the default's"
          " cost per recurrence minus zeus+jit's after exploration (ratio of sums); break-even:"
          " the recurrence from which the cumulative cost would be below the default's.\n\n"
          "| GPU | Workload | cost, zeus+jit (MJ) | cost, default (MJ) | cost saving (95 % CI)"
          " | ETA saving (total, mean) | exploration ends | exploration's extra cost (MJ) |"
          " saving per recurrence after (MJ) | break-even recurrence | recurrences R |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
    for (size_t j = 0; j < n->n_est_jobs; j++) {
        const ws_est_cost *C = &n->jobs[j].cost;
        if (!(C->cost_z > C->cost_d)) continue;
        char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32], s7[32], s8[32], s9[32];
        fputs("| ", f);
        ws_md_text(f, n->gpu_display[j]);
        fputs(" | ", f);
        ws_md_text(f, n->work_display[j]);
        fprintf(f, " | %s | %s | %s %% (%s, %s) | %s %% | %s | %s | %s | %s | %ld |\n",
                ws_tab(s1, sizeof s1, "%.1f", C->cost_z / 1e6),
                ws_tab(s2, sizeof s2, "%.1f", C->cost_d / 1e6),
                ws_tab(s3, sizeof s3, "%.2f", C->saving_pct),
                ws_tab(s4, sizeof s4, "%.2f", C->saving_lo),
                ws_tab(s5, sizeof s5, "%.2f", C->saving_hi),
                p1(s6, sizeof s6, n->jobs[j].est[WS_EST_MEAN_TOTAL]),
                p1(s7, sizeof s7, C->explore_end),
                ws_tab(s8, sizeof s8, "%.1f", C->explore_extra / 1e6),
                ws_tab(s9, sizeof s9, "%.3f", C->per_rec_saving / 1e6),
                isinf(C->break_even) ? "never" : ws_tab(a, sizeof a, "%.0f", C->break_even),
                C->R);
    }
    for (size_t j = 0; j < n->n_est_jobs; j++) {
        const ws_est_cost *C = &n->jobs[j].cost;
        if (!(C->cost_z > C->cost_d)) continue;
        char s1[32], s2[32], s3[32], s4[32];
        fputc('\n', f);
        job_name(f, n, j);
        fprintf(f, ": exploration (the first %s recurrences, mean over seeds) costs %s MJ %s than"
                " the default's over the same recurrences; ", p1(s1, sizeof s1, C->explore_end),
                ws_tab(s2, sizeof s2, "%.1f", fabs(C->explore_extra) / 1e6),
                C->explore_extra >= 0 ? "more" : "less");
        if (isnan(C->break_even))
            fputs("no recurrence follows it.\n", f);
        else if (isinf(C->break_even))
            fprintf(f, "afterwards %s saves nothing per recurrence (%s MJ), so it never repays"
                    " it.\n", pol, ws_tab(s3, sizeof s3, "%.3f", C->per_rec_saving / 1e6));
        else
            fprintf(f, "afterwards %s saves %s MJ per recurrence, which repays it by recurrence"
                    " %s: the job has %ld.\n", pol,
                    ws_tab(s3, sizeof s3, "%.3f", C->per_rec_saving / 1e6),
                    ws_tab(s4, sizeof s4, "%.0f", C->break_even), C->R);
    }
}

void ws_paper_write_md(FILE *f, const ws_paper_numbers *n)
{
    char m[1024], pol[256], eta[128], beta[128], w0[4 * WS_DISPLAY_MAX + 8],
        w1[4 * WS_DISPLAY_MAX + 8];
    md(n->policy, pol, sizeof pol);
    md(n->eta, eta, sizeof eta);
    md(n->beta, beta, sizeof beta);
    md(n->smallest[0], w0, sizeof w0);
    md(n->smallest[1], w1, sizeof w1);
    fputs("| Quantity | Paper (Zeus, NSDI'23) | wattsim | Metric and GPUs | Difference |\n"
          "|---|---:|---:|---|---|\n", f);
    if (n->have_potential) {
        row(f, "Energy-saving potential of the best knob (motivation)", PAPER_POT_LO,
            PAPER_POT_HI, n->pot_v100_lo, n->pot_v100_hi,
            "ETA of one run at the least-ETA knob vs the default knob (knob landscape, no"
            " exploration), V100, 6 workloads");
        row(f, "Energy-saving potential, every GPU", NAN, NAN, n->pot_all_lo, n->pot_all_hi,
            "as above, V100, A40, P100, RTX 6000");
    }
    if (n->have_savings) {
        snprintf(m, sizeof m, "%s vs default, total ETA over all recurrences (exploration"
                 " included), mean of per-seed savings over %zu seeds, η = %s, β = %s, %zu GPU ×"
                 " workload jobs", pol, n->seeds, eta, beta, n->n_jobs);
        if (!n->have_history) {
            row(f, "Energy saving of Zeus (abstract)", PAPER_ETA_LO, PAPER_ETA_HI, n->eta_lo,
                n->eta_hi, m);
            snprintf(m, sizeof m, "as above, V100 only");
            row(f, "Energy saving of Zeus, V100", PAPER_ETA_LO, PAPER_ETA_HI, n->eta_v100_lo,
                n->eta_v100_hi, m);
        }
    }
    if (n->have_steady && !n->have_history) {
        snprintf(m, sizeof m, "%s vs default, steady state (ETA per recurrence over the last"
                 " 10 %% of recurrences, ratio of sums over seeds), every GPU", pol);
        row(f, "Energy saving of Zeus, steady state", PAPER_ETA_LO, PAPER_ETA_HI, n->steady_lo,
            n->steady_hi, m);
    }
    if (n->have_savings) {
        snprintf(m, sizeof m, "%s vs default, total TTA (negative: slower), every GPU", pol);
        row(f, "Time saving of Zeus", NAN, NAN, n->tta_lo, n->tta_hi, m);
        if (n->smallest[1][0])
        {
            char a[32], b[32];
            fprintf(f, "| Smallest energy savings | – | %s (%s %%), %s (%s %%) | mean over"
                       " GPUs of the total-ETA saving vs default | computed |\n",
                    w0, ws_tab(a, sizeof a, "%.1f", ws_req(n->smallest_pct[0])),
                    w1, ws_tab(b, sizeof b, "%.1f", ws_req(n->smallest_pct[1])));
        }
    }
    fputs("\nThe paper's numbers come from its text: the motivation's 23.8 %–74.7 % energy"
          " saving potential on V100 and the abstract's 15.3 %–75.8 % better energy"
          " efficiency. wattsim replays the same public traces with the published simulator's"
          " random streams and arithmetic: for the same seed it gives that simulator's runs,"
          " run for run."
          " Differences are wattsim minus the paper, in percentage points.\n", f);
    if (n->have_history) {
        fputs("\nThe paper's evaluation text (which jobs, recurrences, seeds and estimator the"
              " abstract's 15.3 %–75.8 % counts) was not available to this reproduction: the"
              " tables below compare every estimator and set-up with it instead.\n", f);
        est_tables(f, n, pol, eta, beta);
    }
}
