/*
 * Random streams. Every simulation draws from independent streams derived
 * from its seed, one per role, so that the engine's draws never shift a
 * policy's and results do not depend on the order in which cells run.
 */
#ifndef WATTSIM_RNG_H
#define WATTSIM_RNG_H

/* Seed of an independent random stream for `role` derived from `seed`
 * (SplitMix64 mixing). Roles: 0 engine, 1 BSO, 2 PLO, 16 + g group g. */
unsigned long ws_stream_seed(unsigned long seed, unsigned role);

#endif
