/*
 * wattsim as a client of a batch-size optimizer server: the BSO spec
 * "http://HOST:PORT" (simulate, sweep, run) talks Zeus's API to any server
 * that speaks it (wattsim serve, Zeus's own), as Zeus's
 * tests/optimizer/batch_size/simulate_with_server.py does:
 *
 *   register_job  POST /jobs: the trace job's batch sizes, b0, eta, beta
 *                 (off: null), target, max epochs, MaxPower, GPUs, model,
 *                 window 0, mab_seed = the simulation's seed, under a job
 *                 id of its own (prefix "wattsim")
 *   predict       GET /jobs/batch_size: the size (one of the job's, else
 *                 an error) and its trial number
 *   observe       POST /report: the run's time and energy, its epochs,
 *                 metric target + 1 when it reached the target, else
 *                 target - 1; the server's stop/converged answer is not
 *                 needed (the simulation has run the whole run already)
 *
 * Only loopback hosts unless --allow-remote (ws_serve_client_install).
 * Every failure (connection, timeout, a status other than 2xx, an answer
 * that is not the API's) is the policy's error, naming the request.
 * HTTP/1.1 over a blocking socket per request with Connection: close;
 * at most WS_CLIENT_MAX_RESPONSE bytes of answer; WS_CLIENT_TIMEOUT_MS per
 * request.
 */
#define _GNU_SOURCE /* asprintf */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/error.h"
#include "wattsim/plugin.h"
#include "wattsim/policy.h"
#include "serve.h"

#define WS_CLIENT_TIMEOUT_MS 30000
#define WS_CLIENT_MAX_RESPONSE (1 << 20)

static int allow_remote;

/* ------------------------------------------------------------ HTTP */

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int wait_fd(int fd, short ev, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) return -2;
        struct pollfd p = {fd, ev, 0};
        const int r = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* Remove chunked transfer encoding in place; -1 when malformed. */
static int dechunk(char *b, size_t *len)
{
    size_t in = 0, out = 0;
    for (;;) {
        char *e;
        if (in >= *len) return -1;
        const unsigned long n = strtoul(b + in, &e, 16);
        char *crlf = strstr(b + in, "\r\n");
        if (!crlf || e == b + in) return -1;
        in = (size_t)(crlf - b) + 2;
        if (n == 0) break;
        if (n > *len - in) return -1;
        memmove(b + out, b + in, n);
        out += n;
        in += n + 2;
    }
    *len = out;
    b[out] = 0;
    return 0;
}

int ws_http_call(const char *host, const char *port, const char *method, const char *target, const char *body,
                 int timeout_ms, int *status, char **resp, char *err, size_t errsz)
{
    *resp = NULL;
    *status = 0;
    const long long deadline = now_ms() + timeout_ms;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    const int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0) {
        snprintf(err, errsz, "cannot resolve %s: %s", host, gai_strerror(g));
        return -1;
    }
    int fd = -1, why = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            int e = errno, so = 0;
            socklen_t sl = sizeof so;
            if (e == EINPROGRESS) {
                const int w = wait_fd(fd, POLLOUT, deadline);
                if (w == -2) e = ETIMEDOUT;
                else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0) e = errno;
                else e = so;
            }
            if (e) {
                why = e;
                close(fd);
                fd = -1;
            }
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errsz, "cannot connect to %s:%s: %s", host, port, strerror(why ? why : ECONNREFUSED));
        return -1;
    }
    char *req = NULL;
    const size_t blen = body ? strlen(body) : 0;
    const int n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: wattsim\r\nConnection: close\r\n"
                                 "Accept: application/json\r\n%s%s%zu\r\n\r\n%s",
                           method, target, host, port, body ? "Content-Type: application/json\r\n" : "",
                           "Content-Length: ", blen, body ? body : "");
    if (n < 0) {
        close(fd);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    size_t off = 0;
    while (off < (size_t)n) {
        const ssize_t w = send(fd, req + off, (size_t)n - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            const int r = wait_fd(fd, POLLOUT, deadline);
            if (r == 0) continue;
            snprintf(err, errsz, "%s", r == -2 ? "timed out sending the request" : strerror(errno));
        } else {
            snprintf(err, errsz, "sending the request: %s", strerror(errno));
        }
        free(req);
        close(fd);
        return -1;
    }
    free(req);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= WS_CLIENT_MAX_RESPONSE) {
                free(buf);
                close(fd);
                snprintf(err, errsz, "the answer is larger than %d bytes", WS_CLIENT_MAX_RESPONSE);
                return -1;
            }
            char *b = realloc(buf, cap * 2);
            if (!b) break;
            buf = b;
            cap *= 2;
        }
        const ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r > 0) {
            len += (size_t)r;
            continue;
        }
        if (r == 0) break;
        if (errno == EAGAIN || errno == EINTR) {
            const int w = wait_fd(fd, POLLIN, deadline);
            if (w == 0) continue;
            snprintf(err, errsz, "%s", w == -2 ? "timed out waiting for the answer" : strerror(errno));
        } else {
            snprintf(err, errsz, "reading the answer: %s", strerror(errno));
        }
        free(buf);
        close(fd);
        return -1;
    }
    close(fd);
    buf[len] = 0;
    int st = 0;
    char *hdr_end = strstr(buf, "\r\n\r\n");
    if (sscanf(buf, "HTTP/1.%*1[01] %3d", &st) != 1 || st < 100 || !hdr_end) {
        free(buf);
        snprintf(err, errsz, "the answer is not HTTP (%zu bytes)", len);
        return -1;
    }
    *hdr_end = 0;
    const int chunked = strcasestr(buf, "\r\nTransfer-Encoding: chunked") != NULL;
    size_t blen2 = len - (size_t)(hdr_end + 4 - buf);
    memmove(buf, hdr_end + 4, blen2);
    buf[blen2] = 0;
    if (chunked && dechunk(buf, &blen2) != 0) {
        free(buf);
        snprintf(err, errsz, "a malformed chunked answer");
        return -1;
    }
    *status = st;
    *resp = buf;
    return 0;
}

/* ---------------------------------------------------------- the spec */

typedef struct endpoint {
    char host[256], port[8];
} endpoint;

static int parse_url(const char *spec, endpoint *e, char *err, size_t errsz)
{
    if (!strncmp(spec, "https://", 8)) {
        snprintf(err, errsz, "%s: https is not spoken here; use http:// to a server on this machine (or a"
                 " TLS tunnel ending on it)", spec);
        return -1;
    }
    const char *h = spec + 7, *end;
    size_t hl;
    if (*h == '[') {
        end = strchr(h, ']');
        if (!end || end[1] != ':') goto bad;
        h++;
        hl = (size_t)(end - h);
        end++;
    } else {
        end = strchr(h, ':');
        if (!end) goto bad;
        hl = (size_t)(end - h);
    }
    if (hl == 0 || hl >= sizeof e->host) goto bad;
    memcpy(e->host, h, hl);
    e->host[hl] = 0;
    const char *p = end + 1;
    size_t pl = strspn(p, "0123456789");
    if (pl == 0 || pl > 5 || (p[pl] && strcmp(p + pl, "/")) || atoi(p) < 1 || atoi(p) > 65535) goto bad;
    memcpy(e->port, p, pl);
    e->port[pl] = 0;
    for (const char *c = e->host; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '.' || *c == '-' || *c == ':')) goto bad;
    struct in_addr a4;
    struct in6_addr a6;
    const int loop = !strcmp(e->host, "localhost")
                     || (inet_pton(AF_INET, e->host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127)
                     || (inet_pton(AF_INET6, e->host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6));
    if (!loop && !allow_remote) {
        snprintf(err, errsz, "%s: not a loopback address (127.0.0.0/8, ::1, localhost); to benchmark a server on"
                 " another host, add --allow-remote", spec);
        return -1;
    }
    return 0;
bad:
    snprintf(err, errsz, "%.200s: a server BSO is http://HOST:PORT (e.g. http://127.0.0.1:8000)", spec);
    return -1;
}

/* ---------------------------------------------------------- the BSO */

typedef struct client {
    const ws_host *host;
    endpoint ep;
    char url[300];
    char job_id[WS_SERVE_MAX_ID + 1];
    long long trial;
    int bs;
    int have_trial;
} client;

static int fail(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(client *c, const char *fmt, ...)
{
    char m[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (c->host && c->host->log) c->host->log(c->host->ctx, WS_LOG_ERROR, m);
    return -1;
}

/* One request; the parsed JSON answer of a 2xx (NULL body allowed when
 * want_json is 0). */
static int call(client *c, const char *method, const char *target, const char *body, json_t **out)
{
    int st;
    char *resp, err[512];
    if (out) *out = NULL;
    if (ws_http_call(c->ep.host, c->ep.port, method, target, body, WS_CLIENT_TIMEOUT_MS, &st, &resp, err,
                     sizeof err) != 0)
        return fail(c, "%s %s%s: %s", method, c->url, target, err);
    if (st < 200 || st > 299) {
        char shown[300];
        size_t k = 0;
        for (const char *p = resp; *p && k + 1 < sizeof shown; p++)
            shown[k++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
        shown[k] = 0;
        free(resp);
        return fail(c, "%s %s%s: the server answered %d: %s", method, c->url, target, st, shown);
    }
    if (out) {
        json_error_t je;
        *out = json_loads(resp, 0, &je);
        if (!*out) {
            free(resp);
            return fail(c, "%s %s%s: the answer is not JSON (%s)", method, c->url, target, je.text);
        }
    }
    free(resp);
    return 0;
}

static int c_create(void *state, const ws_value *v, const ws_host *host)
{
    client *c = state;
    c->host = host;
    snprintf(c->url, sizeof c->url, "%s", v[0].s ? v[0].s : "");
    size_t n = strlen(c->url);
    if (n && c->url[n - 1] == '/') c->url[n - 1] = 0;
    char err[512];
    if (parse_url(c->url, &c->ep, err, sizeof err) != 0) return fail(c, "%s", err);
    return 0;
}

static void c_destroy(void *state) { (void)state; }

static int c_register(void *state, const ws_job *job, const ws_ctx *ctx)
{
    (void)ctx;
    client *c = state;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static unsigned counter;
    pthread_mutex_lock(&mu);
    const unsigned k = ++counter;
    pthread_mutex_unlock(&mu);
    const unsigned long long seed = job->abi_version >= WS_ABI_VERSION_OF(2, 3) ? c->host->seed : 0;
    char wl[64], gpu[32];
    snprintf(wl, sizeof wl, "%s", job->workload ? job->workload : "job");
    snprintf(gpu, sizeof gpu, "%s", job->gpu && job->gpu[0] ? job->gpu : "gpu");
    for (char *p = wl; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') *p = '_';
    for (char *p = gpu; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' && *p != '.') *p = '_';
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(c->job_id, sizeof c->job_id, "wattsim-%s-%s-s%llu-%ld-%lld%09ld-%u", wl, gpu, seed, (long)getpid(),
             (long long)ts.tv_sec, ts.tv_nsec, k);
    double target = 0.5;
    if (job->abi_version >= WS_ABI_VERSION_OF(2, 3) && isfinite(job->target_metric)) target = job->target_metric;
    json_t *bs = json_array();
    for (int i = 0; i < job->n_bs; i++) json_array_append_new(bs, json_integer(job->bs[i]));
    const int gpus = job->abi_version >= WS_ABI_VERSION_OF(2, 2) && job->gpus_per_job > 0 ? job->gpus_per_job : 1;
    json_t *spec = json_pack("{s:s,s:s,s:o,s:i,s:f,s:o,s:f,s:b,s:i,s:i,s:i,s:I,s:f,s:i,s:s}",
                             "job_id", c->job_id, "job_id_prefix", "wattsim", "batch_sizes", bs,
                             "default_batch_size", job->b0, "eta_knob", job->eta,
                             "beta_knob", isfinite(job->beta) ? json_real(job->beta) : json_null(),
                             "target_metric", target, "higher_is_better_metric", 1,
                             "max_epochs", job->max_epochs, "num_pruning_rounds", 2, "window_size", 0,
                             "mab_seed", (json_int_t)(seed & 0x7fffffffffffffffULL), "max_power", job->max_power,
                             "number_of_gpus", gpus, "gpu_model", gpu);
    char *body = spec ? json_dumps(spec, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(spec);
    if (!body) return fail(c, "POST %s/jobs: cannot make the job spec (eta %g, max power %g)", c->url, job->eta,
                           job->max_power);
    const int rc = call(c, "POST", "/jobs", body, NULL);
    free(body);
    return rc;
}

static int c_predict(void *state, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    (void)ctx;
    client *c = state;
    char target[WS_SERVE_MAX_ID + 40];
    snprintf(target, sizeof target, "/jobs/batch_size?job_id=%s", c->job_id);
    json_t *o;
    if (call(c, "GET", target, NULL, &o) != 0) return -1;
    json_t *b = json_object_get(o, "batch_size"), *t = json_object_get(o, "trial_number");
    if (!json_is_integer(b) || !json_is_integer(t)) {
        json_decref(o);
        return fail(c, "GET %s%s: the answer has no integer batch_size and trial_number", c->url, target);
    }
    const json_int_t v = json_integer_value(b);
    c->trial = json_integer_value(t);
    json_decref(o);
    for (int i = 0; i < job->n_bs; i++)
        if (job->bs[i] == v) {
            *bs = job->bs[i];
            c->bs = *bs;
            c->have_trial = 1;
            return 0;
        }
    return fail(c, "GET %s%s: the server chose batch size %lld, not one of the job's", c->url, target, (long long)v);
}

static int c_observe(void *state, const ws_job *job, const ws_ctx *ctx, int bs, double cost, int reached)
{
    (void)cost;
    client *c = state;
    if (!c->have_trial || bs != c->bs)
        return fail(c, "POST %s/report: a run at batch size %d the server did not choose", c->url, bs);
    double target = 0.5;
    if (job->abi_version >= WS_ABI_VERSION_OF(2, 3) && isfinite(job->target_metric)) target = job->target_metric;
    const double t = ctx && WS_CTX_HAS(ctx, run_time_s) ? ctx->run_time_s : NAN;
    const double e = ctx && WS_CTX_HAS(ctx, run_energy_j) ? ctx->run_energy_j : NAN;
    /* As simulate_with_server.py reports current_epoch: a run that
     * reached the target, its epochs; one that did not, max_epochs (so
     * that the server ends the trial); one not started, 1. */
    const int started = ctx && WS_CTX_HAS(ctx, run_started) ? ctx->run_started : 1;
    const int epochs = !started ? 1 : reached ? (ctx && WS_CTX_HAS(ctx, run_epochs) ? ctx->run_epochs : 1)
                                              : job->max_epochs;
    if (!isfinite(t) || !isfinite(e))
        return fail(c, "POST %s/report: the run's time or energy is unknown to this host", c->url);
    json_t *o = json_pack("{s:s,s:i,s:I,s:f,s:f,s:f,s:i}", "job_id", c->job_id, "batch_size", bs, "trial_number",
                          (json_int_t)c->trial, "time", t, "energy", e, "metric", reached ? target + 1 : target - 1,
                          "current_epoch", epochs);
    char *body = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    if (!body) return fail(c, "POST %s/report: out of memory", c->url);
    const int rc = call(c, "POST", "/report", body, NULL);
    free(body);
    c->have_trial = 0;
    return rc;
}

/* One descriptor per spec, for the process's life. */
typedef struct desc {
    ws_bso_type t;
    ws_param_spec params[2];
    char *spec;
    struct desc *next;
} desc;

static pthread_mutex_t descs_mu = PTHREAD_MUTEX_INITIALIZER;
static desc *descs;

static const ws_bso_type *http_bso(const char *spec, ws_error *err)
{
    endpoint e;
    char m[512];
    if (parse_url(spec, &e, m, sizeof m) != 0) {
        ws_fail(err, "%s", m);
        return NULL;
    }
    pthread_mutex_lock(&descs_mu);
    for (desc *d = descs; d; d = d->next)
        if (!strcmp(d->spec, spec)) {
            pthread_mutex_unlock(&descs_mu);
            return &d->t;
        }
    desc *d = calloc(1, sizeof *d);
    if (!d || !(d->spec = strdup(spec))) {
        free(d);
        pthread_mutex_unlock(&descs_mu);
        ws_fail(err, "out of memory");
        return NULL;
    }
    d->params[0] = (ws_param_spec){"url", WS_PARAM_STRING, {.s = d->spec}, 0, 0, "the server's URL"};
    d->t = (ws_bso_type){.abi_version = WS_ABI_VERSION,
                         .name = "http",
                         .summary = "a client of a server of Zeus's batch-size optimizer API",
                         .state_size = sizeof(client),
                         .params = d->params,
                         .create = c_create,
                         .destroy = c_destroy,
                         .register_job = c_register,
                         .predict = c_predict,
                         .observe = c_observe,
                         .param_spec_size = sizeof(ws_param_spec),
                         .value_size = sizeof(ws_value)};
    d->next = descs;
    descs = d;
    pthread_mutex_unlock(&descs_mu);
    return &d->t;
}

void ws_serve_client_install(int remote)
{
    allow_remote = remote;
    ws_registry_set_http_bso(http_bso);
}
