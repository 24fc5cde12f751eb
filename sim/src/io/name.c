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

/* A C0 or C1 control character (or DEL) starting at s: its length in
 * bytes (C1 is U+0080..U+009F, two bytes in UTF-8), else 0. */
static size_t control_at(const unsigned char *s)
{
    if (*s < 0x20 || *s == 0x7f) return 1;
    if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) return 2;
    return 0;
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
        if (c == 2) snprintf(why, size, "contains the control character U+%04X", p[1]);
        else if (c) snprintf(why, size, "contains the control character 0x%02x", *p);
        else if (strchr("/,\"\\", *p)) snprintf(why, size, "contains '%c'", *p);
        else continue;
        return -1;
    }
    return 0;
}

const char *ws_name_show(const char *s, char *buf, size_t size)
{
    if (size) ws_text_escape(buf, size, s ? s : "");
    return buf;
}
