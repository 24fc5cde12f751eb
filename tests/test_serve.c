/*
 * wattsim serve: every endpoint and error code of Zeus's batch-size
 * optimizer API over HTTP (a server started in this process on an
 * ephemeral port of 127.0.0.1, a tiny HTTP/1.1 client over a socket), the
 * Zeus server's decisions on a job whose numbers are worked out below,
 * the database's refusals, and the durability under kill -9.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve.h"
#include "serve_state.h"
#include "tmpdir.h"

static ws_server *srv;
static int port;

static void up(void)
{
    tmpdir_make("/tmp/wsserve.XXXXXX");
    char err[512];
    ws_serve_config cfg = {.host = "127.0.0.1", .port = 0, .db = tp("bso.db"), .threads = 2,
                           .max_connections = 64, .timeout_s = 5};
    srv = ws_server_start(&cfg, err, sizeof err);
    cr_assert_not_null(srv, "%s", err);
    port = ws_server_port(srv);
    cr_assert_gt(port, 0);
}

static void down(void)
{
    ws_server_stop(srv, 2);
    srv = NULL;
    tmpdir_remove();
}

/* One request on its own connection: the status (-1 when the connection
 * failed), the body in *resp (malloc'd, "" if none). */
static int http_to(int p, const char *method, const char *target, const char *body, char **resp)
{
    *resp = strdup("");
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    const size_t blen = body ? strlen(body) : 0;
    char *req = NULL;
    const int n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                                 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                           method, target, blen, body ? body : "");
    if (n < 0) {
        close(fd);
        return -1;
    }
    ssize_t off = 0;
    while (off < n) {
        const ssize_t w = send(fd, req + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w <= 0) break;
        off += w;
    }
    free(req);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1024 > cap) buf = realloc(buf, cap *= 2);
        const ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = 0;
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) status = -1;
    const char *b = strstr(buf, "\r\n\r\n");
    free(*resp);
    *resp = strdup(b ? b + 4 : "");
    free(buf);
    return status;
}

static int http(const char *method, const char *target, const char *body, char **resp)
{
    return http_to(port, method, target, body, resp);
}

/* Status only. */
static int st(const char *method, const char *target, const char *body)
{
    char *r;
    const int s = http(method, target, body, &r);
    free(r);
    return s;
}

#define JOB(extra)                                                                                   \
    "{\"job_id\":\"t-1\",\"job_id_prefix\":\"t\",\"batch_sizes\":[64,32,256,128],"                  \
    "\"default_batch_size\":128,\"eta_knob\":0.5,\"beta_knob\":2.0,\"target_metric\":0.5,"           \
    "\"max_epochs\":100,\"mab_seed\":4,\"max_power\":300,\"number_of_gpus\":1,\"gpu_model\":\"v100\"" \
    extra "}"

static void predict(int64_t bs, int64_t trial)
{
    char *r;
    cr_assert_eq(http("GET", "/jobs/batch_size?job_id=t-1", NULL, &r), 200, "%s", r);
    char want[128];
    snprintf(want, sizeof want, "{\"job_id\":\"t-1\",\"batch_size\":%lld,\"trial_number\":%lld}", (long long)bs,
             (long long)trial);
    cr_assert_str_eq(r, want);
    free(r);
}

/* Report; returns the body. */
static char *report(int64_t bs, int64_t trial, double time, double energy, double metric, int epoch)
{
    char body[256], *r;
    snprintf(body, sizeof body, "{\"job_id\":\"t-1\",\"batch_size\":%lld,\"trial_number\":%lld,\"time\":%g,"
             "\"energy\":%g,\"metric\":%g,\"current_epoch\":%d}", (long long)bs, (long long)trial, time, energy,
             metric, epoch);
    cr_assert_eq(http("POST", "/report", body, &r), 200, "%s", r);
    return r;
}

static void report_eq(int64_t bs, int64_t trial, double time, double energy, double metric, int epoch,
                      const char *want)
{
    char *r = report(bs, trial, time, energy, metric, epoch);
    cr_assert_str_eq(r, want);
    free(r);
}

TestSuite(serve, .init = up, .fini = down, .timeout = 60);

Test(serve, register_new_same_and_other)
{
    char *r;
    cr_assert_eq(http("POST", "/jobs", JOB(""), &r), 201, "%s", r);
    /* Zeus's validator sorts the batch sizes; every field, defaults filled. */
    cr_assert(strstr(r, "\"batch_sizes\":[32,64,128,256]"), "%s", r);
    cr_assert(strstr(r, "\"num_pruning_rounds\":2"), "%s", r);
    cr_assert(strstr(r, "\"higher_is_better_metric\":true"), "%s", r);
    free(r);
    cr_assert_eq(st("POST", "/jobs", JOB("")), 200);
    /* The same spec written otherwise (order, int for float) is the same. */
    cr_assert_eq(st("POST", "/jobs", "{\"gpu_model\":\"v100\",\"number_of_gpus\":1,\"max_power\":300.0,"
                    "\"mab_seed\":4,\"max_epochs\":100,\"target_metric\":0.5,\"beta_knob\":2,"
                    "\"eta_knob\":0.5,\"default_batch_size\":128,\"batch_sizes\":[256,128,64,32],"
                    "\"job_id_prefix\":\"t\",\"job_id\":\"t-1\"}"), 200);
    cr_assert_eq(http("POST", "/jobs", JOB(",\"window_size\":3"), &r), 409);
    cr_assert_str_eq(r, "{\"message\":\"JobSpec doesn't match with existing jobSpec. Use a new job_id for"
                        " different configuration\"}");
    free(r);
}

Test(serve, register_without_job_id_makes_one)
{
    char *r;
    cr_assert_eq(http("POST", "/jobs", "{\"job_id_prefix\":\"grp\",\"batch_sizes\":[8],\"default_batch_size\":8,"
                      "\"max_power\":250,\"number_of_gpus\":2,\"gpu_model\":\"a40\"}", &r), 201, "%s", r);
    const char *id = strstr(r, "\"job_id\":\"grp-");
    cr_assert_not_null(id, "%s", r);
    for (int i = 0; i < 8; i++) cr_assert(strchr("0123456789abcdef", id[14 + i]), "%s", r);
    cr_assert_eq(id[22], '"', "%s", r);
    cr_assert(strstr(r, "\"beta_knob\":2.0") && strstr(r, "\"mab_seed\":null"), "%s", r);
    free(r);
}

Test(serve, register_validation_is_422)
{
    static const char *const bad[] = {
        "{\"job_id_prefix\":\"t\",\"batch_sizes\":[],\"default_batch_size\":8,\"max_power\":1,"
        "\"number_of_gpus\":1,\"gpu_model\":\"g\"}",                                       /* empty list */
        JOB(",\"default_batch_size\":100"),                                                 /* b0 not in list */
        JOB(",\"eta_knob\":1.5"), JOB(",\"eta_knob\":-0.1"), JOB(",\"beta_knob\":0"),
        JOB(",\"max_epochs\":0"), JOB(",\"num_pruning_rounds\":-1"), JOB(",\"mab_num_explorations\":-1"),
        JOB(",\"max_power\":0"), JOB(",\"number_of_gpus\":0"), JOB(",\"gpu_model\":\"\""),
        JOB(",\"job_id\":\"u-1\""),                                                         /* prefix */
        JOB(",\"batch_sizes\":[32,\"64\"]"), JOB(",\"max_epochs\":1.5"), JOB(",\"eta_knob\":\"0.5\""),
        JOB(",\"higher_is_better_metric\":\"yes\""), JOB(",\"mab_seed\":-1"),
        "{\"job_id_prefix\":\"t\",\"batch_sizes\":[8],\"default_batch_size\":8,\"max_power\":1,"
        "\"number_of_gpus\":1}",                                                           /* gpu_model missing */
        "not json", "[1,2]", "", "{\"a\":1,\"a\":2}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *r;
        cr_expect_eq(http("POST", "/jobs", bad[i], &r), 422, "case %zu: %s", i, r);
        cr_expect(strstr(r, "\"detail\":[{\"loc\":[\"body\""), "case %zu: %s", i, r);
        free(r);
    }
    /* beta_knob null is valid: no early stop. (JOB's extra keys repeat
     * keys: the last wins, as in Python's json.) */
    cr_assert_eq(st("POST", "/jobs", JOB(",\"beta_knob\":null")), 201);
}

Test(serve, unknown_jobs_and_trials)
{
    char *r;
    cr_assert_eq(http("GET", "/jobs/batch_size?job_id=nope", NULL, &r), 400);
    cr_assert_str_eq(r, "{\"message\":\"Unknown job(nope). Please register the job first\"}");
    free(r);
    cr_assert_eq(http("GET", "/jobs/batch_size", NULL, &r), 422);
    cr_assert(strstr(r, "[\"query\",\"job_id\"]"), "%s", r);
    free(r);
    /* A query that is not UTF-8 (an answer naming it could not be JSON). */
    cr_assert_eq(http("GET", "/jobs/batch_size?job_id=%ff%fe", NULL, &r), 422);
    cr_assert(strstr(r, "not UTF-8 text"), "%s", r);
    free(r);
    cr_assert_eq(st("DELETE", "/jobs?job_id=%c3%28", NULL), 422);
    cr_assert_eq(st("POST", "/report", "{\"job_id\":\"nope\",\"batch_size\":1,\"trial_number\":1,\"time\":1,"
                    "\"energy\":1,\"metric\":1,\"current_epoch\":1}"), 400);
    cr_assert_eq(st("POST", "/report", "{\"job_id\":\"t-1\",\"batch_size\":1}"), 422);
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    cr_assert_eq(http("POST", "/report", "{\"job_id\":\"t-1\",\"batch_size\":128,\"trial_number\":1,\"time\":1,"
                      "\"energy\":1,\"metric\":1,\"current_epoch\":1}", &r), 400);
    cr_assert(strstr(r, "Unknown trial"), "%s", r);
    free(r);
    cr_assert_eq(http("PATCH", "/trials", "{\"job_id\":\"t-1\",\"batch_size\":128,\"trial_number\":1}", &r), 404);
    cr_assert_str_eq(r, "{\"message\":\"Could not find the trial: job_id='t-1' batch_size=128 trial_number=1\"}");
    free(r);
    cr_assert_eq(st("PATCH", "/trials", "{\"job_id\":\"t-1\",\"batch_size\":128}"), 422);
    cr_assert_eq(st("PATCH", "/trials", "{\"job_id\":\"zz\",\"batch_size\":128,\"trial_number\":1}"), 404);
}

/* A parse error quotes the request's bytes (jansson: "invalid escape near
 * '...'"); bytes that are not UTF-8 there made the answer impossible to
 * encode ("out of memory", found by fuzz_serve): they read '?' now, and a
 * message cut by its buffer inside a character too. */
Test(serve, parse_errors_quoting_bytes_that_are_not_utf8)
{
    static const char *const bodies[] = {
        "\"\\\xd6\xa3\xa3\xa4" "b\\f\\*\\\\\\b\\N\"",      /* the fuzzer's */
        "{\"job_id\":\"\xff\xfe\"}", "{\"a\":tru\xc3}", "\xed\xa0\x80", "{\"\xf4\x90\x80\x80\":1}",
    };
    static const char *const routes[][2] = {{"POST", "/report"}, {"PATCH", "/trials"}, {"POST", "/jobs"}};
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++)
        for (size_t k = 0; k < 3; k++) {
            char *r;
            cr_expect_eq(http(routes[k][0], routes[k][1], bodies[i], &r), 422, "body %zu on %s: %s", i,
                         routes[k][1], r);
            cr_expect(strstr(r, "\"detail\":[{\"loc\":[\"body\"]") && !strstr(r, "out of memory"),
                      "body %zu on %s: %s", i, routes[k][1], r);
            free(r);
        }
}

Test(serve, routes_methods_healthz_metrics)
{
    char *r;
    cr_assert_eq(http("GET", "/healthz", NULL, &r), 200);
    cr_assert_str_eq(r, "{\"status\":\"ok\"}");
    free(r);
    cr_assert_eq(http("GET", "/nowhere", NULL, &r), 404);
    cr_assert_str_eq(r, "{\"detail\":\"Not Found\"}");
    free(r);
    cr_assert_eq(st("PUT", "/jobs", JOB("")), 405);
    cr_assert_eq(st("POST", "/jobs/batch_size", NULL), 405);
    cr_assert_eq(st("GET", "/report", NULL), 405);
    cr_assert_eq(st("POST", "/trials", "{}"), 405);
    cr_assert_eq(st("POST", "/metrics", NULL), 405);
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    cr_assert_eq(http("GET", "/metrics", NULL, &r), 200);
    cr_assert(strstr(r, "wattsim_serve_requests_total{route=\"register\",status=\"201\"} 1\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_requests_total{route=\"other\",status=\"404\"} 1\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_jobs 1\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_request_seconds_count 8\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_request_seconds_bucket{le=\"+Inf\"} 8\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_errors_total 0\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_cached_jobs 0\n"), "%s", r);   /* a registration is not kept */
    cr_assert(strstr(r, "wattsim_serve_cache_jobs_max 8192\n"), "%s", r);
    free(r);
}

Test(serve, body_limits)
{
    const size_t n = WS_SERVE_MAX_BODY + 100;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = 0;
    char *r;
    cr_assert_eq(http("POST", "/jobs", big, &r), 413);
    cr_assert(strstr(r, "larger than 65536 bytes"), "%s", r);
    free(r);
    free(big);
    /* Exactly at the limit is read (and is then a 422: no fields). */
    big = malloc(WS_SERVE_MAX_BODY + 1);
    memset(big, ' ', WS_SERVE_MAX_BODY);
    big[0] = '{';
    big[WS_SERVE_MAX_BODY - 1] = '}';
    big[WS_SERVE_MAX_BODY] = 0;
    cr_assert_eq(st("POST", "/jobs", big), 422);
    free(big);
}

Test(serve, delete)
{
    char *r;
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    predict(128, 1);
    cr_assert_eq(http("DELETE", "/jobs?job_id=t-1", NULL, &r), 200);
    cr_assert_str_eq(r, "null");
    free(r);
    cr_assert_eq(http("DELETE", "/jobs?job_id=t-1", NULL, &r), 404);
    cr_assert_str_eq(r, "{\"message\":\"No job was deleted.\"}");
    free(r);
    cr_assert_eq(st("DELETE", "/jobs", NULL), 422);
    cr_assert_eq(st("GET", "/jobs/batch_size?job_id=t-1", NULL), 400);
    /* Registered again: a new job, its trials numbered from 1. */
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    predict(128, 1);
}

Test(serve, end_trial)
{
    char *r;
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    predict(128, 1);
    cr_assert_eq(http("PATCH", "/trials", "{\"job_id\":\"t-1\",\"batch_size\":128,\"trial_number\":1}", &r), 200);
    cr_assert_str_eq(r, "null");
    free(r);
    /* Ending it again changes nothing; a report on a failed trial is a 400. */
    cr_assert_eq(st("PATCH", "/trials", "{\"job_id\":\"t-1\",\"batch_size\":128,\"trial_number\":1}"), 200);
    cr_assert_eq(http("POST", "/report", "{\"job_id\":\"t-1\",\"batch_size\":128,\"trial_number\":1,\"time\":1,"
                      "\"energy\":1,\"metric\":1,\"current_epoch\":1}", &r), 400);
    cr_assert_str_eq(r, "{\"message\":\"Trial(1) is already reported but converged is not set.\"}");
    free(r);
    /* The failed exploration does not count: 128 is explored again. */
    predict(128, 2);
}

/*
 * The Zeus server's decisions, worked out by hand (eta 0.5, max power 300:
 * cost = 0.5 energy + 150 time; beta 2; sizes 32 64 128 256, b0 128):
 *  round 0, down from 128 then up:
 *   1: 128 time 10 energy 1000, converged: cost 2000 (min 2000)
 *   2:  64 time 8 energy 900, converged: cost 1650 (min 1650 at 64)
 *   3:  32 time 30 energy 3000: cost 6000 > 2 x 1650: stopped, not converged
 *       (the list down ends here)
 *   4: 256 at max_epochs with metric 0.4: cost 2550, not converged
 *  round 1 over {64, 128} from 64 (the round's cheapest):
 *   5:  64 dispatched; a predict before its report is a concurrent trial
 *   6:  at the cheapest size so far, 64; reported cost 1450 (min 1450)
 *   5 reported (cost 1825), 7: 128 cost 1715, converged
 *  then the MAB over arms 64 (trials 2, 5) and 128 (1, 7): its picks are
 *  tests/oracle/serve_mab.py's (numpy, default_rng(4)).
 */
Test(serve, decisions)
{
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    predict(128, 1);
    report_eq(128, 1, 5, 500, 0.3, 1, "{\"stop_train\":false,\"converged\":false,\"message\":\"Stop condition not met, keep training\"}");
    report_eq(128, 1, 10, 1000, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    /* Reported twice: the first answer again. */
    report_eq(128, 1, 99, 99, 0.1, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Result for this trial(1) is already reported.\"}");
    predict(64, 2);
    report_eq(64, 2, 8, 900, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    predict(32, 3);
    char *r = report(32, 3, 30, 3000, 0.3, 2);
    cr_assert(strstr(r, "\"stop_train\":true,\"converged\":false,\"message\":\"Batch Size(32) exceeded the cost upper"
                        " bound: current cost(6000.0) >"), "%s", r);
    cr_assert(strstr(r, "beta_knob(2.0)*min_cost(1650.0)"), "%s", r);
    free(r);
    predict(256, 4);
    report_eq(256, 4, 12, 1500, 0.4, 100, "{\"stop_train\":true,\"converged\":false,\"message\":\"Train failed to converge within max_epoch(100)\"}");
    predict(64, 5);
    predict(64, 6);     /* concurrent */
    report_eq(64, 6, 7, 800, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    report_eq(64, 5, 9, 950, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    predict(128, 7);
    report_eq(128, 7, 8.5, 880, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    static const int64_t want[8] = {128, 128, 64, 128, 64, 128, 128, 128};
    for (int k = 0; k < 8; k++) {
        predict(want[k], 8 + k);
        const double t = want[k] == 64 ? 8 + k % 3 : 7 + k % 2;
        const double e = want[k] == 64 ? 900 + 40 * k : 800 + 30 * k;
        free(report(want[k], 8 + k, t, e, 0.6, 3));
    }
}

/* ------------------------------------------------------ the database */

Test(serve, database_refusals)
{
    char err[512];
    /* A second server on the same file. */
    ws_serve_config cfg = {.host = "127.0.0.1", .port = 0, .db = tp("bso.db")};
    ws_server *two = ws_server_start(&cfg, err, sizeof err);
    cr_assert_null(two);
    cr_assert(strstr(err, "another wattsim serve uses this database"), "%s", err);
    /* Another program's SQLite database. */
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(tp("other.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE Job(job_id TEXT)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cfg.db = tp("other.db");
    cr_assert_null(ws_server_start(&cfg, err, sizeof err));
    cr_assert(strstr(err, "not a wattsim serve database (another program's"), "%s", err);
    /* Another version of ours. */
    cr_assert_eq(sqlite3_open(tp("v9.db"), &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA application_id=1465078614; PRAGMA user_version=9;"
                                  "CREATE TABLE jobs(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cfg.db = tp("v9.db");
    cr_assert_null(ws_server_start(&cfg, err, sizeof err));
    cr_assert(strstr(err, "schema version 9, this wattsim reads version 2"), "%s", err);
    /* Not SQLite at all. */
    write_file("text.db", "job_id,batch_size\nnot,a database at all, but long enough to have a header page\n");
    cfg.db = tp("text.db");
    cr_assert_null(ws_server_start(&cfg, err, sizeof err));
    cr_assert(strstr(err, "not a wattsim serve database"), "%s", err);
    /* A FIFO (or a folder): named as what it is, not SQLite's "disk I/O error". */
    cr_assert_eq(mkfifo(tp("fifo.db"), 0600), 0);
    cfg.db = tp("fifo.db");
    cr_assert_null(ws_server_start(&cfg, err, sizeof err));
    cr_assert(strstr(err, "fifo.db: not a regular file (a FIFO)"), "%s", err);
    /* A path with terminal escapes is printed escaped (ws_name_show), in
     * the refusals before and after SQLite opens it. */
    cr_assert_eq(mkdir(tp("e\x1b[2J.db"), 0700), 0);
    cfg.db = tp("e\x1b[2J.db");
    cr_assert_null(ws_server_start(&cfg, err, sizeof err));
    cr_assert(!strchr(err, '\x1b') && strstr(err, "e\\x1B[2J.db: not a regular file"), "%s", err);
    write_file("x\x1b]0;t\x07.db", "not a database, but long enough to have a header page, and some more text\n");
    cfg.db = tp("x\x1b]0;t\x07.db");
    cr_assert_null(ws_server_start(&cfg, err, sizeof err));
    cr_assert(!strchr(err, '\x1b') && !strchr(err, '\x07') && strstr(err, "x\\x1B]0;t\\x07.db: not a wattsim"),
              "%s", err);
    /* The file is WAL. */
    cr_assert_eq(sqlite3_open(tp("bso.db"), &db), SQLITE_OK);
    sqlite3_stmt *s;
    cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
    cr_assert_str_eq((const char *)sqlite3_column_text(s, 0), "wal");
    sqlite3_finalize(s);
    sqlite3_close(db);
}

/* A restart on the same file continues where the server stopped (the
 * stream of mab_seed included): the decisions test's job, interrupted. */
Test(serve, restart_continues)
{
    cr_assert_eq(st("POST", "/jobs", JOB(",\"num_pruning_rounds\":1")), 201);
    predict(128, 1);
    report_eq(128, 1, 10, 1000, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    char *path = strdup(tp("bso.db"));
    ws_server_stop(srv, 2);
    char err[512];
    ws_serve_config cfg = {.host = "127.0.0.1", .port = 0, .db = path};
    srv = ws_server_start(&cfg, err, sizeof err);
    cr_assert_not_null(srv, "%s", err);
    port = ws_server_port(srv);
    free(path);
    predict(64, 2);
    cr_assert_eq(st("POST", "/jobs", JOB(",\"num_pruning_rounds\":1")), 200);
}

/* --------------------------------------------------- kill -9 durability
 *
 * A client drives 4 jobs x 14 runs (register, predict, a report or two,
 * sometimes an abandoned trial ended by PATCH /trials) against a server in
 * a child process, while another thread kills that child with SIGKILL at
 * random instants (a few milliseconds apart). After each death the client
 * restarts the server on the same file and carries on: reports, ends and
 * registrations are idempotent in Zeus's API (sent again), a predict whose
 * answer was lost is looked up in the database (it committed or it did
 * not). The database's decisions (every trial, arm and job row, the random
 * streams' states included) must equal those of an uninterrupted run.
 */

typedef struct child {
    pid_t pid;
    int port;
    int alive;
} child;

static pthread_mutex_t kmu = PTHREAD_MUTEX_INITIALIZER;
static child cur;
static int kills_left, kills_done, killer_stop;

static int child_cache_jobs;   /* the children's --cache-jobs (0: the default) */

static void start_child(const char *db)
{
    for (;;) {
        int p[2];
        cr_assert_eq(pipe(p), 0);
        const pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            close(p[0]);
            char err[512];
            ws_serve_config cfg = {.host = "127.0.0.1", .port = 0, .db = db, .threads = 2,
                                   .cache_jobs = child_cache_jobs};
            ws_server *s = ws_server_start(&cfg, err, sizeof err);
            if (!s) {
                fprintf(stderr, "child: %s\n", err);
                _exit(3);
            }
            const int pt = ws_server_port(s);
            if (write(p[1], &pt, sizeof pt) != (ssize_t)sizeof pt) _exit(4);
            for (;;) pause();
        }
        close(p[1]);
        int pt = 0;
        const ssize_t r = read(p[0], &pt, sizeof pt);
        close(p[0]);
        pthread_mutex_lock(&kmu);
        cur.pid = pid;
        cur.alive = r == (ssize_t)sizeof pt;
        cur.port = pt;
        pthread_mutex_unlock(&kmu);
        if (r == (ssize_t)sizeof pt) return;
        int ws;
        waitpid(pid, &ws, 0);   /* killed while starting: again */
        cr_assert(WIFSIGNALED(ws), "the server child failed to start");
    }
}

static void stop_child(void)
{
    pthread_mutex_lock(&kmu);
    if (cur.alive) kill(cur.pid, SIGKILL);
    cur.alive = 0;
    const pid_t pid = cur.pid;
    pthread_mutex_unlock(&kmu);
    waitpid(pid, NULL, 0);
}

static void *killer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (;;) {
        struct timespec ts = {0, (long)(200000 + rand_r(&seed) % 6000000)};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&kmu);
        if (killer_stop || kills_left == 0) {
            pthread_mutex_unlock(&kmu);
            return NULL;
        }
        if (cur.alive) {
            kill(cur.pid, SIGKILL);
            cur.alive = 0;
            kills_left--;
            kills_done++;
        }
        pthread_mutex_unlock(&kmu);
    }
}

/* The last trial of a job in the database: 1 found. */
static int last_trial(const char *db, const char *job, int64_t *bs, int64_t *n)
{
    sqlite3 *d;
    cr_assert_eq(sqlite3_open(db, &d), SQLITE_OK);
    sqlite3_stmt *s;
    cr_assert_eq(sqlite3_prepare_v2(d, "SELECT batch_size, trial_number FROM trials WHERE job_id=?"
                                       " ORDER BY trial_number DESC LIMIT 1", -1, &s, NULL), SQLITE_OK);
    sqlite3_bind_text(s, 1, job, -1, SQLITE_TRANSIENT);
    const int found = sqlite3_step(s) == SQLITE_ROW;
    if (found) {
        *bs = sqlite3_column_int64(s, 0);
        *n = sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    sqlite3_close(d);
    return found;
}

/* Send until answered, restarting a killed server. For a predict, known
 * is the job's last trial number the client knows: a larger one in the
 * database is the lost answer. */
static int durable(const char *db, const char *method, const char *target, const char *body, char **resp,
                   const char *predict_job, int64_t known)
{
    for (;;) {
        pthread_mutex_lock(&kmu);
        const int p = cur.port;
        pthread_mutex_unlock(&kmu);
        const int s = http_to(p, method, target, body, resp);
        if (s > 0) return s;
        free(*resp);
        stop_child();
        int64_t bs, n;
        if (predict_job && last_trial(db, predict_job, &bs, &n) && n > known) {
            cr_assert_eq(asprintf(resp, "{\"job_id\":\"%s\",\"batch_size\":%lld,\"trial_number\":%lld}",
                                  predict_job, (long long)bs, (long long)n) > 0, 1);
            start_child(db);
            return 200;
        }
        start_child(db);
    }
}

static void drive(const char *db)
{
    enum { JOBS = 4, RUNS = 14 };
    int64_t known[JOBS] = {0};
    char *r, body[512], target[64], id[16];
    start_child(db);
    for (int j = 0; j < JOBS; j++) {
        snprintf(body, sizeof body, "{\"job_id\":\"d-%d\",\"job_id_prefix\":\"d\",\"batch_sizes\":[16,32,64,128,256],"
                 "\"default_batch_size\":64,\"eta_knob\":0.%d,\"beta_knob\":%s,\"max_epochs\":5,"
                 "\"mab_seed\":%d,\"window_size\":%d,\"max_power\":250,\"number_of_gpus\":1,\"gpu_model\":\"a40\"}",
                 j, 3 + j, j == 3 ? "null" : "2.0", 10 + j, j == 2 ? 3 : 0);
        const int s = durable(db, "POST", "/jobs", body, &r, NULL, 0);
        cr_assert(s == 201 || s == 200, "%d %s", s, r);
        free(r);
    }
    for (int run = 0; run < RUNS; run++)
        for (int j = 0; j < JOBS; j++) {
            snprintf(id, sizeof id, "d-%d", j);
            snprintf(target, sizeof target, "/jobs/batch_size?job_id=%s", id);
            cr_assert_eq(durable(db, "GET", target, NULL, &r, id, known[j]), 200, "%s", r);
            long long bs = 0, n = 0;
            cr_assert_eq(sscanf(strstr(r, "\"batch_size\":"), "\"batch_size\":%lld,\"trial_number\":%lld", &bs, &n),
                         2, "%s", r);
            free(r);
            known[j] = n;
            if ((run + j) % 5 == 4) {   /* abandoned: the client ends it */
                snprintf(body, sizeof body, "{\"job_id\":\"%s\",\"batch_size\":%lld,\"trial_number\":%lld}", id, bs, n);
                cr_assert_eq(durable(db, "PATCH", "/trials", body, &r, NULL, 0), 200, "%s", r);
                free(r);
                continue;
            }
            /* Cost grows away from 64; 16 never converges. */
            const double d = bs > 64 ? (double)bs / 64 : 64.0 / (double)bs;
            for (int epoch = 1; epoch <= 5; epoch++) {
                const double t = epoch * (10 + 3 * d + (double)(n % 3));
                const double e = epoch * (1500 + 400 * d + (double)(n % 7) * 10);
                const double metric = bs == 16 ? 0.1 : 0.2 * epoch - 0.01 * d;
                snprintf(body, sizeof body, "{\"job_id\":\"%s\",\"batch_size\":%lld,\"trial_number\":%lld,"
                         "\"time\":%.17g,\"energy\":%.17g,\"metric\":%.17g,\"current_epoch\":%d}", id, bs, n, t, e,
                         metric, epoch);
                cr_assert_eq(durable(db, "POST", "/report", body, &r, NULL, 0), 200, "%s", r);
                const int stop = strstr(r, "\"stop_train\":true") != NULL;
                free(r);
                if (stop) break;
            }
        }
    stop_child();
}

/* Every row of the decisions, as text. */
static char *dump_db(const char *db)
{
    sqlite3 *d;
    cr_assert_eq(sqlite3_open(db, &d), SQLITE_OK);
    static const char *const q[] = {
        "SELECT job_id, stage, quote(min_cost), min_cost_bs, rng FROM jobs ORDER BY job_id",
        "SELECT job_id, trial_number, batch_size, type, status, quote(time), quote(energy), converged FROM trials"
        " ORDER BY job_id, trial_number",
        "SELECT job_id, seq, batch_size, quote(mean), quote(prec), quote(reward_prec), n_obs FROM arms"
        " ORDER BY job_id, seq",
        "SELECT job_id, seq, kind, batch_size, quote(cost), reached, started, epochs, quote(time), quote(energy)"
        " FROM calls ORDER BY job_id, seq"};
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    for (int k = 0; k < 4; k++) {
        sqlite3_stmt *s;
        cr_assert_eq(sqlite3_prepare_v2(d, q[k], -1, &s, NULL), SQLITE_OK);
        while (sqlite3_step(s) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(s); c++) {
                const unsigned char *v = sqlite3_column_text(s, c);
                const size_t n = strlen(v ? (const char *)v : "NULL") + 2;
                if (len + n + 1 > cap) out = realloc(out, cap *= 2);
                len += (size_t)snprintf(out + len, cap - len, "%s%c", v ? (const char *)v : "NULL",
                                        c + 1 < sqlite3_column_count(s) ? '|' : '\n');
            }
        }
        sqlite3_finalize(s);
    }
    sqlite3_close(d);
    return out;
}

/* drive() on fresh databases with the killer running, each run's rows
 * equal to want, until at least 10 kills have landed in all: a run ends
 * when its requests are done, and on a fast server or an idle machine
 * one run may take fewer kills than that (the killer sleeps 0.2 to 6.2
 * ms between kills), which says nothing about durability. */
static void drive_killed(const char *killed, const char *want)
{
    int total = 0;
    for (int attempt = 0; total < 10; attempt++) {
        cr_assert_lt(attempt, 20, "only %d kills landed in 20 runs", total);
        char path[600];
        snprintf(path, sizeof path, "%s.%d", killed, attempt);
        kills_left = 30;
        kills_done = 0;
        killer_stop = 0;
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, killer, (void *)(uintptr_t)(time(NULL) + attempt)), 0);
        drive(path);
        pthread_mutex_lock(&kmu);
        killer_stop = 1;
        pthread_mutex_unlock(&kmu);
        pthread_join(th, NULL);
        char *got = dump_db(path);
        cr_assert_str_eq(got, want, "run %d, %d kills", attempt, kills_done);
        free(got);
        total += kills_done;
    }
    cr_log_info("%d kills", total);
}

static void tmp_only(void) { tmpdir_make("/tmp/wsserve.XXXXXX"); }

TestSuite(serve_durable, .init = tmp_only, .fini = tmpdir_remove, .timeout = 120);

Test(serve_durable, kill9_at_random_instants)
{
    char ref[512], killed[512];
    snprintf(ref, sizeof ref, "%s", tp("ref.db"));
    snprintf(killed, sizeof killed, "%s", tp("killed.db"));
    drive(ref);
    char *want = dump_db(ref);
    cr_assert(strstr(want, "d-0|1|"), "the reference run reached the MAB stage:\n%s", want);
    drive_killed(killed, want);
    free(want);
}

/* A wattsim policy behind serve (--bso PREFIX=SPEC): gts decides the jobs
 * "d-*" (their window_size its window, their mab_seed its stream), kill -9
 * at random instants, restart: each instance is rebuilt by replaying its
 * calls, and every trial and call equals the uninterrupted run's. */
Test(serve_durable, kill9_policy_replays)
{
    char err[512];
    cr_assert_eq(ws_serve_policy_add("d-=gts", err, sizeof err), 0, "%s", err);
    char ref[512], killed[512];
    snprintf(ref, sizeof ref, "%s", tp("ref.db"));
    snprintf(killed, sizeof killed, "%s", tp("killed.db"));
    drive(ref);
    char *want = dump_db(ref);
    /* gts decided: each job's calls were logged (its first predict and
     * observe: calls rows seq 1 and 2; only a wattsim policy writes them). */
    for (int j = 0; j < 4; j++) {
        char row[32];
        snprintf(row, sizeof row, "\nd-%d|1|0|", j);
        cr_assert(strstr(want, row), "%s: %s", row, want);
        snprintf(row, sizeof row, "\nd-%d|2|1|", j);
        cr_assert(strstr(want, row), "%s: %s", row, want);
    }
    /* and the killed servers keep 2 of the 4 jobs in memory (--cache-jobs
     * 2): evicted instances are rebuilt from their calls as after a kill */
    child_cache_jobs = 2;
    drive_killed(killed, want);
    child_cache_jobs = 0;
    ws_serve_policy_reset();
    free(want);
}

/* --bso PREFIX=SPEC: the longest prefix wins, no prefix is the default;
 * .so and py: specs are refused without --allow-plugins / --allow-python. */
Test(serve_durable, policy_routes)
{
    char err[512];
    cr_assert_eq(ws_serve_policy_add("gts", err, sizeof err), 0, "%s", err);
    cr_assert_eq(ws_serve_policy_add("t=zeus", err, sizeof err), 0, "%s", err);
    cr_assert_eq(ws_serve_policy_add("t-b=default", err, sizeof err), 0, "%s", err);
    cr_assert_eq(ws_serve_policy_add("t-b=gts", err, sizeof err), -1);
    cr_assert(strstr(err, "the prefix 't-b' is given twice"), "%s", err);
    cr_assert_eq(ws_serve_policy_add("x=py:evil.mod:Cls", err, sizeof err), -1);
    cr_assert(strstr(err, "--allow-python evil"), "%s", err);
    cr_assert_eq(ws_serve_policy_add("x=/tmp/x.so", err, sizeof err), -1);
    cr_assert(strstr(err, "--allow-plugins"), "%s", err);
    cr_assert_eq(ws_serve_policy_add("x=nosuchpolicy", err, sizeof err), -1);
    cr_assert(strstr(err, "nosuchpolicy"), "%s", err);
    cr_assert_eq(ws_serve_policy_add("x=", err, sizeof err), -1);
    cr_assert(ws_svp_serves("other"));       /* gts */
    cr_assert(!ws_svp_serves("t-a"));        /* zeus */
    cr_assert(ws_svp_serves("t-b1"));        /* default */
    ws_server *s;
    ws_serve_config cfg = {.host = "127.0.0.1", .port = 0, .db = tp("r.db"), .threads = 2};
    s = ws_server_start(&cfg, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    port = ws_server_port(s);
    const char *spec = "\"batch_sizes\":[32,64,128],\"default_batch_size\":64,\"eta_knob\":0.5,"
                       "\"beta_knob\":2.0,\"target_metric\":0.5,\"max_epochs\":10,\"mab_seed\":1,"
                       "\"max_power\":300,\"number_of_gpus\":1,\"gpu_model\":\"v100\"}";
    char body[512], *r;
    for (int k = 0; k < 2; k++) {
        const char *id = k ? "t-b1" : "t-a";
        snprintf(body, sizeof body, "{\"job_id\":\"%s\",\"job_id_prefix\":\"t\",%s", id, spec);
        cr_assert_eq(st("POST", "/jobs", body), 201);
        for (int n = 1; n <= 3; n++) {
            char target[64];
            snprintf(target, sizeof target, "/jobs/batch_size?job_id=%s", id);
            cr_assert_eq(http("GET", target, NULL, &r), 200, "%s", r);
            long long bs = 0, tn = 0;
            cr_assert_eq(sscanf(strstr(r, "\"batch_size\":"), "\"batch_size\":%lld,\"trial_number\":%lld", &bs,
                                &tn), 2, "%s", r);
            free(r);
            cr_assert_eq(tn, n);
            /* default: always b0; zeus explores 64, then 32 (its pruning, down first) */
            if (k) cr_assert_eq(bs, 64);
            else if (n == 2) cr_assert_eq(bs, 32);
            snprintf(body, sizeof body, "{\"job_id\":\"%s\",\"batch_size\":%lld,\"trial_number\":%lld,"
                     "\"time\":10,\"energy\":1000,\"metric\":0.6,\"current_epoch\":3}", id, bs, tn);
            cr_assert_eq(http("POST", "/report", body, &r), 200, "%s", r);
            cr_assert(strstr(r, "\"stop_train\":true,\"converged\":true"), "%s", r);
            free(r);
        }
    }
    ws_server_stop(s, 2);
    ws_serve_policy_reset();
}

/* ------------------------------------------- wattsim as a client (--bso http://) */

#include "run_cli.h"

/* The history lines of simulate's table (after its 5 header lines). */
static const char *history(const char *out)
{
    const char *p = out;
    for (int i = 0; i < 5 && p; i++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    cr_assert_not_null(p, "%s", out);
    return p;
}

/* The 1-based run at which two histories first differ, 0 when equal. */
static int first_difference(const char *a, const char *b)
{
    int line = 0;
    while (*a || *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        const size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        if (la != lb || memcmp(a, b, la)) return line;
        line++;
        a += la + (ea != NULL);
        b += lb + (eb != NULL);
    }
    return 0;
}

static int compare_bso(const char *workload, const char *seed, const char *bso)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    const char *zeus[] = {"wattsim", "simulate", "--gpu", "v100", "--workload", workload, "--seed", seed,
                          "--recurrences", "60", "--bso", bso, NULL};
    const char *http[] = {"wattsim", "simulate", "--gpu", "v100", "--workload", workload, "--seed", seed,
                          "--recurrences", "60", "--bso", url, NULL};
    cli_result z = cli_run(zeus), h = cli_run(http);
    cr_assert_eq(z.status, 0, "%s", z.err);
    cr_assert_eq(h.status, 0, "%s", h.err);
    cr_assert(strstr(h.out, "bso http{url=http://127.0.0.1:"), "%s", h.out);
    const int d = first_difference(history(z.out), history(h.out));
    cli_free(&z);
    cli_free(&h);
    return d;
}

static int compare(const char *workload, const char *seed) { return compare_bso(workload, seed, "zeus"); }

TestSuite(serve_client, .init = up, .fini = down, .timeout = 300);

/* wattsim serve --bso wattsim=gts (the client's job ids start "wattsim-"):
 * simulate --bso http:// equals simulate --bso gts run for run, the
 * JobSpec's mab_seed (the simulation's seed) seeding gts's stream. */
static void up_gts(void)
{
    char err[512];
    cr_assert_eq(ws_serve_policy_add("wattsim=gts", err, sizeof err), 0, "%s", err);
    up();
}

static void down_gts(void)
{
    down();
    ws_serve_policy_reset();
}

TestSuite(serve_policy_client, .init = up_gts, .fini = down_gts, .timeout = 300);

Test(serve_policy_client, simulate_equals_gts)
{
    cr_assert_eq(compare_bso("librispeech", "1", "gts"), 0);
    cr_assert_eq(compare_bso("cifar100", "2", "gts"), 0);
    cr_assert_eq(compare_bso("squad", "3", "gts"), 0);
    /* and not zeus: the server really ran gts */
    cr_assert_neq(compare_bso("cifar100", "2", "zeus"), 0);
}

/* Against wattsim serve, run for run the built-in zeus policy (Zeus's
 * legacy simulator), on jobs where Zeus's server and its simulator agree. */
Test(serve_client, simulate_equals_zeus)
{
    cr_assert_eq(compare("librispeech", "1"), 0);
    cr_assert_eq(compare("sentiment140", "2"), 0);
    cr_assert_eq(compare("cifar100", "1"), 0);
}

/* Where they do not: v100/cifar100 seed 2 parts at run 16, as Zeus's own
 * SimulatorWithServer against Zeus's server does (issue 27). */
Test(serve_client, server_and_legacy_part_where_zeus_does)
{
    cr_assert_eq(compare("cifar100", "2"), 16);
}

Test(serve_client, errors_name_the_request)
{
    const char *remote[] = {"wattsim", "simulate", "--workload", "librispeech", "--recurrences", "2", "--bso",
                            "http://192.0.2.1:8000", NULL};
    cli_result r = cli_run(remote);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "http://192.0.2.1:8000: not a loopback address") && strstr(r.err, "--allow-remote"),
              "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cli_free(&r);
    const char *closed[] = {"wattsim", "simulate", "--workload", "librispeech", "--recurrences", "2", "--bso",
                            "http://127.0.0.1:1", NULL};
    r = cli_run(closed);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "POST http://127.0.0.1:1/jobs: cannot connect to 127.0.0.1:1"), "%s", r.err);
    cr_assert_str_eq(r.out, "");
    cli_free(&r);
    const char *tls[] = {"wattsim", "simulate", "--workload", "librispeech", "--bso", "https://127.0.0.1:8000",
                         NULL};
    r = cli_run(tls);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "https is not spoken here"), "%s", r.err);
    cli_free(&r);
    const char *plo[] = {"wattsim", "simulate", "--workload", "librispeech", "--plo", "http://127.0.0.1:8000",
                         NULL};
    r = cli_run(plo);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "not a power-limit optimizer (plo)"), "%s", r.err);
    cli_free(&r);
}

/* ------------------------------------------------ the command: wattsim serve */

static void tmp_dir_only(void) { tmpdir_make("/tmp/wsserve.XXXXXX"); }

TestSuite(serve_cli, .init = tmp_dir_only, .fini = tmpdir_remove, .timeout = 60);

Test(serve_cli, usage)
{
    const char *help[] = {"wattsim", "serve", "--help", NULL};
    cli_result r = cli_run(help);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "usage: wattsim serve --db FILE"), "%s", r.out);
    cli_free(&r);
    static const char *const bad[][8] = {
        {"wattsim", "serve", NULL},
        {"wattsim", "serve", "--db", "x.db", "--listen", "localhost:80", NULL},
        {"wattsim", "serve", "--db", "x.db", "--listen", "127.0.0.1:99999", NULL},
        {"wattsim", "serve", "--db", "x.db", "--bso", "./x.so", NULL},
        {"wattsim", "serve", "--db", "x.db", "--sync", "off", NULL},
        {"wattsim", "serve", "--db", "x.db", "--threads", "0", NULL},
        {"wattsim", "serve", "--db", "x.db", "--cache-jobs", "0", NULL},
        {"wattsim", "serve", "--db", "x.db", "--bogus", NULL},
        {"wattsim", "serve", "--db", NULL},
    };
    static const char *const says[] = {"--db FILE is required", "--listen must be HOST:PORT with a numeric address",
                                       "--listen must be", "--bso: bso './x.so' is a plugin file",
                                       "--sync must be normal or full", "--threads must be",
                                       "--cache-jobs must be an integer in 1..100000",
                                       "unknown option '--bogus'", "option '--db' needs a value"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = cli_run(bad[i]);
        cr_expect_eq(r.status, 2, "case %zu", i);
        cr_expect(strstr(r.err, says[i]) && strstr(r.err, "(see 'wattsim serve --help')"), "case %zu: %s", i, r.err);
        cli_free(&r);
    }
}

/* The binary: the access log, a refused second server, SIGTERM drains and
 * closes the database (the WAL is checkpointed away on the last close). */
Test(serve_cli, sigterm_closes_the_database)
{
    char db[600], log[600];
    snprintf(db, sizeof db, "%s", tp("s.db"));
    snprintf(log, sizeof log, "%s", tp("s.log"));
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        execl(WS_CLI, "wattsim", "serve", "--db", db, "--listen", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    int p = 0;
    char text[4096] = "";
    for (int i = 0; i < 500 && !p; i++) {
        usleep(10000);
        FILE *f = fopen(log, "r");
        if (!f) continue;
        const size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        const char *at = strstr(text, "listening on 127.0.0.1:");
        if (at) p = atoi(at + strlen("listening on 127.0.0.1:"));
    }
    cr_assert_gt(p, 0, "%s", text);
    char *r;
    cr_assert_eq(http_to(p, "POST", "/jobs", JOB(""), &r), 201, "%s", r);
    free(r);
    cr_assert_eq(http_to(p, "GET", "/jobs/batch_size?job_id=t-1&x=%1b[2J", NULL, &r), 200, "%s", r);
    free(r);
    const char *second[] = {"wattsim", "serve", "--db", db, "--listen", "127.0.0.1:0", NULL};
    cli_result two = cli_run(second);
    cr_assert_eq(two.status, 2);
    cr_assert(strstr(two.err, "another wattsim serve uses this database"), "%s", two.err);
    cli_free(&two);
    cr_assert_eq(kill(pid, SIGTERM), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    char wal[700];
    snprintf(wal, sizeof wal, "%s-wal", db);
    cr_assert_neq(access(wal, F_OK), 0, "the WAL is still there: the database was not closed");
    FILE *f = fopen(log, "r");
    const size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    cr_assert(strstr(text, "127.0.0.1 \"POST /jobs\" 201 "), "%s", text);
    cr_assert(strstr(text, "127.0.0.1 \"GET /jobs/batch_size\" 200 "), "%s", text);
    cr_assert(strstr(text, "SIGTERM: draining and closing the database"), "%s", text);
}

/* ------------------------------------------------- 64 jobs from 8 threads */

enum { CJ_THREADS = 8, CJ_JOBS = 8, CJ_RUNS = 12 };

static void *concurrent_jobs(void *arg)
{
    const int t = (int)(intptr_t)arg;
    char body[512], target[96], *r;
    long fails = 0;
    for (int j = 0; j < CJ_JOBS; j++) {
        snprintf(body, sizeof body, "{\"job_id\":\"c-%d-%d\",\"job_id_prefix\":\"c\",\"batch_sizes\":[16,32,64,128],"
                 "\"default_batch_size\":64,\"max_epochs\":10,\"mab_seed\":7,\"max_power\":300,\"number_of_gpus\":1,"
                 "\"gpu_model\":\"v100\"}", t, j);
        fails += http("POST", "/jobs", body, &r) != 201;
        free(r);
    }
    for (int run = 0; run < CJ_RUNS; run++)
        for (int j = 0; j < CJ_JOBS; j++) {
            snprintf(target, sizeof target, "/jobs/batch_size?job_id=c-%d-%d", t, j);
            if (http("GET", target, NULL, &r) != 200) {
                fails++;
                free(r);
                continue;
            }
            long long bs = 0, n = 0;
            const char *at = strstr(r, "\"batch_size\":");
            if (!at || sscanf(at, "\"batch_size\":%lld,\"trial_number\":%lld", &bs, &n) != 2) fails++;
            free(r);
            snprintf(body, sizeof body, "{\"job_id\":\"c-%d-%d\",\"batch_size\":%lld,\"trial_number\":%lld,"
                     "\"time\":%lld,\"energy\":%lld,\"metric\":%s,\"current_epoch\":10}", t, j, bs, n,
                     100 + (bs - 64) * (bs - 64) / 64 + n % 3, 20000 + 7 * bs + 13 * (n % 5), bs == 16 ? "0.1" : "0.9");
            fails += http("POST", "/report", body, &r) != 200;
            free(r);
        }
    return (void *)(intptr_t)fails;
}

/* Every job had the same spec and the same answers to its sizes: the
 * same history, whichever threads' requests came between. */
Test(serve, sixty_four_jobs_from_eight_threads)
{
    pthread_t th[CJ_THREADS];
    for (int t = 0; t < CJ_THREADS; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, concurrent_jobs, (void *)(intptr_t)t), 0);
    long fails = 0;
    for (int t = 0; t < CJ_THREADS; t++) {
        void *f;
        pthread_join(th[t], &f);
        fails += (long)(intptr_t)f;
    }
    cr_assert_eq(fails, 0);
    sqlite3 *d;
    cr_assert_eq(sqlite3_open(tp("bso.db"), &d), SQLITE_OK);
    sqlite3_stmt *s;
    cr_assert_eq(sqlite3_prepare_v2(d, "SELECT job_id, group_concat(batch_size || ':' || type || ':' || status, ' ')"
                                       " FROM (SELECT * FROM trials ORDER BY job_id, trial_number) GROUP BY job_id",
                                    -1, &s, NULL), SQLITE_OK);
    int jobs = 0;
    char first[2048] = "";
    while (sqlite3_step(s) == SQLITE_ROW) {
        const char *h = (const char *)sqlite3_column_text(s, 1);
        if (!jobs++) snprintf(first, sizeof first, "%s", h);
        cr_expect_str_eq(h, first, "%s", (const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    sqlite3_close(d);
    cr_assert_eq(jobs, CJ_THREADS * CJ_JOBS);
    /* Pruning (64, 32, 16 fails, 128; then 64, 32, 128), then the MAB. */
    cr_assert(!strncmp(first, "64:0:1 32:0:1 16:0:1 128:0:1 64:0:1 32:0:1 128:0:1 ", 49), "%s", first);
    cr_assert(strstr(first, ":2:1"), "no MAB trial: %s", first);
}

/* Zeus's service.update_trial keeps the lowest cost of any succeeded
 * report, converged or not: a cheap failure lowers the early-stopping
 * bound and moves concurrent trials to its size. */
Test(serve, min_cost_counts_unconverged_reports)
{
    cr_assert_eq(st("POST", "/jobs", JOB("")), 201);
    predict(128, 1);
    report_eq(128, 1, 10, 1000, 0.6, 3, "{\"stop_train\":true,\"converged\":true,\"message\":\"Train succeeded\"}");
    predict(64, 2);
    /* cost 0.5 x 400 + 150 x 2 = 500, at max_epochs, not converged. */
    report_eq(64, 2, 2, 400, 0.4, 100, "{\"stop_train\":true,\"converged\":false,\"message\":\"Train failed to converge within max_epoch(100)\"}");
    predict(256, 3);
    predict(64, 4);     /* concurrent: at the cheapest size, 64 (cost 500), not 128 (2000) */
    /* cost 1500 > 2 x 500 */
    char *r = report(256, 3, 5, 1500, 0.9, 3);
    cr_assert(strstr(r, "\"stop_train\":true,\"converged\":false,\"message\":\"Batch Size(256) exceeded the cost upper"
                        " bound: current cost(1500.0) >"), "%s", r);
    cr_assert(strstr(r, "beta_knob(2.0)*min_cost(500.0)"), "%s", r);
    free(r);
}

/* A config may name a server (no code runs here): `run` over three seeds
 * gives the built-in zeus policy's table. */
Test(serve_client, run_config_names_a_server)
{
    char cfg[256], out_h[600], out_z[600];
    snprintf(cfg, sizeof cfg, "gpu: v100\nworkload: librispeech\nseed: 1..3\nrecurrences: 30\nbso: http://127.0.0.1:%d\n"
             "plo: jit\n", port);
    write_file("h.yaml", cfg);
    write_file("z.yaml", "gpu: v100\nworkload: librispeech\nseed: 1..3\nrecurrences: 30\nbso: zeus\nplo: jit\n");
    snprintf(out_h, sizeof out_h, "%s", tp("h"));
    snprintf(out_z, sizeof out_z, "%s", tp("z"));
    char yh[600], yz[600];
    snprintf(yh, sizeof yh, "%s", tp("h.yaml"));
    snprintf(yz, sizeof yz, "%s", tp("z.yaml"));
    const char *h[] = {"wattsim", "run", yh, "--out", out_h, NULL};
    const char *z[] = {"wattsim", "run", yz, "--out", out_z, NULL};
    cli_result rh = cli_run(h), rz = cli_run(z);
    cr_assert_eq(rh.status, 0, "%s", rh.err);
    cr_assert_eq(rz.status, 0, "%s", rz.err);
    /* The table's row (gpu, workload, ..., cost, runs, final sizes). */
    const char *row_h = strstr(rh.out, "\nv100 "), *row_z = strstr(rz.out, "\nv100 ");
    cr_assert(row_h && row_z, "%s\n%s", rh.out, rz.out);
    cr_assert_eq(strcspn(row_h + 1, "\n"), strcspn(row_z + 1, "\n"));
    cr_assert(!strncmp(row_h, row_z, strcspn(row_z + 1, "\n") + 1), "%s\n%s", rh.out, rz.out);
    cli_free(&rh);
    cli_free(&rz);
}

/* ---------------------------------------- the client from the C API (api.h) */

#include "wattsim/api.h"

static int count_runs(const char *json)
{
    int n = 0;
    for (const char *p = json; (p = strstr(p, "\"recurrence\": ")); p++) n++;
    return n;
}

/* The runs of a simulate call's JSON result (from its "history"). */
static char *api_history(const char *bso)
{
    ws_api_call *c = ws_api_call_new("simulate");
    cr_assert(c);
    cr_assert_eq(ws_api_set(c, "traces", WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"), WS_API_OK);
    cr_assert_eq(ws_api_set(c, "catalogue", WS_SOURCE_DIR "/configs/workloads.yaml"), WS_API_OK);
    static const char *const kv[] = {"gpu", "v100", "workload", "librispeech", "seed", "1", "recurrences", "40",
                                     NULL};
    for (const char *const *p = kv; *p; p += 2) cr_assert_eq(ws_api_set(c, p[0], p[1]), WS_API_OK, "%s", p[0]);
    cr_assert_eq(ws_api_set(c, "bso", bso), WS_API_OK, "%s", ws_api_error(c));
    char *json = NULL;
    cr_assert_eq(ws_api_run(c, NULL, &json), WS_API_OK, "%s: %s", bso, ws_api_error(c));
    const char *h = strstr(json, "\"history\"");
    cr_assert_not_null(h, "%s", json);
    char *out = strdup(h);
    ws_api_free(json);
    ws_api_call_free(c);
    return out;
}

/* bso "http://..." through the library (what the Python package calls), with
 * no command line to install the client: equals bso "zeus" run for run. */
Test(serve_client, api_simulate_http_equals_zeus)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    char *want = api_history("zeus"), *got = api_history(url);
    cr_assert_gt(count_runs(want), 40);
    cr_assert_str_eq(got, want);
    free(want);
    free(got);
}

/* ------------------------------------- concurrency, group commit, memory
 *
 * Requests through ws_serve_handle (no sockets, so as many at once as
 * there are threads): one job's requests serialised, different jobs'
 * concurrent, their writes committed in groups; a failed group commit
 * fails every request in it and leaves memory equal to the database; the
 * job cache (and the policy instances it carries) bounded.
 */

static int hreq(ws_store *s, const char *method, const char *path, const char *job_id, const char *body, char **out)
{
    return ws_serve_handle(s, method, path, job_id, body, body ? strlen(body) : 0, out);
}

/* One job's life (register, RUNS predict + report runs), each request
 * sent again while it fails with a 500 (counted in *retries). */
static void direct_job(ws_store *s, const char *id, int seed, int runs, long *retries)
{
    char body[512], *r;
    int st;
    snprintf(body, sizeof body, "{\"job_id\":\"%s\",\"job_id_prefix\":\"%c\",\"batch_sizes\":[16,32,64,128,256],"
             "\"default_batch_size\":64,\"eta_knob\":0.5,\"beta_knob\":2.0,\"max_epochs\":5,\"mab_seed\":%d,"
             "\"max_power\":250,\"number_of_gpus\":1,\"gpu_model\":\"a40\"}", id, id[0], seed);
    while ((st = hreq(s, "POST", "/jobs", NULL, body, &r)) == 500) free(r), (*retries)++;
    cr_assert(st == 201 || st == 200, "%s: %d %s", id, st, r);
    free(r);
    for (int run = 0; run < runs; run++) {
        while ((st = hreq(s, "GET", "/jobs/batch_size", id, NULL, &r)) == 500) free(r), (*retries)++;
        cr_assert_eq(st, 200, "%s: %s", id, r);
        long long bs = 0, n = 0;
        cr_assert_eq(sscanf(strstr(r, "\"batch_size\":"), "\"batch_size\":%lld,\"trial_number\":%lld", &bs, &n), 2);
        free(r);
        const double d = bs > 64 ? (double)bs / 64 : 64.0 / (double)bs;
        for (int epoch = 1; epoch <= 5; epoch++) {
            snprintf(body, sizeof body, "{\"job_id\":\"%s\",\"batch_size\":%lld,\"trial_number\":%lld,\"time\":%.17g,"
                     "\"energy\":%.17g,\"metric\":%.17g,\"current_epoch\":%d}", id, bs, n,
                     epoch * (10 + 3 * d + (double)(n % 3)), epoch * (1500 + 400 * d + (double)(n % 7) * 10),
                     bs == 16 ? 0.1 : 0.2 * epoch - 0.01 * d, epoch);
            while ((st = hreq(s, "POST", "/report", NULL, body, &r)) == 500) free(r), (*retries)++;
            cr_assert_eq(st, 200, "%s: %s", id, r);
            const int stop = strstr(r, "\"stop_train\":true") != NULL;
            free(r);
            if (stop) break;
        }
    }
}

typedef struct djob {
    ws_store *s;
    int first, n, runs;
    long retries;
} djob;

/* Jobs z-FIRST.. (Zeus's decisions) and g-FIRST.. (gts), seeds by index. */
static void *direct_jobs(void *arg)
{
    djob *d = arg;
    char id[32];
    for (int k = d->first; k < d->first + d->n; k++) {
        snprintf(id, sizeof id, "%c-%d", k % 2 ? 'g' : 'z', k);
        direct_job(d->s, id, 20 + k, d->runs, &d->retries);
    }
    return NULL;
}

/* The same jobs, in THREADS threads (each its own jobs), the store's
 * cache keeping at most cache_max jobs (0: the default); `fail` group
 * COMMITs fail, one in 7 (ws_store_fail_commits); returns the database's
 * rows. */
static char *direct_run(const char *name, int threads, int jobs_per_thread, int runs, size_t cache_max, int fail,
                        long *retries)
{
    char err[512];
    ws_store *s = ws_store_open(tp(name), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    if (cache_max) ws_store_set_cache_max(s, cache_max);
    pthread_t th[16];
    djob d[16];
    ws_store_fail_commits(s, fail, 7);
    for (int t = 0; t < threads; t++) {
        d[t] = (djob){s, t * jobs_per_thread, jobs_per_thread, runs, 0};
        cr_assert_eq(pthread_create(&th[t], NULL, direct_jobs, &d[t]), 0);
    }
    *retries = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        *retries += d[t].retries;
    }
    ws_store_fail_commits(s, 0, 1);
    ws_store_close(s);
    return dump_db(tp(name));
}

static void policy_g_gts(void)
{
    tmpdir_make("/tmp/wsserve.XXXXXX");
    char err[512];
    cr_assert_eq(ws_serve_policy_add("g=gts", err, sizeof err), 0, "%s", err);
}

static void policy_reset_rm(void)
{
    ws_serve_policy_reset();
    tmpdir_remove();
}

TestSuite(serve_concurrent, .init = policy_g_gts, .fini = policy_reset_rm, .timeout = 120);

/* 8 threads on 16 jobs (Zeus's and gts's) at once: every row equals one
 * thread's run of the same jobs. */
Test(serve_concurrent, different_jobs_at_once_equal_one_thread)
{
    long retries;
    char *want = direct_run("one.db", 1, 16, 12, 0, 0, &retries);
    cr_assert(strstr(want, "\nz-0|1|"), "Zeus's job reached its MAB stage:\n%s", want);
    cr_assert(strstr(want, "\ng-1|2|1|"), "gts's calls were logged:\n%s", want);
    char err[512];
    ws_store *s = ws_store_open(tp("eight.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    pthread_t th[8];
    djob d[8];
    for (int t = 0; t < 8; t++) {
        d[t] = (djob){s, 2 * t, 2, 12, 0};
        cr_assert_eq(pthread_create(&th[t], NULL, direct_jobs, &d[t]), 0);
    }
    for (int t = 0; t < 8; t++) pthread_join(th[t], NULL);
    uint64_t commits = 0, writes = 0;
    uint64_t ckpts;
    ws_store_commit_counts(s, &commits, &writes, &ckpts);
    ws_store_close(s);
    cr_log_info("%llu writes in %llu commits", (unsigned long long)writes, (unsigned long long)commits);
    cr_assert_gt(writes, 16 * 12 * 2);
    cr_assert_leq(commits, writes);
    char *got = dump_db(tp("eight.db"));
    cr_assert_str_eq(got, want);
    free(want);
    free(got);
}

/* Many threads predicting for ONE job at once are served one at a time:
 * trial numbers 1..N, each once, with the batch sizes Zeus's server gives
 * N predicts in a row (the default first, then concurrent trials). */
typedef struct one_job {
    ws_store *s;
    int n;
    long long got[64][2];
} one_job;

static void *predict_one_job(void *arg)
{
    one_job *o = arg;
    for (int k = 0; k < o->n; k++) {
        char *r;
        const int st = hreq(o->s, "GET", "/jobs/batch_size", "z-0", NULL, &r);
        if (st != 200 || sscanf(strstr(r, "\"batch_size\":"), "\"batch_size\":%lld,\"trial_number\":%lld",
                                &o->got[k][0], &o->got[k][1]) != 2)
            o->got[k][1] = -1;
        free(r);
    }
    return NULL;
}

Test(serve_concurrent, one_job_serialised)
{
    char err[512], *r;
    const char *spec = "{\"job_id\":\"z-0\",\"job_id_prefix\":\"z\",\"batch_sizes\":[16,32,64,128,256],"
                       "\"default_batch_size\":64,\"max_epochs\":5,\"mab_seed\":3,\"max_power\":250,"
                       "\"number_of_gpus\":1,\"gpu_model\":\"a40\"}";
    /* The reference: 48 predicts in a row. */
    ws_store *s = ws_store_open(tp("seq.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(hreq(s, "POST", "/jobs", NULL, spec, &r), 201, "%s", r);
    free(r);
    long long want[49];
    for (int n = 1; n <= 48; n++) {
        cr_assert_eq(hreq(s, "GET", "/jobs/batch_size", "z-0", NULL, &r), 200, "%s", r);
        long long tn = 0;
        cr_assert_eq(sscanf(strstr(r, "\"batch_size\":"), "\"batch_size\":%lld,\"trial_number\":%lld", &want[n], &tn),
                     2);
        cr_assert_eq(tn, n);
        free(r);
    }
    ws_store_close(s);
    /* 8 threads x 6 predicts at once, with 8 other threads on other jobs. */
    s = ws_store_open(tp("par.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(hreq(s, "POST", "/jobs", NULL, spec, &r), 201, "%s", r);
    free(r);
    pthread_t th[8], other[8];
    one_job o[8];
    djob d[8];
    for (int t = 0; t < 8; t++) {
        o[t].s = s;
        o[t].n = 6;
        d[t] = (djob){s, 2 + 2 * t, 2, 4, 0};
        cr_assert_eq(pthread_create(&th[t], NULL, predict_one_job, &o[t]), 0);
        cr_assert_eq(pthread_create(&other[t], NULL, direct_jobs, &d[t]), 0);
    }
    int seen[49] = {0};
    for (int t = 0; t < 8; t++) {
        pthread_join(th[t], NULL);
        pthread_join(other[t], NULL);
        for (int k = 0; k < 6; k++) {
            const long long n = o[t].got[k][1];
            cr_assert(n >= 1 && n <= 48, "thread %d predict %d: trial %lld", t, k, n);
            cr_assert_eq(seen[n]++, 0, "trial %lld answered twice", n);
            cr_assert_eq(o[t].got[k][0], want[n], "trial %lld: %lld, not %lld", n, o[t].got[k][0], want[n]);
        }
    }
    ws_store_close(s);
}

/* A group's leader commits once every request holding a job's lock has
 * joined (or after 1 ms): while this thread holds one, 8 requests of
 * other jobs made at once share COMMITs, and each replies after its own
 * group committed (its trial is in the database). */
static void *one_predict(void *arg)
{
    one_job *o = arg;
    char id[16], *r;
    snprintf(id, sizeof id, "z-%d", o->n);
    o->got[0][0] = hreq(o->s, "GET", "/jobs/batch_size", id, NULL, &r);
    free(r);
    return NULL;
}

Test(serve_concurrent, requests_share_a_commit)
{
    char err[512], body[256], *r;
    ws_store *s = ws_store_open(tp("g.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    for (int k = 0; k < 8; k++) {
        snprintf(body, sizeof body, "{\"job_id\":\"z-%d\",\"job_id_prefix\":\"z\",\"batch_sizes\":[32,64],"
                 "\"default_batch_size\":64,\"max_power\":250,\"number_of_gpus\":1,\"gpu_model\":\"a40\"}", k);
        cr_assert_eq(hreq(s, "POST", "/jobs", NULL, body, &r), 201);
        free(r);
    }
    uint64_t c0, w0, c1, w1;
    uint64_t k0, k1;
    ws_store_commit_counts(s, &c0, &w0, &k0);
    cr_assert_eq(c0, 8);
    cr_assert_eq(w0, 8);
    ws_store_job_lock(s, "held");
    pthread_t th[8];
    one_job o[8];
    for (int k = 0; k < 8; k++) {
        o[k].s = s;
        o[k].n = k;
        cr_assert_eq(pthread_create(&th[k], NULL, one_predict, &o[k]), 0);
    }
    for (int k = 0; k < 8; k++) {
        pthread_join(th[k], NULL);
        cr_assert_eq(o[k].got[0][0], 200);
    }
    ws_store_job_unlock(s, "held");
    ws_store_commit_counts(s, &c1, &w1, &k1);
    ws_store_close(s);
    cr_log_info("8 requests in %llu commits", (unsigned long long)(c1 - c0));
    cr_assert_eq(w1 - w0, 8);
    cr_assert_lt(c1 - c0, 8, "no group held two requests' writes");
    char *rows = dump_db(tp("g.db"));
    for (int k = 0; k < 8; k++) {
        char row[32];
        snprintf(row, sizeof row, "\nz-%d|1|64|", k);
        cr_assert(strstr(rows, row), "%s", rows);
    }
    free(rows);
}

/* A group COMMIT that fails: its requests are 500s with the message, and
 * memory stays equal to the database (the jobs and gts's instances are
 * read again): clients that send them again end with exactly the rows of
 * a run without failures, also with 8 threads (groups of several). */
Test(serve_concurrent, failed_group_commit_fails_its_requests)
{
    char err[512], *r;
    ws_store *s = ws_store_open(tp("f.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(hreq(s, "POST", "/jobs", NULL, "{\"job_id\":\"z-1\",\"job_id_prefix\":\"z\",\"batch_sizes\":[32,64],"
                 "\"default_batch_size\":64,\"max_power\":250,\"number_of_gpus\":1,\"gpu_model\":\"a40\"}", &r), 201);
    free(r);
    ws_store_fail_commits(s, 1, 1);
    cr_assert_eq(hreq(s, "GET", "/jobs/batch_size", "z-1", NULL, &r), 500);
    cr_assert(strstr(r, "{\"message\":\"database: COMMIT failed: "), "%s", r);
    free(r);
    cr_assert_eq(hreq(s, "GET", "/jobs/batch_size", "z-1", NULL, &r), 200);
    cr_assert_str_eq(r, "{\"job_id\":\"z-1\",\"batch_size\":64,\"trial_number\":1}");
    free(r);
    ws_store_close(s);

    long retries;
    char *want = direct_run("ref.db", 1, 8, 10, 0, 0, &retries);
    cr_assert_eq(retries, 0);
    char *got = direct_run("one.db", 1, 8, 10, 0, 12, &retries);
    cr_assert_eq(retries, 12, "%ld requests failed", retries);
    cr_assert_str_eq(got, want);
    free(got);
    got = direct_run("eight.db", 8, 1, 10, 0, 12, &retries);
    cr_assert_geq(retries, 12, "only %ld requests failed", retries);
    cr_log_info("%ld requests failed and were sent again", retries);
    cr_assert_str_eq(got, want);
    free(got);
    free(want);
}

/* Memory bounded: more jobs than the cache keeps (here 3, and 1), Zeus's
 * and gts's interleaved: the same rows as with the default cache (jobs
 * and gts instances evicted are read and replayed again), and no more
 * policy instances in memory than the cache holds. */
typedef struct rr {
    ws_store *s;
    long max_live;
} rr;

static char *round_robin(const char *name, size_t cache_max, long *max_live)
{
    char err[512], id[32], body[512], *r;
    ws_store *s = ws_store_open(tp(name), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    if (cache_max) ws_store_set_cache_max(s, cache_max);
    enum { JOBS = 10, RUNS = 8 };
    long long bs[JOBS], n[JOBS];
    *max_live = 0;
    for (int k = 0; k < JOBS; k++) {
        snprintf(body, sizeof body, "{\"job_id\":\"%c-%d\",\"job_id_prefix\":\"%c\",\"batch_sizes\":[16,32,64,128],"
                 "\"default_batch_size\":64,\"max_epochs\":5,\"mab_seed\":%d,\"max_power\":250,\"number_of_gpus\":1,"
                 "\"gpu_model\":\"a40\"}", k % 2 ? 'g' : 'z', k, k % 2 ? 'g' : 'z', k);
        cr_assert_eq(hreq(s, "POST", "/jobs", NULL, body, &r), 201, "%s", r);
        free(r);
    }
    for (int run = 0; run < RUNS; run++) {
        for (int k = 0; k < JOBS; k++) {   /* every job's predict, then every job's report */
            snprintf(id, sizeof id, "%c-%d", k % 2 ? 'g' : 'z', k);
            cr_assert_eq(hreq(s, "GET", "/jobs/batch_size", id, NULL, &r), 200, "%s", r);
            cr_assert_eq(sscanf(strstr(r, "\"batch_size\":"), "\"batch_size\":%lld,\"trial_number\":%lld", &bs[k],
                                &n[k]), 2);
            free(r);
            if (ws_svp_instances() > *max_live) *max_live = ws_svp_instances();
        }
        for (int k = 0; k < JOBS; k++) {
            snprintf(body, sizeof body, "{\"job_id\":\"%c-%d\",\"batch_size\":%lld,\"trial_number\":%lld,\"time\":%lld,"
                     "\"energy\":%lld,\"metric\":%s,\"current_epoch\":5}", k % 2 ? 'g' : 'z', k, bs[k], n[k],
                     100 + (bs[k] - 64) * (bs[k] - 64) / 64 + n[k] % 3, 20000 + 7 * bs[k] + 13 * (n[k] % 5),
                     bs[k] == 16 ? "0.1" : "0.9");
            cr_assert_eq(hreq(s, "POST", "/report", NULL, body, &r), 200, "%s", r);
            free(r);
            if (ws_svp_instances() > *max_live) *max_live = ws_svp_instances();
        }
    }
    ws_store_close(s);
    cr_assert_eq(ws_svp_instances(), 0, "instances left after the store closed");
    return dump_db(tp(name));
}

Test(serve_concurrent, cache_cap_bounds_jobs_and_policy_instances)
{
    long live_all, live3, live1;
    char *want = round_robin("all.db", 0, &live_all);
    cr_assert_eq(live_all, 5, "the 5 gts jobs' instances");
    char *got = round_robin("three.db", 3, &live3);
    cr_assert_str_eq(got, want);
    cr_assert_leq(live3, 3);
    free(got);
    got = round_robin("one.db", 1, &live1);
    cr_assert_str_eq(got, want);
    cr_assert_leq(live1, 1);
    free(got);
    free(want);
}

/* The WAL is checkpointed by the store's own thread (the connection's
 * automatic checkpoint, run inside a COMMIT, is off): after writes of
 * several times WS_STORE_CHECKPOINT_PAGES (1,000) pages, it ran and the
 * WAL file stayed far smaller than what was written. */
Test(serve_concurrent, checkpoints_run_in_their_thread)
{
    char err[512], *r;
    ws_store *s = ws_store_open(tp("c.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    long retries = 0;
    djob d = {s, 0, 16, 60, 0};
    direct_jobs(&d);
    cr_assert_eq(d.retries, 0);
    (void)r;
    uint64_t commits, writes, ckpts;
    ws_store_commit_counts(s, &commits, &writes, &ckpts);
    struct stat wal;
    char path[600];
    snprintf(path, sizeof path, "%s-wal", tp("c.db"));
    cr_assert_eq(stat(path, &wal), 0);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(tp("c.db"), &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    const long page = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    ws_store_close(s);
    (void)retries;
    cr_log_info("%llu commits, %llu checkpoints, WAL %lld bytes (%lld pages)", (unsigned long long)commits,
                (unsigned long long)ckpts, (long long)wal.st_size, (long long)(wal.st_size / page));
    cr_assert_geq(ckpts, 1);
    cr_assert_lt(wal.st_size / page, 4 * 1000 + 200, "the WAL grew to %lld pages", (long long)(wal.st_size / page));
}

/* Zeus's job_id null: the server makes one (prefix-8 hex), under that
 * id's lock; a prefix too long for it (over 390 bytes: the id has at
 * most 400) is a 422 that says so. */
Test(serve_concurrent, made_up_job_ids)
{
    char err[512], body[1024], *r;
    ws_store *s = ws_store_open(tp("m.db"), 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    char prefix[400];
    memset(prefix, 'p', 391);
    prefix[391] = 0;
    for (int k = 0; k < 3; k++) {
        if (k == 2) prefix[390] = 0;   /* 390 bytes: the longest that fits */
        snprintf(body, sizeof body, "{\"job_id_prefix\":\"%s\",\"batch_sizes\":[32,64],\"default_batch_size\":64,"
                 "\"max_power\":250,\"number_of_gpus\":1,\"gpu_model\":\"a40\"}", k ? prefix : "mk");
        const int st = hreq(s, "POST", "/jobs", NULL, body, &r);
        if (k == 1) {
            cr_assert_eq(st, 422, "%s", r);
            cr_assert(strstr(r, "\"loc\":[\"body\",\"job_id_prefix\"],\"msg\":\"longer than 390 bytes\""), "%s", r);
        } else {
            cr_assert_eq(st, 201, "%s", r);
            cr_assert(strstr(r, k ? "\"job_id\":\"ppp" : "\"job_id\":\"mk-"), "%s", r);
            const char *id = strstr(r, "\"job_id\":\"") + 10;
            cr_assert_eq(strchr(id, '"') - id, k ? 390 + 9 : 2 + 9, "%s", r);   /* prefix-8 hex */
        }
        free(r);
    }
    ws_store_close(s);
}

/* --cache-jobs N reaches the store: with 1, three jobs leave at most one
 * in memory, and their decisions are those of the default cache (the
 * first predict of each: Zeus's default batch size, trial 1). */
Test(serve_cli, cache_jobs_bounds_the_jobs_in_memory)
{
    char err[512];
    ws_serve_config cfg = {.host = "127.0.0.1", .port = 0, .db = tp("c.db"), .threads = 2, .cache_jobs = 1};
    ws_server *s = ws_server_start(&cfg, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    const int p = ws_server_port(s);
    char *r, body[512], target[96];
    for (int k = 1; k <= 3; k++) {
        snprintf(body, sizeof body, "{\"job_id\":\"t-%d\",\"job_id_prefix\":\"t\",\"batch_sizes\":[64,32,256,128],"
                 "\"default_batch_size\":128,\"max_power\":300,\"number_of_gpus\":1,\"gpu_model\":\"v100\"}", k);
        cr_assert_eq(http_to(p, "POST", "/jobs", body, &r), 201, "%s", r);
        free(r);
        snprintf(target, sizeof target, "/jobs/batch_size?job_id=t-%d", k);
        cr_assert_eq(http_to(p, "GET", target, NULL, &r), 200, "%s", r);
        snprintf(body, sizeof body, "{\"job_id\":\"t-%d\",\"batch_size\":128,\"trial_number\":1}", k);
        cr_assert_str_eq(r, body);
        free(r);
    }
    cr_assert_eq(http_to(p, "GET", "/metrics", NULL, &r), 200);
    cr_assert(strstr(r, "wattsim_serve_cached_jobs 1\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_cache_jobs_max 1\n"), "%s", r);
    cr_assert(strstr(r, "wattsim_serve_jobs 3\n"), "%s", r);
    free(r);
    ws_server_stop(s, 2);
}
