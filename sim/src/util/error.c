/* One-line error messages; see wattsim/error.h. */
#include "wattsim/error.h"

#include <stdio.h>
#include <string.h>

static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
}

int ws_vfail(ws_error *err, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        one_line(err->msg);
    }
    return -1;
}

int ws_fail(ws_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ws_vfail(err, fmt, ap);
    va_end(ap);
    return -1;
}

int ws_fail_prefix(ws_error *err, const char *fmt, ...)
{
    if (!err) return -1;
    char both[2 * WS_ERROR_MAX + 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(both, WS_ERROR_MAX, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if (n > WS_ERROR_MAX - 1) n = WS_ERROR_MAX - 1;
    both[n] = ':';
    both[n + 1] = ' ';
    memcpy(both + n + 2, err->msg, WS_ERROR_MAX);
    memcpy(err->msg, both, WS_ERROR_MAX - 1);
    err->msg[WS_ERROR_MAX - 1] = '\0';
    one_line(err->msg);
    return -1;
}
