/*
 * The style every figure is drawn in (wattsim/plot.h: ws_plot_set_style,
 * ws_plot_style; wattsim/style.h), read by the figures' layouts
 * (report/plot.c) and their axes and margins (report/plot_axis.c), which
 * scale with its font size: a file of its own, below both.
 */
#include "wattsim/plot.h"

static ws_style style = {"Helvetica", 3.4, 7.0, WS_PALETTE_OKABE_ITO, 8};

void ws_plot_set_style(const ws_style *s)
{
    style = *s;
}

const ws_style *ws_plot_style(void)
{
    return &style;
}
