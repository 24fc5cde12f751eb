/*
 * Data drift (docs/model.md, "Data drift"): a job whose recorded runs
 * change from a recurrence on. Phase 1 is the tiny fixture (fixture.h);
 * phase 2 has the same knobs and other target epochs:
 *
 *   bs  phase 1 epochs  phase 2 epochs
 *   16  4, 4            2, 2
 *   32  5, 5            8, 8
 *   64  12, 12 (never)  12, 12 (never)
 *
 * Hand-computed costs at eta 0.5 (cost = 0.5 E + 0.5 * 200 * T; e.g.
 * 32 @ 200 W: 10 s and 160 W per epoch):
 *   phase 1: 32@200 5 ep: E 8000, T 50, cost 9000; 32@100: 8700 (the best
 *            knob); 16@200: 10500; 16@100: 11200
 *   phase 2: 32@200 8 ep: E 12800, T 80, cost 14400; 32@100: 13920;
 *            16@200 2 ep: E 4500, T 30, cost 5250 (the best); 16@100: 5600
 * The early-stopping budget of phase 2 comes from phase 1's least cost
 * (min_cost carries over): floor(2 * 9000 / 1800) = 10 epochs for 32@200,
 * at least the 8 it needs.
 */
#include <math.h>
#include <sys/stat.h>

#include "fixture.h"
#include "run_cli.h"
#include "wattsim/config.h"
#include "wattsim/engine.h"
#include "wattsim/params.h"
#include "wattsim/study.h"

#define PHASE2_TRAIN                                                                  \
    "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n" \
    "d,n,16,o,0.1,1,0.5,2\nd,n,16,o,0.1,2,0.5,2\n"                                    \
    "d,n,32,o,0.1,1,0.5,8\nd,n,32,o,0.1,2,0.5,8\n"                                    \
    "d,n,64,o,0.1,1,0.5,12\nd,n,64,o,0.1,2,0.5,12\n"
#define FIXTURE_POWER                                                                 \
    "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n" \
    "d,n,16,o,100,20,80\nd,n,16,o,200,15,150\n"                                       \
    "d,n,32,o,100,12,90\nd,n,32,o,200,10,160\n"                                       \
    "d,n,64,o,100,8,95\nd,n,64,o,200,7,190\n"

/* A trace folder with the given train and power traces of GPU g1. */
static void write_traces(const char *dir, const char *train, const char *power)
{
    char p[256];
    mkdir(dir, 0700);
    snprintf(p, sizeof p, "%s/summary_train.csv", dir);
    fixture_write(p, train);
    snprintf(p, sizeof p, "%s/summary_power_g1.csv", dir);
    fixture_write(p, power);
}

static void remove_traces(const char *dir)
{
    char p[256];
    snprintf(p, sizeof p, "%s/summary_train.csv", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/summary_power_g1.csv", dir);
    unlink(p);
    rmdir(dir);
}

typedef struct drift_sim {
    ws_traces tr, tr2;
    ws_job_table jt, jt2;
    ws_registry *reg;
    fixture_runs out;
    ws_sim_totals tot;
    double rec_cost[64];
    ws_error err;
    int rc;
} drift_sim;

/* Simulate the fixture drifting to phase 2 from recurrence `from` (0: no
 * drift) with the built-in policies bso/plo (params: "window" of zeus). */
static void simulate(drift_sim *s, const char *bso, long window, const char *plo, long from,
                     long recurrences, int informed, unsigned long seed)
{
    memset(s, 0, sizeof *s);
    fixture_job(&s->tr, &s->jt, 0.5, 2.0);
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/ws-drift-XXXXXX");
    cr_assert(mkdtemp(dir));
    write_traces(dir, PHASE2_TRAIN, FIXTURE_POWER);
    cr_assert_eq(ws_traces_load(&s->tr2, dir, "g1", NULL, &s->err), 0, "%s", s->err.msg);
    cr_assert_eq(ws_job_build(&s->jt2, &s->tr2, &fixture_spec, 0.5, 2.0, &s->err), 0, "%s",
                 s->err.msg);
    remove_traces(dir);
    s->reg = ws_registry_new();
    const ws_bso_type *bt = fixture_bso(s->reg, bso);
    const ws_plo_type *pt = fixture_plo(s->reg, plo);
    ws_value *bp = NULL, *pp = NULL;
    char wv[32];
    snprintf(wv, sizeof wv, "%ld", window);
    ws_param_raw raw = {(char *)"window", wv, (char *)"test"};
    cr_assert_eq(ws_params_resolve(bt->params, window ? &raw : NULL, window ? 1 : 0, "bso", &bp,
                                   &s->err), 0, "%s", s->err.msg);
    cr_assert_eq(ws_params_resolve(pt->params, NULL, 0, "plo", &pp, &s->err), 0);
    ws_bso *b = ws_bso_new(bt, bp, seed, &s->err);
    ws_plo *p = ws_plo_new(pt, pp, seed, &s->err);
    cr_assert(b && p, "%s", s->err.msg);
    ws_drift_phase phase = {from, &s->jt2.job};
    ws_sim_params sp = {.recurrences = recurrences, .seed = seed, .rec_cost = s->rec_cost,
                        .drift = from ? &phase : NULL, .n_drift = from ? 1 : 0,
                        .drift_informed = informed};
    cr_assert_leq(recurrences, 64);
    s->rc = ws_simulate(&s->jt.job, b, p, &sp, fixture_keep, &s->out, &s->tot, &s->err);
    ws_bso_free(b);
    ws_plo_free(p);
    ws_params_free(bt->params, bp);
    ws_params_free(pt->params, pp);
}

static void done(drift_sim *s)
{
    ws_registry_free(s->reg);
    ws_job_free(&s->jt);
    ws_job_free(&s->jt2);
    ws_traces_free(&s->tr);
    ws_traces_free(&s->tr2);
}

/* ------------------------------------------------------------ engine */

/* default+default plays 32 @ 200 W throughout: 5 epochs and 9000 up to
 * recurrence 3, 8 epochs and 14400 from recurrence 4 on. */
Test(drift, history_switches_at_the_phase)
{
    drift_sim s;
    simulate(&s, "default", 0, "default", 4, 6, 0, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    cr_assert_eq(s.out.n, 6);
    for (int i = 0; i < 6; i++) {
        const ws_run_record *r = &s.out.r[i];
        const int phase2 = r->recurrence >= 4;
        cr_expect_eq(r->recurrence, i + 1);
        cr_expect_eq(r->bs, 32);
        cr_expect_eq(r->pl, 200);
        cr_expect_eq(r->epochs, phase2 ? 8 : 5, "rec %ld: %d epochs", r->recurrence, r->epochs);
        cr_expect_float_eq(r->energy_j, phase2 ? 12800.0 : 8000.0, 1e-9);
        cr_expect_float_eq(r->time_s, phase2 ? 80.0 : 50.0, 1e-9);
        cr_expect_float_eq(r->cost, phase2 ? 14400.0 : 9000.0, 1e-9);
        cr_expect_float_eq(s.rec_cost[i], phase2 ? 14400.0 : 9000.0, 1e-9);
    }
    cr_expect_float_eq(s.tot.cost, 3 * 9000.0 + 3 * 14400.0, 1e-9);
    done(&s);
}

/* Without drift (from 0) the same simulation stays at phase 1's 9000;
 * a phase from recurrence 1 is never a phase (the job is phase 1), and
 * a phase past the last recurrence never starts. */
Test(drift, no_phase_no_change)
{
    drift_sim s;
    simulate(&s, "default", 0, "default", 0, 6, 0, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    for (int i = 0; i < 6; i++) cr_expect_float_eq(s.rec_cost[i], 9000.0, 1e-9);
    done(&s);
    simulate(&s, "default", 0, "default", 7, 6, 0, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    for (int i = 0; i < 6; i++) cr_expect_float_eq(s.rec_cost[i], 9000.0, 1e-9);
    done(&s);
}

/* The oracle reference, told of each phase (drift_informed), plays each
 * phase's best knob: 32@100 (8700) in phase 1, 16@200 (5250) in phase 2.
 * Not told, it keeps phase 1's knob, which costs 13920 in phase 2. */
Test(drift, oracle_is_per_phase)
{
    drift_sim s;
    simulate(&s, "oracle", 0, "oracle", 4, 6, 1, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    for (int i = 0; i < 6; i++) {
        const ws_run_record *r = &s.out.r[i];
        cr_expect_eq(r->bs, i < 3 ? 32 : 16, "rec %d: bs %d", i + 1, r->bs);
        cr_expect_eq(r->pl, i < 3 ? 100 : 200, "rec %d: pl %d", i + 1, r->pl);
        cr_expect_float_eq(s.rec_cost[i], i < 3 ? 8700.0 : 5250.0, 1e-9, "rec %d: %.17g", i + 1,
                           s.rec_cost[i]);
    }
    done(&s);
    simulate(&s, "oracle", 0, "oracle", 4, 6, 0, 1);
    cr_assert_eq(s.rc, 0, "%s", s.err.msg);
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(s.out.r[i].bs, 32);
        cr_expect_float_eq(s.rec_cost[i], i < 3 ? 8700.0 : 13920.0, 1e-9);
    }
    done(&s);
}

/* Zeus' BSO with jit, drifting at recurrence 21 of 40. Before, 32@100
 * costs 8700 a recurrence and 16 (explored in recurrences 2 and 4) about
 * 10544 (10587.5 profiled, 10500): the posterior means the bandit fits to
 * each arm's rewards (policies/bandit.c). After, 32@100 costs 13920 and
 * 16@200 5250, but the bandit sees only 32's new costs. With a window of 3
 * rewards 32's fitted mean is (2 * 8700 + 13920) / 3 = 10440 after one run
 * of phase 2, still below 16's, and (8700 + 2 * 13920) / 3 = 12180 after
 * two: it re-explores 16 from recurrence 23 on (a Thompson sample of 32
 * can still fall below 16's, so "by 24"). Unwindowed, 20 cheap rewards
 * hold 32's mean below 16's until k runs of phase 2 with
 * (20 * 8700 + 13920 k) / (20 + k) > 10544: k >= 11, give or take the
 * sample. Over seeds 1..10 the windowed BSO switches no later than the
 * unwindowed one, and on average several recurrences earlier. */
static long first_sixteen(const drift_sim *s)
{
    if (getenv("WS_DRIFT_DUMP"))
        for (int i = 0; i < s->out.n; i++)
            fprintf(stderr, "%ld.%d %d@%d %d %g\n", s->out.r[i].recurrence, s->out.r[i].attempt,
                    s->out.r[i].bs, s->out.r[i].pl, s->out.r[i].reached, s->out.r[i].cost);
    for (int i = 0; i < s->out.n; i++)
        if (s->out.r[i].recurrence >= 21 && s->out.r[i].bs == 16) return s->out.r[i].recurrence;
    return 41;
}

Test(drift, windowed_thompson_sampling_reexplores)
{
    long sum_plain = 0, sum_windowed = 0;
    for (unsigned long seed = 1; seed <= 10; seed++) {
        drift_sim s;
        simulate(&s, "zeus", 0, "jit", 21, 40, 0, seed);
        cr_assert_eq(s.rc, 0, "%s", s.err.msg);
        const long plain = first_sixteen(&s);
        done(&s);
        simulate(&s, "zeus", 3, "jit", 21, 40, 0, seed);
        cr_assert_eq(s.rc, 0, "%s", s.err.msg);
        const long windowed = first_sixteen(&s);
        done(&s);
        cr_expect_leq(windowed, 24, "seed %lu: windowed zeus first tried 16 at %ld", seed,
                      windowed);
        cr_expect_leq(windowed, plain, "seed %lu: windowed %ld, unwindowed %ld", seed, windowed,
                      plain);
        sum_plain += plain;
        sum_windowed += windowed;
    }
    cr_expect_geq(sum_plain - sum_windowed, 30, "unwindowed switched at %g on average,"
                  " windowed at %g", sum_plain / 10.0, sum_windowed / 10.0);
}

/* ------------------------------------------------------------ config */

static char cfg_path[64];

/* Load YAML text as a run config; expect the error PATH + rest. */
static void expect_config_error(const char *yaml, const char *rest)
{
    strcpy(cfg_path, "/tmp/ws_test_drift_XXXXXX");
    int fd = mkstemp(cfg_path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    fputs(yaml, f);
    fclose(f);
    ws_run_config cfg;
    ws_error err = {""};
    ws_run_config_init(&cfg);
    cr_expect_neq(ws_run_config_load(cfg_path, &cfg, &err), 0, "loaded: %s", yaml);
    char want[WS_ERROR_MAX];
    snprintf(want, sizeof want, "%s%s", cfg_path, rest);
    cr_expect_str_eq(err.msg, want);
    ws_run_config_free(&cfg);
    unlink(cfg_path);
}

#define JOB "job: {name: w, dataset: d, network: n, optimizer: o, target_metric: 0.5,\n" \
            "      max_epochs: 10, b0: 32,\n"

Test(drift, config_parses_the_phases)
{
    strcpy(cfg_path, "/tmp/ws_test_drift_XXXXXX");
    int fd = mkstemp(cfg_path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(JOB "      drift: [{from: 4, target_metric: 0.6},\n"
              "              {from: 9, traces: t2, dataset: e, network: m, optimizer: p}]}\n", f);
    fclose(f);
    ws_run_config cfg;
    ws_error err = {""};
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_load(cfg_path, &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.n_jobs, 1);
    const ws_workload_spec *j = &cfg.jobs[0];
    cr_assert_eq(j->n_drift, 2);
    cr_expect_eq(j->drift[0].from, 4);
    cr_expect_float_eq(j->drift[0].target_metric, 0.6, 1e-15);
    cr_expect_null(j->drift[0].traces);
    cr_expect_null(j->drift[0].dataset);
    cr_expect_eq(j->drift[1].from, 9);
    cr_expect(isnan(j->drift[1].target_metric));
    cr_expect_str_eq(j->drift[1].traces, "t2");
    cr_expect_str_eq(j->drift[1].dataset, "e");
    cr_expect_str_eq(j->drift[1].network, "m");
    cr_expect_str_eq(j->drift[1].optimizer, "p");
    char where[128];
    snprintf(where, sizeof where, "%s:4:15", cfg_path);
    cr_expect_str_eq(j->drift[1].where, where);
    ws_run_config_free(&cfg);
    unlink(cfg_path);
}

Test(drift, config_errors_name_file_line_col)
{
    expect_config_error(JOB "      drift: {from: 4}}\n",
                        ":3:14: job.drift must be a list of phases, e.g. [{from: 41, traces:"
                        " DIR}], got a mapping");
    expect_config_error(JOB "      drift: []}\n",
                        ":3:14: job.drift must be a list of phases, e.g. [{from: 41, traces:"
                        " DIR}], got an empty list");
    expect_config_error(JOB "      drift: [{target_metric: 0.6}]}\n",
                        ":3:15: job.drift[0] is missing key 'from' (the first recurrence of the"
                        " phase, e.g. {from: 41, traces: DIR})");
    expect_config_error(JOB "      drift: [{from: 4}]}\n",
                        ":3:15: job.drift[0] changes nothing: give the phase's traces, dataset,"
                        " network, optimizer or target_metric");
    expect_config_error(JOB "      drift: [{from: 1, target_metric: 0.6}]}\n",
                        ":3:22: job.drift[0].from must be a recurrence from 2 to 10000000 (the"
                        " first of the phase; recurrence 1 is the job's own), got \"1\"");
    expect_config_error(JOB "      drift: [{from: 9, target_metric: 0.6},"
                            " {from: 9, target_metric: 0.7}]}\n",
                        ":3:53: job.drift[1].from is 9, not after the phase before (from 9):"
                        " list the phases in order, each from a later recurrence");
    expect_config_error(JOB "      drift: [{from: 4, target_metric: high}]}\n",
                        ":3:40: job.drift[0].target_metric must be a number, got \"high\"");
    expect_config_error(JOB "      drift: [{from: 4, until: 9}]}\n",
                        ":3:25: unknown key 'until' in job.drift[0] (expected one of: from,"
                        " traces, dataset, network, optimizer, target_metric)");
}

/* ------------------------------------------------------------ commands */

#define TRAIN_TWO_TARGETS                                                             \
    "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n" \
    "d,n,16,o,0.1,1,0.5,4\nd,n,16,o,0.1,2,0.5,4\n"                                    \
    "d,n,32,o,0.1,1,0.5,5\nd,n,32,o,0.1,2,0.5,5\n"                                    \
    "d,n,64,o,0.1,1,0.5,12\nd,n,64,o,0.1,2,0.5,12\n"                                  \
    "d,n,16,o,0.1,1,0.6,2\nd,n,16,o,0.1,2,0.6,2\n"                                    \
    "d,n,32,o,0.1,1,0.6,8\nd,n,32,o,0.1,2,0.6,8\n"                                    \
    "d,n,64,o,0.1,1,0.6,12\nd,n,64,o,0.1,2,0.6,12\n"

static char work[64];

/* A folder with traces t1 (the fixture, with target 0.6 = phase 2's
 * epochs), t2 (phase 2's rows at target 0.5, limits 100 and 250 W for
 * bs 16), t3 (phase 2's rows, the fixture's knobs) and config c.yaml
 * drifting at recurrence 4 of 6 in `phase` ("WORK/" in it: the folder). */
static void setup_work(const char *phase, const char *policies, const char *seeds)
{
    strcpy(work, "/tmp/ws-drift-cli-XXXXXX");
    cr_assert(mkdtemp(work));
    char p[128];
    snprintf(p, sizeof p, "%s/t1", work);
    write_traces(p, TRAIN_TWO_TARGETS, FIXTURE_POWER);
    snprintf(p, sizeof p, "%s/t2", work);
    write_traces(p, PHASE2_TRAIN,
                 "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
                 "d,n,16,o,100,20,80\nd,n,16,o,250,15,150\n"
                 "d,n,32,o,100,12,90\nd,n,32,o,200,10,160\n"
                 "d,n,64,o,100,8,95\nd,n,64,o,200,7,190\n");
    snprintf(p, sizeof p, "%s/t3", work);
    write_traces(p, PHASE2_TRAIN, FIXTURE_POWER);
    /* "WORK/" in the phase: the folder */
    char ph[256];
    const char *at = strstr(phase, "WORK/");
    if (at)
        snprintf(ph, sizeof ph, "%.*s%s/%s", (int)(at - phase), phase, work, at + 5);
    else
        snprintf(ph, sizeof ph, "%s", phase);
    phase = ph;
    snprintf(p, sizeof p, "%s/c.yaml", work);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fprintf(f, "gpu: g1\ntraces: %s/t1\n"
               "job:\n  name: w\n  dataset: d\n  network: n\n  optimizer: o\n"
               "  target_metric: 0.5\n  max_epochs: 10\n  b0: 32\n"
               "  drift:\n    - %s\n"
               "eta: 0.5\nbeta: 2\nseed: %s\nrecurrences: 6\n%s\n",
            work, phase, seeds, policies);
    fclose(f);
}

static void cleanup_work(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    cr_assert_eq(system(cmd), 0);
}

static cli_result wattsim(const char *cmd, const char *out)
{
    char cfg[128], dir[128];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", work);
    snprintf(dir, sizeof dir, "%s/%s", work, out);
    const char *argv[] = {"wattsim", cmd, cfg, "--out", dir, "--format", "csv", NULL};
    if (strcmp(cmd, "run")) argv[5] = NULL;
    return cli_run(argv);
}

static char *slurp(const char *rel, size_t *len)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", work, rel);
    FILE *f = fopen(p, "rb");
    cr_assert(f, "cannot open %s", p);
    char *s = cli_slurp(f, len);
    fclose(f);
    return s;
}

/* run: the per-phase oracle's total is 3 x 8700 + 3 x 5250 = 41850 (a
 * target_metric phase of the run's traces), and the run's Pareto figure
 * is the last phase's. */
Test(drift, run_oracle_total)
{
    setup_work("{from: 4, target_metric: 0.6}", "bso: oracle\nplo: oracle", "1");
    cli_result r = wattsim("run", "o");
    cr_assert_eq(r.status, 0, "%s", r.err);
    size_t n;
    char *s = slurp("o/summary.csv", &n);
    cr_expect(strstr(s, ",6,6,0,29700,270,41850,16,200,"), "%s", s);
    free(s);
    s = slurp("o/pareto-g1-w.gp", &n);
    cr_expect(strstr(s, "drift phase from recurrence 4"), "the figure does not say its phase");
    free(s);
    cli_free(&r);
    cleanup_work();
}

/* Same inputs, same bytes: two runs and two sweeps of zeus+jit under drift. */
Test(drift, byte_identical)
{
    setup_work("{from: 4, target_metric: 0.6}",
               "policies:\n  - {bso: zeus, plo: jit}\n"
               "  - {bso: {name: zeus, params: {window: 2}}, plo: jit}", "1..4");
    const char *files[] = {"history.csv", "summary.csv", "sweep.csv"};
    const char *cmds[] = {"run", "run", "sweep"};
    for (int c = 0; c < 3; c += 2) {
        cli_result a = wattsim(cmds[c], "a"), b = wattsim(cmds[c], "b");
        cr_assert_eq(a.status, 0, "%s", a.err);
        cr_assert_eq(b.status, 0, "%s", b.err);
        for (int k = c ? 2 : 0; k < (c ? 3 : 2); k++) {
            char pa[64], pb[64];
            snprintf(pa, sizeof pa, "a/%s", files[k]);
            snprintf(pb, sizeof pb, "b/%s", files[k]);
            size_t na, nb;
            char *x = slurp(pa, &na), *y = slurp(pb, &nb);
            cr_expect(na == nb && !memcmp(x, y, na), "%s differs between two %ss", files[k],
                      cmds[c]);
            cr_expect_gt(na, 100);
            free(x);
            free(y);
        }
        char cmd[160];
        cli_free(&a);
        cli_free(&b);
        snprintf(cmd, sizeof cmd, "rm -rf '%s/a' '%s/b'", work, work);
        cr_assert_eq(system(cmd), 0);
    }
    cleanup_work();
}

/* A phase whose knobs differ is refused, naming the difference; so is a
 * phase after the last recurrence. */
Test(drift, refusals)
{
    setup_work("{from: 4, traces: TRACES2}", "bso: oracle\nplo: oracle", "1");
    char p[256], yaml[2048];
    snprintf(p, sizeof p, "%s/c.yaml", work);
    FILE *f = fopen(p, "r");
    size_t n = fread(yaml, 1, sizeof yaml - 1, f);
    yaml[n] = 0;
    fclose(f);
    char *at = strstr(yaml, "TRACES2");
    char fixed[2300];
    snprintf(fixed, sizeof fixed, "%.*s%s/t2%s", (int)(at - yaml), yaml, work, at + 7);
    f = fopen(p, "w");
    fputs(fixed, f);
    fclose(f);
    cli_result r = wattsim("run", "o");
    cr_expect_eq(r.status, 2);
    char want[512];
    snprintf(want, sizeof want, "wattsim: %s/c.yaml:12:7: drift phase 2 of 'w' on g1 (from"
             " recurrence 4): its power limits of batch size 16 are 100,250 W, the job's"
             " 100,200 W; every phase must have the job's batch sizes, power limits and GPUs"
             " per job (a drift changes epochs, times and powers, not the knobs): use rows of"
             " the same knobs\n", work);
    cr_expect_str_eq(r.err, want);
    snprintf(p, sizeof p, "%s/o", work);
    cr_expect_neq(access(p, F_OK), 0, "a refused run left %s", p);

    snprintf(fixed, sizeof fixed, "%s", yaml);
    at = strstr(fixed, "{from: 4, traces: TRACES2}");
    memcpy(at, "{from: 9, target_metric: 0.6}", 29);  /* same length + 3 */
    strcpy(at + 29, strstr(yaml, "TRACES2}") + 8);
    snprintf(p, sizeof p, "%s/c.yaml", work);
    f = fopen(p, "w");
    fputs(fixed, f);
    fclose(f);
    cli_free(&r);
    r = wattsim("run", "o");
    cr_expect_eq(r.status, 2);
    snprintf(want, sizeof want, "wattsim: %s/c.yaml:12:7: drift phase 2 of 'w' starts at"
             " recurrence 9, after the run's last (6): it would never run; raise recurrences"
             " or start the phase earlier\n", work);
    cr_expect_str_eq(r.err, want);
    cli_free(&r);
    r = wattsim("sweep", "o");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "starts at recurrence 9, after the run's last (6)"), "%s", r.err);

    cli_free(&r);
    cleanup_work();
}

/* The commands of one knob table (pareto, plan, groups; their library
 * calls) refuse a drifting workload rather than use one phase silently. */
Test(drift, one_table_commands_refuse)
{
    ws_traces tr;
    ws_job_table jt;
    fixture_job(&tr, &jt, 0.5, 2.0);
    ws_job_free(&jt);
    ws_drift_spec d = {4, NULL, NULL, NULL, NULL, 0.6, (char *)"c.yaml:12:7"};
    ws_workload_spec spec = fixture_spec;
    spec.where = (char *)"c.yaml:4:3";
    spec.drift = &d;
    spec.n_drift = 1;
    ws_error err = {""};
    cr_expect_eq(ws_study_job(NULL, &tr, &spec, 0.5, 2.0, &jt, 0, &err), -1);
    cr_expect_str_eq(err.msg, "c.yaml:12:7: workload 'w' drifts (its rows change from"
                     " recurrence 4 on, c.yaml:4:3): this command takes one trace set per"
                     " workload; run, sweep and curves simulate drift, or remove `drift:`");
    ws_job_free(&jt);
    ws_traces_free(&tr);
}

/* curves marks the phase's first recurrence in both panels and its title. */
Test(drift, curves_mark_the_drift)
{
    setup_work("{from: 4, target_metric: 0.6}", "bso: zeus\nplo: jit", "1..2");
    cli_result r = wattsim("curves", "c");
    cr_assert_eq(r.status, 0, "%s", r.err);
    size_t n;
    char *s = slurp("c/curves-g1-w-eta0.5-beta2.gp", &n);
    cr_expect(strstr(s, "set arrow from 3.5, graph 0 to 3.5, graph 1 nohead"), "%s", s);
    cr_expect(strstr(s, "drift at recurrence 4"), "%s", s);
    free(s);
    cli_free(&r);
    cleanup_work();
}

/* The shipped example loads, drifting once at recurrence 101. */
Test(drift, shipped_example)
{
    ws_run_config cfg;
    ws_error err = {""};
    ws_run_config_init(&cfg);
    cr_assert_eq(ws_run_config_load(WS_SOURCE_DIR "/configs/drift.yaml", &cfg, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(cfg.n_jobs, 1);
    cr_assert_eq(cfg.jobs[0].n_drift, 1);
    cr_expect_eq(cfg.jobs[0].drift[0].from, 101);
    cr_expect_float_eq(cfg.jobs[0].drift[0].target_metric, 0.45, 1e-15);
    cr_expect_eq(cfg.recurrences, 200);
    ws_run_config_free(&cfg);
}

/* A sweep's journal is of the phases' numbers too: a merge after a
 * phase's traces changed is another plan, refused. */
Test(drift, journal_knows_the_phases)
{
    setup_work("{from: 4, traces: WORK/t3}", "bso: zeus\nplo: jit", "1..2");
    char cfg[128], dir[128];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", work);
    snprintf(dir, sizeof dir, "%s/s", work);
    const char *shard[] = {"wattsim", "sweep", cfg, "--out", dir, "--shard", "0/1", NULL};
    cli_result r = cli_run(shard);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char p[160];
    snprintf(p, sizeof p, "%s/t3", work);
    write_traces(p, PHASE2_TRAIN "d,n,16,o,0.1,3,0.5,3\n", FIXTURE_POWER);
    char out[128];
    snprintf(out, sizeof out, "%s/m", work);
    const char *merge[] = {"wattsim", "merge", "sweep", cfg, dir, "--out", out, NULL};
    cli_free(&r);
    r = cli_run(merge);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "the traces (or recurrences) of g1/w"), "%s", r.err);
    cli_free(&r);
    cleanup_work();
}

/* A phase's trace folder is an input folder: never the output, even with
 * --force (run and sweep). */
Test(drift, phase_traces_are_inputs)
{
    setup_work("{from: 4, traces: WORK/t3}", "bso: zeus\nplo: jit", "1");
    char cfg[128], dir[128];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", work);
    snprintf(dir, sizeof dir, "%s/t3", work);
    const char *cmds[] = {"run", "sweep"};
    for (int c = 0; c < 2; c++) {
        const char *argv[] = {"wattsim", cmds[c], cfg, "--out", dir, "--force", NULL};
        cli_result r = cli_run(argv);
        cr_expect_eq(r.status, 2, "%s: %s", cmds[c], r.err);
        cr_expect(strstr(r.err, "an output folder is never one of the command's input folders"),
                  "%s: %s", cmds[c], r.err);
        cli_free(&r);
    }
    char p[160];
    snprintf(p, sizeof p, "%s/t3/history.csv", work);
    cr_expect_neq(access(p, F_OK), 0, "run wrote into a phase's trace folder");
    cleanup_work();
}
