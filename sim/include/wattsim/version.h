/*
 * wattsim's three versions, each printed on its own, in the same words
 * everywhere (`wattsim --version`, `policy check`, the JSON outputs'
 * "wattsim" member, pkg-config, the CMake package):
 *
 *   the package        WATTSIM_VERSION, MAJOR.MINOR.PATCH (semantic)
 *   the policy ABI     "policy ABI 2.3": policy.h's WS_ABI_MAJOR.WS_ABI_MINOR
 *   the random streams "random streams 2": rng.h's WS_STREAM_VERSION
 *
 * The package version moves with every change of the other two, so that
 * `find_package(wattsim 0.2)` or `pkg-config --atleast-version=0.2.0
 * wattsim` can tell the kits apart:
 *  - while MAJOR is 0, MINOR moves with every policy ABI change (a member
 *    or call appended is a new ABI minor version) and every stream change
 *    (the same seed giving other draws); PATCH with anything else;
 *  - from 1.0: MAJOR with an ABI major version or a stream change, MINOR
 *    with an ABI minor version or any other addition, PATCH with fixes.
 *
 * The ABI and stream versions this package version was made with are
 * recorded below, and the build fails when policy.h or rng.h no longer say
 * so (sim/src/report/version.c): an ABI or stream change cannot ship
 * without a new package version. CMakeLists.txt reads the version from
 * this file. The Python package (python/) ships with the library and has
 * the same version, written in python/pyproject.toml,
 * python/_build/wattsim_build.py and python/wattsim/__init__.py
 * (python/tests/test_api.py checks them against the library's).
 *
 * History: 0.1.0 policy ABI 1.0, random streams 1 (GSL's MT19937);
 *          0.2.0 policy ABI 2.1, random streams 2 (numpy's PCG64);
 *          0.3.0 policy ABI 2.2 (ws_job.gpus_per_job), random streams 2;
 *          0.4.0 policy ABI 2.3 (the schedule in ws_ctx, the forecast in
 *                ws_host), random streams 2.
 */
#ifndef WATTSIM_VERSION_H
#define WATTSIM_VERSION_H

#define WATTSIM_VERSION_MAJOR 0
#define WATTSIM_VERSION_MINOR 4
#define WATTSIM_VERSION_PATCH 0
#define WATTSIM_VERSION "0.4.0"

/* What WATTSIM_VERSION was made with (checked against policy.h, rng.h). */
#define WATTSIM_POLICY_ABI_MAJOR 2
#define WATTSIM_POLICY_ABI_MINOR 3
#define WATTSIM_POLICY_ABI "2.3"
#define WATTSIM_RANDOM_STREAMS 2

#endif
