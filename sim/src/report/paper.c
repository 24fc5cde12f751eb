/*
 * paper.md: the reproduction beside the Zeus paper's published numbers;
 * see wattsim/paper.h. Every number is read back from the CSVs the figures
 * are drawn from, so the table and the figures cannot disagree.
 */
#define _GNU_SOURCE   /* O_DIRECTORY, O_CLOEXEC */
#include "wattsim/paper.h"
#include "wattsim/report.h"

#include <errno.h>
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
        row(f, "Energy saving of Zeus (abstract)", PAPER_ETA_LO, PAPER_ETA_HI, n->eta_lo,
            n->eta_hi, m);
        snprintf(m, sizeof m, "as above, V100 only");
        row(f, "Energy saving of Zeus, V100", PAPER_ETA_LO, PAPER_ETA_HI, n->eta_v100_lo,
            n->eta_v100_hi, m);
    }
    if (n->have_steady) {
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
}
