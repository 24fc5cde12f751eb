/*
 * ws_py_floordiv's fast path (floor(a / b) checked with fma) against
 * CPython's float_floor_div, transcribed here as the reference, on a
 * million pairs chosen where they differ most easily: a within one ulp of
 * an exact multiple n*b, and arbitrary quotients up to 10^14 (where the
 * fast path must hand over to the reference).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "wattsim/engine.h"

static double cpython(double a, double b)
{
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
    double fl;
    if (div != 0.0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, a / b);
    }
    return fl;
}

static uint64_t state = 88172645463325252ull;
static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static double unit(void) { return ldexp((double)(next() >> 11), -53); }

Test(floordiv, fast_path_equals_cpython_bit_for_bit)
{
    long checked = 0;
    for (long i = 0; i < 1000000; i++) {
        double b = unit() * pow(10, (double)(next() % 12) - 3);
        double n = (double)(next() % 5000), a;
        switch (next() % 4) {
        case 0: a = n * b; break;
        case 1: a = nextafter(n * b, 0); break;
        case 2: a = nextafter(n * b, INFINITY); break;
        default: a = unit() * pow(10, (double)(next() % 17) - 3); break;
        }
        double f = ws_py_floordiv(a, b), g = cpython(a, b);
        cr_assert(memcmp(&f, &g, sizeof f) == 0, "%a // %a: %a, CPython %a", a, b, f, g);
        checked++;
    }
    cr_assert_eq(checked, 1000000);
}
