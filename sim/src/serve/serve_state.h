/*
 * One job's state as Zeus's server keeps it (its Job, Trial and
 * GaussianTsArmState tables), in memory for one request: serve_store.c
 * loads and saves it, serve_zeus.c decides on it, serve_api.c parses
 * and prints it.
 */
#ifndef WS_SERVE_STATE_H
#define WS_SERVE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "wattsim/rng.h"
#include "serve.h"

/* JobSpecFromClient, validated (batch sizes ascending). */
typedef struct ws_sv_spec {
    char job_id[WS_SERVE_MAX_ID + 1];
    char prefix[WS_SERVE_MAX_ID + 1];
    int64_t *bs;
    int n_bs;
    int64_t default_bs;
    double eta, beta;
    int has_beta;               /* beta_knob null: no early stop */
    double target;
    int higher;
    int64_t max_epochs, rounds, window;
    double prior_mean, prior_prec;
    int64_t n_explore;
    int has_seed;
    int64_t seed;
    double max_power;
    int64_t n_gpus;
    char gpu_model[WS_SERVE_MAX_ID + 1];
} ws_sv_spec;

enum { WS_TRIAL_EXPLORATION = 0, WS_TRIAL_CONCURRENT = 1, WS_TRIAL_MAB = 2 };
enum { WS_TRIAL_DISPATCHED = 0, WS_TRIAL_SUCCEEDED = 1, WS_TRIAL_FAILED = 2 };
enum { WS_STAGE_PRUNING = 0, WS_STAGE_MAB = 1 };

typedef struct ws_sv_trial {
    int64_t number, bs;
    int type, status;
    int has_result;             /* time and energy set */
    double time, energy;
    int converged;              /* -1: not set */
    int dirty;                  /* 1 updated, 2 new */
} ws_sv_trial;

typedef struct ws_sv_arm {
    int64_t bs;
    double mean, prec, reward_prec;
    int64_t n_obs;
    int dirty;                  /* 1 updated, 2 new */
} ws_sv_arm;

/* One call of a wattsim policy (serve_policy.c), as the calls table keeps
 * it: kind 0 predict (bs), 1 observe (bs, cost, reached, the run). */
typedef struct ws_sv_call {
    int kind;
    int64_t bs;
    double cost;
    int reached, started, epochs;
    double time, energy;
} ws_sv_call;

typedef struct ws_sv_job {
    ws_sv_spec spec;
    char *spec_json;            /* canonical JSON of the spec (compared on re-register) */
    int stage;
    int has_min_cost;
    double min_cost;
    int64_t min_cost_bs;
    int has_rng;                /* mab_seed set: the stream lives in the row */
    ws_rng rng;
    ws_sv_trial *trials;        /* ascending trial number */
    int n_trials, cap_trials;
    ws_sv_arm *arms;            /* insertion order (ascending batch size) */
    int n_arms;
    int dirty;                  /* the job row changed */
    /* A wattsim policy's calls of this request, written with its rows
     * (ws_store_save_job; the first one's seq is calls_seq). */
    ws_sv_call *calls;
    int n_calls, cap_calls;
    int64_t calls_seq;
    /* The job's wattsim policy instance (serve_policy.c), NULL until its
     * first use: it lives and dies with the job in memory (the job cache
     * bounds both), freed by policy_free. */
    void *policy;
    void (*policy_free)(void *policy);
} ws_sv_job;

void ws_sv_job_free(ws_sv_job *j);
void ws_sv_spec_free(ws_sv_spec *s);

/* serve_store.c. Concurrency: a request holds its job's lock (striped
 * by job id) from its first read of the job to its reply, so the requests
 * of one job are serialised and those of different jobs run at once; the
 * one connection is taken for each read (ws_store_load_job,
 * ws_store_each_call, ws_store_count_jobs take it themselves) and for a
 * request's writes (ws_store_write_begin .. _end: the insert, save and
 * delete calls between them). */
void ws_store_job_lock(ws_store *s, const char *job_id);
void ws_store_job_unlock(ws_store *s, const char *job_id);
/* Group commit. ws_store_write_begin takes the connection and opens the
 * group's transaction when none is open (and this request's savepoint);
 * 0, or -1 with the message (the connection released). ws_store_write_end
 * with ok 0 undoes this request's writes, releases the connection and
 * returns -1 with the database's message in msg; with ok 1 it joins the
 * group and returns once the COMMIT holding its writes has returned: 0,
 * or -1 with the message when that COMMIT failed (then every request of
 * the group fails, and must drop what it changed in memory). The first
 * request to join commits for all, after the requests that hold a job's
 * lock have joined (or 1 ms). */
int ws_store_write_begin(ws_store *s, char *msg, size_t msgsz);
int ws_store_write_end(ws_store *s, int ok, char *msg, size_t msgsz);
/* For the tests: of the next group COMMITs, every `every`th fails, n of
 * them (a commit hook turns them into a rollback, which SQLite reports as
 * the COMMIT's failure). */
void ws_store_fail_commits(ws_store *s, int n, int every);
/* Group COMMITs run, requests' writes they held, checkpoints run by the
 * checkpoint thread (for /metrics). */
void ws_store_commit_counts(ws_store *s, uint64_t *commits, uint64_t *writes, uint64_t *checkpoints);
/* For the tests: the most jobs the cache keeps (default
 * WS_STORE_CACHE_MAX; then it starts over). */
void ws_store_set_cache_max(ws_store *s, size_t n);
/* The jobs in the cache now (those a request holds are not), and its cap. */
void ws_store_cache_counts(ws_store *s, size_t *cached, size_t *max);
/* 1 found (loaded into *j), 0 not found, -1 database error (its message
 * in msg). The spec is parsed back with parse. */
typedef int (*ws_sv_spec_parser)(const char *json, ws_sv_spec *out, char *err, size_t errsz);
int ws_store_load_job(ws_store *s, const char *job_id, ws_sv_job *j, ws_sv_spec_parser parse, char *msg,
                      size_t msgsz);
/* Within a write: 0 or -1. */
int ws_store_insert_job(ws_store *s, const ws_sv_job *j);
/* Write what is dirty, and the pending calls. */
int ws_store_save_job(ws_store *s, const ws_sv_job *j);
/* 1 deleted, 0 none, -1 error. */
int ws_store_delete_job(ws_store *s, const char *job_id);
/* Jobs registered, -1 on an error. */
int64_t ws_store_count_jobs(ws_store *s);
/* The jobs in memory as the last committed request left them: take one
 * out (1, moved into *j; 0 when not kept), keep one after its request
 * committed (moved from *j; its rows' dirty marks and pending calls
 * cleared), drop one (deleted). A request that fails frees its job (and
 * so its policy instance) instead of keeping it. Under the job's lock. */
int ws_store_take_job(ws_store *s, const char *job_id, ws_sv_job *j);
void ws_store_keep_job(ws_store *s, ws_sv_job *j);
void ws_store_drop_job(ws_store *s, const char *job_id);
/* Unique among the stores this process opened (a wattsim policy's
 * instances belong to one store). */
uint64_t ws_store_serial(const ws_store *s);
/* serve_http.c: the server's store (for the tests). */
ws_store *ws_server_store(ws_server *srv);

/* f on each call of the job in order (under the connection's lock);
 * stops at f's first nonzero (returned); -1 on a database error, its
 * message in msg. */
int ws_store_each_call(ws_store *s, const char *job_id, int (*f)(void *arg, const ws_sv_call *c), void *arg,
                       char *msg, size_t msgsz);

/* serve_zeus.c: Zeus's server's decisions. Each returns 0, or an HTTP
 * status (400, 404, 500) with a message in msg. */
typedef struct ws_sv_report {
    int64_t bs, trial_number, current_epoch;
    double time, energy, metric;
} ws_sv_report;

double ws_sv_zeus_cost(const ws_sv_spec *s, double energy, double time);
void ws_sv_job_init(ws_sv_job *j);   /* stage, min cost and the stream of a new job */
int ws_sv_predict(ws_sv_job *j, int64_t *bs, int64_t *trial_number, char *msg, size_t msgsz);
int ws_sv_report_result(ws_sv_job *j, const ws_sv_report *r, int *stop, int *converged,
                        char *msg, size_t msgsz);
int ws_sv_end_trial(ws_sv_job *j, int64_t bs, int64_t trial_number, char *msg, size_t msgsz);
/* A new dispatched trial of bs (its number the next one), as Zeus's
 * service.create_trial. */
int ws_sv_new_trial(ws_sv_job *j, int type, int64_t bs, int64_t *trial_number, char *msg, size_t msgsz);

/* serve_policy.c: a wattsim policy behind the API (--bso SPEC, PREFIX=SPEC).
 * ws_svp_serves: nonzero when the job id's policy is not Zeus's server's.
 * The others decide on a job of such a policy (its instance in
 * j->policy, built by replaying the calls table when NULL), its calls
 * added to j->calls for the request's write; 0 or an HTTP status with
 * msg. */
int ws_svp_serves(const char *job_id);
int ws_svp_predict(ws_store *s, ws_sv_job *j, int64_t *bs, int64_t *number, char *msg, size_t msgsz);
int ws_svp_report(ws_store *s, ws_sv_job *j, const ws_sv_report *r, int *stop, int *converged, char *msg,
                  size_t msgsz);
/* Instances in memory (all stores). */
long ws_svp_instances(void);

#endif
