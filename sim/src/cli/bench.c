/*
 * wattsim-bench: simulation speed, recurrences per second on one core, for
 * a BSO/PLO pair (default zeus + jit) on every workload of a GPU. Each
 * workload runs seeds 1, 2, ... with default recurrences until at least
 * --seconds of wall time have passed. Not a test: figures depend on the
 * machine; scripts/bench runs it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "wattsim/trace.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: wattsim-bench [--gpu G] [--bso NAME] [--plo NAME] [--eta X] [--beta X]\n"
            "                     [--seconds S] [--traces DIR] [--catalogue FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *gpu = "v100", *bso_name = "zeus", *plo_name = "jit";
    const char *traces = getenv("WATTSIM_TRACES"), *catalogue = getenv("WATTSIM_CATALOGUE");
    double eta = 0.5, beta = 2.0, seconds = 1.0;
    if (!traces || !*traces) traces = WS_DEFAULT_TRACES;
    if (!catalogue || !*catalogue) catalogue = WS_DEFAULT_CATALOGUE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) { usage(); return 0; }
        if (!v) return usage();
        if (!strcmp(a, "--gpu")) gpu = v;
        else if (!strcmp(a, "--bso")) bso_name = v;
        else if (!strcmp(a, "--plo")) plo_name = v;
        else if (!strcmp(a, "--eta")) eta = atof(v);
        else if (!strcmp(a, "--beta")) beta = strtod(v, NULL);
        else if (!strcmp(a, "--seconds")) seconds = atof(v);
        else if (!strcmp(a, "--traces")) traces = v;
        else if (!strcmp(a, "--catalogue")) catalogue = v;
        else return usage();
        i++;
    }
    ws_error err = {{0}};
    ws_catalogue cat = {0};
    ws_traces tr = {0};
    ws_registry *reg = ws_registry_new();
    int rc = 2;
    const ws_bso_type *bt = NULL;
    const ws_plo_type *pt = NULL;
    ws_value *bp = NULL, *pp = NULL;
    if (ws_catalogue_load(catalogue, &cat, &err) || ws_traces_load(&tr, traces, gpu, NULL, &err)
        || !(bt = ws_registry_bso(reg, bso_name, &err))
        || !(pt = ws_registry_plo(reg, plo_name, &err))
        || ws_params_resolve(bt->params, NULL, 0, "bso", &bp, &err)
        || ws_params_resolve(pt->params, NULL, 0, "plo", &pp, &err))
        goto out;
    printf("wattsim-bench: %s + %s on %s, eta %g, beta %g, one core, >= %g s per workload\n",
           bt->name, pt->name, gpu, eta, beta, seconds);
    printf("%-14s %6s %8s %12s %14s %12s\n", "workload", "recur", "seeds", "recurrences",
           "recur_per_s", "us_per_sim");
    double total_rec = 0, total_t = 0;
    for (size_t w = 0; w < cat.n; w++) {
        ws_job_table jt;
        if (ws_job_build(&jt, &tr, &cat.items[w], eta, beta, &err)) {
            ws_job_free(&jt);
            goto out;
        }
        ws_sim_params sp = {.recurrences = jt.default_recurrences, .seed = 0};
        long seeds = 0, recs = 0;
        double t0 = now(), t;
        do {
            sp.seed = (unsigned long)++seeds;
            ws_bso *b = ws_bso_new(bt, bp, sp.seed, &err);
            ws_plo *p = b ? ws_plo_new(pt, pp, sp.seed, &err) : NULL;
            ws_sim_totals tot;
            int bad = !b || !p || ws_simulate(&jt.job, b, p, &sp, NULL, NULL, &tot, &err);
            ws_plo_free(p);
            ws_bso_free(b);
            if (bad) { ws_job_free(&jt); goto out; }
            recs += tot.recurrences;
            t = now() - t0;
        } while (t < seconds);
        printf("%-14s %6ld %8ld %12ld %14.0f %12.2f\n", cat.items[w].name,
               jt.default_recurrences, seeds, recs, (double)recs / t, 1e6 * t / (double)seeds);
        total_rec += (double)recs;
        total_t += t;
        ws_job_free(&jt);
    }
    printf("%-14s %6s %8s %12.0f %14.0f\n", "all", "", "", total_rec, total_rec / total_t);
    rc = 0;
out:
    if (rc) fprintf(stderr, "wattsim-bench: %s\n", err.msg);
    if (bt) ws_params_free(bt->params, bp);
    if (pt) ws_params_free(pt->params, pp);
    ws_traces_free(&tr);
    ws_catalogue_free(&cat);
    ws_registry_free(reg);
    return rc;
}
