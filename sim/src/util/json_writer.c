/* The JSON writer; see wattsim/json_writer.h.
 *
 * Each level of nesting remembers whether it has a member yet (for the
 * separator) and its kind (object '{', array '[', array of lines 'L' or
 * of rows 'R'); a value written right after a key takes no separator. */
#include "wattsim/json_writer.h"
#include "wattsim/error.h"

#include <math.h>

void ws_jw_init(ws_jw *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->err = 0;
    w->indent = "  ";
    w->after_key = 0;
    w->n[0] = 0;
    w->kind[0] = 0;
}

static void put(ws_jw *w, const char *s)
{
    if (fputs(s, w->f) == EOF) w->err = 1;
}

/* Before a value (or a key in an object): the separator it needs. */
static void sep(ws_jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth == 0) return;
    int d = w->depth;
    if (w->kind[d] == '{') { w->err = 1; return; }  /* a value without a key */
    if (w->kind[d] == 'L' || w->kind[d] == 'R') {
        put(w, w->n[d] ? ",\n" : "\n");
        put(w, w->indent);
    }
    else if (w->n[d]) put(w, ", ");
    w->n[d] = 1;
}

static void jw_open(ws_jw *w, char kind, const char *text)
{
    sep(w);
    put(w, text);
    if (w->depth + 1 >= WS_JW_MAX_DEPTH) { w->err = 1; return; }
    w->depth++;
    w->n[w->depth] = 0;
    w->kind[w->depth] = (unsigned char)kind;
}

static void close_level(ws_jw *w, int object)
{
    if (w->depth == 0 || w->after_key || (w->kind[w->depth] == '{') != object) {
        w->err = 1;
        return;
    }
    if (w->kind[w->depth] == 'L' && w->n[w->depth]) put(w, "\n");
    put(w, object ? "}" : "]");
    w->depth--;
}

void ws_jw_begin_object(ws_jw *w) { jw_open(w, '{', "{"); }
void ws_jw_end_object(ws_jw *w) { close_level(w, 1); }
void ws_jw_begin_array(ws_jw *w) { jw_open(w, '[', "["); }
void ws_jw_begin_array_lines(ws_jw *w) { jw_open(w, 'L', "["); }
void ws_jw_begin_array_rows(ws_jw *w) { jw_open(w, 'R', "["); }
void ws_jw_end_array(ws_jw *w) { close_level(w, 0); }

void ws_jw_key(ws_jw *w, const char *key)
{
    int d = w->depth;
    if (d == 0 || w->kind[d] != '{' || w->after_key) { w->err = 1; return; }
    if (w->n[d]) put(w, ", ");
    w->n[d] = 1;
    ws_jw_write_string(w->f, key);
    put(w, ": ");
    w->after_key = 1;
}

void ws_jw_write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

void ws_jw_write_number(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, "%.17g", x);
    else {
        if (!isnan(x)) ws_output_bad_number(x);
        fputs("null", f);
    }
}

void ws_jw_string(ws_jw *w, const char *s)
{
    sep(w);
    if (!s) put(w, "null");
    else ws_jw_write_string(w->f, s);
    if (ferror(w->f)) w->err = 1;
}

void ws_jw_number(ws_jw *w, double x)
{
    sep(w);
    ws_jw_write_number(w->f, x);
    if (ferror(w->f)) w->err = 1;
}

void ws_jw_fixed(ws_jw *w, int decimals, double x)
{
    if (!isfinite(x)) { ws_jw_number(w, x); return; }
    sep(w);
    if (fprintf(w->f, "%.*f", decimals, x) < 0) w->err = 1;
}

void ws_jw_g(ws_jw *w, double x)
{
    if (!isfinite(x)) { ws_jw_number(w, x); return; }
    sep(w);
    if (fprintf(w->f, "%g", x) < 0) w->err = 1;
}

void ws_jw_int(ws_jw *w, long long x)
{
    sep(w);
    if (fprintf(w->f, "%lld", x) < 0) w->err = 1;
}

void ws_jw_uint(ws_jw *w, unsigned long long x)
{
    sep(w);
    if (fprintf(w->f, "%llu", x) < 0) w->err = 1;
}

void ws_jw_raw(ws_jw *w, const char *text, size_t n)
{
    sep(w);
    if (n && fwrite(text, 1, n, w->f) != n) w->err = 1;
}

void ws_jw_bool(ws_jw *w, int b) { sep(w); put(w, b ? "true" : "false"); }
void ws_jw_null(ws_jw *w) { sep(w); put(w, "null"); }

void ws_jw_kstring(ws_jw *w, const char *key, const char *s) { ws_jw_key(w, key); ws_jw_string(w, s); }
void ws_jw_knumber(ws_jw *w, const char *key, double x) { ws_jw_key(w, key); ws_jw_number(w, x); }
void ws_jw_kint(ws_jw *w, const char *key, long long x) { ws_jw_key(w, key); ws_jw_int(w, x); }
void ws_jw_kbool(ws_jw *w, const char *key, int b) { ws_jw_key(w, key); ws_jw_bool(w, b); }

void ws_jw_newline(ws_jw *w)
{
    if (w->depth != 0 || w->after_key) w->err = 1;
    put(w, "\n");
}

int ws_jw_error(const ws_jw *w)
{
    return w->err || ferror(w->f);
}
