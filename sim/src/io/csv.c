/*
 * Strict CSV reader over zlib's gzread (reads plain files too). See
 * wattsim/csv.h for the accepted dialect and the limits.
 *
 * Records are split in one pass over a growable buffer; fields are stored
 * in place (unquoted, NUL-terminated) and indexed by an offset array, so a
 * record costs no allocation once the buffers have grown.
 */
#include "wattsim/csv.h"
#include "wattsim/input.h"
#include "wattsim/outfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct ws_csv {
    gzFile gz;
    char *path;
    ws_csv_limits lim;
    unsigned char in[1 << 16];   /* raw decompressed input */
    size_t in_len, in_pos;
    size_t total;                /* decompressed bytes consumed */
    int eof;
    char *rec;                   /* current record, fields NUL-separated */
    size_t rec_cap;
    size_t *field;               /* offsets of fields in rec */
    size_t nfield, field_cap;
    long line;                   /* physical line where the record began */
    long next_line;              /* physical line of the next byte */
    int ended;                   /* the record ended with a line end, not EOF */
    int first;                   /* no byte read yet (for the BOM) */
    int failed;                  /* an input error was reported */
    int nul_ok;                  /* a tail of NUL bytes ends the file */
    long nul_line;               /* where such a tail began; 0: none */
    size_t nul_count;            /* its bytes */
};

/* zlib's gzerror() text starts with what it opened, "<fd:N>" (we hand it
 * the descriptor); drop it, we print the path. */
static const char *zmsg(ws_csv *c, int *zerr)
{
    const char *m = gzerror(c->gz, zerr);
    const char *end = m && !strncmp(m, "<fd:", 4) ? strstr(m, ">: ") : NULL;
    if (end) m = end + 3;
    return m ? m : "";
}

static int fill(ws_csv *c, ws_error *err)
{
    if (c->eof) return 0;
    int n = gzread(c->gz, c->in, (unsigned)sizeof c->in);
    int zerr;
    if (n < 0)
        return ws_fail(err, "%s:%ld: corrupt compressed data (%s)", c->path,
                       c->next_line, zmsg(c, &zerr));
    if (n == 0) {
        const char *m = zmsg(c, &zerr);
        /* zlib flags a gzip stream that ends early as Z_BUF_ERROR. */
        if (zerr != Z_OK && zerr != Z_STREAM_END)
            return ws_fail(err, "%s:%ld: truncated or corrupt gzip data (%s)",
                           c->path, c->next_line, m);
        c->eof = 1;
        return 0;
    }
    c->in_len = (size_t)n;
    c->in_pos = 0;
    return 1;
}

/* Next input byte, or -1 at end of file, -2 on error. An error sticks: a
 * later call (a peek included) reports it again rather than end of file.
 * Bytes are counted one by one so that the size limit names the line on
 * which it was crossed. */
static int getbyte(ws_csv *c, ws_error *err)
{
    if (c->failed) return -2;
    if (c->in_pos == c->in_len) {
        int r = fill(c, err);
        if (r < 0) { c->failed = 1; return -2; }
        if (r == 0) return -1;
    }
    if (++c->total > c->lim.max_bytes) {
        c->failed = 1;
        return ws_fail(err, "%s:%ld: more than %zu bytes after decompression;"
                       " raise the limit if the file is genuine", c->path,
                       c->next_line, c->lim.max_bytes) - 1;
    }
    return c->in[c->in_pos++];
}

/* The next byte without consuming it (same returns as getbyte). */
static int peekbyte(ws_csv *c, ws_error *err)
{
    int b = getbyte(c, err);
    if (b >= 0) {
        c->in_pos--;
        c->total--;
    }
    return b;
}

static int put(ws_csv *c, size_t *len, char ch, ws_error *err)
{
    if (*len > c->lim.max_line)
        return ws_fail(err, "%s:%ld: line longer than %zu bytes", c->path,
                       c->line, c->lim.max_line);
    if (*len + 1 >= c->rec_cap) {
        size_t cap = c->rec_cap * 2;
        char *p = realloc(c->rec, cap);
        if (!p) return ws_fail(err, "%s:%ld: out of memory", c->path, c->line);
        c->rec = p;
        c->rec_cap = cap;
    }
    c->rec[(*len)++] = ch;
    return 0;
}

static int new_field(ws_csv *c, size_t at, ws_error *err)
{
    if (c->nfield == c->field_cap) {
        size_t cap = c->field_cap * 2;
        size_t *p = realloc(c->field, cap * sizeof *p);
        if (!p) return ws_fail(err, "%s:%ld: out of memory", c->path, c->line);
        c->field = p;
        c->field_cap = cap;
    }
    c->field[c->nfield++] = at;
    return 0;
}

/* Well-formed UTF-8 (ws_utf8_len: no overlongs, no surrogates,
 * <= U+10FFFF)? ASCII bytes, nearly all of a trace, step without the call. */
static int utf8_ok(const unsigned char *s)
{
    while (*s) {
        if (*s < 0x80) { s++; continue; }
        const size_t n = ws_utf8_len(s);
        if (!n) return 0;
        s += n;
    }
    return 1;
}

ws_csv *ws_csv_open(const char *path, const ws_csv_limits *lim, ws_error *err)
{
    ws_csv *c = calloc(1, sizeof *c);
    if (!c) { ws_fail(err, "%s: out of memory", path); return NULL; }
    c->lim.max_line = lim && lim->max_line ? lim->max_line : WS_CSV_MAX_LINE_DEFAULT;
    c->lim.max_bytes = lim && lim->max_bytes ? lim->max_bytes : WS_CSV_MAX_BYTES_DEFAULT;
    c->path = strdup(path);
    c->rec_cap = 256;
    c->rec = malloc(c->rec_cap);
    c->field_cap = 16;
    c->field = malloc(c->field_cap * sizeof *c->field);
    c->next_line = 1;
    c->first = 1;
    if (!c->path || !c->rec || !c->field) {
        ws_fail(err, "%s: out of memory", path);
        ws_csv_close(c);
        return NULL;
    }
    /* A regular file only (wattsim/input.h): a folder or a FIFO given as
     * a trace or series is one line at once, not a hang or zlib's
     * "corrupt compressed data (Is a directory)". */
    int fd = ws_input_open(path, err);
    if (fd < 0) {
        ws_csv_close(c);
        return NULL;
    }
    ws_input_note_fd(fd);       /* no output of this command may replace it */
    if (!(c->gz = gzdopen(fd, "rb"))) {
        close(fd);
        ws_fail(err, "%s: cannot open: out of memory", path);
        ws_csv_close(c);
        return NULL;
    }
    gzbuffer(c->gz, 1 << 17);
    return c;
}

int ws_csv_next(ws_csv *c, ws_error *err)
{
    for (;;) {
        size_t len = 0;
        int quoted = 0, after_quote = 0, any = 0;
        c->nfield = 0;
        c->ended = 0;
        c->line = c->next_line;
        if (new_field(c, 0, err)) return -1;
        if (c->first) {
            c->first = 0;
            /* Skip a UTF-8 byte-order mark, EF BB BF; any other start is
             * data. The first fill holds the first 64 KiB, so the three
             * bytes are in the buffer if the file has them. */
            if (peekbyte(c, err) == -2) return -1;
            if (c->in_len - c->in_pos >= 3 && c->in[c->in_pos] == 0xEF
                && c->in[c->in_pos + 1] == 0xBB && c->in[c->in_pos + 2] == 0xBF) {
                c->in_pos += 3;
                c->total += 3;
            }
        }
        for (;;) {
            int b = getbyte(c, err);
            if (b == -2) return -1;
            if (b == -1) {
                if (quoted)
                    return ws_fail(err, "%s:%ld: unterminated quoted field",
                                   c->path, c->line);
                break;
            }
            any = 1;
            if (b == 0) {
                const long at = c->next_line;
                if (!c->nul_ok)
                    return ws_fail(err, "%s:%ld: NUL byte in a text file", c->path, at);
                /* A logger killed mid-write leaves its file's last block
                 * as NUL bytes: when nothing else follows, the file ends
                 * here, inside this record (not ended) or before it. */
                size_t count = 1;
                for (;;) {
                    int x = getbyte(c, err);
                    if (x == -2) return -1;
                    if (x == -1) break;
                    if (x != 0)
                        return ws_fail(err, "%s:%ld: NUL byte in a text file", c->path,
                                       at);
                    count++;
                }
                c->nul_line = at;
                c->nul_count = count;
                any = len > 0;
                break;
            }
            if (quoted) {
                if (b == '"') {
                    int next = peekbyte(c, err);
                    if (next == -2) return -1;
                    if (next == '"') {
                        getbyte(c, err);
                        if (put(c, &len, '"', err)) return -1;
                    } else {
                        quoted = 0;
                        after_quote = 1;
                    }
                    continue;
                }
                if (b == '\n') c->next_line++;
                if (put(c, &len, (char)b, err)) return -1;
                continue;
            }
            if (b == '\r') {
                int next = peekbyte(c, err);
                if (next == -2) return -1;
                if (next == '\n') continue;                 /* CRLF */
                return ws_fail(err, "%s:%ld: carriage return outside a quoted"
                               " field", c->path, c->next_line);
            }
            if (b == '\n') { c->next_line++; c->ended = 1; break; }
            if (b == ',') {
                if (put(c, &len, '\0', err) || new_field(c, len, err)) return -1;
                after_quote = 0;
                continue;
            }
            if (after_quote)
                return ws_fail(err, "%s:%ld: text after a closing quote",
                               c->path, c->line);
            if (b == '"') {
                if (len != c->field[c->nfield - 1])
                    return ws_fail(err, "%s:%ld: quote inside an unquoted field",
                                   c->path, c->line);
                quoted = 1;
                continue;
            }
            if (put(c, &len, (char)b, err)) return -1;
        }
        if (put(c, &len, '\0', err)) return -1;
        if (!any) return 0;                          /* end of file */
        if (c->nfield == 1 && c->rec[0] == '\0')
            continue;                                /* blank line */
        if (!utf8_ok((const unsigned char *)c->rec))
            return ws_fail(err, "%s:%ld: invalid UTF-8", c->path, c->line);
        for (size_t i = 1; i < c->nfield; i++)
            if (!utf8_ok((const unsigned char *)c->rec + c->field[i]))
                return ws_fail(err, "%s:%ld: invalid UTF-8", c->path, c->line);
        return 1;
    }
}

size_t ws_csv_nfields(const ws_csv *c) { return c->nfield; }
const char *ws_csv_field(const ws_csv *c, size_t i) { return c->rec + c->field[i]; }
long ws_csv_line(const ws_csv *c) { return c->line; }
int ws_csv_ended(const ws_csv *c) { return c->ended; }
void ws_csv_allow_nul_tail(ws_csv *c) { c->nul_ok = 1; }
long ws_csv_nul_tail(const ws_csv *c, size_t *count)
{
    if (count) *count = c->nul_count;
    return c->nul_line;
}
const char *ws_csv_path(const ws_csv *c) { return c->path; }

void ws_csv_close(ws_csv *c)
{
    if (!c) return;
    if (c->gz) gzclose(c->gz);
    free(c->path);
    free(c->rec);
    free(c->field);
    free(c);
}

/* A CSV field: quoted only when it has a comma, quote or line end. */
void ws_csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int ws_csv_limits_parse(const char *opt, ws_csv_limits *out, ws_error *err)
{
    const char *s = opt, *from = "--max-trace-bytes";
    if (!s) {
        s = getenv("WATTSIM_MAX_TRACE_BYTES");
        from = "WATTSIM_MAX_TRACE_BYTES";
    }
    out->max_line = 0;
    out->max_bytes = 0;
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    }
    if (!isdigit((unsigned char)*s) || *end || errno == ERANGE || v == 0
        || v > (SIZE_MAX >> shift))
        return ws_fail(err, "%s: must be a positive number of bytes (suffix K, M"
                       " or G allowed), got \"%s\"", from, s);
    out->max_bytes = (size_t)(v << shift);
    return 0;
}
