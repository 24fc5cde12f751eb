/*
 * libFuzzer harness for wattsim serve's request handlers (serve_api.c:
 * routing, JSON, validation, and the decisions behind them), without
 * sockets. An input is up to 8 requests separated by 0xff bytes; the first
 * byte of each picks the method and path (and whether the rest is the
 * query's job_id or the body). The store is one database file for the
 * process, with a valid job "t-1" registered at start, so that inputs
 * reach predict, report and end on a job with history.
 *
 * Every answer must be a status Zeus's server gives (200 201 400 404 405
 * 409 413 422, or 500 for its explorer's "No converged batch sizes") with
 * a JSON body that could be made (not the "out of memory" stand-in); a
 * malformed request is never a 5xx and never a crash.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

static ws_store *store;

static const struct {
    const char *method, *path;
    int query;
} ROUTES[] = {
    {"POST", "/jobs", 0},        {"GET", "/jobs/batch_size", 1}, {"POST", "/report", 0},
    {"PATCH", "/trials", 0},     {"DELETE", "/jobs", 1},         {"GET", "/healthz", 0},
    {"PUT", "/jobs", 0},         {"GET", "/nowhere", 0},
};
#define N_ROUTES (sizeof ROUTES / sizeof ROUTES[0])

static void setup(void)
{
    char path[] = "/tmp/fuzz_serve.XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) abort();
    close(fd);
    unlink(path);   /* a new, empty file: SQLite makes it */
    char err[512];
    store = ws_store_open(path, 0, err, sizeof err);
    if (!store) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    char *out;
    const char *job = "{\"job_id\":\"t-1\",\"job_id_prefix\":\"t\",\"batch_sizes\":[8,16,32],"
                      "\"default_batch_size\":16,\"max_epochs\":3,\"mab_seed\":1,\"max_power\":300,"
                      "\"number_of_gpus\":1,\"gpu_model\":\"g\"}";
    if (ws_serve_handle(store, "POST", "/jobs", NULL, job, strlen(job), &out) != 201) abort();
    free(out);
}

static void one(const uint8_t *d, size_t n)
{
    if (n == 0) return;
    const unsigned r = d[0] % N_ROUTES;
    char *rest = malloc(n);
    if (!rest) abort();
    memcpy(rest, d + 1, n - 1);
    rest[n - 1] = 0;
    char *out = NULL;
    int st;
    if (ROUTES[r].query) {
        /* A query value is a C string; absent when the input has none. */
        st = ws_serve_handle(store, ROUTES[r].method, ROUTES[r].path, n > 1 ? rest : NULL, NULL, 0, &out);
    } else {
        st = ws_serve_handle(store, ROUTES[r].method, ROUTES[r].path, NULL, rest, n - 1, &out);
    }
    if (!out) abort();
    static const int ok[] = {200, 201, 400, 404, 405, 409, 413, 422};
    int good = 0;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) good |= st == ok[i];
    if (st == 500 && strstr(out, "No converged batch sizes")) good = 1;
    if (!good) {
        fprintf(stderr, "status %d: %s\n", st, out);
        abort();
    }
    /* An answer that could not be made (json_pack refuses text that is
     * not UTF-8) reads "out of memory": never for any input. */
    if (!strcmp(out, "{\"message\":\"out of memory\"}")) {
        fprintf(stderr, "an answer that could not be made: status %d\n", st);
        abort();
    }
    json_error_t je;
    json_t *j = json_loads(out, JSON_DECODE_ANY, &je);
    if (!j) {
        fprintf(stderr, "not JSON: %s\n", out);
        abort();
    }
    json_decref(j);
    free(out);
    free(rest);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!store) setup();
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i <= size && k < 8; i++)
        if (i == size || data[i] == 0xff) {
            one(data + start, i - start);
            start = i + 1;
            k++;
        }
    return 0;
}
