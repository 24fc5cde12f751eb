/*
 * Placing point labels so they do not hide each other or the data.
 *
 * The η labels of a steady-state figure sit next to points that can be a
 * few points apart (DeepSpeech2's η = 0, 0.2 and 0.4 steady states are
 * within one marker of each other), where fixed offsets put text on text
 * and on markers. This is the usual greedy placer of cartography and
 * plotting libraries: labels are placed one after another, each at the
 * first of eight candidate positions around its point (right, above-right,
 * below-right, above, below, left, above-left, below-left; then the same
 * two to five times as far) with the least penalty, where the penalty
 * weighs the distance (each step as much as 3.3 pt of line under the
 * text: a longer leader reads better than a line through the text) and
 * what the label's box would cover: other labels (and a 2 pt gap around
 * them) most, then line segments (error bars, the frontier; 3 per point
 * of length), then markers (20 for a whole one), then background points,
 * and anything outside the plot area most of all. Coordinates are in points
 * (1/72 in) on the page, so text sizes are real; callers convert from
 * data units with the plot area's size.
 */
#ifndef WATTSIM_REPORT_LABELS_H
#define WATTSIM_REPORT_LABELS_H

#include <stddef.h>

typedef struct ws_label_scene {
    double width, height;            /* the plot area, in points */
    const double *mx, *my;           /* markers: centres */
    size_t n_markers;
    double marker;                   /* a marker's side */
    const double *bx, *by;           /* background points (light grey) */
    size_t n_background;
    const double (*seg)[4];          /* line segments: x0, y0, x1, y1 */
    size_t n_segments;
} ws_label_scene;

/* The gap between a marker of side m and a label next to it, in points. */
#define WS_LABEL_GAP(m) (0.75 * (m) + 1)

/* Place n labels: label i of w[i] x h points at point (x[i], y[i]), in that
 * order. Writes the left-middle corner of each label's box (gnuplot's
 * `with labels left` anchor) to lx[i], ly[i]. */
void ws_labels_place(const ws_label_scene *s, const double *x, const double *y,
                     const double *w, const double *h, size_t n, double *lx, double *ly);

#endif
