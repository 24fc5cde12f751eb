/*
 * The binary record of one sweep simulation and the sweep journal built
 * from it (see sweep_run.h). The same record travels over an isolated
 * child's pipe and into the journal, so there is one encoder and one
 * parser, and the parser trusts nothing: a record is applied only when its
 * checksum matches and every field is one this plan can produce. Doubles
 * are stored bit for bit, so a resumed or isolated result is bit-identical
 * to one computed in process.
 *
 * Record: 64 bytes, native byte order (the journal is a file of this
 * machine's run; the header says which order), then a trailer:
 *      0  u64  simulation index (plan order)
 *      8  f64  energy_j, time_s, cost, steady_energy, steady_time
 *     48  i32  final_bs, final_pl
 *     56  u32  bit 31: failed; bits 0..30: trailer bytes
 *     60  u32  CRC-32 (zlib) of bytes 0..59 and the trailer
 * Trailer: a failed simulation's message; for a successful one, with a
 * carbon or price series its grams and dollars (f64 x 2), then with curves
 * its cost per recurrence (f64 x R).
 *
 * Journal file: a 64-byte header
 *      0  "wattsim-jrnl-v3\n"
 *     16  u32  0x01020304 (byte order), u32 curves
 *     24  u64  simulations in the plan
 *     32  sha256 of the plan (ws_sweep_fingerprint's whole)
 *     64  u64  P, then P bytes: the fingerprint's parts, each with its
 *              hash and readable value (ws_sweep_fp_encode), so that a
 *              refused resume or merge names what changed
 * (a v2 journal, of wattsim 0.3 and before, has the 64 bytes only: read
 * alike, but a plan that differs is refused without naming the part)
 * then one record per finished simulation, in completion order (failures
 * with their message: --resume runs them again, a merge takes them),
 * written in batches (ws_batchfile): handed to the kernel when 64 KiB are
 * waiting, at least once a second, at the end, and when the process dies
 * of a signal or a policy's exit(). A process killed outright (SIGKILL, a
 * machine going down) loses at most its last second's records, which
 * --resume runs again; a last record cut short (the process died while
 * writing it) is ignored, and every record carries its CRC: a journal is
 * never read wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "sweep_run.h"
#include "wattsim/input.h"
#include "wattsim/outfile.h"
#include "wattsim/rng.h"
#include "wattsim/sha256.h"

#define FAILED_BIT 0x80000000u
static const char MAGIC[16] = "wattsim-jrnl-v3\n";
static const char MAGIC_V2[16] = "wattsim-jrnl-v2\n";     /* no parts */
/* The most bytes of parts a header may claim (a plan of 100,000 jobs). */
#define MAX_PARTS_BYTES ((uint64_t)64 << 20)

/* ------------------------------------------------------------ records */

static uint32_t crc_of(const unsigned char *rec, const void *trailer, size_t n)
{
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, rec, 60);
    if (n) c = crc32(c, trailer, (uInt)n);
    return (uint32_t)c;
}

/* Bytes of grams and dollars a success carries (with a series). */
static size_t amounts_len(const ws_sweep *s)
{
    return ws_whatif_accounts(s->whatif) ? 2 * sizeof(double) : 0;
}

/* Encode simulation i's record and hand its two parts (the 64 bytes, the
 * trailer) to emit. */
typedef int (*emit_fn)(void *ctx, const unsigned char *rec, const void *trailer, size_t n);

static int encode(const ws_sweep *s, size_t i, const ws_sweep_sim *m, const char *msg,
                  emit_fn emit, void *ctx)
{
    ws_sweep_sim got;
    if (!m) {
        ws_sweep_sim_get(s, i, &got);
        m = &got;
    }
    unsigned char rec[WS_RECORD_SIZE] = {0};
    uint64_t idx = i;
    double d[5] = {m->energy_j, m->time_s, m->cost, m->steady_energy, m->steady_time};
    int32_t k[2] = {m->final_bs, m->final_pl};
    const void *trailer = NULL;
    void *buf = NULL;
    size_t n = 0;
    if (m->failed) {
        trailer = msg ? msg : ws_sweep_sim_error(s, i);
        n = strlen(trailer);
        if (n > WS_ERROR_MAX) n = WS_ERROR_MAX;
    } else if (amounts_len(s)) {
        size_t nc = s->curves ? (size_t)ws_sweep_recurrences(s, i) * sizeof(double) : 0;
        n = amounts_len(s) + nc;
        if (!(buf = malloc(n))) return -1;
        double a[2] = {m->co2_g, m->usd};
        memcpy(buf, a, sizeof a);
        if (nc) memcpy((char *)buf + sizeof a, m->rec_cost, nc);
        trailer = buf;
    } else if (s->curves) {
        trailer = m->rec_cost;
        n = (size_t)ws_sweep_recurrences(s, i) * sizeof(double);
    }
    uint32_t info = (uint32_t)n | (m->failed ? FAILED_BIT : 0);
    memcpy(rec, &idx, 8);
    memcpy(rec + 8, d, 40);
    memcpy(rec + 48, k, 8);
    memcpy(rec + 56, &info, 4);
    uint32_t crc = crc_of(rec, trailer, n);
    memcpy(rec + 60, &crc, 4);
    int rc = emit(ctx, rec, trailer, n);
    free(buf);
    return rc ? -1 : 0;
}

static int emit_file(void *ctx, const unsigned char *rec, const void *trailer, size_t n)
{
    FILE *f = ctx;
    return fwrite(rec, 1, WS_RECORD_SIZE, f) != WS_RECORD_SIZE
           || (n && fwrite(trailer, 1, n, f) != n);
}

static int emit_batch(void *ctx, const unsigned char *rec, const void *trailer, size_t n)
{
    return ws_batch_add(ctx, rec, WS_RECORD_SIZE, trailer, n);
}

int ws_sweep_record_write(FILE *f, const ws_sweep *s, size_t i, const ws_sweep_sim *m,
                          const char *msg)
{
    return encode(s, i, m, msg, emit_file, f);
}

/* The largest trailer a record of this sweep may carry. */
static size_t max_trailer(const ws_sweep *s, uint32_t info)
{
    if (info & FAILED_BIT) return WS_ERROR_MAX;
    return amounts_len(s) + (s->curves ? (size_t)WS_MAX_RECURRENCES * sizeof(double) : 0);
}

size_t ws_sweep_record_len(const ws_sweep *s, const unsigned char *rec)
{
    uint32_t info;
    memcpy(&info, rec + 56, 4);
    size_t n = info & ~FAILED_BIT;
    return n > max_trailer(s, info) ? 0 : WS_RECORD_SIZE + n;
}

/* A number a simulation can produce: finite and not negative. */
static int bad_number(double x, const char *what, size_t i, ws_error *err)
{
    if (isfinite(x) && x >= 0) return 0;
    return ws_fail(err, "simulation %zu: %s is %g, not a finite number >= 0", i, what, x);
}

/* The knob is one of the job's: a batch size of its table and one of that
 * size's power limits. */
static int bad_knob(const ws_sweep *s, size_t i, int bs, int pl, ws_error *err)
{
    size_t n_cell = s->n_gpus * s->n_work * s->n_etas * s->n_betas * s->n_seeds;
    size_t job_cell = (i % n_cell) / (s->n_etas * s->n_betas * s->n_seeds);
    const ws_job *job = &s->jobs[job_cell].job;
    for (int b = 0; b < job->n_bs; b++) {
        if (job->bs[b] != bs) continue;
        for (int k = job->knob_start[b]; k < job->knob_start[b + 1]; k++)
            if (job->knob_pl[k] == pl) return 0;
        return ws_fail(err, "simulation %zu: final power limit %d W is not one of batch size"
                       " %d's in the trace", i, pl, bs);
    }
    return ws_fail(err, "simulation %zu: final batch size %d is not one of the job's", i, bs);
}

int ws_sweep_record_parse(ws_sweep *s, const unsigned char *rec, int apply, size_t *idx,
                          int *ok, ws_error *err)
{
    uint64_t i;
    double d[5];
    int32_t k[2];
    uint32_t info, crc;
    memcpy(&i, rec, 8);
    memcpy(d, rec + 8, 40);
    memcpy(k, rec + 48, 8);
    memcpy(&info, rec + 56, 4);
    memcpy(&crc, rec + 60, 4);
    size_t n = info & ~FAILED_BIT;
    const unsigned char *trailer = rec + WS_RECORD_SIZE;
    if (n > max_trailer(s, info)) return ws_fail(err, "a record of impossible length");
    if (crc != crc_of(rec, trailer, n))
        return ws_fail(err, "bad checksum (the record was damaged or edited)");
    if (i >= s->n_sims)
        return ws_fail(err, "simulation %llu is not in this plan of %zu",
                       (unsigned long long)i, s->n_sims);
    *idx = (size_t)i;
    if (info & FAILED_BIT) {
        char msg[WS_ERROR_MAX + 1];
        memcpy(msg, trailer, n);
        msg[n] = '\0';
        if (strlen(msg) != n || strchr(msg, '\n'))
            return ws_fail(err, "simulation %zu: a failure message that is not one line", *idx);
        *ok = 0;
        if (apply) ws_sweep_sim_fail(s, *idx, msg);
        return 0;
    }
    long R = ws_sweep_recurrences(s, *idx);
    const size_t na = amounts_len(s);
    if (n != na + (s->curves ? (size_t)R * sizeof(double) : 0))
        return ws_fail(err, "simulation %zu: %zu bytes after the record, expected %zu"
                       " (%s)", *idx, n, na + (s->curves ? (size_t)R * sizeof(double) : 0),
                       na ? "grams and dollars, then per-recurrence costs"
                          : "per-recurrence costs");
    double amt[2] = {0, 0};
    if (na) memcpy(amt, trailer, sizeof amt);
    if (bad_number(amt[0], "CO2", *idx, err) || bad_number(amt[1], "money", *idx, err))
        return -1;
    trailer += na;
    n -= na;
    static const char *names[5] = {"energy", "time", "cost", "steady-state energy",
                                   "steady-state time"};
    for (int q = 0; q < 5; q++)
        if (bad_number(d[q], names[q], *idx, err)) return -1;
    for (long r = 0; r < (s->curves ? R : 0); r++) {
        double x;
        memcpy(&x, trailer + (size_t)r * sizeof x, sizeof x);
        if (bad_number(x, "a recurrence's cost", *idx, err)) return -1;
    }
    if (bad_knob(s, *idx, k[0], k[1], err)) return -1;
    *ok = 1;
    if (!apply) return 0;
    double *rc = ws_sweep_store_rec(s, *idx);
    ws_sweep_sim m = {.energy_j = d[0], .time_s = d[1], .cost = d[2], .steady_energy = d[3],
                      .steady_time = d[4], .final_bs = k[0], .final_pl = k[1],
                      .co2_g = amt[0], .usd = amt[1]};
    ws_sweep_store_put(s, *idx, &m);
    if (rc) memcpy(rc, trailer, n);
    return 0;
}

/* ------------------------------------------------------------ journal */

static void make_header(unsigned char hdr[WS_RECORD_SIZE], const unsigned char fp[32],
                        const ws_sweep *s)
{
    uint32_t order = 0x01020304u, curves = (uint32_t)s->curves;
    uint64_t n = s->n_sims;
    memset(hdr, 0, WS_RECORD_SIZE);
    memcpy(hdr, MAGIC, 16);
    memcpy(hdr + 16, &order, 4);
    memcpy(hdr + 20, &curves, 4);
    memcpy(hdr + 24, &n, 8);
    memcpy(hdr + 32, fp, 32);
}

/* Write the whole header: the 64 bytes, then the parts. */
static int write_header(FILE *f, const ws_sweep_fp *fp, const ws_sweep *s)
{
    unsigned char hdr[WS_RECORD_SIZE];
    char *parts = NULL;
    size_t len = 0;
    make_header(hdr, fp->all, s);
    if (ws_sweep_fp_encode(fp, &parts, &len)) return -1;
    uint64_t n = len;
    int bad = fwrite(hdr, 1, sizeof hdr, f) != sizeof hdr || fwrite(&n, 1, 8, f) != 8
              || fwrite(parts, 1, len, f) != len;
    free(parts);
    return bad ? -1 : 0;
}

/* Read the header after its 64 bytes: a v3 journal's parts into *old
 * (left empty for a v2 journal, or parts that do not check), and where the
 * records start. -1 when the file ends inside it. */
static int read_parts(FILE *f, const unsigned char hdr[WS_RECORD_SIZE], ws_sweep_fp *old,
                      long *records)
{
    memset(old, 0, sizeof *old);
    *records = WS_RECORD_SIZE;
    if (memcmp(hdr, MAGIC, 16)) return 0;                  /* v2: no parts */
    uint64_t n;
    if (fread(&n, 1, 8, f) != 8 || n > MAX_PARTS_BYTES) return -1;
    char *buf = malloc(n ? (size_t)n : 1);
    if (!buf) return -1;
    int rc = fread(buf, 1, (size_t)n, f) == (size_t)n ? 0 : -1;
    /* parts that do not decode only cost the message its detail */
    if (!rc) ws_sweep_fp_decode(buf, (size_t)n, old);
    free(buf);
    *records = WS_RECORD_SIZE + 8 + (long)n;
    return rc;
}

/* Read an existing journal into s, checking every record before using
 * any; 1 when there is none. Resuming (merge = 0), failed simulations are
 * left to run again; merging, a failure is a result like a success. */
static int load(const char *path, ws_sweep *s, const ws_sweep_fp *fp, unsigned char *todo,
                size_t *n_reused, int merge, ws_error *err)
{
    /* Resuming, the journal is in the output folder (read through its
     * descriptor, never through a link); merging, a shard's is an input. */
    FILE *f = NULL;
    /* Without blocking, and a regular file only: a FIFO in a shard's
     * folder blocked the open for ever, a device never ends. */
    int fd = merge ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
                   : ws_outfile_openat(path, O_RDONLY | O_NONBLOCK);
    if (merge && fd >= 0) ws_input_note_fd(fd);   /* never replaced, never removed */
    struct stat st;
    if (fd >= 0 && !fstat(fd, &st) && !S_ISREG(st.st_mode)) {
        close(fd);
        return ws_fail(err, "%s: not a regular file (%s); a journal is one", path,
                       ws_input_kind(st.st_mode));
    }
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0) f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd);
        if (e == ENOENT) return 1;
        return ws_fail(err, "%s: cannot read the journal: %s", path, strerror(e));
    }
    unsigned char hdr[WS_RECORD_SIZE], want[WS_RECORD_SIZE];
    unsigned char *buf = malloc(WS_RECORD_SIZE);
    size_t cap = WS_RECORD_SIZE;
    int rc = 0;
    long records = WS_RECORD_SIZE;
    ws_sweep_fp old = {0};
    const char *todo_msg = merge ? "merge with the config, --policies, traces and plugin"
                                   " files the shards ran with"
                                 : "rerun without --resume into a new folder, or pass --force"
                                   " without --resume to start over";
    make_header(want, fp->all, s);
    if (!buf) rc = ws_fail(err, "out of memory");
    else if (fread(hdr, 1, sizeof hdr, f) != sizeof hdr
             || (memcmp(hdr, MAGIC, 16) && memcmp(hdr, MAGIC_V2, 16))
             || memcmp(hdr + 16, want + 16, 8) || read_parts(f, hdr, &old, &records))
        rc = ws_fail(err, "%s: not a wattsim sweep journal of this version and machine (or of"
                     " %s): %s", path, s->curves ? "a sweep, not curves" : "curves, not a sweep",
                     merge ? "merge the shards with the wattsim and the command (sweep or"
                             " curves) that ran them"
                           : "pass --force without --resume to start over");
    else if (memcmp(hdr + 24, want + 24, 40)) {
        char what[WS_ERROR_MAX];
        uint64_t n;
        memcpy(&n, hdr + 24, 8);
        if (ws_sweep_fp_diff(&old, fp, merge ? "in the shard's journal" : "in the journal",
                             "now", what, sizeof what))
            rc = ws_fail(err, "%s: cannot %s: %s; %s", path,
                         merge ? "merge this shard" : "resume", what, todo_msg);
        else {
            /* An old journal (no parts) or parts that do not tell: the
             * whole only. The fingerprint covers the pairs and their
             * parameters, each plugin file's sha256 (a rebuilt plugin is
             * another plan), the axes, the what-ifs and the traces. */
            char got[65], mine[65];
            ws_sha256_hex(hdr + 32, got);
            ws_sha256_hex(fp->all, mine);
            rc = ws_fail(err, "%s: the journal is of another plan (fingerprint %s, %llu"
                         " simulations; this %s: %s, %zu; a policy, its parameters, a plugin"
                         " file's sha256 (a rebuilt plugin), an axis or the traces differ): %s",
                         path, got, (unsigned long long)n, merge ? "merge" : "sweep", mine,
                         s->n_sims, todo_msg);
        }
    }
    ws_sweep_fp_free(&old);
    /* Two passes: check everything, then apply (a bad record anywhere
     * leaves s untouched). The first pass marks what it saw in `seen`. */
    unsigned char *seen = rc ? NULL : calloc(s->n_sims ? s->n_sims : 1, 1);
    if (!rc && !seen) rc = ws_fail(err, "out of memory");
    for (int apply = 0; apply < 2 && !rc; apply++) {
        if (fseek(f, records, SEEK_SET)) {
            rc = ws_fail(err, "%s: cannot read the journal: %s", path, strerror(errno));
            break;
        }
        long long at = records;
        for (size_t no = 1;; no++) {
            size_t got = fread(buf, 1, WS_RECORD_SIZE, f);
            if (got < WS_RECORD_SIZE) break;                 /* cut short by a crash */
            size_t len = ws_sweep_record_len(s, buf);
            if (!len) {
                rc = ws_fail(err, "%s: record %zu (byte %lld): a record of impossible length",
                             path, no, at);
                break;
            }
            if (len > cap) {
                unsigned char *b = realloc(buf, len);
                if (!b) { rc = ws_fail(err, "out of memory"); break; }
                buf = b;
                cap = len;
            }
            if (fread(buf + WS_RECORD_SIZE, 1, len - WS_RECORD_SIZE, f) != len - WS_RECORD_SIZE)
                break;                                       /* cut short by a crash */
            size_t i;
            int ok;
            if (ws_sweep_record_parse(s, buf, 0, &i, &ok, err)) {
                rc = ws_fail_prefix(err, "%s: record %zu (byte %lld)", path, no, at);
                break;
            }
            /* Resuming, a failure is not applied: it runs again (and its
             * message must not outlive it as its cell's first). Nor is a
             * simulation this process does not run (another shard's) or
             * already took from another journal. */
            int counts = ok || merge;
            if (apply && !merge && !todo[i]) counts = 0;
            if (apply && counts && ws_sweep_record_parse(s, buf, 1, &i, &ok, err)) {
                rc = ws_fail_prefix(err, "%s: record %zu (byte %lld)", path, no, at);
                break;
            }
            if (!apply && counts && (seen[i] || (merge && !todo[i]))) {
                rc = ws_fail(err, "%s: record %zu (byte %lld): simulation %zu is recorded twice",
                             path, no, at, i);
                break;
            }
            if (!apply && counts) seen[i] = 1;
            if (apply && counts) { todo[i] = 0; ++*n_reused; }
            at += (long long)len;
        }
    }
    free(seen);
    if (!rc && ferror(f)) rc = ws_fail(err, "%s: cannot read the journal", path);
    free(buf);
    fclose(f);
    return rc;
}

int ws_journal_start(ws_journal *j, const char *path, const char *const *others,
                     size_t n_others, ws_sweep *s, const ws_sweep_fp *fp, int resume,
                     unsigned char *todo, size_t *n_reused, ws_error *err)
{
    j->open = 0;
    j->path = path;
    *n_reused = 0;
    /* What this process runs, before a journal takes some of it. */
    unsigned char *mine = malloc(s->n_sims ? s->n_sims : 1);
    if (!mine) return ws_fail(err, "out of memory");
    memcpy(mine, todo, s->n_sims);
    for (size_t k = 0; resume && k <= n_others; k++) {
        int rc = load(k ? others[k - 1] : path, s, fp, todo, n_reused, 0, err);
        if (rc < 0) { free(mine); return rc; }
    }
    /* Rewrite it whole and atomically (a crash now keeps the old one), with
     * only what is reused, then append to it. */
    ws_outfile of = {0};
    if (ws_outfile_open(&of, path, err)) { free(mine); return -1; }
    int bad = write_header(of.f, fp, s);
    ws_sweep_cursor cur;
    ws_sweep_cursor_init(&cur, s, 4096);
    for (size_t i = 0; !bad && i < s->n_sims; i++)
        if (mine[i] && !todo[i])
            bad = ws_sweep_record_write(of.f, s, i, ws_sweep_sim_at(&cur, i), NULL) < 0;
    ws_sweep_cursor_free(&cur);
    free(mine);
    if (bad) {
        ws_outfile_abort(&of);
        return ws_fail(err, "%s: cannot write the journal: %s", path, strerror(errno));
    }
    if (ws_outfile_commit(&of, err)) return -1;
    /* Records are appended in batches (see ws_journal_add). */
    if (ws_batch_open(&j->b, path, WS_JOURNAL_BATCH, WS_JOURNAL_SECONDS, err))
        return ws_fail_prefix(err, "the journal");
    j->open = 1;
    return 0;
}

int ws_journal_merge(const char *path, ws_sweep *s, const ws_sweep_fp *fp,
                     unsigned char *todo, size_t *n_got, ws_error *err)
{
    int rc = load(path, s, fp, todo, n_got, 1, err);
    if (rc == 1) return ws_fail(err, "%s: no such journal", path);
    return rc;
}

int ws_journal_add(ws_journal *j, const ws_sweep *s, size_t i, const char *msg)
{
    if (!j->open) return 0;
    /* To the batch, handed to the kernel when full and at least every
     * WS_JOURNAL_SECONDS (and when the process dies of a signal): a
     * process killed outright loses only the records of that last
     * stretch, which --resume runs again. */
    return encode(s, i, NULL, msg, emit_batch, &j->b);
}

int ws_journal_flush(ws_journal *j)
{
    return j->open ? ws_batch_flush(&j->b) : 0;
}

void ws_journal_close(ws_journal *j)
{
    if (j->open) ws_batch_close(&j->b);
    j->open = 0;
}
