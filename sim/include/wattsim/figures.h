/*
 * The paper's result figures from a sweep: the data behind each (computed
 * here, so tests can check it without gnuplot) and the figure itself
 * (NAME.csv, NAME.gp and NAME.{png,svg,pdf} through wattsim/plot.h).
 *
 *   savings   ETA and TTA savings of the sweep's first policy pair versus
 *             default and every other non-oracle pair, per workload and
 *             GPU (or, with several etas or betas, per workload and eta x
 *             beta, a block of panels per GPU): grouped bars with 95 %
 *             confidence intervals (the Zeus paper's main result).
 *   beta      total ETA and TTA versus the early-stopping factor beta, as
 *             a percentage of the default policy's, with 95 % CIs.
 *
 * Savings are paired per seed: for seed i, 100 (1 - ours_i / ref_i) over
 * the seeds where both simulations succeeded; the bar is their mean and the
 * error bar its 95 % CI (t distribution). With equal per-seed totals of the
 * reference this equals sweep.md's saving (1 - sum ours / sum ref).
 * In the CSVs a beta of `inf` means early stopping off; an empty number,
 * that no seed of the cell could be used.
 */
#ifndef WATTSIM_FIGURES_H
#define WATTSIM_FIGURES_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/error.h"
#include "wattsim/sweep.h"

/* Mean and 95 % CI of the per-seed savings (percent) of pair `pair` over
 * pair `ref` in one cell (gpu, work, eta, beta); n = seeds used. With no
 * usable seed every field is NAN and n = 0; with one, lo = hi = mean. */
typedef struct ws_fig_saving {
    size_t n;
    ws_stat energy, time;
} ws_fig_saving;
void ws_fig_saving_of(const ws_sweep *s, size_t pair, size_t ref, size_t gpu, size_t work,
                      size_t eta, size_t beta, ws_fig_saving *out);

/* The pairs a savings figure compares: the subject (the first pair that is
 * not default or oracle; SIZE_MAX when there is none) and the references
 * (default first, then every other pair but oracle). Returns the number of
 * references written to refs (room for s->n_pairs). */
size_t ws_fig_compared(const ws_sweep *s, size_t *subject, size_t *refs);

/* Where figures go and what they say. */
typedef struct ws_fig_ctx {
    const char *dir;                 /* output folder */
    const char *command;             /* for the manifest */
    const ws_catalogue *cat;         /* display names; may be NULL */
    int render;                      /* 0: data and script only */
} ws_fig_ctx;

/* DIR/savings.{csv,gp,png,svg,pdf}. The CSV has one row per reference x
 * gpu x workload x eta x beta, and the figure draws every row: a bar per
 * GPU with one eta and beta, else a bar per eta x beta combination (viridis
 * along eta or beta) and a row of panels per GPU; the title names what
 * varies and gives what does not. Nothing is written when there is no
 * subject pair. */
int ws_fig_savings(const ws_fig_ctx *c, const ws_sweep *s, ws_error *err);

/* DIR/beta-GPU.{csv,gp,png,svg,pdf} for each GPU (first eta) when the
 * sweep has more than one beta: per workload and beta the subject's total
 * ETA and TTA as % of default's (mean and 95 % CI over seeds). */
int ws_fig_beta(const ws_fig_ctx *c, const ws_sweep *s, ws_error *err);

/* DIR/steady-GPU-WORKLOAD.{csv,gp,png,svg,pdf}: where the steady state
 * (mean ETA and TTA per recurrence over the last recurrences, 95 % CI)
 * sits against the frontier. With several etas: the subject pair at each
 * eta, labelled "η=X" and joined in eta order, the least-cost knob of each
 * eta and default once; with one eta: every pair, oracle included. Left
 * panel zoomed on the frontier and the steady states with their whole
 * CIs (ws_plot_zoomfig), right panel every knob on log-log axes; the key
 * says the error bars are 95 % CIs over the seeds. */
int ws_fig_steady(const ws_fig_ctx *c, const ws_sweep *s, size_t gpu, size_t work,
                  ws_error *err);

/* DIR/curves-GPU-WORKLOAD-etaE-betaB.{csv,gp,png,svg,pdf}: cumulative cost
 * and regret versus oracle by recurrence (in J-equivalents: a cost is
 * eta ETA + (1 - eta) MaxPower TTA), mean and 95 % band over seeds, a
 * block per policy pair (oracle dashed black, drawn on top); one column
 * (WS_PLOT_COL1) wide. */
int ws_fig_curves(const ws_fig_ctx *c, const ws_sweep *s, size_t gpu, size_t work,
                  size_t eta, size_t beta, ws_error *err);

/* Render STEM.gp to STEM.png, STEM.svg and STEM.pdf (unless c->render is
 * 0) and list them and the data STEM.csv in the manifest with `title`. */
int ws_fig_publish(const ws_fig_ctx *c, const char *stem, const char *title, ws_error *err);

#endif
