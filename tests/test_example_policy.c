/*
 * The worked example policies/example/capped.c builds against policy.h
 * ALONE (copied into an empty include folder, as after `make install`),
 * loads as a plugin and caps the power limit.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"
#include "wattsim/engine.h"

static int check_cap(void *ctx, const ws_run_record *r)
{
    cr_expect_leq(r->pl, 150, "run at %d W over the 150 W cap", r->pl);
    (*(int *)ctx)++;
    return 0;
}

Test(example_policy, builds_standalone_and_caps_power, .timeout = 120)
{
    char dir[] = "/tmp/ws-example-XXXXXX", cmd[2048], so[128];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/include/wattsim && cp " WS_SOURCE_DIR "/sim/include/wattsim/policy.h"
             " %s/include/wattsim/ && cc -std=c17 -Wall -Wextra -Werror -Wno-unused-parameter"
             " -O2 -fPIC -shared -I%s/include -o %s/capped.so " WS_SOURCE_DIR
             "/policies/example/capped.c", dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "building the example failed: %s", cmd);
    snprintf(so, sizeof so, "%s/capped.so", dir);

    ws_error err = {{0}};
    ws_registry *reg = ws_registry_new();
    const ws_plo_type *pt = ws_registry_plo(reg, so, &err);
    cr_assert(pt, "%s", err.msg);
    cr_expect_str_eq(pt->name, "capped");
    ws_param_raw raw = {(char *)"max_watts", (char *)"150", (char *)"test"};
    ws_value *pv = NULL;
    cr_assert_eq(ws_params_resolve(pt->params, &raw, 1, "plo capped", &pv, &err), 0, "%s", err.msg);
    cr_expect_eq(pv[0].i, 150);

    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_bso *b = ws_bso_new(fixture_bso(reg, "default"), NULL, 1, &err);
    ws_plo *p = ws_plo_new(pt, pv, 1, &err);
    cr_assert(b && p, "%s", err.msg);
    ws_sim_params sp = {.recurrences = 4, .seed = 1};
    ws_sim_totals tot;
    int runs = 0;
    cr_assert_eq(ws_simulate(&jt.job, b, p, &sp, check_cap, &runs, &tot, &err), 0, "%s", err.msg);
    cr_expect_eq(runs, 4);
    /* b0 = 32 at 100 W (the only limit under the cap): 5 epochs of 12 s at
     * 90 W: E = 5400, T = 60, cost = 2700 + 6000 = 8700 per run. */
    cr_expect_float_eq(tot.cost, 4 * 8700.0, 1e-9);
    cr_expect_eq(tot.final_pl, 100);

    ws_bso_free(b);
    ws_plo_free(p);
    ws_params_free(pt->params, pv);
    ws_registry_free(reg);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}
