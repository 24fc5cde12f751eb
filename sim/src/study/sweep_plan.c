/*
 * A sweep's plan (see wattsim/sweep.h): where simulation i sits on the
 * axes (pair x gpu x workload x eta x beta x seed, seed fastest), a cell's
 * name in messages, and the recurrences that count as steady state.
 *
 *   ws_sweep_index      axis indices -> plan index
 *   ws_sweep_axes       plan index -> axis indices (the inverse)
 *   ws_sweep_cell_name  "zeus+jit v100/squad eta 0.5 beta 2"
 *   ws_steady_count     the last 10 % of recurrences, at least 5
 *
 * The bottom of the study layer's sweep: it reads only the ws_sweep it is
 * given and calls nothing else of wattsim, so that the store
 * (sweep_store.c), the journal (journal.c), isolation (isolate.c), MPI
 * (sweep_mpi.c) and the summaries (sweep_summary.c) can use it without
 * calling sweep.c, which orchestrates on top of them all.
 */
#include "wattsim/sweep.h"

#include <math.h>
#include <stdio.h>

size_t ws_sweep_index(const ws_sweep *s, size_t pair, size_t gpu, size_t work,
                      size_t eta, size_t beta, size_t seed)
{
    return (((((pair * s->n_gpus + gpu) * s->n_work + work) * s->n_etas + eta)
             * s->n_betas + beta) * s->n_seeds) + seed;
}

void ws_sweep_axes(const ws_sweep *s, size_t i, size_t ax[6])
{
    size_t dims[6] = {s->n_pairs, s->n_gpus, s->n_work, s->n_etas, s->n_betas, s->n_seeds};
    for (int k = 5; k >= 0; k--) {
        ax[k] = i % dims[k];
        i /= dims[k];
    }
}

void ws_sweep_cell_name(const ws_sweep *s, size_t cell, char *buf, size_t n)
{
    size_t ax[6];
    ws_sweep_axes(s, cell * s->n_seeds, ax);
    snprintf(buf, n, "%s %s/%s eta %g beta %g", s->pairs[ax[0]].label, s->gpus[ax[1]],
             s->work[ax[2]], s->etas[ax[3]], s->betas[ax[4]]);
}

long ws_steady_count(long recurrences)
{
    long k = (long)ceil(0.1 * (double)recurrences);
    if (k < 5) k = 5;
    return k < recurrences ? k : recurrences;
}
