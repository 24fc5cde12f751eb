/*
 * The versions as outputs print them (wattsim/version.h): one line for
 * people, one JSON member for scripts. Also where the build checks that
 * the package version still names the policy ABI and random streams
 * policy.h and rng.h define.
 */
#include "wattsim/report.h"
#include "wattsim/json_writer.h"

#include "wattsim/policy.h"
#include "wattsim/rng.h"
#include "wattsim/version.h"

_Static_assert(WS_ABI_MAJOR == WATTSIM_POLICY_ABI_MAJOR
                   && WS_ABI_MINOR == WATTSIM_POLICY_ABI_MINOR,
               "policy.h's ABI version changed: give wattsim a new version in"
               " wattsim/version.h (MINOR while MAJOR is 0) and record the ABI there");
_Static_assert(WS_STREAM_VERSION == WATTSIM_RANDOM_STREAMS,
               "rng.h's stream version changed: give wattsim a new version in"
               " wattsim/version.h (MINOR while MAJOR is 0) and record the streams there");

#define WS_STR_(x) #x
#define WS_STR(x) WS_STR_(x)

const char *ws_version_line(void)
{
    return "wattsim " WATTSIM_VERSION " (policy ABI " WATTSIM_POLICY_ABI ", random streams "
        WS_STR(WATTSIM_RANDOM_STREAMS) ")";
}

void ws_jw_version(ws_jw *w)
{
    ws_jw_key(w, "wattsim");
    ws_jw_begin_object(w);
    ws_jw_kstring(w, "version", WATTSIM_VERSION);
    ws_jw_kstring(w, "policy_abi", WATTSIM_POLICY_ABI);
    ws_jw_kint(w, "random_streams", WATTSIM_RANDOM_STREAMS);
    ws_jw_end_object(w);
}

