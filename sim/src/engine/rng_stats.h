/*
 * Counting the random streams' rare paths (private to the engine layer):
 * only in builds with -DWS_RNG_STATS (the stream test), where every
 * rejection, wedge and tail must be seen taken. Elsewhere nothing.
 */
#ifndef WATTSIM_ENGINE_RNG_STATS_H
#define WATTSIM_ENGINE_RNG_STATS_H

#include "wattsim/rng.h"

#ifdef WS_RNG_STATS
#define RNG_COUNT(field) (ws_rng_stats_get()->field++)
#else
#define RNG_COUNT(field) ((void)0)
#endif

#endif
