/*
 * The policy conformance checker behind `wattsim policy check`: loads a
 * plugin and exercises each of its policies (or the one named) on
 * generated jobs, reporting one pass/fail result per check.
 *
 * Checks, per policy:
 *   load         the file loads: ABI version, entry point, required
 *                functions, unique names, parameter specs (duplicates,
 *                bounds, defaults)
 *   params       the parameters resolve (defaults, or the ones given) and
 *                create() accepts them; nothing else runs when it fails
 *   one-size     a job with a single batch size
 *   many-sizes   a job with 8 sizes, one of which never reaches the target
 *   eta-0, eta-1 time only, energy only
 *   no-early-stop  beta = infinity
 *   carbon       the context carries a carbon intensity that varies by
 *                recurrence (price NAN)
 *   price        the context carries a price that varies (carbon NAN)
 *   concurrent   (BSO) two submissions in flight: observations arrive for
 *                sizes the policy did not just predict, out of order
 *   determinism  the same seed gives the same runs, twice
 *   independence two live instances give what one alone gives (no state
 *                shared between instances)
 *   leak         `jobs` jobs (create, simulate, destroy): resident memory
 *                growth after the first tenth stays under 8 MiB
 *   timing       mean time per policy call over those jobs (fails above
 *                1 ms)
 *   stdout       nothing was written to standard output, in any check
 * Answers are checked by the host on every call (a batch size outside the
 * job's, a power limit not measured, no answer after profiling, an error
 * return), so any of the simulating checks fails on such an answer, with
 * the host's message.
 *
 * Loading and each check run in a child process of their own with a time
 * limit: a crash, an exit() or a hang in the policy fails that check,
 * naming the call and the signal, and the checker goes on. Once a call
 * has hung (did not return within the time limit), the policy's remaining
 * checks, which all need it, are skipped ("skipped (predict hung in check
 * one-size)"), so a hanging policy costs one time limit, not one per
 * check. The plugin is never loaded into the calling process; a SIGINT,
 * SIGTERM, SIGHUP or SIGQUIT to it kills the running check's process
 * group before the signal takes effect (wattsim/subprocess.h).
 */
#ifndef WATTSIM_CONFORMANCE_H
#define WATTSIM_CONFORMANCE_H

#include <stddef.h>
#include "wattsim/config.h"
#include "wattsim/error.h"

/* What a check came to. */
enum { WS_CHECK_FAIL = 0, WS_CHECK_PASS = 1, WS_CHECK_SKIP = 2 };

/* One result (WS_CHECK_*), the check's name, the policy ("bso NAME"; ""
 * for the file), and a detail line (escaped: one line). */
typedef void (*ws_check_fn)(void *ctx, int result, const char *check, const char *who,
                            const char *detail);

typedef struct ws_check_opts {
    long jobs;                 /* jobs of the leak check (10^4 in `policy check`) */
    double timeout;            /* seconds each check may take; 0: no limit */
    const ws_param_raw *params;    /* parameters of the policy checked */
    size_t n_params;
} ws_check_opts;

/* Check `target`: a plugin file (ending in .so: each of its policies, or
 * only the one named `only` when not NULL) or a policy as --bso/--plo
 * name it (NAME, FILE.so:NAME, ...: the BSO and/or PLO of that name).
 * Parameters apply to the one policy checked. Returns the number of
 * failed checks, or -1 with err set when there is nothing to check (no
 * policy `only`), the parameters do not fit the policy (an unknown name, a
 * value out of bounds) or apply to several, or a check's process cannot
 * be started. A target that does not load is a failed `load` check. */
int ws_conformance_check(const char *target, const char *only, const ws_check_opts *o,
                         ws_check_fn fn, void *ctx, ws_error *err);

#endif
