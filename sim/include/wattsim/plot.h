/*
 * Figures drawn with gnuplot. A figure is files side by side: the data
 * (NAME.csv), a gnuplot script (NAME.gp) that reads it, and the images the
 * script renders (NAME.png, NAME.svg, NAME.pdf; the terminal follows the
 * extension: pngcairo at 150 dpi, svg, pdfcairo). Data and script stay next
 * to the image so users can restyle and re-render them (`gnuplot NAME.gp`,
 * or `gnuplot -e "out='NAME.pdf'" NAME.gp` for another format): the script
 * names no file, it derives NAME.csv and NAME.png from its own name
 * (gnuplot's ARG0).
 *
 * Figures are laid out at paper size: WS_PLOT_COL1 inches wide for one
 * column, WS_PLOT_COL2 for two, fonts in points (WS_PLOT_FONT_PT), colours
 * from the Okabe-Ito palette (ws_plot_colour) or viridis for ordered values,
 * names shown as the catalogue's display names.
 *
 * Inputs are data, never code: no path derived from an input ever goes
 * through gnuplot's parser (ws_plot_render runs gnuplot in a private folder
 * on fixed names), and every other string that reaches a script (titles,
 * labels, workload/GPU/policy names) goes through ws_plot_chars.
 *
 * When gnuplot is not on PATH the data and script are still written and one
 * line on stderr says how to render them; this is not an error.
 *
 * Every figure a command writes into its output folder also gets a line in
 * that folder's manifest.tsv (file, kind, title, the command that produced
 * it) that `wattsim report` turns into an index; `pareto --plot FILE`, which
 * writes where the user said, adds none.
 */
#ifndef WATTSIM_PLOT_H
#define WATTSIM_PLOT_H

#include <stdio.h>
#include "wattsim/config.h"
#include "wattsim/error.h"
#include "wattsim/pareto.h"
#include "wattsim/style.h"

/* A unit for an axis: label ("h", "MJ"), and the divisor from SI. */
typedef struct ws_unit {
    const char *name;
    double div;
} ws_unit;

/* Time unit for values whose largest is max_s: h from 2 h, min from 2 min,
 * else s. */
ws_unit ws_unit_time(double max_s);
/* Energy unit for values whose largest is max_j: MJ from 1 MJ, kJ from
 * 1 kJ, else J. */
ws_unit ws_unit_energy(double max_j);

/* The Okabe-Ito palette (colour-blind safe), 8 entries, "#rrggbb"; blue,
 * orange, green, purple first, the pale yellow last. */
const char *ws_plot_colour(int i);
/* One policy's look, the same in every figure (curves, steady states,
 * `run`'s Pareto figures): its colour ("#rrggbb") and marker (a gnuplot
 * point type). */
typedef struct ws_plot_look {
    const char *colour;
    int pt;
} ws_plot_look;
/* The looks of a figure set's policy pairs, labelled labels[0, n) ("zeus+jit",
 * "default", "grid+grid", "oracle"). One table decides (ws_plot_policy_look):
 * a pair whose policy (the label up to its first '+' or '{') is in it gets
 * that policy's look; the oracle is black (it marks the least-cost knob, as
 * the frontier's line does), default vermillion, grid orange, zeus blue. A
 * second pair of the same policy (zeus{window=0}+jit beside zeus+jit), or a
 * policy not in the table, takes the next look not in the table, in pair
 * order. The same labels give the same looks in every figure. */
void ws_plot_policy_looks(const char *const *labels, size_t n, ws_plot_look *out);
/* The look of one policy by name, as ws_plot_policy_looks gives it to the
 * first pair of that policy; NULL colour: not in the table. */
ws_plot_look ws_plot_policy_look(const char *label);
/* The colour at t in [0, 1] along WS_PLOT_VIRIDIS ("#rrggbb"), for series
 * in an order (η values). */
void ws_plot_viridis(double t, char buf[8]);

/* The figures' style (wattsim/style.h: a config's `style`), for every
 * figure drawn after it is set; the default until then. */
void ws_plot_set_style(const ws_style *s);
const ws_style *ws_plot_style(void);
/* Figure widths (inches) of one and two columns of a two-column paper, and
 * the base font: the style's. Text comes in three sizes derived from the
 * style's one (8 pt by default): the base (tick and axis labels), titles
 * 1 pt larger, keys, insets and point labels 1 pt smaller. Layout
 * lengths measured at 8 pt (a key line, a label's offset) scale by
 * WS_PLOT_EM, so a figure keeps its proportions at any size. */
#define WS_PLOT_COL1 (ws_plot_style()->col1)
#define WS_PLOT_COL2 (ws_plot_style()->col2)
#define WS_PLOT_FONT (ws_plot_style()->font)
#define WS_PLOT_FONT_PT (ws_plot_style()->size)
#define WS_PLOT_FONT_TITLE (WS_PLOT_FONT_PT + 1)
#define WS_PLOT_FONT_SMALL (WS_PLOT_FONT_PT - 1)
#define WS_PLOT_EM (WS_PLOT_FONT_PT / 8.0)
/* Heights that hold text and data (a panel, a figure of fixed height)
 * grow with a larger font and keep their 8 pt size under a smaller one. */
#define WS_PLOT_GROW (WS_PLOT_EM > 1 ? WS_PLOT_EM : 1.0)
/* Viridis, cut before its pale yellow end (unreadable on white). */
#define WS_PLOT_VIRIDIS "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', " \
    "0.75 '#5ec962', 1 '#b5de2b')\n"

/* ------------------------------------------------------------ axes
 * (report/plot_axis.c) A figure chooses its ranges, ticks and margins in
 * points rather than leaving them to gnuplot, which does not know how wide
 * its labels are. */

/* A linear axis spans at least this share of its largest value: a zoom
 * into 0.5 % of a TTA would make run-to-run noise look like a difference. */
#define WS_PLOT_MIN_SPAN 0.05
#define WS_PLOT_MAX_TICKS 16

/* Width in points of `s` (UTF-8) at `pt` points in the figures' font. */
double ws_plot_text_width(const char *s, double pt);

/* What an axis is to fit. */
typedef struct ws_plot_axis_opts {
    double len;              /* its length on the page, pt */
    int vertical;            /* labels stacked (a y axis), else side by side */
    double font;             /* tick labels' size, pt */
    double pad0, pad1;       /* pt from the axis' low and high ends to the data */
    double min_span;         /* share of the largest value the range spans at least */
    int zero;                /* the range includes 0 */
} ws_plot_axis_opts;

/* An axis: its range, and explicit ticks with their labels. */
typedef struct ws_plot_axis {
    double lo, hi;
    int log;
    size_t n;
    double tick[WS_PLOT_MAX_TICKS];
    char label[WS_PLOT_MAX_TICKS][16];
    double label_w;          /* the widest label, pt */
    size_t label_chars;      /* its length in characters */
} ws_plot_axis;

/* A linear axis for data in [d0, d1]: at least min_span wide, the data
 * pad0/pad1 pt inside its ends, the finest step of 1, 2, 2.5 or 5 x 10^k
 * whose labels (one fixed number of decimals) keep an em apart (stacked:
 * 1.8 em centre to centre), three of them when they fit (side by side,
 * half an em apart if need be), else two at least. */
void ws_plot_axis_linear(ws_plot_axis *a, double d0, double d1, const ws_plot_axis_opts *o);
/* A log axis for data in [d0, d1] (> 0), the data pad0/pad1 pt inside:
 * labels 1, 2, 5 x 10^k, else 1, 3 x 10^k, else decades, else every other
 * decade, the finest not crowded; linear steps when fewer than two of
 * those fall in the range. Large values read 20k, 1M. */
void ws_plot_axis_log(ws_plot_axis *a, double d0, double d1, const ws_plot_axis_opts *o);
/* `set [un]logscale NAME`, `set NAMErange`, `set NAMEtics (...)` (labels
 * at `font` pt; 0: the base font) and its minor tics, for NAME "x", "y". */
void ws_plot_axis_write(FILE *f, const char *name, const ws_plot_axis *a, double font);
/* The same with the ticks' labels left out (a panel over another). */
void ws_plot_axis_write_unlabelled(FILE *f, const char *name, const ws_plot_axis *a);

/* Points needed left of a plot's frame for the y tick labels of `a` (NULL:
 * none) and a y label at label_font pt (0: none), where gnuplot puts them. */
double ws_plot_left_room(const ws_plot_axis *a, double label_font);
/* Points needed under a frame for x tick labels and an x label (0: none). */
double ws_plot_bottom_room(double tick_font, double label_font);
/* The plot area, (x0, y0) to (x1, y1) in points from the lower left of the
 * w_in x h_in inch page, as `set lmargin at screen ...` and the others. */
void ws_plot_area(FILE *f, double w_in, double h_in, double x0, double y0, double x1, double y1);

/* Image kind from a path: 0 png, 1 svg, 2 pdf, -1 other. */
int ws_plot_kind(const char *path);

/* Path with its extension replaced by `ext` (".csv", ".gp"); malloc'd. */
char *ws_plot_sibling(const char *image, const char *ext);

/* Write the script preamble: `data` and `out` from the script's own name
 * unless set with -e, terminal chosen from `out`, size in inches, font,
 * grid, border, key. `image_base` (the image's base name) appears in a
 * comment only; `title` (NULL: none) is put in quotes (escaped), broken
 * into lines where wider than the page (ws_plot_str_wrapped). */
void ws_plot_preamble(FILE *f, const char *image_base, double width_in, double height_in,
                      const char *title);

/* A bounding box of plotted points; start zeroed, add with ws_plot_box
 * (non-finite points are ignored). */
typedef struct ws_plot_box_t {
    double x0, x1, y0, y1;
    size_t n;
} ws_plot_box_t;
void ws_plot_box(ws_plot_box_t *b, double x, double y);

/* Is (x, y) near box b (beyond it by at most b's own extent, or a quarter
 * of its upper values)? A point that is not would shrink a zoom on b to a
 * corner: it goes in the overview only. */
int ws_plot_near(const ws_plot_box_t *b, double x, double y);

/* The frontier and steady-state figures: a zoomed panel on linear axes
 * (left) and every knob on log-log axes (right, the zoomed region dashed),
 * the key under it; positions in points on a WS_PLOT_COL2 x 3.4 in page. */
typedef struct ws_plot_zoomfig {
    double w_in, h_in;
    double zl, zr, zb, zt;       /* zoomed panel's plot area */
    ws_plot_axis zx, zy;
    double ol, or_, ob, ot;      /* overview's plot area */
    ws_plot_axis ox, oy;
    double key_x, key_y;         /* the key's top left */
    double pad;                  /* pt from the zoomed panel's frame to its data */
    int repeat;                  /* every point of the overview is in the
                                    zoomed panel: no overview (it would
                                    repeat the left panel), a line says so */
} ws_plot_zoomfig;

/* Lay out the figure for the data `zoom` (the zoomed panel's; its markers
 * `pad` pt clear of the frame) and `all` (> 0, the overview's), with room
 * for a colour bar between the panels or not, a key of key_lines and a
 * title of title_lines. */
void ws_plot_zoomfig_layout(ws_plot_zoomfig *z, const ws_plot_box_t *zoom,
                            const ws_plot_box_t *all, double pad, int colour_bar,
                            int key_lines, int title_lines);
/* The zoomed panel's area, axes and labels, and in the script X0, X1, Y0,
 * Y1 (its ranges), Z = 1 and kx(x, y): x when the point's marker (knob_pt
 * in radius) is whole inside the zoomed panel or Z is 0, else NaN. */
void ws_plot_zoomfig_left(FILE *f, const ws_plot_zoomfig *z, const char *xlabel,
                          const char *ylabel, double knob_pt);
/* How many key lines the figure can hold under a title of title_lines,
 * with the overview still readable above them: ws_plot_zoomfig_layout
 * makes it taller (to 7 in) for a key longer than its usual 3.4 in hold. */
int ws_plot_zoomfig_key_capacity(int title_lines);
/* The key under the overview, with a title line when `title` is not NULL. */
void ws_plot_zoomfig_key(FILE *f, const ws_plot_zoomfig *z, const char *title);
/* Inside the multiplot, after the zoomed panel: the overview (Z = 0), its
 * axes labelled, drawn by the gnuplot command `plot`. */
void ws_plot_zoomfig_overview(FILE *f, const ws_plot_zoomfig *z, const char *xlabel,
                              const char *ylabel, const char *plot);

/* The body of a single-quoted gnuplot string for any text: a quote becomes
 * a typographic apostrophe (U+2019), a control character a space. Single-quoted because
 * gnuplot substitutes `command` output inside double-quoted strings. This is
 * the one escaping function for script text. */
void ws_plot_chars(FILE *f, const char *s);
/* A gnuplot string literal: ws_plot_chars between single quotes. */
void ws_plot_str(FILE *f, const char *s);
/* The same as a string expression in which each " / " of a display name
 * ("DeepSpeech2 / LibriSpeech") is a line break (for tick labels): the
 * parts are ws_plot_str literals joined by a fixed "\n". */
void ws_plot_str_lines(FILE *f, const char *s);

/* Text across a figure (a title, a caption) in a large font may be wider
 * than the page: broken at spaces into lines of at most `width` points at
 * `pt` points (ws_plot_text_width), at most `max` lines (the last takes
 * the rest). Returns the number of lines. */
#define WS_PLOT_LINE 512
#define WS_PLOT_MAX_LINES 4
size_t ws_plot_wrap(const char *s, double pt, double width, char (*lines)[WS_PLOT_LINE],
                    size_t max);
/* Lines ws_plot_str_wrapped writes `s` in (1 when it fits). */
size_t ws_plot_wrap_count(const char *s, double pt, double width);
/* ws_plot_str of `s` when it fits in `width` points at `pt`, else its
 * lines (ws_plot_wrap) joined by "\n". */
void ws_plot_str_wrapped(FILE *f, const char *s, double pt, double width);

/* The font size, `pt` or smaller, at which each line of each name (its
 * " / " parts, as ws_plot_str_lines breaks them) is at most `room` points
 * wide: tick labels under groups of bars in a large font. */
double ws_plot_fit_font(const char *const *names, size_t n, double room, double pt);

/* Render `script` (NAME.gp, reading NAME.csv beside it) to each of the `n`
 * images (.png, .svg or .pdf). gnuplot runs in a private folder made beside the
 * script, on links with fixed names, its output captured; each image is
 * renamed into place only when every render exited 0 and produced a
 * complete image. Returns 0 on success, or when gnuplot is absent (after
 * printing how to render); -1 with err set (one line naming the script, the
 * image and gnuplot's last message) otherwise, existing images untouched. */
int ws_plot_render(const char *script, const char *const *images, int n,
                   ws_error *err);

/* Add or replace the manifest.tsv line of `file` in its folder. `kind` is
 * "figure" or "table". */
int ws_manifest_add(const char *file, const char *kind, const char *title,
                    const char *command, ws_error *err);

/* The command line as one string (for manifests); malloc'd. */
char *ws_command_line(int argc, char **argv);

/* What a policy settled on, for the pareto figure: the knob of its last
 * reached run, for one seed or several (`run` of a multi-seed config). */
#define WS_SETTLED_MAX 16
typedef struct ws_settled {
    int n;                          /* knobs in knob[], distinct; 0: unknown */
    int knob[WS_SETTLED_MAX][2];    /* (bs, pl), in the seeds' order */
    char policy[600];               /* the policy pair's label ("zeus+jit");
                                       "" when the history does not say */
    char seeds[64];                 /* "seed 1", "seeds 1–3"; "" unknown */
    char shown[160];                /* what else the figure should say about
                                       what it shows ("the first of 3 η: 0.2,
                                       0.5, 0.8"); "" nothing */
} ws_settled;

/* Add a settled knob (a seed's) to s, once; 0, or -1 when s is full. */
int ws_settled_add(ws_settled *s, int bs, int pl);

/* Read the knob of the last reached run of a history.csv (`wattsim run`)
 * for the given gpu/workload (first simulation that matches; any when
 * NULL), with its policy and seed when the history has those columns. */
int ws_history_settled(const char *path, const char *gpu, const char *workload,
                       ws_settled *out, ws_error *err);

/* The pareto figure, two columns wide: left, the frontier's region on
 * linear axes, every knob a point coloured by batch size (viridis, log
 * scale), the frontier a line, the default and least-cost knobs (and
 * `settled`, if given: every knob its seeds settled on, in the policy's
 * look, the title naming the policy, η, β and the seeds) marked, each named
 * with its knob in the key; right,
 * every knob on log-log axes with the left panel's region framed.
 * `subject` (NULL: "workload, gpu") opens the title. Writes IMAGE's .csv
 * and .gp, renders IMAGE. */
int ws_plot_pareto(const char *image, const ws_job *job, const ws_pareto *p,
                   const ws_settled *settled, const char *subject, ws_error *err);

/* "DeepSpeech2 / LibriSpeech, V100": the display names of a job (the
 * catalogue may be NULL: raw names). */
void ws_plot_subject(char *buf, size_t n, const ws_catalogue *cat, const char *gpu,
                     const char *workload);

#endif
