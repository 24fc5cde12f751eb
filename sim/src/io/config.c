/*
 * Configuration files: the workload catalogue and run configs (see
 * wattsim/config.h for the structs, configs/default.yaml for an example).
 *
 * Reading happens in two steps:
 *
 *  1. YAML text -> a small tree of scalars, lists and mappings, each node
 *     remembering its 1-based line and column. We use libyaml's event API
 *     rather than its document API because the latter resolves aliases
 *     silently; we reject anchors and aliases outright (nothing here needs
 *     them, and it rules out alias-expansion bombs).
 *  2. tree -> C structs, checking types, ranges, unknown and duplicate keys,
 *     so every error names the node it is about.
 *
 * `--set key=value` parses the value alone into a tree and reuses step 2,
 * so an override is checked exactly like the same key in a file.
 *
 * Updates are transactional: a run config is parsed into a zeroed scratch
 * struct and only the keys actually given are swapped into the caller's
 * struct once everything parsed. A failed load or --set therefore leaves
 * the caller's config unchanged (and freeable).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* strdup, strndup, strcasecmp */
#endif
#include "wattsim/config.h"
#include "wattsim/name.h"
#include "wattsim/series.h"
#include "wattsim/outfile.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* A config is a few hundred bytes; the cap bounds the memory the tree of a
 * hostile or mistaken input (e.g. a huge trace file) can take. */
#define MAX_FILE_BYTES (1L << 20)
/* The schema nests 4 levels at most (bso: {params: {k: v}}); the cap keeps
 * the recursive tree builder and free far from the stack limit. */
#define MAX_DEPTH 32
#define MAX_SEEDS 1000000UL
/* Longest piece of user text quoted back in an error message. */
#define SHOW_MAX 40
#define SHOW_SIZE (4 * SHOW_MAX + 8)   /* each byte may become \xNN */

/* ------------------------------------------------------------ the tree */

typedef enum { Y_SCALAR, Y_LIST, Y_MAP } ykind;

typedef struct ynode {
    ykind kind;
    bool plain;             /* unquoted scalar: only these can mean "nothing" */
    unsigned long line, col; /* 1-based */
    char *text;             /* scalar value, NUL-terminated (never has a NUL) */
    struct ynode **kids;    /* list items, or mapping key, value, key, value */
    size_t n;               /* number of kids (twice the pairs of a mapping) */
    size_t cap;
} ynode;

static void ynode_free(ynode *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) ynode_free(n->kids[i]);
    free(n->kids);
    free(n->text);
    free(n);
}

static size_t map_pairs(const ynode *m) { return m->n / 2; }
static const ynode *map_key(const ynode *m, size_t i) { return m->kids[2 * i]; }
static const ynode *map_val(const ynode *m, size_t i) { return m->kids[2 * i + 1]; }

/* YAML's spellings of null; `key:` with nothing after it reads as "". */
static bool is_null(const ynode *n)
{
    return n->kind == Y_SCALAR && n->plain &&
           (!n->text[0] || !strcmp(n->text, "~") || !strcmp(n->text, "null") ||
            !strcmp(n->text, "Null") || !strcmp(n->text, "NULL"));
}

/* ---------------------------------------------------------------- errors */

/* Where errors point: a file (FILE:LINE:COL) or a --set (no position). */
typedef struct ctx {
    const char *file;       /* config file, or NULL for a --set */
    const char *set_key;    /* the KEY of a --set, or NULL */
    size_t set_len;         /* length of the --set value */
    ws_error *err;
} ctx;

/* User text made safe for a one-line message: control bytes, quotes and
 * backslashes escaped, cut after SHOW_MAX bytes (at a UTF-8 boundary). */
static const char *show_text(const char *s, char *buf, size_t size)
{
    size_t o = 0, i = 0;
    for (; s[i] && o + 8 < size; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (i >= SHOW_MAX && (ch & 0xC0) != 0x80) break;
        if (ch == '"' || ch == '\\' || ch == '\'')
            o += (size_t)snprintf(buf + o, size - o, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7F)
            o += (size_t)snprintf(buf + o, size - o, "\\x%02X", ch);
        else
            buf[o++] = (char)ch;
    }
    if (s[i] && o + 4 <= size) { memcpy(buf + o, "...", 3); o += 3; }
    buf[o] = '\0';
    return buf;
}

/* What a node is, for "X must be Y, got Z". */
static const char *describe(const ynode *n, char *buf, size_t size)
{
    if (n->kind == Y_LIST) return n->n ? "a list" : "an empty list";
    if (n->kind == Y_MAP) return "a mapping";
    if (n->plain && !n->text[0]) return "nothing";
    char shown[SHOW_SIZE];
    snprintf(buf, size, "\"%s\"", show_text(n->text, shown, sizeof shown));
    return buf;
}
#define DESCRIBE_SIZE (SHOW_SIZE + 8)

/* A place in the YAML text: 1-based line and column, and the 0-based
 * offset that locates it within a one-line --set value. */
typedef struct pos {
    unsigned long line, col;
    size_t index;
} pos;

static pos pos_of_mark(yaml_mark_t m)
{
    return (pos){ (unsigned long)m.line + 1, (unsigned long)m.column + 1,
                  m.index };
}

/* Format the message, then put the location in front: FILE:LINE:COL for a
 * file, "--set KEY" for an override (plus the value's column for errors in
 * the YAML text itself, where it helps). */
__attribute__((format(printf, 4, 0)))
static int vfail_loc(const ctx *c, const pos *p, bool text_error,
                     const char *fmt, va_list ap)
{
    char msg[WS_ERROR_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (c->set_key) {
        if (!text_error)
            return ws_fail(c->err, "--set %s: %s", c->set_key, msg);
        if (p->index >= c->set_len)
            return ws_fail(c->err, "--set %s: at the end of the value: %s",
                           c->set_key, msg);
        return ws_fail(c->err, "--set %s: value column %zu: %s", c->set_key,
                       p->index + 1, msg);
    }
    if (p)
        return ws_fail(c->err, "%s:%lu:%lu: %s", c->file, p->line, p->col, msg);
    return ws_fail(c->err, "%s: %s", c->file, msg);
}

/* An error about a node's value; NULL for the file or --set as a whole. */
__attribute__((format(printf, 3, 4)))
static int fail_at(const ctx *c, const ynode *n, const char *fmt, ...)
{
    pos p = { n ? n->line : 0, n ? n->col : 0, 0 };
    va_list ap;
    va_start(ap, fmt);
    vfail_loc(c, n ? &p : NULL, false, fmt, ap);
    va_end(ap);
    return -1;
}

/* An error in the YAML text itself (syntax, encoding, anchors). */
__attribute__((format(printf, 3, 4)))
static int fail_text(const ctx *c, pos p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_loc(c, &p, true, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_oom(const ctx *c)
{
    return fail_at(c, NULL, "out of memory");
}

/* " (first at L:C)" to point back at an earlier node; a --set value is one
 * line so its positions would not help. */
static const char *first_at(const ctx *c, const ynode *n, char *buf, size_t size)
{
    if (c->set_key) return "";
    snprintf(buf, size, " (first at %lu:%lu)", n->line, n->col);
    return buf;
}

/* "FILE:LINE:COL" or "--set", stored with policy names and parameters. */
static char *where_of(const ctx *c, const ynode *n)
{
    if (c->set_key) return strdup("--set");
    int len = snprintf(NULL, 0, "%s:%lu:%lu", c->file, n->line, n->col);
    char *s = len < 0 ? NULL : malloc((size_t)len + 1);
    if (s) snprintf(s, (size_t)len + 1, "%s:%lu:%lu", c->file, n->line, n->col);
    return s;
}

/* ------------------------------------------------------ YAML -> tree */

typedef struct reader {
    const ctx *c;
    yaml_parser_t parser;
    const unsigned char *buf;
    size_t len;
} reader;

/* libyaml gives a byte offset for encoding errors but no line/column. */
static pos pos_of_offset(const unsigned char *buf, size_t len, size_t offset)
{
    pos p = { 1, 1, offset };
    for (size_t i = 0; i < offset && i < len; i++) {
        if (buf[i] == '\n' || (buf[i] == '\r' && (i + 1 >= len || buf[i + 1] != '\n'))) {
            p.line++;
            p.col = 1;
        } else if (buf[i] != '\r' && (buf[i] & 0xC0) != 0x80) {
            p.col++;              /* count characters, as libyaml's marks do */
        }
    }
    return p;
}

static int yaml_fail(reader *r)
{
    const yaml_parser_t *p = &r->parser;
    const char *problem = p->problem ? p->problem : "unknown error";
    pos at;

    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return fail_oom(r->c);
    case YAML_READER_ERROR:
        at = pos_of_offset(r->buf, r->len, p->problem_offset);
        if (strstr(problem, "UTF-8"))
            return fail_text(r->c, at, "%s (byte 0x%02X): the text must be UTF-8",
                             problem, (unsigned)p->problem_value & 0xFFu);
        if (p->problem_value >= 0)
            return fail_text(r->c, at, "%s (U+%04X)", problem,
                             (unsigned)p->problem_value);
        return fail_text(r->c, at, "%s", problem);
    default:
        at = pos_of_mark(p->problem_mark);
        if (p->context && !r->c->set_key)
            return fail_text(r->c, at, "YAML syntax error: %s (%s at %lu:%lu)",
                             problem, p->context,
                             (unsigned long)p->context_mark.line + 1,
                             (unsigned long)p->context_mark.column + 1);
        if (p->context)
            return fail_text(r->c, at, "YAML syntax error: %s (%s)", problem,
                             p->context);
        return fail_text(r->c, at, "YAML syntax error: %s", problem);
    }
}

static int fail_unsupported(reader *r, yaml_mark_t m, const char *what,
                            char sigil, const yaml_char_t *name)
{
    char shown[SHOW_SIZE];
    return fail_text(r->c, pos_of_mark(m),
                     "YAML %s are not supported (found '%c%s'); write the "
                     "value out in full", what, sigil,
                     show_text((const char *)name, shown, sizeof shown));
}

static int push_kid(ynode *n, ynode *kid)
{
    if (n->n == n->cap) {
        size_t cap = n->cap ? 2 * n->cap : 8;
        ynode **k = cap > SIZE_MAX / sizeof *k ? NULL
                                               : realloc(n->kids, cap * sizeof *k);
        if (!k) return -1;
        n->kids = k;
        n->cap = cap;
    }
    n->kids[n->n++] = kid;
    return 0;
}

/* Build the node that starts with event `ev` (owned by the caller), reading
 * the events of its children. NULL on failure, with the error set. */
static ynode *build(reader *r, const yaml_event_t *ev, int depth)
{
    const yaml_char_t *anchor;
    ykind kind;

    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        fail_unsupported(r, ev->start_mark, "aliases", '*', ev->data.alias.anchor);
        return NULL;
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        kind = Y_SCALAR;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        kind = Y_LIST;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        kind = Y_MAP;
        break;
    default:   /* libyaml never sends anything else here */
        fail_text(r->c, pos_of_mark(ev->start_mark), "unexpected YAML structure");
        return NULL;
    }
    if (anchor) {
        fail_unsupported(r, ev->start_mark, "anchors", '&', anchor);
        return NULL;
    }
    if (depth >= MAX_DEPTH) {
        fail_text(r->c, pos_of_mark(ev->start_mark),
                  "nested more than %d levels deep", MAX_DEPTH);
        return NULL;
    }

    ynode *n = calloc(1, sizeof *n);
    if (!n) {
        fail_oom(r->c);
        return NULL;
    }
    n->kind = kind;
    n->line = (unsigned long)ev->start_mark.line + 1;
    n->col = (unsigned long)ev->start_mark.column + 1;

    if (kind == Y_SCALAR) {
        const char *v = (const char *)ev->data.scalar.value;
        size_t len = ev->data.scalar.length;
        /* "\0" in a double-quoted string would cut C strings short. */
        if (memchr(v, '\0', len)) {
            fail_at(r->c, n, "text contains a NUL character (\\0)");
            goto fail;
        }
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (!(n->text = malloc(len + 1))) {
            fail_oom(r->c);
            goto fail;
        }
        memcpy(n->text, v, len);
        n->text[len] = '\0';
        return n;
    }

    for (;;) {
        yaml_event_t kid_ev;
        if (!yaml_parser_parse(&r->parser, &kid_ev)) {
            yaml_fail(r);
            goto fail;
        }
        if (kid_ev.type == YAML_SEQUENCE_END_EVENT ||
            kid_ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kid_ev);
            return n;
        }
        ynode *kid = build(r, &kid_ev, depth + 1);
        yaml_event_delete(&kid_ev);
        if (!kid) goto fail;
        if (push_kid(n, kid)) {
            ynode_free(kid);
            fail_oom(r->c);
            goto fail;
        }
    }
fail:
    ynode_free(n);
    return NULL;
}

/* Parse YAML text holding at most one document. *root is NULL when there
 * is no document at all (empty text, only comments). */
static int read_tree(const ctx *c, const unsigned char *buf, size_t len,
                     ynode **root)
{
    reader r = { .c = c, .buf = buf, .len = len };
    int rc = 0, docs = 0;

    *root = NULL;
    if (!yaml_parser_initialize(&r.parser)) return fail_oom(c);
    yaml_parser_set_input_string(&r.parser, buf, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&r.parser, &ev)) {
            rc = yaml_fail(&r);
            break;
        }
        yaml_event_type_t type = ev.type;
        if (type == YAML_DOCUMENT_START_EVENT && docs++ > 0) {
            rc = fail_text(c, pos_of_mark(ev.start_mark),
                           "a second YAML document ('---'); a config is one "
                           "document");
        } else if (type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT ||
                   type == YAML_SEQUENCE_START_EVENT ||
                   type == YAML_MAPPING_START_EVENT) {
            if (!(*root = build(&r, &ev, 0))) rc = -1;
        }
        yaml_event_delete(&ev);
        if (rc || type == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&r.parser);
    if (rc) {
        ynode_free(*root);
        *root = NULL;
    }
    return rc;
}

static int read_file(const ctx *c, unsigned char **out, size_t *out_len)
{
    FILE *f = fopen(c->file, "rb");
    if (!f) return ws_fail(c->err, "%s: cannot open: %s", c->file, strerror(errno));
    ws_input_note_fd(fileno(f));   /* no output of this command may replace it */

    size_t len = 0, cap = 0;
    unsigned char *buf = NULL;
    int rc = 0;
    /* Read one byte past the cap, to tell "exactly the cap" from "more". */
    while (len <= (size_t)MAX_FILE_BYTES) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            unsigned char *nbuf = realloc(buf, ncap);
            if (!nbuf) {
                rc = fail_oom(c);
                break;
            }
            buf = nbuf;
            cap = ncap;
        }
        size_t want = cap - len, room = (size_t)MAX_FILE_BYTES + 1 - len;
        size_t got = fread(buf + len, 1, want < room ? want : room, f);
        len += got;
        if (got == 0) {
            if (ferror(f))   /* e.g. EISDIR: fopen() accepts a directory */
                rc = ws_fail(c->err, "%s: cannot read: %s", c->file, strerror(errno));
            break;
        }
    }
    if (rc == 0 && len > (size_t)MAX_FILE_BYTES)
        rc = ws_fail(c->err, "%s: larger than %ld KiB, too large for a config "
                     "file", c->file, MAX_FILE_BYTES / 1024);
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

/* The root of a config file: a document that is not empty. */
static int read_file_tree(const ctx *c, ynode **root)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    *root = NULL;
    if (!c->file) return ws_fail(c->err, "no config file given");
    if (read_file(c, &buf, &len)) return -1;
    int rc = read_tree(c, buf, len, root);
    free(buf);
    if (rc) return rc;
    if (!*root || is_null(*root)) {
        ynode_free(*root);
        *root = NULL;
        return ws_fail(c->err, "%s: empty config", c->file);
    }
    return 0;
}

/* ------------------------------------------------ scalars and lists */

static bool is_inf_word(const char *s)
{
    if (*s == '+') s++;
    return !strcasecmp(s, ".inf") || !strcasecmp(s, "inf") ||
           !strcasecmp(s, "infinity");
}

/* A decimal number: only digits, sign, point and exponent, so strtod's
 * other inputs (nan, inf, hex, leading blanks) never get through. */
static bool parse_real(const char *s, bool allow_inf, double *out)
{
    if (allow_inf && is_inf_word(s)) {
        *out = INFINITY;
        return true;
    }
    if (!s[0] || strspn(s, "0123456789+-.eE") != strlen(s) ||
        !strpbrk(s, "0123456789"))
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
        return false;
    *out = v;
    return true;
}

/* Digits with an optional '+'; strtoul alone would accept "-1" and wrap. */
static bool parse_ulong(const char *s, unsigned long *out)
{
    const char *d = *s == '+' ? s + 1 : s;
    if (!*d || strspn(d, "0123456789") != strlen(d)) return false;
    errno = 0;
    unsigned long v = strtoul(d, NULL, 10);
    if (errno == ERANGE) return false;
    *out = v;
    return true;
}

static bool parse_int_in(const char *s, unsigned long lo, unsigned long hi,
                         unsigned long *out)
{
    return parse_ulong(s, out) && *out >= lo && *out <= hi;
}

static int get_string(const ctx *c, const ynode *n, const char *what, char **out)
{
    char got[DESCRIBE_SIZE];
    if (n->kind != Y_SCALAR || is_null(n) || !n->text[0])
        return fail_at(c, n, "%s must be a non-empty string, got %s", what,
                       describe(n, got, sizeof got));
    if (!(*out = strdup(n->text))) return fail_oom(c);
    return 0;
}

/* A name that becomes part of file names (workloads, GPUs, jobs): refused
 * at its node unless it is a safe name (wattsim/name.h). */
static int check_name(const ctx *c, const ynode *n, const char *what, const char *s)
{
    char why[64], shown[SHOW_SIZE];
    if (!ws_name_check(s, why, sizeof why)) return 0;
    return fail_at(c, n, "%s '%s' %s; names become part of file names: " WS_NAME_RULE,
                   what, show_text(s, shown, sizeof shown), why);
}

static int get_name(const ctx *c, const ynode *n, const char *what, char **out)
{
    if (get_string(c, n, what, out)) return -1;
    return check_name(c, n, what, *out);
}

/* Replace *slot with a freshly parsed string (nothing changes on failure). */
static int set_string(const ctx *c, const ynode *n, const char *what, char **slot)
{
    char *s;
    if (get_string(c, n, what, &s)) return -1;
    free(*slot);
    *slot = s;
    return 0;
}

/* A display name for figures and reports: a non-empty string of at most
 * WS_DISPLAY_MAX bytes without control characters (it reaches gnuplot
 * scripts, Markdown and HTML, each of which escapes it, but a newline or a
 * tab would still break a table row or a title). */
static int set_display(const ctx *c, const ynode *n, const char *what, char **slot)
{
    char *s;
    if (get_string(c, n, what, &s)) return -1;
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            free(s);
            return fail_at(c, n, "%s must not contain control characters (byte %zu)",
                           what, i + 1);
        }
    if (len > WS_DISPLAY_MAX) {
        free(s);
        return fail_at(c, n, "%s is %zu bytes long; at most %d are allowed", what, len,
                       WS_DISPLAY_MAX);
    }
    free(*slot);
    *slot = s;
    return 0;
}

/* Repeats: sort (name, position) pairs, then the repeat that comes first
 * in the document is the smallest second member of a run of equal names.
 * Sorting keeps long lists from becoming quadratic. */
typedef struct ranked {
    const char *s;
    double d;
    size_t i;
} ranked;

static int cmp_ranked_s(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int cmp_ranked_d(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Index of the first repeated entry in order (SIZE_MAX if none) and of the
 * entry it repeats. Compares names when `names` is set, else `reals`.
 * Returns -1 only when out of memory. */
static int find_repeat(const char *const *names, const double *reals, size_t n,
                       size_t *first, size_t *again)
{
    *again = SIZE_MAX;
    if (n < 2) return 0;
    ranked *r = n > SIZE_MAX / sizeof *r ? NULL : malloc(n * sizeof *r);
    if (!r) return -1;
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked){ names ? names[i] : NULL, reals ? reals[i] : 0, i };
    qsort(r, n, sizeof *r, names ? cmp_ranked_s : cmp_ranked_d);
    for (size_t i = 1; i < n; i++) {
        bool same = names ? !strcmp(r[i].s, r[i - 1].s) : r[i].d == r[i - 1].d;
        bool starts_run = i == 1 || (names ? strcmp(r[i - 1].s, r[i - 2].s)
                                           : r[i - 1].d != r[i - 2].d);
        if (same && starts_run && r[i].i < *again) {
            *again = r[i].i;
            *first = r[i - 1].i;
        }
    }
    free(r);
    return 0;
}

/* ------------------------------------------------------- mappings */

typedef struct keydef {
    const char *name;
    int id;
    bool listed;     /* shown in "expected one of" (plural spellings aren't) */
} keydef;

static int key_id(const keydef *defs, size_t ndefs, const char *name)
{
    for (size_t i = 0; i < ndefs; i++)
        if (!strcmp(defs[i].name, name)) return defs[i].id;
    return -1;
}

static void expected_list(const keydef *defs, size_t ndefs, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ndefs && o < size; i++)
        if (defs[i].listed)
            o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "",
                                  defs[i].name);
}

/* Check that `m` is a mapping whose keys are all known strings, each given
 * once (counting other spellings of the same key, e.g. seed and seeds), and
 * fill keys[id] and vals[id] (arrays of `nids`, zeroed here). `what` names
 * the mapping in messages ("" for the top level). */
static int match_keys(const ctx *c, const ynode *m, const char *what,
                      const keydef *defs, size_t ndefs, size_t nids,
                      const ynode **keys, const ynode **vals)
{
    char got[DESCRIBE_SIZE], shown[SHOW_SIZE], exp[256], at[64];
    expected_list(defs, ndefs, exp, sizeof exp);
    if (m->kind != Y_MAP)
        return fail_at(c, m, "%s must be a mapping with keys %s, got %s",
                       *what ? what : "the config", exp,
                       describe(m, got, sizeof got));
    memset(keys, 0, nids * sizeof *keys);
    memset(vals, 0, nids * sizeof *vals);
    for (size_t i = 0; i < map_pairs(m); i++) {
        const ynode *k = map_key(m, i);
        if (k->kind != Y_SCALAR)
            return fail_at(c, k, "keys must be strings, got %s",
                           describe(k, got, sizeof got));
        int id = key_id(defs, ndefs, k->text);
        if (id < 0)
            return fail_at(c, k, "unknown key '%s'%s%s (expected one of: %s)",
                           show_text(k->text, shown, sizeof shown),
                           *what ? " in " : "", what, exp);
        if (keys[id]) {
            if (!strcmp(keys[id]->text, k->text))
                return fail_at(c, k, "duplicate key '%s'%s", k->text,
                               first_at(c, keys[id], at, sizeof at));
            return fail_at(c, k, "duplicate key '%s': '%s' means the same%s",
                           k->text, keys[id]->text,
                           first_at(c, keys[id], at, sizeof at));
        }
        keys[id] = k;
        vals[id] = map_val(m, i);
    }
    return 0;
}

/* Keys of a mapping whose keys are names (workloads, params): strings,
 * each once. */
static int check_name_keys(const ctx *c, const ynode *m, const char *what)
{
    char got[DESCRIBE_SIZE], shown[SHOW_SIZE], at[64];
    size_t n = map_pairs(m), first, again;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        const ynode *k = map_key(m, i);
        if (k->kind != Y_SCALAR || is_null(k) || !k->text[0]) {
            free(names);
            return fail_at(c, k, "%s: keys must be non-empty strings, got %s",
                           what, describe(k, got, sizeof got));
        }
        names[i] = k->text;
    }
    int rc = find_repeat(names, NULL, n, &first, &again);
    free(names);
    if (rc) return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, map_key(m, again), "duplicate key '%s' in %s%s",
                       show_text(map_key(m, again)->text, shown, sizeof shown), what,
                       first_at(c, map_key(m, first), at, sizeof at));
    return 0;
}

/* ------------------------------------------------------------ axes */

/* An axis is one item or a list of them; `single` is the kind of one item
 * (a scalar, or a mapping for `job`). */
static int check_axis(const ctx *c, const ynode *n, const char *what,
                      const char *expect, ykind single)
{
    char got[DESCRIBE_SIZE];
    if (n->kind == single || (n->kind == Y_LIST && n->n > 0)) return 0;
    return fail_at(c, n, "%s must be %s or a list of them, got %s", what,
                   expect, describe(n, got, sizeof got));
}

static size_t axis_len(const ynode *n, ykind single)
{
    return n->kind == single ? 1 : n->n;
}

static const ynode *axis_at(const ynode *n, ykind single, size_t i)
{
    return n->kind == single ? n : n->kids[i];
}

static int string_axis(const ctx *c, const ynode *n, const char *what,
                       char ***out, size_t *count)
{
    char shown[SHOW_SIZE], at[64];
    if (check_axis(c, n, what, "a non-empty string", Y_SCALAR)) return -1;
    size_t len = axis_len(n, Y_SCALAR), first, again;
    /* Attach the array at once so the caller's free sees every string. */
    if (!(*out = calloc(len, sizeof **out))) return fail_oom(c);
    *count = len;
    for (size_t i = 0; i < len; i++)
        if (get_name(c, axis_at(n, Y_SCALAR, i), what, &(*out)[i])) return -1;
    if (find_repeat((const char *const *)*out, NULL, len, &first, &again))
        return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, axis_at(n, Y_SCALAR, again), "%s '%s' is listed twice%s",
                       what, show_text((*out)[again], shown, sizeof shown),
                       first_at(c, axis_at(n, Y_SCALAR, first), at, sizeof at));
    return 0;
}

static bool eta_ok(double v) { return v >= 0.0 && v <= 1.0; }
static bool beta_ok(double v) { return v > 0.0; }

static int real_axis(const ctx *c, const ynode *n, const char *what,
                     const char *expect, bool allow_inf, bool (*ok)(double),
                     double **out, size_t *count)
{
    char got[DESCRIBE_SIZE], at[64];
    if (check_axis(c, n, what, expect, Y_SCALAR)) return -1;
    size_t len = axis_len(n, Y_SCALAR), first, again;
    if (!(*out = calloc(len, sizeof **out))) return fail_oom(c);
    *count = len;
    for (size_t i = 0; i < len; i++) {
        const ynode *it = axis_at(n, Y_SCALAR, i);
        if (it->kind != Y_SCALAR || !parse_real(it->text, allow_inf, &(*out)[i]) ||
            !ok((*out)[i]))
            return fail_at(c, it, "%s must be %s, got %s", what, expect,
                           describe(it, got, sizeof got));
    }
    if (find_repeat(NULL, *out, len, &first, &again)) return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, axis_at(n, Y_SCALAR, again), "%s %s is listed twice%s",
                       what, axis_at(n, Y_SCALAR, again)->text,
                       first_at(c, axis_at(n, Y_SCALAR, first), at, sizeof at));
    return 0;
}

static int cmp_ulong(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return (x > y) - (x < y);
}

/* One seed item: "N" or the inclusive range "A..B". */
static bool parse_seed_item(const char *s, unsigned long *lo, unsigned long *hi)
{
    const char *dots = strstr(s, "..");
    if (!dots) {
        if (!parse_ulong(s, lo)) return false;
        *hi = *lo;
        return true;
    }
    char a[32], b[32];
    size_t la = (size_t)(dots - s), lb = strlen(dots + 2);
    if (la >= sizeof a || lb >= sizeof b) return false;
    memcpy(a, s, la);
    a[la] = '\0';
    memcpy(b, dots + 2, lb + 1);
    return parse_ulong(a, lo) && parse_ulong(b, hi);
}

static int seed_axis(const ctx *c, const ynode *n, const char *what,
                     unsigned long **out, size_t *count)
{
    const char *expect = "a non-negative integer or a range \"A..B\"";
    char got[DESCRIBE_SIZE];
    if (check_axis(c, n, what, expect, Y_SCALAR)) return -1;

    /* Check every item and count the seeds, then fill one array. */
    size_t items = axis_len(n, Y_SCALAR), total = 0;
    for (size_t i = 0; i < items; i++) {
        const ynode *it = axis_at(n, Y_SCALAR, i);
        unsigned long lo, hi;
        if (it->kind != Y_SCALAR || !parse_seed_item(it->text, &lo, &hi))
            return fail_at(c, it, "%s must be %s, got %s", what, expect,
                           describe(it, got, sizeof got));
        if (lo > hi)
            return fail_at(c, it, "%s range %s is empty: A must be <= B", what,
                           describe(it, got, sizeof got));
        if (hi - lo >= MAX_SEEDS)
            return fail_at(c, it, "%s range %s holds more than %lu seeds",
                           what, describe(it, got, sizeof got), MAX_SEEDS);
        if (hi - lo >= MAX_SEEDS - total)
            return fail_at(c, it, "%s lists more than %lu seeds in all", what,
                           MAX_SEEDS);
        total += hi - lo + 1;
    }
    if (!(*out = malloc(total * sizeof **out))) return fail_oom(c);
    *count = total;
    size_t k = 0;
    for (size_t i = 0; i < items; i++) {
        unsigned long lo, hi;
        parse_seed_item(axis_at(n, Y_SCALAR, i)->text, &lo, &hi);
        for (unsigned long s = lo;; s++) {
            (*out)[k++] = s;
            if (s == hi) break;      /* hi may be ULONG_MAX */
        }
    }

    /* Ranges make "which item repeated" vague, so point at the whole key. */
    unsigned long *sorted = malloc(total * sizeof *sorted);
    if (!sorted) return fail_oom(c);
    memcpy(sorted, *out, total * sizeof *sorted);
    qsort(sorted, total, sizeof *sorted, cmp_ulong);
    for (size_t i = 1; i < total; i++)
        if (sorted[i] == sorted[i - 1]) {
            unsigned long dup = sorted[i];
            free(sorted);
            return fail_at(c, n, "seed %lu is listed twice in %s", dup, what);
        }
    free(sorted);
    return 0;
}

/* ------------------------------------------------- workloads (specs) */

enum { S_NAME, S_DATASET, S_NETWORK, S_OPTIMIZER, S_TARGET, S_EPOCHS, S_B0,
       S_DISPLAY, S_COUNT };
static const keydef spec_keys[] = {
    { "name", S_NAME, true },            /* jobs only: skipped for catalogue */
    { "dataset", S_DATASET, true },
    { "network", S_NETWORK, true },
    { "optimizer", S_OPTIMIZER, true },
    { "target_metric", S_TARGET, true },
    { "max_epochs", S_EPOCHS, true },
    { "b0", S_B0, true },
    { "display", S_DISPLAY, true },      /* optional */
};

/* A workload mapping into *s. `what` prefixes field names in messages
 * ("job", "workloads.cifar100"); `with_name` allows the `name` key. */
static int parse_spec(const ctx *c, const ynode *m, const char *what,
                      bool with_name, ws_workload_spec *s)
{
    const ynode *keys[S_COUNT], *vals[S_COUNT];
    const keydef *defs = with_name ? spec_keys : spec_keys + 1;
    size_t ndefs = sizeof spec_keys / sizeof *spec_keys - !with_name;
    char field[128], got[DESCRIBE_SIZE];

    if (match_keys(c, m, what, defs, ndefs, S_COUNT, keys, vals)) return -1;
    for (int id = S_DATASET; id < S_DISPLAY; id++)
        if (!vals[id])
            return fail_at(c, m, "%s is missing key '%s'", what,
                           spec_keys[id].name);

    for (int id = 0; id < S_COUNT; id++) {
        const ynode *v = vals[id];
        if (!v) continue;
        snprintf(field, sizeof field, "%s.%s", what, spec_keys[id].name);
        unsigned long u;
        switch (id) {
        case S_NAME:
            if (set_string(c, v, field, &s->name) || check_name(c, v, field, s->name)) return -1;
            break;
        case S_DATASET:   if (set_string(c, v, field, &s->dataset)) return -1; break;
        case S_NETWORK:   if (set_string(c, v, field, &s->network)) return -1; break;
        case S_OPTIMIZER: if (set_string(c, v, field, &s->optimizer)) return -1; break;
        case S_DISPLAY:   if (set_display(c, v, field, &s->display)) return -1; break;
        case S_TARGET:
            if (v->kind != Y_SCALAR || !parse_real(v->text, false, &s->target_metric))
                return fail_at(c, v, "%s must be a number, got %s", field,
                               describe(v, got, sizeof got));
            break;
        case S_EPOCHS:
        case S_B0:
            if (v->kind != Y_SCALAR || !parse_int_in(v->text, 1, INT_MAX, &u))
                return fail_at(c, v, "%s must be a positive integer, got %s",
                               field, describe(v, got, sizeof got));
            *(id == S_EPOCHS ? &s->max_epochs : &s->b0) = (int)u;
            break;
        }
    }
    if (!s->name) {             /* the dataset names the job */
        if (!(s->name = strdup(s->dataset))) return fail_oom(c);
        snprintf(field, sizeof field, "%s.dataset (the name, as no name is given)", what);
        if (check_name(c, vals[S_DATASET], field, s->name)) return -1;
    }
    if (!(s->where = where_of(c, m))) return fail_oom(c);
    return 0;
}

static void spec_free(ws_workload_spec *s)
{
    free(s->display);
    free(s->where);
    free(s->name);
    free(s->dataset);
    free(s->network);
    free(s->optimizer);
}

static int job_axis(const ctx *c, const ynode *n, const char *what,
                    ws_workload_spec **out, size_t *count)
{
    char shown[SHOW_SIZE], at[64];
    if (check_axis(c, n, what,
                   "a mapping {name, dataset, network, optimizer, "
                   "target_metric, max_epochs, b0}", Y_MAP))
        return -1;
    size_t len = axis_len(n, Y_MAP), first, again;
    if (!(*out = calloc(len, sizeof **out))) return fail_oom(c);
    *count = len;
    for (size_t i = 0; i < len; i++)
        if (parse_spec(c, axis_at(n, Y_MAP, i), what, true, &(*out)[i])) return -1;

    const char **names = malloc(len * sizeof *names);
    if (!names) return fail_oom(c);
    for (size_t i = 0; i < len; i++) names[i] = (*out)[i].name;
    int rc = find_repeat(names, NULL, len, &first, &again);
    free(names);
    if (rc) return fail_oom(c);
    if (again != SIZE_MAX)
        return fail_at(c, axis_at(n, Y_MAP, again), "%s '%s' is listed twice%s",
                       what, show_text((*out)[again].name, shown, sizeof shown),
                       first_at(c, axis_at(n, Y_MAP, first), at, sizeof at));
    return 0;
}

/* ---------------------------------------------------------- policies */

static void policy_free(ws_policy_ref *p)
{
    free(p->name);
    free(p->where);
    for (size_t i = 0; i < p->n_params; i++) {
        free(p->params[i].key);
        free(p->params[i].value);
        free(p->params[i].where);
    }
    free(p->params);
    memset(p, 0, sizeof *p);
}

static bool valid_param_name(const char *s);

void ws_policy_ref_free(ws_policy_ref *p) { policy_free(p); }

int ws_policy_ref_parse(const char *s, size_t len, const char *where, ws_policy_ref *out,
                        ws_error *err)
{
    memset(out, 0, sizeof *out);
    const char *brace = memchr(s, '{', len);
    size_t nlen = brace ? (size_t)(brace - s) : len;
    if (nlen == 0)
        return ws_fail(err, "%s: '%.*s' has no policy name", where, (int)len, s);
    if (brace && s[len - 1] != '}')
        return ws_fail(err, "%s: '%.*s': parameters must end with '}'", where, (int)len, s);
    if (!(out->name = strndup(s, nlen)) || !(out->where = strdup(where))) goto oom;
    if (!brace) return 0;
    const char *q = brace + 1, *end = s + len - 1;
    while (q < end) {
        size_t n = strcspn(q, ",}");
        if (q + n > end) n = (size_t)(end - q);
        const char *eq = memchr(q, '=', n);
        if (!eq || eq == q || eq + 1 == q + n) {
            ws_fail(err, "%s: '%.*s' is not KEY=VALUE in '%.*s'", where, (int)n, q, (int)len, s);
            policy_free(out);
            return -1;
        }
        ws_param_raw r = {strndup(q, (size_t)(eq - q)), strndup(eq + 1, (size_t)(q + n - eq - 1)),
                          strdup(where)};
        ws_param_raw *np = realloc(out->params, (out->n_params + 1) * sizeof *np);
        if (!r.key || !r.value || !r.where || !np) {
            free(r.key);
            free(r.value);
            free(r.where);
            if (np) out->params = np;
            goto oom;
        }
        out->params = np;
        if (!valid_param_name(r.key)) {
            ws_fail(err, "%s: bad parameter name '%s' in '%.*s'", where, r.key, (int)len, s);
            out->params[out->n_params++] = r;
            policy_free(out);
            return -1;
        }
        for (size_t i = 0; i < out->n_params; i++)
            if (!strcmp(out->params[i].key, r.key)) {
                ws_fail(err, "%s: parameter '%s' given twice in '%.*s'", where, r.key,
                        (int)len, s);
                out->params[out->n_params++] = r;
                policy_free(out);
                return -1;
            }
        out->params[out->n_params++] = r;
        q += n + (q + n < end);
    }
    return 0;
oom:
    policy_free(out);
    return ws_fail(err, "out of memory");
}

/* Parameter names must be reachable as `--set bso.params.NAME=...`. */
static bool valid_param_name(const char *s)
{
    return s[0] && strspn(s, "abcdefghijklmnopqrstuvwxyz"
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == strlen(s);
}

/* Set parameter `key` (written at node k, NULL for a --set) of *p to the
 * scalar node v, replacing an earlier value. */
static int put_param(const ctx *c, ws_policy_ref *p, const char *what,
                     const char *key, const ynode *k, const ynode *v)
{
    char got[DESCRIBE_SIZE], shown[SHOW_SIZE];
    if (!valid_param_name(key))
        return fail_at(c, k ? k : v, "%s.params: bad parameter name '%s' (use letters, "
                       "digits, '_' and '-')", what,
                       show_text(key, shown, sizeof shown));
    /* Values stay text (only the plugin knows their types), but a list or
     * mapping, or nothing at all, cannot be one. */
    if (v->kind != Y_SCALAR || (v->plain && !v->text[0]))
        return fail_at(c, v, "%s.params.%s must be a single value, got %s",
                       what, key, describe(v, got, sizeof got));

    char *value = strdup(v->text), *where = where_of(c, v);
    if (!value || !where) goto oom;
    for (size_t i = 0; i < p->n_params; i++)
        if (!strcmp(p->params[i].key, key)) {
            free(p->params[i].value);
            free(p->params[i].where);
            p->params[i].value = value;
            p->params[i].where = where;
            return 0;
        }
    char *name = strdup(key);
    ws_param_raw *grown = realloc(p->params, (p->n_params + 1) * sizeof *grown);
    if (grown) p->params = grown;
    if (!name || !grown) {
        free(name);
        goto oom;
    }
    p->params[p->n_params++] = (ws_param_raw){ name, value, where };
    return 0;
oom:
    free(value);
    free(where);
    return fail_oom(c);
}

static int parse_params(const ctx *c, const ynode *m, const char *what,
                        ws_policy_ref *p)
{
    char got[DESCRIBE_SIZE], ctxname[64];
    if (is_null(m)) return 0;     /* `params:` with every entry commented out */
    if (m->kind != Y_MAP)
        return fail_at(c, m, "%s.params must be a mapping, got %s", what,
                       describe(m, got, sizeof got));
    snprintf(ctxname, sizeof ctxname, "%s.params", what);
    if (check_name_keys(c, m, ctxname)) return -1;
    for (size_t i = 0; i < map_pairs(m); i++)
        if (put_param(c, p, what, map_key(m, i)->text, map_key(m, i),
                      map_val(m, i)))
            return -1;
    return 0;
}

enum { P_NAME, P_PARAMS, P_COUNT };
static const keydef policy_keys[] = {
    { "name", P_NAME, true },
    { "params", P_PARAMS, true },
};

/* `bso: zeus` or `bso: {name: zeus, params: {...}}` into *p (zeroed). */
static int parse_policy(const ctx *c, const ynode *n, const char *what,
                        ws_policy_ref *p)
{
    const ynode *keys[P_COUNT], *vals[P_COUNT];
    char field[32], got[DESCRIBE_SIZE];
    if (n->kind != Y_MAP) {
        if (n->kind != Y_SCALAR || is_null(n) || !n->text[0])
            return fail_at(c, n, "%s must be a policy name or a mapping "
                           "{name, params}, got %s", what,
                           describe(n, got, sizeof got));
        if (get_string(c, n, what, &p->name)) return -1;
        if (!(p->where = where_of(c, n))) return fail_oom(c);
        return 0;
    }
    if (match_keys(c, n, what, policy_keys, P_COUNT, P_COUNT, keys, vals))
        return -1;
    if (!vals[P_NAME])
        return fail_at(c, n, "%s is missing key 'name'", what);
    snprintf(field, sizeof field, "%s.name", what);
    if (get_string(c, vals[P_NAME], field, &p->name)) return -1;
    if (!(p->where = where_of(c, vals[P_NAME]))) return fail_oom(c);
    return vals[P_PARAMS] ? parse_params(c, vals[P_PARAMS], what, p) : 0;
}

/* -------------------------------------------------------- run configs */

enum { K_GPU, K_WORKLOAD, K_JOB, K_ETA, K_BETA, K_SEED, K_RECURRENCES, K_BSO,
       K_PLO, K_OUT, K_TRACES, K_FORMAT, K_POWER_CAP, K_INPUT_STALL, K_IDLE_POWER,
       K_CARBON, K_START, K_PRICE, K_OBJECTIVE, K_COUNT };
static const keydef run_keys[] = {
    { "gpu", K_GPU, true },           { "gpus", K_GPU, false },
    { "workload", K_WORKLOAD, true }, { "workloads", K_WORKLOAD, false },
    { "job", K_JOB, true },           { "jobs", K_JOB, false },
    { "eta", K_ETA, true },
    { "beta", K_BETA, true },
    { "seed", K_SEED, true },         { "seeds", K_SEED, false },
    { "recurrences", K_RECURRENCES, true },
    { "bso", K_BSO, true },
    { "plo", K_PLO, true },
    { "out", K_OUT, true },
    { "traces", K_TRACES, true },
    { "format", K_FORMAT, true },
    { "power_cap", K_POWER_CAP, true },
    { "input_stall", K_INPUT_STALL, true },
    { "idle_power", K_IDLE_POWER, true },
    { "carbon", K_CARBON, true },
    { "start", K_START, true },
    { "price", K_PRICE, true },
    { "objective", K_OBJECTIVE, true },
};
#define N_RUN_KEYS (sizeof run_keys / sizeof *run_keys)

static const char *const formats[] = { "table", "csv", "json" };

static bool valid_format(const char *s)
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (!strcmp(s, formats[i])) return true;
    return false;
}

static bool cap_ok(double v) { return v > 0.0; }
static bool stall_ok(double v) { return v >= 0.0 && v < 1.0; }
static bool nonneg_ok(double v) { return v >= 0.0; }

/* One number of a what-if key into *out, checked by ok(). */
static int whatif_real(const ctx *c, const ynode *v, const char *what,
                       const char *expect, bool (*ok)(double), double *out)
{
    char got[DESCRIBE_SIZE];
    if (v->kind != Y_SCALAR || !parse_real(v->text, false, out) || !ok(*out))
        return fail_at(c, v, "%s must be %s, got %s", what, expect,
                       describe(v, got, sizeof got));
    return 0;
}

/* The what-if keys (wattsim/config.h ws_whatif_spec). */
static int apply_whatif(const ctx *c, int id, const char *what, const ynode *v,
                        ws_whatif_spec *w)
{
    char got[DESCRIBE_SIZE];
    int slot = id - K_POWER_CAP;
    if (!(w->where[slot] = where_of(c, v))) return fail_oom(c);
    switch (id) {
    case K_POWER_CAP:
        return whatif_real(c, v, what, "a power in W > 0", cap_ok, &w->power_cap);
    case K_INPUT_STALL:
        return whatif_real(c, v, what, "a fraction in [0, 1)", stall_ok,
                           &w->input_stall);
    case K_IDLE_POWER:
        return whatif_real(c, v, what, "a power in W >= 0", nonneg_ok,
                           &w->idle_power);
    case K_CARBON: return get_string(c, v, what, &w->carbon);
    case K_START: {
        double t;
        if (v->kind != Y_SCALAR || ws_parse_time(v->text, &t))
            return fail_at(c, v, "%s must be an ISO 8601 time (e.g."
                           " 2022-10-20T06:20:00Z), got %s", what,
                           describe(v, got, sizeof got));
        return get_string(c, v, what, &w->start);
    }
    case K_PRICE:
        w->price_value = NAN;
        if (v->kind == Y_SCALAR && parse_real(v->text, false, &w->price_value)
            && !(w->price_value >= 0.0))
            return fail_at(c, v, "%s must be a price in $/kWh >= 0 or a series"
                           " file, got %s", what, describe(v, got, sizeof got));
        return get_string(c, v, what, &w->price);
    case K_OBJECTIVE:
        if (v->kind != Y_SCALAR || (strcmp(v->text, "energy") && strcmp(v->text, "carbon")
                                    && strcmp(v->text, "price")))
            return fail_at(c, v, "%s must be one of energy, carbon, price, got %s",
                           what, describe(v, got, sizeof got));
        return get_string(c, v, what, &w->objective);
    }
    return fail_at(c, v, "internal error: no key %d", id);
}

/* Parse the value of top-level key `id` (written as `what`) into the
 * zeroed scratch config t. */
static int apply_key(const ctx *c, int id, const char *what, const ynode *v,
                     ws_run_config *t)
{
    char got[DESCRIBE_SIZE];
    unsigned long u;
    switch (id) {
    case K_GPU:
        if (!(t->where_gpus = where_of(c, v))) return fail_oom(c);
        return string_axis(c, v, what, &t->gpus, &t->n_gpus);
    case K_WORKLOAD:
        if (!(t->where_workloads = where_of(c, v))) return fail_oom(c);
        return string_axis(c, v, what, &t->workloads, &t->n_workloads);
    case K_JOB:      return job_axis(c, v, what, &t->jobs, &t->n_jobs);
    case K_ETA:
        return real_axis(c, v, what, "a number in [0, 1]", false, eta_ok,
                         &t->etas, &t->n_etas);
    case K_BETA:
        return real_axis(c, v, what, "a number > 0 or .inf", true, beta_ok,
                         &t->betas, &t->n_betas);
    case K_SEED:     return seed_axis(c, v, what, &t->seeds, &t->n_seeds);
    case K_RECURRENCES:
        if (v->kind == Y_SCALAR && !strcmp(v->text, "default")) {
            t->recurrences = 0;
            return 0;
        }
        if (v->kind != Y_SCALAR || !parse_int_in(v->text, 1, WS_MAX_RECURRENCES, &u))
            return fail_at(c, v, "%s must be an integer in 1..%ld or 'default', "
                           "got %s", what, (long)WS_MAX_RECURRENCES, describe(v, got, sizeof got));
        t->recurrences = (long)u;
        return 0;
    case K_BSO:      return parse_policy(c, v, what, &t->bso);
    case K_PLO:      return parse_policy(c, v, what, &t->plo);
    case K_OUT:      return get_string(c, v, what, &t->out_dir);
    case K_TRACES:   return get_string(c, v, what, &t->traces);
    case K_FORMAT:
        if (v->kind != Y_SCALAR || !valid_format(v->text))
            return fail_at(c, v, "%s must be one of table, csv, json, got %s",
                           what, describe(v, got, sizeof got));
        return get_string(c, v, what, &t->format);
    default:
        return apply_whatif(c, id, what, v, &t->whatif);
    }
    return fail_at(c, v, "internal error: no key %d", id);
}

static void swap_mem(void *a, void *b, size_t n)
{
    unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        unsigned char t = x[i];
        x[i] = y[i];
        y[i] = t;
    }
}
#define SWAP_FIELD(a, b, f) swap_mem(&(a)->f, &(b)->f, sizeof (a)->f)

/* Move key `id` from the scratch config into cfg; the old value lands in
 * the scratch config, which the caller frees. */
static void swap_key(ws_run_config *cfg, ws_run_config *t, int id)
{
    switch (id) {
    case K_GPU:         SWAP_FIELD(cfg, t, gpus); SWAP_FIELD(cfg, t, n_gpus);
                        SWAP_FIELD(cfg, t, where_gpus); break;
    case K_WORKLOAD:    SWAP_FIELD(cfg, t, workloads);
                        SWAP_FIELD(cfg, t, n_workloads);
                        SWAP_FIELD(cfg, t, where_workloads); break;
    case K_JOB:         SWAP_FIELD(cfg, t, jobs); SWAP_FIELD(cfg, t, n_jobs); break;
    case K_ETA:         SWAP_FIELD(cfg, t, etas); SWAP_FIELD(cfg, t, n_etas); break;
    case K_BETA:        SWAP_FIELD(cfg, t, betas); SWAP_FIELD(cfg, t, n_betas); break;
    case K_SEED:        SWAP_FIELD(cfg, t, seeds); SWAP_FIELD(cfg, t, n_seeds); break;
    case K_RECURRENCES: SWAP_FIELD(cfg, t, recurrences); break;
    case K_BSO:         SWAP_FIELD(cfg, t, bso); break;
    case K_PLO:         SWAP_FIELD(cfg, t, plo); break;
    case K_OUT:         SWAP_FIELD(cfg, t, out_dir); break;
    case K_TRACES:      SWAP_FIELD(cfg, t, traces); break;
    case K_FORMAT:      SWAP_FIELD(cfg, t, format); break;
    case K_POWER_CAP:   SWAP_FIELD(cfg, t, whatif.power_cap); break;
    case K_INPUT_STALL: SWAP_FIELD(cfg, t, whatif.input_stall); break;
    case K_IDLE_POWER:  SWAP_FIELD(cfg, t, whatif.idle_power); break;
    case K_CARBON:      SWAP_FIELD(cfg, t, whatif.carbon); break;
    case K_START:       SWAP_FIELD(cfg, t, whatif.start); break;
    case K_PRICE:       SWAP_FIELD(cfg, t, whatif.price);
                        SWAP_FIELD(cfg, t, whatif.price_value); break;
    case K_OBJECTIVE:   SWAP_FIELD(cfg, t, whatif.objective); break;
    }
    if (id >= K_POWER_CAP && id < K_COUNT)
        SWAP_FIELD(cfg, t, whatif.where[id - K_POWER_CAP]);
}

static char **one_string(const char *s, size_t *n)
{
    char **a = malloc(sizeof *a);
    if (a && !(a[0] = strdup(s))) {
        free(a);
        a = NULL;
    }
    *n = a != NULL;
    return a;
}

static double *one_real(double v, size_t *n)
{
    double *a = malloc(sizeof *a);
    if (a) *a = v;
    *n = a != NULL;
    return a;
}

static void default_policy(ws_policy_ref *p, const char *name)
{
    p->name = strdup(name);
    p->where = strdup("default");
}

/* Out of memory here leaves lists empty; ws_run_config_validate then
 * reports them, so init itself never fails. */
void ws_run_config_init(ws_run_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->path = strdup("");
    cfg->gpus = one_string("v100", &cfg->n_gpus);
    cfg->etas = one_real(0.5, &cfg->n_etas);
    cfg->betas = one_real(2.0, &cfg->n_betas);
    if ((cfg->seeds = malloc(sizeof *cfg->seeds))) {
        cfg->seeds[0] = 1;
        cfg->n_seeds = 1;
    }
    cfg->recurrences = 0;
    cfg->whatif.price_value = NAN;
    default_policy(&cfg->bso, "zeus");
    default_policy(&cfg->plo, "jit");
}

void ws_run_config_free(ws_run_config *cfg)
{
    if (!cfg) return;
    free(cfg->path);
    for (size_t i = 0; i < cfg->n_gpus; i++) free(cfg->gpus[i]);
    free(cfg->gpus);
    free(cfg->where_gpus);
    free(cfg->where_workloads);
    for (size_t i = 0; i < cfg->n_workloads; i++) free(cfg->workloads[i]);
    free(cfg->workloads);
    for (size_t i = 0; i < cfg->n_jobs; i++) spec_free(&cfg->jobs[i]);
    free(cfg->jobs);
    free(cfg->etas);
    free(cfg->betas);
    free(cfg->seeds);
    policy_free(&cfg->bso);
    policy_free(&cfg->plo);
    free(cfg->out_dir);
    free(cfg->traces);
    free(cfg->format);
    free(cfg->whatif.carbon);
    free(cfg->whatif.start);
    free(cfg->whatif.price);
    free(cfg->whatif.objective);
    for (int i = 0; i < WS_WI_COUNT; i++) free(cfg->whatif.where[i]);
    memset(cfg, 0, sizeof *cfg);   /* a second free is harmless */
}

int ws_run_config_load(const char *path, ws_run_config *cfg, ws_error *err)
{
    ctx c = { path ? path : "(null)", NULL, 0, err };
    const ynode *keys[K_COUNT], *vals[K_COUNT];
    ynode *root;
    ws_run_config t;

    if (!path || !cfg) return ws_fail(err, "no config file or struct given");
    if (read_file_tree(&c, &root)) return -1;
    memset(&t, 0, sizeof t);
    int rc = match_keys(&c, root, "", run_keys, N_RUN_KEYS, K_COUNT, keys, vals);
    /* Values in file order, so the first bad one in the file is reported. */
    for (size_t i = 0; rc == 0 && i < map_pairs(root); i++) {
        int id = key_id(run_keys, N_RUN_KEYS, map_key(root, i)->text);
        rc = apply_key(&c, id, map_key(root, i)->text, map_val(root, i), &t);
    }
    if (rc == 0 && !(t.path = strdup(path))) rc = fail_oom(&c);
    if (rc == 0) {
        for (int id = 0; id < K_COUNT; id++)
            if (vals[id]) swap_key(cfg, &t, id);
        SWAP_FIELD(cfg, &t, path);
    }
    ws_run_config_free(&t);
    ynode_free(root);
    return rc;
}

/* --set bso.name=X, bso.params=..., bso.params.NAME=X (and plo). */
static int set_policy_part(const ctx *c, ws_policy_ref *p, const char *what,
                           const char *rest, const ynode *v)
{
    char field[32];
    if (!strcmp(rest, "name")) {
        char *name, *where;
        snprintf(field, sizeof field, "%s.name", what);
        if (get_string(c, v, field, &name)) return -1;
        if (!(where = strdup("--set"))) {
            free(name);
            return fail_oom(c);
        }
        free(p->name);
        free(p->where);
        p->name = name;
        p->where = where;
        return 0;
    }
    if (!strcmp(rest, "params")) {          /* replace them all */
        ws_policy_ref t = { 0 };
        if (parse_params(c, v, what, &t)) {
            policy_free(&t);
            return -1;
        }
        SWAP_FIELD(p, &t, params);
        SWAP_FIELD(p, &t, n_params);
        policy_free(&t);
        return 0;
    }
    return put_param(c, p, what, rest + strlen("params."), NULL, v);
}

/* Is `key` one of PREFIX.name, PREFIX.params or PREFIX.params.NAME? */
static bool is_policy_key(const char *key, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(key, prefix, n) || key[n] != '.') return false;
    key += n + 1;
    return !strcmp(key, "name") || !strcmp(key, "params") ||
           (!strncmp(key, "params.", 7) && key[7]);
}

int ws_run_config_set(ws_run_config *cfg, const char *assignment, ws_error *err)
{
    char shown[SHOW_SIZE], keyshown[SHOW_SIZE], exp[256];
    if (!cfg) return ws_fail(err, "--set: no run config");
    if (!assignment) return ws_fail(err, "--set: expected KEY=VALUE");
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return ws_fail(err, "--set %s: expected KEY=VALUE",
                       show_text(assignment, shown, sizeof shown));

    /* The key without surrounding blanks ("eta = 0.3" from a quoted shell
     * word); the value is YAML, which skips blanks itself. */
    const char *kb = assignment, *ke = eq;
    while (kb < ke && (*kb == ' ' || *kb == '\t')) kb++;
    while (ke > kb && (ke[-1] == ' ' || ke[-1] == '\t')) ke--;
    char *key = strndup(kb, (size_t)(ke - kb));
    if (!key) return ws_fail(err, "--set: out of memory");
    const char *value = eq + 1;
    ctx c = { NULL, show_text(key, shown, sizeof shown), strlen(value), err };

    /* The key first: a typo in it is the likelier mistake. */
    int id = key_id(run_keys, N_RUN_KEYS, key);
    ws_policy_ref *policy = is_policy_key(key, "bso") ? &cfg->bso
                          : is_policy_key(key, "plo") ? &cfg->plo : NULL;
    if (id < 0 && !policy) {
        expected_list(run_keys, N_RUN_KEYS, exp, sizeof exp);
        fail_at(&c, NULL, "unknown key '%s' (expected one of: %s, bso.name, "
                "bso.params.NAME, plo.name, plo.params.NAME)",
                show_text(key, keyshown, sizeof keyshown), exp);
        free(key);
        return -1;
    }

    ynode *v = NULL;
    int rc = read_tree(&c, (const unsigned char *)value, strlen(value), &v);
    if (rc == 0 && !v) {        /* "key=" or only a comment: an empty value */
        if (!(v = calloc(1, sizeof *v)) || !(v->text = strdup(""))) {
            rc = fail_oom(&c);
        } else {
            v->kind = Y_SCALAR;
            v->plain = true;
            v->line = v->col = 1;
        }
    }
    if (rc == 0 && id >= 0) {
        ws_run_config t;
        memset(&t, 0, sizeof t);
        if ((rc = apply_key(&c, id, key, v, &t)) == 0) swap_key(cfg, &t, id);
        ws_run_config_free(&t);
    } else if (rc == 0) {
        rc = set_policy_part(&c, policy, policy == &cfg->bso ? "bso" : "plo",
                             key + 4, v);
    }
    ynode_free(v);
    free(key);
    return rc;
}

__attribute__((format(printf, 3, 4)))
static int fail_cfg(const ws_run_config *cfg, ws_error *err, const char *fmt, ...)
{
    char msg[WS_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cfg->path && cfg->path[0]) return ws_fail(err, "%s: %s", cfg->path, msg);
    return ws_fail(err, "%s", msg);
}

static bool nonempty(const char *s) { return s && s[0]; }

int ws_whatif_spec_validate(const ws_whatif_spec *w, ws_error *err)
{
    char *const *at = w->where;
    if (at[WS_WI_INPUT_STALL] && w->input_stall > 0 && !at[WS_WI_IDLE_POWER])
        return ws_fail(err, "%s: an input stall needs the power the GPU draws while"
                       " it waits: give idle_power (--idle-power W)", at[WS_WI_INPUT_STALL]);
    if (at[WS_WI_IDLE_POWER] && !at[WS_WI_INPUT_STALL])
        return ws_fail(err, "%s: idle power is drawn during input stalls: give"
                       " input_stall (--input-stall S) too", at[WS_WI_IDLE_POWER]);
    if (at[WS_WI_START] && !w->carbon && !(w->price && isnan(w->price_value)))
        return ws_fail(err, "%s: start places the first recurrence on a carbon or"
                       " price series: give carbon (--carbon FILE) or a price series"
                       " (--price FILE)",
                       at[WS_WI_START]);
    if (w->objective && !strcmp(w->objective, "carbon") && !w->carbon)
        return ws_fail(err, "%s: objective carbon needs a carbon-intensity series:"
                       " give carbon (--carbon FILE)", at[WS_WI_OBJECTIVE]);
    if (w->objective && !strcmp(w->objective, "price") && !w->price)
        return ws_fail(err, "%s: objective price needs a price: give price (--price"
                       " $/kWh or FILE)",
                       at[WS_WI_OBJECTIVE]);
    return 0;
}

int ws_run_config_validate(const ws_run_config *cfg, ws_error *err)
{
    if (!cfg) return ws_fail(err, "no run config");
    if (cfg->n_workloads + cfg->n_jobs == 0)
        return fail_cfg(cfg, err, "no workload to run: give 'workload' (a "
                        "name from the catalogue) or an inline 'job'");
    if (!cfg->n_gpus) return fail_cfg(cfg, err, "no gpu given");
    if (!cfg->n_etas) return fail_cfg(cfg, err, "no eta given");
    if (!cfg->n_betas) return fail_cfg(cfg, err, "no beta given");
    if (!cfg->n_seeds) return fail_cfg(cfg, err, "no seed given");

    /* The rest can only go wrong when a caller fills the struct itself (or
     * init ran out of memory): the parser already enforces it. */
    for (size_t i = 0; i < cfg->n_gpus; i++)
        if (!nonempty(cfg->gpus[i])) return fail_cfg(cfg, err, "empty gpu name");
    for (size_t i = 0; i < cfg->n_etas; i++)
        if (!eta_ok(cfg->etas[i]))
            return fail_cfg(cfg, err, "eta %g is not in [0, 1]", cfg->etas[i]);
    for (size_t i = 0; i < cfg->n_betas; i++)
        if (!beta_ok(cfg->betas[i]))
            return fail_cfg(cfg, err, "beta %g is not > 0", cfg->betas[i]);
    if (cfg->recurrences < 0)
        return fail_cfg(cfg, err, "recurrences %ld is negative", cfg->recurrences);
    if (!nonempty(cfg->bso.name)) return fail_cfg(cfg, err, "no bso policy given");
    if (!nonempty(cfg->plo.name)) return fail_cfg(cfg, err, "no plo policy given");
    if (ws_whatif_spec_validate(&cfg->whatif, err)) return -1;
    if (cfg->format && !valid_format(cfg->format))
        return fail_cfg(cfg, err, "format must be one of table, csv, json, "
                        "got '%s'", cfg->format);
    for (size_t i = 0; i < cfg->n_jobs; i++) {
        const ws_workload_spec *j = &cfg->jobs[i];
        if (!nonempty(j->name) || !nonempty(j->dataset) ||
            !nonempty(j->network) || !nonempty(j->optimizer) ||
            !isfinite(j->target_metric) || j->max_epochs <= 0 || j->b0 <= 0)
            return fail_cfg(cfg, err, "job %zu is incomplete", i + 1);
    }

    /* The run plan is the cross product; its size must fit a size_t. */
    size_t axes[] = { cfg->n_gpus, cfg->n_workloads + cfg->n_jobs, cfg->n_etas,
                      cfg->n_betas, cfg->n_seeds };
    size_t runs = 1;
    for (size_t i = 0; i < sizeof axes / sizeof *axes; i++) {
        if (runs > SIZE_MAX / axes[i])
            return fail_cfg(cfg, err, "the run plan (gpu x workload x eta x beta "
                            "x seed) has too many runs");
        runs *= axes[i];
    }

    /* Results are keyed by workload name, so a name may run only once
     * whether it comes from the catalogue or an inline job. */
    size_t n = cfg->n_workloads + cfg->n_jobs, first, again;
    const char **names = malloc(n * sizeof *names);
    if (!names) return fail_cfg(cfg, err, "out of memory");
    for (size_t i = 0; i < cfg->n_workloads; i++) {
        if (!nonempty(cfg->workloads[i])) {
            free(names);
            return fail_cfg(cfg, err, "empty workload name");
        }
        names[i] = cfg->workloads[i];
    }
    for (size_t i = 0; i < cfg->n_jobs; i++) names[cfg->n_workloads + i] = cfg->jobs[i].name;
    int rc = find_repeat(names, NULL, n, &first, &again);
    free(names);
    if (rc) return fail_cfg(cfg, err, "out of memory");
    if (again != SIZE_MAX) {
        char shown[SHOW_SIZE];
        const char *name = again < cfg->n_workloads
                               ? cfg->workloads[again]
                               : cfg->jobs[again - cfg->n_workloads].name;
        if (first < cfg->n_workloads && again >= cfg->n_workloads)
            return fail_cfg(cfg, err, "workload '%s' is given both as a "
                            "workload and as a job name; rename the job",
                            show_text(name, shown, sizeof shown));
        return fail_cfg(cfg, err, "workload '%s' is listed twice",
                        show_text(name, shown, sizeof shown));
    }
    return 0;
}

/* ---------------------------------------------------------- catalogue */

enum { C_GPUS, C_WORKLOADS, C_GPU_DISPLAY, C_COUNT };
static const keydef catalogue_keys[] = {
    { "gpus", C_GPUS, true },
    { "workloads", C_WORKLOADS, true },
    { "gpu_display", C_GPU_DISPLAY, true },       /* optional */
};

/* gpu_display: {v100: "V100", ...}: every key one of `gpus`. */
static int load_gpu_display(const ctx *c, const ynode *m, ws_catalogue *out)
{
    char got[DESCRIBE_SIZE], what[128], shown[SHOW_SIZE];
    if (m->kind != Y_MAP)
        return fail_at(c, m, "gpu_display must be a mapping of GPU names to display"
                       " names, got %s", describe(m, got, sizeof got));
    if (check_name_keys(c, m, "gpu_display")) return -1;
    if (!(out->gpu_display = calloc(out->n_gpus, sizeof *out->gpu_display)))
        return fail_oom(c);
    for (size_t i = 0; i < map_pairs(m); i++) {
        const char *name = map_key(m, i)->text;
        size_t g = 0;
        while (g < out->n_gpus && strcmp(out->gpus[g], name)) g++;
        if (g == out->n_gpus)
            return fail_at(c, map_key(m, i), "gpu_display: '%s' is not one of gpus",
                           show_text(name, shown, sizeof shown));
        snprintf(what, sizeof what, "gpu_display.%s", show_text(name, shown, sizeof shown));
        if (set_display(c, map_val(m, i), what, &out->gpu_display[g])) return -1;
    }
    return 0;
}

static int load_catalogue(const ctx *c, const ynode *root, ws_catalogue *out)
{
    const ynode *keys[C_COUNT], *vals[C_COUNT];
    char got[DESCRIBE_SIZE], what[128], shown[SHOW_SIZE];

    if (match_keys(c, root, "the catalogue", catalogue_keys, C_COUNT, C_COUNT,
                   keys, vals))
        return -1;
    for (int id = 0; id < C_GPU_DISPLAY; id++)
        if (!vals[id])
            return fail_at(c, root, "the catalogue is missing key '%s'",
                           catalogue_keys[id].name);
    if (string_axis(c, vals[C_GPUS], "gpus", &out->gpus, &out->n_gpus)) return -1;
    if (vals[C_GPU_DISPLAY] && load_gpu_display(c, vals[C_GPU_DISPLAY], out)) return -1;

    const ynode *w = vals[C_WORKLOADS];
    if (w->kind != Y_MAP || map_pairs(w) == 0)
        return fail_at(c, w, "workloads must be a mapping of workload names "
                       "to {dataset, network, ...}, got %s",
                       describe(w, got, sizeof got));
    if (check_name_keys(c, w, "workloads")) return -1;
    if (!(out->items = calloc(map_pairs(w), sizeof *out->items))) return fail_oom(c);
    out->n = map_pairs(w);
    for (size_t i = 0; i < out->n; i++) {
        snprintf(what, sizeof what, "workloads.%s",
                 show_text(map_key(w, i)->text, shown, sizeof shown));
        if (check_name(c, map_key(w, i), "workload", map_key(w, i)->text)) return -1;
        if (!(out->items[i].name = strdup(map_key(w, i)->text))) return fail_oom(c);
        if (parse_spec(c, map_val(w, i), what, false, &out->items[i])) return -1;
    }
    return 0;
}

int ws_catalogue_load(const char *path, ws_catalogue *out, ws_error *err)
{
    ctx c = { path, NULL, 0, err };
    ynode *root;
    if (!out) return ws_fail(err, "no catalogue to fill");
    memset(out, 0, sizeof *out);
    if (!path) return ws_fail(err, "no catalogue file given");
    if (read_file_tree(&c, &root)) return -1;
    int rc = load_catalogue(&c, root, out);
    ynode_free(root);
    if (rc) ws_catalogue_free(out);
    return rc;
}

const ws_workload_spec *ws_catalogue_find(const ws_catalogue *c, const char *name)
{
    if (!c || !name) return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].name && !strcmp(c->items[i].name, name)) return &c->items[i];
    return NULL;
}

const char *ws_catalogue_workload_display(const ws_catalogue *c, const char *name)
{
    const ws_workload_spec *w = ws_catalogue_find(c, name);
    return w && w->display ? w->display : name;
}

const char *ws_catalogue_gpu_display(const ws_catalogue *c, const char *name)
{
    for (size_t g = 0; c && c->gpu_display && g < c->n_gpus; g++)
        if (!strcmp(c->gpus[g], name) && c->gpu_display[g]) return c->gpu_display[g];
    return name;
}

void ws_catalogue_free(ws_catalogue *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) spec_free(&c->items[i]);
    free(c->items);
    for (size_t i = 0; i < c->n_gpus; i++) {
        free(c->gpus[i]);
        if (c->gpu_display) free(c->gpu_display[i]);
    }
    free(c->gpus);
    free(c->gpu_display);
    memset(c, 0, sizeof *c);
}
