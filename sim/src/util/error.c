/* One-line error messages; see wattsim/error.h. */
#include "wattsim/error.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

void ws_error_one_line(char *s, size_t size)
{
    /* Line ends become blanks; any other control character (C0, DEL, or
     * C1 encoded in UTF-8: text from an input, say an ESC that would
     * recolour or clear a terminal) becomes \xNN, cut at `size`. */
    static const char hex[] = "0123456789abcdef";
    char out[2 * WS_ERROR_MAX];
    size_t o = 0;
    if (size > sizeof out / 2) size = sizeof out / 2;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 1 < size; p++) {
        int c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
        if (*p == '\n' || *p == '\r') {
            out[o++] = ' ';
        } else if (*p < 0x20 || *p == 0x7f || c1) {
            for (int i = 0; i <= c1 && o + 4 < size; i++) {
                out[o++] = '\\';
                out[o++] = 'x';
                out[o++] = hex[p[i] >> 4];
                out[o++] = hex[p[i] & 15];
            }
            p += c1;
            if (o + 4 >= size) break;
        } else {
            out[o++] = (char)*p;
        }
    }
    out[o] = '\0';
    memcpy(s, out, o + 1);
}

static void one_line(char *s)
{
    ws_error_one_line(s, WS_ERROR_MAX);
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

/* ------------------------------------------------------------ outputs */

static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;
static int bad_seen;
static double bad_value;

void ws_output_bad_number(double x)
{
    pthread_mutex_lock(&bad_lock);
    if (!bad_seen) {
        bad_seen = 1;
        bad_value = x;
    }
    pthread_mutex_unlock(&bad_lock);
}

int ws_output_check(const char *output, ws_error *err)
{
    pthread_mutex_lock(&bad_lock);
    int bad = bad_seen;
    double x = bad_value;
    pthread_mutex_unlock(&bad_lock);
    if (!bad) return 0;
    return ws_fail(err, "internal error: %s: a computed number is %s, which no output"
                   " may hold; it was not written as a number (please report this,"
                   " with the command)", output, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}
