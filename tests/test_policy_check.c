/*
 * `wattsim policy check`: a conforming plugin passes every check; each
 * broken test plugin fails exactly the checks its defect should fail, by
 * name, with exit status 1.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "run_cli.h"

#define PLUGIN(name) WS_TEST_PLUGIN_DIR "/" name ".so"

static const char *CHECKS[] = {"load", "params", "one-size", "many-sizes", "eta-0",
                               "eta-1", "no-early-stop", "concurrent", "determinism",
                               "independence", "leak", "timing"};
#define N_CHECKS (sizeof CHECKS / sizeof *CHECKS)

TestSuite(policy_check, .init = cli_no_asan_quarantine);

/* Run the checker; *fails gets, per CHECKS entry, 1 for FAIL, 0 for PASS,
 * -1 when there is no line for it. */
static int check(const char *so, int fails[N_CHECKS])
{
    cli_result r = cli_run((const char *[]){"wattsim", "policy", "check", so, NULL});
    for (size_t i = 0; i < N_CHECKS; i++) {
        char pass[64], fail[64];
        snprintf(pass, sizeof pass, "PASS %-14s ", CHECKS[i]);
        snprintf(fail, sizeof fail, "FAIL %-14s ", CHECKS[i]);
        fails[i] = strstr(r.out, fail) ? 1 : strstr(r.out, pass) ? 0 : -1;
    }
    cr_expect_eq(r.err_len, 0, "stderr: %s", r.err);
    int st = r.status;
    cli_free(&r);
    return st;
}

static void expect_fails(const char *so, const char *const *want, int n_want)
{
    int f[N_CHECKS];
    int st = check(so, f);
    cr_expect_eq(st, n_want ? 1 : 0, "%s: exit status %d", so, st);
    for (size_t i = 0; i < N_CHECKS; i++) {
        int wanted = 0;
        for (int j = 0; j < n_want; j++) wanted |= !strcmp(want[j], CHECKS[i]);
        if (!strcmp(CHECKS[i], "concurrent") && f[i] == -1) continue;   /* a PLO */
        cr_expect_eq(f[i], wanted, "%s: check %s: %s", so, CHECKS[i],
                     f[i] < 0 ? "missing" : f[i] ? "failed" : "passed");
    }
}

Test(policy_check, builtin_and_example_policies_pass, .timeout = 120)
{
    expect_fails(WS_POLICY_BUILD_DIR "/zeus.so", NULL, 0);
    expect_fails(WS_POLICY_BUILD_DIR "/jit.so", NULL, 0);
    expect_fails(PLUGIN("egreedy"), NULL, 0);
    expect_fails(PLUGIN("capped_v1"), NULL, 0);   /* a version-1 plugin */
}

Test(policy_check, shared_state_fails_determinism_and_independence, .timeout = 120)
{
    static const char *want[] = {"determinism", "independence"};
    expect_fails(PLUGIN("shared_state"), want, 2);
}

Test(policy_check, leaky_fails_leak, .timeout = 120)
{
    static const char *want[] = {"leak"};
    expect_fails(PLUGIN("leaky"), want, 1);
}

Test(policy_check, wrong_answers_fail_every_simulating_check, .timeout = 120)
{
    static const char *want[] = {"one-size", "many-sizes", "eta-0", "eta-1", "no-early-stop",
                                 "concurrent", "determinism", "independence", "leak"};
    int f[N_CHECKS];
    cr_expect_eq(check(PLUGIN("bad_bs"), f), 1);
    for (size_t j = 0; j < sizeof want / sizeof *want; j++)
        for (size_t i = 0; i < N_CHECKS; i++)
            if (!strcmp(want[j], CHECKS[i])) cr_expect_eq(f[i], 1, "bad_bs: %s", CHECKS[i]);
}

Test(policy_check, descriptor_errors_fail_load, .timeout = 60)
{
    cli_result r = cli_run((const char *[]){"wattsim", "policy", "check", PLUGIN("nan_bounds"),
                                            NULL});
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "FAIL load           " PLUGIN("nan_bounds") ": bso 'nan_bounds':"
                     " parameter 'rate' has bounds [0, nan]; want numbers with min <= max\n"
                     PLUGIN("nan_bounds") ": 1 check failed\n");
    cli_free(&r);
}

Test(policy_check, unknown_policy_is_a_usage_error, .timeout = 60)
{
    cli_result r = cli_run((const char *[]){"wattsim", "policy", "check", PLUGIN("egreedy"),
                                            "--policy", "greedy", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "wattsim: " PLUGIN("egreedy") ": defines no policy 'greedy'\n");
    cli_free(&r);
}
