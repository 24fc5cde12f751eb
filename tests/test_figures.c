/*
 * The data behind the paper's figures (report/figures.c), checked by hand
 * from the simulations of small sweeps, without gnuplot: the savings bars
 * and their 95 % CIs, beta totals as % of default, which steady states are
 * drawn and which carry an eta label, display names instead of raw ids in
 * the scripts. One test runs the real gnuplot and checks the PDF with
 * pdfinfo. Needs the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/config.h"
#include "wattsim/figures.h"
#include "wattsim/plugin.h"
#include "wattsim/sweep.h"

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"

/* t quantiles (0.975) for 2 and 3 degrees of freedom. */
#define T2 4.302652729911275
#define T3 3.182446305284263

static void mktmp(void) { tmpdir_make("/tmp/ws-test-figures-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static ws_catalogue cat;
static ws_run_config cfg;          /* the sweep's names point into it */

static void done(ws_sweep *s)
{
    ws_sweep_free(s);
    ws_run_config_free(&cfg);
    ws_catalogue_free(&cat);
}

/* Run the sweep of `yaml` for `policies` (default and oracle added); free
 * it with done(). */
static ws_sweep run(const char *yaml, const char *policies)
{
    char path[600];
    snprintf(path, sizeof path, "%s/c.yaml", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(yaml, f);
    cr_assert_eq(fclose(f), 0);
    ws_error err = {{0}};
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_load(path, &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_run_config_validate(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &cat, &err), 0, "%s", err.msg);
    ws_registry *reg = ws_registry_new();
    ws_study_env env = {TRACES, &cat, reg, NULL, 0, NULL};
    ws_policy_pair *pairs;
    size_t n;
    cr_assert_eq(ws_policy_pairs_parse(policies, &pairs, &n, &err), 0, "%s", err.msg);
    ws_sweep s = {0};
    cr_assert_eq(ws_sweep_run(&cfg, &env, pairs, n, 2, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.n_failed, 0);
    ws_policy_pairs_free(pairs, n);
    ws_registry_free(reg);
    return s;
}

static size_t pair_of(const ws_sweep *s, const char *label)
{
    for (size_t p = 0; p < s->n_pairs; p++)
        if (!strcmp(s->pairs[p].label, label)) return p;
    cr_assert_fail("no pair %s", label);
    return 0;
}

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * fmax(1.0, fabs(b)))

/* ------------------------------------------------------------ savings */

/* Draw s's savings figure into the new folder tmp/sub (its path in dir):
 * its gnuplot script's text, to free. */
static char *savings_gp_in(ws_fig_ctx *c, const ws_sweep *s, const char *sub, char *dir, size_t size)
{
    snprintf(dir, size, "%.400s/%s", tmp, sub);
    cr_assert_eq(mkdir(dir, 0700), 0);
    c->dir = dir;
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_savings(c, s, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/savings.gp", dir);
    return slurp(path);
}

Test(figures, savings_bars_and_cis_by_hand, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: [cifar100, squad]\neta: 0.5\nbeta: 2\n"
                     "seed: 1..4\nrecurrences: 30\n", "zeus:jit,grid:grid");
    size_t zeus = pair_of(&s, "zeus+jit"), grid = pair_of(&s, "grid+grid");
    size_t subject, refs[8];
    cr_assert_eq(ws_fig_compared(&s, &subject, refs), 2);
    cr_expect_eq(subject, zeus);
    cr_expect_eq(refs[0], s.ref_default);                   /* default first */
    cr_expect_eq(refs[1], grid);                            /* oracle never */

    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_savings(&c, &s, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/savings.csv", tmp);
    table t = read_table(path);
    cr_assert_eq(t.n, 2 * 2, "a row per reference x workload");
    for (size_t row = 0; row < t.n; row++) {
        size_t r = (size_t)num(&t, row, "versus_index"), w = (size_t)num(&t, row, "workload_index");
        size_t ref = refs[r];
        cr_expect_str_eq(str(&t, row, "versus"), s.pairs[ref].label);
        cr_expect_str_eq(str(&t, row, "workload"), s.work[w]);
        cr_expect_eq(num(&t, row, "in_figure"), 1);
        cr_expect_eq(num(&t, row, "eta_index"), 0);
        cr_expect_eq(num(&t, row, "beta_index"), 0);
        cr_expect_eq(num(&t, row, "seeds"), 4);
        /* by hand: per-seed savings, their mean and t(3) interval */
        for (int m = 0; m < 2; m++) {
            double x[4], mean = 0, ss = 0;
            for (size_t i = 0; i < 4; i++) {
                ws_sweep_sim a, d;
                ws_sweep_sim_get(&s, ws_sweep_index(&s, zeus, 0, w, 0, 0, i), &a);
                ws_sweep_sim_get(&s, ws_sweep_index(&s, ref, 0, w, 0, 0, i), &d);
                x[i] = m ? 100 * (1 - a.time_s / d.time_s) : 100 * (1 - a.energy_j / d.energy_j);
                mean += x[i] / 4;
            }
            for (size_t i = 0; i < 4; i++) ss += (x[i] - mean) * (x[i] - mean);
            double half = T3 * sqrt(ss / 3) / 2;
            const char *k = m ? "tta_saving" : "eta_saving";
            char c_pct[32], c_lo[32], c_hi[32];
            snprintf(c_pct, sizeof c_pct, "%s_pct", k);
            snprintf(c_lo, sizeof c_lo, "%s_lo", k);
            snprintf(c_hi, sizeof c_hi, "%s_hi", k);
            cr_expect(NEAR(num(&t, row, c_pct), mean), "%s %s: %.17g vs %.17g", s.work[w], k,
                      num(&t, row, c_pct), mean);
            cr_expect(NEAR(num(&t, row, c_lo), mean - half), "%s lo", k);
            cr_expect(NEAR(num(&t, row, c_hi), mean + half), "%s hi", k);
        }
    }
    /* zeus saves energy over default on cifar100 (the paper's largest case) */
    cr_expect_gt(num(&t, 0, "eta_saving_pct"), 30);
    free_table(&t);
    /* Display names, not raw ids, in what the figure shows. */
    snprintf(path, sizeof path, "%s/savings.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "'ShuffleNet-v2'.\"\\n\".'CIFAR-100'"), "workload display name");
    cr_expect(strstr(gp, "ser0 = 'V100'"), "GPU display name");
    /* one GPU: the title does not say "per GPU"; it says which */
    cr_expect(strstr(gp, "'Savings of zeus+jit on V100 per workload (η = 0.5, β = 2; 95 % CI over"
                         " 4 seeds)'"), "%s", gp);
    cr_expect(!strstr(gp, "cifar100") && !strstr(gp, "v100"), "no raw id in the script");
    free(gp);
    done(&s);
}

/* A sweep of several etas (or betas) on one GPU: a bar per eta in each
 * workload's group, every row of savings.csv drawn, and a title that says
 * so (once: "per workload and GPU" with one GPU and the first eta only). */
Test(figures, savings_show_every_eta_and_beta, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: [cifar100, squad]\neta: [0, 0.5, 1]\nbeta: 2\n"
                     "seed: 1..2\nrecurrences: 20\n", "zeus:jit");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_savings(&c, &s, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/savings.csv", tmp);
    table t = read_table(path);
    cr_assert_eq(t.n, 2 * 3, "a row per workload x eta (one reference, default)");
    for (size_t row = 0; row < t.n; row++) {
        size_t w = (size_t)num(&t, row, "workload_index"), e = (size_t)num(&t, row, "eta_index");
        cr_expect_eq(row, w * 3 + e);
        cr_expect(NEAR(num(&t, row, "eta"), s.etas[e]));
        cr_expect_eq(num(&t, row, "beta_index"), 0);
        cr_expect_eq(num(&t, row, "in_figure"), 1, "every row is drawn");
    }
    free_table(&t);
    snprintf(path, sizeof path, "%s/savings.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "'Savings of zeus+jit on V100 per workload and η (β = 2; 95 % CI over"
                         " 2 seeds)'"), "%s", gp);
    cr_expect(strstr(gp, "S = 3\n") && strstr(gp, "ser0 = 'η = 0'\n")
              && strstr(gp, "ser1 = 'η = 0.5'\n") && strstr(gp, "ser2 = 'η = 1'\n"));
    /* the bar of a row: its eta x beta combination; etas in viridis order */
    cr_expect(strstr(gp, "series(x) = column(18) * 1 + column(19)\n"));
    cr_expect(strstr(gp, "colours = '#440154 #21918c #b5de2b'\n"), "%s", gp);
    cr_expect(!strstr(gp, "GPU"), "one GPU: no \"per GPU\"");
    free(gp);
    done(&s);

    s = run("gpu: v100\nworkload: squad\neta: 0.5\nbeta: [2, .inf]\nseed: 1..2\n"
            "recurrences: 20\n", "zeus:jit");
    char dir[500];
    gp = savings_gp_in(&c, &s, "beta", dir, sizeof dir);
    cr_expect(strstr(gp, "'Savings of zeus+jit on V100 per workload and β (η = 0.5; 95 % CI over"
                         " 2 seeds)'"), "%s", gp);
    cr_expect(strstr(gp, "ser1 = 'β = ∞'\n"));
    free(gp);
    done(&s);
}

/* ------------------------------------------------------------ curves */

/* A cost is η·ETA + (1 − η)·MaxPower·TTA: the axes say J-equivalent, not
 * J (not energy); the figure is one column wide. */
Test(figures, curves_cost_in_joule_equivalents, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: cifar100\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                     "recurrences: 20\n", "zeus:jit");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_curves(&c, &s, 0, 0, 0, 0, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/curves-v100-cifar100-eta0.5-beta2.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "set ylabel 'Cumulative cost'.\"\\n\".'(MJ-equivalent)'")
              || strstr(gp, "set ylabel 'Cumulative cost'.\"\\n\".'(kJ-equivalent)'"), "%s", gp);
    cr_expect(strstr(gp, "'Regret vs oracle'.\"\\n\".'("), "%s", gp);
    cr_expect(!strstr(gp, "J)'"), "no axis in plain joules");
    cr_expect(strstr(gp, "W = 3.400;"), "one column (3.4 in)");
    free(gp);
    done(&s);
}

/* ------------------------------------------------------------ beta */

Test(figures, beta_totals_as_percent_of_default_by_hand, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: squad\neta: 0.5\nbeta: [2, .inf]\n"
                     "seed: 1..3\nrecurrences: 20\n", "zeus:jit");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_beta(&c, &s, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/beta-v100.csv", tmp);
    table t = read_table(path);
    cr_assert_eq(t.n, 2, "a row per beta");
    size_t zeus = pair_of(&s, "zeus+jit");
    for (size_t b = 0; b < 2; b++) {
        size_t row = b;
        cr_expect_eq(num(&t, row, "beta_index"), b);
        cr_expect_str_eq(str(&t, row, "beta"), b ? "inf" : "2");
        double e[3], me = 0, md = 0, ss = 0;
        for (size_t i = 0; i < 3; i++) {
            ws_sweep_sim z, d;
            ws_sweep_sim_get(&s, ws_sweep_index(&s, zeus, 0, 0, 0, b, i), &z);
            ws_sweep_sim_get(&s, ws_sweep_index(&s, s.ref_default, 0, 0, 0, b, i), &d);
            e[i] = z.energy_j;
            me += e[i] / 3;
            md += d.energy_j / 3;
        }
        for (size_t i = 0; i < 3; i++) ss += (e[i] - me) * (e[i] - me);
        double half = T2 * sqrt(ss / 2) / sqrt(3.0);
        cr_expect(NEAR(num(&t, row, "eta_pct_of_default"), 100 * me / md));
        cr_expect(NEAR(num(&t, row, "eta_lo"), 100 * (me - half) / md));
        cr_expect(NEAR(num(&t, row, "eta_hi"), 100 * (me + half) / md));
    }
    free_table(&t);
    snprintf(path, sizeof path, "%s/beta-v100.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "'∞' 1"), "beta = inf is labelled");
    cr_expect(strstr(gp, "work0 = 'BERT / SQuAD'"));
    free(gp);
    /* one beta: no beta figure */
    done(&s);
}

/* ------------------------------------------------------------ steady */

/* Block 2 (steady states) of a steady-state CSV: series and label. */
static size_t steady_rows(const char *path, int *series, char labels[][16], size_t max)
{
    char *csv = slurp(path), *save = NULL;
    size_t n = 0;
    int block = -1;
    for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "# block ", 8)) { block = atoi(line + 8); continue; }
        if (block != 2 || n >= max) continue;
        series[n] = atoi(line);
        /* the label is field 10 (then where it goes, and its leader line) */
        const char *f = line;
        for (int k = 0; k < 9 && f; k++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL;
        cr_assert_not_null(f, "%s", line);
        snprintf(labels[n], sizeof labels[0], "%.*s", (int)strcspn(f, ","), f);
        n++;
    }
    free(csv);
    return n;
}

/* The steady-state figure of the first GPU and workload of a sweep. */
static void steady_figure(ws_sweep *s)
{
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_steady(&c, s, 0, 0, &err), 0, "%s", err.msg);
}

Test(figures, steady_states_labelled_by_eta, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: cifar100\neta: [0, 0.5, 1]\nbeta: 2\n"
                     "seed: 1..2\nrecurrences: 20\n", "zeus:jit");
    steady_figure(&s);
    char path[600], labels[16][16];
    int series[16];
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.csv", tmp);
    size_t n = steady_rows(path, series, labels, 16);
    /* zeus at each eta; default once (its knob does not depend on eta),
     * unlabelled; oracle not drawn. Eta 0.5 and 1 settle within 1.75
     * markers of each other here: one label for both (the next test). */
    cr_assert_eq(n, 4);
    const char *want[] = {"η=0", "η=0.5–1", ""};
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(series[i], 0);
        cr_expect_str_eq(labels[i], want[i]);
    }
    cr_expect_eq(series[3], 1);
    cr_expect_str_eq(labels[3], "");
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "with labels"), "eta labels are drawn");
    /* default in the key, with where to find it (it is far from the
     * frontier here: in the overview only) */
    cr_expect(strstr(gp, "'default+default: right panel'"), "%s", gp);
    cr_expect(!strstr(gp, "colorbox user"), "no colour bar");
    free(gp);
    done(&s);

    /* One eta: every pair, oracle included, none labelled. */
    s = run("gpu: v100\nworkload: cifar100\neta: 0.5\nbeta: 2\nseed: 1..2\nrecurrences: 20\n",
            "zeus:jit,grid:grid");
    steady_figure(&s);
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.csv", tmp);
    n = steady_rows(path, series, labels, 16);
    cr_expect_eq(n, s.n_pairs);
    for (size_t i = 0; i < n; i++) cr_expect_str_eq(labels[i], "");
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.gp", tmp);
    gp = slurp(path);
    cr_expect(strstr(gp, "'oracle+oracle'"), "oracle is in the key");
    cr_expect(strstr(gp, "steady state of each policy (η = 0.5, β = 2)"));
    free(gp);
    done(&s);
}

/* Etas that settle on the same steady state share a point and one label
 * ("η=0–0.2"): on NCF/MovieLens-1M zeus+jit settles on one knob for
 * η up to 0.5 and another above. */
Test(figures, equal_steady_states_share_a_label, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: movielens-1m\neta: [0, 0.2, 0.6, 1]\nbeta: 2\n"
                     "seed: 1..3\n", "zeus:jit");
    steady_figure(&s);
    char path[600], labels[16][16];
    int series[16];
    snprintf(path, sizeof path, "%s/steady-v100-movielens-1m.csv", tmp);
    size_t n = steady_rows(path, series, labels, 16);
    cr_assert_eq(n, 5);
    const char *want[] = {"η=0–0.2", "", "η=0.6–1", ""};
    for (size_t i = 0; i < 4; i++) cr_expect_str_eq(labels[i], want[i], "row %zu", i);
    done(&s);
}

/* The zoomed panel of a steady-state figure as its .gp sets it: ranges
 * r and its plot area's width and height in points (its margins, screen
 * fractions of the 7 x 3.4 in page). */
static void steady_range(const char *gp_path, double r[4], double *w, double *h)
{
    char *gp = slurp(gp_path);
    const char *x = strstr(gp, "X0 = ");
    cr_assert_not_null(x, "%s", gp);
    cr_assert_eq(sscanf(x, "X0 = %lf; X1 = %lf; Y0 = %lf; Y1 = %lf", &r[0], &r[1], &r[2], &r[3]),
                 4);
    const char *m = strstr(gp, "set lmargin at screen ");
    double l, rr, b, t;
    cr_assert_not_null(m, "%s", gp);
    cr_assert_eq(sscanf(m, "set lmargin at screen %lf; set rmargin at screen %lf\n"
                           "set bmargin at screen %lf; set tmargin at screen %lf", &l, &rr, &b, &t),
                 4);
    cr_assert(m < x, "the zoomed panel's margins come first");
    *w = (rr - l) * 7 * 72;
    *h = (t - b) * 3.4 * 72;
    free(gp);
}

/* The paper's eta plot on ShuffleNet/CIFAR-100: eta 0.3 to 1 settle close
 * together. Consecutive etas share a label exactly when their markers (7 pt)
 * are within 1.75 markers of each other on the page, a group spanning at
 * most 3 such distances each way, on the panel the script lays out. And
 * every steady state is inside the panel with room for a marker, its
 * whole confidence interval too: eta 0 settles faster than the fastest
 * knob's mean (runs are sampled), and the panel once stopped just past
 * that knob, cutting it off; eta 0.6 to 1 sit on the least-energy knob,
 * where the panel stopped 3.5 pt below, cutting their markers in half; and
 * on MovieLens-1M the error bars once ran out of the panel. Seeds 11-20:
 * with them (numpy's streams) eta 0 does settle faster than the fastest
 * knob. */
Test(figures, near_steady_states_share_a_label, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: cifar100\neta: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,"
                     " 0.8, 0.9, 1]\nbeta: 2\nseed: 11..20\n", "zeus:jit");
    steady_figure(&s);
    char path[600];
    double r[4], w, h;
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.gp", tmp);
    steady_range(path, r, &w, &h);
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.csv", tmp);
    char *csv = slurp(path), *save = NULL;
    double eta[16], px[16], py[16], tta0 = NAN, fastest = INFINITY;
    char label[16][32];
    size_t n = 0;
    int block = -1;
    for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "# block ", 8)) { block = atoi(line + 8); continue; }
        if (block == 0) {                                    /* knobs: bs,pl,tta,... */
            const char *f = strchr(strchr(line, ',') + 1, ',') + 1;
            fastest = fmin(fastest, strtod(f, NULL));
        }
        if (block != 2 || atoi(line) != 0) continue;        /* zeus' rows */
        double v[8];
        char *f = strchr(line, ',') + 1;
        for (int k = 0; k < 8; k++) {
            v[k] = strtod(f, &f);
            f++;
        }
        cr_assert(n < 16);
        eta[n] = v[0];
        px[n] = (v[2] - r[0]) / (r[1] - r[0]) * w;
        py[n] = (v[3] - r[2]) / (r[3] - r[2]) * h;
        snprintf(label[n], sizeof label[n], "%.*s", (int)strcspn(f, ","), f);
        /* inside, with room for the largest marker (oracle's circle, 8 pt
         * in radius), and so are the ends of the 95 % CI */
        cr_expect(px[n] >= 8 && px[n] <= w - 8 && py[n] >= 8 && py[n] <= h - 8,
                  "eta %g at (%g, %g) is %g, %g pt from the panel's lower left corner"
                  " (%g x %g pt)", v[0], v[2], v[3], px[n], py[n], w, h);
        cr_expect(v[4] >= r[0] && v[5] <= r[1] && v[6] >= r[2] && v[7] <= r[3],
                  "eta %g: its CI [%g, %g] x [%g, %g] leaves the panel [%g, %g] x [%g, %g]",
                  v[0], v[4], v[5], v[6], v[7], r[0], r[1], r[2], r[3]);
        if (n == 0) tta0 = v[2];
        n++;
    }
    free(csv);
    cr_assert_eq(n, 11);
    /* the case the range fix is for */
    cr_expect(tta0 < fastest, "eta 0 at %g min, the fastest knob at %g", tta0, fastest);
    /* groups: runs of etas whose consecutive markers are near */
    size_t groups = 0, labelled = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        double x0 = px[i], x1 = px[i], y0 = py[i], y1 = py[i];
        while (j + 1 < n && hypot(px[j + 1] - px[j], py[j + 1] - py[j]) <= 1.75 * 7
               && fmax(x1, px[j + 1]) - fmin(x0, px[j + 1]) <= 3 * 1.75 * 7
               && fmax(y1, py[j + 1]) - fmin(y0, py[j + 1]) <= 3 * 1.75 * 7) {
            j++;
            x0 = fmin(x0, px[j]), x1 = fmax(x1, px[j]), y0 = fmin(y0, py[j]), y1 = fmax(y1, py[j]);
        }
        char want[32];
        if (j > i) snprintf(want, sizeof want, "η=%g–%g", eta[i], eta[j]);
        else snprintf(want, sizeof want, "η=%g", eta[i]);
        /* more than six groups: every other one (and the last) labelled */
        if (label[i][0]) {
            cr_expect_str_eq(label[i], want, "group from eta %g", eta[i]);
            labelled++;
        }
        for (size_t k = i + 1; k <= j; k++)
            cr_expect_str_eq(label[k], "", "eta %g is in the group of %g", eta[k], eta[i]);
        groups++;
        i = j;
    }
    cr_expect(groups < n, "some etas share a label (%zu groups)", groups);
    cr_expect_eq(labelled, groups <= 6 ? groups : (groups + 1) / 2 + (groups % 2 == 0));
    done(&s);
}

/* ------------------------------------------------------------ pdf */

/* The one test that runs gnuplot: potential renders PNG, SVG and a valid
 * one-page PDF at the two-column width (7 in = 504 pt). */
Test(figures, pdf_is_valid, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    if (run_shell("%s", "command -v gnuplot >/dev/null && command -v pdfinfo >/dev/null"))
        cr_skip_test("gnuplot or pdfinfo (poppler-utils) not installed");
    cr_assert_eq(run_shell(CLI " potential --gpus v100,a40 --workloads cifar100,squad --traces "
                           TRACES " --catalogue " CATALOGUE " --out %s/p >/dev/null", tmp), 0);
    cr_expect_eq(run_shell("pdfinfo %s/p/potential.pdf > %s/info", tmp, tmp), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/info", tmp);
    char *info = slurp(path);
    cr_expect(strstr(info, "Pages:           1"), "%s", info);
    cr_expect(strstr(info, "Page size:       504 x"), "%s", info);
    free(info);
    struct stat st;
    snprintf(path, sizeof path, "%s/p/potential.png", tmp);
    cr_expect_eq(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s/p/potential.csv", tmp);
    table t = read_table(path);
    cr_assert_eq(t.n, 4);
    cr_expect_str_eq(str(&t, 2, "gpu"), "a40");
    cr_expect_eq(num(&t, 2, "gpu_index"), 1);
    free_table(&t);
}

/* ------------------------------------------------------------ paper.md */

/* paper.md's numbers are those of the outputs: the V100 potential range
 * is exactly the paper's 23.8 %-74.7 % (the traces give it), and Zeus's
 * range is the min and max of savings.csv's rows versus default. */
Test(figures, paper_md_matches_the_outputs, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    char path[600];
    snprintf(path, sizeof path, "%s/c.yaml", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpu: v100\nworkload: [cifar100, squad, imagenet]\neta: 0.5\nbeta: 2\nseed: 1..3\n"
          "recurrences: 30\n", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(run_shell(CLI " potential --gpus v100 --traces " TRACES " --catalogue " CATALOGUE
                           " --out %s/r/potential >/dev/null", tmp), 0);
    cr_assert_eq(run_shell(CLI " sweep %s --policies zeus:jit,grid:grid --traces " TRACES
                           " --catalogue " CATALOGUE " --out %s/r/comparison --no-plot >/dev/null",
                           path, tmp), 0);
    cr_assert_eq(run_shell(CLI " report %s/r --catalogue " CATALOGUE " >/dev/null", tmp), 0);
    snprintf(path, sizeof path, "%s/r/comparison/savings.csv", tmp);
    table t = read_table(path);
    double lo = INFINITY, hi = -INFINITY, worst = INFINITY, second = INFINITY;
    const char *worst_w = NULL, *second_w = NULL;
    for (size_t r = 0; r < t.n; r++) {
        if (strcmp(str(&t, r, "versus"), "default+default")) continue;
        double v = num(&t, r, "eta_saving_pct");
        lo = fmin(lo, v);
        hi = fmax(hi, v);
        if (v < worst) { second = worst; second_w = worst_w; worst = v; worst_w = str(&t, r, "workload"); }
        else if (v < second) { second = v; second_w = str(&t, r, "workload"); }
    }
    cr_assert(worst_w && second_w);
    snprintf(path, sizeof path, "%s/r/paper.md", tmp);
    char *md = slurp(path);
    char want[256];
    cr_expect(strstr(md, "(motivation) | 23.8 %–74.7 % | 23.8 %–74.7 % |"), "%s", md);
    snprintf(want, sizeof want, "Energy saving of Zeus (abstract) | 15.3 %%–75.8 %% | %.1f %%–%.1f %% |",
             lo, hi);
    cr_expect(strstr(md, want), "want %s in\n%s", want, md);
    snprintf(want, sizeof want, "%.1f pp (low end)", lo - 15.3);
    cr_expect(strstr(md, want), "want %s", want);
    /* one GPU: the smallest savings are the two smallest rows */
    ws_catalogue c2;
    ws_error err = {{0}};
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &c2, &err), 0, "%s", err.msg);
    snprintf(want, sizeof want, "| %s (%.1f %%), %s (%.1f %%) |",
             ws_catalogue_workload_display(&c2, worst_w), worst,
             ws_catalogue_workload_display(&c2, second_w), second);
    cr_expect(strstr(md, want), "want %s in\n%s", want, md);
    ws_catalogue_free(&c2);
    free(md);
    free_table(&t);
    /* The report starts with the key numbers and a table of contents in the
     * paper's order; figures are images (SVG as a data URI), never inline
     * markup. */
    snprintf(path, sizeof path, "%s/r/report.html", tmp);
    char *html = slurp(path);
    char *key = strstr(html, "id=\"key-numbers\""), *toc = strstr(html, "<nav>");
    char *pot = strstr(html, "<h2 id=\"sec-0\">Energy-saving potential");
    char *cmp = strstr(html, "<h2 id=\"sec-1\">Zeus versus default");
    cr_expect(key && toc && pot && cmp && key < toc && toc < pot && pot < cmp, "order");
    cr_expect(strstr(html, "<img alt=\"") && strstr(html, "src=\"data:image/svg+xml;base64,"),
              "figures embedded as images");
    cr_expect(!strstr(html, "<svg"), "no inline SVG");
    free(html);
}

/* The cells of the row of paper.md that starts with `start` ("| V100 |
 * NAME |"), after it, as numbers (NAN: not a number); how many. */
static size_t md_row(const char *md, const char *start, double *v, size_t max)
{
    const char *p = strstr(md, start);
    if (!p) return 0;
    p += strlen(start);
    size_t n = 0;
    while (n < max && *p && *p != '\n') {
        char *end;
        double x = strtod(p, &end);
        v[n++] = end == p ? NAN : x;
        const char *bar = strchr(p, '|');
        if (!bar) break;
        p = bar + 1;
    }
    return n;
}

/* paper.md's estimators, from the sweep's history.csv, agree with what the
 * study layer computes from the same simulations: the mean of per-seed
 * savings is savings.csv's ETA saving, the ratio of sums is 1 - ratio of
 * sweep.csv's mean ETAs (same seeds), the last 10 % is sweep.csv's steady
 * saving; the cost table lists exactly the jobs whose sweep.csv cost
 * saving is negative. (Fails on the code before the estimators: no such
 * table.) */
Test(figures, paper_md_estimators_match_the_sweep, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    char path[600];
    snprintf(path, sizeof path, "%s/c.yaml", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpu: v100\nworkload: [cifar100, squad, imagenet, sentiment140]\neta: 0.5\nbeta: 2\n"
          "seed: 1..3\nrecurrences: 40\n", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(run_shell(CLI " potential --gpus v100 --traces " TRACES " --catalogue " CATALOGUE
                           " --out %s/r/potential >/dev/null", tmp), 0);
    cr_assert_eq(run_shell(CLI " sweep %s --policies zeus:jit,default:default --traces " TRACES
                           " --catalogue " CATALOGUE " --out %s/r/comparison --no-plot"
                           " --keep-history >/dev/null", path, tmp), 0);
    cr_assert_eq(run_shell(CLI " report %s/r --catalogue " CATALOGUE " >/dev/null", tmp), 0);
    snprintf(path, sizeof path, "%s/r/paper.md", tmp);
    char *md = slurp(path);
    cr_expect(strstr(md, "| total ETA, mean of per-seed savings | total ETA, ratio of sums |"
                         " steady state, last 10 recurrences, ratio of sums | steady state, last"
                         " 10 % of recurrences, ratio of sums | after exploration, ratio of sums |"),
              "one estimator per column, named in its header:\n%s", md);
    cr_expect(!strstr(md, "Energy saving of Zeus (abstract) |"), "no row mixing estimators");
    ws_catalogue c2;
    ws_error err = {{0}};
    cr_assert_eq(ws_catalogue_load(CATALOGUE, &c2, &err), 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s/r/comparison/savings.csv", tmp);
    table sv = read_table(path);
    snprintf(path, sizeof path, "%s/r/comparison/sweep.csv", tmp);
    table sw = read_table(path);
    size_t jobs = 0, above = 0;
    for (size_t r = 0; r < sv.n; r++) {
        if (strcmp(str(&sv, r, "versus"), "default+default")) continue;
        const char *w = str(&sv, r, "workload");
        double ez = NAN, ed = NAN, steady = NAN, cost_saving = NAN;
        for (size_t q = 0; q < sw.n; q++) {
            if (strcmp(str(&sw, q, "workload"), w)) continue;
            if (!strcmp(str(&sw, q, "policy"), "zeus+jit")) {
                ez = num(&sw, q, "energy_j");
                steady = num(&sw, q, "saving_steady_energy");
                cost_saving = num(&sw, q, "saving_cost");
            } else if (!strcmp(str(&sw, q, "policy"), "default+default")) {
                ed = num(&sw, q, "energy_j");
            }
        }
        char start[256];
        snprintf(start, sizeof start, "| V100 | %s |", ws_catalogue_workload_display(&c2, w));
        double v[8];
        cr_assert_geq(md_row(md, start, v, 8), 8, "row %s in\n%s", start, md);
        /* v: potential, mean, ratio, last 10, last 10 %, after exploration,
         * exploration end, seeds */
        cr_expect(fabs(v[1] - num(&sv, r, "eta_saving_pct")) <= 0.051, "%s mean %g", w, v[1]);
        cr_expect(fabs(v[2] - 100 * (1 - ez / ed)) <= 0.051, "%s ratio %g", w, v[2]);
        cr_expect(fabs(v[4] - 100 * steady) <= 0.051, "%s last 10 %% %g", w, v[4]);
        cr_expect(isfinite(v[3]) && isfinite(v[5]) && v[6] >= 1 && v[6] < 40, "%s", w);
        cr_expect_eq(v[7], 3);
        /* the cost table: the jobs where zeus+jit's cost is above */
        int listed = 0;
        for (const char *p = md; (p = strstr(p, start)); p += strlen(start))
            listed++;
        /* every job once in the estimator table, again in the cost table
         * when its cost is above the default's */
        cr_expect_eq(listed, 1 + (cost_saving < 0), "%s: %d rows, cost saving %g", w, listed,
                     cost_saving);
        above += cost_saving < 0;
        jobs++;
    }
    cr_expect_eq(jobs, 4);
    char want[128];
    snprintf(want, sizeof want, "default's, at η = 0.5: %zu of 4 jobs", above);
    cr_expect(strstr(md, want), "want %s in\n%s", want, md);
    ws_catalogue_free(&c2);
    free_table(&sv);
    free_table(&sw);
    free(md);
    /* a history.csv from elsewhere is data: a recurrence out of range, a
     * simulation that is no index, or an energy below 0 is refused naming
     * the file and line, exit 2, and no paper.md is written */
    static const char *const bad[][2] = {
        {"s/^\\(0,v100,[a-z0-9]*,0.5,2,1,\\)1,/\\199999999,/", "history.csv:2: recurrence"},
        {"3s/^0,/x,/", "history.csv:3: simulation 'x' is not an index"},
        {"4s/^\\(0,v100,[a-z0-9]*,0.5,2,1,[0-9]*,[0-9]*,[0-9]*,[0-9]*,[0-9]*,\\)/\\1-/",
         "history.csv:4: energy, time or cost outside 0..1e18"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(run_shell("rm -rf %s/h && cp -r %s/r %s/h && rm %s/h/paper.md && sed -i '%s'"
                               " %s/h/comparison/history.csv", tmp, tmp, tmp, tmp, bad[i][0], tmp),
                     0);
        cr_expect_eq(run_shell(CLI " report %s/h 2>%s/err >/dev/null", tmp, tmp), 2, "%s",
                     bad[i][0]);
        snprintf(path, sizeof path, "%s/err", tmp);
        char *e = slurp(path);
        cr_expect(strstr(e, bad[i][1]), "want %s in %s", bad[i][1], e);
        free(e);
        snprintf(path, sizeof path, "%s/h/paper.md", tmp);
        cr_expect(access(path, F_OK) != 0, "no paper.md after a refusal");
    }
}

/* ------------------------------------------------------------ manual */

/* Every figure the README and the manual (docs/) show is a file in
 * configs/paper/figures/ that scripts/reproduce-paper
 * --update-readme-figures writes, so "copies made by the script" holds.
 * Counts the links of one file; *seen collects which names were found. */
static size_t manual_figures(const char *file, const char *prefix, const char *script,
                             char *seen, size_t seen_size)
{
    char *text = slurp(file);
    cr_assert(text, "cannot read %s", file);
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, prefix)); n++) {
        p += strlen(prefix);
        size_t len = strcspn(p, ")");
        char name[256], path[600], cp[300];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        snprintf(path, sizeof path, WS_SOURCE_DIR "/configs/paper/figures/%s", name);
        struct stat st;
        cr_expect_eq(stat(path, &st), 0, "%s shows %s, which is missing", file, name);
        snprintf(cp, sizeof cp, "\"$fig/%s\"", name);
        cr_expect(strstr(script, cp), "%s is not copied by --update-readme-figures", name);
        size_t used = strlen(seen);
        snprintf(seen + used, seen_size - used, " %s", name);
    }
    cr_expect(!strstr(text, "number for number,"), "%s: statistically, not number for number",
              file);
    free(text);
    return n;
}

Test(figures, manual_figures_come_from_the_reproduction)
{
    char *script = slurp(WS_SOURCE_DIR "/scripts/reproduce-paper");
    char seen[4096] = "";
    size_t n = manual_figures(WS_SOURCE_DIR "/README.md", "](configs/paper/figures/", script,
                              seen, sizeof seen);
    cr_expect_geq(n, 1, "the README shows a frontier");
    cr_expect(strstr(seen, " pareto-v100-librispeech.png"), "the README's frontier");
    DIR *d = opendir(WS_SOURCE_DIR "/docs");
    cr_assert(d, "cannot open docs/");
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
        char path[512];
        snprintf(path, sizeof path, WS_SOURCE_DIR "/docs/%s", e->d_name);
        n += manual_figures(path, "](../configs/paper/figures/", script, seen, sizeof seen);
    }
    closedir(d);
    cr_expect_geq(n, 6, "the manual shows the savings bars, a frontier, ...");
    cr_expect(strstr(seen, " savings.png"), "savings bar chart");
    free(script);
}

/* ------------------------------------------------------------ frontier */

/* NCF/MovieLens-1M's frontier spans 0.5 % of its TTA: the zoomed panel
 * once showed just that, ticks every 0.02 s running into each other. Its
 * range spans 5 % at least, with two to eight ticks a common step apart;
 * knobs outside it are left to the overview (kx), not drawn cut. */
Test(figures, frontier_zoom_spans_five_percent, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " pareto --workload movielens-1m --gpu v100"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/f.pdf"
                           " >/dev/null 2>&1", tmp), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/f.gp", tmp);
    char *gp = slurp(path);
    double r[4];
    const char *x = strstr(gp, "X0 = ");
    cr_assert(x && sscanf(x, "X0 = %lf; X1 = %lf; Y0 = %lf; Y1 = %lf", &r[0], &r[1], &r[2], &r[3])
                       == 4, "%s", gp);
    cr_expect_geq((r[1] - r[0]) / r[1], 0.05, "TTA from %g to %g s", r[0], r[1]);
    cr_expect_geq((r[3] - r[2]) / r[3], 0.05, "ETA from %g to %g kJ", r[2], r[3]);
    /* the x ticks: the first `set xtics (...)`, the zoomed panel's */
    const char *t = strstr(gp, "set xtics (");
    cr_assert_not_null(t);
    double v[16];
    int n = 0;
    for (const char *p = t; n < 16 && (p = strchr(p + 1, '\'')) && p < strchr(t, ')');) {
        p = strchr(p + 1, '\'');
        v[n++] = strtod(p + 1, NULL);
    }
    cr_expect(n >= 2 && n <= 8, "%d ticks", n);
    for (int i = 0; i < n; i++) cr_expect(v[i] >= r[0] && v[i] <= r[1], "tick %g", v[i]);
    for (int i = 2; i < n; i++) cr_expect(NEAR(v[i] - v[i - 1], v[1] - v[0]), "even steps");
    cr_expect(strstr(gp, "($5 == 1 ? kx($12, $13) : NaN)"), "knobs whole or not at all");
    free(gp);
}

/* Which knobs the frontier figure names: the default and the least-cost
 * knob, with their batch size and limit, in the key (no label over the
 * data); the title shows display names. gnuplot is kept off PATH, so
 * only the data and the script are written. */
Test(figures, frontier_names_its_knobs, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " pareto --workload librispeech --gpu v100"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/f.pdf"
                           " >/dev/null 2>&1", tmp), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/f.gp", tmp);
    char *gp = slurp(path);
    /* by hand from the reference landscape (tests/data/reference): the
     * default is b0 = 192 at 250 W, the least cost at eta 0.5 is 48 at 150 W */
    cr_expect(strstr(gp, "t_def = 'default knob (192, 250 W)'"), "%s", gp);
    cr_expect(strstr(gp, "t_best = 'least cost, η = 0.5 (48, 150 W)'"));
    cr_expect(strstr(gp, "'DeepSpeech2 / LibriSpeech, V100: TTA and ETA of every knob'"));
    /* no label over the data; the colour bar titled along it */
    cr_expect(!strstr(gp, "\nset label"), "no label over the data");
    cr_expect(strstr(gp, "set cblabel 'Batch size'"));
    const char *o = strstr(gp, "# second panel");
    cr_expect(o && strstr(o, "set logscale x") && strstr(o, "set logscale y"),
              "the overview is log-log");
    cr_expect(o && strstr(o, "set xlabel 'TTA (h)'") && strstr(o, "set ylabel 'ETA (MJ)'"),
              "the overview's axes say what and in which unit");
    /* its frame of the zoomed region is dashed grey: no marker's colour;
     * dashes 6 pt long at lw 1.2 (4,3 at lw 1 came out as dots, issue 30) */
    cr_expect(o && strstr(o, "lc rgb '#444444' lw 1.2 dt (6,4)"), "%s", o);
    cr_expect(strstr(gp, "pdfcairo") && strstr(gp, "fontscale 0.75"), "fonts at their size");
    free(gp);
}

/* ------------------------------------------------------------ issue 30 */

/* Item 8: NCF at β = ∞ loses 400 % (its CI to −600 %) where every other
 * bar is within ±75 %: on an axis to −600 the others were flat. The axis
 * is cut: it spans the other bars, the cut bar runs to the frame, and its
 * value and CI are written beside it (the label rows are the cut ones). */
Test(figures, savings_axis_cut_for_a_bar_that_dwarfs_the_rest, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    char dir_one[500];
    ws_sweep s = run("gpu: v100\nworkload: [cifar100, movielens-1m]\neta: 0.5\n"
                     "beta: [2, .inf]\nseed: 1..3\n", "zeus:jit");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_savings(&c, &s, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/savings.csv", tmp);
    table t = read_table(path);
    double worst = 0, rest = 0;            /* the NCF β = ∞ ETA saving, the others' lowest */
    for (size_t row = 0; row < t.n; row++) {
        int inf = num(&t, row, "beta_index") == 1, ncf = num(&t, row, "workload_index") == 1;
        double lo = fmin(num(&t, row, "eta_saving_lo"), num(&t, row, "tta_saving_lo"));
        if (inf && ncf) worst = num(&t, row, "eta_saving_pct");
        else rest = fmin(rest, lo);
    }
    free_table(&t);
    cr_assert_lt(worst, -200, "the data still hold the outlier (%g)", worst);
    snprintf(path, sizeof path, "%s/savings.gp", tmp);
    char *gp = slurp(path);
    double ylo = 0, yhi = 0;
    const char *at = strstr(gp, "YLO = ");
    cr_assert(at, "%s", gp);
    cr_assert_eq(sscanf(at, "YLO = %lf; YHI = %lf", &ylo, &yhi), 2);
    cr_expect_gt(ylo, worst, "the axis is cut above the outlier (%g > %g)", ylo, worst);
    cr_expect_leq(ylo, rest, "every other bar and CI is whole (%g <= %g)", ylo, rest);
    cr_expect_lt(yhi - ylo, 4 * yhi, "the others are not flattened");
    /* the bars are clipped to the axis, the cut ones labelled */
    cr_expect(strstr(gp, "clip(y) = y < YLO ? YLO : y > YHI ? YHI : y\n"));
    cr_expect(strstr(gp, "with boxes") && strstr(gp, ":(clip($8)) with boxes"), "%s", gp);
    /* the label right of the bar, kept within the frame */
    cr_expect(strstr(gp, "cut($8) ? (x(g) + bw * 0.6 < ") && strstr(gp, "(num($8).' % (cut)'"), "%s", gp);
    /* a panel's cut-bar clauses only where a bar of it is cut: gnuplot 5.4
     * crashes on a label clause with no defined point in a one-row file */
    snprintf(path, sizeof path, "%s/savings.csv", tmp);
    t = read_table(path);
    int tta_cut = 0;
    for (size_t row = 0; row < t.n; row++) {
        const double v = num(&t, row, "tta_saving_pct");
        if (isfinite(v) && (v < ylo || v > yhi)) tta_cut = 1;
    }
    free_table(&t);
    cr_expect_eq(!!strstr(gp, "(num($11).' % (cut)'"), tta_cut, "TTA cut %d:\n%s", tta_cut, gp);
    free(gp);
    done(&s);

    /* one job: two bars (ETA, TTA) are not a set a quarter of which can
     * be outliers; nothing is cut however they differ (a cut TTA bar beside
     * an ETA panel with none crashed gnuplot 5.4, the file having one row) */
    s = run("gpu: v100\nworkload: imagenet\neta: 0.5\nbeta: 2\nseed: 1..2\nrecurrences: 12\n",
            "zeus:jit");
    gp = savings_gp_in(&c, &s, "one", dir_one, sizeof dir_one);
    snprintf(path, sizeof path, "%s/savings.csv", dir_one);
    t = read_table(path);
    const double e1 = num(&t, 0, "eta_saving_pct"), t1 = num(&t, 0, "tta_saving_pct");
    free_table(&t);
    cr_assert_gt(fabs(t1), 3 * fmax(fabs(e1), 5), "the TTA bar dwarfs the ETA bar (%g, %g)", t1, e1);
    cr_expect(!strstr(gp, "(cut)") && !strstr(gp, "boxxyerror"), "%s", gp);
    free(gp);
    done(&s);
    c.dir = tmp;

    /* without an outlier, nothing is cut: the axis holds every CI */
    s = run("gpu: v100\nworkload: [cifar100, squad]\neta: 0.5\nbeta: 2\nseed: 1..3\n"
            "recurrences: 30\n", "zeus:jit");
    char dir[500];
    gp = savings_gp_in(&c, &s, "plain", dir, sizeof dir);
    cr_expect(!strstr(gp, "(cut)"), "nothing cut");
    free(gp);
    done(&s);
}

/* Item 7: one policy, one colour in every figure of a sweep. The curves
 * coloured pairs by position (zeus, grid, default: blue, orange, green),
 * the steady states by another rule (default vermillion, grid green). */
Test(figures, one_colour_per_policy_across_figures, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: cifar100\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                     "recurrences: 20\n", "zeus:jit,grid:grid");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_curves(&c, &s, 0, 0, 0, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_fig_steady(&c, &s, 0, 0, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/curves-v100-cifar100-eta0.5-beta2.gp", tmp);
    char *cu = slurp(path);
    snprintf(path, sizeof path, "%s/steady-v100-cifar100.gp", tmp);
    char *st = slurp(path);
    /* policy: its colour in the palette table */
    static const char *want[][2] = {{"zeus+jit", "#0072B2"}, {"grid+grid", "#E69F00"},
                                    {"default", "#D55E00"}, {"oracle", "#000000"}};
    for (size_t i = 0; i < 4; i++) {
        size_t p = pair_of(&s, i < 2 ? want[i][0] : s.pairs[i == 2 ? s.ref_default
                                                                   : s.ref_oracle].label);
        /* curves: pol<block> = 'label' then that block's line in the colour */
        char needle[128];
        snprintf(needle, sizeof needle, "lc rgb '%s' title pol", want[i][1]);
        cr_expect(strstr(cu, needle), "curves: %s in %s\n%s", s.pairs[p].label, want[i][1], cu);
        snprintf(needle, sizeof needle, "lc rgb '%s'", want[i][1]);
        cr_expect(strstr(st, needle), "steady: %s in %s\n%s", s.pairs[p].label, want[i][1], st);
    }
    /* and no other policy colour in either (green was default's in curves) */
    cr_expect(!strstr(cu, "#009E73") && !strstr(st, "#009E73"));
    free(cu);
    free(st);
    done(&s);
}

/* Item 6: `run`'s Pareto figure of a config with several η and seeds
 * showed the first η and seed 1 without saying so. It marks every knob the
 * first pair's seeds settled on at the first η, and its title names the
 * policy, the seeds, η and β and what is not drawn. */
Test(figures, run_pareto_says_which_eta_and_seeds, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    char cfgp[600], out[600], path[700];
    snprintf(cfgp, sizeof cfgp, "%s/r.yaml", tmp);
    FILE *f = fopen(cfgp, "w");
    cr_assert_not_null(f);
    fputs("gpu: v100\nworkload: squad\nseed: 1..3\neta: [0.2, 0.5, 0.8]\nrecurrences: 40\n"
          "bso: [{name: zeus, params: {window: 10}}, zeus]\nplo: jit\n", f);
    cr_assert_eq(fclose(f), 0);
    snprintf(out, sizeof out, "%s/out", tmp);
    cr_assert_eq(run_shell(CLI " run %s --traces " TRACES " --catalogue " CATALOGUE
                           " --out %s >/dev/null 2>&1", cfgp, out), 0);
    /* the knobs pair 1's seeds settled on at eta 0.2, from summary.csv */
    snprintf(path, sizeof path, "%s/summary.csv", out);
    table t = read_table(path);
    int knobs[8][2], n = 0;
    for (size_t row = 0; row < t.n; row++) {
        if (strcmp(str(&t, row, "policy"), "zeus{window=10}+jit") || !NEAR(num(&t, row, "eta"), 0.2))
            continue;
        int bs = (int)num(&t, row, "final_bs"), pl = (int)num(&t, row, "final_pl"), seen = 0;
        for (int k = 0; k < n; k++) seen |= knobs[k][0] == bs && knobs[k][1] == pl;
        if (!seen && n < 8) { knobs[n][0] = bs; knobs[n][1] = pl; n++; }
    }
    free_table(&t);
    cr_assert_geq(n, 1);
    snprintf(path, sizeof path, "%s/pareto-v100-squad.csv", out);
    t = read_table(path);
    int marked = 0;
    for (size_t row = 0; row < t.n; row++)
        if (num(&t, row, "settled") == 1) {
            marked++;
            int found = 0;
            for (int k = 0; k < n; k++)
                found |= knobs[k][0] == (int)num(&t, row, "bs") && knobs[k][1] == (int)num(&t, row, "pl");
            cr_expect(found, "marked knob %g:%g is one a seed settled on", num(&t, row, "bs"),
                      num(&t, row, "pl"));
        }
    free_table(&t);
    cr_expect_eq(marked, n, "every seed's knob marked (%d of %d)", marked, n);
    snprintf(path, sizeof path, "%s/pareto-v100-squad.gp", out);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "'marked: zeus{window=10}+jit settled, seeds 1–3, η = 0.2, β = 2 (first of"
                         " 3 η, first of 2 policy pairs)'"), "%s", gp);
    /* the key's entry fits its column (about 40 characters) */
    const char *ts = strstr(gp, "t_set = '");
    cr_assert(ts);
    const char *end = strchr(ts + 9, '\'');
    cr_expect_leq(end - (ts + 9), 40, "%.*s", (int)(end - ts), ts);
    free(gp);
}

/* Item 11: gnuplot fills a key of several lines column by column, so 11
 * η values read 0, 0.2, 0.4 ... on the first line over 0.1, 0.3 ... The
 * bars are drawn in the order that makes the key read line by line: six
 * a line (the most that fit, 7, would leave 3 empty slots) and the series
 * in column-major order 0 6 1 7 ... */
Test(figures, eta_key_reads_line_by_line, .init = mktmp, .fini = rmtmp, .timeout = 300)
{
    ws_sweep s = run("gpu: v100\nworkload: cifar100\neta: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7,"
                     " 0.8, 0.9, 1]\nbeta: 2\nseed: 1..2\nrecurrences: 10\n", "zeus:jit");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_savings(&c, &s, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/savings.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "horizontal maxcols 6 "), "%s", gp);
    cr_expect(strstr(gp, "order = '0 6 1 7 2 8 3 9 4 10 5'\n"), "%s", gp);
    cr_expect(strstr(gp, "plot for [k=1:S] data skip 1 using ($14 == 0 && $15 == 0 && series(0) == G(k)"),
              "%s", gp);
    free(gp);
    done(&s);
}

/* Issue 30, items 9 and 10. The frontier of NCF / MovieLens-1M on P100 is
 * one knob: the key said "Pareto frontier" beside a line sample, and no
 * line was drawn. ResNet-50 / ImageNet on P100 has every knob in the
 * zoomed panel: the overview repeated it (on a log axis labelled 25.0,
 * 27.5, 30.0); it is left out and a line says why. CIFAR-100 on A40: the
 * zoomed region's box in the overview was a dot; it is 10 pt a side at
 * least, and the overview's log axes have three labels at least. */
Test(figures, frontier_one_knob_and_insets, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    char path[600];
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " pareto --workload movielens-1m --gpu p100"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/m.pdf"
                           " >/dev/null 2>&1", tmp), 0);
    snprintf(path, sizeof path, "%s/m.csv", tmp);
    table t = read_table(path);
    int n_frontier = 0;
    for (size_t r = 0; r < t.n; r++) n_frontier += num(&t, r, "frontier") == 1;
    free_table(&t);
    cr_assert_eq(n_frontier, 1, "P100 / MovieLens-1M's frontier is one knob");
    snprintf(path, sizeof path, "%s/m.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "with points pt 3 ps 1.2 lw 1.5 lc rgb 'black' title 'Pareto frontier:"
                         " one knob'"), "%s", gp);
    cr_expect(!strstr(gp, "title 'Pareto frontier'"), "no line promised");
    free(gp);

    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " pareto --workload imagenet --gpu p100"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/i.pdf"
                           " >/dev/null 2>&1", tmp), 0);
    snprintf(path, sizeof path, "%s/i.gp", tmp);
    gp = slurp(path);
    cr_expect(strstr(gp, "set label 97 'Every knob is in the left panel: no overview'"), "%s", gp);
    cr_expect(!strstr(gp, "\nset logscale x") && !strstr(gp, "# second panel"),
              "no log-log overview: %s", gp);
    cr_expect(strstr(gp, "title 'Pareto frontier'"), "a frontier of several knobs: a line");
    free(gp);

    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " pareto --workload cifar100 --gpu a40"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/c.pdf"
                           " >/dev/null 2>&1", tmp), 0);
    snprintf(path, sizeof path, "%s/c.gp", tmp);
    gp = slurp(path);
    const char *o = strstr(gp, "# second panel");
    cr_assert(o, "%s", gp);
    /* the overview's area and ranges, and the box, from the script */
    double l, r, b, tp, x0, x1, y0, y1, bx0, by0, bx1, by1;
    const char *m = strstr(o, "set lmargin at screen ");
    cr_assert(m && sscanf(m, "set lmargin at screen %lf; set rmargin at screen %lf\n"
                          "set bmargin at screen %lf; set tmargin at screen %lf", &l, &r, &b,
                          &tp) == 4, "%s", o);
    cr_assert(sscanf(strstr(o, "set xrange ["), "set xrange [%lf:%lf]", &x0, &x1) == 2);
    cr_assert(sscanf(strstr(o, "set yrange ["), "set yrange [%lf:%lf]", &y0, &y1) == 2);
    cr_assert(sscanf(strstr(o, "set object 98 rectangle from "), "set object 98 rectangle from"
                     " %lf,%lf to %lf,%lf", &bx0, &by0, &bx1, &by1) == 4);
    /* the page is 7 in wide; its height from W and H */
    double w_pt = (r - l) * 7 * 72, h_in = 0;
    cr_assert(sscanf(strstr(gp, "W = "), "W = %*f; H = %lf", &h_in) == 1);
    double h_pt = (tp - b) * h_in * 72;
    double bw = w_pt * log(bx1 / bx0) / log(x1 / x0), bh = h_pt * log(by1 / by0) / log(y1 / y0);
    cr_expect_geq(bw, 10 - 1e-6, "the box is %g pt wide", bw);
    cr_expect_geq(bh, 10 - 1e-6, "the box is %g pt tall", bh);
    /* three labelled ticks at least on each log axis */
    for (int axis = 0; axis < 2; axis++) {
        const char *tics = strstr(o, axis ? "set ytics (" : "set xtics (");
        cr_assert(tics);
        int n = 0;
        for (const char *q = tics; *q && *q != '\n'; q++) n += *q == '\'';
        cr_expect_geq(n / 2, 3, "%.80s", tics);
    }
    free(gp);
}

/* Issue 30, items 9 and 11, steady states. P100 / MovieLens-1M: a frontier
 * of one knob is a point in the key; the caption says the knobs are
 * expected values and the markers sample means over the last 5 of 20
 * recurrences (every policy's lay past the "frontier", unexplained). RTX
 * 6000 / Sentiment140: every policy settles within a corner of the
 * frontier's region (its frontier runs 3.5 to 5.4 h); the panel zooms on
 * them, the frontier's far end left to the overview. */
Test(figures, steady_caption_one_knob_and_zoom_on_the_policies, .init = mktmp, .fini = rmtmp,
     .timeout = 300)
{
    ws_sweep s = run("gpu: p100\nworkload: movielens-1m\neta: 0.5\nbeta: 2\nseed: 1..2\n"
                     "recurrences: 20\n", "zeus:jit");
    ws_fig_ctx c = {tmp, "test", &cat, 0};
    ws_error err = {{0}};
    cr_assert_eq(ws_fig_steady(&c, &s, 0, 0, &err), 0, "%s", err.msg);
    char path[600];
    snprintf(path, sizeof path, "%s/steady-p100-movielens-1m.gp", tmp);
    char *gp = slurp(path);
    cr_expect(strstr(gp, "title 'Pareto frontier: one knob'") && !strstr(gp, "'Pareto frontier'"),
              "%s", gp);
    cr_expect(strstr(gp, "set label 90 'Knobs and frontier: the expected TTA and ETA of one run"),
              "%s", gp);
    cr_expect(strstr(gp, "set label 91 'Markers: sample means of the last 5 of 20 recurrences;"),
              "%s", gp);
    free(gp);
    done(&s);

    s = run("gpu: rtx6000\nworkload: sentiment140\neta: 0.5\nbeta: 2\nseed: 1..3\n",
            "zeus:jit,grid:grid");
    cr_assert_eq(ws_fig_steady(&c, &s, 0, 0, &err), 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s/steady-rtx6000-sentiment140.csv", tmp);
    /* the frontier's last knob and the steady states' largest TTA, in h */
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[1024];
    int block = -1;
    double front_max = 0, steady_max = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# block ", 8)) block = atoi(line + 8);
        else if (line[0] != '\n' && block == 1) {
            double tta;
            cr_assert(sscanf(line, "%*d,%*d,%lf", &tta) == 1);
            front_max = fmax(front_max, tta);
        } else if (line[0] != '\n' && block == 2) {
            double hi;
            cr_assert(sscanf(line, "%*d,%*[^,],%*[^,],%*f,%*f,%*f,%lf", &hi) == 1);
            steady_max = fmax(steady_max, hi);
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/steady-rtx6000-sentiment140.gp", tmp);
    gp = slurp(path);
    double x0, x1;
    cr_assert(sscanf(strstr(gp, "set xrange ["), "set xrange [%lf:%lf]", &x0, &x1) == 2);
    cr_expect_gt(front_max, 5, "the frontier runs to %g h", front_max);
    cr_expect_geq(x1, steady_max, "every steady state's CI inside (%g >= %g)", x1, steady_max);
    cr_expect_lt(x1, 0.5 * (steady_max + front_max), "zoomed on the policies: %g h", x1);
    free(gp);
    done(&s);
}
