/*
 * The strict CSV reader (wattsim/csv.h): dialect, line numbers, gzip input
 * and every error it reports, with the exact one-line message.
 *
 * Each test runs in its own temporary folder (mkdtemp), removed afterwards.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "wattsim/csv.h"

#include "tmpdir.h"

/* ------------------------------------------------------------ fixture */

static void setup(void)
{
    tmpdir_make("/tmp/wscsv.XXXXXX");
}

static void teardown(void) { tmpdir_remove(); }

TestSuite(csv, .init = setup, .fini = teardown);

static const char *write_bytes(const char *name, const void *data, size_t len)
{
    const char *p = tp(name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "cannot write %s", p);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    return p;
}

static const char *write_text(const char *name, const char *text)
{
    return write_bytes(name, text, strlen(text));
}

/* gzip-compress data into NAME with zlib; mode "wb" (default level) or
 * "wb0" (stored blocks: compressed bytes map one to one onto the input). */
static const char *write_gz(const char *name, const void *data, size_t len,
                            const char *mode)
{
    const char *p = tp(name);
    gzFile g = gzopen(p, mode);
    cr_assert_not_null(g, "gzopen %s", p);
    if (len) cr_assert_eq(gzwrite(g, data, (unsigned)len), (int)len);
    cr_assert_eq(gzclose(g), Z_OK);
    return p;
}

static size_t file_size(const char *p)
{
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return (size_t)n;
}

static unsigned char *slurp(const char *p, size_t *len)
{
    *len = file_size(p);
    unsigned char *b = malloc(*len);
    cr_assert_not_null(b);
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

/*
 * Read the whole file and render every record as "LINE:[f1][f2]...\n" into
 * out. Returns the final ws_csv_next result (0 at end of file, -1 on error,
 * with err set) or -2 if the file could not be opened.
 */
static int dump(const char *path, const ws_csv_limits *lim, char *out,
                size_t outlen, ws_error *err)
{
    out[0] = '\0';
    err->msg[0] = '\0';
    ws_csv *c = ws_csv_open(path, lim, err);
    if (!c) return -2;
    cr_assert_str_eq(ws_csv_path(c), path);
    int r;
    while ((r = ws_csv_next(c, err)) == 1) {
        size_t n = strlen(out);
        snprintf(out + n, outlen - n, "%ld:", ws_csv_line(c));
        for (size_t i = 0; i < ws_csv_nfields(c); i++) {
            n = strlen(out);
            snprintf(out + n, outlen - n, "[%s]", ws_csv_field(c, i));
        }
        n = strlen(out);
        snprintf(out + n, outlen - n, "\n");
    }
    if (r == 0) {
        /* End of file is sticky. */
        cr_assert_eq(ws_csv_next(c, err), 0);
    }
    ws_csv_close(c);
    return r;
}

/* Expect the file to read completely and render as `want`. */
static char out_buf[1 << 20];

static void expect_records(const char *path, const ws_csv_limits *lim,
                           const char *want)
{
    char *out = out_buf;
    ws_error err;
    int r = dump(path, lim, out, sizeof out_buf, &err);
    cr_assert_eq(r, 0, "unexpected result %d for %s: %s", r, path, err.msg);
    cr_assert_str_eq(out, want);
}

/* Expect the records `want` and then the error `msg_fmt` (one %s: the path). */
static void expect_error(const char *path, const ws_csv_limits *lim,
                         const char *want, const char *msg_fmt)
{
    char *out = out_buf, msg[1024];
    ws_error err;
    int r = dump(path, lim, out, sizeof out_buf, &err);
    snprintf(msg, sizeof msg, msg_fmt, path);
    cr_assert_eq(r, -1, "expected an error (%s), got result %d and records\n%s",
                 msg, r, out);
    cr_assert_str_eq(err.msg, msg);
    cr_assert_str_eq(out, want);
}

/* ------------------------------------------------------------ dialect */

Test(csv, plain_records_and_fields)
{
    const char *p = write_text("a.csv", "a,b,c\n1,22,333\n");
    expect_records(p, NULL, "1:[a][b][c]\n2:[1][22][333]\n");
}

Test(csv, last_line_without_newline)
{
    const char *p = write_text("a.csv", "h1,h2\nx,y");
    expect_records(p, NULL, "1:[h1][h2]\n2:[x][y]\n");
}

Test(csv, empty_fields)
{
    const char *p = write_text("a.csv", ",a,,\n\"\",b,\"\"\nx,\n");
    expect_records(p, NULL, "1:[][a][][]\n2:[][b][]\n3:[x][]\n");
}

Test(csv, quoted_fields_with_commas_quotes_and_newlines)
{
    const char *p = write_text("a.csv",
        "name,note\n"
        "\"x,y\",\"he said \"\"hi\"\"\"\n"
        "\"\"\"\",\"two\nlines\"\n"
        "plain,\"\"\"quoted\"\" start and end\"\"\"\n");
    expect_records(p, NULL,
        "1:[name][note]\n"
        "2:[x,y][he said \"hi\"]\n"
        "3:[\"][two\nlines]\n"
        "5:[plain][\"quoted\" start and end\"]\n");
}

Test(csv, crlf_line_ends)
{
    const char *p = write_text("a.csv", "a,b\r\n1,2\r\n\r\n\"q\r\nr\",3\r\n4,5\r\n");
    /* CRLF inside quotes is data; outside it ends the record. */
    expect_records(p, NULL, "1:[a][b]\n2:[1][2]\n4:[q\r\nr][3]\n6:[4][5]\n");
}

Test(csv, utf8_bom_is_skipped)
{
    const char *p = write_text("a.csv", "\xef\xbb\xbf" "dataset,x\nd,1\n");
    expect_records(p, NULL, "1:[dataset][x]\n2:[d][1]\n");
}

Test(csv, bom_only_at_the_start_is_skipped)
{
    /* A byte-order mark later in the file is an ordinary U+FEFF. */
    const char *p = write_text("a.csv", "\xef\xbb\xbf" "a\n\xef\xbb\xbf" "b\n");
    expect_records(p, NULL, "1:[a]\n2:[\xef\xbb\xbf" "b]\n");
}

Test(csv, file_may_start_with_a_non_bom_character_from_0xef)
{
    /* U+FF01 (FULLWIDTH EXCLAMATION MARK) is EF BC 81: valid UTF-8 that
     * merely shares its first byte with a byte-order mark. */
    const char *p = write_text("a.csv", "\xef\xbc\x81,b\n1,2\n");
    expect_records(p, NULL, "1:[\xef\xbc\x81][b]\n2:[1][2]\n");
}

Test(csv, broken_bom_is_invalid_utf8)
{
    const char *p = write_text("a.csv", "\xef\xbb,x\n");
    char out[256];
    ws_error err;
    cr_assert_eq(dump(p, NULL, out, sizeof out, &err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:1: invalid UTF-8", p);
    cr_assert_eq(strncmp(err.msg, want, strlen(want)), 0, "got: %s", err.msg);
}

Test(csv, blank_lines_are_skipped_and_counted)
{
    const char *p = write_text("a.csv", "\n\na\n\n\r\nb,c\n\n");
    expect_records(p, NULL, "3:[a]\n6:[b][c]\n");
}

Test(csv, empty_file_has_no_records)
{
    const char *p = write_text("a.csv", "");
    expect_records(p, NULL, "");
    p = write_text("b.csv", "\n\n\n");
    expect_records(p, NULL, "");
}

Test(csv, line_numbers_after_quoted_newlines)
{
    const char *p = write_text("a.csv",
        "h\n"
        "\"a\nb\nc\",x\n"
        "next\n"
        "\"\n\"\n"
        "\n"
        "last\n");
    expect_records(p, NULL,
        "1:[h]\n2:[a\nb\nc][x]\n5:[next]\n6:[\n]\n9:[last]\n");
}

Test(csv, valid_utf8_is_accepted)
{
    /* 2-, 3- and 4-byte forms and the edges around the surrogates and the
     * top of the code space. */
    const char *p = write_text("a.csv",
        "\xc3\xa4,\xe6\x97\xa5\xe6\x9c\xac,\xf0\x9f\x98\x80\n"
        "\xed\x9f\xbf,\xee\x80\x80,\xf4\x8f\xbf\xbf,\xc2\x80\n"
        "\"\xe2\x82\xac, quoted\"\n");
    expect_records(p, NULL,
        "1:[\xc3\xa4][\xe6\x97\xa5\xe6\x9c\xac][\xf0\x9f\x98\x80]\n"
        "2:[\xed\x9f\xbf][\xee\x80\x80][\xf4\x8f\xbf\xbf][\xc2\x80]\n"
        "3:[\xe2\x82\xac, quoted]\n");
}

Test(csv, record_straddling_the_read_buffer)
{
    /* The reader fills 64 KiB at a time: put a CRLF and a "" escape across
     * the buffer boundary (byte 65536). */
    static char buf[65600], want[70000];
    memset(buf, 'a', 65535);
    size_t k = 65535;
    memcpy(buf + k, "\r\n", 2);       /* CR is byte 65535, LF byte 65536 */
    k += 2;
    buf[k] = '\0';
    const char *p = write_bytes("a.csv", buf, k);
    snprintf(want, sizeof want, "1:[%.*s]\n", 65535, buf);
    expect_records(p, NULL, want);

    /* Now a quoted field whose "" escape straddles the boundary. */
    memset(buf, 'b', 65535);
    buf[0] = '"';
    memcpy(buf + 65535, "\"\"x\"\n", 5);   /* quotes at 65535 and 65536 */
    p = write_bytes("b.csv", buf, 65540);
    snprintf(want, sizeof want, "1:[%.*s\"x]\n", 65534, buf + 1);
    expect_records(p, NULL, want);
}

/* ------------------------------------------------------------ gzip */

Test(csv, gzip_is_read_transparently)
{
    const char *text = "\xef\xbb\xbf" "a,\"b,c\"\r\n\n1,\"x\ny\"\n2,3";
    const char *p = write_gz("a.csv.gz", text, strlen(text), "wb");
    expect_records(p, NULL, "1:[a][b,c]\n3:[1][x\ny]\n5:[2][3]\n");
    /* The name does not matter: gzip data is recognised by its header. */
    p = write_gz("gz-named.csv", text, strlen(text), "wb9");
    expect_records(p, NULL, "1:[a][b,c]\n3:[1][x\ny]\n5:[2][3]\n");
}

Test(csv, gzip_larger_than_the_read_buffer)
{
    /* 20000 lines "i,i*3\n": several 64 KiB reads of decompressed data. */
    static char text[20000 * 16];
    size_t cap = sizeof text, len = 0;
    for (int i = 0; i < 20000; i++)
        len += (size_t)snprintf(text + len, cap - len, "%d,%d\n", i, 3 * i);
    const char *p = write_gz("big.csv.gz", text, len, "wb");
    ws_error err;
    ws_csv *c = ws_csv_open(p, NULL, &err);
    cr_assert_not_null(c, "%s", err.msg);
    long n = 0;
    int r;
    while ((r = ws_csv_next(c, &err)) == 1) {
        cr_assert_eq(ws_csv_line(c), n + 1);
        cr_assert_eq(ws_csv_nfields(c), 2);
        cr_assert_eq(atol(ws_csv_field(c, 0)), n);
        cr_assert_eq(atol(ws_csv_field(c, 1)), 3 * n);
        n++;
    }
    cr_assert_eq(r, 0, "%s", err.msg);
    cr_assert_eq(n, 20000);
    ws_csv_close(c);
}

/* ------------------------------------------------------------ errors */

Test(csv, missing_file)
{
    ws_error err;
    const char *p = tp("nope.csv");
    cr_assert_null(ws_csv_open(p, NULL, &err));
    char want[600];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", p);
    cr_assert_str_eq(err.msg, want);
}

Test(csv, unterminated_quote)
{
    const char *p = write_text("a.csv", "h\n\"abc,\ndef\n");
    expect_error(p, NULL, "1:[h]\n", "%s:2: unterminated quoted field");
}

Test(csv, text_after_closing_quote)
{
    const char *p = write_text("a.csv", "h\n\"a\"b,c\n");
    expect_error(p, NULL, "1:[h]\n", "%s:2: text after a closing quote");
    p = write_text("b.csv", "x,\"a\" \n");
    expect_error(p, NULL, "", "%s:1: text after a closing quote");
}

Test(csv, quote_inside_unquoted_field)
{
    const char *p = write_text("a.csv", "h\nok,ab\"c\n");
    expect_error(p, NULL, "1:[h]\n", "%s:2: quote inside an unquoted field");
    p = write_text("b.csv", "a\nb\nx\"\n");
    expect_error(p, NULL, "1:[a]\n2:[b]\n", "%s:3: quote inside an unquoted field");
}

Test(csv, bare_carriage_return)
{
    const char *p = write_text("a.csv", "h\na\rb\n");
    expect_error(p, NULL, "1:[h]\n", "%s:2: carriage return outside a quoted field");
    /* Old-Mac line ends, and a CR as the very last byte. */
    p = write_text("b.csv", "a,b\rc,d\r");
    expect_error(p, NULL, "", "%s:1: carriage return outside a quoted field");
    p = write_text("c.csv", "a\nb\r");
    expect_error(p, NULL, "1:[a]\n", "%s:2: carriage return outside a quoted field");
}

Test(csv, nul_byte)
{
    const char *p = write_bytes("a.csv", "h\na\0b\n", 6);
    expect_error(p, NULL, "1:[h]\n", "%s:2: NUL byte in a text file");
    p = write_bytes("b.csv", "h\n\"x\0\"\n", 7);
    expect_error(p, NULL, "1:[h]\n", "%s:2: NUL byte in a text file");
}

static void invalid_utf8_case(const char *bad)
{
    char text[64];
    snprintf(text, sizeof text, "ok,ok\nx,a%sb\n", bad);
    const char *p = write_text("u.csv", text);
    expect_error(p, NULL, "1:[ok][ok]\n", "%s:2: invalid UTF-8");
    snprintf(text, sizeof text, "ok,ok\n\n\"q,%s\",x\n", bad);
    p = write_text("v.csv", text);
    expect_error(p, NULL, "1:[ok][ok]\n", "%s:3: invalid UTF-8");
}

Test(csv, invalid_utf8)
{
    invalid_utf8_case("\xff");               /* never valid */
    invalid_utf8_case("\x80");               /* lone continuation byte */
    invalid_utf8_case("\xc0\xaf");           /* overlong '/' */
    invalid_utf8_case("\xe0\x80\xaf");       /* overlong, 3 bytes */
    invalid_utf8_case("\xf0\x80\x80\xaf");   /* overlong, 4 bytes */
    invalid_utf8_case("\xed\xa0\x80");       /* surrogate U+D800 */
    invalid_utf8_case("\xed\xbf\xbf");       /* surrogate U+DFFF */
    invalid_utf8_case("\xf4\x90\x80\x80");   /* U+110000 */
    invalid_utf8_case("\xe6\x97");           /* truncated sequence */
    invalid_utf8_case("\xf8\x88\x80\x80\x80"); /* 5-byte form */
}

Test(csv, invalid_utf8_split_by_a_comma)
{
    const char *p = write_text("a.csv", "\xc3,\xa4\n");
    expect_error(p, NULL, "", "%s:1: invalid UTF-8");
}

Test(csv, line_longer_than_max_line)
{
    ws_csv_limits lim = {.max_line = 32, .max_bytes = 0};
    char text[256];
    /* Exactly 32 bytes is fine. */
    snprintf(text, sizeof text, "h\n%s\nt\n", "0123456789,0123456789,0123456789");
    const char *p = write_text("ok.csv", text);
    expect_records(p, &lim, "1:[h]\n2:[0123456789][0123456789][0123456789]\n3:[t]\n");
    /* 33 bytes is not. */
    snprintf(text, sizeof text, "h\n%s\nt\n", "0123456789,0123456789,01234567890");
    p = write_text("a.csv", text);
    expect_error(p, &lim, "1:[h]\n", "%s:2: line longer than 32 bytes");
    /* Twice the limit. */
    snprintf(text, sizeof text, "h\n\n%s%s\n", "0123456789012345678901234567890123456789",
             "012345678901234567890123");
    p = write_text("b.csv", text);
    expect_error(p, &lim, "1:[h]\n", "%s:3: line longer than 32 bytes");
}

Test(csv, line_longer_than_max_line_large)
{
    ws_csv_limits lim = {.max_line = 1000, .max_bytes = 0};
    static char text[5000];
    strcpy(text, "h\n\"");
    memset(text + 3, 'x', 4000);
    strcpy(text + 4003, "\"\n");
    const char *p = write_text("a.csv", text);
    expect_error(p, &lim, "1:[h]\n", "%s:2: line longer than 1000 bytes");
}

Test(csv, more_bytes_than_max_bytes_plain)
{
    /* 10 lines of 10 bytes; the 56th byte is on line 6. */
    ws_csv_limits lim = {.max_line = 0, .max_bytes = 55};
    char text[128] = "";
    for (int i = 0; i < 10; i++) strcat(text, "123456789\n");
    const char *p = write_text("a.csv", text);
    expect_error(p, &lim,
                 "1:[123456789]\n2:[123456789]\n3:[123456789]\n4:[123456789]\n"
                 "5:[123456789]\n",
                 "%s:6: more than 55 bytes after decompression; raise the"
                 " limit if the file is genuine");
    /* At the limit it reads. */
    lim.max_bytes = 100;
    p = write_text("b.csv", text);
    ws_error err;
    char out[512];
    cr_assert_eq(dump(p, &lim, out, sizeof out, &err), 0, "%s", err.msg);
}

Test(csv, more_bytes_than_max_bytes_gzip)
{
    /* A "gzip bomb": 1 MB of newlines compresses to ~1 KB. */
    static char text[1000000];
    size_t n = sizeof text;
    memcpy(text, "a,b\n", 4);
    memset(text + 4, '\n', n - 4);
    const char *p = write_gz("bomb.csv.gz", text, n, "wb9");
    cr_assert_lt(file_size(p), 5000);
    ws_csv_limits lim = {.max_line = 0, .max_bytes = 100000};
    /* Byte 100001 is on line 99998 (line 1 has 4 bytes, the rest 1). */
    expect_error(p, &lim, "1:[a][b]\n",
                 "%s:99998: more than 100000 bytes after decompression; raise"
                 " the limit if the file is genuine");
}

Test(csv, more_bytes_than_max_bytes_small_gzip)
{
    /* The whole file fits one read of the reader's buffer: the limit must
     * still be an error, not a silently empty file. */
    const char *text = "a,b\n1,2\n3,4\n";
    const char *p = write_gz("a.csv.gz", text, strlen(text), "wb");
    ws_csv_limits lim = {.max_line = 0, .max_bytes = 6};
    expect_error(p, &lim, "1:[a][b]\n",
                 "%s:2: more than 6 bytes after decompression; raise the"
                 " limit if the file is genuine");
}

/* A stored-block gzip of "h\n" + 5 x "a,b\n"; the deflate data is the text
 * verbatim, so cutting the last 10 bytes (8 of trailer) loses "b\n". */
Test(csv, truncated_gzip)
{
    const char *text = "h\na,b\na,b\na,b\na,b\na,b\n";
    const char *p = write_gz("t.csv.gz", text, strlen(text), "wb0");
    size_t len;
    unsigned char *b = slurp(p, &len);
    p = write_bytes("t.csv.gz", b, len - 10);
    free(b);
    expect_error(p, NULL, "1:[h]\n2:[a][b]\n3:[a][b]\n4:[a][b]\n5:[a][b]\n",
                 "%s:6: truncated or corrupt gzip data (unexpected end of file)");
}

Test(csv, truncated_gzip_compressed)
{
    /* Default compression: which records survive depends on zlib, but the
     * read must end in the truncation error. */
    char text[4096] = "";
    for (int i = 0; i < 200; i++) {
        char line[32];
        snprintf(line, sizeof line, "%d,%d\n", i, i * i);
        strcat(text, line);
    }
    const char *p = write_gz("t.csv.gz", text, strlen(text), "wb");
    size_t len;
    unsigned char *b = slurp(p, &len);
    p = write_bytes("t.csv.gz", b, len - 10);
    free(b);
    char out[8192];
    ws_error err;
    cr_assert_eq(dump(p, NULL, out, sizeof out, &err), -1, "records:\n%s", out);
    const char *tail = ": truncated or corrupt gzip data (unexpected end of file)";
    size_t pl = strlen(p), ml = strlen(err.msg), tl = strlen(tail);
    cr_assert(ml > pl + tl && !strncmp(err.msg, p, pl) && err.msg[pl] == ':'
              && !strcmp(err.msg + ml - tl, tail), "got: %s", err.msg);
}

Test(csv, corrupt_gzip_stored)
{
    /* Flip one byte of stored data: only the CRC can tell. */
    const char *text = "h\na,b\na,b\na,b\na,b\na,b\n";
    const char *p = write_gz("c.csv.gz", text, strlen(text), "wb0");
    size_t len;
    unsigned char *b = slurp(p, &len);
    b[len / 2] ^= 0x01;
    p = write_bytes("c.csv.gz", b, len);
    free(b);
    expect_error(p, NULL, "", "%s:1: corrupt compressed data (incorrect data check)");
}

Test(csv, corrupt_gzip_compressed)
{
    char text[4096] = "";
    for (int i = 0; i < 200; i++) {
        char line[32];
        snprintf(line, sizeof line, "%d,%d\n", i, i * i);
        strcat(text, line);
    }
    const char *p = write_gz("c.csv.gz", text, strlen(text), "wb");
    size_t len;
    unsigned char *b = slurp(p, &len);
    for (size_t i = len / 2 - 4; i < len / 2 + 4; i++) b[i] ^= 0xA5;
    p = write_bytes("c.csv.gz", b, len);
    free(b);
    char out[8192], want[600];
    ws_error err;
    cr_assert_eq(dump(p, NULL, out, sizeof out, &err), -1, "records:\n%s", out);
    snprintf(want, sizeof want, "%s:1: corrupt compressed data (", p);
    cr_assert_eq(strncmp(err.msg, want, strlen(want)), 0, "got: %s", err.msg);
    cr_assert_eq(err.msg[strlen(err.msg) - 1], ')', "got: %s", err.msg);
    cr_assert_str_eq(out, "");
}
