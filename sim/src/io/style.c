/*
 * The figure style of a config (wattsim/style.h): "KEY=VALUE, ..." with
 * KEY one of font, size, col1, col2, palette. The font reaches a gnuplot
 * script (inside single quotes) and a fontconfig look-up, so its name is
 * checked letter by letter, never escaped; widths are bounded to what the
 * figures' layouts hold (from a narrow column to a landscape page), and so
 * is the size (the layouts scale with it: below 5 pt a key is unreadable
 * in print, above 14 pt a two-column figure's labels no longer fit).
 */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/style.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COL1_MIN 2.5
#define COL1_MAX 5.0
#define COL2_MIN 5.0
#define COL2_MAX 10.0
#define SIZE_MIN 5.0
#define SIZE_MAX 14.0

static const char *const palettes[] = {"okabe-ito", "tol", "grey"};

void ws_style_default(ws_style *s)
{
    snprintf(s->font, sizeof s->font, "Helvetica");
    s->col1 = 3.4;
    s->col2 = 7.0;
    s->palette = WS_PALETTE_OKABE_ITO;
    s->size = 8;
}

static int points(const char *v, double *out, ws_error *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) || x < SIZE_MIN || x > SIZE_MAX)
        return ws_fail(err, "style: size must be the base font size in points, %g to %g"
                       " (titles 1 pt larger, keys 1 pt smaller), got '%s'", SIZE_MIN,
                       SIZE_MAX, v);
    *out = x;
    return 0;
}

static int inches(const char *key, const char *v, double lo, double hi, double *out,
                  ws_error *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) || x < lo || x > hi)
        return ws_fail(err, "style: %s must be a width in inches, %g to %g, got '%s'", key, lo,
                       hi, v);
    *out = x;
    return 0;
}

int ws_style_parse(const char *spec, ws_style *s, ws_error *err)
{
    ws_style t;
    ws_style_default(&t);
    char *copy = strdup(spec ? spec : "");
    if (!copy) return ws_fail(err, "out of memory");
    int rc = -1, seen[5] = {0};
    static const char *const keys[] = {"font", "col1", "col2", "palette", "size"};
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*item)) item++;
        char *eq = strchr(item, '=');
        if (!eq) {
            ws_fail(err, "style: '%s' is not KEY=VALUE (keys: font, size, col1, col2, palette)", item);
            goto out;
        }
        *eq = '\0';
        char *v = eq + 1, *e = eq;
        while (e > item && isspace((unsigned char)e[-1])) *--e = '\0';
        while (isspace((unsigned char)*v)) v++;
        for (e = v + strlen(v); e > v && isspace((unsigned char)e[-1]);) *--e = '\0';
        int k = 0;
        while (k < 5 && strcmp(item, keys[k])) k++;
        if (k == 5) {
            ws_fail(err, "style: no key '%s' (keys: font, size, col1, col2, palette)", item);
            goto out;
        }
        if (seen[k]++) {
            ws_fail(err, "style: %s given twice", item);
            goto out;
        }
        if (k == 0) {
            size_t n = strlen(v);
            int ok = n > 0 && n < sizeof t.font && isalpha((unsigned char)v[0]);
            for (size_t i = 0; ok && i < n; i++)
                ok = isalnum((unsigned char)v[i]) || v[i] == ' ' || v[i] == '-';
            if (!ok) {
                ws_fail(err, "style: font must be a font family (1 to %zu letters, digits, spaces"
                        " or '-', starting with a letter), got '%s'", sizeof t.font - 1, v);
                goto out;
            }
            memcpy(t.font, v, n + 1);
        } else if (k == 1) {
            if (inches("col1", v, COL1_MIN, COL1_MAX, &t.col1, err)) goto out;
        } else if (k == 2) {
            if (inches("col2", v, COL2_MIN, COL2_MAX, &t.col2, err)) goto out;
        } else if (k == 4) {
            if (points(v, &t.size, err)) goto out;
        } else {
            int p = 0;
            while (p < 3 && strcmp(v, palettes[p])) p++;
            if (p == 3) {
                ws_fail(err, "style: palette must be okabe-ito, tol or grey, got '%s'", v);
                goto out;
            }
            t.palette = p;
        }
    }
    *s = t;
    rc = 0;
out:
    free(copy);
    return rc;
}
