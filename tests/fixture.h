/*
 * A tiny hand-made trace for engine and policy tests, small enough to
 * compute every number by hand (see test_engine.c for the worked values).
 *
 *   workload w: dataset d, network n, optimizer o, target 0.5,
 *               max 10 epochs, b0 32; MaxPower 200 W
 *   bs  pl   time/epoch  power   runs (target epochs)
 *   16  100  20          80      4, 4
 *   16  200  15          150
 *   32  100  12          90      5, 5
 *   32  200  10          160
 *   64  100   8          95      12, 12 (never within 10 epochs)
 *   64  200   7          190
 */
#ifndef WS_TEST_FIXTURE_H
#define WS_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "wattsim/trace.h"

static inline void fixture_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Write the tiny trace into a fresh temp folder; returns its path (static). */
static inline const char *fixture_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/ws-fixture-XXXXXX");
    cr_assert(mkdtemp(dir), "mkdtemp");
    char p[128];
    snprintf(p, sizeof p, "%s/summary_train.csv", dir);
    fixture_write(p,
        "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
        "d,n,16,o,0.1,1,0.5,4\nd,n,16,o,0.1,2,0.5,4\n"
        "d,n,32,o,0.1,1,0.5,5\nd,n,32,o,0.1,2,0.5,5\n"
        "d,n,64,o,0.1,1,0.5,12\nd,n,64,o,0.1,2,0.5,12\n"
        "d,n,32,o,0.1,1,0.6,nan\nd,n,32,o,0.1,2,0.6,\n");
    snprintf(p, sizeof p, "%s/summary_power_g1.csv", dir);
    fixture_write(p,
        "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
        "d,n,16,o,100,20,80\nd,n,16,o,200,15,150\n"
        "d,n,32,o,100,12,90\nd,n,32,o,200,10,160\n"
        "d,n,64,o,100,8,95\nd,n,64,o,200,7,190\n");
    return dir;
}

/* The runs a simulation reports, in order: fixture_keep is the run sink
 * (ws_run_sink) that appends to a fixture_runs; more runs than it holds
 * fail the test. */
#define FIXTURE_MAX_RUNS 512
typedef struct fixture_runs {
    ws_run_record r[FIXTURE_MAX_RUNS];
    int n;
} fixture_runs;

static inline int fixture_keep(void *ctx, const ws_run_record *r)
{
    fixture_runs *k = ctx;
    cr_assert_lt(k->n, FIXTURE_MAX_RUNS);
    k->r[k->n++] = *r;
    return 0;
}

static inline void fixture_rmdir(const char *dir)
{
    char p[160];
    const char *names[] = {"summary_train.csv", "summary_power_g1.csv"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static const ws_workload_spec fixture_spec = {
    .name = (char *)"w", .dataset = (char *)"d", .network = (char *)"n",
    .optimizer = (char *)"o", .target_metric = 0.5, .max_epochs = 10, .b0 = 32};

/* Load the fixture and build its job table at (eta, beta). */
static inline void fixture_job(ws_traces *tr, ws_job_table *jt, double eta, double beta)
{
    ws_error err = {{0}};
    const char *dir = fixture_dir();
    cr_assert_eq(ws_traces_load(tr, dir, "g1", NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_job_build(jt, tr, &fixture_spec, eta, beta, &err), 0, "%s", err.msg);
    fixture_rmdir(dir);
}

/* Built-in policy descriptors (the registry must outlive them). */
static inline const ws_bso_type *fixture_bso(ws_registry *reg, const char *name)
{
    ws_error err = {{0}};
    const ws_bso_type *t = ws_registry_bso(reg, name, &err);
    cr_assert(t, "%s", err.msg);
    return t;
}

static inline const ws_plo_type *fixture_plo(ws_registry *reg, const char *name)
{
    ws_error err = {{0}};
    const ws_plo_type *t = ws_registry_plo(reg, name, &err);
    cr_assert(t, "%s", err.msg);
    return t;
}

#endif
