/*
 * The greedy label placer (sim/src/report/labels.c) that keeps the η
 * labels of steady-state figures off each other and off the data: where a
 * label goes with nothing around, next to an edge, next to another label
 * on the same point, a marker and a line, worked out by hand from the
 * candidate order (right, above-right, below-right, above, below, left,
 * ...; then two to five times as far), the gap g = 0.75 marker + 1
 * and the 2 pt gap kept between labels.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../sim/src/report/labels.h"

/* Does the w x h box anchored (left-middle) at (lx, ly) overlap the box
 * of side `side` centred at (cx, cy)? */
static int covers(double lx, double ly, double w, double h, double cx, double cy, double side)
{
    return lx < cx + side / 2 && lx + w > cx - side / 2 && ly - h / 2 < cy + side / 2
           && ly + h / 2 > cy - side / 2;
}

Test(labels, alone_goes_right_of_its_point)
{
    ws_label_scene s = {200, 100, NULL, NULL, 0, 6, NULL, NULL, 0, NULL, 0};
    double x = 50, y = 50, w = 20, h = 10, lx, ly;
    ws_labels_place(&s, &x, &y, &w, &h, 1, &lx, &ly);
    cr_expect_float_eq(lx, 50 + 0.75 * 6 + 1, 1e-12);
    cr_expect_float_eq(ly, 50, 1e-12);
}

Test(labels, at_the_right_edge_goes_left)
{
    /* right, above-right and below-right would stick out past x = 200 */
    ws_label_scene s = {200, 100, NULL, NULL, 0, 6, NULL, NULL, 0, NULL, 0};
    double x = 190, y = 50, w = 20, h = 10, lx, ly;
    ws_labels_place(&s, &x, &y, &w, &h, 1, &lx, &ly);
    /* above, centred: 180..200, inside */
    cr_expect_float_eq(lx, 180, 1e-12);
    cr_expect_float_eq(ly, 50 + 0.9 * 10, 1e-12);
}

Test(labels, two_on_one_point_do_not_overlap)
{
    ws_label_scene s = {200, 100, NULL, NULL, 0, 6, NULL, NULL, 0, NULL, 0};
    double x[2] = {50, 50}, y[2] = {50, 50}, w[2] = {20, 20}, h[2] = {10, 10}, lx[2], ly[2];
    ws_labels_place(&s, x, y, w, h, 2, lx, ly);
    double g = 0.75 * 6 + 1;
    cr_expect_float_eq(lx[0], 50 + g, 1e-12);
    /* above-right (0.5 g, 0.8 h) still overlaps the first by 2 of 10 in
     * height; below-right likewise; above (centred, 0.9 h up) overlaps
     * it by 1 in height: the first clear one is left */
    cr_expect_float_eq(lx[1], 50 - g - 20, 1e-12);
    cr_expect_float_eq(ly[1], 50, 1e-12);
}

Test(labels, avoids_a_marker_and_a_line)
{
    /* a marker where the label would go, and a vertical line through
     * above-right and above: below-right is the first clear candidate */
    double mx = 50 + 5.5 + 10, my = 50;
    double seg[1][4] = {{62, 55, 62, 80}};
    ws_label_scene s = {200, 100, &mx, &my, 1, 6, NULL, NULL, 0,
                        (const double(*)[4])seg, 1};
    double x = 50, y = 50, w = 20, h = 10, lx, ly;
    ws_labels_place(&s, &x, &y, &w, &h, 1, &lx, &ly);
    cr_expect(!covers(lx, ly, w, h, mx, my, 6), "on the marker at %g,%g", lx, ly);
    cr_expect_float_eq(lx, 50 + 0.5 * 5.5, 1e-12);
    cr_expect_float_eq(ly, 50 - 0.8 * 10, 1e-12);
}

Test(labels, crowded_labels_stay_apart)
{
    /* Six labels (a figure labels every other η when there are more than
     * six) on points 3 apart along a line, closer than DeepSpeech2's
     * η = 0, 0.2 and 0.4: no two label boxes overlap and none leaves the
     * area. (With eleven, sixteen candidates each are not enough: the
     * placer then takes the least-covered, and some overlap.) */
    enum { N = 6 };
    double x[N], y[N], w[N], h[N], lx[N], ly[N];
    for (int i = 0; i < N; i++) {
        x[i] = 40 + 3 * i;
        y[i] = 60 - 3 * i;
        w[i] = 24;
        h[i] = 10;
    }
    ws_label_scene s = {250, 170, x, y, N, 7, NULL, NULL, 0, NULL, 0};
    ws_labels_place(&s, x, y, w, h, N, lx, ly);
    for (int i = 0; i < N; i++) {
        cr_expect(lx[i] >= 0 && lx[i] + w[i] <= 250 && ly[i] - 5 >= 0 && ly[i] + 5 <= 170);
        for (int j = 0; j < i; j++)
            cr_expect(!(lx[i] < lx[j] + w[j] && lx[j] < lx[i] + w[i] && ly[i] - 5 < ly[j] + 5
                        && ly[j] - 5 < ly[i] + 5),
                      "labels %d and %d overlap", i, j);
    }
}
