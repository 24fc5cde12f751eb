/* Safe names; see wattsim/name.h. */
#include "wattsim/name.h"
#include "wattsim/error.h"

#include <stdio.h>
#include <string.h>

int ws_name_check(const char *s, char *why, size_t size)
{
    static const char *ok = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-";
    size_t n = s ? strlen(s) : 0, k = s ? strspn(s, ok) : 0;
    if (!n) snprintf(why, size, "is empty");
    else if (*s == '.') snprintf(why, size, "starts with '.'");
    else if (n > WS_NAME_MAX) snprintf(why, size, "is longer than %d characters", WS_NAME_MAX);
    else if (k < n && s[k] == '\'') snprintf(why, size, "contains a quote (')");
    else if (k < n && (unsigned char)s[k] > 0x20 && (unsigned char)s[k] < 0x7f)
        snprintf(why, size, "contains '%c'", s[k]);
    else if (k < n) snprintf(why, size, "contains byte 0x%02x", (unsigned char)s[k]);
    else return 0;
    return -1;
}

/* A character ws_text_escape never prints raw, starting at s: a C0 or C1
 * control (or DEL), a Unicode bidirectional control or U+2028/U+2029
 * (ws_text_unsafe): its length in bytes, else 0. */
static size_t control_at(const unsigned char *s)
{
    size_t n = ws_utf8_len(s);
    if (*s < 0x20 || *s == 0x7f) return 1;
    return n > 1 && ws_text_unsafe(s, n) ? n : 0;
}

/* The code point of the well-formed sequence of n > 1 bytes at s. */
static unsigned long code_point(const unsigned char *s, size_t n)
{
    unsigned long cp = s[0] & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
    for (size_t i = 1; i < n; i++) cp = cp << 6 | (s[i] & 0x3Fu);
    return cp;
}

/* What is wrong with the control character of c bytes at p, into why. */
static void say_control(const unsigned char *p, size_t c, char *why, size_t size)
{
    if (c > 1) snprintf(why, size, "contains the control character U+%04lX", code_point(p, c));
    else snprintf(why, size, "contains the control character 0x%02x", *p);
}

int ws_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (control_at(p)) return 1;
    return 0;
}

int ws_label_check(const char *s, char *why, size_t size)
{
    size_t n = s ? strlen(s) : 0;
    if (!n) {
        snprintf(why, size, "is empty");
        return -1;
    }
    if (n > WS_LABEL_MAX) {
        snprintf(why, size, "is longer than %d bytes", WS_LABEL_MAX);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t c = control_at(p);
        if (c) say_control(p, c, why, size);
        else if (strchr("/,\"\\", *p)) snprintf(why, size, "contains '%c'", *p);
        else continue;
        return -1;
    }
    return 0;
}

int ws_path_check(const char *s, char *why, size_t size)
{
    size_t n = s ? strlen(s) : 0;
    if (!n) {
        snprintf(why, size, "is empty");
        return -1;
    }
    if (n > WS_PATH_MAX) {
        snprintf(why, size, "is longer than %d bytes", WS_PATH_MAX);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t c = control_at(p), len = ws_utf8_len(p);
        if (c) say_control(p, c, why, size);
        else if (!len) snprintf(why, size, "is not UTF-8 (byte 0x%02x)", *p);
        else {
            p += len;
            continue;
        }
        return -1;
    }
    return 0;
}

const char *ws_name_show(const char *s, char *buf, size_t size)
{
    if (size) ws_text_escape(buf, size, s ? s : "");
    return buf;
}
