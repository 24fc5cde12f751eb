/*
 * The policy conformance checker behind `wattsim policy check`: loads a
 * plugin and exercises each of its policies (or the one named) on
 * generated jobs, reporting one pass/fail result per check.
 *
 * Checks, per policy:
 *   load         the file loads: ABI version, required functions, unique
 *                names, parameter specs (duplicates, bounds, defaults)
 *   params       the defaults resolve and create() accepts them
 *   one-size     a job with a single batch size
 *   many-sizes   a job with 8 sizes, one of which never reaches the target
 *   eta-0, eta-1 time only, energy only
 *   no-early-stop  beta = infinity
 *   concurrent   (BSO) two submissions in flight: observations arrive for
 *                sizes the policy did not just predict, out of order
 *   determinism  the same seed gives the same runs, twice
 *   independence two live instances give what one alone gives (no state
 *                shared between instances)
 *   leak         10^4 jobs (create, simulate, destroy): resident memory
 *                growth after the first 10^3 stays under 8 MiB
 *   timing       mean time per policy call over those jobs (fails above
 *                1 ms)
 * Answers are checked by the host on every call (a batch size outside the
 * job's, a power limit not measured, no answer after profiling, an error
 * return), so any of the simulating checks fails on such an answer, with
 * the host's message.
 */
#ifndef WATTSIM_CONFORMANCE_H
#define WATTSIM_CONFORMANCE_H

#include "wattsim/error.h"

/* One result: pass (1) or fail (0), the check's name, the policy ("bso
 * NAME"; "" for the file), and a detail line. */
typedef void (*ws_check_fn)(void *ctx, int pass, const char *check, const char *who,
                            const char *detail);

/* Check the plugin at `path` (only the policy `only` when not NULL).
 * `jobs` is the number of jobs of the leak check (10^4 in `policy check`).
 * Returns the number of failed checks, or -1 with err set when there is
 * nothing to check (the file does not define `only`). */
int ws_conformance_check(const char *path, const char *only, long jobs, ws_check_fn fn,
                         void *ctx, ws_error *err);

#endif
