/*
 * Steps every figure of report/figures*.c shares (private to the report
 * layer).
 */
#ifndef WATTSIM_REPORT_FIGURES_UTIL_H
#define WATTSIM_REPORT_FIGURES_UTIL_H

#include <stddef.h>

#include "wattsim/figures.h"
#include "wattsim/outfile.h"

/* Open STEM.csv and STEM.gp, STEM = DIR/NAME (written to stem[0, n)). */
int ws_fig_open_pair(const char *dir, const char *name, ws_outfile *od, ws_outfile *og,
                     char *stem, size_t n, ws_error *err);
/* Commit STEM.csv and STEM.gp, then render and list the figure; both
 * files are closed (committed or abandoned) on return. */
int ws_fig_finish(const ws_fig_ctx *c, ws_outfile *od, ws_outfile *og, const char *stem,
                  const char *title, ws_error *err);

#endif
