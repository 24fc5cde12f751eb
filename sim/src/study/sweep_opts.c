/*
 * A sweep's process options (threads, a cell's time and memory under
 * isolation) from their text, for the CLI's `sweep` and the library's
 * (wattsim/sweep.h): one parser, one message.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/sweep.h"

int ws_sweep_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

int ws_sweep_parse_threads(const char *s, ws_sweep_opts *so, ws_error *err)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (!*s || *end || n < 1 || n > 256)
        return ws_fail(err, "--threads '%s' is not an integer in 1..256", s);
    so->threads = (int)n;
    return 0;
}

int ws_sweep_parse_cell_timeout(const char *s, ws_sweep_opts *so, ws_error *err)
{
    char *end;
    double t = strtod(s, &end);
    if (end == s || *end || !(t > 0) || t > 1e6)
        return ws_fail(err, "--cell-timeout '%s' is not a number of seconds in (0, 1e6]", s);
    so->cell_timeout = t;
    return 0;
}

/* "SIZE[K|M|G|T]" (binary units, an optional "iB" or "B") in bytes, at
 * least 1 MiB; 0 when it is not one. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)s[0])) return 0;
    double v = strtod(s, &end);
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && !strcmp(end, "iB")) end += 2;
    else if (!strcmp(end, "B")) end++;
    if (errno || *end || !(v >= 0)) return 0;
    double bytes = ldexp(v, shift);
    if (!(bytes >= 1048576.0) || bytes > ldexp(1.0, 50)) return 0;
    return (size_t)bytes;
}

int ws_sweep_parse_cell_memory(const char *s, ws_sweep_opts *so, ws_error *err)
{
    if (!(so->cell_memory = parse_size(s)))
        return ws_fail(err, "--cell-memory '%s' is not a size from 1M to 1024T (a number of"
                       " bytes, or with K, M, G or T)", s);
    return 0;
}

int ws_sweep_check_limits(const ws_sweep_opts *so, ws_error *err)
{
    if ((so->cell_timeout > 0 || so->cell_memory) && !so->isolate)
        return ws_fail(err, "%s needs --isolate (only a child process can be limited)",
                       so->cell_timeout > 0 ? "--cell-timeout" : "--cell-memory");
    return 0;
}
