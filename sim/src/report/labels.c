/* Greedy label placement; see labels.h. */
#include "labels.h"

#include <math.h>
#include <stdlib.h>

typedef struct rect {
    double x0, y0, x1, y1;
} rect;

static double overlap(rect a, rect b)
{
    double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0), h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);
    return w > 0 && h > 0 ? w * h : 0;
}

/* Length of the segment inside r (Liang-Barsky clipping). */
static double clipped_length(const double s[4], rect r)
{
    double dx = s[2] - s[0], dy = s[3] - s[1], t0 = 0, t1 = 1;
    double p[4] = {-dx, dx, -dy, dy};
    double q[4] = {s[0] - r.x0, r.x1 - s[0], s[1] - r.y0, r.y1 - s[1]};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0) return 0;        /* parallel and outside */
            continue;
        }
        double t = q[i] / p[i];
        if (p[i] < 0) t0 = fmax(t0, t);
        else t1 = fmin(t1, t);
        if (t0 > t1) return 0;
    }
    return (t1 - t0) * hypot(dx, dy);
}

/* What a label's box r would cover; `placed` boxes are the labels so far. */
static double penalty(const ws_label_scene *s, rect r, const rect *placed, size_t n_placed)
{
    double area = (r.x1 - r.x0) * (r.y1 - r.y0), cost = 0;
    rect plot = {0, 0, s->width, s->height};
    cost += 1000 * (area - overlap(r, plot)) / area;
    /* labels keep a 2 pt gap, or "η=1η=0.8" reads as one */
    rect pad = {r.x0 - 2, r.y0 - 2, r.x1 + 2, r.y1 + 2};
    for (size_t i = 0; i < n_placed; i++) cost += 100 * overlap(pad, placed[i]) / area;
    double m = s->marker / 2;
    for (size_t i = 0; i < s->n_markers; i++) {
        rect k = {s->mx[i] - m, s->my[i] - m, s->mx[i] + m, s->my[i] + m};
        cost += 20 * overlap(r, k) / (s->marker * s->marker);
    }
    /* a line through text is worse than a longer leader to it */
    for (size_t i = 0; i < s->n_segments; i++) cost += 3 * clipped_length(s->seg[i], r);
    for (size_t i = 0; i < s->n_background; i++)
        cost += s->bx[i] >= r.x0 && s->bx[i] <= r.x1 && s->by[i] >= r.y0 && s->by[i] <= r.y1;
    return cost;
}

void ws_labels_place(const ws_label_scene *s, const double *x, const double *y,
                     const double *w, const double *h, size_t n, double *lx, double *ly)
{
    rect *placed = malloc((n ? n : 1) * sizeof *placed);
    /* Offsets of the left-middle anchor from the point: gaps g (clear of
     * the marker) and label widths w along x, label heights h along y. */
    static const double cand[8][3] = {
        {1, 0, 0},      {0.5, 0, 0.8},  {0.5, 0, -0.8},  {0, -0.5, 0.9},
        {0, -0.5, -0.9}, {-1, -1, 0},   {-0.5, -1, 0.8}, {-0.5, -1, -0.8},
    };
    double g = WS_LABEL_GAP(s->marker);
    for (size_t i = 0; i < n; i++) {
        double best = INFINITY;
        lx[i] = x[i] + g;
        ly[i] = y[i];
        for (int far = 1; far <= 5; far++)
            for (int c = 0; c < 8; c++) {
                double ax = x[i] + far * cand[c][0] * g + cand[c][1] * w[i];
                double ay = y[i] + far * cand[c][2] * h[i];
                rect r = {ax, ay - h[i] / 2, ax + w[i], ay + h[i] / 2};
                /* each step away costs as much as 10 pt of line under the
                 * text (far labels need a leader); a hair's preference for
                 * earlier candidates */
                double p = penalty(s, r, placed, placed ? i : 0) + 10 * (far - 1) + 0.01 * c;
                if (p < best) {
                    best = p;
                    lx[i] = ax;
                    ly[i] = ay;
                }
            }
        if (placed) placed[i] = (rect){lx[i], ly[i] - h[i] / 2, lx[i] + w[i], ly[i] + h[i] / 2};
    }
    free(placed);
}
