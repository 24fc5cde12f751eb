/*
 * libFuzzer harness for the trace loader and the join (sim/src/io/trace.c)
 * and the knob landscape (sim/src/study/pareto.c). The input is a train trace
 * and a power trace separated by a line "====": both are written into a
 * private folder and loaded as GPU "f"; when that succeeds, the job of the
 * first train row is built and its Pareto frontier computed.
 */
#include "fuzz_util.h"
#include "wattsim/pareto.h"
#include "wattsim/trace.h"

static char dir[64];
static char train[128], power[128];

static void setup(void)
{
    if (dir[0]) return;
    snprintf(dir, sizeof dir, "/tmp/ws-fuzz-trace-XXXXXX");
    if (!mkdtemp(dir)) abort();
    snprintf(train, sizeof train, "%s/summary_train.csv", dir);
    snprintf(power, sizeof power, "%s/summary_power_f.csv", dir);
}

static void cleanup(void)
{
    unlink(train);
    unlink(power);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    setup();
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    static const char mark[] = "\n====\n";
    const uint8_t *cut = memmem(data, size, mark, sizeof mark - 1);
    size_t n_train = cut ? (size_t)(cut - data) + 1 : size;   /* keeps its \n */
    size_t at_power = cut ? (size_t)(cut - data) + sizeof mark - 1 : size;
    fuzz_put_file(train, data, n_train);
    fuzz_put_file(power, data + at_power, size - at_power);

    ws_csv_limits lim = {FUZZ_MAX_LINE, FUZZ_MAX_BYTES};
    ws_error err = {{0}};
    ws_traces t;
    if (ws_traces_load(&t, dir, "f", &lim, &err)) {
        fuzz_check_error(&err);
        ws_traces_free(&t);
        return 0;
    }
    const ws_train_row *r = &t.train[0];
    ws_workload_spec spec = {
        .name = "x", .dataset = t.names.s[r->dataset], .network = t.names.s[r->network],
        .optimizer = t.names.s[r->optimizer], .target_metric = r->target_metric,
        .max_epochs = 10, .b0 = r->bs,
    };
    ws_job_table jt;
    if (ws_job_build(&jt, &t, &spec, 0.5, 2.0, &err)) {
        fuzz_check_error(&err);
    } else {
        const ws_job *j = &jt.job;
        if (j->n_bs <= 0 || j->b0 != j->bs[jt.b0_index]) abort();
        for (int i = 0; i < j->n_bs; i++) {
            if (i && j->bs[i] <= j->bs[i - 1]) abort();
            if (j->knob_start[i + 1] <= j->knob_start[i]) abort();
            if (j->run_start[i + 1] <= j->run_start[i]) abort();
        }
        ws_pareto p;
        if (ws_pareto_compute(j, &p, &err)) fuzz_check_error(&err);
        else ws_pareto_free(&p);
    }
    ws_job_free(&jt);
    ws_traces_free(&t);
    return 0;
}
