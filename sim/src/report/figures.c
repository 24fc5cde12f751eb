/*
 * The paper's result figures from a sweep; see wattsim/figures.h.
 *
 * Each figure is data first: the CSV holds every number drawn (bar heights,
 * CI bounds, which cell) and the gnuplot script only reads it, so the tests
 * check the numbers and one gnuplot run checks the drawing. Names in
 * titles, keys and tick labels are the catalogue's display names, passed
 * through ws_plot_str (escaped); axis ranges are shared by every panel of a
 * figure so panels compare at a glance.
 */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/figures.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/csv.h"
#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/report.h"

#include "figures_util.h"

/* Seed i's savings (percent) of `pair` versus `ref` in a cell, when both
 * succeeded and the reference's numbers are positive. */
static int seed_saving(ws_sweep_cursor *ca, ws_sweep_cursor *cr, size_t a_at, size_t r_at,
                       double *e, double *t)
{
    const ws_sweep_sim *a = ws_sweep_sim_at(ca, a_at), *r = ws_sweep_sim_at(cr, r_at);
    if (a->failed || r->failed || !(r->energy_j > 0) || !(r->time_s > 0)) return 0;
    *e = 100.0 * (1.0 - a->energy_j / r->energy_j);
    *t = 100.0 * (1.0 - a->time_s / r->time_s);
    return 1;
}

/* ws_ci95 of the per-seed savings, in two passes over the simulations
 * (they may be in a file) rather than over arrays of n seeds: the same
 * additions in the same order, so the same bits. */
void ws_fig_saving_of(const ws_sweep *s, size_t pair, size_t ref, size_t gpu, size_t work,
                      size_t eta, size_t beta, ws_fig_saving *out)
{
    size_t n = s->n_seeds, k = 0;
    size_t a0 = ws_sweep_index(s, pair, gpu, work, eta, beta, 0);
    size_t r0 = ws_sweep_index(s, ref, gpu, work, eta, beta, 0);
    out->n = 0;
    out->energy.mean = out->energy.lo = out->energy.hi = NAN;
    out->time = out->energy;
    ws_sweep_cursor ca, cr;
    ws_sweep_cursor_init(&ca, s, n);
    ws_sweep_cursor_init(&cr, s, n);
    double se = 0, st = 0, e, t;
    for (size_t i = 0; i < n; i++)
        if (seed_saving(&ca, &cr, a0 + i, r0 + i, &e, &t)) { se += e; st += t; k++; }
    if (k) {
        double me = se / (double)k, mt = st / (double)k, sse = 0, sst = 0;
        for (size_t i = 0; k >= 2 && i < n; i++)
            if (seed_saving(&ca, &cr, a0 + i, r0 + i, &e, &t)) {
                sse += (e - me) * (e - me);
                sst += (t - mt) * (t - mt);
            }
        out->energy.mean = me;
        out->time.mean = mt;
        ws_ci95_bounds(me, sse, k, &out->energy.lo, &out->energy.hi);
        ws_ci95_bounds(mt, sst, k, &out->time.lo, &out->time.hi);
        if (k < 2) {
            out->energy.lo = out->energy.hi = out->energy.mean;
            out->time.lo = out->time.hi = out->time.mean;
        }
    }
    ws_sweep_cursor_free(&ca);
    ws_sweep_cursor_free(&cr);
    out->n = k;
}

size_t ws_fig_compared(const ws_sweep *s, size_t *subject, size_t *refs)
{
    size_t n = 0;
    *subject = SIZE_MAX;
    for (size_t p = 0; p < s->n_pairs && *subject == SIZE_MAX; p++)
        if (p != s->ref_default && p != s->ref_oracle) *subject = p;
    if (*subject == SIZE_MAX) return 0;
    refs[n++] = s->ref_default;
    for (size_t p = 0; p < s->n_pairs; p++)
        if (p != *subject && p != s->ref_default && p != s->ref_oracle) refs[n++] = p;
    return n;
}

static char *with_ext(const char *stem, const char *ext)
{
    size_t n = strlen(stem) + strlen(ext) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", stem, ext);
    return p;
}

int ws_fig_publish(const ws_fig_ctx *c, const char *stem, const char *title, ws_error *err)
{
    static const char *ext[] = {".png", ".svg", ".pdf"};
    char *img[3] = {0}, *gp = with_ext(stem, ".gp"), *csv = with_ext(stem, ".csv");
    int rc = -1;
    for (int k = 0; k < 3; k++) img[k] = with_ext(stem, ext[k]);
    if (!gp || !csv || !img[0] || !img[1] || !img[2]) { ws_fail(err, "out of memory"); goto out; }
    if (c->render && ws_plot_render(gp, (const char *const *)img, 3, err)) goto out;
    if (ws_manifest_add(csv, "table", title, c->command, err)) goto out;
    for (int k = 0; c->render && k < 3; k++)
        if (ws_manifest_add(img[k], "figure", title, c->command, err)) goto out;
    rc = 0;
out:
    for (int k = 0; k < 3; k++) free(img[k]);
    free(gp);
    free(csv);
    return rc;
}

int ws_fig_open_pair(const char *dir, const char *name, ws_outfile *od, ws_outfile *og,
                     char *stem, size_t n, ws_error *err)
{
    char path[4200];
    snprintf(stem, n, "%s/%s", dir, name);
    snprintf(path, sizeof path, "%s.csv", stem);
    if (ws_outfile_open(od, path, err)) return -1;
    snprintf(path, sizeof path, "%s.gp", stem);
    return ws_outfile_open(og, path, err);
}

int ws_fig_finish(const ws_fig_ctx *c, ws_outfile *od, ws_outfile *og, const char *stem,
                  const char *title, ws_error *err)
{
    int rc = ws_outfile_commit(od, err) || ws_outfile_commit(og, err)
                 ? -1 : ws_fig_publish(c, stem, title, err);
    ws_outfile_abort(od);
    ws_outfile_abort(og);
    return rc;
}

/* gnuplot variables NAME0..NAMEk-1 holding display names (escaped). */
static void name_vars(FILE *f, const char *var, char **names, size_t n, const ws_catalogue *cat,
                      int gpu)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s%zu = ", var, i);
        ws_plot_str(f, gpu ? ws_catalogue_gpu_display(cat, names[i])
                           : ws_catalogue_workload_display(cat, names[i]));
        fputc('\n', f);
    }
}

/* xtics at 0..n-1 labelled with the workloads' display names (two lines),
 * in the small font or smaller where a name is wider than its group of
 * bars (`width` points the plot, 90 % of a group for its name). */
static void workload_tics(FILE *f, const ws_sweep *s, const ws_catalogue *cat, double width)
{
    const char *names[64];
    size_t n = s->n_work < 64 ? s->n_work : 64;
    for (size_t w = 0; w < n; w++) names[w] = ws_catalogue_workload_display(cat, s->work[w]);
    double pt = ws_plot_fit_font(names, n, 0.9 * width / (double)(s->n_work ? s->n_work : 1),
                                 WS_PLOT_FONT_SMALL);
    fputs("set xtics (", f);
    for (size_t w = 0; w < s->n_work; w++) {
        fputs(w ? ", " : "", f);
        ws_plot_str_lines(f, ws_catalogue_workload_display(cat, s->work[w]));
        fprintf(f, " %zu", w);
    }
    fprintf(f, ") scale 0 font ',%.3g'\n", pt);
}

/* ------------------------------------------------------------ savings */

/* What the bars of the savings figure stand for: a bar per GPU when the
 * sweep has one η and one β; else a bar per η × β combination and a block
 * of rows per GPU. Their names and colours (the GPUs: the palette; η or β
 * alone: viridis along their order). */
typedef struct savings_series {
    int by_gpu;
    size_t n, blocks;
    char (*name)[64];
    char (*colour)[8];
} savings_series;

static int savings_series_of(const ws_sweep *s, const ws_catalogue *cat, savings_series *v)
{
    v->by_gpu = s->n_etas * s->n_betas == 1;
    v->n = v->by_gpu ? s->n_gpus : s->n_etas * s->n_betas;
    v->blocks = v->by_gpu ? 1 : s->n_gpus;
    v->name = calloc(v->n ? v->n : 1, sizeof *v->name);
    v->colour = calloc(v->n ? v->n : 1, sizeof *v->colour);
    if (!v->name || !v->colour) return -1;
    for (size_t i = 0; i < v->n; i++) {
        size_t e = v->by_gpu ? 0 : i / s->n_betas, b = v->by_gpu ? 0 : i % s->n_betas;
        char beta[32];
        if (isinf(s->betas[b])) snprintf(beta, sizeof beta, "∞");
        else snprintf(beta, sizeof beta, "%g", s->betas[b]);
        if (v->by_gpu)
            snprintf(v->name[i], sizeof v->name[i], "%s", ws_catalogue_gpu_display(cat, s->gpus[i]));
        else if (s->n_betas == 1) snprintf(v->name[i], sizeof v->name[i], "η = %g", s->etas[e]);
        else if (s->n_etas == 1) snprintf(v->name[i], sizeof v->name[i], "β = %s", beta);
        else snprintf(v->name[i], sizeof v->name[i], "η = %g, β = %s", s->etas[e], beta);
        int ordered = !v->by_gpu && (s->n_etas == 1 || s->n_betas == 1 || v->n > 8);
        if (ordered) ws_plot_viridis(v->n > 1 ? (double)i / (double)(v->n - 1) : 0, v->colour[i]);
        else snprintf(v->colour[i], sizeof v->colour[i], "%s", ws_plot_colour((int)i));
    }
    return 0;
}

static void savings_series_free(savings_series *v)
{
    free(v->name);
    free(v->colour);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether a panel (reference r, ETA m = 0 or TTA m = 1, GPU block k when
 * the bars are η or β values) has a bar whose mean lies beyond the axis
 * [lo, hi], as the script's cut() sees it. Its cut-bar clauses are written
 * only then: gnuplot 5.4 crashes (SIGSEGV) on a `with labels` clause none
 * of whose points is defined when the data file has a single row (a sweep
 * of one GPU and one workload, with the other panel cut). */
static int panel_has_cut(const ws_sweep *s, size_t subject, size_t ref, int m, int by_gpu, size_t k,
                         double lo, double hi)
{
    for (size_t g = 0; g < s->n_gpus; g++) {
        if (!by_gpu && g != k) continue;
        for (size_t w = 0; w < s->n_work; w++)
            for (size_t e = 0; e < s->n_etas; e++)
                for (size_t b = 0; b < s->n_betas; b++) {
                    ws_fig_saving v;
                    ws_fig_saving_of(s, subject, ref, g, w, e, b, &v);
                    const double y = m ? v.time.mean : v.energy.mean;
                    if (v.n && isfinite(y) && (y < lo || y > hi)) return 1;
                }
    }
    return 0;
}

int ws_fig_savings(const ws_fig_ctx *c, const ws_sweep *s, ws_error *err)
{
    size_t subject, *refs = calloc(s->n_pairs ? s->n_pairs : 1, sizeof *refs);
    if (!refs) return ws_fail(err, "out of memory");
    size_t n_refs = ws_fig_compared(s, &subject, refs);
    ws_outfile od = {0}, og = {0};
    savings_series ser = {0};
    char stem[4096];
    int rc = -1;
    if (!n_refs) { free(refs); return 0; }
    if (savings_series_of(s, c->cat, &ser)) { ws_fail(err, "out of memory"); goto out; }
    if (ws_fig_open_pair(c->dir, "savings", &od, &og, stem, sizeof stem, err)) goto out;
    FILE *f = od.f;
    fputs("policy,versus,gpu,workload,eta,beta,seeds,eta_saving_pct,eta_saving_lo,"
          "eta_saving_hi,tta_saving_pct,tta_saving_lo,tta_saving_hi,versus_index,gpu_index,"
          "workload_index,in_figure,eta_index,beta_index\n", f);
    double lo = 0, hi = 0;
    /* every bar drawn (two a row), for the clipped axis */
    size_t n_val = 0, n_mean = 0, cap = 2 * n_refs * s->n_gpus * s->n_work * s->n_etas * s->n_betas;
    double *means = malloc((cap ? cap : 1) * sizeof *means);    /* a bar's mean */
    double *vals = malloc((cap ? 3 * cap : 1) * sizeof *vals);  /* mean, lo, hi */
    if (!means || !vals) {
        free(means);
        free(vals);
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t r = 0; r < n_refs; r++)
        for (size_t g = 0; g < s->n_gpus; g++)
            for (size_t w = 0; w < s->n_work; w++)
                for (size_t e = 0; e < s->n_etas; e++)
                    for (size_t b = 0; b < s->n_betas; b++) {
                        ws_fig_saving v;
                        ws_fig_saving_of(s, subject, refs[r], g, w, e, b, &v);
                        /* labels may hold commas ({a=1,b=2}): RFC 4180 */
                        ws_csv_str(f, s->pairs[subject].label);
                        fputc(',', f);
                        ws_csv_str(f, s->pairs[refs[r]].label);
                        fputc(',', f);
                        ws_csv_str(f, s->gpus[g]);
                        fputc(',', f);
                        ws_csv_str(f, s->work[w]);
                        fputc(',', f);
                        ws_csv_num(f, ws_req(s->etas[e]));
                        fputc(',', f);
                        ws_csv_beta(f, s->betas[b]);
                        fprintf(f, ",%zu,", v.n);
                        const double x[6] = {v.energy.mean, v.energy.lo, v.energy.hi,
                                             v.time.mean, v.time.lo, v.time.hi};
                        for (int i = 0; i < 6; i++) {
                            ws_csv_num(f, x[i]);          /* empty when NAN */
                            fputc(',', f);
                        }
                        /* every row is drawn (in_figure: kept for the scripts
                         * that read it, from when only the first eta was) */
                        fprintf(f, "%zu,%zu,%zu,1,%zu,%zu\n", r, g, w, e, b);
                        if (v.n) {
                            lo = fmin(lo, fmin(v.energy.lo, v.time.lo));
                            hi = fmax(hi, fmax(v.energy.hi, v.time.hi));
                            /* a bar: its mean, and its CI's ends (the
                             * mean when the CI is not finite) */
                            for (int i = 0; i < 6; i += 3) {
                                if (!isfinite(x[i])) continue;
                                means[n_mean++] = x[i];
                                for (int k = 0; k < 3; k++)
                                    vals[n_val++] = isfinite(x[i + k]) ? x[i + k] : x[i];
                            }
                        }
                    }

    /* The figure: a row per reference and metric (and GPU, when the bars
     * are η or β values), a group of bars per workload, the 95 % CI as an
     * error bar. Geometry in points, from the top: the title, the key, then
     * each row's title and plot area; the workloads' names under the last. */
    /* A clipped axis when a few bars dwarf the rest (NCF at β = ∞ loses
     * 400 %, its CI reaching −600 %, where the others are within ±75 %):
     * the bars sorted by size, the largest quarter at most are outliers
     * when one of them is over 3 times the size of the next smaller (and
     * over 15 %); the axis then spans the other bars with their CIs (the
     * cut side at least 45 % of the other, room for a label), a cut bar
     * runs to the frame, broken by a white band, its value and CI written
     * beside it. */
    double clip_lo = lo, clip_hi = hi;
    int clipped = 0;
    if (n_mean >= 4) {      /* a quarter of fewer bars is not one bar */
        double *sorted = malloc(n_mean * sizeof *sorted);
        if (!sorted) {
            free(means);
            free(vals);
            ws_fail(err, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n_mean; i++) sorted[i] = fabs(means[i]);
        qsort(sorted, n_mean, sizeof *sorted, cmp_double);
        double keep = INFINITY;               /* bars up to this size are whole */
        for (size_t j = n_mean - 1; j >= 1 && j + n_mean / 4 >= n_mean - 1; j--)
            if (sorted[j] > 3 * fmax(sorted[j - 1], 5)) keep = sorted[j - 1];
        free(sorted);
        if (isfinite(keep)) {
            clip_lo = 0;
            clip_hi = 0;
            for (size_t i = 0; i < n_mean; i++)
                if (fabs(means[i]) <= keep)
                    for (int k = 0; k < 3; k++) {
                        clip_lo = fmin(clip_lo, vals[3 * i + (size_t)k]);
                        clip_hi = fmax(clip_hi, vals[3 * i + (size_t)k]);
                    }
            if (lo < clip_lo) clip_lo = fmin(clip_lo, -fmax(10, 0.45 * clip_hi));
            if (hi > clip_hi) clip_hi = fmax(clip_hi, fmax(10, -0.45 * clip_lo));
            clipped = lo < clip_lo || hi > clip_hi;
        }
    }
    free(means);
    free(vals);
    f = og.f;
    char title[512], fixed[128] = "", on[96] = "";
    if (s->n_gpus == 1)
        snprintf(on, sizeof on, " on %s", ws_catalogue_gpu_display(c->cat, s->gpus[0]));
    if (ser.by_gpu)
        snprintf(fixed, sizeof fixed, "η = %g, β = %g; ", s->etas[0], s->betas[0]);
    else if (s->n_etas == 1)
        snprintf(fixed, sizeof fixed, "η = %g; ", s->etas[0]);
    else if (s->n_betas == 1)
        snprintf(fixed, sizeof fixed, "β = %g; ", s->betas[0]);
    const char *dims = ser.by_gpu ? (s->n_gpus > 1 ? " and GPU" : "")
                       : s->n_betas == 1 ? " and η" : s->n_etas == 1 ? " and β" : ", η and β";
    snprintf(title, sizeof title, "Savings of %s%s per workload%s (%s95 %% CI over %zu seeds)",
             s->pairs[subject].label, on, dims, fixed, s->n_seeds);
    size_t rows = 2 * n_refs * ser.blocks;
    /* (lengths that hold text measured at 8 pt, scaled with the font:
     * a panel's title band, the key's lines, the workloads' names) */
    const double em = WS_PLOT_EM;
    const double wp = 72 * WS_PLOT_COL2, panel = 78 * WS_PLOT_GROW, band = 13 * em, gap = 5;
    /* the title, broken into lines where wider than the page */
    const double t_extra = 11 * em * (double)(ws_plot_wrap_count(title, WS_PLOT_FONT_TITLE,
                                                                 wp - 12) - 1);
    /* the key: as many entries a line as fit (gnuplot's own estimate of
     * an entry: its characters at 0.636 em of the base font, the sample,
     * gaps) */
    size_t chars = 1;
    for (size_t i = 0; i < ser.n; i++) {
        size_t k = 0;
        for (const char *p = ser.name[i]; *p; p++) k += (*p & 0xC0) != 0x80;
        if (k > chars) chars = k;
    }
    size_t per_line = (size_t)((wp - 40) / (5.09 * em * ((double)chars + 5)));
    if (per_line < 1) per_line = 1;
    if (per_line > ser.n) per_line = ser.n;
    /* gnuplot fills a key of several lines column by column (η = 0 above
     * 0.1, 0.2 beside it): the series are drawn in the order that makes it
     * read line by line, 0, 0.1, 0.2, ... across, which needs a grid whose
     * last line lacks one entry at most (else the columns come out short):
     * the most entries a line, up to per_line, that allow it. */
    while (per_line > 1) {
        size_t r = (ser.n + per_line - 1) / per_line;
        if (r * per_line - ser.n <= 1 || r == 1) break;
        per_line--;
    }
    size_t key_lines = ser.n > 1 ? (ser.n + per_line - 1) / per_line : 0;
    size_t key_rows = key_lines ? key_lines : 1;
    double top = 22 * em + t_extra + 10.5 * em * (double)key_lines,
           bottom = 3 + 6.9 * em + 2 * 8.8 * em;
    double hp = top + (double)rows * (band + panel) + (double)(rows - 1) * gap + bottom;
    ws_plot_axis ay;
    ws_plot_axis_opts oy = {panel, 1, WS_PLOT_FONT_PT, lo < 0 ? 5 : 0, 5, 0, 1};
    ws_plot_axis_linear(&ay, clipped ? clip_lo : lo, clipped ? clip_hi : hi, &oy);
    double left = 3 + ws_plot_left_room(&ay, WS_PLOT_FONT_PT), right = wp - 6;
    ws_plot_preamble(f, "savings.png", WS_PLOT_COL2, hp / 72, NULL);
    /* the axis' ends: a value beyond them is drawn to the frame (clip) */
    fprintf(f, "YLO = %.9g; YHI = %.9g\n"
               "clip(y) = y < YLO ? YLO : y > YHI ? YHI : y\n"
               "cut(y) = y < YLO || y > YHI\n"
               "num(y) = (y < 0 ? '−' : '').sprintf('%%.0f', abs(y))   # a cut bar's value\n"
               "set style textbox opaque noborder margins 1, 1\n", ay.lo, ay.hi);
    fputs("colours = '", f);
    for (size_t i = 0; i < ser.n; i++) fprintf(f, "%s%s", i ? " " : "", ser.colour[i]);
    fputs("'\n", f);
    for (size_t i = 0; i < ser.n; i++) {
        fprintf(f, "ser%zu = ", i);
        ws_plot_str(f, ser.name[i]);
        fputc('\n', f);
    }
    fprintf(f, "S = %zu\nbw = 0.8 / S\n", ser.n);
    /* the drawing order: the key's column-major j is series (j % rows) *
     * per_line + j / rows, which reads row by row */
    fputs("order = '", f);
    for (size_t j = 0; j < ser.n; j++)
        fprintf(f, "%s%zu", j ? " " : "", (j % key_rows) * per_line + j / key_rows);
    fputs("'\nG(k) = word(order, k) + 0\n", f);
    /* the bar a row stands for: its GPU, or its η × β combination */
    if (ser.by_gpu) fputs("series(x) = column(15)\n", f);
    else fprintf(f, "series(x) = column(18) * %zu + column(19)\n", s->n_betas);
    ws_plot_axis_write(f, "y", &ay, 0);
    fputs("set style fill solid 0.9 border lc rgb '#333333'\n"
          "set boxwidth bw * 0.92\n"
          "set grid noxtics ytics\n"
          "set xzeroaxis lt 1 lc rgb '#333333' lw 0.8\n", f);
    fprintf(f, "set xrange [-0.5:%g]\n", (double)s->n_work - 0.5);
    fputs("set multiplot title ", f);
    ws_plot_str_wrapped(f, title, WS_PLOT_FONT_TITLE, wp - 12);
    fprintf(f, " font ',%g'\n", WS_PLOT_FONT_TITLE);
    if (key_lines)
        fprintf(f, "set key at screen 0.5, screen %.5f center top horizontal maxcols %zu"
                   " Left reverse samplen 1.5 width 1 font ',%g'\n", (hp - 19 * em - t_extra) / hp,
                per_line, WS_PLOT_FONT_SMALL);
    else fputs("unset key\n", f);
    fputs("x(g) = $16 - 0.4 + (g + 0.5) * bw\n", f);
    for (size_t k = 0; k < ser.blocks; k++)
        for (size_t r = 0; r < n_refs; r++)
            for (int m = 0; m < 2; m++) {
                size_t row = (k * n_refs + r) * 2 + (size_t)m;
                double y1 = hp - top - (double)row * (band + panel + gap) - band;
                ws_plot_area(f, WS_PLOT_COL2, hp / 72, left, y1 - panel, right, y1);
                char t[256];
                snprintf(t, sizeof t, "%s saving versus %s%s%s", m ? "TTA" : "ETA",
                         s->pairs[refs[r]].label, ser.by_gpu || s->n_gpus == 1 ? "" : ", ",
                         ser.by_gpu || s->n_gpus == 1
                             ? "" : ws_catalogue_gpu_display(c->cat, s->gpus[k]));
                fputs("set title ", f);
                ws_plot_str(f, t);
                fprintf(f, " offset 0,-0.3 font ',%g'\n", WS_PLOT_FONT_SMALL);
                fprintf(f, "set ylabel '%s saving (%%)'\n", m ? "TTA" : "ETA");
                if (row + 1 < rows) fprintf(f, "set xtics 0,1,%zu format '' scale 0\n", s->n_work);
                else workload_tics(f, s, c->cat, right - left);
                int col = m ? 11 : 8;
                char blk[64] = "";
                if (!ser.by_gpu) snprintf(blk, sizeof blk, " && $15 == %zu", k);
                fprintf(f, "plot for [k=1:S] data skip 1 using ($14 == %zu%s && series(0) == G(k)"
                           " ? x(G(k)) : NaN):(clip($%d)) with boxes \\\n"
                           "       lc rgb word(colours, G(k) + 1) title value(sprintf('ser%%d', G(k))), \\\n"
                           "     for [g=0:S-1] data skip 1 using ($14 == %zu%s && series(0) == g"
                           " ? x(g) : NaN):(clip($%d)):(0):(clip($%d) - clip($%d)) with vectors nohead"
                           " lw 1 lc rgb '#222222' notitle",
                        r, blk, col, r, blk, col + 1, col + 2, col + 1);
                /* a cut bar's value and CI right of it, moved left where
                 * they would run past the frame (the last workload's bar,
                 * or a larger font; the widest such text, in x units) */
                char lxe[160];
                snprintf(lxe, sizeof lxe, "x(g) + bw * 0.6");
                if (clipped) {
                    double lw = ws_plot_text_width("CI −0000 to −0000", WS_PLOT_FONT_SMALL)
                                * (double)s->n_work / (right - left);
                    snprintf(lxe, sizeof lxe, "(x(g) + bw * 0.6 < %.6g ? x(g) + bw * 0.6 : %.6g)",
                             (double)s->n_work - 0.5 - lw, (double)s->n_work - 0.5 - lw);
                }
                if (clipped && panel_has_cut(s, subject, refs[r], m, ser.by_gpu, k, ay.lo, ay.hi))
                    /* the cut bars: a break, then the value and the CI */
                    fprintf(f, ", \\\n"
                               "     for [g=0:S-1] data skip 1 using ($14 == %zu%s && series(0) == g"
                               " && cut($%d) ? x(g) : NaN):(clip($%d) * 0.6):(bw * 0.5):"
                               "((YHI - YLO) * 0.03) with boxxyerror fs solid 1 noborder"
                               " lc rgb 'white' notitle, \\\n"
                               "     for [g=0:S-1] data skip 1 using ($14 == %zu%s && series(0) == g"
                               " && cut($%d) ? %s : NaN):(clip($%d) * 0.5):"
                               "(num($%d).' %% (cut)'.\"\\n\".'CI '.num($%d).' to '.num($%d))"
                               " with labels left boxed font ',%g' notitle",
                            r, blk, col, col, r, blk, col, lxe, col, col, col + 1, col + 2,
                            WS_PLOT_FONT_SMALL);
                fputc('\n', f);
                if (!row) fputs("unset key\n", f);
            }
    fputs("unset multiplot\n", f);
    rc = ws_fig_finish(c, &od, &og, stem, title, err);
out:
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    savings_series_free(&ser);
    free(refs);
    return rc;
}

/* --------------------------------------------------------------- beta */

int ws_fig_beta(const ws_fig_ctx *c, const ws_sweep *s, ws_error *err)
{
    size_t subject, *refs = calloc(s->n_pairs ? s->n_pairs : 1, sizeof *refs);
    if (!refs) return ws_fail(err, "out of memory");
    size_t n_refs = ws_fig_compared(s, &subject, refs);
    free(refs);
    if (!n_refs || s->n_betas < 2) return 0;
    for (size_t g = 0; g < s->n_gpus; g++) {
        ws_outfile od = {0}, og = {0};
        char stem[4096], name[512];
        snprintf(name, sizeof name, "beta-%s", s->gpus[g]);
        int rc = -1;
        if (ws_fig_open_pair(c->dir, name, &od, &og, stem, sizeof stem, err)) goto next;
        FILE *f = od.f;
        fputs("policy,gpu,workload,eta,beta,seeds,eta_pct_of_default,eta_lo,eta_hi,"
              "tta_pct_of_default,tta_lo,tta_hi,workload_index,beta_index\n", f);
        double lo = INFINITY, hi = -INFINITY;
        for (size_t w = 0; w < s->n_work; w++)
            for (size_t b = 0; b < s->n_betas; b++) {
                ws_sweep_summary o, d;
                ws_sweep_summarise(s, ws_sweep_index(s, subject, g, w, 0, b, 0) / s->n_seeds, &o);
                ws_sweep_summarise(s, ws_sweep_index(s, s->ref_default, g, w, 0, b, 0) / s->n_seeds,
                                   &d);
                double ke = 100.0 / d.energy.mean, kt = 100.0 / d.time.mean;
                double x[6] = {o.energy.mean * ke, o.energy.lo * ke, o.energy.hi * ke,
                               o.time.mean * kt, o.time.lo * kt, o.time.hi * kt};
                if (!o.seeds_ok || !d.seeds_ok) for (int i = 0; i < 6; i++) x[i] = NAN;
                for (int i = 1; i < 6; i += i == 2 ? 2 : 1)     /* one seed: no interval */
                    if (!isfinite(x[i])) x[i] = x[i < 3 ? 0 : 3];
                ws_csv_str(f, s->pairs[subject].label);     /* RFC 4180 */
                fputc(',', f);
                ws_csv_str(f, s->gpus[g]);
                fputc(',', f);
                ws_csv_str(f, s->work[w]);
                fputc(',', f);
                ws_csv_num(f, ws_req(s->etas[0]));
                fputc(',', f);
                ws_csv_beta(f, s->betas[b]);
                fprintf(f, ",%zu,", o.seeds_ok);
                for (int i = 0; i < 6; i++) {
                    ws_csv_num(f, x[i]);
                    fputc(',', f);
                    if (isfinite(x[i])) { lo = fmin(lo, x[i]); hi = fmax(hi, x[i]); }
                }
                fprintf(f, "%zu,%zu\n", w, b);
            }
        f = og.f;
        char title[512];
        snprintf(title, sizeof title, "%s, %s: total ETA and TTA versus β (η = %g; 95 %% CI over"
                 " %zu seeds)", s->pairs[subject].label,
                 ws_catalogue_gpu_display(c->cat, s->gpus[g]), s->etas[0], s->n_seeds);
        size_t cols = s->n_work < 3 ? s->n_work : 3, rows = (s->n_work + cols - 1) / cols;
        /* margins and the gaps between rows hold text: measured at 8 pt,
         * scaled with the font */
        const double em = WS_PLOT_EM;
        const double t_in = 11 * em / 72 * (double)(ws_plot_wrap_count(title, WS_PLOT_FONT_TITLE,
                                                                       72 * WS_PLOT_COL2 - 12) - 1);
        double h = 0.7 * em + t_in + 1.75 * WS_PLOT_GROW * (double)rows;
        char img[600];
        snprintf(img, sizeof img, "%s.png", name);
        ws_plot_preamble(f, img, WS_PLOT_COL2, h, NULL);
        name_vars(f, "work", s->work, s->n_work, c->cat, 0);
        fputs("set xtics (", f);
        for (size_t b = 0; b < s->n_betas; b++)
            if (isinf(s->betas[b])) fprintf(f, "%s'∞' %zu", b ? ", " : "", b);
            else fprintf(f, "%s'%g' %zu", b ? ", " : "", s->betas[b], b);
        fprintf(f, ") scale 0.5\nset xrange [-0.4:%g]\n", (double)s->n_betas - 0.6);
        if (!(lo > 0) || !isfinite(hi)) { lo = 10; hi = 100; }
        /* log axis shared by every panel: ratios, and one job's no-early-
         * stopping total can be several times the others' */
        fprintf(f, "set logscale y\nset yrange [%.4g:%.4g]   # shared by every panel\n",
                lo / 1.15, hi * 1.15);
        static const double yt[] = {5, 10, 20, 25, 50, 100, 200, 400, 800, 1600, 3200};
        for (int labelled = 0; labelled < 2; labelled++) {
            /* the left column's tics are labelled, the others' not */
            fprintf(f, "%s = \"(", labelled ? "YT" : "YTN");
            for (size_t i = 0, k = 0; i < sizeof yt / sizeof *yt; i++)
                if (yt[i] >= lo / 1.15 && yt[i] <= hi * 1.15 && (hi / lo < 8 || yt[i] != 20))
                {
                    char lab[32] = "";
                    if (labelled) snprintf(lab, sizeof lab, "%g", yt[i]);
                    fprintf(f, "%s'%s' %g", k++ ? ", " : "", lab, yt[i]);
                }
            fputs(")\"\n", f);
        }
        fputs("set mytics 1\n", f);
        fprintf(f, "set multiplot layout %zu,%zu title ", rows, cols);
        ws_plot_str_wrapped(f, title, WS_PLOT_FONT_TITLE, 72 * WS_PLOT_COL2 - 12);
        fprintf(f, " font ',%g' margins %.3g,0.99,%.3f,%.3f spacing 0.05,%.3g\n",
                WS_PLOT_FONT_TITLE, 0.09 * em, 0.62 * em / h, 1.0 - (0.55 * em + t_in) / h,
                0.16 * (0.7 + 1.75 * (double)rows) * em / h);
        /* the x label under each bottom panel, shorter where it would be
         * wider than the panel (a large font) */
        const char *xl = "β (early-stopping factor)";
        if (ws_plot_text_width(xl, WS_PLOT_FONT_PT)
            > 0.9 * 72 * WS_PLOT_COL2 * (0.9 - 0.09 * em) / (double)cols)
            xl = "β";
        fprintf(f, "set key inside left top vertical Left reverse samplen 1.5 font ',%g'\n",
                WS_PLOT_FONT_SMALL);
        for (size_t w = 0; w < s->n_work; w++) {
            fprintf(f, "set title work%zu font ',%g' offset 0,-0.6\n", w, WS_PLOT_FONT_PT);
            fprintf(f, "set ylabel '%s'\nset ytics @%s\n", w % cols ? "" : "% of default",
                    w % cols ? "YTN" : "YT");
            fprintf(f, "set xlabel '%s'\n", w + cols >= s->n_work ? xl : "");
            fprintf(f, "plot data skip 1 using ($13 == %zu ? $14 - 0.06 : NaN):7:8:9 with yerrorlines"
                       " pt 7 ps 0.7 lw 1.2 lc rgb '%s' title 'total ETA', \\\n"
                       "     data skip 1 using ($13 == %zu ? $14 + 0.06 : NaN):10:11:12 with yerrorlines"
                       " pt 5 ps 0.6 lw 1.2 dt 2 lc rgb '%s' title 'total TTA'\n",
                    w, ws_plot_colour(0), w, ws_plot_colour(1));
            if (!w) fputs("unset key\n", f);
        }
        fputs("unset multiplot\n", f);
        rc = ws_fig_finish(c, &od, &og, stem, title, err);
    next:
        ws_outfile_abort(&od);
        ws_outfile_abort(&og);
        if (rc) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- curves */

int ws_fig_curves(const ws_fig_ctx *c, const ws_sweep *s, size_t g, size_t w, size_t e,
                  size_t b, ws_error *err)
{
    char name[512], stem[4096];
    snprintf(name, sizeof name, "curves-%s-%s-eta%g-beta%g", s->gpus[g], s->work[w], s->etas[e],
             s->betas[b]);
    ws_outfile od = {0}, og = {0};
    int rc = -1;
    size_t n = s->n_seeds;
    double *cum = calloc(2 * n, sizeof *cum), *oc = calloc(2 * n, sizeof *oc);
    char *drawn = calloc(s->n_pairs, 1);       /* pairs with a curve */
    ws_sweep_cursor cur;
    ws_sweep_cursor_init(&cur, s, n);
    if (!cum || !oc || !drawn) { ws_fail(err, "out of memory"); goto out; }
    /* Unit from the largest cumulative cost (the default policy's, mostly).
     * A failed simulation's numbers are zero: they do not count. */
    double max_c = 0, max_r = 0, min_r = 0;
    long max_rec = 1;
    for (size_t p = 0; p < s->n_pairs; p++)
        for (size_t i = 0; i < n; i++)
            max_c = fmax(max_c, ws_sweep_sim_at(&cur, ws_sweep_index(s, p, g, w, e, b, i))->cost);
    ws_unit uc = ws_unit_energy(max_c);
    if (ws_fig_open_pair(c->dir, name, &od, &og, stem, sizeof stem, err)) goto out;
    FILE *f = od.f;
    /* One block per policy (gnuplot `index`). A policy whose every seed
     * failed has no curve: no block (an empty block would make gnuplot
     * complain) and no entry in the key. */
    size_t blk = 0, oracle_blk = SIZE_MAX;
    for (size_t p = 0; p < s->n_pairs; p++) {
        size_t base = ws_sweep_index(s, p, g, w, e, b, 0);
        size_t oref = ws_sweep_index(s, s->ref_oracle, g, w, e, b, 0);
        int any = 0;
        for (size_t i = 0; i < n; i++) any |= !ws_sweep_sim_at(&cur, base + i)->failed;
        if (!any) continue;
        drawn[p] = 1;
        if (p == s->ref_oracle) oracle_blk = blk;
        fprintf(f, "%s# block %zu: %s; recurrence,cum_cost_%s,lo,hi,regret_%s,lo,hi\n",
                blk ? "\n\n" : "", blk, s->pairs[p].label, uc.name, uc.name);
        blk++;
        memset(cum, 0, n * sizeof *cum);
        memset(oc, 0, n * sizeof *oc);
        long n_rec = ws_sweep_recurrences(s, base);
        if (n_rec > max_rec) max_rec = n_rec;
        for (long r = 0; r < n_rec; r++) {
            ws_stat a, d;
            ws_sweep_curve_step(s, base, oref, r, cum, oc, &a, &d);
            if (isnan(a.mean)) continue;             /* every seed failed */
            if (!isfinite(a.lo)) a.lo = a.hi = a.mean;
            if (!isfinite(d.lo)) d.lo = d.hi = d.mean;
            if (isfinite(d.hi)) max_r = fmax(max_r, d.hi / uc.div);
            if (isfinite(d.lo)) min_r = fmin(min_r, d.lo / uc.div);
            /* regret (d) is undefined where oracle failed: an empty field */
            const double x[6] = {a.mean / uc.div, a.lo / uc.div, a.hi / uc.div,
                                 d.mean / uc.div, d.lo / uc.div, d.hi / uc.div};
            fprintf(f, "%ld,", r + 1);
            ws_csv_nums(f, 3, x, 1);
            fputc(',', f);
            ws_csv_nums(f, 3, x + 3, 0);
            fputc('\n', f);
        }
    }
    f = og.f;
    char title[512], subj[256];
    ws_plot_subject(subj, sizeof subj, c->cat, s->gpus[g], s->work[w]);
    snprintf(title, sizeof title, "%s (η = %g, β = %g): learning curves, mean and 95 %% CI over"
             " %zu seeds", subj, s->etas[e], s->betas[b], n);
    /* One column wide: two panels on one recurrence axis, the key under
     * them. Costs are η·ETA + (1 − η)·MaxPower·TTA: energy-equivalent
     * joules, not energy. Geometry in points from the lower left. */
    const double w_in = WS_PLOT_COL1, h_in = 4.0 * WS_PLOT_GROW, wp = 72 * w_in, hp = 72 * h_in;
    size_t nb = 0, blocks[64], pairs_of[64];
    for (size_t p = 0; p < s->n_pairs && nb < 64; p++)
        if (drawn[p]) { pairs_of[nb] = p; blocks[nb] = nb; nb++; }
    /* each pair's look from all the sweep's pairs, as in its other figures */
    const char *labels[64];
    ws_plot_look looks[64];
    size_t n_lab = s->n_pairs < 64 ? s->n_pairs : 64;
    for (size_t p = 0; p < n_lab; p++) labels[p] = s->pairs[p].label;
    ws_plot_policy_looks(labels, n_lab, looks);
    /* the title's two lines and the key's, measured at 8 pt, scale with
     * the font */
    const double em = WS_PLOT_EM, key_line = 10 * em;
    /* the bands, then the pairs two a line, or one where two would be
     * wider than the page (gnuplot's estimate of an entry: its characters
     * at 0.636 em of the base font, the sample, gaps) */
    size_t chars = 1;
    for (size_t i = 0; i < nb; i++) {
        size_t k = 0;
        for (const char *q = s->pairs[pairs_of[i]].label; *q; q++) k += (*q & 0xC0) != 0x80;
        if (k > chars) chars = k;
    }
    /* (at 8 pt and below, two a line as before the style had a size) */
    const int two_a_line = em <= 1 || 2 * 5.09 * em * ((double)chars + 5) <= wp - 10;
    size_t key_lines = 1 + (two_a_line ? (nb + 1) / 2 : nb);
    /* the title's lines: the subject, then η and β, each broken again
     * where wider than the page */
    char head[400];
    int hl = snprintf(head, sizeof head, "η = %g, β = %g", s->etas[e], s->betas[b]);
    const ws_job_table *jt = s->jobs ? &s->jobs[g * s->n_work + w] : NULL;
    for (size_t k = 0; jt && k < jt->n_phases; k++)
        if (hl > 0 && (size_t)hl < sizeof head)
            hl += snprintf(head + hl, sizeof head - (size_t)hl, "%s%ld", k ? ", " :
                           jt->n_phases > 1 ? "; drift at recurrences " : "; drift at recurrence ",
                           jt->phase_from[k]);
    const double t_extra = 11 * em * (double)(ws_plot_wrap_count(subj, WS_PLOT_FONT_TITLE, wp - 12)
                                              + ws_plot_wrap_count(head, WS_PLOT_FONT_TITLE,
                                                                   wp - 12) - 2);
    double top = hp - 28 * em - 6 * fmax(em - 1, 0) - t_extra, bottom = 3 + key_line * (double)key_lines + 4
                                   + ws_plot_bottom_room(WS_PLOT_FONT_PT, WS_PLOT_FONT_PT);
    /* between the panels room for half a tick label of each: the lower
     * panel's top tick and the upper one's 0 may both sit at the edge */
    const double gap = WS_PLOT_FONT_PT + 4;
    double ph = (top - bottom - gap) / 2;
    ws_plot_axis ax, ay[2];
    ws_plot_axis_opts ocost = {ph, 1, WS_PLOT_FONT_PT, 0, 5, 0, 1};
    ws_plot_axis_linear(&ay[0], 0, max_c / uc.div, &ocost);
    /* regret: the oracle's zero line off the frame */
    ws_plot_axis_opts orr = {ph, 1, WS_PLOT_FONT_PT, 4, 5, 0, 1};
    ws_plot_axis_linear(&ay[1], min_r, max_r > 0 ? max_r : 1, &orr);
    /* gnuplot sets a two-line y label's first line where a one-line label
     * would go, the second towards the axis: moved out by a line (1.9
     * characters of 0.636 em) */
    double two_lines = 2 * 1.17 * WS_PLOT_FONT_PT + 3 + 12 * (em - 1);
    double left = 3 + fmax(ws_plot_left_room(&ay[0], 0), ws_plot_left_room(&ay[1], 0)) + two_lines;
    ws_plot_axis_opts ox = {wp - 8 - left, 0, WS_PLOT_FONT_PT, 0, 0, 0, 0};
    ws_plot_axis_linear(&ax, 1, (double)(max_rec > 1 ? max_rec : 2), &ox);
    ax.lo = 1;                                        /* exactly the recurrences */
    ax.hi = (double)(max_rec > 1 ? max_rec : 2);
    size_t inside = 0;
    for (size_t i = 0; i < ax.n; i++) inside += ax.tick[i] >= ax.lo && ax.tick[i] <= ax.hi;
    if (inside < 3) {       /* a large font: from 0 (nothing spent yet), labelled */
        ws_plot_axis_linear(&ax, 0, ax.hi, &ox);
        ax.lo = 0;
        ax.hi = (double)(max_rec > 1 ? max_rec : 2);
    }
    char file[600];
    snprintf(file, sizeof file, "%s.png", name);
    ws_plot_preamble(f, file, w_in, h_in, NULL);
    fputc('\n', f);
    for (size_t i = 0; i < nb; i++) {
        fprintf(f, "pol%zu = ", i);
        ws_plot_str(f, s->pairs[pairs_of[i]].label);
        fputc('\n', f);
    }
    /* the subject and, on a second line, η and β (head, above); a
     * drifting workload (docs/model.md, "Data drift"): each phase's first
     * recurrence, dotted in both panels and named in the title */
    for (size_t k = 0; jt && k < jt->n_phases; k++) {
        fprintf(f, "set arrow from %.1f, graph 0 to %.1f, graph 1 nohead dt 3 lw 1"
                   " lc rgb '#606060' back\n",
                (double)jt->phase_from[k] - 0.5, (double)jt->phase_from[k] - 0.5);
    }
    fputs("set multiplot title ", f);
    ws_plot_str_wrapped(f, subj, WS_PLOT_FONT_TITLE, wp - 12);
    fputs(".\"\\n\".", f);
    ws_plot_str_wrapped(f, head, WS_PLOT_FONT_TITLE, wp - 12);
    fprintf(f, " font ',%g'\n", WS_PLOT_FONT_TITLE);
    fprintf(f, "set key at screen 0.5, screen %.5f center top vertical maxrows %zu Left reverse"
               " samplen 2 width 1 font ',%g' title 'Bands: 95 %% CI over %zu seeds' font ',%g'\n",
            (3 + key_line * (double)key_lines) / hp, key_lines - 1, WS_PLOT_FONT_SMALL, n,
            WS_PLOT_FONT_SMALL);
    fputs("set style fill transparent solid 0.4 border\n", f);
    for (int panel = 0; panel < 2; panel++) {
        double y1 = top - (double)panel * (ph + gap);
        ws_plot_area(f, w_in, h_in, left, y1 - ph, wp - 8, y1);
        ws_plot_axis_write(f, "y", &ay[panel], 0);
        /* two lines: "(MJ-equivalent)" under the quantity */
        char yl[96];
        snprintf(yl, sizeof yl, "%s / (%s-equivalent)",
                 panel ? "Regret vs oracle" : "Cumulative cost", uc.name);
        fputs("set ylabel ", f);
        ws_plot_str_lines(f, yl);
        fputs(" offset -1.9,0\n", f);
        if (panel) {
            ws_plot_axis_write(f, "x", &ax, 0);
            fputs("set xlabel 'Recurrence'\nunset key\n", f);
        } else {
            ws_plot_axis_write_unlabelled(f, "x", &ax);
            fputs("unset xlabel\n", f);
        }
        int mean = panel ? 5 : 2;
        const char *sep = "";
        fputs("plot ", f);
        for (int pass = 0; pass < 2; pass++)        /* bands, then lines */
            for (size_t k = 0; k <= nb; k++) {
                /* oracle at the end */
                size_t i = k < nb ? k : oracle_blk;
                if (i == SIZE_MAX || (k < nb && i == oracle_blk)) continue;
                int orc = i == oracle_blk;
                char colour[16];
                snprintf(colour, sizeof colour, "%s", looks[pairs_of[i]].colour);
                if (!pass)
                    fprintf(f, "data index %zu using 1:%d:%d with filledcurves lc rgb '%s' notitle, ",
                            blocks[i], mean + 1, mean + 2, colour);
                else
                    fprintf(f, "%s\\\n     data index %zu using 1:%d with lines lw %s dt %d lc rgb '%s'"
                               " title pol%zu", sep, blocks[i], mean, orc ? "1.8" : "1.5",
                            orc ? 2 : 1, colour, i);
                if (pass) sep = ",";
            }
        fputs("\n", f);
    }
    fputs("unset multiplot\n", f);
    rc = ws_fig_finish(c, &od, &og, stem, title, err);
out:
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    free(cum);
    free(oc);
    free(drawn);
    ws_sweep_cursor_free(&cur);
    return rc;
}
