/*
 * The requests of Zeus's batch-size optimizer API, without sockets:
 * routing, JSON (jansson), the validation of Zeus's pydantic models
 * (zeus/optimizer/batch_size/common.py) and the status codes of its
 * router and exceptions.
 *
 *   POST   /jobs                 JobSpecFromClient -> the spec; 201 new,
 *                                200 the same spec again, 409 another one
 *   GET    /jobs/batch_size?job_id=   -> TrialId
 *   POST   /report               TrainingResult -> ReportResponse
 *   PATCH  /trials               TrialId -> null (a dispatched trial fails)
 *   DELETE /jobs?job_id=         -> null; 404 when there is no such job
 *   GET    /healthz              -> {"status": "ok"}
 *
 * A body that is not JSON, nests deeper than WS_SERVE_MAX_DEPTH, or does
 * not validate is a 422 with FastAPI's {"detail": [...]}; Zeus's own
 * errors are {"message": ...} with their exception's status. Stricter
 * than pydantic 1 in one way: numbers must be JSON numbers (pydantic also
 * coerces "32"), an int field takes an integral number only.
 *
 * A request holds its job's lock (ws_store_job_lock) from its first read
 * of the job to its answer: one job's requests are serialised, different
 * jobs' decide at once. Its writes join the store's group commit, and its
 * answer is made only after the COMMIT holding them succeeded; when that
 * COMMIT fails the request is a 500 and its job (with its policy
 * instance) is dropped from memory, to be read again from the database.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wattsim/error.h"
#include "wattsim/sha256.h"
#include "serve_state.h"

#define MSG 512

static char *dump(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(v);
    return s ? s : strdup("{\"message\":\"out of memory\"}");
}

/* An answer's text: fmt formatted into buf (MSG bytes), then made valid
 * UTF-8, each byte of an invalid sequence (or of a character cut by the
 * buffer's end) becoming '?': json_pack refuses text that is not, and a
 * message may quote the request's bytes (jansson's parse errors do:
 * "invalid escape near '...'"). */
static void answer_text(char *buf, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void answer_text(char *buf, const char *fmt, va_list ap)
{
    vsnprintf(buf, MSG, fmt, ap);
    unsigned char *p = (unsigned char *)buf;
    while (*p) {
        const size_t n = ws_utf8_len(p);   /* 0: not a well-formed sequence */
        if (n) p += n;
        else *p++ = '?';
    }
}

static int message(char **out, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int message(char **out, int status, const char *fmt, ...)
{
    char buf[MSG];
    va_list ap;
    va_start(ap, fmt);
    answer_text(buf, fmt, ap);
    va_end(ap);
    *out = dump(json_pack("{s:s}", "message", buf));
    return status;
}

/* FastAPI's validation error. */
static int invalid(char **out, const char *where, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int invalid(char **out, const char *where, const char *field, const char *fmt, ...)
{
    char buf[MSG];
    va_list ap;
    va_start(ap, fmt);
    answer_text(buf, fmt, ap);
    va_end(ap);
    json_t *loc = field ? json_pack("[s,s]", where, field) : json_pack("[s]", where);
    *out = dump(json_pack("{s:[{s:o,s:s,s:s}]}", "detail", "loc", loc, "msg", buf, "type", "value_error"));
    return 422;
}

/* ------------------------------------------------------- validation */

typedef struct vctx {
    char field[64];
    char msg[MSG];
} vctx;

static int fail(vctx *v, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(vctx *v, const char *field, const char *fmt, ...)
{
    snprintf(v->field, sizeof v->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* Field readers: 0 ok (default used when absent), -1 invalid. */
static int get_int(vctx *v, json_t *o, const char *k, int required, int64_t def, int64_t *out)
{
    json_t *x = json_object_get(o, k);
    if (!x) {
        if (required) return fail(v, k, "field required");
        *out = def;
        return 0;
    }
    if (json_is_integer(x)) {
        *out = json_integer_value(x);
        return 0;
    }
    if (json_is_real(x)) {
        const double d = json_real_value(x);
        if (d == floor(d) && fabs(d) < 9.0e18) {
            *out = (int64_t)d;
            return 0;
        }
    }
    return fail(v, k, "value is not a valid integer");
}

static int get_num(vctx *v, json_t *o, const char *k, int required, double def, double *out)
{
    json_t *x = json_object_get(o, k);
    if (!x) {
        if (required) return fail(v, k, "field required");
        *out = def;
        return 0;
    }
    if (!json_is_number(x)) return fail(v, k, "value is not a valid float");
    *out = json_number_value(x);
    if (!isfinite(*out)) return fail(v, k, "value is not a finite float");
    return 0;
}

static int get_str(vctx *v, json_t *o, const char *k, int required, char *out, size_t n, int *present)
{
    json_t *x = json_object_get(o, k);
    if (present) *present = 0;
    if (!x || json_is_null(x)) {
        if (required) return fail(v, k, x ? "none is not an allowed value" : "field required");
        out[0] = 0;
        return 0;
    }
    if (!json_is_string(x)) return fail(v, k, "str type expected");
    const size_t len = json_string_length(x);
    if (len >= n) return fail(v, k, "longer than %zu bytes", n - 1);
    if (memchr(json_string_value(x), 0, len)) return fail(v, k, "contains a NUL character");
    memcpy(out, json_string_value(x), len + 1);
    if (present) *present = 1;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* JobSpecFromClient (JobParams, JobSpec, GpuConfig and their validators).
 * has_id: whether job_id was given (else job_id is ""). */
static int parse_spec_obj(json_t *o, ws_sv_spec *s, int *has_id, vctx *v)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o)) return fail(v, NULL, "value is not a valid dict");
    int64_t i64 = 0;
    if (get_str(v, o, "job_id", 0, s->job_id, sizeof s->job_id, has_id) != 0
        || get_str(v, o, "job_id_prefix", 1, s->prefix, sizeof s->prefix, NULL) != 0)
        return -1;
    json_t *bs = json_object_get(o, "batch_sizes");
    if (!bs) return fail(v, "batch_sizes", "field required");
    if (!json_is_array(bs)) return fail(v, "batch_sizes", "value is not a valid list");
    const size_t n = json_array_size(bs);
    if (n == 0) return fail(v, "batch_sizes", "Batch Sizes = [] is empty");
    if (n > WS_SERVE_MAX_BATCH_SIZES)
        return fail(v, "batch_sizes", "more than %d batch sizes", WS_SERVE_MAX_BATCH_SIZES);
    s->bs = malloc(n * sizeof *s->bs);
    if (!s->bs) return fail(v, "batch_sizes", "out of memory");
    s->n_bs = (int)n;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(bs, i);
        if (!json_is_integer(x)) return fail(v, "batch_sizes", "value is not a valid integer");
        s->bs[i] = json_integer_value(x);
    }
    qsort(s->bs, n, sizeof *s->bs, cmp_i64);
    if (get_int(v, o, "default_batch_size", 1, 0, &s->default_bs) != 0) return -1;
    if (s->default_bs <= 0) return fail(v, "default_batch_size", "ensure this value is greater than 0");
    if (get_num(v, o, "eta_knob", 0, 0.5, &s->eta) != 0) return -1;
    if (s->eta < 0 || s->eta > 1) return fail(v, "eta_knob", "eta_knob should be in range [0,1]");
    json_t *beta = json_object_get(o, "beta_knob");
    s->has_beta = !json_is_null(beta);
    if (s->has_beta) {
        if (get_num(v, o, "beta_knob", 0, 2.0, &s->beta) != 0) return -1;
        if (!(s->beta > 0))
            return fail(v, "beta_knob", "Invalid beta_knob(%g). To disable early stop, set beta_knob ="
                        " None to disable or positive value.", s->beta);
    }
    if (get_num(v, o, "target_metric", 0, 0.5, &s->target) != 0) return -1;
    json_t *hb = json_object_get(o, "higher_is_better_metric");
    if (!hb) s->higher = 1;
    else if (json_is_boolean(hb)) s->higher = json_is_true(hb);
    else if (json_is_integer(hb) && (json_integer_value(hb) == 0 || json_integer_value(hb) == 1))
        s->higher = (int)json_integer_value(hb);
    else return fail(v, "higher_is_better_metric", "value could not be parsed to a boolean");
    if (get_int(v, o, "max_epochs", 0, 100, &s->max_epochs) != 0) return -1;
    if (s->max_epochs <= 0) return fail(v, "max_epochs", "ensure this value is greater than 0");
    if (get_int(v, o, "num_pruning_rounds", 0, 2, &s->rounds) != 0) return -1;
    if (s->rounds < 0) return fail(v, "num_pruning_rounds", "ensure this value is greater than or equal to 0");
    if (get_int(v, o, "window_size", 0, 0, &s->window) != 0) return -1;
    if (get_num(v, o, "mab_prior_mean", 0, 0.0, &s->prior_mean) != 0
        || get_num(v, o, "mab_prior_precision", 0, 0.0, &s->prior_prec) != 0)
        return -1;
    if (get_int(v, o, "mab_num_explorations", 0, 2, &s->n_explore) != 0) return -1;
    if (s->n_explore < 0)
        return fail(v, "mab_num_explorations", "ensure this value is greater than or equal to 0");
    json_t *seed = json_object_get(o, "mab_seed");
    s->has_seed = seed && !json_is_null(seed);
    if (s->has_seed) {
        if (get_int(v, o, "mab_seed", 1, 0, &i64) != 0) return -1;
        if (i64 < 0) return fail(v, "mab_seed", "a seed must be non-negative (numpy's default_rng)");
        s->seed = i64;
    }
    if (get_num(v, o, "max_power", 1, 0, &s->max_power) != 0) return -1;
    if (!(s->max_power > 0)) return fail(v, "max_power", "ensure this value is greater than 0");
    if (get_int(v, o, "number_of_gpus", 1, 0, &s->n_gpus) != 0) return -1;
    if (s->n_gpus <= 0) return fail(v, "number_of_gpus", "ensure this value is greater than 0");
    if (get_str(v, o, "gpu_model", 1, s->gpu_model, sizeof s->gpu_model, NULL) != 0) return -1;
    if (!s->gpu_model[0]) return fail(v, "gpu_model", "Invalid gpu_model(). Shouldn't be empty.");
    int found = 0;
    for (int i = 0; i < s->n_bs; i++) found |= s->bs[i] == s->default_bs;
    if (!found) return fail(v, NULL, "Default BS(%" PRId64 ") not in batch_sizes.", s->default_bs);
    if (*has_id && strncmp(s->job_id, s->prefix, strlen(s->prefix)) != 0)
        return fail(v, NULL, "Job_id(%s) does not start with prefix(%s).", s->job_id, s->prefix);
    return 0;
}

static json_t *spec_json(const ws_sv_spec *s)
{
    json_t *bs = json_array();
    for (int i = 0; i < s->n_bs; i++) json_array_append_new(bs, json_integer(s->bs[i]));
    return json_pack("{s:s,s:s,s:o,s:I,s:f,s:o,s:f,s:b,s:I,s:I,s:I,s:f,s:f,s:I,s:o,s:f,s:I,s:s}",
                     "job_id", s->job_id, "job_id_prefix", s->prefix, "batch_sizes", bs,
                     "default_batch_size", (json_int_t)s->default_bs, "eta_knob", s->eta,
                     "beta_knob", s->has_beta ? json_real(s->beta) : json_null(),
                     "target_metric", s->target, "higher_is_better_metric", s->higher,
                     "max_epochs", (json_int_t)s->max_epochs,
                     "num_pruning_rounds", (json_int_t)s->rounds, "window_size", (json_int_t)s->window,
                     "mab_prior_mean", s->prior_mean, "mab_prior_precision", s->prior_prec,
                     "mab_num_explorations", (json_int_t)s->n_explore,
                     "mab_seed", s->has_seed ? json_integer(s->seed) : json_null(),
                     "max_power", s->max_power, "number_of_gpus", (json_int_t)s->n_gpus,
                     "gpu_model", s->gpu_model);
}

/* The stored spec read back (ws_store_load_job's parser). */
static int parse_stored_spec(const char *text, ws_sv_spec *out, char *err, size_t errsz)
{
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    vctx v;
    int has_id = 0;
    int rc = o ? parse_spec_obj(o, out, &has_id, &v) : -1;
    json_decref(o);
    if (rc != 0 || !has_id) {
        snprintf(err, errsz, "a stored job spec does not parse");
        ws_sv_spec_free(out);
        return -1;
    }
    return 0;
}

/* JSON nested at most WS_SERVE_MAX_DEPTH deep (checked before parsing). */
static int depth_ok(const char *b, size_t n)
{
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < n; i++) {
        const char c = b[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > WS_SERVE_MAX_DEPTH) return 0;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return 1;
}

static int parse_body(const char *body, size_t len, json_t **o, char **out)
{
    if (len > WS_SERVE_MAX_BODY)
        return message(out, 413, "request body larger than %d bytes", WS_SERVE_MAX_BODY);
    if (!body || len == 0) return invalid(out, "body", NULL, "field required");
    if (!depth_ok(body, len))
        return invalid(out, "body", NULL, "JSON nested deeper than %d levels", WS_SERVE_MAX_DEPTH);
    json_error_t je;
    *o = json_loadb(body, len, 0, &je);   /* a repeated key: the last wins, as in Python */
    if (!*o) return invalid(out, "body", NULL, "JSON decode error at byte %d: %s", je.position, je.text);
    if (!json_is_object(*o)) {
        json_decref(*o);
        *o = NULL;
        return invalid(out, "body", NULL, "value is not a valid dict");
    }
    return 0;
}

/* TrialId (and, with result, TrainingResult). */
static int parse_trial(json_t *o, char *job_id, int64_t *bs, int64_t *number, ws_sv_report *r, vctx *v)
{
    if (get_str(v, o, "job_id", 1, job_id, WS_SERVE_MAX_ID + 1, NULL) != 0
        || get_int(v, o, "batch_size", 1, 0, bs) != 0 || get_int(v, o, "trial_number", 1, 0, number) != 0)
        return -1;
    if (!r) return 0;
    r->bs = *bs;
    r->trial_number = *number;
    return get_num(v, o, "time", 1, 0, &r->time) != 0 || get_num(v, o, "energy", 1, 0, &r->energy) != 0
           || get_num(v, o, "metric", 1, 0, &r->metric) != 0
           || get_int(v, o, "current_epoch", 1, 0, &r->current_epoch) != 0 ? -1 : 0;
}

/* ---------------------------------------------------------- handlers */

static int db_error(char **out, const char *m)
{
    return message(out, 500, "database: %s", m);
}

/* The job, from the cache or the database (the caller holds its lock): 1
 * found, 0 not, else the status. */
static int get_job(ws_store *s, const char *job_id, ws_sv_job *j, char **out)
{
    if (ws_store_take_job(s, job_id, j)) return 1;
    char m[MSG];
    const int rc = ws_store_load_job(s, job_id, j, parse_stored_spec, m, sizeof m);
    if (rc < 0) return db_error(out, m);
    return rc;
}

/* Write the job (a new row, or what changed) and wait for the group
 * commit: 0, or the 500. */
static int write_job(ws_store *s, ws_sv_job *j, int insert, char **out)
{
    char m[MSG];
    if (ws_store_write_begin(s, m, sizeof m) != 0) return db_error(out, m);
    const int ok = (insert ? ws_store_insert_job(s, j) : ws_store_save_job(s, j)) == 0;
    if (ws_store_write_end(s, ok, m, sizeof m) != 0) return db_error(out, m);
    return 0;
}

static int h_register(ws_store *s, const char *body, size_t len, char **out)
{
    json_t *o = NULL;
    int st = parse_body(body, len, &o, out);
    if (st) return st;
    ws_sv_job j;
    memset(&j, 0, sizeof j);
    vctx v;
    int has_id = 0;
    if (parse_spec_obj(o, &j.spec, &has_id, &v) != 0) {
        json_decref(o);
        ws_sv_spec_free(&j.spec);
        return invalid(out, "body", v.field[0] ? v.field : NULL, "%s", v.msg);
    }
    json_decref(o);
    ws_sv_job old;
    int rc;
    if (!has_id) {
        /* Zeus: prefix-<8 hex of sha256(time)>, drawn until unused. */
        for (unsigned k = 0;; k++) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            char t[64];
            unsigned char h[32];
            snprintf(t, sizeof t, "%lld.%09ld.%u", (long long)ts.tv_sec, ts.tv_nsec, k);
            ws_sha256 sh;
            ws_sha256_init(&sh);
            ws_sha256_update(&sh, t, strlen(t));
            ws_sha256_final(&sh, h);
            if (strlen(j.spec.prefix) + 10 > WS_SERVE_MAX_ID) {
                ws_sv_spec_free(&j.spec);
                return invalid(out, "body", "job_id_prefix", "longer than %d bytes", WS_SERVE_MAX_ID - 10);
            }
            snprintf(j.spec.job_id, sizeof j.spec.job_id, "%.*s-%02x%02x%02x%02x", WS_SERVE_MAX_ID - 10,
                     j.spec.prefix, h[0], h[1], h[2], h[3]);
            ws_store_job_lock(s, j.spec.job_id);
            rc = get_job(s, j.spec.job_id, &old, out);
            if (rc != 1) break;
            ws_store_keep_job(s, &old);
            ws_store_job_unlock(s, j.spec.job_id);
        }
    } else {
        ws_store_job_lock(s, j.spec.job_id);
        rc = get_job(s, j.spec.job_id, &old, out);
    }
    j.spec_json = dump(spec_json(&j.spec));
    if (rc == 1) {
        const int same = !strcmp(old.spec_json, j.spec_json);
        ws_store_keep_job(s, &old);
        ws_store_job_unlock(s, j.spec.job_id);
        if (!same) {
            ws_sv_job_free(&j);
            return message(out, 409, "JobSpec doesn't match with existing jobSpec. Use a new job_id for"
                           " different configuration");
        }
        *out = j.spec_json;
        j.spec_json = NULL;
        ws_sv_job_free(&j);
        return 200;
    }
    if (rc != 0) {
        ws_store_job_unlock(s, j.spec.job_id);
        ws_sv_job_free(&j);
        return rc;
    }
    ws_sv_job_init(&j);
    st = write_job(s, &j, 1, out);
    ws_store_job_unlock(s, j.spec.job_id);
    if (st) {
        ws_sv_job_free(&j);
        return st;
    }
    *out = j.spec_json;
    j.spec_json = NULL;
    ws_sv_job_free(&j);
    return 201;
}

/* Run one decision on a stored job: take its lock, get it, decide, write,
 * wait for the commit, keep it. */
typedef int (*decide_fn)(ws_store *s, ws_sv_job *j, void *arg, char **out);

static int with_job(ws_store *s, const char *job_id, int missing_status, const char *missing, decide_fn f,
                    void *arg, char **out)
{
    ws_store_job_lock(s, job_id);
    ws_sv_job j;
    int rc = get_job(s, job_id, &j, out);
    if (rc != 1) {
        ws_store_job_unlock(s, job_id);
        return rc == 0 ? message(out, missing_status, "%s", missing) : rc;
    }
    char *answer = NULL;
    const int st = f(s, &j, arg, &answer);
    if (st >= 300) {
        ws_sv_job_free(&j);   /* and its policy instance: it may be ahead of the database */
        ws_store_job_unlock(s, job_id);
        *out = answer;
        return st;
    }
    if ((rc = write_job(s, &j, 0, out)) != 0) {
        ws_sv_job_free(&j);   /* not committed: the next request reads the database */
        ws_store_job_unlock(s, job_id);
        free(answer);
        return rc;
    }
    ws_store_keep_job(s, &j);
    ws_store_job_unlock(s, job_id);
    *out = answer;
    return st;
}

static int d_predict(ws_store *s, ws_sv_job *j, void *arg, char **out)
{
    (void)arg;
    char msg[MSG];
    int64_t bs = 0, number = 0;
    const int st = ws_svp_serves(j->spec.job_id) ? ws_svp_predict(s, j, &bs, &number, msg, sizeof msg)
                                                 : ws_sv_predict(j, &bs, &number, msg, sizeof msg);
    if (st) return message(out, st, "%s", msg);
    *out = dump(json_pack("{s:s,s:I,s:I}", "job_id", j->spec.job_id, "batch_size", (json_int_t)bs,
                          "trial_number", (json_int_t)number));
    return 200;
}

static int d_report(ws_store *s, ws_sv_job *j, void *arg, char **out)
{
    char msg[MSG];
    int stop = 0, conv = 0;
    const int st = ws_svp_serves(j->spec.job_id)
                       ? ws_svp_report(s, j, arg, &stop, &conv, msg, sizeof msg)
                       : ws_sv_report_result(j, arg, &stop, &conv, msg, sizeof msg);
    if (st) return message(out, st, "%s", msg);
    *out = dump(json_pack("{s:b,s:b,s:s}", "stop_train", stop, "converged", conv, "message", msg));
    return 200;
}

typedef struct end_arg {
    int64_t bs, number;
} end_arg;

static int d_end(ws_store *s, ws_sv_job *j, void *arg, char **out)
{
    (void)s;
    char msg[MSG];
    const end_arg *a = arg;
    const int st = ws_sv_end_trial(j, a->bs, a->number, msg, sizeof msg);
    if (st) return message(out, st, "%s", msg);
    *out = strdup("null");
    return *out ? 200 : message(out, 500, "out of memory");
}

static int query_id(const char *job_id, char **out)
{
    if (!job_id) return invalid(out, "query", "job_id", "field required");
    if (strlen(job_id) > WS_SERVE_MAX_ID)
        return invalid(out, "query", "job_id", "longer than %d bytes", WS_SERVE_MAX_ID);
    json_t *t = json_string(job_id);     /* NULL: not UTF-8 (no job has such an id) */
    if (!t) return invalid(out, "query", "job_id", "not UTF-8 text");
    json_decref(t);
    return 0;
}

static int route(ws_store *s, const char *method, const char *path, const char *job_id, const char *body,
                 size_t len, char **out)
{
    int st;
    if (!strcmp(path, "/healthz")) {
        if (strcmp(method, "GET") && strcmp(method, "HEAD")) goto not_allowed;
        *out = dump(json_pack("{s:s}", "status", "ok"));
        return 200;
    }
    if (!strcmp(path, "/jobs")) {
        if (!strcmp(method, "POST")) return h_register(s, body, len, out);
        if (strcmp(method, "DELETE")) goto not_allowed;
        if ((st = query_id(job_id, out))) return st;
        char m[MSG];
        ws_store_job_lock(s, job_id);
        ws_store_drop_job(s, job_id);   /* (with its policy instance) */
        if (ws_store_write_begin(s, m, sizeof m) != 0) {
            ws_store_job_unlock(s, job_id);
            return db_error(out, m);
        }
        const int rc = ws_store_delete_job(s, job_id);
        const int end = ws_store_write_end(s, rc == 1, m, sizeof m);
        ws_store_job_unlock(s, job_id);
        if (rc == 0) return message(out, 404, "No job was deleted.");
        if (end != 0) return db_error(out, m);
        *out = strdup("null");
        return *out ? 200 : message(out, 500, "out of memory");
    }
    if (!strcmp(path, "/jobs/batch_size")) {
        if (strcmp(method, "GET")) goto not_allowed;
        if ((st = query_id(job_id, out))) return st;
        char m[MSG];
        snprintf(m, sizeof m, "Unknown job(%s). Please register the job first", job_id);
        return with_job(s, job_id, 400, m, d_predict, NULL, out);
    }
    if (!strcmp(path, "/report") || !strcmp(path, "/trials")) {
        const int report = path[1] == 'r';
        if (strcmp(method, report ? "POST" : "PATCH")) goto not_allowed;
        json_t *o = NULL;
        if ((st = parse_body(body, len, &o, out))) return st;
        char id[WS_SERVE_MAX_ID + 1];
        ws_sv_report r;
        end_arg e = {0, 0};
        vctx v;
        memset(&r, 0, sizeof r);
        const int bad = parse_trial(o, id, &e.bs, &e.number, report ? &r : NULL, &v);
        json_decref(o);
        if (bad) return invalid(out, "body", v.field[0] ? v.field : NULL, "%s", v.msg);
        char m[MSG + 64];
        if (report) {
            snprintf(m, sizeof m, "Unknown job %s", id);
            return with_job(s, id, 400, m, d_report, &r, out);
        }
        snprintf(m, sizeof m, "Could not find the trial: job_id='%s' batch_size=%" PRId64
                 " trial_number=%" PRId64, id, e.bs, e.number);
        return with_job(s, id, 404, m, d_end, &e, out);
    }
    *out = dump(json_pack("{s:s}", "detail", "Not Found"));
    return 404;
not_allowed:
    *out = dump(json_pack("{s:s}", "detail", "Method Not Allowed"));
    return 405;
}

int ws_serve_handle(ws_store *s, const char *method, const char *path, const char *job_id, const char *body,
                    size_t len, char **out)
{
    *out = NULL;
    const int st = route(s, method, path, job_id, body, len, out);
    if (!*out) *out = strdup("{\"message\":\"out of memory\"}");
    return st;
}
