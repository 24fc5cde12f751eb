/* Safe names; see wattsim/name.h. */
#include "wattsim/name.h"

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
