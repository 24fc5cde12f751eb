/*
 * Stream seeding (see wattsim/rng.h). Its own file so that the engine and
 * the policy host both use it without including each other.
 */
#include "wattsim/rng.h"

#include <stdint.h>

unsigned long ws_stream_seed(unsigned long seed, unsigned role)
{
    /* SplitMix64 finaliser over (seed, role): streams of nearby seeds and of
     * different roles are unrelated. */
    uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ull
                 + ((uint64_t)role + 1) * 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (unsigned long)z;
}
