/*
 * `wattsim trace check`: what a trace folder holds, per workload and GPU.
 *
 * Every GPU's power trace is loaded with the train trace exactly as the
 * other commands load them (so every error they would raise is raised
 * here). A workload is (dataset, network, optimizer, target_metric) of the
 * train trace. Per workload and GPU: its batch sizes (those with train
 * rows, power rows or both), the power limits measured at each, the runs
 * and the runs that reach the target, and the TTA/ETA Pareto frontier of
 * the joined job (see wattsim/pareto.h). max_epochs and b0 come from the
 * catalogue when it has the workload (same dataset, network, optimizer and
 * target), else there is no epoch cap and b0 is the largest batch size.
 */
#ifndef WATTSIM_TRACE_CHECK_H
#define WATTSIM_TRACE_CHECK_H

#include <stdio.h>
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/error.h"
#include "wattsim/import.h"

typedef struct ws_check_bs {
    int bs;
    int runs, reached;        /* train rows at bs for the target */
    int *pl;                  /* power limits with a power row, ascending */
    int n_pl;
    double *err;              /* each limit's energy_error (NAN: not recorded) */
    double max_err;           /* the largest of them, NAN when none is recorded */
} ws_check_bs;

typedef struct ws_check_knob {
    int bs, pl;
    double tta, eta;          /* s, J */
} ws_check_knob;

typedef struct ws_check_group {
    const char *gpu;
    char *dataset, *network, *optimizer;
    double target;            /* NAN: power rows only, no train rows */
    const char *workload;     /* catalogue name, or NULL */
    int max_epochs, b0;       /* max_epochs 0: no cap */
    int gpus_per_job;         /* the catalogue's; 0: not given (the trace's) */
    ws_check_bs *bs;
    int n_bs;
    ws_check_knob *frontier;  /* by ascending TTA */
    int n_frontier;
    ws_warnings warn;
} ws_check_group;

typedef struct ws_trace_check {
    char *dir;
    char *train_path;
    size_t n_train;
    char **gpus;
    int n_gpus;
    ws_check_group *g;
    size_t n;
    size_t n_warnings;
    size_t cap;               /* room in g */
} ws_trace_check;

int ws_trace_check_run(const char *dir, const ws_csv_limits *lim,
                       const ws_catalogue *cat, ws_trace_check *out, ws_error *err);
void ws_trace_check_free(ws_trace_check *c);
/* The table, or one JSON object. */
void ws_trace_check_print(FILE *f, const ws_trace_check *c, int json);

#endif
