/* gnuplot figures and their manifest; see wattsim/plot.h. */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/csv.h"
#include "wattsim/outfile.h"
#include "wattsim/report.h"

ws_unit ws_unit_time(double max_s)
{
    if (max_s >= 2 * 3600.0) return (ws_unit){"h", 3600.0};
    if (max_s >= 120.0) return (ws_unit){"min", 60.0};
    return (ws_unit){"s", 1.0};
}

ws_unit ws_unit_energy(double max_j)
{
    if (max_j >= 1e6) return (ws_unit){"MJ", 1e6};
    if (max_j >= 1e3) return (ws_unit){"kJ", 1e3};
    return (ws_unit){"J", 1.0};
}

/* The palettes, 8 colours each, in the order of ws_plot_colour: Okabe &
 * Ito (2008), without black, which marks the frontier, and with the yellow
 * (#F0E442, invisible on white) moved last; Paul Tol's "bright"; greys
 * dark to light for a print in black and white (the markers' shapes tell
 * the policies apart). */
static const char *const palette[3][8] = {
    {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999", "#F0E442"},
    {"#4477AA", "#CCBB44", "#228833", "#AA3377", "#66CCEE", "#EE6677", "#BBBBBB", "#777777"},
    {"#222222", "#777777", "#444444", "#999999", "#555555", "#666666", "#888888", "#AAAAAA"},
};

const char *ws_plot_colour(int i)
{
    return palette[ws_plot_style()->palette][((i % 8) + 8) % 8];
}

/* The one palette table of policies (see ws_plot_policy_looks): colours
 * by their place in the style's palette (ws_plot_colour; the oracle black
 * in every palette), markers that differ in shape as well, for a print in
 * grey. */
static const struct {
    const char *policy;
    int colour, pt;           /* colour: ws_plot_colour's index; -1 black */
} policy_looks[] = {
    {"oracle", -1, 6},        /* open circle: the least-cost knob */
    {"default", 5, 4},        /* open square */
    {"zeus", 0, 7},           /* filled circle */
    {"grid", 1, 9},           /* filled triangle */
};
/* Looks for pairs outside the table, in order (the palette's last last). */
static const int other_looks[][2] = {{2, 13}, {3, 11}, {4, 15}, {6, 5}, {7, 7}};

static int policy_index(const char *label)
{
    size_t n = label ? strcspn(label, "+{") : 0;
    for (size_t i = 0; i < sizeof policy_looks / sizeof *policy_looks; i++)
        if (n == strlen(policy_looks[i].policy) && !strncmp(label, policy_looks[i].policy, n))
            return (int)i;
    return -1;
}

ws_plot_look ws_plot_policy_look(const char *label)
{
    int i = policy_index(label);
    if (i < 0) return (ws_plot_look){NULL, 0};
    return (ws_plot_look){policy_looks[i].colour < 0 ? "#000000"
                                                     : ws_plot_colour(policy_looks[i].colour),
                          policy_looks[i].pt};
}

void ws_plot_policy_looks(const char *const *labels, size_t n, ws_plot_look *out)
{
    const size_t n_other = sizeof other_looks / sizeof *other_looks;
    unsigned taken = 0;                      /* table entries given out */
    size_t next = 0;
    for (size_t i = 0; i < n; i++) {
        int t = policy_index(labels[i]);
        if (t >= 0 && !(taken & (1u << t))) {
            taken |= 1u << t;
            out[i] = ws_plot_policy_look(labels[i]);
        } else {
            const int *o = other_looks[next++ % n_other];
            out[i] = (ws_plot_look){ws_plot_colour(o[0]), o[1]};
        }
    }
}

void ws_plot_viridis(double t, char buf[8])
{
    /* the stops of WS_PLOT_VIRIDIS, linearly between them */
    static const unsigned char c[5][3] = {{0x44, 0x01, 0x54}, {0x3b, 0x52, 0x8b},
                                          {0x21, 0x91, 0x8c}, {0x5e, 0xc9, 0x62},
                                          {0xb5, 0xde, 0x2b}};
    t = isfinite(t) ? fmin(fmax(t, 0), 1) * 4 : 0;
    int i = t >= 4 ? 3 : (int)t;
    double u = t - i;
    snprintf(buf, 8, "#%02x%02x%02x", (int)lround(c[i][0] + u * (c[i + 1][0] - c[i][0])),
             (int)lround(c[i][1] + u * (c[i + 1][1] - c[i][1])),
             (int)lround(c[i][2] + u * (c[i + 1][2] - c[i][2])));
}

int ws_plot_kind(const char *path)
{
    static const char *ext[] = {".png", ".svg", ".pdf"};
    size_t n = strlen(path);
    for (int k = 0; k < 3; k++)
        if (n > 4 && !strcmp(path + n - 4, ext[k])) return k;
    return -1;
}

char *ws_plot_sibling(const char *image, const char *ext)
{
    const char *slash = strrchr(image, '/');
    const char *dot = strrchr(image, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - image) : strlen(image);
    char *s = malloc(stem + strlen(ext) + 1);
    if (!s) return NULL;
    memcpy(s, image, stem);
    strcpy(s + stem, ext);
    return s;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The one escaping function for text that reaches a gnuplot script: the
 * body of a single-quoted gnuplot string. Single quotes because there
 * gnuplot does nothing to the text: no backslash escapes, no @macros and no
 * `command` substitution, which it DOES perform inside double-quoted strings
 * (even in a branch that is never taken; tests/test_plot.c checks both).
 * A quote becomes a typographic apostrophe (U+2019): gnuplot 5.4's scanner
 * rejects a doubled quote at the start of a string or next to another one,
 * so the text never contains one. A control character, which could end the
 * statement (newline) or the line, becomes a space. */
void ws_plot_chars(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'') fputs("\xe2\x80\x99", f);
        else fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
}

void ws_plot_str(FILE *f, const char *s)
{
    fputc('\'', f);
    ws_plot_chars(f, s);
    fputc('\'', f);
}

void ws_plot_str_lines(FILE *f, const char *s)
{
    const char *sep;
    while ((sep = strstr(s, " / "))) {
        char *part = strndup(s, (size_t)(sep - s));
        ws_plot_str(f, part ? part : "");
        free(part);
        fputs(".\"\\n\".", f);
        s = sep + 3;
    }
    ws_plot_str(f, s);
}

size_t ws_plot_wrap(const char *s, double pt, double width, char (*lines)[WS_PLOT_LINE],
                    size_t max)
{
    /* greedy, at spaces: a line takes words while it fits; a word wider
     * than the width alone is a line of its own */
    size_t n = 0;
    if (!max) return 0;
    lines[0][0] = '\0';
    while (*s == ' ') s++;
    while (*s) {
        size_t w = strcspn(s, " ");
        size_t have = strlen(lines[n]);
        char cand[WS_PLOT_LINE];
        snprintf(cand, sizeof cand, "%s%s%.*s", lines[n], have ? " " : "", (int)w, s);
        if (have && ws_plot_text_width(cand, pt) > width && n + 1 < max) {
            n++;
            snprintf(lines[n], WS_PLOT_LINE, "%.*s", (int)w, s);
        } else {
            memcpy(lines[n], cand, strlen(cand) + 1);
        }
        s += w;
        while (*s == ' ') s++;
    }
    return n + 1;
}

void ws_plot_str_wrapped(FILE *f, const char *s, double pt, double width)
{
    char lines[WS_PLOT_MAX_LINES][WS_PLOT_LINE];
    if (ws_plot_text_width(s, pt) <= width) {      /* one line: the text as given */
        ws_plot_str(f, s);
        return;
    }
    size_t n = ws_plot_wrap(s, pt, width, lines, WS_PLOT_MAX_LINES);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(".\"\\n\".", f);
        ws_plot_str(f, lines[i]);
    }
}

size_t ws_plot_wrap_count(const char *s, double pt, double width)
{
    char lines[WS_PLOT_MAX_LINES][WS_PLOT_LINE];
    return ws_plot_text_width(s, pt) <= width ? 1
                                              : ws_plot_wrap(s, pt, width, lines, WS_PLOT_MAX_LINES);
}

double ws_plot_fit_font(const char *const *names, size_t n, double room, double pt)
{
    double widest = 0;
    for (size_t i = 0; i < n; i++)
        for (const char *s = names[i], *sep; s; s = sep ? sep + 3 : NULL) {
            sep = strstr(s, " / ");
            char line[WS_PLOT_LINE];
            snprintf(line, sizeof line, "%.*s", (int)(sep ? (size_t)(sep - s) : strlen(s)), s);
            widest = fmax(widest, ws_plot_text_width(line, pt));
        }
    return widest > room ? pt * room / widest : pt;
}

void ws_plot_preamble(FILE *f, const char *image_base, double width_in, double height_in,
                      const char *title)
{
    /* No file name is written into the script as code: the data and image
     * names derive from the script's own name (ARG0) unless given with -e,
     * which is how ws_plot_render runs it, with fixed names in a private
     * folder. The comment names the files for the reader. */
    char *gp = ws_plot_sibling(image_base, ".gp"), *csv = ws_plot_sibling(image_base, ".csv");
    fputs("# Generated by wattsim. Restyle freely, then render from this folder with\n#   gnuplot ", f);
    ws_plot_chars(f, gp ? gp : "THIS.gp");
    fputs("   (reads ", f);
    ws_plot_chars(f, csv ? csv : "THIS.csv");
    fputs(", writes ", f);
    /* what a plain `gnuplot NAME.gp` writes: NAME.png, whatever image
     * wattsim rendered from it */
    char *png = ws_plot_sibling(image_base, ".png");
    ws_plot_chars(f, png ? png : "THIS.png");
    free(png);
    fputs(")\n#   gnuplot -e \"out='OTHER.pdf'\" ", f);
    ws_plot_chars(f, gp ? gp : "THIS.gp");
    fputs("   (png, svg or pdf by extension)\n"
          "# Sizes are in inches and fonts in points, as in a paper: the PDF is the\n"
          "# figure at print size, the PNG the same at 150 dpi.\n"
          "# The data and image names follow this script's name (NAME.gp reads NAME.csv\n"
          "# and writes NAME.png); -e \"data='FILE'\" and -e \"out='FILE'\" choose others.\n"
          "stem = ARG0[strlen(ARG0)-2:] eq '.gp' ? ARG0[1:strlen(ARG0)-3] : ARG0\n"
          "if (!exists(\"data\")) data = stem.'.csv'\n"
          "if (!exists(\"out\")) out = stem.'.png'\n"
          "set encoding utf8\n", f);
    free(gp);
    free(csv);

    /* noenhanced: workload names contain '_' that enhanced text would
     * turn into subscripts. The cairo terminals draw text 4/3 as large as
     * asked (pango's 96 dpi against cairo's 72: an 8 pt font came out
     * 10.7 pt in the PDF), hence fontscale 0.75 and 150/96: fonts are the
     * points they say, as in the SVG. */
    fprintf(f, "W = %.3f; H = %.3f   # inches\n"
               "if (strstrt(out, '.svg') > 0) {\n"
               "  set terminal svg size W*72,H*72 dynamic noenhanced font '%s,%g' background rgb 'white'\n"
               "} else { if (strstrt(out, '.pdf') > 0) {\n"
               "  set terminal pdfcairo size W,H noenhanced font '%s,%g' fontscale 0.75 linewidth 2 background rgb 'white'\n"
               "} else {\n"
               "  set terminal pngcairo size W*150,H*150 noenhanced font '%s,%g' fontscale 150.0/96"
               " linewidth 150.0/72 pointscale 150.0/72 background rgb 'white'\n"
               "} }\n", width_in, height_in, WS_PLOT_FONT, WS_PLOT_FONT_PT, WS_PLOT_FONT,
            WS_PLOT_FONT_PT, WS_PLOT_FONT, WS_PLOT_FONT_PT);
    fputs("set output out\n"
          "set datafile separator ','\n"
          "set border lw 0.8\n"
          "set grid xtics ytics lc rgb '#dddddd' lw 0.5 dt 1\n"
          "set key noopaque nobox samplen 2 spacing 1.1\n"
          "set tics nomirror out scale 0.6\n", f);
    if (title) {
        fputs("set title ", f);
        /* gnuplot centres it over the plot area, which its margins move
         * off the page's centre: four fifths of the page at most */
        ws_plot_str_wrapped(f, title, WS_PLOT_FONT_TITLE, 0.8 * 72 * width_in);
        fprintf(f, " font ',%g'\n", WS_PLOT_FONT_TITLE);
    }
}

void ws_plot_box(ws_plot_box_t *b, double x, double y)
{
    if (!isfinite(x) || !isfinite(y)) return;
    if (!b->n) { b->x0 = b->x1 = x; b->y0 = b->y1 = y; }
    b->x0 = fmin(b->x0, x);
    b->x1 = fmax(b->x1, x);
    b->y0 = fmin(b->y0, y);
    b->y1 = fmax(b->y1, y);
    b->n++;
}

int ws_plot_near(const ws_plot_box_t *b, double x, double y)
{
    return isfinite(x) && isfinite(y) && x <= b->x1 + fmax(b->x1 - b->x0, 0.25 * b->x1)
           && y <= b->y1 + fmax(b->y1 - b->y0, 0.25 * b->y1);
}

/* ------------------------------------------------------------ zoom figure
 *
 * Page geometry in points, from the lower left (WS_PLOT_COL2 x 3.4 in):
 *
 *   +--------------------------- title --------------------------------+
 *   | y |                              | c | c | B |  title of the right |
 *   |   |  zoomed panel: the frontier  | o | b | a |  y +--------------+ |
 *   | l |  and the marked points on    | l | t | t |    |  overview,   | |
 *   | a |  linear axes chosen by       | o | i | c |    |  log-log     | |
 *   | b |  ws_plot_axis_linear         | u | c | h |    +--------------+ |
 *   | e |                              | r | s |   |        x label      |
 *   | l |                              |   |   |   |  key                |
 *   |   +------------------------------+                                  |
 *   |              x label                                               |
 *   +--------------------------------------------------------------------+
 *
 * The colour bar (batch sizes) is the frontier figure's; the steady-state
 * figure leaves its room empty (narrower gap). The key sits under the
 * overview with key_lines lines of the small font. Lengths that hold text
 * were measured at the default 8 pt and scale with the font (WS_PLOT_EM). */
#define ZF_W WS_PLOT_COL2
#define ZF_H (3.4 * WS_PLOT_GROW)
#define ZF_TITLE (21.0 * WS_PLOT_EM)      /* pt under the page's top edge for the title */
#define ZF_TITLE_LINE (11.0 * WS_PLOT_EM) /* pt each further line of the title takes */
#define ZF_KEY_LINE (12.2 * WS_PLOT_GROW) /* pt a key line: 7 pt, spacing 1.5 (markers up
                                             to ps 2.2, which do not shrink: in a smaller
                                             font the spacing grows, ZF_KEY_SPACING) */
#define ZF_KEY_SPACING (1.5 * WS_PLOT_GROW / WS_PLOT_EM)
#define ZF_OV_TITLE (12 * WS_PLOT_EM)     /* pt between the panels' tops: the overview's
                                             title */
#define ZF_MAX_EXTRA (72 * 3.6)  /* pt the figure may grow by for a long key (to 7 in) */
#define ZF_MIN_OVERVIEW 50.0     /* pt the overview's frame needs: its ticks, the region */
static int key_lines_at_height(void);

void ws_plot_zoomfig_layout(ws_plot_zoomfig *z, const ws_plot_box_t *zoom,
                            const ws_plot_box_t *all, double pad, int colour_bar,
                            int key_lines, int title_lines)
{
    /* A key longer than the usual height holds makes the figure taller,
     * line by line, up to ZF_MAX_EXTRA (the caller names only what
     * ws_plot_zoomfig_key_capacity allows). */
    const int usual = key_lines_at_height();
    /* and a title of several lines too: the panels keep their height; the
     * two together within ZF_MAX_EXTRA */
    const double title_extra = title_lines > 1 ? (title_lines - 1) * ZF_TITLE_LINE : 0;
    double extra = key_lines > usual ? (key_lines - usual) * ZF_KEY_LINE : 0;
    if (extra > ZF_MAX_EXTRA - title_extra) extra = ZF_MAX_EXTRA - title_extra;
    const double wp = 72 * ZF_W, hp = 72 * ZF_H + extra + title_extra;
    memset(z, 0, sizeof *z);
    z->w_in = ZF_W;
    z->h_in = hp / 72;
    z->pad = pad;
    /* zoomed panel: the y axis first (its labels' width sets the left
     * edge), then the x axis over what remains */
    z->zb = 3 + ws_plot_bottom_room(WS_PLOT_FONT_PT, WS_PLOT_FONT_PT);
    z->zt = hp - ZF_TITLE - title_extra;
    ws_plot_axis_opts oy = {z->zt - z->zb, 1, WS_PLOT_FONT_PT, pad, pad, WS_PLOT_MIN_SPAN, 0};
    ws_plot_axis_linear(&z->zy, zoom->y0, zoom->y1, &oy);
    z->zl = 3 + ws_plot_left_room(&z->zy, WS_PLOT_FONT_PT);
    /* the right block holds the key, whose text grows with the font: it
     * takes 3/5 of the growth from the zoomed panel (exact at 8 pt) */
    const double frac = colour_bar ? 0.53 : 0.6;
    z->zr = frac * wp - 0.6 * (WS_PLOT_EM - 1) * (1 - frac) * wp;
    ws_plot_axis_opts ox = {z->zr - z->zl, 0, WS_PLOT_FONT_PT, pad, pad, WS_PLOT_MIN_SPAN, 0};
    ws_plot_axis_linear(&z->zx, zoom->x0, zoom->x1, &ox);
    /* right block: the key at its bottom, the overview above it */
    /* (the colour bar's tick labels and its label, or the gap, in text) */
    double right = z->zr + (colour_bar ? 62 + 30 * (WS_PLOT_EM - 1) : 24 * WS_PLOT_EM);
    z->key_x = right;
    z->key_y = z->zb + ZF_KEY_LINE * key_lines;
    z->ob = z->key_y + 6 + ws_plot_bottom_room(WS_PLOT_FONT_SMALL, WS_PLOT_FONT_SMALL);
    z->ot = z->zt - ZF_OV_TITLE;              /* its title, small, above */
    z->or_ = wp - 6 - 10 * fmax(WS_PLOT_EM - 1, 0);   /* half its last tick label */
    /* the overview: every knob and the zoomed region, log-log */
    double x0 = all->x0, x1 = all->x1, y0 = all->y0, y1 = all->y1;
    if (z->zx.lo > 0) x0 = fmin(x0, z->zx.lo), x1 = fmax(x1, z->zx.hi);
    if (z->zy.lo > 0) y0 = fmin(y0, z->zy.lo), y1 = fmax(y1, z->zy.hi);
    ws_plot_axis_opts lo_y = {z->ot - z->ob, 1, WS_PLOT_FONT_SMALL, 6, 6, 0, 0};
    ws_plot_axis_log(&z->oy, y0, y1, &lo_y);
    z->ol = right + ws_plot_left_room(&z->oy, WS_PLOT_FONT_SMALL);
    ws_plot_axis_opts lo_x = {z->or_ - z->ol, 0, WS_PLOT_FONT_SMALL, 6, 6, 0, 0};
    ws_plot_axis_log(&z->ox, x0, x1, &lo_x);
    z->repeat = all->n > 0 && all->x0 >= z->zx.lo && all->x1 <= z->zx.hi && all->y0 >= z->zy.lo
                && all->y1 <= z->zy.hi;
}

void ws_plot_zoomfig_left(FILE *f, const ws_plot_zoomfig *z, const char *xlabel,
                          const char *ylabel, double knob_pt)
{
    ws_plot_area(f, z->w_in, z->h_in, z->zl, z->zb, z->zr, z->zt);
    fputs("set xlabel ", f);
    ws_plot_str(f, xlabel);
    fputs("\nset ylabel ", f);
    ws_plot_str(f, ylabel);
    fputc('\n', f);
    ws_plot_axis_write(f, "x", &z->zx, 0);
    ws_plot_axis_write(f, "y", &z->zy, 0);
    /* Points outside the zoom are not data of this panel (the overview
     * shows them): knobs are drawn here only when their marker is whole
     * inside, knob_pt from the frame. */
    double kx = knob_pt * (z->zx.hi - z->zx.lo) / (z->zr - z->zl);
    double ky = knob_pt * (z->zy.hi - z->zy.lo) / (z->zt - z->zb);
    fprintf(f, "X0 = %.9g; X1 = %.9g; Y0 = %.9g; Y1 = %.9g   # the zoomed region\n"
               "Z = 1   # 1: the zoomed panel, where kx() keeps whole markers only\n"
               "kx(x, y) = !Z || (x >= %.9g && x <= %.9g && y >= %.9g && y <= %.9g) ? x : NaN\n",
            z->zx.lo, z->zx.hi, z->zy.lo, z->zy.hi, z->zx.lo + kx, z->zx.hi - kx,
            z->zy.lo + ky, z->zy.hi - ky);
    if (z->repeat) {        /* where the overview would be: why there is none */
        fputs("set label 97 ", f);
        ws_plot_str_wrapped(f, "Every knob is in the left panel: no overview", WS_PLOT_FONT_SMALL,
                            72 * z->w_in - 6 - z->key_x);
        fprintf(f, " at screen %.5f, screen %.5f left font ',%g'\n", z->key_x / (72 * z->w_in),
                (z->ot - 4 * WS_PLOT_EM) / (72 * z->h_in), WS_PLOT_FONT_SMALL);
    }
}

/* Key lines the figure holds at its usual height. */
static int key_lines_at_height(void)
{
    const double zb = 3 + ws_plot_bottom_room(WS_PLOT_FONT_PT, WS_PLOT_FONT_PT);
    const double ot = 72 * ZF_H - ZF_TITLE - ZF_OV_TITLE;
    const double room = ot - ZF_MIN_OVERVIEW - 6
                        - ws_plot_bottom_room(WS_PLOT_FONT_SMALL, WS_PLOT_FONT_SMALL) - zb;
    return (int)floor(room / ZF_KEY_LINE);
}

int ws_plot_zoomfig_key_capacity(int title_lines)
{
    const double title_extra = title_lines > 1 ? (title_lines - 1) * ZF_TITLE_LINE : 0;
    return key_lines_at_height() + (int)floor((ZF_MAX_EXTRA - title_extra) / ZF_KEY_LINE);
}

void ws_plot_zoomfig_key(FILE *f, const ws_plot_zoomfig *z, const char *title)
{
    fprintf(f, "set key at screen %.5f, screen %.5f left top vertical Left reverse samplen 1.2"
               " spacing %g width -3 font ',%g'", z->key_x / (72 * z->w_in),
            z->key_y / (72 * z->h_in), ZF_KEY_SPACING, WS_PLOT_FONT_SMALL);
    if (title) {
        fputs(" title ", f);
        ws_plot_str(f, title);
        fprintf(f, " left font ',%g'", WS_PLOT_FONT_SMALL);
    }
    fputc('\n', f);
}

void ws_plot_zoomfig_overview(FILE *f, const ws_plot_zoomfig *z, const char *xlabel,
                              const char *ylabel, const char *plot)
{
    if (z->repeat) {
        fputs("# no second panel: every knob is in the first (it would repeat it)\n", f);
        return;
    }
    fputs("# second panel: the whole landscape (log-log), the zoomed region dashed\n"
          "unset title; unset key; unset label; unset arrow; unset colorbox\n"
          "Z = 0\n", f);
    ws_plot_area(f, z->w_in, z->h_in, z->ol, z->ob, z->or_, z->ot);
    ws_plot_axis_write(f, "x", &z->ox, WS_PLOT_FONT_SMALL);
    ws_plot_axis_write(f, "y", &z->oy, WS_PLOT_FONT_SMALL);
    fputs("set xlabel ", f);
    ws_plot_str(f, xlabel);
    fprintf(f, " font ',%g'\nset ylabel ", WS_PLOT_FONT_SMALL);
    ws_plot_str(f, ylabel);
    /* the box: dashed dark grey, a style no marker has (the default knob's
     * square is orange) */
    double x0 = fmax(z->zx.lo, z->ox.lo), y0 = fmax(z->zy.lo, z->oy.lo);
    double x1 = fmin(z->zx.hi, z->ox.hi), y1 = fmin(z->zy.hi, z->oy.hi);
    /* a region a few points across on the page (CIFAR-100's frontier spans
     * 1 % of a landscape of four decades) would be a dot: the box is drawn
     * 10 pt a side at least, about the region's centre, so that it is seen
     * as a box, with dashes as long (dt 6,4 at lw 1.2: not dots) */
    const double min_pt = 10;
    double wpt = (z->or_ - z->ol) * log(x1 / x0) / log(z->ox.hi / z->ox.lo);
    double hpt = (z->ot - z->ob) * log(y1 / y0) / log(z->oy.hi / z->oy.lo);
    if (wpt < min_pt) {
        double c = sqrt(x0) * sqrt(x1), k = pow(z->ox.hi / z->ox.lo, min_pt / 2 / (z->or_ - z->ol));
        x0 = fmax(c / k, z->ox.lo), x1 = fmin(c * k, z->ox.hi);
    }
    if (hpt < min_pt) {
        double c = sqrt(y0) * sqrt(y1), k = pow(z->oy.hi / z->oy.lo, min_pt / 2 / (z->ot - z->ob));
        y0 = fmax(c / k, z->oy.lo), y1 = fmin(c * k, z->oy.hi);
    }
    /* the title centred over the panel, within the page: shorter on a
     * narrow page (a style's col2) or in a wide font (measured as DejaVu
     * Sans, with room for a wider family) */
    const char *title = "All knobs, log-log (dashed: left panel)";
    double half = fmin((z->ol + z->or_) / 2 - z->key_x, 72 * z->w_in - (z->ol + z->or_) / 2);
    const char *font = ws_plot_style()->font;
    double wider = !strcmp(font, "Helvetica") || !strcmp(font, "DejaVu Sans") ? 1.0 : 1.15;
    const double small = WS_PLOT_FONT_SMALL;
    if (wider * ws_plot_text_width(title, small) > 2 * half)
        title = "Log-log (dashed: left panel)";
    fprintf(f, " font ',%g'\n"
               "set title '%s' offset 0,-0.5 font ',%g'\n"
               "set object 98 rectangle from %.9g,%.9g to %.9g,%.9g front fs empty border"
               " lc rgb '#444444' lw 1.2 dt (6,4)\n", small, title, small, x0, y0, x1, y1);
    fputs(plot, f);
    fputs("\nunset object 98\n", f);
}

/* Is gnuplot an executable somewhere on PATH? */
static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)(n ? n : 1), n ? path : ".");
        if (access(buf, X_OK) == 0) return 1;
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

/* ------------------------------------------------------------ rendering
 *
 * gnuplot never sees a path derived from an input: it runs in a private
 * folder made beside the images (same file system, so the result can be
 * renamed into place; ws_private_make), on links named plot.gp and
 * data.csv, writing out0.png, out1.svg..., all passed as fixed -e
 * assignments. Its child changes into the private folder by descriptor
 * (fchdir), and every file of it is then reached by descriptor here too:
 * the output folder swapped for a link, or a plugin's chdir(), cannot send
 * a figure elsewhere. Its stdout and stderr go to gnuplot.log there; an
 * image is renamed into place only when gnuplot exited 0 and the file is
 * complete, and the folder is removed in every case. */

/* The private name of image i: out<i>.png, out<i>.svg or out<i>.pdf. */
static void private_image(char *buf, size_t size, int i, int kind)
{
    static const char *ext[] = {"png", "svg", "pdf"};
    snprintf(buf, size, "out%d.%s", i, ext[kind]);
}

/* Link (or, across file systems, copy) `from` in folder fdir to `to` in
 * folder tdir, never through a symbolic link. */
static int link_or_copy(int fdir, const char *from, int tdir, const char *to)
{
    if (linkat(fdir, from, tdir, to, 0) == 0) return 0;
    int in = openat(fdir, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1, rc = -1;
    if (in >= 0) out = openat(tdir, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out >= 0) {
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) break;
        rc = n == 0 ? 0 : -1;
        if (close(out) != 0) rc = -1;
    }
    if (in >= 0) close(in);
    return rc;
}

/* A complete image: PNG ends with its IEND chunk, SVG with </svg>, PDF with
 * %%EOF. A truncated file (full disk) fails this even though gnuplot exited
 * 0. */
static int image_complete(int dir, const char *name, int kind)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    char tail[64] = {0};
    int ok = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 12) {
        off_t n = st.st_size < (off_t)sizeof tail ? st.st_size : (off_t)sizeof tail;
        if (pread(fd, tail, (size_t)n, st.st_size - n) == n) {
            const char *end = kind == 1 ? "</svg>" : "%%EOF";
            size_t m = strlen(end);
            if (kind == 0)
                ok = !memcmp(tail + n - 8, "IEND\xae\x42\x60\x82", 8);
            else
                for (off_t i = 0; i + (off_t)m <= n && !ok; i++) ok = !memcmp(tail + i, end, m);
        }
    }
    close(fd);
    return ok;
}

/* cairo stamps a PDF with the time it was drawn (/CreationDate
 * (D:YYYYMMDDHHMMSSZ)), so the same figure would differ byte for byte
 * from one run to the next. Overwrite the stamp in place, same length so
 * the cross-reference offsets stay right, with SOURCE_DATE_EPOCH when set
 * (the reproducible-builds convention), else the Unix epoch. */
static int pdf_fix_date(int dir, const char *name)
{
    static const char key[] = "/CreationDate (D:";
    int fd = openat(dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    char *buf = NULL;
    int rc = -1;
    if (fstat(fd, &st) != 0) goto out;
    if (st.st_size <= 0 || st.st_size > (64L << 20)) { /* not a figure of ours */
        rc = 0;
        goto out;
    }
    buf = malloc((size_t)st.st_size);
    if (!buf || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
        if (!errno) errno = EIO;
        goto out;
    }
    rc = 0;
    size_t n = (size_t)st.st_size, k = sizeof key - 1;
    for (size_t i = 0; i + k + 15 <= n; i++) {
        if (memcmp(buf + i, key, k)) continue;
        const char *d = buf + i + k;
        size_t j = 0;
        while (j < 14 && d[j] >= '0' && d[j] <= '9') j++;
        if (j != 14 || d[14] != 'Z') continue;
        time_t t = 0;
        const char *sde = getenv("SOURCE_DATE_EPOCH");
        if (sde && *sde) {
            char *end;
            errno = 0;
            long long v = strtoll(sde, &end, 10);
            if (!*end && !errno && v >= 0 && v < 253402300800LL) t = (time_t)v;
        }
        struct tm tm;
        char stamp[16];
        errno = EIO;
        if (!gmtime_r(&t, &tm) || strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm) != 14
            || pwrite(fd, stamp, 14, (off_t)(i + k)) != 14)
            rc = -1;
        break;
    }
out:
    free(buf);
    if (close(fd) != 0) rc = -1;
    return rc;
}

/* The last non-empty line of gnuplot's log, one line, for the error. */
static void last_log_line(int dir, char *buf, size_t size)
{
    buf[0] = '\0';
    int fd = openat(dir, "gnuplot.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        line[n] = '\0';
        int blank = 1;
        for (char *p = line; *p; p++) {
            if ((unsigned char)*p < 0x20) *p = ' ';
            if (*p != ' ' && *p != '^') blank = 0;
        }
        if (!blank) snprintf(buf, size, "%.200s", line);
    }
    fclose(f);
}

/* Run gnuplot in the private folder (descriptor dir) on plot.gp, writing
 * image i, of `kind`. */
static int run_gnuplot(int dir, int i, int kind, const char *script, const char *image,
                       ws_error *err)
{
    char arg[64], name[32];
    private_image(name, sizeof name, i, kind);
    snprintf(arg, sizeof arg, "data='data.csv'; out='%s'", name);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return ws_fail(err, "%s: cannot start gnuplot: %s", script, strerror(errno));
    if (pid == 0) {
        if (fchdir(dir) != 0) _exit(126);
        int nul = open("/dev/null", O_RDONLY);
        int log = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
        if (nul < 0 || log < 0 || dup2(nul, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
            _exit(126);
        execlp("gnuplot", "gnuplot", "-e", arg, "plot.gp", (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return ws_fail(err, "%s: lost gnuplot: %s", script, strerror(errno));
    char line[256];
    last_log_line(dir, line, sizeof line);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return ws_fail(err, "%s: gnuplot failed rendering %s (%s %d)%s%s", script, image,
                       WIFEXITED(st) ? "exit status" : "signal",
                       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), line[0] ? ": " : "", line);
    if (!image_complete(dir, name, kind))
        return ws_fail(err, "%s: gnuplot wrote no complete image for %s (disk full?)%s%s", script,
                       image, line[0] ? ": " : "", line);
    if (kind == 2 && pdf_fix_date(dir, name))
        return ws_fail(err, "%s: cannot fix the creation date in %s: %s", script, image,
                       strerror(errno));
    return 0;
}

int ws_plot_render(const char *script, const char *const *images, int n,
                   ws_error *err)
{
    if (!have_gnuplot()) {
        const char *slash = strrchr(script, '/');
        char *dir = slash ? strndup(script, (size_t)(slash - script)) : strdup(".");
        ws_line("wattsim: gnuplot not found on PATH; data and script written, render"
                        " with: cd %s && gnuplot %s", dir ? dir : ".", base_name(script));
        free(dir);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (ws_plot_kind(images[i]) < 0)
            return ws_fail(err, "%s: the image's name must end in .png, .svg or .pdf", images[i]);
        if (ws_outfile_check(images[i], err)) return -1;
    }
    ws_private priv;
    if (ws_private_make(&priv, script, err)) return -1;
    char *csv = ws_plot_sibling(script, ".csv");
    const char *gp_name = base_name(script), *csv_name = csv ? base_name(csv) : NULL;
    char a[64];
    int rc = 0;
    if (!csv) rc = ws_fail(err, "out of memory");
    else if (link_or_copy(priv.dir, gp_name, priv.fd, "plot.gp")
             || link_or_copy(priv.dir, csv_name, priv.fd, "data.csv"))
        rc = ws_fail(err, "%s: cannot give gnuplot its script and data: %s", script,
                     strerror(errno));
    for (int i = 0; i < n && !rc; i++)
        rc = run_gnuplot(priv.fd, i, ws_plot_kind(images[i]), script, images[i], err);
    for (int i = 0; i < n && !rc; i++) {
        private_image(a, sizeof a, i, ws_plot_kind(images[i]));
        const char *name;
        int dir = ws_outfile_dir(images[i], &name, err);
        if (dir < 0) { rc = -1; break; }
        if (renameat(priv.fd, a, dir, name) != 0)
            rc = ws_fail(err, "%s: cannot rename into place: %s", images[i], strerror(errno));
        close(dir);
        if (!rc) ws_outfile_mine(images[i]);
    }
    ws_private_remove(&priv);
    free(csv);
    return rc;
}

char *ws_command_line(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 3;
    char *s = malloc(len), *p = s;
    if (!s) return NULL;
    *p = '\0';
    for (int i = 0; i < argc; i++) {
        /* tabs and newlines would break the manifest's lines */
        const char *a = strcmp(base_name(argv[i]), "wattsim") || i ? argv[i] : "wattsim";
        p += sprintf(p, "%s%s", i ? " " : "", a);
    }
    for (p = s; *p; p++)
        if (*p == '\t' || *p == '\n') *p = ' ';
    return s;
}

int ws_manifest_add(const char *file, const char *kind, const char *title,
                    const char *command, ws_error *err)
{
    char *dir = strdup(file);
    if (!dir) return ws_fail(err, "out of memory");
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else strcpy(dir, ".");
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    free(dir);
    const char *name = base_name(file);
    ws_outfile o = {0};
    if (ws_outfile_open_update(&o, path, err)) return -1;
    fputs("file\tkind\ttitle\tcommand\n", o.f);
    int in_fd = ws_outfile_openat(path, O_RDONLY);
    FILE *in = in_fd >= 0 ? fdopen(in_fd, "r") : NULL;
    if (!in && in_fd >= 0) close(in_fd);
    if (in) {
        char line[8192];
        int first = 1;
        while (fgets(line, sizeof line, in)) {
            size_t k = strcspn(line, "\t");
            if (first) { first = 0; continue; }
            if (k == strlen(name) && !strncmp(line, name, k)) continue;
            fputs(line, o.f);
        }
        fclose(in);
    }
    fprintf(o.f, "%s\t%s\t%s\t%s\n", name, kind, title, command ? command : "");
    return ws_outfile_commit(&o, err);
}

/* ------------------------------------------------------------ history */

int ws_settled_add(ws_settled *s, int bs, int pl)
{
    for (int i = 0; i < s->n; i++)
        if (s->knob[i][0] == bs && s->knob[i][1] == pl) return 0;
    if (s->n >= WS_SETTLED_MAX) return -1;
    s->knob[s->n][0] = bs;
    s->knob[s->n][1] = pl;
    s->n++;
    return 0;
}

int ws_history_settled(const char *path, const char *gpu, const char *workload,
                       ws_settled *out, ws_error *err)
{
    ws_csv *c = ws_csv_open(path, NULL, err);
    if (!c) return -1;
    int rc = -1, r;
    long col[16];
    /* policy and seed: named in the figure when the history has them */
    static const char *want[] = {"simulation", "gpu", "workload", "bs", "pl", "reached",
                                 "policy", "seed"};
    enum { C_SIM, C_GPU, C_WORK, C_BS, C_PL, C_REACHED, C_POLICY, C_SEED, C_N };
    const int required = C_POLICY;
    for (int i = 0; i < C_N; i++) col[i] = -1;
    if ((r = ws_csv_next(c, err)) <= 0) {
        if (r == 0) ws_fail(err, "%s: empty file; expected a history.csv of `wattsim run`", path);
        goto out;
    }
    for (size_t i = 0; i < ws_csv_nfields(c); i++) {
        for (int k = 0; k < C_N; k++)
            if (!strcmp(ws_csv_field(c, i), want[k])) col[k] = (long)i;
        /* wattsim 0.1 called the simulation's index `cell` */
        if (col[C_SIM] < 0 && !strcmp(ws_csv_field(c, i), "cell")) col[C_SIM] = (long)i;
    }
    for (int k = 0; k < required; k++)
        if (col[k] < 0) {
            ws_fail(err, "%s:1: no column '%s'; expected a history.csv of `wattsim run`",
                    path, want[k]);
            goto out;
        }
    long need = 0;                            /* the last column read */
    for (int k = 0; k < C_N; k++) need = col[k] > need ? col[k] : need;
    memset(out, 0, sizeof *out);
    int bs_last = 0, pl_last = 0;
    long sim = -1;
    while ((r = ws_csv_next(c, err)) == 1) {
        if ((long)ws_csv_nfields(c) <= need) {
            ws_fail(err, "%s:%ld: too few fields", path, ws_csv_line(c));
            goto out;
        }
        if (gpu && strcmp(ws_csv_field(c, (size_t)col[C_GPU]), gpu)) continue;
        if (workload && strcmp(ws_csv_field(c, (size_t)col[C_WORK]), workload)) continue;
        char *end;
        long this_sim = strtol(ws_csv_field(c, (size_t)col[C_SIM]), &end, 10);
        if (*end) {
            ws_fail(err, "%s:%ld: simulation '%s' is not an integer", path, ws_csv_line(c),
                    ws_csv_field(c, (size_t)col[C_SIM]));
            goto out;
        }
        if (sim < 0) {
            sim = this_sim;
            if (col[C_POLICY] >= 0)
                snprintf(out->policy, sizeof out->policy, "%s",
                         ws_csv_field(c, (size_t)col[C_POLICY]));
            if (col[C_SEED] >= 0)
                snprintf(out->seeds, sizeof out->seeds, "seed %s",
                         ws_csv_field(c, (size_t)col[C_SEED]));
        }
        if (this_sim != sim) continue;        /* the first matching simulation only */
        if (strcmp(ws_csv_field(c, (size_t)col[C_REACHED]), "1")) continue;
        long bs = strtol(ws_csv_field(c, (size_t)col[C_BS]), &end, 10);
        long pl = *end ? -1 : strtol(ws_csv_field(c, (size_t)col[C_PL]), &end, 10);
        if (*end || bs <= 0 || pl <= 0 || bs > INT_MAX || pl > INT_MAX) {
            ws_fail(err, "%s:%ld: bad bs or pl", path, ws_csv_line(c));
            goto out;
        }
        bs_last = (int)bs;
        pl_last = (int)pl;
    }
    if (r < 0) goto out;
    if (!bs_last) {
        ws_fail(err, "%s: no reached run for %s/%s", path, gpu ? gpu : "*",
                workload ? workload : "*");
        goto out;
    }
    ws_settled_add(out, bs_last, pl_last);
    snprintf(out->shown, sizeof out->shown, "simulation %ld of the history", sim);
    rc = 0;
out:
    ws_csv_close(c);
    return rc;
}

/* ------------------------------------------------------------ pareto */

void ws_plot_subject(char *buf, size_t n, const ws_catalogue *cat, const char *gpu,
                     const char *workload)
{
    snprintf(buf, n, "%s, %s", ws_catalogue_workload_display(cat, workload),
             ws_catalogue_gpu_display(cat, gpu));
}

int ws_plot_pareto(const char *image, const ws_job *job, const ws_pareto *p,
                   const ws_settled *settled, const char *subject, ws_error *err)
{
    int kind = ws_plot_kind(image);
    if (kind < 0)
        return ws_fail(err, "%s: the plot's name must end in .png, .svg or .pdf", image);
    if (p->default_knob < 0 || p->best_knob < 0)
        return ws_fail(err, "%s/%s: no default or no knob every run reaches; nothing to plot",
                       job->gpu, job->workload);
    /* is_settled[k]: a seed settled on knob k; settled_k the first such */
    int settled_k = -1;
    char *is_settled = calloc((size_t)(p->n > 0 ? p->n : 1), 1);
    if (!is_settled) return ws_fail(err, "out of memory");
    for (int i = 0; settled && i < settled->n; i++) {
        int at = -1;
        for (int k = 0; k < p->n; k++)
            if (p->knobs[k].bs == settled->knob[i][0] && p->knobs[k].pl == settled->knob[i][1])
                at = k;
        if (at < 0 || !isfinite(p->knobs[at].tta)) {
            free(is_settled);
            return ws_fail(err, "%s/%s: the settled knob %d:%d is not a knob of the job",
                           job->gpu, job->workload, settled->knob[i][0], settled->knob[i][1]);
        }
        is_settled[at] = 1;
        if (settled_k < 0) settled_k = at;
    }
    /* The zoomed panel covers the frontier and the marked knobs, and its
     * numbers pick the units; the overview every knob with a TTA. The
     * default knob joins the zoom only when it is near the frontier (within
     * the frontier's own extent again, or a quarter of its values): far
     * away, it would shrink the frontier to a corner, and the overview
     * shows it. */
    ws_plot_box_t near = {0};
    for (int k = 0; k < p->n; k++) {
        const ws_knob_stat *s = &p->knobs[k];
        if (isfinite(s->tta) && (s->frontier || k == p->best_knob || is_settled[k]))
            ws_plot_box(&near, s->tta, s->eta);
    }
    const ws_knob_stat *dk = &p->knobs[p->default_knob];
    int def_in = ws_plot_near(&near, dk->tta, dk->eta);
    double max_t = near.x1, max_e = near.y1;
    if (def_in) { max_t = fmax(max_t, dk->tta); max_e = fmax(max_e, dk->eta); }
    ws_unit ut = ws_unit_time(max_t), ue = ws_unit_energy(max_e);
    ws_plot_box_t zoom = {0}, all = {0};
    for (int k = 0; k < p->n; k++) {
        const ws_knob_stat *s = &p->knobs[k];
        if (!isfinite(s->tta)) continue;
        ws_plot_box(&all, s->tta / ut.div, s->eta / ue.div);
        if (s->frontier || (k == p->default_knob && def_in) || k == p->best_knob
            || is_settled[k])
            ws_plot_box(&zoom, s->tta / ut.div, s->eta / ue.div);
    }

    char *csv = ws_plot_sibling(image, ".csv"), *gp = ws_plot_sibling(image, ".gp");
    ws_outfile od = {0}, og = {0};
    int rc = -1;
    if (!csv || !gp) { ws_fail(err, "out of memory"); goto out; }
    /* All three files may be written, or none is. */
    if (ws_outfile_check(csv, err) || ws_outfile_check(gp, err) || ws_outfile_check(image, err))
        goto out;
    if (ws_outfile_open(&od, csv, err) || ws_outfile_open(&og, gp, err)) goto out;

    /* Frontier rows first, by TTA, so the frontier line is one run of rows. */
    fprintf(od.f, "bs,pl,runs,reached,all_reach,frontier,default,best,settled,tta_s,eta_j,"
                  "tta_%s,eta_%s\n", ut.name, ue.name);
    for (int pass = 0; pass < 2; pass++)
        for (int q = 0; q < (pass ? p->n : p->n_frontier); q++) {
            int k = pass ? q : p->frontier[q];
            const ws_knob_stat *s = &p->knobs[k];
            if (pass && s->frontier) continue;
            fprintf(od.f, "%d,%d,%d,%d,%d,%d,%d,%d,%d,", s->bs, s->pl, s->runs, s->reached,
                    s->all_reach, s->frontier, s->is_default, s->is_best, is_settled[k]);
            ws_csv_num(od.f, s->tta); fputc(',', od.f);
            ws_csv_num(od.f, s->eta); fputc(',', od.f);
            ws_csv_num(od.f, s->tta / ut.div); fputc(',', od.f);
            ws_csv_num(od.f, s->eta / ue.div); fputc('\n', od.f);
        }

    char title[512], fallback[256];
    if (!subject) {
        snprintf(fallback, sizeof fallback, "%s, %s", job->workload, job->gpu);
        subject = fallback;
    }
    snprintf(title, sizeof title, "%s: TTA and ETA of every knob", subject);
    /* With a settled knob, a second line says what the marks are of: the
     * policy, its seeds, η and β (and, from `run`, which of several η) */
    char line2[1024];
    line2[0] = '\0';
    if (settled_k >= 0) {
        char beta[32];
        if (isfinite(job->beta)) snprintf(beta, sizeof beta, "%g", job->beta);
        else snprintf(beta, sizeof beta, "∞");
        snprintf(line2, sizeof line2, "marked: %s settled%s%s, η = %g, β = %s%s%s%s",
                 settled->policy[0] ? settled->policy : "the policy", settled->seeds[0] ? ", " : "",
                 settled->seeds, job->eta, beta, settled->shown[0] ? " (" : "", settled->shown,
                 settled->shown[0] ? ")" : "");
    }
    FILE *f = og.f;
    /* markers of the zoomed panel: the least-cost circle (ps 2, 7 pt in
     * radius, and its 2 pt line) is the largest */
    ws_plot_zoomfig z;
    /* each line of the title broken again where it is wider than the page
     * (a large font) */
    const double tw = 72 * ZF_W - 12, tpt = WS_PLOT_FONT_TITLE;
    int t_lines = (int)ws_plot_wrap_count(title, tpt, tw)
                  + (line2[0] ? (int)ws_plot_wrap_count(line2, tpt, tw) : 0);
    ws_plot_zoomfig_layout(&z, &zoom, &all, 8.5, 1, settled_k >= 0 ? 6 : 5, t_lines);
    ws_plot_preamble(f, base_name(image), z.w_in, z.h_in, NULL);
    fputs("set multiplot title ", f);
    ws_plot_str_wrapped(f, title, tpt, tw);
    if (line2[0]) {
        fputs(".\"\\n\".", f);
        ws_plot_str_wrapped(f, line2, tpt, tw);
    }
    fprintf(f, " font ',%g'\n", WS_PLOT_FONT_TITLE);
    int bs_lo = job->bs[0], bs_hi = job->bs[job->n_bs - 1];
    fputs(WS_PLOT_VIRIDIS, f);
    fprintf(f, "set logscale cb 2\nset cbrange [%d:%d]\n", bs_lo, bs_hi > bs_lo ? bs_hi : 2 * bs_lo);
    fputs("set cbtics (", f);
    for (int i = 0, shown = 0; i < job->n_bs; i++) {
        /* powers of two and the ends: every size would crowd the bar */
        int b = job->bs[i];
        if (i && i < job->n_bs - 1 && (b & (b - 1))) continue;
        fprintf(f, "%s'%d' %d", shown++ ? ", " : "", b, b);
    }
    /* the colour bar beside the zoomed panel, as tall, titled along it */
    const double wp = 72 * z.w_in, hp = 72 * z.h_in;
    fprintf(f, ") font ',%g'\nset cblabel 'Batch size' font ',%g'\n"
               "set colorbox user origin screen %.5f, screen %.5f size screen %.5f, screen %.5f\n",
            WS_PLOT_FONT_SMALL, WS_PLOT_FONT_SMALL, (z.zr + 10) / wp, z.zb / hp, 6 / wp,
            (z.zt - z.zb) / hp);
    /* left panel: the frontier's region, linear axes; its key under the
     * overview on the right */
    char xl[64], yl[64];
    snprintf(xl, sizeof xl, "Time to accuracy, TTA (%s)", ut.name);
    snprintf(yl, sizeof yl, "Energy to accuracy, ETA (%s)", ue.name);
    ws_plot_zoomfig_left(f, &z, xl, yl, 3);
    ws_plot_zoomfig_key(f, &z, NULL);
    const ws_knob_stat *d = &p->knobs[p->default_knob], *b = &p->knobs[p->best_knob];
    char t_def[96], t_best[160], t_set[720];
    snprintf(t_def, sizeof t_def, "default%s (%d, %d W)%s", def_in ? " knob" : "", d->bs,
             d->pl, def_in ? "" : ": right panel");
    /* The key has room for about 40 characters at 7 pt (fewer in a larger
     * font): a settled knob
     * that is the least-cost one gets its own entry (its marker drawn
     * inside the circle) rather than a suffix the figure would clip; a
     * policy named in the title line only when its name would not fit. */
    snprintf(t_best, sizeof t_best, "least cost, η = %g (%d, %d W)", job->eta, b->bs, b->pl);
    t_set[0] = '\0';
    if (settled_k >= 0) {
        char knobs[64];
        if (settled->n == 1)
            snprintf(knobs, sizeof knobs, "(%d, %d W)", p->knobs[settled_k].bs,
                     p->knobs[settled_k].pl);
        else
            snprintf(knobs, sizeof knobs, "(%d knobs)", settled->n);
        snprintf(t_set, sizeof t_set, "%s settled %s",
                 settled->policy[0] ? settled->policy : "policy", knobs);
        if ((double)strlen(t_set) > 40 * 7 / WS_PLOT_FONT_SMALL) snprintf(t_set, sizeof t_set, "policy settled %s", knobs);
    }
    /* the default and least-cost knobs in the looks of the default and
     * oracle policies, the settled knob in its policy's colour */
    ws_plot_look l_def = ws_plot_policy_look("default"), l_best = ws_plot_policy_look("oracle");
    ws_plot_look l_set = ws_plot_policy_look(settled ? settled->policy : NULL);
    if (!l_set.colour) l_set = (ws_plot_look){ws_plot_colour(2), 12};
    fputs("t_def = ", f); ws_plot_str(f, t_def);
    fputs("\nt_best = ", f); ws_plot_str(f, t_best);
    fputs("\nt_set = ", f); ws_plot_str(f, t_set);
    /* knobs through kx(): whole markers only in the zoomed panel */
    fputs("\nknobs = \"data skip 1 using ($5 == 1 ? kx($12, $13) : NaN):13:1 with points pt 7"
          " ps 0.7 lc palette title 'knob (bs, power limit)', "
          "data skip 1 using ($5 == 0 ? kx($12, $13) : NaN):13 with points pt 6 ps 0.7 lw 0.8"
          " lc rgb '#999999' title 'some runs miss the target', "
          "data skip 1 using ($6 == 1 ? $12 : NaN):13 with ", f);
    /* a frontier of one knob is a point: the key says so, not a line */
    fputs(p->n_frontier > 1 ? "lines lw 1.5 lc rgb 'black' title 'Pareto frontier'\"\n"
                            : "points pt 3 ps 1.2 lw 1.5 lc rgb 'black'"
                              " title 'Pareto frontier: one knob'\"\n", f);
    fprintf(f, "plot @knobs, \\\n"
               "     data skip 1 using ($7 == 1 ? kx($12, $13) : NaN):13 with points pt 4 ps 1.6"
               " lw 2 lc rgb '%s' title t_def, \\\n"
               "     data skip 1 using ($8 == 1 ? $12 : NaN):13 with points pt 6 ps 2.0 lw 2"
               " lc rgb '%s' title t_best", l_def.colour, l_best.colour);
    if (settled_k >= 0)
        fprintf(f, ", \\\n     data skip 1 using ($9 == 1 ? $12 : NaN):13 with points pt 12 ps 2.0"
                   " lw 2 lc rgb '%s' title t_set", l_set.colour);
    fputs("\n", f);
    snprintf(xl, sizeof xl, "TTA (%s)", ut.name);
    snprintf(yl, sizeof yl, "ETA (%s)", ue.name);
    char over[256];
    snprintf(over, sizeof over, "plot @knobs, data skip 1 using ($7 == 1 ? $12 : NaN):13 with"
             " points pt 4 ps 1.3 lw 1.5 lc rgb '%s' notitle", l_def.colour);
    ws_plot_zoomfig_overview(f, &z, xl, yl, over);
    fputs("unset multiplot\n", f);

    if (ws_outfile_commit(&od, err) || ws_outfile_commit(&og, err)) goto out;
    const char *imgs[1] = {image};
    rc = ws_plot_render(gp, imgs, 1, err);
out:
    ws_outfile_abort(&od);
    ws_outfile_abort(&og);
    free(csv);
    free(gp);
    free(is_settled);
    return rc;
}
