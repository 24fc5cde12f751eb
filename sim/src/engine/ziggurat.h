/*
 * The normal ziggurat's constants (private to the engine layer; the
 * tables are in ziggurat_tables.c, ki and wi declared in wattsim/rng.h
 * for the inline fast path).
 */
#ifndef WATTSIM_ENGINE_ZIGGURAT_H
#define WATTSIM_ENGINE_ZIGGURAT_H

#include <stdint.h>

extern const double ws_zig_fi[256];
/* The base layer's right edge r and 1 / r, as numpy has them. */
#define WS_ZIG_R 3.6541528853610087963519472518
#define WS_ZIG_INV_R 0.27366123732975827203338247596

#endif
