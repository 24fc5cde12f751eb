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
 * The floor (--floor-server PORT): a server of the same HTTP library with
 * the same threads and options as wattsim serve's, answering every
 * request at once with a fixed reply (no JSON, no database, no policy).
 * Driven by this generator, it measures what this machine's network stack
 * and HTTP library cost a pair, the floor under any server's latency with
 * one connection per request: a closed-loop latency goal below that floor
 * is out of reach for every server on the machine.
 *
 * usage: wattsim-serve-bench [--rate PAIRS_PER_S] HOST PORT JOBS PAIRS_PER_JOB [PREFIX]
 *        wattsim-serve-bench --floor-server PORT
 */
#define _GNU_SOURCE
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
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

/* The floor server's one handler: read the body, answer 200 (201 for a
 * registration) with a reply the generator accepts. */
static enum MHD_Result floor_reply(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                   const char *version, const char *upload_data, size_t *upload_data_size,
                                   void **con_cls)
{
    (void)cls;
    (void)version;
    (void)upload_data;
    static int seen;   /* an address: "this request's headers were seen" */
    if (!*con_cls) {
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    static const char predict[] = "{\"job_id\":\"x\",\"batch_size\":64,\"trial_number\":1}";
    static const char report[] = "{\"stop_train\":false,\"converged\":false,\"message\":\"\"}";
    const int get = !strcmp(method, "GET");
    const char *text = get ? predict : report;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    const unsigned st = !get && !strcmp(url, "/jobs") ? MHD_HTTP_CREATED : MHD_HTTP_OK;
    const enum MHD_Result ok = MHD_queue_response(c, st, r);
    MHD_destroy_response(r);
    return ok;
}

/* --floor-server PORT: loopback, wattsim serve's flags, pool and limits
 * (serve_http.c), until SIGINT or SIGTERM. */
static int floor_server(const char *port_text)
{
    char *e;
    const long p = strtol(port_text, &e, 10);
    if (*e || p < 1 || p > 65535) {
        fputs("wattsim-serve-bench: --floor-server takes a port, 1 to 65535\n", stderr);
        return 2;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)p);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, 0, NULL, NULL, floor_reply, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a, MHD_OPTION_THREAD_POOL_SIZE, 2u,
        MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "wattsim-serve-bench: --floor-server: cannot listen on 127.0.0.1:%ld\n", p);
        return 1;
    }
    fprintf(stderr, "wattsim-serve-bench: floor server on 127.0.0.1:%ld (SIGINT or SIGTERM ends it)\n", p);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--floor-server")) return floor_server(argv[2]);
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
        fputs("usage: wattsim-serve-bench [--rate PAIRS_PER_S] HOST PORT JOBS PAIRS_PER_JOB [PREFIX]\n"
              "       wattsim-serve-bench --floor-server PORT\n", stderr);
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
