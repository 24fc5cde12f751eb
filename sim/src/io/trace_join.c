/*
 * The join: one (dataset, network, optimizer)'s rows of loaded traces
 * (io/trace.c, through its accessors) into the job's knob table, the
 * plain arrays the engine runs on. See wattsim/trace.h for the semantics.
 *
 * Map, in file order:
 *   build      the batch sizes with train and power rows (B: the power
 *              rows' sizes merged with each target's train rows), b0
 *              capped to the GPU's largest, each batch size's knobs (its
 *              measured power limits, ascending) and recorded runs at the
 *              target (in trace order, as Zeus samples them): merge joins
 *              over the job's sorted rows, no search per row; the ws_job
 *              view and its MaxPower
 *              (ws_job_build); its search and scan steps are counted into
 *              ws_join_work
 *   profile    just-in-time profiling's figures in pandas' and numpy's
 *              order of summation (ws_job_profile)
 *   free       ws_job_free, phases included
 */
#include "wattsim/trace.h"
#include "wattsim/npreduce.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* ws_job_build, counting its own search and scan steps into *work. */
static int build(ws_job_table *jt, const ws_traces *t, const ws_workload_spec *spec,
                 double eta, double beta, unsigned long long *work, ws_error *err)
{
    memset(jt, 0, sizeof *jt);
    /* Errors about the workload itself start with where it was defined
     * (catalogue or config), when known. */
    char at[512] = "";
    if (spec->where) snprintf(at, sizeof at, "%s: ", spec->where);
    int ds = ws_traces_name_id(t, spec->dataset);
    int net = ws_traces_name_id(t, spec->network);
    int opt = ws_traces_name_id(t, spec->optimizer);
    if (ds < 0 || net < 0 || opt < 0)
        return ws_fail(err, "%s%s: workload '%s': no rows for dataset %s,"
                       " network %s, optimizer %s", at, t->train_path, spec->name,
                       spec->dataset, spec->network, spec->optimizer);

    /* B: batch sizes of (dataset, network, optimizer) present in both.
     * The job's rows are one run of each sorted table (found by binary
     * search): building a job costs its own rows, not the whole trace's
     * (trace check builds one per workload). Its power rows are sorted by
     * batch size: their distinct sizes, ascending, are the candidates
     * (bs); its train rows are sorted by target metric, then batch size:
     * each target's run is merged with the candidates (an index that goes
     * back to the first only where a target's run starts), marking those
     * with runs (has). No search per row: each row is one step. */
    size_t t0, t1, p0, p1;
    ws_traces_train_range(t, ds, net, opt, &t0, &t1);
    ws_traces_power_range(t, ds, net, opt, &p0, &p1);
    size_t nb = 0;
    int *bs = malloc((p1 - p0 + 1) * sizeof *bs);
    unsigned char *has = calloc(p1 - p0 + 1, 1);
    if (!bs || !has) {
        free(bs);
        free(has);
        return ws_fail(err, "out of memory");
    }
    for (size_t i = p0; i < p1; i++) {
        (*work)++;
        if (nb == 0 || bs[nb - 1] != t->power[i].bs) bs[nb++] = t->power[i].bs;
    }
    size_t k = 0;
    for (size_t i = t0; i < t1; i++) {
        const int b = t->train[i].bs;
        if (i > t0 && b < t->train[i - 1].bs) k = 0;      /* the next target's run */
        for (; k < nb && bs[k] < b; k++) (*work)++;
        (*work)++;
        if (k < nb && bs[k] == b) has[k] = 1;
    }
    size_t u = 0;
    for (size_t i = 0; i < nb; i++)
        if (has[i]) bs[u++] = bs[i];
    free(has);
    nb = u;
    jt->bs = bs;
    if (nb == 0)
        return ws_fail(err, "%sworkload '%s' on %s: no batch size appears in both"
                       " %s and %s", at, spec->name, t->gpu, t->train_path,
                       t->power_path);

    /* b0, capped to the largest batch size the GPU has for the workload. */
    int bmax = p1 > p0 ? t->power[p1 - 1].bs : 0;       /* sorted by bs */
    int b0 = spec->b0 < bmax ? spec->b0 : bmax;
    jt->b0_index = -1;
    for (size_t i = 0; i < nb; i++)
        if (bs[i] == b0) jt->b0_index = (int)i;
    if (jt->b0_index < 0) {
        char list[512] = "";
        for (size_t i = 0; i < nb; i++) {
            char one[16];
            snprintf(one, sizeof one, i ? ", %d" : "%d", bs[i]);
            strncat(list, one, sizeof list - strlen(list) - 1);
        }
        return ws_fail(err, "%sworkload '%s' on %s: default batch size b0 = %d"
                       " is not one of the batch sizes with train and power"
                       " rows (%s)", at, spec->name, t->gpu, b0, list);
    }

    /* Knobs and runs per batch size. */
    size_t nk = 0, nr = 0;
    jt->knob_start = malloc((nb + 1) * sizeof *jt->knob_start);
    jt->run_start = malloc((nb + 1) * sizeof *jt->run_start);
    jt->knob_pl = malloc((p1 - p0 + 1) * sizeof *jt->knob_pl);
    jt->knob_time = malloc((p1 - p0 + 1) * sizeof *jt->knob_time);
    jt->knob_power = malloc((p1 - p0 + 1) * sizeof *jt->knob_power);
    jt->knob_line = malloc((p1 - p0 + 1) * sizeof *jt->knob_line);
    jt->knob_error = malloc((p1 - p0 + 1) * sizeof *jt->knob_error);
    jt->run_epoch = malloc((t1 - t0 + 1) * sizeof *jt->run_epoch);
    int *pls = malloc((p1 - p0 + 1) * sizeof *pls);
    if (!jt->knob_start || !jt->run_start || !jt->knob_pl || !jt->knob_time
        || !jt->knob_power || !jt->knob_line || !jt->knob_error || !jt->run_epoch || !pls) {
        free(pls);
        return ws_fail(err, "out of memory");
    }
    /* The workload's train rows at its target are one sorted run (by batch
     * size, then run): found by binary search, walked once with the batch
     * sizes (ascending) -- a merge join. */
    const ws_train_row key = {.dataset = ds, .network = net, .optimizer = opt,
                              .target_metric = spec->target_metric, .bs = INT_MIN};
    size_t tr = 0, hi = t->n_train;
    while (tr < hi) {
        (*work)++;
        size_t mid = tr + (hi - tr) / 2;
        const ws_train_row *r = &t->train[mid];
        int less = r->dataset != ds ? r->dataset < ds : r->network != net ? r->network < net
                 : r->optimizer != opt ? r->optimizer < opt
                 : r->target_metric != spec->target_metric ? r->target_metric < spec->target_metric
                 : r->bs < key.bs;
        if (less) tr = mid + 1; else hi = mid;
    }
    /* The power rows, walked once with the batch sizes (ascending): a
     * merge join too. */
    const ws_power_row *p = t->power + p0, *const p_end = t->power + p1;
    for (size_t i = 0; i < nb; i++) {
        jt->knob_start[i] = (int)nk;
        for (; p < p_end && p->bs < bs[i]; p++) (*work)++;
        for (; p < p_end && p->bs == bs[i]; p++) {
            (*work)++;
            jt->knob_pl[nk] = p->pl;
            jt->knob_time[nk] = p->time;
            jt->knob_power[nk] = p->power;
            jt->knob_line[nk] = p->line;
            jt->knob_error[nk] = p->energy_error;
            pls[nk] = p->pl;
            nk++;
        }
        jt->run_start[i] = (int)nr;
        for (; tr < t->n_train; tr++) {
            (*work)++;
            const ws_train_row *r = &t->train[tr];
            if (r->dataset != ds || r->network != net || r->optimizer != opt
                || r->target_metric != spec->target_metric || r->bs > bs[i])
                break;
            if (r->bs == bs[i]) jt->run_epoch[nr++] = r->target_epoch;
        }
        if ((int)nr == jt->run_start[i]) {
            free(pls);
            return ws_fail(err, "%s: workload '%s' has no runs at batch size %d"
                           " for target_metric %g (other target metrics have"
                           " some); add the rows or pick another target",
                           t->train_path, spec->name, bs[i], spec->target_metric);
        }
    }
    jt->knob_start[nb] = (int)nk;
    jt->run_start[nb] = (int)nr;
    qsort(pls, nk, sizeof *pls, cmp_int);
    int np = 0;
    for (size_t i = 0; i < nk; i++)
        if (i == 0 || pls[i] != pls[i - 1]) np++;
    free(pls);

    jt->workload = strdup(spec->name);
    jt->gpu = strdup(t->gpu);
    jt->dataset = strdup(spec->dataset);
    jt->network = strdup(spec->network);
    jt->optimizer = strdup(spec->optimizer);
    if (!jt->workload || !jt->gpu || !jt->dataset || !jt->network || !jt->optimizer)
        return ws_fail(err, "out of memory");
    jt->n_pl_distinct = np;
    jt->default_recurrences = 2L * (long)nb * np;

    ws_job *j = &jt->job;
    j->abi_version = WS_ABI_VERSION;
    j->workload = jt->workload;
    j->gpu = jt->gpu;
    j->dataset = jt->dataset;
    j->network = jt->network;
    j->optimizer = jt->optimizer;
    j->target_metric = spec->target_metric;
    j->eta = eta;
    j->beta = beta;
    /* The job's MaxPower: its rows sum gpus_per_job GPUs (one value for
     * all of them, checked as loaded), each limited to the GPU's largest
     * limit, as Zeus's client sets max_power = limit x number of GPUs. */
    j->gpus_per_job = t->power[p0].gpus;
    /* ... or the catalogue's or the job's, where the trace does not say */
    if (spec->gpus_per_job > 0) {
        if (t->has_gpus_column && spec->gpus_per_job != j->gpus_per_job)
            return ws_fail(err, "%s%s: gpus_per_job is %d, but %s:%ld says %d for dataset"
                           " %s, network %s, optimizer %s: the workload's gpus_per_job and"
                           " the power trace's column must agree (give it in one place)",
                           at, spec->name, spec->gpus_per_job, t->power_path,
                           t->power[p0].line, j->gpus_per_job, spec->dataset,
                           spec->network, spec->optimizer);
        j->gpus_per_job = spec->gpus_per_job;
    }
    j->max_power = t->max_power * (double)j->gpus_per_job;
    /* ... unless its GPUs' limits differ (a node of mixed models): then
     * the sum of their own, as the import wrote it (the column sits with
     * gpus_per_job, so the workload's gpus_per_job agreed with it above) */
    jt->max_power_summed = t->power[p0].job_max_power > 0;
    if (jt->max_power_summed) j->max_power = t->power[p0].job_max_power;
    j->max_epochs = spec->max_epochs;
    j->b0 = b0;
    j->concurrent = 0;
    j->n_bs = (int)nb;
    j->bs = jt->bs;
    j->knob_start = jt->knob_start;
    j->knob_pl = jt->knob_pl;
    j->knob_time = jt->knob_time;
    j->knob_power = jt->knob_power;
    j->run_start = jt->run_start;
    j->run_epoch = jt->run_epoch;
    return ws_job_profile(jt, err);
}

int ws_job_build(ws_job_table *jt, const ws_traces *t,
                 const ws_workload_spec *spec, double eta, double beta,
                 ws_error *err)
{
    unsigned long long work = 0;
    int rc = build(jt, t, spec, eta, beta, &work, err);
    ws_join_work_add(work);
    return rc;
}

/* The knobs of batch-size index i in power trace order (insertion sort:
 * a batch size has a handful of limits). */
static void knobs_in_file_order(const ws_job_table *jt, int i, int *order)
{
    const int k0 = jt->knob_start[i], n = jt->knob_start[i + 1] - k0;
    for (int q = 0; q < n; q++) {
        int at = q;
        while (at > 0 && jt->knob_line && jt->knob_line[order[at - 1]] > jt->knob_line[k0 + q]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = k0 + q;
    }
}

int ws_job_profile(ws_job_table *jt, ws_error *err)
{
    const ws_job *j = &jt->job;
    const int nb = j->n_bs, nk = j->knob_start[nb];
    size_t most = 1;               /* the largest R x P of any batch size */
    int most_knobs = 1;
    for (int i = 0; i < nb; i++) {
        const int nr = j->run_start[i + 1] - j->run_start[i];
        const int np = j->knob_start[i + 1] - j->knob_start[i];
        if ((size_t)nr * (size_t)np > most) most = (size_t)nr * (size_t)np;
        if (np > most_knobs) most_knobs = np;
    }
    free(jt->profile_power);
    free(jt->profile_time);
    free(jt->first_epoch_energy);
    free(jt->first_epoch_time);
    jt->profile_power = malloc((size_t)(nk + 1) * sizeof *jt->profile_power);
    jt->profile_time = malloc((size_t)(nk + 1) * sizeof *jt->profile_time);
    jt->first_epoch_energy = malloc((size_t)(nb + 1) * sizeof *jt->first_epoch_energy);
    jt->first_epoch_time = malloc((size_t)(nb + 1) * sizeof *jt->first_epoch_time);
    double *rows = malloc(most * sizeof *rows);
    int *order = malloc((size_t)most_knobs * sizeof *order);
    if (!jt->profile_power || !jt->profile_time || !jt->first_epoch_energy
        || !jt->first_epoch_time || !rows || !order) {
        free(rows);
        free(order);
        return ws_fail(err, "out of memory");
    }
    for (int i = 0; i < nb; i++) {
        const size_t nr = (size_t)(j->run_start[i + 1] - j->run_start[i]);
        const int k0 = j->knob_start[i], np = j->knob_start[i + 1] - k0;
        for (int k = k0; k < k0 + np; k++) {
            for (size_t r = 0; r < nr; r++) rows[r] = j->knob_power[k];
            jt->profile_power[k] = ws_pd_group_mean(rows, nr);
            for (size_t r = 0; r < nr; r++) rows[r] = j->knob_time[k];
            jt->profile_time[k] = ws_pd_group_mean(rows, nr);
        }
        /* The joined rows of bs: each run, then every limit of it. */
        knobs_in_file_order(jt, i, order);
        size_t n = 0;
        for (size_t r = 0; r < nr; r++)
            for (int q = 0; q < np; q++)
                rows[n++] = j->knob_time[order[q]] * j->knob_power[order[q]];
        jt->first_epoch_energy[i] = ws_np_mean(rows, n);
        n = 0;
        for (size_t r = 0; r < nr; r++)
            for (int q = 0; q < np; q++) rows[n++] = j->knob_time[order[q]];
        jt->first_epoch_time[i] = ws_np_mean(rows, n);
    }
    free(rows);
    free(order);
    jt->job.profile_power = jt->profile_power;
    jt->job.profile_time = jt->profile_time;
    jt->job.first_epoch_energy = jt->first_epoch_energy;
    jt->job.first_epoch_time = jt->first_epoch_time;
    return 0;
}

void ws_job_free(ws_job_table *jt)
{
    if (!jt) return;
    free(jt->workload);
    free(jt->gpu);
    free(jt->dataset);
    free(jt->network);
    free(jt->optimizer);
    free(jt->bs);
    free(jt->knob_start);
    free(jt->knob_pl);
    free(jt->knob_time);
    free(jt->knob_power);
    free(jt->knob_line);
    free(jt->knob_error);
    free(jt->run_start);
    free(jt->run_epoch);
    free(jt->profile_power);
    free(jt->profile_time);
    free(jt->first_epoch_energy);
    free(jt->first_epoch_time);
    for (size_t i = 0; jt->phase && i < jt->n_phases; i++) ws_job_free(&jt->phase[i]);
    free(jt->phase);
    free(jt->phase_from);
    memset(jt, 0, sizeof *jt);
}
