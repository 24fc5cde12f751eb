/*
 * Train rows from per-epoch metrics (see wattsim/import.h).
 *
 * METRICS.csv: dataset,network,optimizer,batch_size,learning_rate,run,epoch,metric
 * one row per evaluated epoch of a run. A run is (dataset, network,
 * optimizer, batch_size, learning_rate, run); its target_epoch is the
 * first epoch whose metric is >= the target (<= with lower-is-better), or
 * empty when no epoch reaches it. The dataset must be a safe name and the
 * network and optimizer labels (wattsim/name.h), as --job D/N/O takes
 * them. Epochs of a run must be distinct (refused as read); a run
 * whose epochs skip numbers is counted in a warning (its first reaching
 * epoch may be late by the skipped ones).
 */
#include "wattsim/import.h"
#include "import_util.h"
#include "wattsim/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct metric_row {
    const char *dataset, *network, *optimizer, *lr;   /* interned */
    int bs;
    long run, epoch;
    double metric;
    long line;
} metric_row;

enum { M_DATASET, M_NETWORK, M_OPT, M_BS, M_LR, M_RUN, M_EPOCH, M_METRIC, M_N };
_Static_assert(M_DATASET == 0 && M_NETWORK == 1 && M_OPT == 2 && M_BS == 3,
               "ws_imp_job_row reads the job's names and batch size from columns 0-3");

/* A row's key (its run and epoch); names are interned, so compared by
 * pointer. */
typedef struct rows_ref {
    metric_row *const *rows;
} rows_ref;

static uint64_t row_hash(const metric_row *m)
{
    const void *p[4] = {m->dataset, m->network, m->optimizer, m->lr};
    const long k[3] = {m->bs, m->run, m->epoch};
    return ws_hash(k, sizeof k, ws_hash(p, sizeof p, 0));
}

static int same_row(const void *ctx, size_t a, size_t b)
{
    const metric_row *x = &(*((const rows_ref *)ctx)->rows)[a];
    const metric_row *y = &(*((const rows_ref *)ctx)->rows)[b];
    return x->dataset == y->dataset && x->network == y->network
        && x->optimizer == y->optimizer && x->lr == y->lr && x->bs == y->bs
        && x->run == y->run && x->epoch == y->epoch;
}

/* Every row of METRICS.csv, names interned into `names`. A repeated
 * (run, epoch) is refused as soon as it is read: a file of one row
 * repeated fails on its second row, in constant memory. */
static int read_metrics(const ws_train_import *in, ws_imp_names *names,
                        metric_row **out, size_t *n_out, ws_error *err)
{
    const char *path = in->metrics_path;
    ws_imp_col cols[M_N] = {
        {"dataset", 1, -1}, {"network", 1, -1}, {"optimizer", 1, -1},
        {"batch_size", 1, -1}, {"learning_rate", 1, -1}, {"run", 1, -1},
        {"epoch", 1, -1}, {"metric", 1, -1},
    };
    ws_csv *c = ws_csv_open(path, in->lim, err);
    if (!c) return -1;
    metric_row *rows = NULL;
    size_t n = 0, cap = 0, nf;
    int rc = -1, r = -1;
    ws_hindex seen = {0};
    const rows_ref ref = {&rows};
    if (ws_imp_header(c, path, "the header dataset,network,optimizer,"
                      "batch_size,learning_rate,run,epoch,metric", cols, M_N, err))
        goto out;
    nf = ws_csv_nfields(c);
    while ((r = ws_csv_next(c, err)) == 1) {
        long line = ws_csv_line(c);
        const char *f[M_N];
        long bs;
        double lr;
        if (ws_imp_job_row(c, path, nf, cols, M_N, f, &bs, err)) goto out;
        metric_row *grown = ws_imp_grow(rows, &cap, n, sizeof *rows, 256, err);
        if (!grown) goto out;
        rows = grown;
        metric_row *m = &rows[n++];
        memset(m, 0, sizeof *m);
        m->line = line;
        if (ws_imp_decimal(f[M_LR], &lr) || !(lr > 0)) {
            ws_fail(err, "%s:%ld: learning_rate: must be a positive number, got \"%s\"",
                    path, line, f[M_LR]);
            goto out;
        }
        if (ws_imp_posint(f[M_RUN], 1L << 40, &m->run)) {
            ws_fail(err, "%s:%ld: run: must be a positive integer, got \"%s\"", path,
                    line, f[M_RUN]);
            goto out;
        }
        if (ws_imp_posint(f[M_EPOCH], 1L << 30, &m->epoch)) {
            ws_fail(err, "%s:%ld: epoch: must be a positive integer, got \"%s\"", path,
                    line, f[M_EPOCH]);
            goto out;
        }
        if (!strcasecmp(f[M_METRIC], "nan")) {
            /* A diverged run (as PyTorch prints a NaN loss or metric): it
             * never reaches the target from this epoch on. */
            m->metric = NAN;
        } else if (ws_imp_decimal(f[M_METRIC], &m->metric)) {
            ws_fail(err, "%s:%ld: metric: must be a finite number, got \"%s\"", path,
                    line, f[M_METRIC]);
            goto out;
        }
        m->bs = (int)bs;
        if (!(m->dataset = ws_imp_intern(names, f[M_DATASET]))
            || !(m->network = ws_imp_intern(names, f[M_NETWORK]))
            || !(m->optimizer = ws_imp_intern(names, f[M_OPT]))
            || !(m->lr = ws_imp_intern(names, f[M_LR]))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        size_t first = ws_hindex_add(&seen, row_hash(m), same_row, &ref, n - 1);
        if (first == WS_HNOMEM) {
            ws_fail(err, "out of memory");
            goto out;
        }
        if (first != WS_HNONE) {
            ws_fail(err, "%s:%ld: epoch %ld of run %ld (batch_size %d) is listed twice"
                    " (also line %ld)", path, line, m->epoch, m->run, m->bs,
                    rows[first].line);
            goto out;
        }
    }
    if (r < 0) goto out;
    if (n == 0) {
        ws_fail(err, "%s:2: no rows after the header", path);
        goto out;
    }
    rc = 0;
out:
    ws_csv_close(c);
    ws_hindex_free(&seen);
    if (rc) free(rows);
    else { *out = rows; *n_out = n; }
    return rc;
}

static int cmp_run(const metric_row *x, const metric_row *y)
{
    int d;
    if ((d = strcmp(x->dataset, y->dataset))) return d;
    if ((d = strcmp(x->network, y->network))) return d;
    if ((d = strcmp(x->optimizer, y->optimizer))) return d;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    if ((d = strcmp(x->lr, y->lr))) return d;
    return (x->run > y->run) - (x->run < y->run);
}

static int cmp_metric(const void *a, const void *b)
{
    ws_join_work_add(1);
    const metric_row *x = a, *y = b;
    int d = cmp_run(x, y);
    if (d) return d;
    if (x->epoch != y->epoch) return x->epoch < y->epoch ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Runs of the output by (dataset, network, optimizer, batch size, run),
 * then learning rate: one run number at two rates are neighbours. */
static int cmp_run_number(const void *a, const void *b)
{
    ws_join_work_add(1);
    const ws_train_out_row *x = *(ws_train_out_row *const *)a;
    const ws_train_out_row *y = *(ws_train_out_row *const *)b;
    int d;
    if ((d = strcmp(x->dataset, y->dataset))) return d;
    if ((d = strcmp(x->network, y->network))) return d;
    if ((d = strcmp(x->optimizer, y->optimizer))) return d;
    if (x->bs != y->bs) return x->bs < y->bs ? -1 : 1;
    if (x->run != y->run) return x->run < y->run ? -1 : 1;
    return strcmp(x->lr, y->lr);
}

int ws_import_train(const ws_train_import *in, ws_train_table *out,
                    ws_warnings *w, ws_error *err)
{
    memset(out, 0, sizeof *out);
    out->target_text = in->target_text;
    metric_row *rows;
    size_t n;
    ws_imp_names names = {0};
    ws_train_out_row **by_number = NULL;
    if (read_metrics(in, &names, &rows, &n, err)) {
        ws_imp_names_free(&names);
        return -1;
    }
    int rc = -1;
    size_t skipped = 0, never = 0, diverged = 0;
    long first_nan = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isnan(rows[i].metric)) {
            if (!first_nan || rows[i].line < first_nan) first_nan = rows[i].line;
            continue;
        }
        if (rows[i].metric < lo) lo = rows[i].metric;
        if (rows[i].metric > hi) hi = rows[i].metric;
    }
    qsort(rows, n, sizeof *rows, cmp_metric);
    if (!(out->rows = calloc(n, sizeof *out->rows))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n;) {       /* (run, epoch) repeats were refused */
        size_t j = i + 1;
        long reached = 0;
        int gaps = rows[i].epoch != 1;
        for (; j < n && !cmp_run(&rows[i], &rows[j]); j++)
            gaps |= rows[j].epoch != rows[j - 1].epoch + 1;
        int nan_seen = 0;
        for (size_t k = i; k < j; k++) {
            if (isnan(rows[k].metric)) { nan_seen = 1; break; }    /* diverged */
            if (!reached && (in->lower_is_better ? rows[k].metric <= in->target
                                                 : rows[k].metric >= in->target))
                reached = rows[k].epoch;
        }
        diverged += nan_seen;
        skipped += gaps;
        never += !reached;
        ws_train_out_row *o = &out->rows[out->n++];
        o->bs = rows[i].bs;
        o->run = rows[i].run;
        o->target_epoch = reached;
        if (!(o->dataset = strdup(rows[i].dataset)) || !(o->network = strdup(rows[i].network))
            || !(o->optimizer = strdup(rows[i].optimizer)) || !(o->lr = strdup(rows[i].lr))) {
            ws_fail(err, "out of memory");
            goto out;
        }
        i = j;
    }
    /* The trace reader keys runs by (workload, batch size, run), whatever
     * the learning rate: the same run number at two rates would clash.
     * Sorted by run number, clashes are neighbours (n log n; a scan of
     * the later runs per run was quadratic in the runs of a batch size). */
    if (!(by_number = malloc((out->n + 1) * sizeof *by_number))) {
        ws_fail(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < out->n; i++) by_number[i] = &out->rows[i];
    qsort(by_number, out->n, sizeof *by_number, cmp_run_number);
    for (size_t i = 1; i < out->n; i++) {
        const ws_train_out_row *a = by_number[i - 1], *b = by_number[i];
        if (a->run == b->run && a->bs == b->bs && !strcmp(a->dataset, b->dataset)
            && !strcmp(a->network, b->network) && !strcmp(a->optimizer, b->optimizer)) {
            ws_fail(err, "%s: run %ld at batch_size %d of %s/%s/%s appears with"
                    " learning rates %s and %s; number runs uniquely per batch"
                    " size", in->metrics_path, a->run, a->bs, a->dataset,
                    a->network, a->optimizer, a->lr, b->lr);
            goto out;
        }
    }
    if (skipped)
        ws_warn(w, "%s: %zu of %zu run%s %s not start at epoch 1 or skip%s epochs;"
                " %s target epoch is the first evaluated epoch that reaches",
                in->metrics_path, skipped, out->n, ws_s(out->n), skipped == 1 ? "does" : "do",
                skipped == 1 ? "s" : "", skipped == 1 ? "its" : "their");
    if (diverged)
        ws_warn(w, "%s:%ld: %zu run%s a nan metric (diverged?), first here: %s the"
                " target from that epoch on", in->metrics_path, first_nan, diverged,
                diverged == 1 ? " has" : "s have", diverged == 1 ? "it never reaches"
                                                                 : "they never reach");
    /* Accuracy as a fraction against a target in percent, or the reverse:
     * no run, or every run at once, would reach it. */
    if (!in->lower_is_better && hi >= lo && in->target > 1 && in->target <= 100 && hi <= 1
        && lo >= 0)
        ws_warn(w, "%s: the metrics run from %g to %g (fractions?), but the target is %s"
                " (a percent?): pass --target-metric %g if it is", in->metrics_path, lo, hi,
                in->target_text, in->target / 100);
    else if (!in->lower_is_better && hi >= lo && in->target > 0 && in->target <= 1
             && hi > 1 && hi <= 100 && lo >= 0)
        ws_warn(w, "%s: the metrics run from %g to %g (percent?), but the target is %s"
                " (a fraction?): pass --target-metric %g if it is", in->metrics_path, lo, hi,
                in->target_text, in->target * 100);
    if (never == out->n)
        ws_warn(w, "%s: no run reaches the target %s (%s is better); check"
                " --target-metric", in->metrics_path, in->target_text,
                in->lower_is_better ? "lower" : "higher");
    rc = 0;
out:
    free(by_number);
    free(rows);
    ws_imp_names_free(&names);
    if (rc) ws_train_table_free(out);
    return rc;
}

void ws_train_table_free(ws_train_table *t)
{
    for (size_t i = 0; t && i < t->n; i++) {
        free(t->rows[i].dataset);
        free(t->rows[i].network);
        free(t->rows[i].optimizer);
        free(t->rows[i].lr);
    }
    if (t) free(t->rows);
    if (t) memset(t, 0, sizeof *t);
}

int ws_train_table_write(const ws_train_table *t, const char *path, ws_error *err)
{
    ws_outfile o;
    if (ws_imp_open_out(&o, path, err)) return -1;
    fputs("dataset,network,batch_size,optimizer,learning_rate,run,target_metric,"
          "target_epoch\n", o.f);
    for (size_t i = 0; i < t->n; i++) {
        const ws_train_out_row *r = &t->rows[i];
        ws_csv_str(o.f, r->dataset);
        fputc(',', o.f);
        ws_csv_str(o.f, r->network);
        fprintf(o.f, ",%d,", r->bs);
        ws_csv_str(o.f, r->optimizer);
        fprintf(o.f, ",%s,%ld,%s,", r->lr, r->run, t->target_text);
        if (r->target_epoch) fprintf(o.f, "%ld", r->target_epoch);
        fputc('\n', o.f);
    }
    return ws_outfile_commit(&o, err);
}
