/*
 * What `wattsim groups replay` writes (cli_groups_report.c): history.csv
 * rows as the replay emits them, and the per-group and cluster report in
 * table, CSV (groups.csv) and JSON (groups.json).
 */
#ifndef WATTSIM_CLI_GROUPS_REPORT_H
#define WATTSIM_CLI_GROUPS_REPORT_H

#include <stdio.h>
#include "wattsim/group.h"
#include "wattsim/report.h"
#include "wattsim/whatif.h"

/* A group's totals with the chosen policies and with default/default. */
typedef struct group_result {
    ws_group_totals pol, def;
    double max_power;          /* the group's job's MaxPower, W */
    int gpus_per_job;
} group_result;

/* history.csv: the file (NULL: nothing written) and the row's labels. */
typedef struct history_ctx {
    FILE *f;
    const char *group;
    const char *policy;
    const ws_whatif *wi;       /* co2_g / usd columns for its series */
} history_ctx;

/* What a report shows. */
typedef struct replay_info {
    const ws_group_trace *gt;
    const group_result *res;
    const group_result *all;
    const char *gpu, *bso, *plo;
    double eta, beta;
    const ws_whatif *wi;
    double t0;                 /* trace time of the series' start */
} replay_info;

/* history.csv's header: one row per run, co2_g and usd when a carbon or
 * price series is given. */
void ws_groups_history_header(FILE *f, const ws_whatif *wi);
/* A ws_group_sink: one history row into ((history_ctx *)p)->f. */
int ws_groups_history_row(void *p, const ws_group_record *r);
/* a += b, field by field. */
void ws_groups_sum_into(ws_group_totals *a, const ws_group_totals *b);
/* The report in `fmt`. */
void ws_groups_report(FILE *f, ws_format fmt, const replay_info *in);

#endif
