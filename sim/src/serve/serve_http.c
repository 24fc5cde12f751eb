/*
 * The network side of wattsim serve: libmicrohttpd (a pool of polling
 * threads over epoll), the request limits, GET /metrics, the access log
 * and the shutdown on SIGTERM.
 *
 *  - Limits: bodies over WS_SERVE_MAX_BODY are a 413 (refused from their
 *    Content-Length before they are read, or when they grow past it);
 *    request line and headers live in a per-connection pool of 32 KiB
 *    (larger is libmicrohttpd's 431/414); connections idle for timeout_s
 *    are closed; at most max_connections at once.
 *  - Every request is answered by ws_serve_handle (serve_api.c), which
 *    commits before it returns: a reply is never sent for a change that is
 *    not on disk.
 *  - Access log: one line per request on stderr: client, method, path
 *    (non-printable bytes as \xNN), status, bytes, milliseconds.
 *  - Stop: stop accepting (MHD_quiesce_daemon), wait for the connections
 *    in flight up to the drain time, stop the threads, close the database.
 */
#define _GNU_SOURCE /* asprintf */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve_state.h"
#include "wattsim/name.h"

/* Latency histogram bucket bounds, seconds. */
static const double BUCKETS[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};
#define N_BUCKETS (sizeof BUCKETS / sizeof BUCKETS[0])
enum { R_JOBS_POST, R_JOBS_DELETE, R_PREDICT, R_REPORT, R_TRIALS, R_HEALTHZ, R_METRICS, R_OTHER, N_ROUTES };
static const char *const ROUTE_NAMES[N_ROUTES] = {"register", "delete", "batch_size", "report",
                                                  "end_trial", "healthz", "metrics", "other"};
static const int STATUSES[] = {200, 201, 400, 404, 405, 409, 413, 422, 500, 503};
#define N_STATUSES (sizeof STATUSES / sizeof STATUSES[0])

struct ws_server {
    struct MHD_Daemon *d;
    ws_store *store;
    int port;
    int access_log;
    pthread_mutex_t mu;     /* the counters */
    unsigned long long count[N_ROUTES][N_STATUSES + 1];
    unsigned long long hist[N_BUCKETS + 1];
    double latency_sum;
    unsigned long long latency_n;
};

typedef struct req {
    char *buf;
    size_t len, cap;
    int too_big;
    struct timespec t0;
} req;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static int route_of(const char *method, const char *url)
{
    if (!strcmp(url, "/jobs")) return !strcmp(method, "DELETE") ? R_JOBS_DELETE : R_JOBS_POST;
    if (!strcmp(url, "/jobs/batch_size")) return R_PREDICT;
    if (!strcmp(url, "/report")) return R_REPORT;
    if (!strcmp(url, "/trials")) return R_TRIALS;
    if (!strcmp(url, "/healthz")) return R_HEALTHZ;
    if (!strcmp(url, "/metrics")) return R_METRICS;
    return R_OTHER;
}

static void count(ws_server *srv, int route, int status, double secs)
{
    pthread_mutex_lock(&srv->mu);
    size_t k = N_STATUSES;
    for (size_t i = 0; i < N_STATUSES; i++)
        if (STATUSES[i] == status) k = i;
    srv->count[route][k]++;
    size_t b = 0;
    while (b < N_BUCKETS && secs > BUCKETS[b]) b++;
    srv->hist[b]++;
    srv->latency_sum += secs;
    srv->latency_n++;
    pthread_mutex_unlock(&srv->mu);
}

/* Text for a terminal: printable ASCII, the rest as \xNN, at most n bytes. */
static void safe(const char *in, char *out, size_t n)
{
    size_t o = 0;
    for (; *in && o + 5 < n; in++) {
        const unsigned char c = (unsigned char)*in;
        if (c >= 0x20 && c < 0x7f && c != '\\') out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, n - o, "\\x%02x", c);
    }
    out[o] = 0;
}

static void access_line(struct MHD_Connection *c, const char *method, const char *url, int status,
                        size_t bytes, double secs)
{
    char host[INET6_ADDRSTRLEN] = "?";
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, host, sizeof host);
        else if (sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, host, sizeof host);
    }
    char m[24], u[512];
    safe(method, m, sizeof m);
    safe(url, u, sizeof u);
    fprintf(stderr, "wattsim serve: %s \"%s %s\" %d %zu %.3fms\n", host, m, u, status, bytes, secs * 1e3);
}

static enum MHD_Result reply(ws_server *srv, struct MHD_Connection *c, const char *method, const char *url,
                             int status, char *body, const char *type, const struct timespec *t0)
{
    const size_t n = strlen(body);
    struct MHD_Response *r = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    const enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    const double secs = since(t0);
    count(srv, route_of(method, url), status, secs);
    if (srv->access_log) access_line(c, method, url, status, n, secs);
    return ok;
}

char *ws_server_metrics(ws_server *srv)
{
    size_t cap = 8192, len = 0;
    char *o = malloc(cap);
    if (!o) return NULL;
#define OUT(...)                                                                               \
    do {                                                                                       \
        int k_ = snprintf(o + len, cap - len, __VA_ARGS__);                                    \
        if (k_ < 0) k_ = 0;                                                                    \
        if ((size_t)k_ >= cap - len) {                                                         \
            char *p_ = realloc(o, cap * 2 + (size_t)k_);                                       \
            if (!p_) { free(o); return NULL; }                                                 \
            o = p_;                                                                            \
            cap = cap * 2 + (size_t)k_;                                                        \
            k_ = snprintf(o + len, cap - len, __VA_ARGS__);                                    \
        }                                                                                      \
        len += (size_t)k_;                                                                     \
    } while (0)
    const int64_t jobs = ws_store_count_jobs(srv->store);
    pthread_mutex_lock(&srv->mu);
    OUT("# HELP wattsim_serve_requests_total Requests answered, by route and status.\n"
        "# TYPE wattsim_serve_requests_total counter\n");
    for (int r = 0; r < N_ROUTES; r++)
        for (size_t k = 0; k <= N_STATUSES; k++)
            if (srv->count[r][k]) {
                if (k < N_STATUSES)
                    OUT("wattsim_serve_requests_total{route=\"%s\",status=\"%d\"} %llu\n", ROUTE_NAMES[r],
                        STATUSES[k], srv->count[r][k]);
                else
                    OUT("wattsim_serve_requests_total{route=\"%s\",status=\"other\"} %llu\n", ROUTE_NAMES[r],
                        srv->count[r][k]);
            }
    unsigned long long errors = 0;
    for (int r = 0; r < N_ROUTES; r++)
        for (size_t k = 0; k <= N_STATUSES; k++)
            if (k == N_STATUSES || STATUSES[k] >= 500) errors += srv->count[r][k];
    OUT("# HELP wattsim_serve_errors_total Requests answered with a 5xx status.\n"
        "# TYPE wattsim_serve_errors_total counter\nwattsim_serve_errors_total %llu\n", errors);
    OUT("# HELP wattsim_serve_request_seconds Time from a request's first byte to its reply.\n"
        "# TYPE wattsim_serve_request_seconds histogram\n");
    unsigned long long cum = 0;
    for (size_t b = 0; b < N_BUCKETS; b++) {
        cum += srv->hist[b];
        OUT("wattsim_serve_request_seconds_bucket{le=\"%g\"} %llu\n", BUCKETS[b], cum);
    }
    cum += srv->hist[N_BUCKETS];
    OUT("wattsim_serve_request_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
    OUT("wattsim_serve_request_seconds_sum %.6f\nwattsim_serve_request_seconds_count %llu\n",
        srv->latency_sum, srv->latency_n);
    pthread_mutex_unlock(&srv->mu);
    OUT("# HELP wattsim_serve_jobs Jobs registered.\n# TYPE wattsim_serve_jobs gauge\nwattsim_serve_jobs %lld\n",
        (long long)jobs);
    uint64_t commits = 0, writes = 0, checkpoints = 0;
    ws_store_commit_counts(srv->store, &commits, &writes, &checkpoints);
    OUT("# HELP wattsim_serve_commits_total Group commits (one transaction each).\n"
        "# TYPE wattsim_serve_commits_total counter\nwattsim_serve_commits_total %llu\n"
        "# HELP wattsim_serve_committed_requests_total Requests whose writes a group commit held.\n"
        "# TYPE wattsim_serve_committed_requests_total counter\nwattsim_serve_committed_requests_total %llu\n",
        (unsigned long long)commits, (unsigned long long)writes);
    OUT("# HELP wattsim_serve_checkpoints_total WAL checkpoints run by the checkpoint thread.\n"
        "# TYPE wattsim_serve_checkpoints_total counter\nwattsim_serve_checkpoints_total %llu\n",
        (unsigned long long)checkpoints);
    size_t cached = 0, cache_max = 0;
    ws_store_cache_counts(srv->store, &cached, &cache_max);
    OUT("# HELP wattsim_serve_cached_jobs Jobs held in memory with their policy state (--cache-jobs).\n"
        "# TYPE wattsim_serve_cached_jobs gauge\nwattsim_serve_cached_jobs %zu\n"
        "# HELP wattsim_serve_cache_jobs_max The most jobs held in memory (--cache-jobs).\n"
        "# TYPE wattsim_serve_cache_jobs_max gauge\nwattsim_serve_cache_jobs_max %zu\n",
        cached, cache_max);
#undef OUT
    return o;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_data_size,
                               void **con_cls)
{
    (void)version;
    ws_server *srv = cls;
    req *q = *con_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &q->t0);
        *con_cls = q;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > WS_SERVE_MAX_BODY) {
            char *b = NULL;
            if (asprintf(&b, "{\"message\":\"request body larger than %d bytes\"}", WS_SERVE_MAX_BODY) < 0)
                return MHD_NO;
            return reply(srv, c, method, url, 413, b, "application/json", &q->t0);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!q->too_big) {
            if (q->len + *upload_data_size > WS_SERVE_MAX_BODY) {
                q->too_big = 1;
            } else {
                if (q->len + *upload_data_size > q->cap) {
                    size_t cap = q->cap ? q->cap : 1024;
                    while (cap < q->len + *upload_data_size) cap *= 2;
                    char *b = realloc(q->buf, cap);
                    if (!b) return MHD_NO;
                    q->buf = b;
                    q->cap = cap;
                }
                memcpy(q->buf + q->len, upload_data, *upload_data_size);
                q->len += *upload_data_size;
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    char *out = NULL;
    if (q->too_big) {
        if (asprintf(&out, "{\"message\":\"request body larger than %d bytes\"}", WS_SERVE_MAX_BODY) < 0)
            return MHD_NO;
        return reply(srv, c, method, url, 413, out, "application/json", &q->t0);
    }
    if (!strcmp(url, "/metrics")) {
        if (strcmp(method, "GET")) {
            out = strdup("{\"detail\":\"Method Not Allowed\"}");
            return out ? reply(srv, c, method, url, 405, out, "application/json", &q->t0) : MHD_NO;
        }
        out = ws_server_metrics(srv);
        return out ? reply(srv, c, method, url, 200, out, "text/plain; version=0.0.4", &q->t0) : MHD_NO;
    }
    const char *job_id = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "job_id");
    const int st = ws_serve_handle(srv->store, method, url, job_id, q->buf, q->len, &out);
    return reply(srv, c, method, url, st, out, "application/json", &q->t0);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)c, (void)t;
    req *q = *con_cls;
    if (q) {
        free(q->buf);
        free(q);
        *con_cls = NULL;
    }
}

ws_server *ws_server_start(const ws_serve_config *cfg, char *err, size_t errsz)
{
    union {
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } addr;
    memset(&addr, 0, sizeof addr);
    const char *host = cfg->host ? cfg->host : "127.0.0.1";
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
    if (cfg->port < 0 || cfg->port > 65535) {
        snprintf(err, errsz, "--listen: port %d is not in 0..65535", cfg->port);
        return NULL;
    }
    if (inet_pton(AF_INET, host, &addr.v4.sin_addr) == 1) {
        addr.v4.sin_family = AF_INET;
        addr.v4.sin_port = htons((uint16_t)cfg->port);
    } else if (inet_pton(AF_INET6, host, &addr.v6.sin6_addr) == 1) {
        addr.v6.sin6_family = AF_INET6;
        addr.v6.sin6_port = htons((uint16_t)cfg->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errsz, "--listen: '%s' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1:8000)", host);
        return NULL;
    }
    ws_server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    srv->store = ws_store_open(cfg->db, cfg->sync_full, err, errsz);
    if (!srv->store) {
        free(srv);
        return NULL;
    }
    if (cfg->cache_jobs > 0) ws_store_set_cache_max(srv->store, (size_t)cfg->cache_jobs);
    pthread_mutex_init(&srv->mu, NULL);
    srv->access_log = cfg->access_log;
    srv->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, srv,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                              MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(cfg->threads > 0 ? cfg->threads : 2),
                              MHD_OPTION_CONNECTION_LIMIT,
                              (unsigned)(cfg->max_connections > 0 ? cfg->max_connections : 256),
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(cfg->timeout_s > 0 ? cfg->timeout_s : 30),
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
                              MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, srv, MHD_OPTION_END);
    if (!srv->d) {
        snprintf(err, errsz, "--listen %s:%d: cannot listen there (%s)", host, cfg->port,
                 errno ? strerror(errno) : "address in use or not local?");
        ws_store_close(srv->store);
        pthread_mutex_destroy(&srv->mu);
        free(srv);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = di ? di->port : cfg->port;
    return srv;
}

int ws_server_port(const ws_server *srv) { return srv->port; }
ws_store *ws_server_store(ws_server *srv) { return srv->store; }

void ws_server_stop(ws_server *srv, int drain_s)
{
    if (!srv) return;
    const MHD_socket fd = MHD_quiesce_daemon(srv->d);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        if (!di || di->num_connections == 0 || since(&t0) >= drain_s) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(srv->d);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    ws_store_close(srv->store);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
}

int ws_serve_main(const ws_serve_config *cfg)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    /* Blocked before the threads start, so they inherit it and sigwait
     * below is the one that takes the signal. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    char err[512];
    ws_server *srv = ws_server_start(cfg, err, sizeof err);
    if (!srv) {
        fprintf(stderr, "wattsim: serve: %s\n", err);
        return 2;
    }
    char shown[512];
    fprintf(stderr, "wattsim serve: listening on %s:%d, database %s\n", cfg->host ? cfg->host : "127.0.0.1",
            ws_server_port(srv), ws_name_show(cfg->db, shown, sizeof shown));
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "wattsim serve: %s: draining and closing the database\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    ws_server_stop(srv, 10);
    return 0;
}
