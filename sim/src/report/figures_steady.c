/*
 * The steady-state figure of a sweep (see wattsim/figures.h): where each
 * policy's steady state sits relative to the TTA/ETA Pareto frontier,
 * zoomed on the frontier with an overview panel; with several etas, the
 * first pair's steady state at each eta, joined in eta order and labelled
 * (labels placed clear of the data by labels.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/figures.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wattsim/outfile.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/report.h"

#include "figures_util.h"
#include "labels.h"

/* ------------------------------------------------------------- steady */

/* Marker style per policy pair in the steady-state figure, in the pair's
 * look (ws_plot_policy_looks: the same colour and shape as in every other
 * figure): oracle a large open circle (it sits on the least-cost knob,
 * others often on top of it), default an open square, the rest their
 * filled shapes, each a size smaller than the one before (`later` filled
 * ones follow, `step` apart): policies that settle on the same knob are
 * drawn one inside the other, all visible, rather than the last hiding the
 * others. The sizes stay within ps 1..2.2, the oracle's circle, whatever
 * the number of pairs: the key's line height is made for that. */
static void pair_style(const ws_sweep *s, size_t p, const ws_plot_look *look, size_t later,
                       double step, char *buf, size_t n)
{
    if (p == s->ref_oracle)
        snprintf(buf, n, "pt 6 ps 2.2 lw 1.5 lc rgb '%s'", look->colour);
    else if (p == s->ref_default)
        snprintf(buf, n, "pt 4 ps 1.6 lw 1.5 lc rgb '%s'", look->colour);
    else
        snprintf(buf, n, "pt %d ps %.2g lw 1 lc rgb '%s'", look->pt, 1.0 + step * (double)later,
                 look->colour);
}

/* One steady state drawn in a steady-state figure, in plotted units (the
 * figure's time and energy units), and where its label goes. */
typedef struct steady_row {
    size_t series, e;
    double v[6];                      /* tta, eta, tta_lo, tta_hi, eta_lo, eta_hi */
    int subject, zoomed;
    char label[48];                   /* "η=0.4", "η=0.5–1"; "" for none */
    double lx, ly;                    /* label's left-middle anchor */
    int lead;                         /* a leader line from the point ... */
    double ex, ey;                    /* ... to here, the label's nearest edge */
} steady_row;

/* A subject's marker is 7 pt across (pt 7 ps 1). Consecutive etas whose
 * markers are closer on the page than NEAR (centre to centre: they
 * overlap, or nearly, and so do their error bars) share a label: labels
 * of their own could not be told apart (on ShuffleNet/CIFAR-100, eta 0.3
 * to 1 settle within 20 pt of each other, 0.6 to 1 within 5 pt). A group
 * spans at most SPAN each way, so that a chain of near markers does not
 * become one label across the panel. */
#define STEADY_MARKER 7.0
#define STEADY_NEAR (1.75 * STEADY_MARKER)
#define STEADY_SPAN (3 * STEADY_NEAR)

/* The least-cost knob of one eta, in plotted units; tta NAN: none. */
typedef struct least_knob {
    double tta, eta;
    int bs, pl;
} least_knob;

/* The zoomed panel on the page: its data range r, points per data unit
 * sx, sy and its size w x h in points (ws_plot_zoomfig). */
typedef struct steady_page {
    double r[4], sx, sy, w, h;
} steady_page;

static steady_page steady_scale(const ws_plot_zoomfig *z)
{
    steady_page g = {{z->zx.lo, z->zx.hi, z->zy.lo, z->zy.hi}, 0, 0, z->zr - z->zl, z->zt - z->zb};
    g.sx = g.w / (g.r[1] - g.r[0]);
    g.sy = g.h / (g.r[3] - g.r[2]);
    return g;
}

/* The subject's steady states are in eta order. Consecutive etas whose
 * points are near on the page (above; equal means are distance 0) share
 * one label, "η=0.5–1", on the group's first point; with more than six
 * groups, every other one and the last are labelled. */
static void label_etas(steady_row *rows, size_t n, const double *etas, const steady_page *pg)
{
    const double *r = pg->r, sx = pg->sx, sy = pg->sy;
    size_t n_groups = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0, g = 0; i < n; i++) {
            if (!rows[i].subject) continue;
            size_t j = i;
            double x0 = (rows[i].v[0] - r[0]) * sx, y0 = (rows[i].v[1] - r[2]) * sy;
            double lo_x = x0, hi_x = x0, lo_y = y0, hi_y = y0;
            while (j + 1 < n && rows[j + 1].subject) {
                const double *a = rows[j].v, *b = rows[j + 1].v;
                double bx = (b[0] - r[0]) * sx, by = (b[1] - r[2]) * sy;
                double d = hypot((b[0] - a[0]) * sx, (b[1] - a[1]) * sy);
                if (!(d <= STEADY_NEAR) || fmax(hi_x, bx) - fmin(lo_x, bx) > STEADY_SPAN
                    || fmax(hi_y, by) - fmin(lo_y, by) > STEADY_SPAN)
                    break;
                lo_x = fmin(lo_x, bx), hi_x = fmax(hi_x, bx);
                lo_y = fmin(lo_y, by), hi_y = fmax(hi_y, by);
                j++;
            }
            if (!pass) n_groups++;
            else if (n_groups <= 6 || g % 2 == 0 || g == n_groups - 1) {
                if (j > i)
                    snprintf(rows[i].label, sizeof rows[i].label, "η=%g–%g", etas[rows[i].e],
                             etas[rows[j].e]);
                else snprintf(rows[i].label, sizeof rows[i].label, "η=%g", etas[rows[i].e]);
            }
            g++;
            i = j;
        }
}

/* Place the eta labels (ws_labels_place) clear of the other labels, the
 * steady states and their error bars, the line through them, the frontier,
 * the least-cost knobs' diamonds and the knobs, in the zoomed panel's page
 * coordinates (steady_scale); rows
 * that are not labelled keep lx = ly = 0. Out of memory, labels go on
 * their points. */
static void place_labels(steady_row *rows, size_t n, const steady_page *g, const ws_pareto *par,
                         ws_unit ut, ws_unit ue, const least_knob *least, size_t n_least)
{
    const double *r = g->r, sx = g->sx, sy = g->sy;
    size_t nk = (size_t)par->n, n_seg = 0, n_lab = 0, n_bg = 0, n_mk = 0;
    double *buf = malloc((8 * n + 2 * nk + 2 * n_least + 1) * sizeof *buf);
    double(*seg)[4] = malloc((3 * n + nk + 1) * sizeof *seg);
    size_t *which = malloc((n + 1) * sizeof *which);
    if (!buf || !seg || !which) {
        for (size_t i = 0; i < n; i++) rows[i].lx = rows[i].v[0], rows[i].ly = rows[i].v[1];
        goto out;
    }
    double *mx = buf, *my = mx + n + n_least, *x = my + n + n_least, *y = x + n, *wd = y + n,
           *ht = wd + n, *lx = ht + n, *ly = lx + n, *bx = ly + n, *by = bx + nk;
    const steady_row *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const double *v = rows[i].v;
        if (!rows[i].zoomed) continue;
        double px = (v[0] - r[0]) * sx, py = (v[1] - r[2]) * sy;
        mx[n_mk] = px;
        my[n_mk++] = py;
        double eb[3][4] = {{(v[2] - r[0]) * sx, py, (v[3] - r[0]) * sx, py},
                           {px, (v[4] - r[2]) * sy, px, (v[5] - r[2]) * sy},
                           {0, 0, px, py}};
        int k_end = 2;
        if (prev && prev->subject && rows[i].subject) {     /* the line through the etas */
            eb[2][0] = (prev->v[0] - r[0]) * sx;
            eb[2][1] = (prev->v[1] - r[2]) * sy;
            k_end = 3;
        }
        for (int k = 0; k < k_end; k++) memcpy(seg[n_seg++], eb[k], sizeof eb[k]);
        prev = &rows[i];
        if (!rows[i].label[0]) continue;
        /* "η=0.4" at 7 pt: measured 29 x 10 pt on the PNG, 0.82 em a
         * character and 1.4 em a line, at the small font's size */
        int len = 0;
        for (const char *c = rows[i].label; *c; c++) len += (*c & 0xC0) != 0x80;
        x[n_lab] = px;
        y[n_lab] = py;
        wd[n_lab] = 0.82 * WS_PLOT_FONT_SMALL * len;
        ht[n_lab] = 1.4 * WS_PLOT_FONT_SMALL;
        which[n_lab++] = i;
    }
    for (int q = 0; q + 1 < par->n_frontier; q++) {
        const ws_knob_stat *a = &par->knobs[par->frontier[q]], *b = &par->knobs[par->frontier[q + 1]];
        double l[4] = {(a->tta / ut.div - r[0]) * sx, (a->eta / ue.div - r[2]) * sy,
                       (b->tta / ut.div - r[0]) * sx, (b->eta / ue.div - r[2]) * sy};
        memcpy(seg[n_seg++], l, sizeof l);
    }
    for (size_t k = 0; k < nk; k++)
        if (isfinite(par->knobs[k].tta)) {
            bx[n_bg] = (par->knobs[k].tta / ut.div - r[0]) * sx;
            by[n_bg++] = (par->knobs[k].eta / ue.div - r[2]) * sy;
        }
    /* the least-cost knobs' diamonds are markers too (NAN: none) */
    for (size_t k = 0; k < n_least; k++)
        if (isfinite(least[k].tta)) {
            mx[n_mk] = (least[k].tta - r[0]) * sx;
            my[n_mk++] = (least[k].eta - r[2]) * sy;
        }
    ws_label_scene sc = {g->w, g->h, mx, my, n_mk, STEADY_MARKER, bx, by, n_bg,
                         (const double(*)[4])seg, n_seg};
    ws_labels_place(&sc, x, y, wd, ht, n_lab, lx, ly);
    for (size_t k = 0; k < n_lab; k++) {
        steady_row *o = &rows[which[k]];
        o->lx = r[0] + lx[k] / sx;
        o->ly = r[2] + ly[k] / sy;
        /* A label placed away from its point (crowded) gets a leader line
         * from the marker's edge to the nearest point of the label's box:
         * farther than 1.5 gaps (the next ring of candidates; a label one
         * step off diagonally, 12 pt from its point, read as no one's). */
        double ex = fmin(fmax(x[k], lx[k]), lx[k] + wd[k]);
        double ey = fmin(fmax(y[k], ly[k] - ht[k] / 2), ly[k] + ht[k] / 2);
        double d = hypot(ex - x[k], ey - y[k]);
        if (d > 1.5 * WS_LABEL_GAP(sc.marker)) {
            /* It ends at the text as drawn (the placer's box, 0.82 em a
             * character, is wider than most labels: a leader to its edge
             * ended in the air), and leaves its point at least 35° off the
             * point's error bars, vertical and horizontal: a leader along a
             * bar reads as part of it (issue 30: η = 0–0.1 on V100 /
             * CIFAR-100). Its end slides along the edge of the text it
             * meets, as far as that edge goes. */
            double x0 = lx[k], x1 = lx[k] + fmin(wd[k], ws_plot_text_width(o->label,
                                                                          WS_PLOT_FONT_SMALL));
            double y0 = ly[k] - ht[k] / 2, y1 = ly[k] + ht[k] / 2;
            const double t35 = tan(35 * 3.14159265358979323846 / 180);
            ex = fmin(fmax(x[k], x0), x1);
            ey = fmin(fmax(y[k], y0), y1);
            double dx = ex - x[k], dy = ey - y[k];
            if (fabs(dx) < fabs(dy) * t35)            /* near the vertical bar */
                ex = fmin(fmax(x[k] + ((x0 + x1) / 2 < x[k] ? -1 : 1) * fabs(dy) * t35, x0), x1);
            else if (fabs(dy) < fabs(dx) * t35)       /* near the horizontal one */
                ey = fmin(fmax(y[k] + ((y0 + y1) / 2 < y[k] ? -1 : 1) * fabs(dx) * t35, y0), y1);
            d = hypot(ex - x[k], ey - y[k]);
            o->lead = 1;
            o->ex = r[0] + (ex - 1.5 * (ex - x[k]) / d) / sx;     /* 1.5 pt short of the text */
            o->ey = r[2] + (ey - 1.5 * (ey - y[k]) / d) / sy;
        }
    }
out:
    free(buf);
    free(seg);
    free(which);
}

int ws_fig_steady(const ws_fig_ctx *c, const ws_sweep *s, size_t g, size_t w, ws_error *err)
{
    char name[512], stem[4096];
    snprintf(name, sizeof name, "steady-%s-%s", s->gpus[g], s->work[w]);
    ws_job job = s->jobs[g * s->n_work + w].job;
    ws_pareto par = {0};
    ws_outfile od = {0}, og = {0};
    least_knob *least = NULL;
    int rc = -1, eta_mode = s->n_etas > 1;
    size_t subject, *refs = calloc(s->n_pairs ? s->n_pairs : 1, sizeof *refs);
    if (!refs) return ws_fail(err, "out of memory");
    ws_fig_compared(s, &subject, refs);
    free(refs);
    /* Frontier from the knob landscape at eta 0.5 (the frontier does not
     * depend on eta); the least-cost knob per eta. */
    job.eta = 0.5;
    if (ws_pareto_compute(&job, &par, err)) goto out;
    /* Units from the zoomed region: the frontier, and the default knob
     * (where default's steady state lies) when it is near the frontier;
     * far away, default is drawn in the overview only. */
    ws_plot_box_t near = {0};
    for (int k = 0; k < par.n; k++)
        if (isfinite(par.knobs[k].tta) && (par.knobs[k].frontier || k == par.best_knob))
            ws_plot_box(&near, par.knobs[k].tta, par.knobs[k].eta);
    int def_in = par.default_knob < 0
                 || ws_plot_near(&near, par.knobs[par.default_knob].tta,
                                 par.knobs[par.default_knob].eta);
    double max_t = near.x1, max_e = near.y1;
    if (def_in && par.default_knob >= 0) {
        max_t = fmax(max_t, par.knobs[par.default_knob].tta);
        max_e = fmax(max_e, par.knobs[par.default_knob].eta);
    }
    ws_unit ut = ws_unit_time(max_t), ue = ws_unit_energy(max_e);
    ws_plot_box_t zoom = {0}, all = {0}, marks = {0};
    if (ws_fig_open_pair(c->dir, name, &od, &og, stem, sizeof stem, err)) goto out;
    FILE *f = od.f;
    /* Blocks (gnuplot `index`): 0 knobs, 1 frontier by TTA, 2 steady
     * states, 3 least-cost knob per eta. */
    fprintf(f, "# block 0: knobs; bs,pl,tta_%s,eta_%s,all_reach\n", ut.name, ue.name);
    for (int k = 0; k < par.n; k++)
        if (isfinite(par.knobs[k].tta)) {
            const ws_knob_stat *q = &par.knobs[k];
            const double x[2] = {q->tta / ut.div, q->eta / ue.div};
            fprintf(f, "%d,%d,", q->bs, q->pl);
            ws_csv_nums(f, 2, x, 1);
            fprintf(f, ",%d\n", q->all_reach);
            ws_plot_box(&all, q->tta / ut.div, q->eta / ue.div);
        }
    fprintf(f, "\n\n# block 1: frontier; bs,pl,tta_%s,eta_%s\n", ut.name, ue.name);
    for (int q = 0; q < par.n_frontier; q++) {
        const ws_knob_stat *k = &par.knobs[par.frontier[q]];
        const double x[2] = {k->tta / ut.div, k->eta / ue.div};
        fprintf(f, "%d,%d,", k->bs, k->pl);
        ws_csv_nums(f, 2, x, 1);
        fputc('\n', f);
        ws_plot_box(&zoom, k->tta / ut.div, k->eta / ue.div);
    }
    /* eta mode: the subject at every eta (labelled), default once (its
     * knob does not depend on eta); otherwise every pair at the first eta. */
    size_t series[64], n_series = 0;
    for (size_t p = 0; p < s->n_pairs && n_series < 64; p++)
        if (!eta_mode || p == subject || p == s->ref_default) series[n_series++] = p;
    /* every pair's look, from all the sweep's pairs: as in its other figures */
    const char *labels[64];
    ws_plot_look looks[64], look[64];
    size_t n_lab = s->n_pairs < 64 ? s->n_pairs : 64;
    for (size_t p = 0; p < n_lab; p++) labels[p] = s->pairs[p].label;
    ws_plot_policy_looks(labels, n_lab, looks);
    for (size_t i = 0; i < n_series; i++) look[i] = looks[series[i]];
    size_t n_rows = 0, cap = n_series * (eta_mode ? s->n_etas : 1);
    steady_row *rows = calloc(cap ? cap : 1, sizeof *rows);
    if (!rows) { ws_fail(err, "out of memory"); goto out; }
    for (size_t i = 0; i < n_series; i++) {
        size_t p = series[i];
        size_t n_e = eta_mode && p == subject ? s->n_etas : 1;
        for (size_t e = 0; e < n_e; e++) {
            ws_sweep_summary m;
            ws_sweep_summarise(s, ws_sweep_index(s, p, g, w, e, 0, 0) / s->n_seeds, &m);
            if (!m.seeds_ok) continue;           /* every seed failed: no point */
            steady_row *r = &rows[n_rows++];
            double v[6] = {m.steady_time.mean, m.steady_energy.mean, m.steady_time.lo,
                           m.steady_time.hi, m.steady_energy.lo, m.steady_energy.hi};
            for (int k = 0; k < 6; k++) {     /* a CI of one seed: the mean */
                int time = k == 0 || k == 2 || k == 3;
                r->v[k] = (isfinite(v[k]) ? v[k] : v[time ? 0 : 1]) / (time ? ut.div : ue.div);
            }
            r->series = i;
            r->e = e;
            r->subject = eta_mode && p == subject;
            r->zoomed = p != s->ref_default || def_in;    /* else overview only */
            if (!r->zoomed) continue;
            ws_plot_box(&marks, r->v[2], r->v[4]);
            ws_plot_box(&marks, r->v[3], r->v[5]);
        }
    }
    /* The least-cost knob per eta (block 3), also kept clear of labels. */
    const size_t n_least = s->n_etas;
    if (!(least = malloc((n_least ? n_least : 1) * sizeof *least))) {
        free(rows);
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t e = 0; e < n_least; e++) {
        ws_pareto pe = {0};
        job.eta = s->etas[e];
        least[e] = (least_knob){NAN, NAN, 0, 0};
        if (ws_pareto_compute(&job, &pe, err)) {
            ws_pareto_free(&pe);
            free(rows);
            goto out;
        }
        if (pe.best_knob >= 0) {
            const ws_knob_stat *k = &pe.knobs[pe.best_knob];
            least[e] = (least_knob){k->tta / ut.div, k->eta / ue.div, k->bs, k->pl};
        }
        ws_pareto_free(&pe);
    }
    /* The zoomed panel holds the frontier, the least-cost knobs and the
     * steady states with the whole of their confidence intervals (a bar
     * running out of the panel hides how uncertain a point is), every
     * marker whole: 9 pt from the frame (oracle's circle, ps 2.2). */
    for (size_t e = 0; e < n_least; e++) ws_plot_box(&marks, least[e].tta, least[e].eta);
    /* The steady states (with their CIs) and least-cost knobs in a corner
     * of the frontier's region, under a fifth of it each way (every policy
     * settles near the default knob on RTX 6000 / Sentiment140), would be
     * a pile of markers: the panel then zooms on them, with the frontier's
     * knobs near them (within their own extent again, or a tenth of the
     * frontier's); the overview shows the rest, the box marking the panel. */
    ws_plot_box_t fr = zoom;
    double fw = fr.x1 - fr.x0, fh = fr.y1 - fr.y0;
    if (marks.n && fr.n > 1 && marks.x1 - marks.x0 < 0.2 * fw && marks.y1 - marks.y0 < 0.2 * fh) {
        double mx = fmax(marks.x1 - marks.x0, 0.1 * fw), my = fmax(marks.y1 - marks.y0, 0.1 * fh);
        ws_plot_box_t z2 = marks;
        for (int q = 0; q < par.n_frontier; q++) {
            const ws_knob_stat *k = &par.knobs[par.frontier[q]];
            double x = k->tta / ut.div, y = k->eta / ue.div;
            if (x >= marks.x0 - mx && x <= marks.x1 + mx && y >= marks.y0 - my && y <= marks.y1 + my)
                ws_plot_box(&z2, x, y);
        }
        zoom = z2;
    } else if (marks.n) {
        ws_plot_box(&zoom, marks.x0, marks.y0);
        ws_plot_box(&zoom, marks.x1, marks.y1);
    }
    /* The key: the bars' title, knob, frontier, (least-cost knob,) a line
     * per series. When that is more than the figure holds, the oracle and
     * default keep theirs, the first other pairs theirs, and a last line
     * says how many are named (all are drawn; sweep.md lists them). */
    char title[512], subj[256];
    ws_plot_subject(subj, sizeof subj, c->cat, s->gpus[g], s->work[w]);
    if (eta_mode)
        snprintf(title, sizeof title, "%s: steady state of %s as η goes from %g to %g",
                 subj, subject < s->n_pairs ? s->pairs[subject].label : "the policy",
                 s->etas[0], s->etas[s->n_etas - 1]);
    else
        snprintf(title, sizeof title, "%s: steady state of each policy (η = %g, β = %g)", subj,
                 s->etas[0], s->betas[0]);
    /* The caption: the knobs are expected values (every recorded run of
     * the traces), a steady state a sample mean over a few recurrences of
     * a few seeds: it lies past the frontier by chance, within its CI.
     * The title and each caption sentence are broken into lines where
     * wider than the page (a large font). */
    long n_rec = ws_sweep_recurrences(s, ws_sweep_index(s, subject < s->n_pairs ? subject : 0,
                                                        g, w, 0, 0, 0));
    char caption[2][WS_PLOT_LINE];
    snprintf(caption[0], sizeof caption[0], "Knobs and frontier: the expected TTA and ETA of one run (the"
             " mean over all the traces’ runs).");
    snprintf(caption[1], sizeof caption[1], "Markers: sample means of the last %ld of %ld recurrences;"
             " one past the frontier by less than its CI is on it.", ws_steady_count(n_rec), n_rec);
    char cap_line[2 * WS_PLOT_MAX_LINES][WS_PLOT_LINE];
    const double page_w = 72 * WS_PLOT_COL2 - 12;
    size_t n_cap = 0;
    for (int k = 0; k < 2; k++)
        n_cap += ws_plot_wrap(caption[k], WS_PLOT_FONT_SMALL, page_w, cap_line + n_cap,
                              WS_PLOT_MAX_LINES);
    const size_t t_lines = ws_plot_wrap_count(title, WS_PLOT_FONT_TITLE, page_w);
    const size_t key_fixed = 3 + (size_t)eta_mode;
    const size_t key_cap = (size_t)ws_plot_zoomfig_key_capacity((int)(t_lines + n_cap));
    size_t named = n_series;                  /* series with a key entry */
    if (key_fixed + n_series > key_cap) named = key_cap > key_fixed + 1 ? key_cap - key_fixed - 1 : 0;
    size_t key_lines = key_fixed + (named < n_series ? named + 1 : n_series);
    ws_plot_zoomfig z;
    /* the caption's lines under the title: what is compared with what */
    ws_plot_zoomfig_layout(&z, &zoom, &all, 9, 0, (int)key_lines, (int)(t_lines + n_cap));
    steady_page pg = steady_scale(&z);
    label_etas(rows, n_rows, s->etas, &pg);
    place_labels(rows, n_rows, &pg, &par, ut, ue, least, n_least);
    fprintf(f, "\n\n# block 2: steady state per recurrence; series,eta,beta,tta_%s,eta_%s,"
               "tta_lo,tta_hi,eta_lo,eta_hi,label,label_tta,label_eta,leader_tta,leader_eta\n", ut.name, ue.name);
    for (size_t k = 0; k < n_rows; k++) {
        const steady_row *r = &rows[k];
        fprintf(f, "%zu,", r->series);
        ws_csv_num(f, ws_req(s->etas[r->e]));
        fputc(',', f);
        ws_csv_beta(f, s->betas[0]);
        fputc(',', f);
        ws_csv_nums(f, 6, r->v, 0);
        fputc(',', f);
        if (!r->label[0]) fputs(",,,,\n", f);
        else if (!r->lead) fprintf(f, "%s,%.6g,%.6g,,\n", r->label, ws_req(r->lx), ws_req(r->ly));
        else fprintf(f, "%s,%.6g,%.6g,%.6g,%.6g\n", r->label, ws_req(r->lx), ws_req(r->ly),
                     ws_req(r->ex), ws_req(r->ey));
    }
    free(rows);
    fprintf(f, "\n\n# block 3: least-cost knob per eta; eta,bs,pl,tta_%s,eta_%s\n", ut.name,
            ue.name);
    for (size_t e = 0; e < n_least; e++)
        if (isfinite(least[e].tta))
        {
            ws_csv_num(f, ws_req(s->etas[e]));
            fprintf(f, ",%d,%d,", least[e].bs, least[e].pl);
            const double x[2] = {least[e].tta, least[e].eta};
            ws_csv_nums(f, 2, x, 1);
            fputc('\n', f);
        }

    f = og.f;
    char file[600];
    snprintf(file, sizeof file, "%s.png", name);
    ws_plot_preamble(f, file, z.w_in, z.h_in, NULL);
    fputs("\nset multiplot title ", f);
    ws_plot_str_wrapped(f, title, WS_PLOT_FONT_TITLE, page_w);
    fprintf(f, " font ',%g'\n", WS_PLOT_FONT_TITLE);
    /* a caption line 9.5 pt under the last (at 8 pt), the first 27 pt
     * under the page's top, lower by a title line for each further one */
    for (size_t k = 0; k < n_cap; k++) {
        fprintf(f, "set label %zu ", 90 + k);
        ws_plot_str(f, cap_line[k]);
        fprintf(f, " at screen 0.5, screen %.5f center font ',%g'\n",
                1 - (27.0 + 11.0 * (double)(t_lines - 1) + 9.5 * (double)k) * WS_PLOT_EM
                        / (72 * z.h_in), WS_PLOT_FONT_SMALL);
    }
    char xl[64], yl[64];
    snprintf(xl, sizeof xl, "TTA per recurrence (%s)", ut.name);
    snprintf(yl, sizeof yl, "ETA per recurrence (%s)", ue.name);
    ws_plot_zoomfig_left(f, &z, xl, yl, 2);
    /* the key says what the error bars are */
    char kt[64];
    snprintf(kt, sizeof kt, "Error bars: 95 %% CI over %zu seeds", s->n_seeds);
    ws_plot_zoomfig_key(f, &z, kt);
    /* a frontier of one knob is a point: the key says so, not a line */
    fprintf(f, "knobs = \"data index 0 using (kx($3, $4)):4 with points pt 7 ps 0.45 lc rgb '#bbbbbb'"
               " title 'knob (bs, power limit)', data index 1 using 3:4 with %s\"\n",
            par.n_frontier > 1 ? "lines lw 1.5 lc rgb 'black' title 'Pareto frontier'"
                               : "points pt 3 ps 1.2 lw 1.5 lc rgb 'black'"
                                 " title 'Pareto frontier: one knob'");
    for (size_t i = 0; i < n_series; i++) {
        char t[160];
        size_t p = series[i];
        /* short enough for the key's column: "(any η)" or "right panel" */
        snprintf(t, sizeof t, "%s%s", s->pairs[p].label,
                 p == s->ref_default && !def_in ? ": right panel"
                 : eta_mode && p == s->ref_default ? " (any η)" : "");
        fprintf(f, "t%zu = ", i);
        ws_plot_str(f, t);
        fputc('\n', f);
    }
    fputs("plot @knobs", f);
    size_t filled = 0;                            /* filled markers still to draw */
    for (size_t i = 0; i < n_series; i++)
        filled += series[i] != s->ref_oracle && series[i] != s->ref_default;
    const double step = filled > 1 ? fmin(0.45, 1.2 / (double)(filled - 1)) : 0.45;
    /* Which series are named in the key: oracle and default always, then
     * the others in order while there is room. */
    size_t others = named, refs_in = 0;
    for (size_t i = 0; i < n_series; i++)
        refs_in += series[i] == s->ref_oracle || series[i] == s->ref_default;
    others = named > refs_in ? named - refs_in : 0;
    size_t n_named = 0;
    for (size_t i = 0; i < n_series; i++) {
        char style[128];
        size_t p = series[i];
        int own = p != s->ref_oracle && p != s->ref_default;
        int in_key = !own || others > 0;
        if (own && others > 0) others--;
        n_named += in_key;
        pair_style(s, p, &look[i], own ? --filled : 0, step, style, sizeof style);
        if (eta_mode && p == subject)       /* trace the etas in order, then label them */
            fprintf(f, ", \\\n     data index 2 using ($1 == %zu ? $4 : NaN):5 with lines lw 0.8"
                       " lc rgb '%s' notitle", i, look[i].colour);
        /* default far from the frontier: in the overview only */
        const char *x = p == s->ref_default && !def_in ? "NaN" : "$4";
        if (in_key)
            fprintf(f, ", \\\n     data index 2 using ($1 == %zu ? %s : NaN):5:6:7:8:9 with"
                       " xyerrorbars %s title t%zu", i, x, style, i);
        else
            fprintf(f, ", \\\n     data index 2 using ($1 == %zu ? %s : NaN):5:6:7:8:9 with"
                       " xyerrorbars %s notitle", i, x, style);
        if (eta_mode && p == subject)       /* placed clear of the data: place_labels */
            fprintf(f, ", \\\n     data index 2 using ($1 == %zu ? $11 : NaN):12:10"
                       " with labels left font ',%g' tc rgb '%s' notitle, \\\n"
                       "     data index 2 using ($1 == %zu ? $4 : NaN):5:($13 - $4):($14 - $5)"
                       " with vectors nohead lw 0.5 lc rgb '%s' notitle", i,
                    WS_PLOT_FONT_SMALL, look[i].colour, i, look[i].colour);
    }
    /* the least-cost knob of each η last, an open diamond larger than the
     * steady states' markers: a policy that settles on it is seen inside
     * it, not hiding it */
    if (eta_mode)
        fputs(", \\\n     data index 3 using 4:5 with points pt 12 ps 1.9 lw 1 lc rgb '#555555'"
              " title 'least-cost knob of each η'", f);
    if (n_named < n_series)                   /* the figure says what it leaves out */
        fprintf(f, ", \\\n     keyentry with points pt 0 ps 0 lc rgb 'white' title"
                   " '%zu of %zu named (all: sweep.md)'", n_named, n_series);
    fputs("\n", f);
    char over[256];
    size_t d_series = 0;
    while (d_series < n_series && series[d_series] != s->ref_default) d_series++;
    snprintf(over, sizeof over, "plot @knobs, data index 2 using ($1 == %zu ? $4 : NaN):5 with"
             " points pt 4 ps 1.3 lw 1.5 lc rgb '%s' notitle", d_series,
             d_series < n_series ? look[d_series].colour : ws_plot_policy_look("default").colour);
    snprintf(xl, sizeof xl, "TTA (%s)", ut.name);
    snprintf(yl, sizeof yl, "ETA (%s)", ue.name);
    ws_plot_zoomfig_overview(f, &z, xl, yl, over);
    fputs("unset multiplot\n", f);
    rc = ws_fig_finish(c, &od, &og, stem, title, err);
out:
    free(least);
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    ws_pareto_free(&par);
    return rc;
}

