/*
 * Axes and page geometry of the figures; see wattsim/plot.h.
 *
 * gnuplot picks tick steps without knowing how wide its labels are (a zoom
 * into 0.2 s of TTA got a tick every 0.02 s, labels running into each
 * other) and character margins that do not fit a wide tick label (the y
 * label left the page). Here the figure decides, in points:
 *
 *   - text widths from the advance widths of DejaVu Sans, what fontconfig
 *     gives for Helvetica on Debian (and wider than Helvetica or Liberation
 *     Sans, so a layout that fits it fits them);
 *   - a linear axis spans at least a set share of its values (a zoom into
 *     0.5 % of a TTA makes differences within run-to-run noise look
 *     large), keeps the data a few points clear of its ends (room for a
 *     marker), and takes the finest tick step of 1, 2, 2.5 or 5 x 10^k
 *     whose labels keep an em apart (stacked: 1.8 em from centre to
 *     centre), with at least two labels: the usual "nice numbers" of
 *     plotting libraries (Heckbert, Graphics Gems, 1990), bounded by the
 *     labels' real width;
 *   - a log axis labels 1, 2, 5 x 10^k, else 1, 3 x 10^k, else decades,
 *     else every other decade, the finest that is not crowded; when the
 *     range holds fewer than two of them, linear steps inside it;
 *   - margins: how far gnuplot puts tick labels and axis labels from the
 *     frame (measured on pdfcairo's output with the figures' terminal
 *     settings), so a plot area given in points leaves room for them.
 */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Advance widths of DejaVu Sans for ASCII 32..126, in 1/1000 em. */
static const short ASCII_W[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
    636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
    603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
    500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838};

double ws_plot_text_width(const char *s, double pt)
{
    double w = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (n > 1) {                      /* decode enough to tell a few apart */
            c &= 0x3F >> (n - 1);
            for (int i = 1; i < n && (p[i] & 0xC0) == 0x80; i++) c = c << 6 | (p[i] & 0x3F);
        }
        if (c >= 32 && c < 127) w += ASCII_W[c - 32];
        else if (c == 0x221E || c == 0x2212 || c == 0x2265 || c == 0x2264) w += 838;
        else if (c == 0x2013 || c == 0x00B7) w += 500;
        else w += 640;                    /* η, β and the like */
        for (int i = 0; i < n && *p; i++) p++;
    }
    return w * pt / 1000;
}

/* ------------------------------------------------------------ labels */

/* A tick label with `decimals` fixed decimals, never "-0". */
static void fixed_label(char *buf, size_t n, double v, int decimals)
{
    snprintf(buf, n, "%.*f", decimals, v);
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1)) memmove(buf, buf + 1, strlen(buf));
}

/* A log axis' label: 1, 20, 500, 0.05; 10^4 and more with an SI suffix. */
static void log_label(char *buf, size_t n, double v)
{
    if (v >= 1e6) snprintf(buf, n, "%gM", v / 1e6);
    else if (v >= 1e4) snprintf(buf, n, "%gk", v / 1e3);
    else snprintf(buf, n, "%g", v);
}

/* Are there more than 8 labels (stacked: 7), or are they closer than an
 * em (stacked: 1.8 em centre to centre, a 0.6 em gap), times `room`? */
static int crowded(const ws_plot_axis *a, const ws_plot_axis_opts *o, double room)
{
    /* page position of each tick, then the gap between neighbours */
    double prev = 0, prev_w = 0;
    if (a->n > (o->vertical ? 7u : 8u)) return 1;        /* a scale, not a table */
    for (size_t i = 0; i < a->n; i++) {
        double f = a->log ? log(a->tick[i] / a->lo) / log(a->hi / a->lo)
                          : (a->tick[i] - a->lo) / (a->hi - a->lo);
        double at = f * o->len, w = ws_plot_text_width(a->label[i], o->font);
        if (i) {
            double need = room * (o->vertical ? 1.8 * o->font : (w + prev_w) / 2 + o->font);
            if (at - prev < need) return 1;
        }
        prev = at;
        prev_w = w;
    }
    return 0;
}

/* Labels side by side less than gap_em em apart (edge to edge)? */
static int crowded_gap(const ws_plot_axis *a, const ws_plot_axis_opts *o, double gap_em)
{
    double prev = 0, prev_w = 0;
    if (a->n > 8) return 1;
    for (size_t i = 0; i < a->n; i++) {
        double f = (a->tick[i] - a->lo) / (a->hi - a->lo);
        double at = f * o->len, w = ws_plot_text_width(a->label[i], o->font);
        if (i && at - prev < (w + prev_w) / 2 + gap_em * o->font) return 1;
        prev = at;
        prev_w = w;
    }
    return 0;
}

static void widest(ws_plot_axis *a, const ws_plot_axis_opts *o)
{
    a->label_w = 0;
    a->label_chars = 0;
    for (size_t i = 0; i < a->n; i++) {
        a->label_w = fmax(a->label_w, ws_plot_text_width(a->label[i], o->font));
        size_t c = 0;
        for (const char *p = a->label[i]; *p; p++) c += (*p & 0xC0) != 0x80;
        if (c > a->label_chars) a->label_chars = c;
    }
}

/* Ticks at multiples of step (mantissa m of 1, 2, 2.5, 5; exponent k)
 * inside [a->lo, a->hi]; 0 when there would be too many. */
static size_t linear_ticks(ws_plot_axis *a, double m, int k)
{
    double step = m * pow(10, k);
    int decimals = k < 0 ? -k : 0;
    if (m == 2.5 && k <= 0) decimals++;
    double i0 = ceil(a->lo / step - 1e-9), i1 = floor(a->hi / step + 1e-9);
    a->n = 0;
    /* written so that NaN fails too: a step that underflowed to 0 makes
     * i0 and i1 infinite, and i++ would then never leave the loop */
    if (!(step > 0) || !(i1 - i0 + 1 <= WS_PLOT_MAX_TICKS)) return 0;
    for (double i = i0; i <= i1 && a->n < WS_PLOT_MAX_TICKS; i++) {
        a->tick[a->n] = i == 0 ? 0 : i * step;               /* never -0 */
        fixed_label(a->label[a->n], sizeof a->label[a->n], i * step, decimals);
        a->n++;
    }
    return a->n;
}

static const double MANTISSA[4] = {1, 2, 2.5, 5};

/* The finest linear step whose labels are not crowded and at least `min`;
 * failing that, closer labels (three quarters of the room: a short axis);
 * 0 when none is. On a log axis steps of 2.5 are left out: its labels
 * (25.0, 27.5, 30.0) would read as a linear axis' decimals. */
static int pick_linear_n(ws_plot_axis *a, const ws_plot_axis_opts *o, size_t min)
{
    int k0 = (int)floor(log10(a->hi - a->lo)) - 3;
    for (int pass = 0; pass < 2; pass++)
        for (int k = k0; k <= k0 + 5; k++)
            for (int j = 0; j < 4; j++)
                if (!(a->log && MANTISSA[j] == 2.5) && linear_ticks(a, MANTISSA[j], k) >= min
                    && !crowded(a, o, pass ? 0.75 : 1))
                    return 1;
    return 0;
}

/* Three labels at least: an em apart, else half an em (side by side; a
 * short panel in a large font, where three labels an em apart do not
 * fit but two say little of the scale). */
static int pick_linear_three(ws_plot_axis *a, const ws_plot_axis_opts *o)
{
    int k0 = (int)floor(log10(a->hi - a->lo)) - 3;
    for (int pass = 0; pass < 2; pass++)
        for (int k = k0; k <= k0 + 5; k++)
            for (int j = 0; j < 4; j++) {
                if ((a->log && MANTISSA[j] == 2.5) || linear_ticks(a, MANTISSA[j], k) < 3)
                    continue;
                if (!pass ? !crowded(a, o, 1) : !o->vertical && !crowded_gap(a, o, 0.5))
                    return 1;
            }
    return 0;
}

static int pick_linear(ws_plot_axis *a, const ws_plot_axis_opts *o)
{
    return pick_linear_n(a, o, 2);
}

/* Two labels at least, on an axis too short for pick_linear: the ends
 * moved out to multiples of the coarsest step that fits twice. */
static void widen_to_two(ws_plot_axis *a)
{
    int k = (int)floor(log10(a->hi - a->lo));
    for (int j = 3; j >= 0; j--)
        if (linear_ticks(a, MANTISSA[j], k) >= 2) return;
    double step = pow(10, k);
    a->lo = floor(a->lo / step) * step;
    a->hi = fmax(ceil(a->hi / step) * step, a->lo + step);
    if (a->log && a->lo <= 0) a->lo = step;
    linear_ticks(a, 1, k);
}

void ws_plot_axis_linear(ws_plot_axis *a, double d0, double d1, const ws_plot_axis_opts *o)
{
    memset(a, 0, sizeof *a);
    if (!isfinite(d1 - d0) || d1 < d0) d0 = 0, d1 = 1;    /* a span that overflows too */
    /* and values a tick step of 10^k cannot reach: below 1e-290 it
     * underflows (to 0 or a subnormal), above 1e300 the padded ends
     * overflow; no figure of bounded inputs comes near either */
    double m0 = fmax(fabs(d0), fabs(d1));
    if (m0 > 0 && !(m0 >= 1e-290 && m0 <= 1e300)) d0 = 0, d1 = 1;
    if (o->zero) d0 = fmin(d0, 0), d1 = fmax(d1, 0);
    double span = d1 - d0, mag = fmax(fabs(d0), fabs(d1));
    double need = fmax(o->min_span * mag, mag > 0 ? 1e-9 * mag : 1);
    if (span < need) {                    /* widen about the data's centre */
        double c = (d0 + d1) / 2;
        d0 = c - need / 2;
        d1 = c + need / 2;
        if (o->zero && d0 * c < 0) d0 = 0, d1 = need;
        span = need;
    }
    double pad0 = o->pad0, pad1 = o->pad1;
    if (pad0 + pad1 > o->len / 2) pad0 = pad1 = o->len / 4;     /* a short axis */
    double scale = (o->len - pad0 - pad1) / span;                 /* pt per unit */
    a->lo = d0 - pad0 / scale;
    a->hi = d1 + pad1 / scale;
    if (o->zero && d0 == 0 && pad0 == 0) a->lo = 0;
    /* three labels when they fit, a little closer if need be (two say
     * little of a scale: a short panel in a large font), else two */
    if (!pick_linear_three(a, o) && !pick_linear(a, o)) widen_to_two(a);
    /* Two labels only (a short axis in a large font: 36 and 37 on 140 pt
     * of 12 pt text): the range zooms out about its centre, by steps of a
     * quarter up to twice, until three fit. */
    for (int grow = 1; a->n < 3 && !o->vertical && !o->zero && grow <= 4; grow++) {
        ws_plot_axis b = *a;
        double c = (d0 + d1) / 2, h = (d1 - d0) / 2 * (1 + 0.25 * grow);
        double sc = (o->len - pad0 - pad1) / (2 * h);
        b.lo = c - h - pad0 / sc;
        b.hi = c + h + pad1 / sc;
        if (pick_linear_three(&b, o)) *a = b;
    }
    widest(a, o);
}

/* A short log axis (2.2 to 7.5 MJ on 55 pt) has room for neither three
 * 1-2-5 values nor three of a linear step (3, 4, 5, 6, 7 crowd at its top
 * end): round values m x 10^k (m = 1, 1.2, 1.5, ... 8) from the bottom,
 * each kept when it is far enough from the last kept (3, 4, 6). 0 when
 * that is fewer than three. */
static int pick_log_greedy(ws_plot_axis *a, const ws_plot_axis_opts *o)
{
    static const double m[] = {1, 1.2, 1.5, 1.6, 1.8, 2, 2.5, 3, 4, 5, 6, 7, 8};
    int k0 = (int)floor(log10(a->lo)), k1 = (int)ceil(log10(a->hi));
    double prev = -INFINITY, prev_w = 0;
    a->n = 0;
    for (int k = k0; k <= k1 && a->n < WS_PLOT_MAX_TICKS; k++)
        for (size_t j = 0; j < sizeof m / sizeof *m && a->n < WS_PLOT_MAX_TICKS; j++) {
            double v = m[j] * pow(10, k);
            if (v < a->lo * (1 - 1e-12) || v > a->hi * (1 + 1e-12)) continue;
            char label[sizeof a->label[0]];
            log_label(label, sizeof label, v);
            double at = log(v / a->lo) / log(a->hi / a->lo) * o->len;
            double w = ws_plot_text_width(label, o->font);
            double need = o->vertical ? 1.8 * o->font : (w + prev_w) / 2 + o->font;
            if (at - prev < need) continue;
            a->tick[a->n] = v;
            memcpy(a->label[a->n], label, sizeof label);
            a->n++;
            prev = at;
            prev_w = w;
        }
    return a->n >= 3;
}

void ws_plot_axis_log(ws_plot_axis *a, double d0, double d1, const ws_plot_axis_opts *o)
{
    static const int sets[4][3] = {{1, 2, 5}, {1, 3, 0}, {1, 0, 0}, {1, 0, 0}};
    memset(a, 0, sizeof *a);
    a->log = 1;
    /* d1 / d0 finite: a range of over 308 decades would make the pt per
     * decade 0 and the ends 0 and inf, whose log10 (int) is undefined */
    if (!(d0 > 0) || !isfinite(d1 / d0) || d1 < d0) d0 = 1, d1 = 10;
    double pad0 = o->pad0, pad1 = o->pad1;
    if (pad0 + pad1 > o->len / 2) pad0 = pad1 = o->len / 4;
    for (int again = 0;; again = 1) {
        double dec = fmax(log10(d1 / d0), log10(1.5));
        double per = (o->len - pad0 - pad1) / dec;                /* pt per decade */
        double mid = sqrt(d0) * sqrt(d1);             /* d0 * d1 may overflow or underflow */
        a->lo = fmin(d0, mid / pow(10, dec / 2)) / pow(10, pad0 / per);
        a->hi = fmax(d1, mid * pow(10, dec / 2)) * pow(10, pad1 / per);
        /* ends whose log10 and decades are finite, as every tick must be
         * (subnormal or huge data padded past a double: 1e-320 to 1e-300) */
        if (again || (a->lo >= 1e-300 && a->hi <= 1e300)) break;
        d0 = 1, d1 = 10;
    }
    int k0 = (int)floor(log10(a->lo)), k1 = (int)ceil(log10(a->hi));
    /* three labels at least: two say little of a log scale (is 1.2 to 1.8
     * a factor or a step?); a set of two that fits is kept in case
     * nothing gives three */
    ws_plot_axis two;
    int have_two = 0;
    for (int s = 0; s < 4; s++) {
        a->n = 0;
        for (int k = k0; k <= k1 && a->n < WS_PLOT_MAX_TICKS; k++) {
            if (s == 3 && k % 2) continue;
            for (int j = 0; j < 3 && sets[s][j] && a->n < WS_PLOT_MAX_TICKS; j++) {
                double v = sets[s][j] * pow(10, k);
                if (v < a->lo * (1 - 1e-12) || v > a->hi * (1 + 1e-12)) continue;
                a->tick[a->n] = v;
                log_label(a->label[a->n], sizeof a->label[a->n], v);
                a->n++;
            }
        }
        if (a->n < 2) break;                   /* coarser sets have fewer still */
        if (!crowded(a, o, 1)) {
            if (a->n >= 3) {
                widest(a, o);
                return;
            }
            if (!have_two) two = *a, have_two = 1;
        }
    }
    /* fewer than three 1-2-5 values in range (56 to 64 h): linear steps,
     * which a log axis spaces a little unevenly */
    if (pick_linear_n(a, o, 3)) {
        widest(a, o);
        return;
    }
    if (pick_log_greedy(a, o)) {
        widest(a, o);
        return;
    }
    if (have_two) *a = two;
    else if (!pick_linear(a, o)) widen_to_two(a);
    widest(a, o);
}

static void axis_write(FILE *f, const char *name, const ws_plot_axis *a, double font,
                       int labelled)
{
    fprintf(f, "%sset logscale %s\nset %srange [%.9g:%.9g]\nset %stics (", a->log ? "" : "un",
            name, name, a->lo, a->hi, name);
    for (size_t i = 0; i < a->n; i++)
        fprintf(f, "%s'%s' %.9g", i ? ", " : "", labelled ? a->label[i] : "", a->tick[i]);
    fprintf(f, ")");
    if (font > 0) fprintf(f, " font ',%g'", font);
    fprintf(f, "\nset m%stics %s\n", name, a->log ? "default" : "");
}

void ws_plot_axis_write(FILE *f, const char *name, const ws_plot_axis *a, double font)
{
    axis_write(f, name, a, font, 1);
}

void ws_plot_axis_write_unlabelled(FILE *f, const char *name, const ws_plot_axis *a)
{
    axis_write(f, name, a, 0, 0);
}

/* ------------------------------------------------------------ margins */

double ws_plot_left_room(const ws_plot_axis *a, double label_font)
{
    /* gnuplot sets the y label off the frame by the tick marks, a gap and
     * its own estimate of the tick labels' width, 0.636 em of the base
     * font a character whatever their font (measured: 10.9 pt + 5.09 pt a
     * character at 8 pt); then the label, 1.17 em. Of the 10.9 pt, the
     * tick marks' 3 stay and the gap grows with the font (gnuplot's
     * character width), as does the 5 pt of the 8 between the frame and
     * the labels themselves; written X + k (em - 1), exact at 8 pt. */
    const double em1 = WS_PLOT_EM - 1;
    double est = 0.636 * WS_PLOT_FONT_PT * (double)(a ? a->label_chars : 0);
    double need = 10.9 + 7.9 * em1 + est + (label_font > 0 ? 1.17 * label_font + 1 : 0);
    /* and the labels themselves, when wider than gnuplot thinks */
    return fmax(need, 8 + 5 * em1 + (a ? a->label_w : 0));
}

double ws_plot_bottom_room(double tick_font, double label_font)
{
    /* tick labels start 6.9 pt under the frame; the x label 20.9 pt at
     * 8 pt, a line lower for larger ticks; the gaps beyond the tick
     * marks' 3 pt grow with the font (gnuplot's character height) */
    const double em1 = WS_PLOT_EM - 1;
    double ticks = 6.9 + 3.9 * em1 + 1.17 * tick_font;
    return label_font > 0 ? ticks + 5 + 5 * em1 + 1.17 * label_font : ticks;
}

void ws_plot_area(FILE *f, double w_in, double h_in, double x0, double y0, double x1, double y1)
{
    double w = 72 * w_in, h = 72 * h_in;
    fprintf(f, "set lmargin at screen %.5f; set rmargin at screen %.5f\n"
               "set bmargin at screen %.5f; set tmargin at screen %.5f\n",
            x0 / w, x1 / w, y0 / h, y1 / h);
}
