/*
 * A figure style for papers: the font family and size, the widths of one-
 * and two-column figures and the palette, from `style: "font=NAME, size=PT,
 * col1=IN, col2=IN, palette=NAME"` in a config (or --set style=...). Parsed and
 * checked here (io); the figures read it through ws_plot_set_style
 * (report/plot.c).
 */
#ifndef WATTSIM_STYLE_H
#define WATTSIM_STYLE_H

#include "wattsim/error.h"

enum { WS_PALETTE_OKABE_ITO, WS_PALETTE_TOL, WS_PALETTE_GREY };

typedef struct ws_style {
    char font[64];          /* a font family fontconfig knows: letters,
                               digits, spaces and '-' only */
    double col1, col2;      /* inches: one- and two-column figures */
    int palette;            /* WS_PALETTE_* */
    double size;            /* pt: the base font (tick and axis labels);
                               titles 1 pt larger, keys and insets 1 pt
                               smaller (WS_PLOT_FONT_PT and the others) */
} ws_style;

/* The default: Helvetica at 8 pt, 3.4 and 7.0 in, Okabe-Ito. */
void ws_style_default(ws_style *s);
/* Parse SPEC ("font=Times, col2=6.5"; keys in any order, each at most
 * once, the others keep their default) into *s. -1 with err naming the
 * key and what it accepts. */
int ws_style_parse(const char *spec, ws_style *s, ws_error *err);

#endif
