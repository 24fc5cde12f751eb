/* Progress display on stderr; see wattsim/progress.h. */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int quiet;

void ws_progress_set_quiet(int q) { quiet = q; }

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void ws_progress_start(ws_progress *p, const char *what, size_t total)
{
    p->what = what;
    p->total = total;
    p->done = 0;
    p->t0 = now();
    p->next = p->t0 + 1.0;                      /* silent for the first second */
    const char *env = getenv("WATTSIM_QUIET");        /* the test suite sets it */
    int q = quiet || (env && *env && strcmp(env, "0"));
    p->mode = q ? 0 : isatty(2) ? 1 : 2;
    p->drawn = 0;
}

/* "12.3 k" style. */
static void human(char *buf, size_t n, double x)
{
    if (x >= 1e6) snprintf(buf, n, "%.1f M", x / 1e6);
    else if (x >= 1e4) snprintf(buf, n, "%.1f k", x / 1e3);
    else snprintf(buf, n, "%.0f ", x);
}

static void draw(ws_progress *p, double t)
{
    double el = t - p->t0, rate = el > 0 ? (double)p->done / el : 0;
    double left = rate > 0 ? (double)(p->total - p->done) / rate : 0;
    double frac = p->total ? (double)p->done / (double)p->total : 1;
    char r[32];
    human(r, sizeof r, rate);
    if (p->mode == 1) {
        char bar[31];
        int full = (int)(frac * 30);
        for (int i = 0; i < 30; i++) bar[i] = i < full ? '#' : '-';
        bar[30] = '\0';
        fprintf(stderr, "\r[%s] %3.0f %% %zu/%zu %s, %s/s, %.0f s left \033[K", bar, 100 * frac,
                p->done, p->total, p->what, r, left);
        p->drawn = 1;
    } else {
        fprintf(stderr, "wattsim: %zu/%zu %s (%.0f %%), %s/s, %.0f s left\n", p->done,
                p->total, p->what, 100 * frac, r, left);
    }
    fflush(stderr);
    p->next = t + (p->mode == 1 ? 0.2 : 10.0);
}

void ws_progress_step(ws_progress *p, size_t n)
{
    p->done += n;
    if (!p->mode) return;
    double t = now();
    if (t >= p->next) draw(p, t);
}

void ws_progress_end(ws_progress *p)
{
    if (p->mode == 1 && p->drawn) fputs("\r\033[K", stderr);
    else if (p->mode == 2 && p->next > p->t0 + 1.0) draw(p, now());   /* lines were printed */
    p->mode = 0;
}
