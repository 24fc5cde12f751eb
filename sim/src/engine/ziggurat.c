/*
 * The standard normal's rare paths: numpy 1.24's 256-layer ziggurat
 * (Marsaglia and Tsang, "The Ziggurat Method for Generating Random
 * Variables", 2000; numpy's layout of the draw and its tables). The fast
 * path is inline in wattsim/rng.h. A 64-bit draw gives the layer i (its
 * low 8 bits), the sign (bit 8) and a 52-bit magnitude u (bits 9..60);
 * x = u * w[i], signed. Outside layer i's rectangle (u >= k[i]):
 *  - i = 0, the base layer: x is in the tail beyond r. Draw
 *    a = -log1p(-U) / r and b = -log1p(-U') until 2b > a^2; the answer
 *    is r + a, negative when bit 8 of u is set (the sign bit itself is
 *    not reused).
 *  - otherwise the wedge: accept x when f[i] + (f[i-1] - f[i]) * U is
 *    below exp(-x^2 / 2).
 * A rejected draw starts over with a fresh 64-bit draw. The arithmetic is
 * written in numpy's order (the build has no floating-point contraction:
 * a fused multiply-add would change the last bits).
 */
#include "wattsim/rng.h"

#include <math.h>

#include "rng_stats.h"
#include "ziggurat.h"

double ws_rng__normal_slow(ws_rng *r, uint64_t raw)
{
    for (;;) {
        const unsigned idx = (unsigned)(raw & 0xff);
        const uint64_t rabs = (raw >> 9) & 0x000fffffffffffffULL;
        double x = (double)rabs * ws_zig_wi[idx];
        if ((raw >> 8) & 1) x = -x;
        if (rabs < ws_zig_ki[idx]) return x;      /* a redraw inside its rectangle */
        if (idx == 0) {
            for (;;) {
                const double xx = -WS_ZIG_INV_R * log1p(-ws_rng_random(r));
                const double yy = -log1p(-ws_rng_random(r));
                if (yy + yy > xx * xx) {
                    RNG_COUNT(normal_tail_accept);
                    return (rabs >> 8) & 1 ? -(WS_ZIG_R + xx) : WS_ZIG_R + xx;
                }
                RNG_COUNT(normal_tail_reject);
            }
        }
        if ((ws_zig_fi[idx - 1] - ws_zig_fi[idx]) * ws_rng_random(r) + ws_zig_fi[idx]
            < exp(-0.5 * x * x)) {
            RNG_COUNT(normal_wedge_accept);
            return x;
        }
        RNG_COUNT(normal_wedge_reject);
        raw = ws_rng_next64(r);
    }
}
