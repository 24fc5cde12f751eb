/*
 * wattsim serve: Zeus's batch-size optimizer REST API over a SQLite file
 * (the serve layer: above study, below cli; the only code that links
 * libmicrohttpd and SQLite).
 *
 *   serve_store.c  the database: schema and its version, the one-server
 *                  lock, the jobs' locks, group commit, the checkpoint
 *                  thread, the job cache, rows of jobs, trials and arms
 *   serve_zeus.c   the decisions of Zeus's server (explorer, then the
 *                  Gaussian Thompson-sampling MAB), on one job's rows
 *   serve_api.c    the requests: routing, JSON, validation, status codes
 *                  (no sockets: the fuzz target and the tests call it)
 *   serve_http.c   the network: libmicrohttpd, limits, metrics, access
 *                  log, SIGTERM
 *   serve_policy.c any wattsim policy behind the API (--bso SPEC,
 *                  PREFIX=SPEC): instances per job, rebuilt by replay
 *   serve_client.c wattsim as a client of such a server (--bso http://)
 */
#ifndef WS_SERVE_H
#define WS_SERVE_H

#include <stddef.h>
#include <stdint.h>

/* Limits of a request. */
#define WS_SERVE_MAX_BODY 65536       /* bytes: larger bodies are a 413 */
#define WS_SERVE_MAX_DEPTH 16         /* JSON nesting */
#define WS_SERVE_MAX_ID 400           /* bytes of a job id (Zeus: VARCHAR(400)) */
#define WS_SERVE_MAX_BATCH_SIZES 4096

typedef struct ws_store ws_store;

/* Open (creating when empty) a serve database and take its lock. sync:
 * 0 NORMAL (survives a crash of the process), 1 FULL (and power loss).
 * NULL with a one-line message in err on failure. */
ws_store *ws_store_open(const char *path, int sync, char *err, size_t errsz);
void ws_store_close(ws_store *s);

/* One request, no sockets. method "GET"/"POST"/..., path without the
 * query, job_id the query's job_id (NULL when absent), body of len bytes
 * (may be NULL). Returns the HTTP status and a malloc'd JSON body in
 * *out (never NULL on return). Thread-safe: requests of one job are
 * serialised, of different jobs run at once (serve_store.c: job locks,
 * group commit); the answer is made after its effect is committed. */
int ws_serve_handle(ws_store *s, const char *method, const char *path, const char *job_id,
                    const char *body, size_t len, char **out);

/* The network server. */
typedef struct ws_serve_config {
    const char *host;       /* "127.0.0.1" unless told otherwise */
    int port;               /* 0: an ephemeral port (ws_server_port says which) */
    const char *db;
    int sync_full;
    int max_connections;    /* default 256 */
    int timeout_s;          /* idle connection timeout, default 30 */
    int threads;            /* default 2 */
    int access_log;         /* one line per request on stderr */
    int cache_jobs;         /* jobs kept in memory (0: the default, 8192) */
} ws_serve_config;

typedef struct ws_server ws_server;

ws_server *ws_server_start(const ws_serve_config *cfg, char *err, size_t errsz);
int ws_server_port(const ws_server *srv);
/* Stop accepting, wait (up to drain_s) for requests in flight, close the
 * database. */
void ws_server_stop(ws_server *srv, int drain_s);
/* Start, wait for SIGTERM or SIGINT, stop. Exit status: 0, or 2 with a
 * message when the server cannot start. */
int ws_serve_main(const ws_serve_config *cfg);

/* Prometheus text of the server's counters (malloc'd). */
char *ws_server_metrics(ws_server *srv);

/* The policies (serve_policy.c). arg "SPEC" (the default) or
 * "PREFIX=SPEC" (the jobs whose id starts with PREFIX; the longest
 * prefix wins): "zeus" is Zeus's server's own decisions, any other SPEC a
 * wattsim BSO as simulate --bso names it, checked as a config's names are
 * (a .so only in a folder of --allow-plugins, py: only of a package of
 * --allow-python: call ws_plugin_allow_dir / _python first) and loaded
 * now. 0, or -1 with a one-line message. ws_serve_policy_reset forgets
 * them all: call it after every server that used them stopped (a job in
 * a store's memory holds an instance of its policy). */
int ws_serve_policy_add(const char *arg, char *err, size_t errsz);
void ws_serve_policy_reset(void);

/* The client (serve_client.c): make "http://HOST:PORT" BSO specs work in
 * this process (registry hook); remote: allow hosts other than loopback. */
void ws_serve_client_install(int remote);
/* One HTTP/1.1 request (Connection: close): 0 with the status and the
 * body (malloc'd), or -1 with a message. */
int ws_http_call(const char *host, const char *port, const char *method, const char *target, const char *body,
                 int timeout_ms, int *status, char **resp, char *err, size_t errsz);

#endif
