/* One-line error messages; see wattsim/error.h. */
#include "wattsim/error.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Length of the well-formed UTF-8 sequence at s (no overlongs, no
 * surrogates, at most U+10FFFF), or 0 if there is none. */
size_t ws_utf8_len(const unsigned char *s)
{
    unsigned char b = s[0];
    size_t n;
    unsigned long cp;
    if (b < 0x80) return 1;
    if ((b & 0xE0) == 0xC0) { n = 2; cp = b & 0x1Fu; }
    else if ((b & 0xF0) == 0xE0) { n = 3; cp = b & 0x0Fu; }
    else if ((b & 0xF8) == 0xF0) { n = 4; cp = b & 0x07u; }
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)
        || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Does the well-formed n-byte sequence at s encode a character that is
 * never sent to a terminal raw: a C0 control, DEL, a C1 control
 * (U+0080..U+009F), a Unicode bidirectional control (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069: they reorder what follows on
 * the line, so that a name can show as another) or the line and
 * paragraph separators U+2028, U+2029? */
int ws_text_unsafe(const unsigned char *s, size_t n)
{
    if (n == 1) return s[0] < 0x20 || s[0] == 0x7F;
    if (n == 2) return (s[0] == 0xC2 && s[1] < 0xA0) || (s[0] == 0xD8 && s[1] == 0x9C);
    if (n != 3) return 0;
    if (s[0] == 0xE2 && s[1] == 0x80)
        return s[2] == 0x8E || s[2] == 0x8F || (s[2] >= 0xA8 && s[2] <= 0xAE);
    return s[0] == 0xE2 && s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9;
}

size_t ws_text_escape(char *dst, size_t size, const char *src)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    if (!size) return 0;
    while (*s) {
        size_t n = ws_utf8_len(s);
        /* C0 controls, DEL, C1 controls (U+0080..U+009F: C2 80..C2 9F),
         * bidirectional controls, line separators (ws_text_unsafe) and
         * bytes outside well-formed UTF-8 are shown, never sent. */
        int raw = n > 0 && !ws_text_unsafe(s, n);
        size_t bytes = raw ? n : n ? n : 1, need = raw ? n : 4 * bytes;
        if (o + need >= size) break;              /* never half an escape */
        for (size_t i = 0; i < bytes; i++) {
            if (raw) {
                dst[o++] = (char)s[i];
            } else {
                dst[o++] = '\\';
                dst[o++] = 'x';
                dst[o++] = hex[s[i] >> 4];
                dst[o++] = hex[s[i] & 15];
            }
        }
        s += bytes;
    }
    dst[o] = '\0';
    return o;
}

int ws_vfail(ws_error *err, const char *fmt, va_list ap)
{
    if (err) {
        char raw[WS_ERROR_MAX];
        vsnprintf(raw, sizeof raw, fmt, ap);
        ws_text_escape(err->msg, sizeof err->msg, raw);
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
    both[sizeof both - 1] = '\0';
    /* The old message is escaped already; escaping is idempotent. */
    ws_text_escape(err->msg, sizeof err->msg, both);
    return -1;
}

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static ws_line_sink_fn sink_fn;
static void *sink_ctx;
static pid_t sink_pid;

void ws_line_sink(ws_line_sink_fn fn, void *ctx)
{
    pthread_mutex_lock(&sink_lock);
    sink_fn = fn;
    sink_ctx = ctx;
    __atomic_store_n(&sink_pid, fn ? getpid() : 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sink_lock);
}

/* The sink took the line: 1; else 0 (print it). A forked child (sink_pid
 * is its parent's) never takes the lock, which a thread of its parent may
 * have held at the fork. */
static int to_sink(const char *line)
{
    if (__atomic_load_n(&sink_pid, __ATOMIC_ACQUIRE) != getpid()) return 0;
    pthread_mutex_lock(&sink_lock);
    int took = sink_fn && sink_pid == getpid();
    if (took) sink_fn(sink_ctx, line);
    pthread_mutex_unlock(&sink_lock);
    return took;
}

void ws_vline(const char *fmt, va_list ap)
{
    char small[1024], *raw = small, *shown = NULL;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (raw = malloc((size_t)n + 1)))
        vsnprintf(raw, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!raw) raw = small;                     /* out of memory: cut short */
    size_t len = strlen(raw);
    if ((shown = malloc(4 * len + 2))) {
        size_t k = ws_text_escape(shown, 4 * len + 1, raw);
        if (!to_sink(shown)) {
            shown[k] = '\n';
            shown[k + 1] = '\0';
            fputs(shown, stderr);              /* one call: one line, whole */
        }
    } else {
        fputs("wattsim: out of memory\n", stderr);
    }
    free(shown);
    if (raw != small) free(raw);
}

void ws_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ws_vline(fmt, ap);
    va_end(ap);
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
