/*
 * wattsim-serve-bench: a load generator for any server of Zeus's
 * batch-size optimizer API (wattsim serve, Zeus's own). N jobs, one thread
 * each (as N training scripts would be), register, then run predict +
 * report pairs, every request on its own connection as Zeus's client
 * (httpx without a client) makes them. Prints the pairs per second, the
 * p50 and p99 latency of a pair, and the failed requests.
 *
 * Closed loop (the default): each job sends its next pair as soon as the
 * last one is answered; with N jobs, latency ~= N / throughput (Little's
 * law). Open loop (--rate R): the jobs together offer R pairs per second,
 * each job its pairs on a fixed schedule (every JOBS / R seconds, the jobs
 * staggered), and a pair's latency runs from its scheduled time, so time
 * spent queued behind a slow answer counts (no coordinated omission). One
 * job's pairs stay one after another, as a training script's do.
 *
 * usage: wattsim-serve-bench [--rate PAIRS_PER_S] HOST PORT JOBS PAIRS_PER_JOB [PREFIX]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"

static const char *host, *port, *prefix;
static int pairs, n_jobs;
static double rate, start;   /* --rate (0: closed loop); the schedule's origin */
static pthread_barrier_t registered, started;   /* open loop: every job registered; start set */

typedef struct worker {
    int id;
    double *lat;
    int n_lat;
    long failed;
} worker;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int req(worker *w, const char *method, const char *target, const char *body, char **resp)
{
    int st;
    char err[256];
    if (ws_http_call(host, port, method, target, body, 60000, &st, resp, err, sizeof err) != 0) {
        w->failed++;
        return -1;
    }
    if (st < 200 || st > 299) {
        w->failed++;
        free(*resp);
        *resp = NULL;
        return -1;
    }
    return 0;
}

static void *run(void *arg)
{
    worker *w = arg;
    char body[512], target[160], *r;
    snprintf(body, sizeof body, "{\"job_id\":\"%s-%d\",\"job_id_prefix\":\"%s\",\"batch_sizes\":[16,32,64,128,256],"
             "\"default_batch_size\":64,\"max_epochs\":10,\"mab_seed\":%d,\"max_power\":300,\"number_of_gpus\":1,"
             "\"gpu_model\":\"v100\"}", prefix, w->id, prefix, w->id);
    if (req(w, "POST", "/jobs", body, &r) == 0) free(r);
    snprintf(target, sizeof target, "/jobs/batch_size?job_id=%s-%d", prefix, w->id);
    if (rate > 0) {
        pthread_barrier_wait(&registered);
        pthread_barrier_wait(&started);
    }
    const double every = rate > 0 ? n_jobs / rate : 0;
    for (int k = 0; k < pairs; k++) {
        double t0 = now();
        if (rate > 0) {
            /* This pair's turn: k periods after the job's staggered start. */
            t0 = start + (double)w->id / rate + k * every;
            const double wait = t0 - now();
            if (wait > 0) {
                struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
        if (req(w, "GET", target, NULL, &r) != 0) continue;
        long long bs = 0, n = 0;
        const char *at = strstr(r, "\"batch_size\":");
        if (at) sscanf(at, "\"batch_size\":%lld,\"trial_number\":%lld", &bs, &n);
        free(r);
        snprintf(body, sizeof body, "{\"job_id\":\"%s-%d\",\"batch_size\":%lld,\"trial_number\":%lld,\"time\":%lld,"
                 "\"energy\":%lld,\"metric\":0.9,\"current_epoch\":10}", prefix, w->id, bs, n,
                 100 + (bs - 64) * (bs - 64) / 64 + n % 3, 20000 + 7 * bs + 13 * (n % 5));
        if (req(w, "POST", "/report", body, &r) != 0) continue;
        free(r);
        w->lat[w->n_lat++] = now() - t0;
    }
    return NULL;
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--rate")) {
        char *e;
        rate = strtod(argv[2], &e);
        if (*e || !(rate > 0) || rate > 1e7) {
            fputs("wattsim-serve-bench: --rate takes pairs per second, a number > 0\n", stderr);
            return 2;
        }
        argc -= 2;
        argv += 2;
    }
    if (argc < 5) {
        fputs("usage: wattsim-serve-bench [--rate PAIRS_PER_S] HOST PORT JOBS PAIRS_PER_JOB [PREFIX]\n", stderr);
        return 2;
    }
    host = argv[1];
    port = argv[2];
    const int jobs = n_jobs = atoi(argv[3]);
    pairs = atoi(argv[4]);
    prefix = argc > 5 ? argv[5] : "bench";
    if (jobs < 1 || jobs > 100000 || pairs < 1) {
        fputs("wattsim-serve-bench: JOBS in 1..100000 and PAIRS_PER_JOB >= 1\n", stderr);
        return 2;
    }
    worker *w = calloc((size_t)jobs, sizeof *w);
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024);
    const double t0 = now();
    if (rate > 0) {
        pthread_barrier_init(&registered, NULL, (unsigned)jobs + 1);
        pthread_barrier_init(&started, NULL, (unsigned)jobs + 1);
    }
    for (int i = 0; i < jobs; i++) {
        w[i].id = i;
        w[i].lat = malloc((size_t)pairs * sizeof *w[i].lat);
        if (pthread_create(&th[i], &at, run, &w[i]) != 0) {
            fprintf(stderr, "wattsim-serve-bench: cannot start thread %d\n", i);
            return 1;
        }
    }
    if (rate > 0) {
        pthread_barrier_wait(&registered);
        start = now() + 0.01;
        pthread_barrier_wait(&started);
    }
    long failed = 0, n = 0;
    for (int i = 0; i < jobs; i++) {
        pthread_join(th[i], NULL);
        failed += w[i].failed;
        n += w[i].n_lat;
    }
    const double secs = now() - t0;
    double *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    long k = 0;
    for (int i = 0; i < jobs; i++)
        for (int j = 0; j < w[i].n_lat; j++) all[k++] = w[i].lat[j];
    qsort(all, (size_t)n, sizeof *all, cmp_d);
    /* Open loop: the throughput over the schedule's span (from its start). */
    const double span = rate > 0 ? now() - start : secs;
    if (rate > 0) printf("open loop at %g pairs/s offered: ", rate);
    else printf("closed loop: ");
    printf("jobs %d, pairs %ld in %.2f s: %.0f pairs/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms, failed requests %ld\n",
           jobs, n, span, (double)n / span, n ? all[n / 2] * 1e3 : 0.0,
           n ? all[(long)((double)n * 0.99)] * 1e3 : 0.0, n ? all[n - 1] * 1e3 : 0.0, failed);
    return failed ? 1 : 0;
}
