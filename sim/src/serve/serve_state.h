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
} ws_sv_job;

void ws_sv_job_free(ws_sv_job *j);
void ws_sv_spec_free(ws_sv_spec *s);

/* serve_store.c: the connection (the caller holds the store's mutex). */
sqlite3 *ws_store_db(ws_store *s);
void ws_store_lock(ws_store *s);
void ws_store_unlock(ws_store *s);
int ws_store_begin(ws_store *s);
int ws_store_commit(ws_store *s);
void ws_store_rollback(ws_store *s);
/* 1 found (loaded into *j), 0 not found, -1 database error. The spec is
 * parsed back with parse_spec. */
typedef int (*ws_sv_spec_parser)(const char *json, ws_sv_spec *out, char *err, size_t errsz);
int ws_store_load_job(ws_store *s, const char *job_id, ws_sv_job *j, ws_sv_spec_parser parse);
int ws_store_insert_job(ws_store *s, const ws_sv_job *j);
/* Write what is dirty. 0 or -1. */
int ws_store_save_job(ws_store *s, const ws_sv_job *j);
/* 1 deleted, 0 none, -1 error. */
int ws_store_delete_job(ws_store *s, const char *job_id);
int64_t ws_store_count_jobs(ws_store *s);
const char *ws_store_errmsg(ws_store *s);
/* The jobs in memory as the last committed request left them: take one
 * out (1, moved into *j; 0 when not kept), keep one after its request
 * committed (moved from *j; its rows' dirty marks cleared), drop one
 * (deleted). A request that fails frees its job instead of keeping it. */
int ws_store_take_job(ws_store *s, const char *job_id, ws_sv_job *j);
void ws_store_keep_job(ws_store *s, ws_sv_job *j);
void ws_store_drop_job(ws_store *s, const char *job_id);
/* Unique among the stores this process opened (a wattsim policy's
 * instances belong to one store). */
uint64_t ws_store_serial(const ws_store *s);

/* One call of a wattsim policy (serve_policy.c), as the calls table keeps
 * it: kind 0 predict (bs), 1 observe (bs, cost, reached, the run). */
typedef struct ws_sv_call {
    int kind;
    int64_t bs;
    double cost;
    int reached, started, epochs;
    double time, energy;
} ws_sv_call;
int ws_store_add_call(ws_store *s, const char *job_id, int64_t seq, const ws_sv_call *c);
/* f on each call of the job in order; stops at f's first nonzero (returned);
 * -1 on a database error. */
int ws_store_each_call(ws_store *s, const char *job_id, int (*f)(void *arg, const ws_sv_call *c), void *arg);

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
 * The others decide on a job of such a policy, its calls logged to the
 * store within the request's transaction; 0 or an HTTP status with msg.
 * ws_svp_forget drops the job's instance (after a rollback, a delete): the
 * next request rebuilds it by replaying the calls table. */
int ws_svp_serves(const char *job_id);
int ws_svp_predict(ws_store *s, ws_sv_job *j, int64_t *bs, int64_t *number, char *msg, size_t msgsz);
int ws_svp_report(ws_store *s, ws_sv_job *j, const ws_sv_report *r, int *stop, int *converged, char *msg,
                  size_t msgsz);
void ws_svp_forget(ws_store *s, const char *job_id);

#endif
