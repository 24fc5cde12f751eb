/* Outside text into HTML and Markdown as text; see wattsim/markup.h. */
#define _POSIX_C_SOURCE 200809L
#include "wattsim/markup.h"

#include <stdlib.h>
#include <string.h>

#include "wattsim/error.h"

/* s with its control characters shown (ws_text_escape), malloc'd; NULL
 * when out of memory. */
static char *shown(const char *s)
{
    size_t n = strlen(s) * 4 + 1;
    char *d = malloc(n);
    if (d) ws_text_escape(d, n, s);
    return d;
}

void ws_html_text(FILE *f, const char *s)
{
    char *t = shown(s);
    for (const char *p = t ? t : ""; *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*p, f);
        }
    }
    free(t);
}

void ws_md_text(FILE *f, const char *s)
{
    char *t = shown(s);
    for (const char *p = t ? t : ""; *p; p++) {
        if (strchr("\\`*_[]<>&|#~!$", *p)) fputc('\\', f);
        fputc(*p, f);
    }
    free(t);
}

void ws_md_code(FILE *f, const char *s)
{
    char *t = shown(s);
    const char *c = t ? t : "";
    if (!*c) {
        fputs("–", f);
        free(t);
        return;
    }
    size_t run = 0, longest = 0;
    for (const char *p = c; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    size_t n = strlen(c);
    /* A space inside the fence when the text starts or ends with a
     * backtick (or a space, which the span would strip). */
    int pad = c[0] == '`' || c[n - 1] == '`' || c[0] == ' ' || c[n - 1] == ' ';
    for (size_t i = 0; i <= longest; i++) fputc('`', f);
    if (pad) fputc(' ', f);
    fputs(c, f);
    if (pad) fputc(' ', f);
    for (size_t i = 0; i <= longest; i++) fputc('`', f);
    free(t);
}

void ws_md_url(FILE *f, const char *s)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-+/";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (strchr(ok, *p)) fputc(*p, f);
        else fprintf(f, "%%%02X", *p);
    }
}

/* ------------------------------------------------------------ render */

static int is_punct(char c)
{
    return c && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) != NULL;
}

/* s[0, n) as Markdown text: backslash escapes undone, blanks around it
 * trimmed. malloc'd. */
static char *md_unescape(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) { s++; n--; }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    char *d = malloc(n + 1), *w = d;
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n && is_punct(s[i + 1])) i++;
        *w++ = s[i];
    }
    *w = '\0';
    return d;
}

/* "---", ":--", "--:", ":-:" with blanks around: an alignment cell;
 * its alignment (bit 0 left colon, bit 1 right colon) or -1. */
static int align_cell(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) { s++; n--; }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (!n) return -1;
    int a = 0;
    if (*s == ':') { a |= 1; s++; n--; }
    if (n && s[n - 1] == ':') { a |= 2; n--; }
    if (!n) return -1;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '-') return -1;
    return a;
}

/* The cells of a table line (after its first '|'): starts and lengths,
 * split at '|' not escaped by a backslash; a last empty cell (the line's
 * closing '|') dropped. Returns the count (at most max). */
static size_t split_cells(const char *s, size_t n, size_t *at, size_t *len, size_t max)
{
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n && k < max; i++) {
        if (i < n && s[i] == '\\' && i + 1 < n) { i++; continue; }
        if (i == n || s[i] == '|') {
            at[k] = start;
            len[k++] = i - start;
            start = i + 1;
        }
    }
    if (k) {
        size_t j = at[k - 1], m = len[k - 1];
        while (m && (s[j] == ' ' || s[j] == '\t')) { j++; m--; }
        if (!m) k--;
    }
    return k;
}

#define MAX_CELLS 256

void ws_md_render(FILE *f, const char *md, int html)
{
    int in_table = 0;         /* 0 no, 1 before the first row, 2 after it */
    size_t at[MAX_CELLS], len[MAX_CELLS];
    for (const char *line = md; *line;) {
        size_t n = strcspn(line, "\n");
        const char *next = line[n] ? line + n + 1 : line + n;
        size_t m = n;
        if (m && line[m - 1] == '\r') m--;
        const char *t = line;
        while (m && (*t == ' ' || *t == '\t')) { t++; m--; }
        if (m && *t == '|') {
            size_t k = split_cells(t + 1, m - 1, at, len, MAX_CELLS);
            int sep = k > 0;
            for (size_t i = 0; i < k && sep; i++) sep = align_cell(t + 1 + at[i], len[i]) >= 0;
            if (!in_table) {
                if (html) fputs("<table>\n", f);
                in_table = 1;
            }
            if (sep) {
                if (!html) {
                    fputc('|', f);
                    for (size_t i = 0; i < k; i++) {
                        int a = align_cell(t + 1 + at[i], len[i]);
                        fprintf(f, "%s---%s|", a & 1 ? ":" : "", a & 2 ? ":" : "");
                    }
                    fputc('\n', f);
                }
            } else {
                const char *cell = in_table == 1 ? "th" : "td";
                fputs(html ? "<tr>" : "|", f);
                for (size_t i = 0; i < k; i++) {
                    char *c = md_unescape(t + 1 + at[i], len[i]);
                    if (html) fprintf(f, "<%s>", cell);
                    else fputc(' ', f);
                    if (c) (html ? ws_html_text : ws_md_text)(f, c);
                    if (html) fprintf(f, "</%s>", cell);
                    else fputs(" |", f);
                    free(c);
                }
                fputs(html ? "</tr>\n" : "\n", f);
                in_table = 2;
            }
        } else {
            if (in_table && html) fputs("</table>\n", f);
            in_table = 0;
            char *c = md_unescape(t, m);
            if (c && *c) {
                if (html) fputs("<p>", f);
                (html ? ws_html_text : ws_md_text)(f, c);
                fputs(html ? "</p>\n" : "\n", f);
            } else if (!html && *next) {
                fputc('\n', f);
            }
            free(c);
        }
        line = next;
    }
    if (in_table && html) fputs("</table>\n", f);
}
