/*
 * Misbehaving policies (issue 4): every wrong answer of a plugin -- a
 * batch size outside the job's set (negative, zero, unlisted, unwritten),
 * a power limit outside the set for that size (negative, unmeasured,
 * huge), no answer after profiling, a failing call, a NaN parameter --
 * ends the run with one line naming the policy and the call, and nothing
 * the policy said is taken as a result. The broken plugins are in
 * tests/plugins/ (answer_bs, answer_pl, fail_calls, crash).
 *
 * The job is tests/fixture.h's: batch sizes 16, 32, 64; limits 100 and
 * 200 W for each; b0 32.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "wattsim/engine.h"
#include "wattsim/plugin.h"

#define PLUGIN(name) WS_TEST_PLUGIN_DIR "/" name ".so"

typedef struct world {
    ws_traces tr;
    ws_job_table jt;
    ws_registry *reg;
} world;

static void world_init(world *w)
{
    fixture_job(&w->tr, &w->jt, 0.5, INFINITY);
    w->reg = ws_registry_new();
    cr_assert_not_null(w->reg);
}

static void world_free(world *w)
{
    ws_job_free(&w->jt);
    ws_traces_free(&w->tr);
    ws_registry_free(w->reg);
}

/* One "key=value" parameter as --set gives it. */
static ws_param_raw param(const char *kv, char *buf, size_t n)
{
    snprintf(buf, n, "%s", kv);
    char *eq = strchr(buf, '=');
    cr_assert_not_null(eq, "bad test parameter %s", kv);
    *eq = '\0';
    return (ws_param_raw){buf, eq + 1, (char *)"--set"};
}

/* Resolve parameters (NULL-terminated "k=v" list) for a type's spec. */
static int resolve(const ws_param_spec *spec, const char *who, const char *const *kv,
                   ws_value **v, ws_error *err)
{
    ws_param_raw raw[8];
    char buf[8][64];
    size_t n = 0;
    for (; kv && kv[n]; n++) raw[n] = param(kv[n], buf[n], sizeof buf[n]);
    return ws_params_resolve(spec, raw, n, who, v, err);
}

static ws_bso *bso(world *w, const char *file, const char *const *kv, ws_error *err)
{
    const ws_bso_type *t = ws_registry_bso(w->reg, file, err);
    cr_assert_not_null(t, "%s", err->msg);
    ws_value *v = NULL;
    char who[80];
    snprintf(who, sizeof who, "bso %s", t->name);
    cr_assert_eq(resolve(t->params, who, kv, &v, err), 0, "%s", err->msg);
    ws_bso *b = ws_bso_new(t, v, 1, err);
    ws_params_free(t->params, v);
    return b;
}

static ws_plo *plo(world *w, const char *file, const char *const *kv, ws_error *err)
{
    const ws_plo_type *t = ws_registry_plo(w->reg, file, err);
    cr_assert_not_null(t, "%s", err->msg);
    ws_value *v = NULL;
    char who[80];
    snprintf(who, sizeof who, "plo %s", t->name);
    cr_assert_eq(resolve(t->params, who, kv, &v, err), 0, "%s", err->msg);
    ws_plo *p = ws_plo_new(t, v, 1, err);
    ws_params_free(t->params, v);
    return p;
}

/* Well-behaved partners: fail_calls failing in no call answers b0 and the
 * highest limit. */
static const char *const behave[] = {"call=none", NULL};

static int count_runs(void *ctx, const ws_run_record *r)
{
    (*(long *)ctx)++;
    return 0;
}

/* Simulate 5 recurrences; returns ws_simulate's status, *runs the records
 * streamed before it stopped. */
static int simulate(const char *bfile, const char *const *bkv, const char *pfile,
                    const char *const *pkv, long *runs, ws_error *err)
{
    world w;
    world_init(&w);
    ws_bso *b = bso(&w, bfile, bkv, err);
    cr_assert_not_null(b, "%s", err->msg);
    ws_plo *p = plo(&w, pfile, pkv, err);
    cr_assert_not_null(p, "%s", err->msg);
    ws_sim_params sp = {.recurrences = 5, .seed = 1};
    ws_sim_totals tot;
    *runs = 0;
    int rc = ws_simulate(&w.jt.job, b, p, &sp, count_runs, runs, &tot, err);
    ws_bso_free(b);
    ws_plo_free(p);
    world_free(&w);
    return rc;
}

static void expect_error(const char *bfile, const char *const *bkv, const char *pfile,
                         const char *const *pkv, long want_runs, const char *want)
{
    ws_error err = {{0}};
    long runs;
    cr_assert_eq(simulate(bfile, bkv, pfile, pkv, &runs, &err), -1,
                 "no error; expected: %s", want);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(runs, want_runs, "%ld runs before the error, want %ld", runs, want_runs);
}

/* ------------------------------------------------------------ sanity */

Test(misbehave, well_behaved_partners_run)
{
    /* The harness itself: the same plugins, behaving, complete the run, so
     * the errors below come from the answers and not from the setup. */
    ws_error err = {{0}};
    long runs;
    cr_assert_eq(simulate(PLUGIN("fail_calls"), behave, PLUGIN("fail_calls"), behave,
                          &runs, &err), 0, "%s", err.msg);
    cr_assert_eq(runs, 5);
    const char *const good_bs[] = {"bs=16", NULL};
    const char *const good_pl[] = {"pl=100", NULL};
    cr_assert_eq(simulate(PLUGIN("answer_bs"), good_bs, PLUGIN("answer_pl"), good_pl,
                          &runs, &err), 0, "%s", err.msg);
    cr_assert_eq(runs, 5);
}

/* ------------------------------------------------------------ BSO answers */

Test(misbehave, bso_negative_batch_size)
{
    const char *const kv[] = {"bs=-32", NULL};
    expect_error(PLUGIN("answer_bs"), kv, PLUGIN("fail_calls"), behave, 0,
                 "bso answer_bs: predict returned batch size -32, which is not one"
                 " of the job's 3 batch sizes (16..64)");
}

Test(misbehave, bso_zero_batch_size)
{
    const char *const kv[] = {"bs=0", NULL};
    expect_error(PLUGIN("answer_bs"), kv, PLUGIN("fail_calls"), behave, 0,
                 "bso answer_bs: predict returned batch size 0, which is not one"
                 " of the job's 3 batch sizes (16..64)");
}

Test(misbehave, bso_no_answer)
{
    /* predict succeeds without writing its answer. */
    const char *const kv[] = {"silent=true", NULL};
    expect_error(PLUGIN("answer_bs"), kv, PLUGIN("fail_calls"), behave, 0,
                 "bso answer_bs: predict returned batch size 0, which is not one"
                 " of the job's 3 batch sizes (16..64)");
}

Test(misbehave, bso_unlisted_and_extreme_batch_sizes)
{
    const char *const mid[] = {"bs=48", NULL};
    expect_error(PLUGIN("answer_bs"), mid, PLUGIN("fail_calls"), behave, 0,
                 "bso answer_bs: predict returned batch size 48, which is not one"
                 " of the job's 3 batch sizes (16..64)");
    const char *const lo[] = {"bs=-2147483648", NULL};
    expect_error(PLUGIN("answer_bs"), lo, PLUGIN("fail_calls"), behave, 0,
                 "bso answer_bs: predict returned batch size -2147483648, which is"
                 " not one of the job's 3 batch sizes (16..64)");
    const char *const hi[] = {"bs=2147483647", NULL};
    expect_error(PLUGIN("answer_bs"), hi, PLUGIN("fail_calls"), behave, 0,
                 "bso answer_bs: predict returned batch size 2147483647, which is"
                 " not one of the job's 3 batch sizes (16..64)");
}

Test(misbehave, bso_bad_answer_mid_run_keeps_earlier_runs)
{
    /* Three good recurrences (b0 at 200 W: every run reaches in 5 epochs),
     * then -1: the three records were streamed, the fourth never is. */
    const char *const kv[] = {"bs=-1", "after=3", NULL};
    expect_error(PLUGIN("answer_bs"), kv, PLUGIN("fail_calls"), behave, 3,
                 "bso answer_bs: predict returned batch size -1, which is not one"
                 " of the job's 3 batch sizes (16..64)");
}

/* ------------------------------------------------------------ PLO answers */

Test(misbehave, plo_negative_power_limit)
{
    const char *const kv[] = {"pl=-100", NULL};
    expect_error(PLUGIN("fail_calls"), behave, PLUGIN("answer_pl"), kv, 0,
                 "plo answer_pl: predict(bs 32) returned power limit -100 W, which"
                 " was not measured for that batch size (100..200 W)");
}

Test(misbehave, plo_unmeasured_power_limit)
{
    const char *const kv[] = {"pl=150", NULL};
    expect_error(PLUGIN("fail_calls"), behave, PLUGIN("answer_pl"), kv, 0,
                 "plo answer_pl: predict(bs 32) returned power limit 150 W, which"
                 " was not measured for that batch size (100..200 W)");
    const char *const huge[] = {"pl=2147483647", NULL};
    expect_error(PLUGIN("fail_calls"), behave, PLUGIN("answer_pl"), huge, 0,
                 "plo answer_pl: predict(bs 32) returned power limit 2147483647 W,"
                 " which was not measured for that batch size (100..200 W)");
}

Test(misbehave, plo_bad_power_limit_after_profiling)
{
    const char *const kv[] = {"pl=-5", "profile_first=true", NULL};
    expect_error(PLUGIN("fail_calls"), behave, PLUGIN("answer_pl"), kv, 0,
                 "plo answer_pl: predict(bs 32) returned power limit -5 W, which"
                 " was not measured for that batch size (100..200 W)");
}

Test(misbehave, plo_no_answer_after_profiling)
{
    /* 0 is WS_PL_UNKNOWN: asked again after profiling, still no limit. */
    const char *const kv[] = {"pl=0", "profile_first=true", NULL};
    expect_error(PLUGIN("fail_calls"), behave, PLUGIN("answer_pl"), kv, 0,
                 "plo answer_pl: predict(bs 32) still has no power limit after"
                 " profiling all 2 of them");
}

/* ------------------------------------------------------------ failing calls */

static void expect_bso_call(const char *call, const char *want)
{
    char c[64];
    snprintf(c, sizeof c, "call=%s", call);
    const char *const kv[] = {c, NULL};
    expect_error(PLUGIN("fail_calls"), kv, PLUGIN("fail_calls"), behave, 0, want);
}

static void expect_plo_call(const char *call, const char *want)
{
    char c[64];
    snprintf(c, sizeof c, "call=%s", call);
    const char *const kv[] = {c, NULL};
    expect_error(PLUGIN("fail_calls"), behave, PLUGIN("fail_calls"), kv, 0, want);
}

Test(misbehave, bso_failing_calls_are_named)
{
    expect_bso_call("register_job", "bso fail_bso: register_job failed (returned 3)");
    expect_bso_call("predict", "bso fail_bso: predict failed (returned 3)");
    /* The engine tells the BSO before it streams the run: a run whose
     * observation failed is not recorded. */
    expect_bso_call("observe", "bso fail_bso: observe failed (returned 3)");
}

Test(misbehave, plo_failing_calls_are_named)
{
    expect_plo_call("register_job", "plo fail_plo: register_job failed (returned 3)");
    expect_plo_call("predict", "plo fail_plo: predict failed (returned 3)");
    expect_plo_call("observe_profile", "plo fail_plo: observe_profile failed (returned 3)");
}

Test(misbehave, failing_create_is_named)
{
    world w;
    world_init(&w);
    ws_error err = {{0}};
    const char *const kv[] = {"call=create", NULL};
    cr_assert_null(bso(&w, PLUGIN("fail_calls"), kv, &err));
    cr_assert_str_eq(err.msg, "bso fail_bso: create failed (returned 3)");
    cr_assert_null(plo(&w, PLUGIN("fail_calls"), kv, &err));
    cr_assert_str_eq(err.msg, "plo fail_plo: create failed (returned 3)");
    world_free(&w);
}

/* A create that logs why it fails and returns an error: the message is
 * the logged reason (it was dropped: "bso cfail: create failed"). */
Test(misbehave, failing_create_shows_its_logged_message)
{
    world w;
    world_init(&w);
    ws_error err = {{0}};
    const char *const kv[] = {NULL};
    cr_assert_null(bso(&w, PLUGIN("cfail"), kv, &err));
    cr_assert_str_eq(err.msg, "bso cfail: create failed: table 'q.csv' not found");
    world_free(&w);
}

/* ------------------------------------------------------------ parameters */

Test(misbehave, nan_and_infinite_parameters_never_reach_the_policy)
{
    world w;
    world_init(&w);
    ws_error err = {{0}};
    const ws_bso_type *t = ws_registry_bso(w.reg, PLUGIN("answer_bs"), &err);
    cr_assert_not_null(t, "%s", err.msg);
    ws_value *v = NULL;
    const char *const nan_[] = {"weight=nan", NULL};
    cr_assert_eq(resolve(t->params, "bso answer_bs", nan_, &v, &err), -1);
    cr_assert_str_eq(err.msg, "--set: bso answer_bs parameter 'weight' must be a number,"
                     " got \"nan\"");
    cr_assert_null(v);
    const char *const inf_[] = {"weight=inf", NULL};
    cr_assert_eq(resolve(t->params, "bso answer_bs", inf_, &v, &err), -1);
    cr_assert_str_eq(err.msg, "--set: bso answer_bs parameter 'weight' must be in"
                     " [0, 10], got inf");
    const char *const frac[] = {"bs=1.5", NULL};
    cr_assert_eq(resolve(t->params, "bso answer_bs", frac, &v, &err), -1);
    cr_assert_str_eq(err.msg, "--set: bso answer_bs parameter 'bs' must be an integer,"
                     " got \"1.5\"");
    world_free(&w);
}

/* ------------------------------------------------------------ CLI */

/* The CLI end to end: exit status 2, nothing on stdout, one line on stderr
 * naming the policy and the call. */
Test(misbehave, cli_reports_one_line_and_exit_2)
{
    int out[2], errp[2];
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(errp), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(errp[1], 2);
        close(out[0]);
        close(errp[0]);
        execl(WS_BUILD_DIR "/sim/wattsim", "wattsim", "simulate",
              "--traces", WS_SOURCE_DIR "/tests/data/bad/_fixture",
              "--catalogue", WS_SOURCE_DIR "/tests/data/bad/_fixture/workloads.yaml",
              "--gpu", "g1", "--workload", "w", "--plo", PLUGIN("answer_pl"),
              "--plo-param", "pl=-100", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(errp[1]);
    char o[4096] = "", e[4096] = "";
    ssize_t no = 0, ne = 0, r;
    while ((r = read(out[0], o + no, sizeof o - 1 - (size_t)no)) > 0) no += r;
    while ((r = read(errp[0], e + ne, sizeof e - 1 - (size_t)ne)) > 0) ne += r;
    close(out[0]);
    close(errp[0]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d, stderr: %s", st, e);
    cr_assert_eq(no, 0, "stdout: %s", o);
    cr_assert_str_eq(e, "wattsim: g1/w eta 0.5 beta 2 seed 1: plo answer_pl: predict(bs 16)"
                     " returned power limit -100 W, which was not measured for that"
                     " batch size (100..150 W)\n");
}
