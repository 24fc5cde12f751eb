/*
 * The serve database: one SQLite file in WAL mode holding Zeus's server's
 * state (jobs, trials, arms; each job's random stream as its row's text).
 *
 *  - Identity: PRAGMA application_id is WS_STORE_APP_ID and user_version
 *    the schema version; an empty file gets the schema, any other
 *    database (another program's, or another version's) is refused.
 *  - One server per file: flock(LOCK_EX | LOCK_NB) on the database file,
 *    held while it is open (a kill -9 releases it with the process).
 *  - Concurrency: a request holds its job's lock (one of WS_STORE_STRIPES
 *    mutexes, by a hash of the job id) for its whole life, so one job's
 *    requests are serialised and different jobs' decide at once; the one
 *    connection has its own mutex (db_mu), taken for each read and for a
 *    request's writes.
 *  - Group commit (leader-follower): a request writes its rows into the
 *    group's open transaction (BEGIN IMMEDIATE, opened by the first) under
 *    a savepoint of its own, and joins the group; the first to join is its
 *    leader: it waits until every request holding a job's lock has joined
 *    (at most WS_STORE_GROUP_WAIT_NS), COMMITs, and hands each member the
 *    result. A member replies only after that COMMIT returned: a reply is
 *    never sent for a change that is not on disk; synchronous NORMAL
 *    survives a crash of the process (WAL), FULL also power loss (the
 *    COMMIT's fsync). A failed COMMIT fails every member (each drops what
 *    it changed in memory: its job and policy instance reload from the
 *    database); a failed write undoes its own savepoint only.
 *  - Checkpoints off the requests' path: the connection's automatic
 *    checkpoint (run inside a COMMIT, two fsyncs, while every other
 *    request waits for the connection) is replaced by a thread with a
 *    connection of its own that runs a PASSIVE checkpoint (it blocks no
 *    writer) each time WS_STORE_CHECKPOINT_PAGES more pages are in the
 *    WAL (sqlite3_wal_hook). A PASSIVE checkpoint cannot end the WAL
 *    while writes keep coming, so at 4 times that the COMMIT's thread
 *    runs one itself (it copies only what the thread has not). Durability
 *    does not depend on checkpoints: a committed transaction is in the
 *    WAL.
 *  - The job cache: a job as its last committed request left it (at most
 *    cache_max, WS_STORE_CACHE_MAX by default, then the cache starts
 *    over), taken out by a request and put back only after its COMMIT, so
 *    it never holds what the database does not. A job carries its wattsim
 *    policy instance (serve_policy.c), so the cache bounds those too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve_state.h"
#include "wattsim/input.h"
#include "wattsim/name.h"

#define WS_STORE_APP_ID 0x57535356   /* "WSSV" */
#define WS_STORE_VERSION 2   /* 2: the calls table (wattsim policies' replay log) */

/* Prepared statements, by the address of their SQL text (each a literal
 * of this file), kept for the connection's life. */
#define WS_STORE_STMTS 32

/* The job cache: buckets, and the most jobs kept (then it starts over). */
#define WS_STORE_CACHE_BUCKETS 4096
#define WS_STORE_CACHE_MAX 8192

/* The jobs' locks, and the longest a group's leader waits for the
 * requests still deciding before it commits. */
#define WS_STORE_STRIPES 256
#define WS_STORE_GROUP_WAIT_NS 1000000L

/* The WAL pages past which the checkpointer runs (SQLite's automatic
 * checkpoint's default). */
#define WS_STORE_CHECKPOINT_PAGES 1000

/* A member of a group: its result, filled in by the leader. */
typedef struct member {
    struct member *next;
    int done, rc;
    char msg[256];
} member;

typedef struct cached {
    struct cached *next;
    ws_sv_job j;
} cached;

struct ws_store {
    sqlite3 *db;
    int lock_fd;
    pthread_mutex_t db_mu;                  /* the connection, the group */
    pthread_mutex_t job_mu[WS_STORE_STRIPES];
    /* The group (under db_mu): its transaction is open, the requests that
     * hold a job's lock, the members (joined), whether a leader is
     * committing, whether an error rolled the transaction back. */
    int open, n_active, n_joined, leading, broken;
    member *members;
    pthread_cond_t joined_cv, done_cv;
    int fail_commits, fail_every, n_hooked; /* ws_store_fail_commits */
    /* The checkpointer: its connection and thread, asked (ck_due) by the
     * WAL hook, told to stop (ck_stop), under ck_mu. */
    sqlite3 *ck_db;
    pthread_t ck_thread;
    int ck_started, ck_due, ck_stop;
    int ck_mark;                            /* WAL pages at the last request (wal_hook, under db_mu) */
    uint64_t checkpoints;
    pthread_mutex_t ck_mu;
    pthread_cond_t ck_cv;
    uint64_t commits, writes;               /* ws_store_commit_counts */
    struct {
        const char *sql;
        sqlite3_stmt *st;
    } stmt[WS_STORE_STMTS];
    int n_stmt;
    uint64_t serial;
    /* Jobs as the last committed request left them (serve_api.c takes one
     * out for a request and puts it back after the COMMIT; a request that
     * fails drops it, and the next one reads the rows again). */
    pthread_mutex_t cache_mu;
    struct cached *cache[WS_STORE_CACHE_BUCKETS];
    size_t n_cached, cache_max;
};

static const char *SCHEMA =
    "CREATE TABLE jobs(job_id TEXT PRIMARY KEY, spec TEXT NOT NULL, stage INTEGER NOT NULL,"
    " min_cost REAL, min_cost_bs INTEGER NOT NULL, rng TEXT);"
    "CREATE TABLE trials(job_id TEXT NOT NULL, trial_number INTEGER NOT NULL,"
    " batch_size INTEGER NOT NULL, type INTEGER NOT NULL, status INTEGER NOT NULL,"
    " time REAL, energy REAL, converged INTEGER, PRIMARY KEY(job_id, trial_number));"
    "CREATE TABLE arms(job_id TEXT NOT NULL, seq INTEGER NOT NULL, batch_size INTEGER NOT NULL,"
    " mean REAL NOT NULL, prec REAL NOT NULL, reward_prec REAL NOT NULL, n_obs INTEGER NOT NULL,"
    " PRIMARY KEY(job_id, batch_size));"
    /* A wattsim policy's calls, in order: what a restart replays into a
     * fresh instance (serve_policy.c). kind 0 predict, 1 observe. */
    "CREATE TABLE calls(job_id TEXT NOT NULL, seq INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " batch_size INTEGER NOT NULL, cost REAL, reached INTEGER, started INTEGER, epochs INTEGER,"
    " time REAL, energy REAL, PRIMARY KEY(job_id, seq));";

static int pragma_int(sqlite3 *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* ws_store_fail_commits: a nonzero return turns the COMMIT into a
 * rollback, which SQLite reports as the COMMIT's failure. */
static int commit_hook(void *arg)
{
    ws_store *s = arg;
    if (s->fail_commits <= 0 || ++s->n_hooked % s->fail_every) return 0;
    s->fail_commits--;
    return 1;
}

/* After a COMMIT: the pages in the WAL (the connection's own hook, in
 * place of its automatic checkpoint). */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
    (void)name;
    ws_store *s = arg;
    /* The thread's PASSIVE checkpoints do not end the WAL while writes
     * keep coming (a new one begins at a WAL the checkpoint has copied
     * entirely): past 4 times the threshold, one here, with no write in
     * between (it copies what the thread has not yet). */
    if (pages >= 4 * WS_STORE_CHECKPOINT_PAGES) {
        sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        s->ck_mark = 0;
        return SQLITE_OK;
    }
    if (pages < s->ck_mark) s->ck_mark = 0;   /* a new WAL began */
    if (pages - s->ck_mark >= WS_STORE_CHECKPOINT_PAGES) {
        s->ck_mark = pages;
        pthread_mutex_lock(&s->ck_mu);
        s->ck_due = 1;
        pthread_cond_signal(&s->ck_cv);
        pthread_mutex_unlock(&s->ck_mu);
    }
    return SQLITE_OK;
}

static void *checkpointer(void *arg)
{
    ws_store *s = arg;
    pthread_mutex_lock(&s->ck_mu);
    for (;;) {
        while (!s->ck_due && !s->ck_stop) pthread_cond_wait(&s->ck_cv, &s->ck_mu);
        if (s->ck_stop) break;
        s->ck_due = 0;
        pthread_mutex_unlock(&s->ck_mu);
        /* PASSIVE: copies what no reader needs, waits for nobody; an
         * error (a busy database) leaves it to the next time. */
        sqlite3_wal_checkpoint_v2(s->ck_db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&s->ck_mu);
        s->checkpoints++;
    }
    pthread_mutex_unlock(&s->ck_mu);
    return NULL;
}

ws_store *ws_store_open(const char *path, int sync, char *err, size_t errsz)
{
    char shown[512];
    ws_name_show(path, shown, sizeof shown);   /* the path as typed: any bytes */
    ws_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errsz, "%s: out of memory", shown);
        return NULL;
    }
    s->lock_fd = -1;
    /* A database is a regular file (or none yet): a FIFO or a device would
     * reach SQLite as "disk I/O error" (or block). */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        snprintf(err, errsz, "%s: not a regular file (%s); give --db a database file",
                 shown, ws_input_kind(sb.st_mode));
        free(s);
        return NULL;
    }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot open the database: %s", shown,
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    s->lock_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->lock_fd < 0) {
        snprintf(err, errsz, "%s: cannot open: %s", shown, strerror(errno));
        goto fail;
    }
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, errsz, "%s: another wattsim serve uses this database (it is locked);"
                 " stop it first, or give this one another --db", shown);
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 5000);
    int64_t app = 0, ver = 0, n_tables = 0;
    if (pragma_int(s->db, "PRAGMA application_id", &app) != SQLITE_OK
        || pragma_int(s->db, "PRAGMA user_version", &ver) != SQLITE_OK
        || pragma_int(s->db, "SELECT count(*) FROM sqlite_master", &n_tables) != SQLITE_OK) {
        snprintf(err, errsz, "%s: not a wattsim serve database (%s); give --db a new file",
                 shown, sqlite3_errmsg(s->db));
        goto fail;
    }
    if (app == 0 && ver == 0 && n_tables == 0) {
        char sql[160];
        snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d;",
                 WS_STORE_APP_ID, WS_STORE_VERSION);
        char *msg = NULL;
        if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec(s->db, SCHEMA, NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK
            || sqlite3_exec(s->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errsz, "%s: cannot create the schema: %s", shown, msg ? msg : "?");
            sqlite3_free(msg);
            goto fail;
        }
    } else if (app != WS_STORE_APP_ID) {
        snprintf(err, errsz, "%s: not a wattsim serve database (another program's: application_id %"
                 PRId64 ", %" PRId64 " tables); give --db a new file", shown, app, n_tables);
        goto fail;
    } else if (ver != WS_STORE_VERSION) {
        snprintf(err, errsz, "%s: a wattsim serve database of schema version %" PRId64
                 ", this wattsim reads version %d; use the wattsim that wrote it", shown, ver,
                 WS_STORE_VERSION);
        goto fail;
    }
    char *msg = NULL;
    const char *pr = sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL";
    sqlite3_stmt *st = NULL;
    int wal = 0;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *m = sqlite3_column_text(st, 0);
        wal = m && !strcmp((const char *)m, "wal");
    }
    sqlite3_finalize(st);
    if (!wal || sqlite3_exec(s->db, pr, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot set WAL mode and synchronous: %s", shown,
                 msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        goto fail;
    }
    char *cmsg = NULL;
    if (sqlite3_open_v2(path, &s->ck_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK
        || sqlite3_exec(s->ck_db, pr, NULL, NULL, &cmsg) != SQLITE_OK) {
        snprintf(err, errsz, "%s: cannot open the database's checkpoint connection: %s", shown,
                 cmsg ? cmsg : s->ck_db ? sqlite3_errmsg(s->ck_db) : "out of memory");
        sqlite3_free(cmsg);
        goto fail;
    }
    pthread_mutex_init(&s->ck_mu, NULL);
    pthread_cond_init(&s->ck_cv, NULL);
    if (pthread_create(&s->ck_thread, NULL, checkpointer, s) != 0) {
        snprintf(err, errsz, "%s: cannot start the checkpoint thread", shown);
        pthread_mutex_destroy(&s->ck_mu);
        pthread_cond_destroy(&s->ck_cv);
        goto fail;
    }
    s->ck_started = 1;
    sqlite3_wal_hook(s->db, wal_hook, s);   /* replaces the automatic checkpoint */
    pthread_mutex_init(&s->db_mu, NULL);
    pthread_mutex_init(&s->cache_mu, NULL);
    for (int i = 0; i < WS_STORE_STRIPES; i++) pthread_mutex_init(&s->job_mu[i], NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->joined_cv, &ca);
    pthread_cond_init(&s->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    s->cache_max = WS_STORE_CACHE_MAX;
    sqlite3_commit_hook(s->db, commit_hook, s);
    static uint64_t serials;
    static pthread_mutex_t serial_mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&serial_mu);
    s->serial = ++serials;
    pthread_mutex_unlock(&serial_mu);
    return s;
fail:
    if (s->ck_db) sqlite3_close(s->ck_db);
    if (s->db) sqlite3_close(s->db);
    if (s->lock_fd >= 0) close(s->lock_fd);
    free(s);
    return NULL;
}

static void checkpointer_stop(ws_store *s)
{
    if (!s->ck_started) return;
    pthread_mutex_lock(&s->ck_mu);
    s->ck_stop = 1;
    pthread_cond_signal(&s->ck_cv);
    pthread_mutex_unlock(&s->ck_mu);
    pthread_join(s->ck_thread, NULL);
    pthread_mutex_destroy(&s->ck_mu);
    pthread_cond_destroy(&s->ck_cv);
    s->ck_started = 0;
}

static uint64_t id_hash(const char *id)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *id; id++) h = (h ^ (unsigned char)*id) * 1099511628211ULL;
    return h % WS_STORE_CACHE_BUCKETS;
}

static void cache_clear(ws_store *s)
{
    for (size_t b = 0; b < WS_STORE_CACHE_BUCKETS; b++)
        while (s->cache[b]) {
            cached *c = s->cache[b];
            s->cache[b] = c->next;
            ws_sv_job_free(&c->j);
            free(c);
        }
    s->n_cached = 0;
}

int ws_store_take_job(ws_store *s, const char *job_id, ws_sv_job *j)
{
    int found = 0;
    pthread_mutex_lock(&s->cache_mu);
    for (cached **p = &s->cache[id_hash(job_id)]; *p; p = &(*p)->next)
        if (!strcmp((*p)->j.spec.job_id, job_id)) {
            cached *c = *p;
            *p = c->next;
            *j = c->j;
            free(c);
            s->n_cached--;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&s->cache_mu);
    return found;
}

void ws_store_keep_job(ws_store *s, ws_sv_job *j)
{
    cached *c = malloc(sizeof *c);
    if (!c) {
        ws_sv_job_free(j);
        return;
    }
    j->dirty = 0;
    for (int i = 0; i < j->n_trials; i++) j->trials[i].dirty = 0;
    for (int i = 0; i < j->n_arms; i++) j->arms[i].dirty = 0;
    j->n_calls = 0;
    c->j = *j;
    memset(j, 0, sizeof *j);
    const uint64_t b = id_hash(c->j.spec.job_id);
    pthread_mutex_lock(&s->cache_mu);
    if (s->n_cached >= s->cache_max) cache_clear(s);   /* the jobs in use are not in it */
    c->next = s->cache[b];
    s->cache[b] = c;
    s->n_cached++;
    pthread_mutex_unlock(&s->cache_mu);
}

void ws_store_drop_job(ws_store *s, const char *job_id)
{
    ws_sv_job j;
    if (ws_store_take_job(s, job_id, &j)) ws_sv_job_free(&j);
}

void ws_store_set_cache_max(ws_store *s, size_t n)
{
    pthread_mutex_lock(&s->cache_mu);
    s->cache_max = n > 0 ? n : 1;
    pthread_mutex_unlock(&s->cache_mu);
}

void ws_store_cache_counts(ws_store *s, size_t *n, size_t *max)
{
    pthread_mutex_lock(&s->cache_mu);
    *n = s->n_cached;
    *max = s->cache_max;
    pthread_mutex_unlock(&s->cache_mu);
}

void ws_store_close(ws_store *s)
{
    if (!s) return;
    cache_clear(s);
    checkpointer_stop(s);
    sqlite3_close(s->ck_db);
    for (int i = 0; i < s->n_stmt; i++) sqlite3_finalize(s->stmt[i].st);
    sqlite3_close(s->db);   /* the last connection: it checkpoints the WAL */
    /* After the connection: closing another descriptor of the file would
     * drop SQLite's own POSIX locks. */
    if (s->lock_fd >= 0) close(s->lock_fd);
    pthread_mutex_destroy(&s->db_mu);
    pthread_mutex_destroy(&s->cache_mu);
    for (int i = 0; i < WS_STORE_STRIPES; i++) pthread_mutex_destroy(&s->job_mu[i]);
    pthread_cond_destroy(&s->joined_cv);
    pthread_cond_destroy(&s->done_cv);
    free(s);
}

uint64_t ws_store_serial(const ws_store *s) { return s->serial; }

void ws_store_fail_commits(ws_store *s, int n, int every)
{
    pthread_mutex_lock(&s->db_mu);
    s->fail_commits = n;
    s->fail_every = every > 0 ? every : 1;
    s->n_hooked = 0;
    pthread_mutex_unlock(&s->db_mu);
}

void ws_store_commit_counts(ws_store *s, uint64_t *commits, uint64_t *writes, uint64_t *checkpoints)
{
    pthread_mutex_lock(&s->db_mu);
    *commits = s->commits;
    *writes = s->writes;
    pthread_mutex_unlock(&s->db_mu);
    pthread_mutex_lock(&s->ck_mu);
    *checkpoints = s->checkpoints;
    pthread_mutex_unlock(&s->ck_mu);
}

/* --------------------------------------------------- locks and groups */

static pthread_mutex_t *stripe(ws_store *s, const char *job_id)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = job_id; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return &s->job_mu[(h >> 17) % WS_STORE_STRIPES];
}

void ws_store_job_lock(ws_store *s, const char *job_id)
{
    pthread_mutex_lock(stripe(s, job_id));
    pthread_mutex_lock(&s->db_mu);
    s->n_active++;
    pthread_mutex_unlock(&s->db_mu);
}

void ws_store_job_unlock(ws_store *s, const char *job_id)
{
    pthread_mutex_lock(&s->db_mu);
    s->n_active--;
    pthread_cond_signal(&s->joined_cv);
    pthread_mutex_unlock(&s->db_mu);
    pthread_mutex_unlock(stripe(s, job_id));
}

static void copy_msg(char *msg, size_t msgsz, const char *what, const char *m)
{
    if (msg && msgsz) snprintf(msg, msgsz, "%s%s", what, m);
}

/* After an error: did it end the group's transaction? Then its members
 * fail (broken), or with none the next write opens another. */
static void check_gone(ws_store *s)
{
    if (!s->open || !sqlite3_get_autocommit(s->db)) return;
    if (s->n_joined == 0 && !s->leading) s->open = 0;
    else s->broken = 1;
}

int ws_store_write_begin(ws_store *s, char *msg, size_t msgsz)
{
    pthread_mutex_lock(&s->db_mu);
    check_gone(s);
    if (s->open && s->broken) {
        copy_msg(msg, msgsz, "", "an earlier error rolled the group's transaction back");
        pthread_mutex_unlock(&s->db_mu);
        return -1;
    }
    if (!s->open) {
        if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
            copy_msg(msg, msgsz, "", sqlite3_errmsg(s->db));
            pthread_mutex_unlock(&s->db_mu);
            return -1;
        }
        s->open = 1;
        s->broken = 0;
    }
    if (sqlite3_exec(s->db, "SAVEPOINT request", NULL, NULL, NULL) != SQLITE_OK) {
        copy_msg(msg, msgsz, "", sqlite3_errmsg(s->db));
        check_gone(s);
        pthread_mutex_unlock(&s->db_mu);
        return -1;
    }
    return 0;
}

/* The leader: wait for the requests still deciding (they release db_mu
 * while they do), COMMIT, hand every member its result. */
static void lead(ws_store *s)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += WS_STORE_GROUP_WAIT_NS;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (s->n_active > s->n_joined)
        if (pthread_cond_timedwait(&s->joined_cv, &s->db_mu, &until) != 0) break;
    int rc = 0;
    char m[256] = "";
    if (s->broken || sqlite3_get_autocommit(s->db)) {
        rc = -1;
        snprintf(m, sizeof m, "an earlier error rolled the group's transaction back");
    } else if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = -1;
        snprintf(m, sizeof m, "COMMIT failed: %s", sqlite3_errmsg(s->db));
    }
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->commits++;
    s->writes += (uint64_t)s->n_joined;
    for (member *p = s->members; p; p = p->next) {
        p->rc = rc;
        snprintf(p->msg, sizeof p->msg, "%s", m);
        p->done = 1;
    }
    s->members = NULL;
    s->n_joined = 0;
    s->open = 0;
    s->broken = 0;
    s->leading = 0;
    pthread_cond_broadcast(&s->done_cv);
}

int ws_store_write_end(ws_store *s, int ok, char *msg, size_t msgsz)
{
    if (ok && sqlite3_exec(s->db, "RELEASE request", NULL, NULL, NULL) != SQLITE_OK) ok = 0;
    if (!ok) {
        copy_msg(msg, msgsz, "", sqlite3_errmsg(s->db));
        if (!sqlite3_get_autocommit(s->db)) {
            sqlite3_exec(s->db, "ROLLBACK TO request", NULL, NULL, NULL);
            sqlite3_exec(s->db, "RELEASE request", NULL, NULL, NULL);
        }
        check_gone(s);   /* the error may have ended the transaction */
        pthread_mutex_unlock(&s->db_mu);
        return -1;
    }
    member me = {s->members, 0, 0, ""};
    s->members = &me;
    s->n_joined++;
    if (!s->leading) {
        s->leading = 1;
        lead(s);
    } else {
        pthread_cond_signal(&s->joined_cv);
        while (!me.done) pthread_cond_wait(&s->done_cv, &s->db_mu);
    }
    pthread_mutex_unlock(&s->db_mu);
    if (me.rc) copy_msg(msg, msgsz, "", me.msg);
    return me.rc;
}

/* ------------------------------------------------------------- rows */

static void rng_text(const ws_rng *r, char out[80])
{
    snprintf(out, 80, "%016" PRIx64 "%016" PRIx64 " %016" PRIx64 "%016" PRIx64 " %08" PRIx32 " %d",
             r->state_hi, r->state_lo, r->inc_hi, r->inc_lo, r->buf32, r->has32);
}

static int rng_parse(const char *t, ws_rng *r)
{
    char a[17], b[17], c[17], d[17];
    unsigned buf;
    int has, n = 0;
    if (strlen(t) != 32 + 1 + 32 + 1 + 8 + 2) return -1;
    memcpy(a, t, 16), a[16] = 0;
    memcpy(b, t + 16, 16), b[16] = 0;
    memcpy(c, t + 33, 16), c[16] = 0;
    memcpy(d, t + 49, 16), d[16] = 0;
    if (sscanf(t + 66, "%8x %d%n", &buf, &has, &n) != 2 || t[66 + n] || (has != 0 && has != 1))
        return -1;
    char *e;
    r->state_hi = strtoull(a, &e, 16);
    r->state_lo = strtoull(b, &e, 16);
    r->inc_hi = strtoull(c, &e, 16);
    r->inc_lo = strtoull(d, &e, 16);
    r->buf32 = buf;
    r->has32 = has;
    return 0;
}

static sqlite3_stmt *prep(ws_store *s, const char *sql)
{
    for (int i = 0; i < s->n_stmt; i++)
        if (s->stmt[i].sql == sql) return s->stmt[i].st;
    if (s->n_stmt == WS_STORE_STMTS) return NULL;   /* more literals than slots: a bug */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) return NULL;
    s->stmt[s->n_stmt].sql = sql;
    s->stmt[s->n_stmt++].st = st;
    return st;
}

/* A statement of prep's, ready for its next use. */
static void done(sqlite3_stmt *st)
{
    if (!st) return;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static void bind_opt_double(sqlite3_stmt *st, int i, int has, double v)
{
    if (has) sqlite3_bind_double(st, i, v);
    else sqlite3_bind_null(st, i);
}

void ws_sv_spec_free(ws_sv_spec *s)
{
    free(s->bs);
    s->bs = NULL;
    s->n_bs = 0;
}

void ws_sv_job_free(ws_sv_job *j)
{
    ws_sv_spec_free(&j->spec);
    free(j->spec_json);
    free(j->trials);
    free(j->arms);
    free(j->calls);
    if (j->policy && j->policy_free) j->policy_free(j->policy);
    memset(j, 0, sizeof *j);
}

static int load_job(ws_store *s, const char *job_id, ws_sv_job *j, ws_sv_spec_parser parse)
{
    memset(j, 0, sizeof *j);
    sqlite3_stmt *st = prep(s, "SELECT spec, stage, min_cost, min_cost_bs, rng FROM jobs WHERE job_id=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        done(st);
        return 0;
    }
    if (rc != SQLITE_ROW) goto fail;
    const char *spec = (const char *)sqlite3_column_text(st, 0);
    char perr[256];
    if (!spec || !(j->spec_json = strdup(spec)) || parse(spec, &j->spec, perr, sizeof perr) != 0)
        goto fail;
    j->stage = sqlite3_column_int(st, 1);
    j->has_min_cost = sqlite3_column_type(st, 2) != SQLITE_NULL;
    j->min_cost = sqlite3_column_double(st, 2);
    j->min_cost_bs = sqlite3_column_int64(st, 3);
    const char *rt = (const char *)sqlite3_column_text(st, 4);
    j->has_rng = rt != NULL;
    if (rt && rng_parse(rt, &j->rng) != 0) goto fail;
    done(st);

    st = prep(s, "SELECT trial_number, batch_size, type, status, time, energy, converged FROM trials"
                 " WHERE job_id=? ORDER BY trial_number");
    if (!st) goto fail;
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (j->n_trials == j->cap_trials) {
            int cap = j->cap_trials ? 2 * j->cap_trials : 16;
            ws_sv_trial *t = realloc(j->trials, (size_t)cap * sizeof *t);
            if (!t) goto fail;
            j->trials = t;
            j->cap_trials = cap;
        }
        ws_sv_trial *t = &j->trials[j->n_trials++];
        memset(t, 0, sizeof *t);
        t->number = sqlite3_column_int64(st, 0);
        t->bs = sqlite3_column_int64(st, 1);
        t->type = sqlite3_column_int(st, 2);
        t->status = sqlite3_column_int(st, 3);
        t->has_result = sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_type(st, 5) != SQLITE_NULL;
        t->time = sqlite3_column_double(st, 4);
        t->energy = sqlite3_column_double(st, 5);
        t->converged = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6) != 0;
    }
    if (rc != SQLITE_DONE) goto fail;
    done(st);

    st = prep(s, "SELECT batch_size, mean, prec, reward_prec, n_obs FROM arms WHERE job_id=? ORDER BY seq");
    if (!st) goto fail;
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
    int cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (j->n_arms == cap) {
            cap = cap ? 2 * cap : 8;
            ws_sv_arm *a = realloc(j->arms, (size_t)cap * sizeof *a);
            if (!a) goto fail;
            j->arms = a;
        }
        ws_sv_arm *a = &j->arms[j->n_arms++];
        memset(a, 0, sizeof *a);
        a->bs = sqlite3_column_int64(st, 0);
        /* NULL for an infinite precision (SQLite keeps inf; read as stored). */
        a->mean = sqlite3_column_double(st, 1);
        a->prec = sqlite3_column_double(st, 2);
        a->reward_prec = sqlite3_column_double(st, 3);
        a->n_obs = sqlite3_column_int64(st, 4);
    }
    if (rc != SQLITE_DONE) goto fail;
    done(st);
    return 1;
fail:
    done(st);
    ws_sv_job_free(j);
    return -1;
}

int ws_store_load_job(ws_store *s, const char *job_id, ws_sv_job *j, ws_sv_spec_parser parse, char *msg,
                      size_t msgsz)
{
    pthread_mutex_lock(&s->db_mu);
    const int rc = load_job(s, job_id, j, parse);
    if (rc < 0) copy_msg(msg, msgsz, "", sqlite3_errmsg(s->db));
    pthread_mutex_unlock(&s->db_mu);
    return rc;
}

static int save_job_row(ws_store *s, const ws_sv_job *j, int insert)
{
    sqlite3_stmt *st = prep(s, insert
        ? "INSERT INTO jobs(stage, min_cost, min_cost_bs, rng, job_id, spec) VALUES(?,?,?,?,?,?)"
        : "UPDATE jobs SET stage=?, min_cost=?, min_cost_bs=?, rng=? WHERE job_id=?");
    if (!st) return -1;
    char rt[80];
    sqlite3_bind_int(st, 1, j->stage);
    bind_opt_double(st, 2, j->has_min_cost, j->min_cost);
    sqlite3_bind_int64(st, 3, j->min_cost_bs);
    if (j->has_rng) {
        rng_text(&j->rng, rt);
        sqlite3_bind_text(st, 4, rt, -1, SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(st, 4);
    }
    sqlite3_bind_text(st, 5, j->spec.job_id, -1, SQLITE_TRANSIENT);
    if (insert) sqlite3_bind_text(st, 6, j->spec_json, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    done(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int ws_store_insert_job(ws_store *s, const ws_sv_job *j)
{
    return save_job_row(s, j, 1);
}

static int add_call(ws_store *s, const char *job_id, int64_t seq, const ws_sv_call *c)
{
    sqlite3_stmt *st = prep(s, "INSERT INTO calls(job_id, seq, kind, batch_size, cost, reached, started,"
                               " epochs, time, energy) VALUES(?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_int(st, 3, c->kind);
    sqlite3_bind_int64(st, 4, c->bs);
    bind_opt_double(st, 5, c->kind == 1, c->cost);
    sqlite3_bind_int(st, 6, c->reached);
    sqlite3_bind_int(st, 7, c->started);
    sqlite3_bind_int(st, 8, c->epochs);
    bind_opt_double(st, 9, c->kind == 1, c->time);
    bind_opt_double(st, 10, c->kind == 1, c->energy);
    const int rc = sqlite3_step(st);
    done(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int ws_store_save_job(ws_store *s, const ws_sv_job *j)
{
    if (j->dirty && save_job_row(s, j, 0) != 0) return -1;
    for (int i = 0; i < j->n_trials; i++) {
        const ws_sv_trial *t = &j->trials[i];
        if (!t->dirty) continue;
        sqlite3_stmt *st = prep(s, t->dirty == 2
            ? "INSERT INTO trials(batch_size, type, status, time, energy, converged, job_id, trial_number)"
              " VALUES(?,?,?,?,?,?,?,?)"
            : "UPDATE trials SET batch_size=?, type=?, status=?, time=?, energy=?, converged=?"
              " WHERE job_id=? AND trial_number=?");
        if (!st) return -1;
        sqlite3_bind_int64(st, 1, t->bs);
        sqlite3_bind_int(st, 2, t->type);
        sqlite3_bind_int(st, 3, t->status);
        bind_opt_double(st, 4, t->has_result, t->time);
        bind_opt_double(st, 5, t->has_result, t->energy);
        if (t->converged < 0) sqlite3_bind_null(st, 6);
        else sqlite3_bind_int(st, 6, t->converged);
        sqlite3_bind_text(st, 7, j->spec.job_id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 8, t->number);
        int rc = sqlite3_step(st);
        done(st);
        if (rc != SQLITE_DONE) return -1;
    }
    for (int i = 0; i < j->n_arms; i++) {
        const ws_sv_arm *a = &j->arms[i];
        if (!a->dirty) continue;
        sqlite3_stmt *st = prep(s, a->dirty == 2
            ? "INSERT INTO arms(mean, prec, reward_prec, n_obs, job_id, batch_size, seq) VALUES(?,?,?,?,?,?,?)"
            : "UPDATE arms SET mean=?, prec=?, reward_prec=?, n_obs=? WHERE job_id=? AND batch_size=?");
        if (!st) return -1;
        sqlite3_bind_double(st, 1, a->mean);
        sqlite3_bind_double(st, 2, a->prec);
        sqlite3_bind_double(st, 3, a->reward_prec);
        sqlite3_bind_int64(st, 4, a->n_obs);
        sqlite3_bind_text(st, 5, j->spec.job_id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 6, a->bs);
        if (a->dirty == 2) sqlite3_bind_int(st, 7, i);
        int rc = sqlite3_step(st);
        done(st);
        if (rc != SQLITE_DONE) return -1;
    }
    for (int i = 0; i < j->n_calls; i++)
        if (add_call(s, j->spec.job_id, j->calls_seq + i, &j->calls[i]) != 0) return -1;
    return 0;
}

int ws_store_delete_job(ws_store *s, const char *job_id)
{
    static const char *const sql[] = {"DELETE FROM trials WHERE job_id=?", "DELETE FROM arms WHERE job_id=?",
                                      "DELETE FROM calls WHERE job_id=?",
                                      "DELETE FROM jobs WHERE job_id=?"};
    for (size_t i = 0; i < sizeof sql / sizeof *sql; i++) {
        sqlite3_stmt *st = prep(s, sql[i]);
        if (!st) return -1;
        sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(st);
        done(st);
        if (rc != SQLITE_DONE) return -1;
    }
    return sqlite3_changes(s->db) > 0;
}

int64_t ws_store_count_jobs(ws_store *s)
{
    int64_t n = -1;
    pthread_mutex_lock(&s->db_mu);
    if (pragma_int(s->db, "SELECT count(*) FROM jobs", &n) != SQLITE_OK) n = -1;
    pthread_mutex_unlock(&s->db_mu);
    return n;
}

/* ------------------------------------------------------------ calls */

int ws_store_each_call(ws_store *s, const char *job_id, int (*f)(void *arg, const ws_sv_call *c), void *arg,
                       char *msg, size_t msgsz)
{
    pthread_mutex_lock(&s->db_mu);
    sqlite3_stmt *st = prep(s, "SELECT kind, batch_size, cost, reached, started, epochs, time, energy"
                               " FROM calls WHERE job_id=? ORDER BY seq");
    if (!st) {
        copy_msg(msg, msgsz, "", sqlite3_errmsg(s->db));
        pthread_mutex_unlock(&s->db_mu);
        return -1;
    }
    sqlite3_bind_text(st, 1, job_id, -1, SQLITE_TRANSIENT);
    int rc, r = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        ws_sv_call c = {sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_double(st, 2),
                        sqlite3_column_int(st, 3), sqlite3_column_int(st, 4), sqlite3_column_int(st, 5),
                        sqlite3_column_double(st, 6), sqlite3_column_double(st, 7)};
        if ((r = f(arg, &c)) != 0) break;
    }
    if (!r && rc != SQLITE_DONE) {
        copy_msg(msg, msgsz, "", sqlite3_errmsg(s->db));
        r = -1;
    }
    done(st);
    pthread_mutex_unlock(&s->db_mu);
    return r;
}
