/*
 * The data behind the figures and tables of the sweep, curves, potential
 * and pareto --plot commands: CI bounds, steady-state window, savings and
 * regret by hand, potential savings against the reference landscape,
 * frontier points of the plot data against ws_pareto, thread-count
 * independence (bytes), and the gnuplot-absent path.
 * Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wattsim/version.h"

#define WS_STR_(x) #x
#define WS_STR(x) WS_STR_(x)

#include "wattsim/config.h"
#include "wattsim/csv.h"
#include "wattsim/pareto.h"
#include "wattsim/plot.h"
#include "wattsim/sweep.h"
#include "wattsim/trace.h"

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define REF WS_SOURCE_DIR "/tests/data/reference"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-sweep-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ------------------------------------------------------------ stats */

Test(sweep, ci95_by_hand)
{
    /* x = 1, 2, 3: mean 2, sd 1; with 2 degrees of freedom the t quantile
     * has a closed form, t = (2p - 1) sqrt(2 / (4p(1 - p))) = 4.3026527... */
    double x[3] = {1, 2, 3}, m, lo, hi;
    ws_ci95(x, 3, &m, &lo, &hi);
    double p = 0.975, half = (2 * p - 1) * sqrt(2 / (4 * p * (1 - p))) / sqrt(3.0);
    cr_expect_float_eq(m, 2.0, 1e-15);
    cr_expect_float_eq(lo, 2.0 - half, 1e-12);
    cr_expect_float_eq(hi, 2.0 + half, 1e-12);
    /* x = 10, 14: mean 12, sd 2 sqrt 2; 1 degree of freedom (Cauchy):
     * t = tan(pi (p - 1/2)) = 12.7062...; half-width t * sd / sqrt 2 = 2t. */
    double y[2] = {10, 14};
    ws_ci95(y, 2, &m, &lo, &hi);
    cr_expect_float_eq(m, 12.0, 1e-15);
    cr_expect_float_eq(hi - m, 2 * tan(M_PI * (p - 0.5)), 1e-9);
    /* One seed: no interval. */
    ws_ci95(y, 1, &m, &lo, &hi);
    cr_expect_float_eq(m, 10.0, 0);
    cr_expect(isnan(lo) && isnan(hi));
}

Test(sweep, ci95_of_equal_values_is_a_point)
{
    /* 20 equal values whose sum does not divide back exactly: 0.7 added 20
     * times, over 20, is 0.6999999999999997, so every deviation from the
     * mean is 3.3e-16 and the interval came out 2.2e-16 wide (a sweep
     * printed an oracle's 20 equal totals as "1145 ± 2.4e-13"). Equal
     * values have no spread: the interval is the mean itself. */
    double x[20], m, lo, hi;
    for (int i = 0; i < 20; i++) x[i] = 0.7;
    double sum = 0;
    for (int i = 0; i < 20; i++) sum += x[i];
    cr_assert_neq(sum / 20, 0.7);               /* the case the rule is for */
    ws_ci95(x, 20, &m, &lo, &hi);
    cr_expect_eq(lo, m);
    cr_expect_eq(hi, m);
    /* A real spread, however small relative to the mean, is kept: 1e9 and
     * 1e9 + 1 (relative 1e-9) give the closed form of ci95_by_hand,
     * half-width 12.706... * (1 / sqrt 2) / sqrt 2 = 6.353... */
    double y[2] = {1e9, 1e9 + 1};
    ws_ci95(y, 2, &m, &lo, &hi);
    cr_expect_float_eq(hi - m, tan(M_PI * 0.475) / 2, 1e-6);
}

Test(sweep, steady_window)
{
    cr_expect_eq(ws_steady_count(140), 14);    /* 10 % */
    cr_expect_eq(ws_steady_count(141), 15);    /* rounded up */
    cr_expect_eq(ws_steady_count(20), 5);      /* at least 5 */
    cr_expect_eq(ws_steady_count(3), 3);       /* all there is */
}

Test(sweep, policy_pairs)
{
    ws_policy_pair *p;
    size_t n;
    ws_error err = {{0}};
    cr_assert_eq(ws_policy_pairs_parse("zeus:jit,default:default", &p, &n, &err), 0, "%s", err.msg);
    cr_expect_eq(n, 2);
    cr_expect_str_eq(p[0].bso, "zeus");
    cr_expect_str_eq(p[0].plo, "jit");
    cr_expect_str_eq(p[1].plo, "default");
    ws_policy_pairs_free(p, n);
    cr_expect_eq(ws_policy_pairs_parse("zeus:jit,grid", &p, &n, &err), -1);
    cr_expect(strstr(err.msg, "'grid' is not BSO:PLO"), "%s", err.msg);
}

/* Either side may be FILE.so:NAME; a path alone is still a policy. */
Test(sweep, policy_pairs_with_qualified_names)
{
    static const char *cases[][3] = {
        {"a/x.so:eg:jit", "a/x.so:eg", "jit"},
        {"zeus:b/y.so:cap", "zeus", "b/y.so:cap"},
        {"a/x.so:eg:b/y.so:cap", "a/x.so:eg", "b/y.so:cap"},
        {"a/x.so:jit", "a/x.so", "jit"},
        {"zeus:b/y.so", "zeus", "b/y.so"},
        {"a/x.so:b/y.so", "a/x.so", "b/y.so"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ws_policy_pair *p;
        size_t n;
        ws_error err = {{0}};
        cr_assert_eq(ws_policy_pairs_parse(cases[i][0], &p, &n, &err), 0, "%s", err.msg);
        cr_expect(n == 1 && !strcmp(p[0].bso, cases[i][1]) && !strcmp(p[0].plo, cases[i][2]),
                  "%s: got %s | %s", cases[i][0], p[0].bso, p[0].plo);
        ws_policy_pairs_free(p, n);
    }
    ws_policy_pair *p;
    size_t n;
    ws_error err = {{0}};
    cr_expect_eq(ws_policy_pairs_parse("a:b:c:d:e", &p, &n, &err), -1);
}

/* ------------------------------------------------------------ sweep */

static void write_config(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpu: v100\nworkload: [cifar100, squad]\neta: [0.5, 1]\nbeta: 2\nseed: 1..3\n"
          "recurrences: 30\n", f);
    fclose(f);
}

/* sweep.json names its seeds as ranges of consecutive ones, in plan order:
 * a million seeds are one pair, not seven megabytes. */
Test(sweep, json_has_seed_ranges, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    char cfg[512], path[600];
    snprintf(cfg, sizeof cfg, "%s/r.yaml", tmp);
    FILE *f = fopen(cfg, "w");
    cr_assert_not_null(f);
    fputs("gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: [7, 8, 9, 1, 2, 5]\n"
          "recurrences: 5\n", f);
    fclose(f);
    cr_assert_eq(run_shell(CLI " sweep %s --policies zeus:jit --traces " TRACES " --catalogue "
                           CATALOGUE " --out %s/r --no-plot >/dev/null", cfg, tmp), 0);
    snprintf(path, sizeof path, "%s/r/sweep.json", tmp);
    char *j = slurp(path);
    const char *want = "{\"n_seeds\": 6, \"seed_ranges\": [[7, 9], [1, 2], [5, 5]],"
                       " \"wattsim\": {\"version\": \"" WATTSIM_VERSION "\", \"policy_abi\": \""
                       WATTSIM_POLICY_ABI "\", \"random_streams\": " WS_STR(WATTSIM_RANDOM_STREAMS)
                       "}, \"provenance\": {\"command\": \"wattsim sweep ";
    cr_expect_eq(strncmp(j, want, strlen(want)), 0, "%.200s", j);
    cr_expect(strstr(j, "}}}, \"cells\": ["), "%.600s", j);
    free(j);
}

Test(sweep, thread_count_does_not_change_bytes, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    char cfg[512], a[600], b[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    write_config(cfg);
    cr_assert_eq(run_shell(CLI " sweep %s --policies zeus:jit,grid:grid --traces " TRACES
                     " --catalogue " CATALOGUE " --out %s/t1 --threads 1 --no-plot >/dev/null",
                     cfg, tmp), 0);
    cr_assert_eq(run_shell(CLI " sweep %s --policies zeus:jit,grid:grid --traces " TRACES
                     " --catalogue " CATALOGUE " --out %s/t2 --threads 2 --no-plot >/dev/null",
                     cfg, tmp), 0);
    const char *files[] = {"sweep.csv", "sweep.json", "sweep.md"};
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/t1/%s", tmp, files[i]);
        snprintf(b, sizeof b, "%s/t2/%s", tmp, files[i]);
        char *x = slurp(a), *y = slurp(b);
        cr_expect_str_eq(x, y, "%s differs between 1 and 2 threads", files[i]);
        free(x);
        free(y);
    }
    /* Curves too. */
    cr_assert_eq(run_shell(CLI " curves %s --policies zeus:jit --traces " TRACES " --catalogue "
                     CATALOGUE " --out %s/c1 --threads 1 --no-plot >/dev/null", cfg, tmp), 0);
    cr_assert_eq(run_shell(CLI " curves %s --policies zeus:jit --traces " TRACES " --catalogue "
                     CATALOGUE " --out %s/c2 --threads 2 --no-plot >/dev/null", cfg, tmp), 0);
    snprintf(a, sizeof a, "%s/c1/curves.csv", tmp);
    snprintf(b, sizeof b, "%s/c2/curves.csv", tmp);
    char *x = slurp(a), *y = slurp(b);
    cr_expect_str_eq(x, y, "curves.csv differs between 1 and 2 threads");
    free(x);
    free(y);
}

Test(sweep, savings_and_regret_by_hand, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    char cfg[512], path[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    write_config(cfg);
    cr_assert_eq(run_shell(CLI " sweep %s --policies zeus:jit --traces " TRACES " --catalogue "
                     CATALOGUE " --out %s/s --threads 2 --no-plot >/dev/null", cfg, tmp), 0);
    snprintf(path, sizeof path, "%s/s/sweep.csv", tmp);
    table t = read_table(path);
    /* 3 policies (zeus+jit, default, oracle) x 2 workloads x 2 etas. */
    cr_assert_eq(t.n, 12);
    for (size_t r = 0; r < t.n; r++) {
        /* The default row of the same cell. */
        size_t d = t.n;
        for (size_t q = 0; q < t.n; q++)
            if (!strcmp(str(&t, q, "policy"), "default+default")
                && !strcmp(str(&t, q, "workload"), str(&t, r, "workload"))
                && num(&t, q, "eta") == num(&t, r, "eta"))
                d = q;
        cr_assert_lt(d, t.n);
        const char *pol = str(&t, r, "policy");
        if (!strcmp(pol, "default+default")) {
            cr_expect_eq(num(&t, r, "saving_energy"), 0.0);
            cr_expect_eq(num(&t, r, "saving_time"), 0.0);
            cr_expect_eq(num(&t, r, "saving_cost"), 0.0);
        }
        if (!strcmp(pol, "oracle+oracle")) {
            cr_expect_eq(num(&t, r, "regret"), 0.0);
            cr_expect_eq(num(&t, r, "regret_lo"), 0.0);
        }
        double want = 1.0 - num(&t, r, "energy_j") / num(&t, d, "energy_j");
        cr_expect(fabs(num(&t, r, "saving_energy") - want) < 1e-12, "row %zu: %.17g vs %.17g", r,
                  num(&t, r, "saving_energy"), want);
        want = 1.0 - num(&t, r, "time_s") / num(&t, d, "time_s");
        cr_expect(fabs(num(&t, r, "saving_time") - want) < 1e-12);
        /* CI brackets the mean; seeds 3 -> t(0.975, 2). */
        cr_expect_leq(num(&t, r, "energy_j_lo"), num(&t, r, "energy_j"));
        cr_expect_geq(num(&t, r, "energy_j_hi"), num(&t, r, "energy_j"));
        cr_expect_eq(num(&t, r, "seeds"), 3);
        /* final knobs count every seed */
        const char *k = str(&t, r, "final_knobs");
        int total = 0;
        for (const char *p = k; (p = strchr(p, '=')); p++) total += atoi(p + 1);
        cr_expect_eq(total, 3, "final_knobs %s", k);
    }
    /* Regret by hand: zeus cost - oracle cost of the same cell. */
    for (size_t r = 0; r < t.n; r++) {
        if (strcmp(str(&t, r, "policy"), "zeus+jit")) continue;
        for (size_t q = 0; q < t.n; q++)
            if (!strcmp(str(&t, q, "policy"), "oracle+oracle")
                && !strcmp(str(&t, q, "workload"), str(&t, r, "workload"))
                && num(&t, q, "eta") == num(&t, r, "eta"))
                cr_expect(fabs(num(&t, r, "regret") - (num(&t, r, "cost") - num(&t, q, "cost")))
                          < 1e-6 * num(&t, r, "cost"));
    }
    free_table(&t);
}

/* ------------------------------------------------------------ potential */

Test(sweep, potential_v100_cifar100_matches_reference, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    /* By hand from the reference landscape: eta = 1 rows, knobs every run
     * reaches; saving = 1 - min ETA / default ETA. */
    table ref = read_table(REF "/pareto-v100.csv");
    double min_eta = INFINITY, def_eta = NAN;
    for (size_t r = 0; r < ref.n; r++) {
        if (strcmp(str(&ref, r, "workload"), "cifar100") || num(&ref, r, "eta") != 1.0) continue;
        if (num(&ref, r, "default") == 1) def_eta = num(&ref, r, "eta_j");
        if (num(&ref, r, "runs") == num(&ref, r, "reached"))
            min_eta = fmin(min_eta, num(&ref, r, "eta_j"));
    }
    free_table(&ref);
    cr_assert(isfinite(def_eta) && isfinite(min_eta));
    cr_assert_eq(run_shell(CLI " potential --gpus v100 --workloads cifar100,squad --traces " TRACES
                     " --catalogue " CATALOGUE " --out %s/p >/dev/null 2>&1", tmp), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/p/potential.csv", tmp);
    table t = read_table(path);
    cr_assert_eq(t.n, 2);
    cr_expect_str_eq(str(&t, 0, "workload"), "cifar100");
    double want = 100.0 * (1.0 - min_eta / def_eta);
    cr_expect(fabs(num(&t, 0, "saving_pct") - want) < 1e-9 * want, "%.17g vs %.17g",
              num(&t, 0, "saving_pct"), want);
    cr_expect(fabs(num(&t, 0, "default_eta_j") - def_eta) < 1e-9 * def_eta);
    free_table(&t);
}

/* ------------------------------------------------------------ pareto plot */

Test(sweep, pareto_plot_frontier_equals_ws_pareto, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    cr_assert_eq(run_shell(CLI " pareto --workload librispeech --eta 0.5 --traces " TRACES
                     " --catalogue " CATALOGUE " --plot %s/f.svg >/dev/null 2>&1", tmp), 0);
    ws_error err = {{0}};
    ws_catalogue cat = {0};
    ws_traces tr = {0};
    ws_job_table jt = {0};
    ws_pareto p = {0};
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &cat, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_traces_load(&tr, TRACES, "v100", NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_job_build(&jt, &tr, ws_catalogue_find(&cat, "librispeech"), 0.5, INFINITY,
                              &err), 0, "%s", err.msg);
    cr_assert_eq(ws_pareto_compute(&jt.job, &p, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/f.csv", tmp);
    table t = read_table(path);
    int n_front = 0, n_def = 0, n_best = 0;
    for (size_t r = 0; r < t.n; r++) {
        if (num(&t, r, "frontier") == 1) {
            /* Frontier rows come first, in ws_pareto's order (by TTA). */
            cr_assert_lt(n_front, p.n_frontier);
            const ws_knob_stat *k = &p.knobs[p.frontier[n_front]];
            cr_expect_eq(r, (size_t)n_front);
            cr_expect_eq(num(&t, r, "bs"), k->bs);
            cr_expect_eq(num(&t, r, "pl"), k->pl);
            cr_expect_eq(num(&t, r, "tta_s"), k->tta);
            cr_expect_eq(num(&t, r, "eta_j"), k->eta);
            n_front++;
        }
        if (num(&t, r, "default") == 1) {
            n_def++;
            cr_expect_eq(num(&t, r, "bs"), p.knobs[p.default_knob].bs);
            cr_expect_eq(num(&t, r, "pl"), p.knobs[p.default_knob].pl);
        }
        if (num(&t, r, "best") == 1) {
            n_best++;
            cr_expect_eq(num(&t, r, "eta_j"), p.knobs[p.best_knob].eta);
        }
        /* The plotted columns are the SI ones in the named unit (h, MJ here). */
        if (isfinite(num(&t, r, "tta_s")))
            cr_expect(fabs(num(&t, r, "tta_h") * 3600 - num(&t, r, "tta_s")) < 1e-6);
    }
    cr_expect_eq(n_front, p.n_frontier);
    cr_expect_eq(n_def, 1);
    cr_expect_eq(n_best, 1);
    cr_expect_eq((int)t.n, p.n);
    free_table(&t);
    snprintf(path, sizeof path, "%s/f.svg", tmp);
    if (run_shell("command -v gnuplot >/dev/null") == 0) cr_expect(exists(path));
    ws_pareto_free(&p);
    ws_job_free(&jt);
    ws_traces_free(&tr);
    ws_catalogue_free(&cat);
}

Test(sweep, settled_knob_from_history, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    char path[600];
    snprintf(path, sizeof path, "%s/h.csv", tmp);
    FILE *f = fopen(path, "w");
    fputs("cell,gpu,workload,eta,beta,seed,recurrence,try,bs,pl,epochs,energy_j,time_s,cost,"
          "reached,profiled\n"
          "0,v100,cifar100,0.5,2,1,1,1,1024,250,10,1,1,1,1,0\n"
          "0,v100,cifar100,0.5,2,1,2,1,128,100,10,1,1,1,1,0\n"
          "0,v100,cifar100,0.5,2,1,3,1,256,200,10,1,1,1,0,0\n"
          "1,v100,cifar100,0.5,2,2,1,1,512,150,10,1,1,1,1,0\n", f);
    fclose(f);
    ws_settled s = {0};
    ws_error err = {{0}};
    cr_assert_eq(ws_history_settled(path, "v100", "cifar100", &s, &err), 0, "%s", err.msg);
    /* Last reached run of the first matching simulation (wattsim 0.1 named
     * its index `cell`: such a history still reads). */
    cr_expect_eq(s.n, 1);
    cr_expect_eq(s.knob[0][0], 128);
    cr_expect_eq(s.knob[0][1], 100);
    char path2[600];
    snprintf(path2, sizeof path2, "%s/h2.csv", tmp);
    f = fopen(path2, "w");
    fputs("simulation,gpu,workload,eta,beta,seed,recurrence,try,bs,pl,epochs,energy_j,time_s,"
          "cost,reached,profiled\n"
          "4,v100,cifar100,0.5,2,1,1,1,512,150,10,1,1,1,1,0\n"
          "5,v100,cifar100,0.5,2,2,1,1,1024,250,10,1,1,1,1,0\n", f);
    fclose(f);
    ws_settled s2 = {0};
    cr_assert_eq(ws_history_settled(path2, "v100", "cifar100", &s2, &err), 0, "%s", err.msg);
    cr_expect_eq(s2.knob[0][0], 512);
    cr_expect_eq(s2.knob[0][1], 150);
    cr_expect_eq(ws_history_settled(path, "a40", "cifar100", &s, &err), -1);
    cr_expect(strstr(err.msg, "no reached run"), "%s", err.msg);
    /* The figure marks it. */
    cr_assert_eq(run_shell(CLI " pareto --workload cifar100 --traces " TRACES " --catalogue " CATALOGUE
                     " --plot %s/g.png --history %s >/dev/null 2>&1", tmp, path), 0);
    snprintf(path, sizeof path, "%s/g.csv", tmp);
    table t = read_table(path);
    int marked = 0;
    for (size_t r = 0; r < t.n; r++)
        if (num(&t, r, "settled") == 1) {
            marked++;
            cr_expect_eq(num(&t, r, "bs"), 128);
            cr_expect_eq(num(&t, r, "pl"), 100);
        }
    cr_expect_eq(marked, 1);
    free_table(&t);
    /* The history names no policy column: the figure says "the
     * policy", and which simulation. */
    snprintf(path, sizeof path, "%s/g.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "'marked: the policy settled, seed 1, η = 0.5, β = ∞ (simulation 0 of the"
                         " history)'"), "%s", gp);
    free(gp);
    /* Issue 30, item 11: with policy and seed columns (today's history),
     * the figure names them: "policy settled (48, 150 W)" named neither. */
    snprintf(path2, sizeof path2, "%s/h3.csv", tmp);
    f = fopen(path2, "w");
    fputs("simulation,gpu,workload,eta,beta,seed,recurrence,try,bs,pl,epochs,energy_j,time_s,"
          "cost,reached,profiled,policy\n"
          "7,v100,cifar100,0.5,2,4,1,1,512,150,10,1,1,1,1,0,grid+grid\n"
          "8,v100,cifar100,0.5,2,5,1,1,1024,250,10,1,1,1,1,0,grid+grid\n", f);
    fclose(f);
    ws_settled s3 = {0};
    cr_assert_eq(ws_history_settled(path2, "v100", "cifar100", &s3, &err), 0, "%s", err.msg);
    cr_expect_str_eq(s3.policy, "grid+grid");
    cr_expect_str_eq(s3.seeds, "seed 4");
    cr_expect_str_eq(s3.shown, "simulation 7 of the history");
    cr_assert_eq(run_shell(CLI " pareto --workload cifar100 --traces " TRACES " --catalogue "
                           CATALOGUE " --plot %s/named.png --history %s >/dev/null 2>&1", tmp, path2), 0);
    snprintf(path, sizeof path, "%s/named.gp", tmp);
    gp = slurp(path);
    cr_expect(strstr(gp, "'marked: grid+grid settled, seed 4, η = 0.5, β = ∞ (simulation 7 of"
                         " the history)'"), "%s", gp);
    cr_expect(strstr(gp, "t_set = 'grid+grid settled (512, 150 W)'"), "%s", gp);
    /* in grid's colour, as in every figure */
    cr_expect(strstr(gp, "pt 12 ps 2.0 lw 2 lc rgb '#E69F00' title t_set"), "%s", gp);
    free(gp);
}

Test(sweep, gnuplot_absent_writes_data_and_script, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    char log[600], path[600];
    snprintf(log, sizeof log, "%s/err.txt", tmp);
    /* An empty PATH folder: no gnuplot, and nothing else is needed. */
    cr_assert_eq(run_shell("mkdir -p %s/empty && PATH=%s/empty " CLI " pareto --workload cifar100"
                     " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/out/x.png"
                     " >/dev/null 2>%s", tmp, tmp, tmp, log), 0);
    snprintf(path, sizeof path, "%s/out/x.csv", tmp);
    cr_expect(exists(path));
    snprintf(path, sizeof path, "%s/out/x.gp", tmp);
    cr_expect(exists(path));
    snprintf(path, sizeof path, "%s/out/x.png", tmp);
    cr_expect(!exists(path));
    char *e = slurp(log);
    cr_expect(strstr(e, "gnuplot x.gp"), "%s", e);
    cr_expect_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
    free(e);
}

Test(sweep, bad_plot_name_fails_without_files, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    cr_expect_eq(run_shell(CLI " pareto --workload cifar100 --traces " TRACES " --catalogue " CATALOGUE
                     " --plot %s/x.jpg >/dev/null 2>&1", tmp), 2);
    char path[600];
    snprintf(path, sizeof path, "%s/x.csv", tmp);
    cr_expect(!exists(path));
    cr_expect_eq(run_shell(CLI " sweep /nonexistent.yaml --out %s/s >/dev/null 2>&1", tmp), 2);
    cr_expect_eq(run_shell(CLI " sweep %s --policies zeus >/dev/null 2>&1", "/nonexistent.yaml"), 2);
}
