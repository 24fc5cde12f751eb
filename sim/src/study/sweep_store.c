/*
 * Where a sweep keeps its simulations (see wattsim/sweep.h): memory that
 * does not grow with the seeds (issue 10).
 *
 * Up to a threshold (WS_SPILL_SIMS, 2^18, or the caller's), an array of
 * ws_sweep_sim in memory, as before. Past it, each simulation's numbers
 * are a fixed 64-byte record at index x 64 of a temporary file, created
 * in the output folder (else $TMPDIR, else /tmp) and unlinked at once, so
 * nothing is left behind whatever happens; it is sized (sparse) to the
 * whole plan up front, so a simulation not run reads back as zeros, as in
 * the array, and a short read is an error. Threads write their own
 * records with pwrite; readers go through a cursor that reads a chunk of
 * records with pread and decodes them. The numbers are stored bit for
 * bit, and the summaries make the same additions in the same order from
 * either place, so outputs are byte-identical.
 *
 * Record: f64 energy_j, time_s, cost, steady_energy, steady_time, co2_g,
 * usd; i32 final_bs (-1: failed), final_pl. Native byte order (the file
 * lives as long as the process).
 *
 * What stays in memory: per cell, the first failure's message (the
 * summaries show only that one; a failure with a lower seed index
 * replaces it, so the result does not depend on completion order), and,
 * for the learning curves only, each simulation's cost per recurrence
 * (asked-for history, as large as the recurrences).
 *
 * I/O errors: the first one is kept (one line naming the file) and
 * reported by ws_sweep_io_error; a failed read gives a failed simulation
 * so that nothing crashes on the way to the report.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep_run.h"
#include "wattsim/outfile.h"

#define REC 64                     /* bytes per record in the file */
#define CHUNK_MAX 4096             /* records a cursor holds */

typedef struct first_fail {
    size_t i;                      /* simulation index */
    char msg[];
} first_fail;

struct ws_sweep_store {
    ws_sweep_sim *mem;             /* in memory; NULL when spilled */
    int fd;                        /* the spill file; -1 in memory */
    char path[512];                /* its folder, for messages (it has no name) */
    double **rec;                  /* spilled with curves: cost per recurrence */
    first_fail **fail;             /* per cell; NULL: no failure yet */
    size_t n_cells;
    pthread_mutex_t lock;          /* fail and the I/O error */
    int io_failed;
    ws_error io_err;
};

static void io_fail(ws_sweep_store *st, const char *what, size_t i, int e)
{
    pthread_mutex_lock(&st->lock);
    if (!st->io_failed) {
        st->io_failed = 1;
        ws_fail(&st->io_err, "%s: the sweep's spill file there (unnamed): cannot %s simulation"
                " %zu: %s", st->path, what, i, e ? strerror(e) : "end of file");
    }
    pthread_mutex_unlock(&st->lock);
}

int ws_sweep_io_error(const ws_sweep *s, ws_error *err)
{
    ws_sweep_store *st = s->store;
    if (!st) return 0;
    pthread_mutex_lock(&st->lock);
    int bad = st->io_failed;
    if (bad) *err = st->io_err;
    pthread_mutex_unlock(&st->lock);
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------ set-up */

static int spill_open(ws_sweep_store *st, const char *dir, size_t n, ws_error *err)
{
    if (!dir) dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int len = snprintf(st->path, sizeof st->path, "%s", dir);
    if (len < 0 || (size_t)len >= sizeof st->path)
        return ws_fail(err, "%s: the folder's name is too long for the spill file", dir);
    /* Nameless (or unlinked at once), through the folder's descriptor:
     * gone when the process ends, however. */
    st->fd = ws_outfile_scratch(dir, err);
    if (st->fd < 0) return ws_fail_prefix(err, "the sweep's spill file");
    if (n > (size_t)INT64_MAX / REC || ftruncate(st->fd, (off_t)(n * REC)))
        return ws_fail(err, "%s: cannot size the sweep's spill file to %zu simulations: %s",
                       st->path, n, strerror(errno));
    return 0;
}

int ws_sweep_store_open(ws_sweep *s, size_t spill_sims, const char *dir, ws_error *err)
{
    ws_sweep_store *st = calloc(1, sizeof *st);
    if (!st) return ws_fail(err, "out of memory");
    st->fd = -1;
    pthread_mutex_init(&st->lock, NULL);
    s->store = st;
    st->n_cells = ws_sweep_n_cells(s);
    st->fail = calloc(st->n_cells ? st->n_cells : 1, sizeof *st->fail);
    if (!st->fail) return ws_fail(err, "out of memory");
    if (!spill_sims) spill_sims = WS_SPILL_SIMS;
    if (s->n_sims <= spill_sims) {
        st->mem = calloc(s->n_sims, sizeof *st->mem);
        if (!st->mem) return ws_fail(err, "out of memory");
    } else {
        if (spill_open(st, dir, s->n_sims, err)) return -1;
        if (s->curves && !(st->rec = calloc(s->n_sims, sizeof *st->rec)))
            return ws_fail(err, "out of memory");
    }
    /* Per-recurrence costs only for the learning curves: without them a
     * simulation's memory does not depend on its recurrences. */
    for (size_t i = 0; s->curves && i < s->n_sims; i++) {
        double *r = calloc((size_t)ws_sweep_recurrences(s, i), sizeof(double));
        if (!r) return ws_fail(err, "out of memory");
        if (st->mem) st->mem[i].rec_cost = r;
        else st->rec[i] = r;
    }
    return 0;
}

void ws_sweep_store_free(ws_sweep *s)
{
    ws_sweep_store *st = s->store;
    if (!st) return;
    for (size_t i = 0; i < s->n_sims; i++) {
        if (st->mem) free(st->mem[i].rec_cost);
        if (st->rec) free(st->rec[i]);
    }
    free(st->mem);
    free(st->rec);
    for (size_t c = 0; st->fail && c < st->n_cells; c++) free(st->fail[c]);
    free(st->fail);
    if (st->fd >= 0) close(st->fd);
    pthread_mutex_destroy(&st->lock);
    free(st);
    s->store = NULL;
}

/* ------------------------------------------------------------ records */

double *ws_sweep_store_rec(const ws_sweep *s, size_t i)
{
    const ws_sweep_store *st = s->store;
    return st->mem ? st->mem[i].rec_cost : st->rec ? st->rec[i] : NULL;
}

static void encode(unsigned char *r, const ws_sweep_sim *m)
{
    double d[7] = {m->energy_j, m->time_s, m->cost, m->steady_energy, m->steady_time,
                   m->co2_g, m->usd};
    int32_t k[2] = {m->failed ? -1 : m->final_bs, m->final_pl};
    memcpy(r, d, sizeof d);
    memcpy(r + 56, k, sizeof k);
}

static void decode(const unsigned char *r, ws_sweep_sim *m, double *rec_cost)
{
    double d[7];
    int32_t k[2];
    memcpy(d, r, sizeof d);
    memcpy(k, r + 56, sizeof k);
    *m = (ws_sweep_sim){.energy_j = d[0], .time_s = d[1], .cost = d[2],
                        .steady_energy = d[3], .steady_time = d[4], .co2_g = d[5],
                        .usd = d[6], .final_bs = k[0] < 0 ? 0 : k[0], .final_pl = k[1],
                        .failed = k[0] < 0, .rec_cost = rec_cost};
}

void ws_sweep_store_put(ws_sweep *s, size_t i, const ws_sweep_sim *m)
{
    ws_sweep_store *st = s->store;
    if (st->mem) {
        double *rc = st->mem[i].rec_cost;
        st->mem[i] = *m;
        st->mem[i].rec_cost = rc;
        return;
    }
    unsigned char r[REC];
    encode(r, m);
    size_t done = 0;
    while (done < REC) {
        ssize_t w = pwrite(st->fd, r + done, REC - done, (off_t)(i * REC + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { io_fail(st, "write", i, w < 0 ? errno : ENOSPC); return; }
        done += (size_t)w;
    }
}

/* Read records [first, first + n) into raw; 0, or -1 (kept as the error). */
static int read_records(const ws_sweep *s, size_t first, size_t n, unsigned char *raw)
{
    ws_sweep_store *st = s->store;
    size_t want = n * REC, got = 0;
    while (got < want) {
        ssize_t r = pread(st->fd, raw + got, want - got, (off_t)(first * REC + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { io_fail(st, "read", first + got / REC, r < 0 ? errno : 0); return -1; }
        got += (size_t)r;
    }
    return 0;
}

static const ws_sweep_sim unreadable = {.failed = 1};

void ws_sweep_sim_get(const ws_sweep *s, size_t i, ws_sweep_sim *out)
{
    const ws_sweep_store *st = s->store;
    if (st->mem) { *out = st->mem[i]; return; }
    unsigned char r[REC];
    if (read_records(s, i, 1, r)) { *out = unreadable; return; }
    decode(r, out, st->rec ? st->rec[i] : NULL);
}

/* ------------------------------------------------------------ cursors */

void ws_sweep_cursor_init(ws_sweep_cursor *c, const ws_sweep *s, size_t chunk)
{
    *c = (ws_sweep_cursor){.s = s};
    c->cap = chunk < 1 ? 1 : chunk > CHUNK_MAX ? CHUNK_MAX : chunk;
}

const ws_sweep_sim *ws_sweep_sim_at(ws_sweep_cursor *c, size_t i)
{
    const ws_sweep_store *st = c->s->store;
    if (st->mem) return &st->mem[i];
    if (i >= c->first && i - c->first < c->n) return &c->buf[i - c->first];
    if (!c->buf) {
        c->buf = malloc(c->cap * (sizeof *c->buf + REC));
        if (!c->buf) {
            io_fail(c->s->store, "hold (out of memory)", i, ENOMEM);
            return &unreadable;
        }
    }
    size_t n = c->s->n_sims - i < c->cap ? c->s->n_sims - i : c->cap;
    unsigned char *raw = (unsigned char *)(c->buf + c->cap);
    c->n = 0;
    if (read_records(c->s, i, n, raw)) return &unreadable;
    for (size_t k = 0; k < n; k++) decode(raw + k * REC, &c->buf[k], st->rec ? st->rec[i + k] : NULL);
    c->first = i;
    c->n = n;
    return &c->buf[0];
}

void ws_sweep_cursor_free(ws_sweep_cursor *c)
{
    free(c->buf);
    c->buf = NULL;
    c->n = 0;
}

/* ------------------------------------------------------------ failures */

void ws_sweep_sim_reset(ws_sweep_sim *sim, long r)
{
    double *rc = sim->rec_cost;
    memset(sim, 0, sizeof *sim);
    sim->rec_cost = rc;
    if (rc) memset(rc, 0, (size_t)r * sizeof *rc);
}

void ws_sweep_sim_fail(ws_sweep *s, size_t i, const char *msg)
{
    ws_sweep_sim sim = {.rec_cost = ws_sweep_store_rec(s, i)};
    ws_sweep_sim_reset(&sim, ws_sweep_recurrences(s, i));
    sim.failed = 1;
    ws_sweep_store_put(s, i, &sim);
    /* The cell's first failure in seed order, whatever order they come in. */
    ws_sweep_store *st = s->store;
    size_t cell = i / s->n_seeds, len = strlen(msg);
    pthread_mutex_lock(&st->lock);
    if (!st->fail[cell] || st->fail[cell]->i > i) {
        first_fail *f = malloc(sizeof *f + len + 1);
        if (f) {                   /* out of memory: the message reads as "" */
            f->i = i;
            memcpy(f->msg, msg, len + 1);
            free(st->fail[cell]);
            st->fail[cell] = f;
        }
    }
    pthread_mutex_unlock(&st->lock);
}

const char *ws_sweep_cell_error(const ws_sweep *s, size_t cell)
{
    const first_fail *f = s->store->fail[cell];
    return f ? f->msg : "";
}

const char *ws_sweep_sim_error(const ws_sweep *s, size_t i)
{
    const first_fail *f = s->store->fail[i / s->n_seeds];
    return f && f->i == i ? f->msg : "";
}
