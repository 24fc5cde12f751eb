/*
 * MPI (the optional -DWATTSIM_MPI=ON build): a sweep's simulations sharded
 * over the ranks of MPI_COMM_WORLD (rank r runs those i with i mod R = r,
 * as --shard r/R) and reduced on rank 0. The reduction is not arithmetic:
 * every rank sends its simulations' records (journal.c's 64-byte records
 * with their checksums, the same bytes a journal or an isolated cell's
 * pipe carries), rank 0 checks and stores each at its plan index, and the
 * summaries are then computed in plan order exactly as in one process:
 * the outputs are byte-identical for any number of ranks.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_run.h"

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

int ws_mpi_gather_bytes(const char *buf, size_t len, char **all, size_t *total,
                        ws_error *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *all = NULL;
    *total = 0;
    if (!ws_mpi_all_ok(len <= (size_t)0x7fffffff))      /* MPI counts are int */
        return ws_fail(err, "MPI: over 2 GiB of results on one rank: use more ranks");
    int mine = (int)len, *counts = NULL, *displs = NULL;
    if (rank == 0) {
        counts = calloc((size_t)size, sizeof *counts);
        displs = calloc((size_t)size, sizeof *displs);
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long long sum = 0;
    char *buf0 = NULL;
    if (rank == 0 && counts && displs) {
        for (int r = 0; r < size; r++) { displs[r] = (int)sum; sum += counts[r]; }
        buf0 = sum > 0 && sum <= 0x7fffffff ? malloc((size_t)sum) : NULL;
    }
    int can = rank != 0 || (counts && displs && sum <= 0x7fffffff && (buf0 || sum == 0));
    if (!ws_mpi_all_ok(can)) {
        free(counts); free(displs); free(buf0);
        return ws_fail(err, "MPI: rank 0 cannot hold every rank's results");
    }
    /* One gather: fine up to 2 GiB in all. */
    MPI_Gatherv(buf, mine, MPI_BYTE, buf0, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    *all = buf0;
    *total = (size_t)sum;
    return 0;
}

int ws_sweep_gather(ws_sweep *s, int rank, int size, ws_error *err)
{
    /* This rank's records, in plan order. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int bad = !f;
    for (size_t i = (size_t)rank; !bad && i < s->n_sims; i += (size_t)size)
        bad = ws_sweep_record_write(f, s, i, NULL, NULL) < 0;
    if (f && fclose(f)) bad = 1;
    if (!ws_mpi_all_ok(!bad)) {
        free(buf);
        return ws_fail(err, "MPI: a rank could not pack its results (out of memory)");
    }
    char *all;
    size_t total;
    int rc = ws_mpi_gather_bytes(buf, len, &all, &total, err);
    free(buf);
    if (rc || rank != 0) { free(all); return rc; }
    /* Apply every record, by index: the order they came in is irrelevant. */
    const unsigned char *p = (const unsigned char *)all, *end = p + total;
    size_t got = 0;
    while (p < end && !rc) {
        size_t left = (size_t)(end - p);
        size_t n = left < WS_RECORD_SIZE ? 0 : ws_sweep_record_len(s, p);
        size_t i;
        int okr;
        if (!n || n > left) rc = ws_fail(err, "MPI: a cut-off record from a rank");
        else if (ws_sweep_record_parse(s, p, 1, &i, &okr, err))
            rc = ws_fail_prefix(err, "MPI: a bad record from a rank");
        p += n;
        got++;
    }
    if (!rc && got != s->n_sims)
        rc = ws_fail(err, "MPI: %zu results for %zu simulations", got, s->n_sims);
    s->n_failed = 0;
    ws_sweep_cursor cur;
    ws_sweep_cursor_init(&cur, s, 4096);
    for (size_t i = 0; i < s->n_sims; i++) s->n_failed += (size_t)ws_sweep_sim_at(&cur, i)->failed;
    ws_sweep_cursor_free(&cur);
    if (!rc && ws_sweep_io_error(s, err)) rc = -1;
    free(all);
    return rc;
}
