/*
 * MPI (the optional -DWATTSIM_MPI=ON build): a sweep's simulations sharded
 * over the ranks of MPI_COMM_WORLD (rank r runs those i with i mod R = r,
 * as --shard r/R) and reduced on rank 0. The reduction is not arithmetic:
 * every rank sends its simulations' records (journal.c's 64-byte records
 * with their checksums, the same bytes a journal or an isolated cell's
 * pipe carries), rank 0 checks and stores each at its plan index, and the
 * summaries are then computed in plan order exactly as in one process:
 * the outputs are byte-identical for any number of ranks.
 *
 * Bounded memory (issue 10): the records travel as a stream, not as one
 * gather. Each rank r > 0 packs its records, in plan order, into messages
 * of at most GATHER_BYTES (a single longer record, with a long curve, goes
 * alone), sent synchronously (MPI_Ssend: no message waits unreceived in
 * rank 0's memory), then an empty message tagged END (or FAIL when it
 * could not pack). Rank 0 takes the ranks one after the other, and each
 * message's records go straight into its store, which spills to its file
 * past the threshold like one process's: rank 0 holds one message at a
 * time, whatever the number of simulations. Its own records are in its
 * store already (it ran shard 0/R).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_run.h"

/* A message's bytes of records: 16384 plain records. */
#define GATHER_BYTES ((size_t)1 << 20)
enum { TAG_RECORDS = 1, TAG_END = 2, TAG_FAIL = 3 };
int ws_mpi_active(int *rank, int *size)
{
    int up = 0;
    MPI_Initialized(&up);
    *rank = 0;
    *size = 1;
    if (!up) return 0;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return *size > 1;
}

int ws_mpi_all_ok(int ok)
{
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

int ws_mpi_agree(int ok, ws_error *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = ok ? size : rank, first = size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == size) return 1;
    /* The first failing rank's message, for rank 0 to print. */
    char msg[WS_ERROR_MAX];
    memcpy(msg, err->msg, sizeof msg);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    msg[sizeof msg - 1] = '\0';
    if (first == 0) memcpy(err->msg, msg, sizeof msg);
    else ws_fail(err, "rank %d: %s", first, msg);
    return 0;
}

int ws_mpi_same_plan(const ws_sweep_fp *fp, ws_error *err)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Rank 0's whole fingerprint and its parts, encoded as a journal's
     * header carries them, to every rank. */
    char *parts = NULL;
    size_t len = 0;
    unsigned long long n0 = 0;
    if (rank == 0) {
        if (ws_sweep_fp_encode(fp, &parts, &len) || len > (size_t)INT_MAX - 32) {
            fprintf(stderr, "wattsim: MPI: cannot encode the plan's fingerprint\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        n0 = len;
    }
    MPI_Bcast(&n0, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    unsigned char *theirs = malloc((size_t)n0 + 32);
    if (!theirs) {
        /* every rank waits in the broadcast below: nothing to agree with */
        fprintf(stderr, "wattsim: MPI: out of memory for rank 0's fingerprint\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        memcpy(theirs, fp->all, 32);
        memcpy(theirs + 32, parts, len);
    }
    free(parts);
    MPI_Bcast(theirs, (int)(n0 + 32), MPI_BYTE, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank != 0 && memcmp(theirs, fp->all, 32)) {
        ws_sweep_fp zero = {0};
        char what[WS_ERROR_MAX];
        int named = !ws_sweep_fp_decode(theirs + 32, (size_t)n0, &zero)
                    && ws_sweep_fp_diff(&zero, fp, "on rank 0", "here", what, sizeof what);
        ws_sweep_fp_free(&zero);
        rc = ws_fail(err, "its plan differs from rank 0's: %s; every rank must read the same"
                     " config and options, the same traces and the same plugin builds",
                     named ? what : "in its size");
    }
    free(theirs);
    return rc;
}

void ws_mpi_send0(const void *buf, size_t len, int ok)
{
    MPI_Ssend(buf, (int)len, MPI_BYTE, 0, ok ? TAG_RECORDS : TAG_FAIL, MPI_COMM_WORLD);
}

int ws_mpi_recv_from(int from, char **buf, size_t *cap, size_t *len)
{
    MPI_Status st;
    int count = 0;
    MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    size_t n = count > 0 ? (size_t)count : 0;
    if (n + 1 > *cap) {
        char *nb = realloc(*buf, n + 1);
        if (!nb) {
            /* Nowhere to receive it, and the sender waits for it. */
            fprintf(stderr, "wattsim: MPI: out of memory for a message of %zu bytes from"
                    " rank %d\n", n, from);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        *buf = nb;
        *cap = n + 1;
    }
    MPI_Recv(*buf, count, MPI_BYTE, from, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    (*buf)[n] = '\0';
    *len = n;
    return st.MPI_TAG != TAG_FAIL;
}

/* Rank r > 0: its records to rank 0 in messages of at most GATHER_BYTES,
 * then END, or FAIL as soon as one cannot be packed. Returns 0, or -1
 * when it sent FAIL. */
static int send_records(const ws_sweep *s, int rank, int size)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = NULL;
    int bad = 0;
    ws_error e;
    for (size_t i = (size_t)rank; !bad; i += (size_t)size) {
        int last = i >= s->n_sims;
        if (!last) {
            if (!f && !(f = open_memstream(&buf, &len))) { bad = 1; break; }
            bad = ws_sweep_record_write(f, s, i, NULL, NULL) < 0;
        }
        long at = f && !bad ? ftell(f) : 0;         /* the bytes so far */
        if (!bad && f && (last || at < 0 || (size_t)at >= GATHER_BYTES)) {
            bad = fclose(f) != 0 || len > (size_t)INT_MAX;     /* MPI counts are int */
            f = NULL;
            if (!bad) MPI_Ssend(buf, (int)len, MPI_BYTE, 0, TAG_RECORDS, MPI_COMM_WORLD);
            free(buf);
            buf = NULL;
            len = 0;
        }
        if (last) break;
    }
    if (f) fclose(f);
    free(buf);
    /* A read error of this rank's spill file gave failed simulations. */
    if (ws_sweep_io_error(s, &e)) bad = 1;
    MPI_Ssend(NULL, 0, MPI_BYTE, 0, bad ? TAG_FAIL : TAG_END, MPI_COMM_WORLD);
    return bad ? -1 : 0;
}

/* Rank 0: rank r's messages until its END or FAIL, each record checked and
 * stored (apply) while rc is 0; after an error the rest are received and
 * dropped, so that the rank is not left blocked. buf holds cap bytes, the
 * most a message can have (message_max). Adds the records to *got;
 * *failed when the rank sent FAIL. */
static int receive_records(ws_sweep *s, int r, int size, unsigned char *buf, size_t cap,
                           size_t *got, int *failed, int rc, ws_error *err)
{
    for (;;) {
        MPI_Status st;
        int count = 0;
        MPI_Probe(r, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        size_t n = count > 0 ? (size_t)count : 0;
        if (n > cap) {
            /* No rank of this build sends that: receiving it would cut it. */
            fprintf(stderr, "wattsim: MPI: a message of %zu bytes from rank %d, over the"
                    " %zu a message may have\n", n, r, cap);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Recv(buf, count, MPI_BYTE, r, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (st.MPI_TAG == TAG_FAIL) { *failed = 1; return rc; }
        if (st.MPI_TAG == TAG_END) return rc;
        const unsigned char *p = buf, *end = p + n;
        while (p < end && !rc) {
            size_t left = (size_t)(end - p);
            size_t len = left < WS_RECORD_SIZE ? 0 : ws_sweep_record_len(s, p);
            size_t i;
            int okr;
            if (!len || len > left)
                rc = ws_fail(err, "MPI: a cut-off record from rank %d", r);
            else if (ws_sweep_record_parse(s, p, 1, &i, &okr, err))
                rc = ws_fail_prefix(err, "MPI: a bad record from rank %d", r);
            else if (i % (size_t)size != (size_t)r)
                rc = ws_fail(err, "MPI: rank %d sent simulation %zu, not of its share", r, i);
            p += len;
            (*got)++;
        }
    }
}

/* The most bytes a message carries: under GATHER_BYTES of records, then
 * one more, of at most 64 bytes and the longest trailer (a failure's
 * message, or the what-if amounts and the longest job's curve). */
static size_t message_max(const ws_sweep *s)
{
    long rmax = 0;
    for (size_t j = 0; j < s->n_gpus * s->n_work; j++)
        if (s->recurrences[j] > rmax) rmax = s->recurrences[j];
    size_t trailer = 2 * sizeof(double) + (s->curves ? (size_t)rmax * sizeof(double) : 0);
    if (trailer < WS_ERROR_MAX) trailer = WS_ERROR_MAX;
    return GATHER_BYTES + WS_RECORD_SIZE + trailer;
}

int ws_sweep_gather(ws_sweep *s, int rank, int size, ws_error *err)
{
    int rc = 0, bad = 0;
    /* Rank 0's one buffer, before anything is sent. */
    size_t cap = rank == 0 ? message_max(s) : 0;
    unsigned char *buf = rank == 0 ? malloc(cap) : NULL;
    if (!ws_mpi_all_ok(rank != 0 || buf)) {
        free(buf);
        return ws_fail(err, "MPI: rank 0 is out of memory for the ranks' results");
    }
    if (rank != 0) {
        bad = send_records(s, rank, size) != 0;
    } else {
        size_t got = 0;
        for (int r = 1; r < size; r++)
            rc = receive_records(s, r, size, buf, cap, &got, &bad, rc, err);
        free(buf);
        /* Rank 0's own share: i = 0, R, 2R, ... */
        got += (s->n_sims + (size_t)size - 1) / (size_t)size;
        if (!rc && got != s->n_sims)
            rc = ws_fail(err, "MPI: %zu results for %zu simulations", got, s->n_sims);
    }
    if (!ws_mpi_all_ok(!bad))
        return ws_fail(err, "MPI: a rank could not send its results (out of memory, or its"
                       " spill file unreadable)");
    if (rank != 0) return 0;
    s->n_failed = 0;
    ws_sweep_cursor cur;
    ws_sweep_cursor_init(&cur, s, 4096);
    for (size_t i = 0; i < s->n_sims; i++) s->n_failed += (size_t)ws_sweep_sim_at(&cur, i)->failed;
    ws_sweep_cursor_free(&cur);
    if (!rc && ws_sweep_io_error(s, err)) rc = -1;
    return rc;
}
