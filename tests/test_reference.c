/*
 * wattsim against figures measured with the published Zeus simulator
 * (tests/data/reference, copied from ../shared/reference):
 *  - the knob landscape (pareto) of every V100 workload, exactly (1e-9);
 *  - zeus + jit at eta 0.5, beta 2, seeds 1-20, all six V100 workloads:
 *    the published simulator's own histories, run for run (batch size,
 *    power limit and reached equal; energy and time to 1e-9 relative, and
 *    counted when they are not the same bits);
 *  - zeus + jit at eta 0.5, beta 2: the mean over 100 seeds of total
 *    energy, time and number of runs within max(1 %, 4 standard errors of
 *    the difference) of the reference mean over its 20 seeds.
 * Needs the fetched Zeus traces (scripts/fetch-traces; scripts/test does it).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/engine.h"
#include "wattsim/pareto.h"
#include "wattsim/plugin.h"
#include "wattsim/trace.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define REF WS_SOURCE_DIR "/tests/data/reference"

static ws_catalogue cat;
static ws_traces v100;

static void setup(void)
{
    ws_error err = {{0}};
    cr_assert_eq(ws_catalogue_load(WS_SOURCE_DIR "/configs/workloads.yaml", &cat, &err), 0,
                 "%s", err.msg);
    cr_assert_eq(ws_traces_load(&v100, TRACES, "v100", NULL, &err), 0,
                 "%s (run scripts/fetch-traces)", err.msg);
}

static void teardown(void)
{
    ws_traces_free(&v100);
    ws_catalogue_free(&cat);
}

/* Column index by header name. */
static size_t col(ws_csv *c, const char *name, char **hdr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(hdr[i], name)) return i;
    cr_assert_fail("no column %s in %s", name, ws_csv_path(c));
    return 0;
}

static void rel_eq(double got, double want, const char *what, const char *where)
{
    double tol = 1e-9 * fmax(1.0, fabs(want));
    cr_expect(fabs(got - want) <= tol, "%s: %s = %.17g, reference %.17g", where, what, got, want);
}

Test(reference, pareto_v100_all_workloads, .init = setup, .fini = teardown, .timeout = 60)
{
    ws_error err = {{0}};
    ws_csv *c = ws_csv_open(REF "/pareto-v100.csv", NULL, &err);
    cr_assert(c, "%s", err.msg);
    cr_assert_eq(ws_csv_next(c, &err), 1);
    size_t nh = ws_csv_nfields(c);
    char **h = calloc(nh, sizeof *h);
    for (size_t i = 0; i < nh; i++) h[i] = strdup(ws_csv_field(c, i));
    size_t cw = col(c, "workload", h, nh), ce = col(c, "eta", h, nh), cb = col(c, "bs", h, nh),
           cp = col(c, "pl", h, nh), cr = col(c, "runs", h, nh), cre = col(c, "reached", h, nh),
           ct = col(c, "time_per_epoch", h, nh), cpw = col(c, "average_power", h, nh),
           cep = col(c, "epochs", h, nh), ctta = col(c, "tta", h, nh),
           ceta = col(c, "eta_j", h, nh), cf = col(c, "frontier", h, nh),
           cd = col(c, "default", h, nh), cbest = col(c, "best", h, nh),
           cj = col(c, "jit", h, nh);
    char cur[64] = "";
    double cur_eta = -1;
    ws_job_table jt = {0};
    ws_pareto p = {0};
    int k = 0, rows = 0, frontier_rows = 0;
    while (ws_csv_next(c, &err) == 1) {
        const char *w = ws_csv_field(c, cw);
        double eta = atof(ws_csv_field(c, ce));
        if (strcmp(w, cur) || eta != cur_eta) {
            if (cur[0]) cr_expect_eq(k, p.n, "%s: %d knobs in the reference, %d here", cur, k, p.n);
            ws_pareto_free(&p);
            ws_job_free(&jt);
            const ws_workload_spec *spec = ws_catalogue_find(&cat, w);
            cr_assert(spec, "workload %s not in the catalogue", w);
            cr_assert_eq(ws_job_build(&jt, &v100, spec, eta, 2.0, &err), 0, "%s", err.msg);
            cr_assert_eq(ws_pareto_compute(&jt.job, &p, &err), 0, "%s", err.msg);
            snprintf(cur, sizeof cur, "%s", w);
            cur_eta = eta;
            k = 0;
        }
        char where[96];
        snprintf(where, sizeof where, "%s eta %g bs %s pl %s", w, eta, ws_csv_field(c, cb),
                 ws_csv_field(c, cp));
        cr_assert_lt(k, p.n, "%s: more knobs in the reference", where);
        const ws_knob_stat *s = &p.knobs[k++];
        cr_expect_eq(s->bs, atoi(ws_csv_field(c, cb)), "%s: bs %d", where, s->bs);
        cr_expect_eq(s->pl, atoi(ws_csv_field(c, cp)), "%s: pl %d", where, s->pl);
        cr_expect_eq(s->runs, atoi(ws_csv_field(c, cr)), "%s: runs", where);
        cr_expect_eq(s->reached, atoi(ws_csv_field(c, cre)), "%s: reached", where);
        rel_eq(s->time_per_epoch, atof(ws_csv_field(c, ct)), "time_per_epoch", where);
        rel_eq(s->average_power, atof(ws_csv_field(c, cpw)), "average_power", where);
        if (*ws_csv_field(c, cep)) {
            rel_eq(s->epochs, atof(ws_csv_field(c, cep)), "epochs", where);
            rel_eq(s->tta, atof(ws_csv_field(c, ctta)), "tta", where);
            rel_eq(s->eta, atof(ws_csv_field(c, ceta)), "eta", where);
        } else {
            cr_expect(isnan(s->tta), "%s: no run reaches, tta should be NaN", where);
        }
        cr_expect_eq(s->frontier, atoi(ws_csv_field(c, cf)), "%s: frontier", where);
        cr_expect_eq(s->is_default, atoi(ws_csv_field(c, cd)), "%s: default", where);
        cr_expect_eq(s->is_best, atoi(ws_csv_field(c, cbest)), "%s: best", where);
        cr_expect_eq(s->is_jit, atoi(ws_csv_field(c, cj)), "%s: jit", where);
        frontier_rows += s->frontier;
        rows++;
    }
    cr_expect_eq(k, p.n, "%s: %d knobs in the reference, %d here", cur, k, p.n);
    cr_expect_eq(rows, 1155, "reference rows read");
    cr_expect_gt(frontier_rows, 0);
    ws_pareto_free(&p);
    ws_job_free(&jt);
    for (size_t i = 0; i < nh; i++) free(h[i]);
    free(h);
    ws_csv_close(c);
}

/* Mean and sample variance of a series. */
typedef struct moments { double n, sum, sumsq; } moments;
static void add(moments *m, double x) { m->n++; m->sum += x; m->sumsq += x * x; }
static double mean(const moments *m) { return m->sum / m->n; }
static double var(const moments *m) { return (m->sumsq - m->sum * m->sum / m->n) / (m->n - 1); }

static void agree(const char *w, const char *what, const moments *ours, double ref_mean,
                  double ref_sd, double ref_n)
{
    double se = sqrt(var(ours) / ours->n + ref_sd * ref_sd / ref_n);
    double tol = fmax(0.01 * fabs(ref_mean), 4 * se);
    double d = mean(ours) - ref_mean;
    cr_expect(fabs(d) <= tol, "%s: mean %s %.6g vs reference %.6g: off by %.3g %% (allowed %.3g %%)",
              w, what, mean(ours), ref_mean, 100 * d / ref_mean, 100 * tol / fabs(ref_mean));
}

Test(reference, zeus_jit_v100_eta05_beta2_100_seeds, .init = setup, .fini = teardown,
     .timeout = 300)
{
    ws_error err = {{0}};
    ws_registry *reg = ws_registry_new();
    const ws_bso_type *bt = ws_registry_bso(reg, "zeus", &err);
    cr_assert(bt, "%s", err.msg);
    const ws_plo_type *pt = ws_registry_plo(reg, "jit", &err);
    cr_assert(pt, "%s", err.msg);
    ws_value *bp = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso zeus", &bp, &err), 0);

    ws_csv *c = ws_csv_open(REF "/zeus-v100-eta0.5.csv", NULL, &err);
    cr_assert(c, "%s", err.msg);
    cr_assert_eq(ws_csv_next(c, &err), 1);
    size_t nh = ws_csv_nfields(c);
    char **h = calloc(nh, sizeof *h);
    for (size_t i = 0; i < nh; i++) h[i] = strdup(ws_csv_field(c, i));
    size_t cw = col(c, "workload", h, nh), cs = col(c, "seeds", h, nh),
           cb0 = col(c, "b0", h, nh), crec = col(c, "recurrences", h, nh),
           cem = col(c, "energy_mean", h, nh), ces = col(c, "energy_sd", h, nh),
           ctm = col(c, "time_mean", h, nh), cts = col(c, "time_sd", h, nh),
           crm = col(c, "runs_mean", h, nh), crs = col(c, "runs_sd", h, nh);
    int workloads = 0;
    while (ws_csv_next(c, &err) == 1) {
        const char *w = ws_csv_field(c, cw);
        const ws_workload_spec *spec = ws_catalogue_find(&cat, w);
        cr_assert(spec, "workload %s not in the catalogue", w);
        ws_job_table jt;
        cr_assert_eq(ws_job_build(&jt, &v100, spec, 0.5, 2.0, &err), 0, "%s", err.msg);
        cr_expect_eq(jt.job.b0, atoi(ws_csv_field(c, cb0)), "%s: b0", w);
        cr_expect_eq(jt.default_recurrences, atol(ws_csv_field(c, crec)), "%s: recurrences", w);
        moments e = {0}, t = {0}, r = {0};
        for (unsigned long seed = 1; seed <= 100; seed++) {
            ws_bso *b = ws_bso_new(bt, bp, seed, &err);
            ws_plo *p = ws_plo_new(pt, NULL, seed, &err);
            cr_assert(b && p, "%s", err.msg);
            ws_sim_params sp = {.recurrences = jt.default_recurrences, .seed = seed};
            ws_sim_totals tot;
            cr_assert_eq(ws_simulate(&jt.job, b, p, &sp, NULL, NULL, &tot, &err), 0,
                         "%s seed %lu: %s", w, seed, err.msg);
            add(&e, tot.energy_j);
            add(&t, tot.time_s);
            add(&r, (double)tot.runs);
            cr_expect_eq(tot.recurrences, jt.default_recurrences);
            ws_plo_free(p);
            ws_bso_free(b);
        }
        double n = atof(ws_csv_field(c, cs));
        agree(w, "energy", &e, atof(ws_csv_field(c, cem)), atof(ws_csv_field(c, ces)), n);
        agree(w, "time", &t, atof(ws_csv_field(c, ctm)), atof(ws_csv_field(c, cts)), n);
        agree(w, "runs", &r, atof(ws_csv_field(c, crm)), atof(ws_csv_field(c, crs)), n);
        ws_job_free(&jt);
        workloads++;
    }
    cr_expect_eq(workloads, 6);
    for (size_t i = 0; i < nh; i++) free(h[i]);
    free(h);
    ws_csv_close(c);
    ws_params_free(bt->params, bp);
    ws_registry_free(reg);
}

/* ------------------------------------------------ run for run */

/* The whole of a gzip file, NUL-terminated. */
static char *slurp_gz(const char *path)
{
    gzFile f = gzopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t n = 0, cap = 1 << 20;
    char *buf = malloc(cap);
    int got;
    while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)got;
        if (cap - n < 2) buf = realloc(buf, cap *= 2);
    }
    cr_assert_not_null(buf);
    cr_assert_eq(gzclose(f), Z_OK, "%s: corrupt", path);
    buf[n] = '\0';
    return buf;
}

/* Every (workload, seed) of the published simulator's histories, each run
 * compared: seed for seed, the same runs. */
Test(reference, zeus_jit_v100_eta05_histories_run_for_run, .init = setup, .fini = teardown,
     .timeout = 120)
{
    ws_error err = {{0}};
    ws_registry *reg = ws_registry_new();
    const ws_bso_type *bt = ws_registry_bso(reg, "zeus", &err);
    const ws_plo_type *pt = ws_registry_plo(reg, "jit", &err);
    cr_assert(bt && pt, "%s", err.msg);
    ws_value *bp = NULL;
    cr_assert_eq(ws_params_resolve(bt->params, NULL, 0, "bso zeus", &bp, &err), 0);
    char *text = slurp_gz(REF "/zeus-v100-eta0.5-histories.jsonl.gz");
    static fixture_runs h;
    int sims = 0, workloads_seen = 0;
    long runs = 0, not_same_bits = 0;
    char seen[8][64];
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert_not_null(o, "line %d: %s", sims + 1, je.text);
        const char *w = json_string_value(json_object_get(o, "workload"));
        const long seed = (long)json_integer_value(json_object_get(o, "seed"));
        const json_t *ref = json_object_get(o, "history");
        cr_assert(w && json_is_array(ref));
        cr_assert_str_eq(json_string_value(json_object_get(o, "gpu")), "v100");
        cr_assert_eq(json_real_value(json_object_get(o, "eta")), 0.5);
        cr_assert_eq(json_real_value(json_object_get(o, "beta")), 2.0);
        int known = 0;
        for (int q = 0; q < workloads_seen; q++) known |= !strcmp(seen[q], w);
        if (!known && workloads_seen < 8) snprintf(seen[workloads_seen++], 64, "%s", w);
        const ws_workload_spec *spec = ws_catalogue_find(&cat, w);
        cr_assert(spec, "workload %s not in the catalogue", w);
        ws_job_table jt;
        cr_assert_eq(ws_job_build(&jt, &v100, spec, 0.5, 2.0, &err), 0, "%s", err.msg);
        cr_expect_eq(jt.default_recurrences,
                     (long)json_integer_value(json_object_get(o, "recurrences")));
        ws_bso *b = ws_bso_new(bt, bp, (unsigned long)seed, &err);
        ws_plo *p = ws_plo_new(pt, NULL, (unsigned long)seed, &err);
        cr_assert(b && p, "%s", err.msg);
        ws_sim_params sp = {.recurrences = jt.default_recurrences, .seed = (unsigned long)seed};
        ws_sim_totals tot;
        h.n = 0;
        cr_assert_eq(ws_simulate(&jt.job, b, p, &sp, fixture_keep, &h, &tot, &err), 0, "%s", err.msg);
        cr_assert_eq(h.n, (int)json_array_size(ref), "%s seed %ld: %d runs, Zeus %zu", w, seed,
                     h.n, json_array_size(ref));
        for (int k = 0; k < h.n; k++) {
            const json_t *e = json_array_get(ref, (size_t)k);
            const ws_run_record *r = &h.r[k];
            const int bs = (int)json_integer_value(json_array_get(e, 0));
            const int pl = (int)json_integer_value(json_array_get(e, 1));
            const double E = json_real_value(json_array_get(e, 2));
            const double T = json_real_value(json_array_get(e, 3));
            const int reached = json_is_true(json_array_get(e, 4));
            cr_assert(r->bs == bs && r->pl == pl && r->reached == reached,
                      "%s seed %ld run %d: bs %d pl %d reached %d; Zeus %d %d %d", w, seed,
                      k + 1, r->bs, r->pl, r->reached, bs, pl, reached);
            char where[96];
            snprintf(where, sizeof where, "%s seed %ld run %d", w, seed, k + 1);
            rel_eq(r->energy_j, E, "energy", where);
            rel_eq(r->time_s, T, "time", where);
            not_same_bits += r->energy_j != E || r->time_s != T;
        }
        runs += h.n;
        sims++;
        ws_plo_free(p);
        ws_bso_free(b);
        ws_job_free(&jt);
        json_decref(o);
    }
    cr_expect_eq(sims, 120);
    cr_expect_eq(workloads_seen, 6);
    cr_log_info("%d simulations, %ld runs equal to Zeus'; %ld not to the bit", sims, runs,
                not_same_bits);
    cr_expect_eq(not_same_bits, 0, "runs whose energy or time is not Zeus' bits");
    free(text);
    ws_params_free(bt->params, bp);
    ws_registry_free(reg);
}
