/*
 * The library API (wattsim/api.h) from C, for the sanitizers and valgrind
 * (the Python package's tests, python/tests, cover it from Python in the
 * plain build): results and their provenance, the status and one line of
 * an error, options checked, a live descriptor, the hook stopping a sweep,
 * re-entrant calls and calls in a child forked mid-call.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wattsim/api.h"
#include "wattsim/process.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"

static ws_api_call *call(const char *cmd, const char *const *kv)
{
    ws_api_call *c = ws_api_call_new(cmd);
    cr_assert(c);
    cr_assert_eq(ws_api_set(c, "traces", TRACES), WS_API_OK);
    cr_assert_eq(ws_api_set(c, "catalogue", CATALOGUE), WS_API_OK);
    for (; kv && kv[0]; kv += 2) cr_assert_eq(ws_api_set(c, kv[0], kv[1]), WS_API_OK, "%s", kv[0]);
    return c;
}

/* Occurrences of s in text. */
static int count(const char *text, const char *s)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, s)); p += strlen(s)) n++;
    return n;
}

Test(api, simulate_result_and_provenance)
{
    ws_api_call *c = call("simulate", (const char *const[]){"workload", "cifar100", "seed", "1",
                                                           "recurrences", "3", NULL});
    char *json = NULL;
    cr_assert_eq(ws_api_run(c, NULL, &json), WS_API_OK, "%s", ws_api_error(c));
    cr_expect(strstr(json, "{\"provenance\": {\"wattsim\": "));
    cr_expect(strstr(json, "\"summary_power_v100.csv\": \"f0b066dd1a451bd7"));
    cr_expect(strstr(json, "\"policy\": \"zeus+jit\""));
    /* the first run by hand-checked figures (docs/python.md shows them) */
    cr_expect(strstr(json, "{\"recurrence\": 1, \"try\": 1, \"bs\": 1024, \"pl\": 175"));
    cr_expect_eq(count(json, "\"recurrence\": "), 3);
    cr_expect_str_eq(ws_api_error(c), "");
    ws_api_free(json);
    /* a call runs once */
    cr_expect_eq(ws_api_run(c, NULL, &json), WS_API_MISUSE);
    cr_expect_null(json);
    ws_api_call_free(c);
}

Test(api, errors_are_one_line_with_a_status)
{
    ws_api_call *c = call("pareto", (const char *const[]){"workload", "nope", NULL});
    char *json = (char *)1;
    cr_assert_eq(ws_api_run(c, NULL, &json), WS_API_INPUT);
    cr_expect_null(json);
    cr_expect_str_eq(ws_api_error(c), "--workload: unknown workload 'nope' (known: cifar100,"
                     " imagenet, squad, librispeech, movielens-1m, sentiment140; or define it"
                     " inline with `job:` in a config)");
    ws_api_call_free(c);
    c = ws_api_call_new("simulate");
    cr_expect_eq(ws_api_set(c, "etaa", "0.5"), WS_API_MISUSE);
    cr_expect_str_eq(ws_api_error(c), "simulate: unknown option 'etaa'");
    ws_api_call_free(c);
    cr_expect_null(ws_api_call_new("nope"));
    c = call("simulate", (const char *const[]){"workload", "cifar100", "eta", "2", NULL});
    cr_expect_eq(ws_api_run(c, NULL, &json), WS_API_INPUT);
    cr_expect(!strncmp(ws_api_error(c), "--eta must be", 13), "%s", ws_api_error(c));
    ws_api_call_free(c);
    /* one simulation: two seeds would report both histories as one */
    c = call("simulate", (const char *const[]){"workload", "cifar100", "seed", "1..2", NULL});
    cr_expect_eq(ws_api_run(c, NULL, &json), WS_API_INPUT);
    cr_expect_null(json);
    cr_expect_str_eq(ws_api_error(c), "simulate: takes one GPU, one workload, one eta, one beta"
                     " and one seed; use run or sweep for several");
    ws_api_call_free(c);
}

/* A live BSO: always b0. */
static int b_create(void *s, const ws_value *v, const ws_host *h) { return 0; }
static void b_destroy(void *s) {}
static int b_register(void *s, const ws_job *j, const ws_ctx *x) { return 0; }
static int b_predict(void *s, const ws_job *j, const ws_ctx *x, int *bs)
{
    *bs = j->b0;
    return 0;
}
static int b_observe(void *s, const ws_job *j, const ws_ctx *x, int bs, double c, int r)
{
    return 0;
}
static const ws_bso_type always_b0 = {
    .abi_version = WS_ABI_VERSION, .name = "always-b0", .summary = "b0", .state_size = 8,
    .create = b_create, .destroy = b_destroy, .register_job = b_register,
    .predict = b_predict, .observe = b_observe};

Test(api, live_descriptor)
{
    ws_api_call *c = call("simulate", (const char *const[]){"workload", "squad", "recurrences",
                                                           "4", NULL});
    char key[32];
    cr_assert_eq(ws_api_add_bso(c, &always_b0, "test.always_b0", NULL, key, sizeof key),
                 WS_API_OK);
    cr_expect_str_eq(key, "py:@live:1");
    cr_assert_eq(ws_api_set(c, "bso", key), WS_API_OK);
    char *json = NULL;
    cr_assert_eq(ws_api_run(c, NULL, &json), WS_API_OK, "%s", ws_api_error(c));
    cr_expect_eq(count(json, "\"bs\": 32,"), 4, "%s", json);   /* squad's b0, every run */
    cr_expect(strstr(json, "\"bso_origin\": \"test.always_b0\""));
    ws_api_free(json);
    ws_api_call_free(c);
}

static int stop_at_once(void *ctx, double done, double total)
{
    ++*(int *)ctx;
    return 1;
}

Test(api, hook_cancels_a_sweep)
{
    ws_api_call *c = call("sweep", (const char *const[]){"workload", "cifar100", "seed",
                                                        "1..40", "threads", "1", NULL});
    int calls = 0;
    ws_api_hooks h = {sizeof h, stop_at_once, &calls, NULL};
    char *json = NULL;
    cr_assert_eq(ws_api_run(c, &h, &json), WS_API_CANCELLED, "%s", ws_api_error(c));
    cr_expect_str_eq(ws_api_error(c), "cancelled");
    cr_expect_eq(calls, 1);
    ws_api_call_free(c);
    volatile int flag = 1;
    c = call("sweep", (const char *const[]){"workload", "cifar100", "seed", "1..40", NULL});
    ws_api_hooks h2 = {sizeof h2, NULL, NULL, &flag};
    cr_expect_eq(ws_api_run(c, &h2, &json), WS_API_CANCELLED);
    ws_api_call_free(c);
}

/* What the CLI prints on stderr besides its error is the result's "notes",
 * escaped, not the process's stderr: a policy's warnings (loud.so warns
 * with ESC and a newline at every create) and the sweep's own notes, the
 * first 1000 lines kept and the rest counted. */
Test(api, notes_are_in_the_result_capped)
{
    ws_api_call *c = call("sweep", (const char *const[]){
        "workload", "cifar100", "seed", "1..1200", "recurrences", "1", "threads", "2",
        "policies", WS_TEST_PLUGIN_DIR "/loud.so:jit", "power-cap", "180", NULL});
    char *json = NULL;
    cr_assert_eq(ws_api_run(c, NULL, &json), WS_API_OK, "%s", ws_api_error(c));
    const char *notes = strstr(json, ", \"notes\": [");
    cr_assert(notes, "no notes: %.300s", json);
    const char *end = strstr(notes, "], \"result\": ");
    cr_assert(end);
    size_t n_quoted = 0;
    for (const char *p = notes; p < end; p++) n_quoted += *p == '"';
    /* "notes" itself, then 1001 strings: 1000 kept and the count */
    cr_expect_eq(n_quoted, 2 + 2 * 1001, "%zu quotes", n_quoted);
    cr_expect(strstr(notes, "\"wattsim: note: cifar100 on v100: power cap 180 W: "));
    cr_expect(strstr(notes, ": warning: warn \\\\x1B[31mred\\\\x1B[0m\\\\x0Asecond line\""),
              "not escaped: %.400s", notes);
    cr_expect(strstr(notes, "more lines not kept\"]"));
    cr_expect(!memchr(notes, '\x1b', (size_t)(end - notes)));
    ws_api_free(json);
    ws_api_call_free(c);
}

/* Re-entrancy and fork (docs/safety.md): a call from a sweep's worker
 * thread running policy code, and any call in a child forked while another
 * thread is inside a call, fail at once; each would wait for ever for the
 * run lock. The time limits make a hang a failure, never a hung suite. */
static int nested_rc = -1;
static char nested_msg[256];
static int nested_predict(void *s, const ws_job *j, const ws_ctx *x, int *bs)
{
    if (nested_rc == -1) {
        ws_api_call *c = ws_api_call_new("workloads");
        char *json = NULL;
        nested_rc = ws_api_run(c, NULL, &json);
        snprintf(nested_msg, sizeof nested_msg, "%s", ws_api_error(c));
        ws_api_free(json);
        ws_api_call_free(c);
    }
    *bs = j->b0;
    return 0;
}
static const ws_bso_type nested_bso = {
    .abi_version = WS_ABI_VERSION, .name = "nested", .summary = "calls wattsim",
    .state_size = 8, .create = b_create, .destroy = b_destroy, .register_job = b_register,
    .predict = nested_predict, .observe = b_observe};

Test(api, a_call_from_a_sweeps_worker_fails_at_once, .timeout = 120)
{
    ws_api_call *c = call("sweep", (const char *const[]){"workload", "cifar100", "seed", "1..2",
                                                        "recurrences", "2", "threads", "2",
                                                        NULL});
    char key[32], pol[64], *json = NULL;
    cr_assert_eq(ws_api_add_bso(c, &nested_bso, "test.nested", NULL, key, sizeof key),
                 WS_API_OK);
    snprintf(pol, sizeof pol, "%s:jit", key);
    cr_assert_eq(ws_api_set(c, "policies", pol), WS_API_OK);
    cr_assert_eq(ws_api_run(c, NULL, &json), WS_API_OK, "%s", ws_api_error(c));
    cr_expect_eq(nested_rc, WS_API_MISUSE);
    cr_expect_str_eq(nested_msg, "workloads: called from inside another wattsim call (a policy"
                     " or hook of it, on any of its threads); make the call after it returns");
    ws_api_free(json);
    ws_api_call_free(c);
}

/* A BSO that says it is inside the call and waits to be let go. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_inside, gate_open;
static int gate_predict(void *s, const ws_job *j, const ws_ctx *x, int *bs)
{
    pthread_mutex_lock(&gate_lock);
    gate_inside = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open) pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    *bs = j->b0;
    return 0;
}
static const ws_bso_type gate_bso = {
    .abi_version = WS_ABI_VERSION, .name = "gate", .summary = "waits", .state_size = 8,
    .create = b_create, .destroy = b_destroy, .register_job = b_register,
    .predict = gate_predict, .observe = b_observe};

static void *gated_call(void *arg)
{
    ws_api_call *c = arg;
    char *json = NULL;
    int rc = ws_api_run(c, NULL, &json);
    ws_api_free(json);
    return (void *)(intptr_t)rc;
}

Test(api, a_child_forked_during_anothers_call_fails_at_once, .timeout = 120)
{
    ws_api_call *c = call("simulate", (const char *const[]){"workload", "cifar100",
                                                           "recurrences", "2", NULL});
    char key[32];
    cr_assert_eq(ws_api_add_bso(c, &gate_bso, "test.gate", NULL, key, sizeof key), WS_API_OK);
    cr_assert_eq(ws_api_set(c, "bso", key), WS_API_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, gated_call, c), 0);
    pthread_mutex_lock(&gate_lock);
    while (!gate_inside) pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {                 /* the child: two calls, each must fail at once */
        alarm(30);                  /* a hang dies of SIGALRM: a failure, not a hung test */
        char msg[600] = "";
        for (int k = 0; k < 2; k++) {
            ws_api_call *d = ws_api_call_new("workloads");
            char *json = NULL;
            int rc = ws_api_run(d, NULL, &json);
            snprintf(msg, sizeof msg, "%d %s", rc, ws_api_error(d));
            ws_api_free(json);
            ws_api_call_free(d);
        }
        ssize_t w = write(fd[1], msg, strlen(msg));
        /* The other thread's call is half-way in this copy of the heap and
         * its thread is gone: valgrind, which follows a fork, would report
         * that call's blocks as lost at exit. An exec ends the copy
         * without an exit (the parent reads the message, not the status). */
        if (w >= 0) execl("/bin/true", "true", (char *)NULL);
        _exit(1);
    }
    close(fd[1]);
    char got[600] = "";
    ssize_t n = 0, r;
    while ((r = read(fd[0], got + n, sizeof got - 1 - (size_t)n)) > 0) n += r;
    got[n > 0 ? n : 0] = '\0';
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    void *rc;
    pthread_join(t, &rc);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child did not end by itself");
    cr_expect_str_eq(got, "5 workloads: this process was forked while another thread was"
                     " inside a wattsim call, so the library's state here is that call's,"
                     " half-way; make wattsim calls in the parent, or start this process"
                     " without fork (multiprocessing's 'spawn' or 'forkserver')");
    cr_expect_eq((int)(intptr_t)rc, WS_API_OK);   /* the parent's call went on */
    ws_api_call_free(c);
}

/* The library's module locks (WS_FORK_SAFE_MUTEX: its caches of traces,
 * catalogues, plugins, digests) are free in a child forked while another
 * thread holds one: the child has no thread that could release it. */
WS_FORK_SAFE_MUTEX(held_at_fork)
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_state;   /* 1: the lock is held; 2: the holder may let go */

static void *hold_lock(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&held_at_fork);
    pthread_mutex_lock(&gate_mu);
    gate_state = 1;
    pthread_cond_broadcast(&gate_cv);
    while (gate_state != 2) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    pthread_mutex_unlock(&held_at_fork);
    return NULL;
}

Test(api, a_module_lock_is_free_in_a_child_forked_while_held, .timeout = 60)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, hold_lock, NULL), 0);
    pthread_mutex_lock(&gate_mu);
    while (gate_state != 1) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) _exit(pthread_mutex_trylock(&held_at_fork) == 0 ? 0 : 1);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    pthread_mutex_lock(&gate_mu);
    gate_state = 2;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    pthread_join(th, NULL);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child found the lock held");
}
