/* The config reader's YAML layer: text -> tree of nodes with positions,
 * error messages, scalars, lists and mappings (see config_parse.h). */
#include "config_parse.h"
#include "wattsim/input.h"

/* ------------------------------------------------------------ the tree */



void ynode_free(ynode *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) ynode_free(n->kids[i]);
    free(n->kids);
    free(n->text);
    free(n);
}


/* YAML's spellings of null; `key:` with nothing after it reads as "". */
bool is_null(const ynode *n)
{
    return n->kind == Y_SCALAR && n->plain &&
           (!n->text[0] || !strcmp(n->text, "~") || !strcmp(n->text, "null") ||
            !strcmp(n->text, "Null") || !strcmp(n->text, "NULL"));
}

/* ---------------------------------------------------------------- errors */


/* User text made safe for a one-line message: control bytes, quotes and
 * backslashes escaped, cut after SHOW_MAX bytes (at a UTF-8 boundary). */
const char *show_text(const char *s, char *buf, size_t size)
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
const char *describe(const ynode *n, char *buf, size_t size)
{
    if (n->kind == Y_LIST) return n->n ? "a list" : "an empty list";
    if (n->kind == Y_MAP) return "a mapping";
    if (n->plain && !n->text[0]) return "nothing";
    char shown[SHOW_SIZE];
    snprintf(buf, size, "\"%s\"", show_text(n->text, shown, sizeof shown));
    return buf;
}


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
int fail_at(const ctx *c, const ynode *n, const char *fmt, ...)
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

int fail_oom(const ctx *c)
{
    return fail_at(c, NULL, "out of memory");
}

/* " (first at L:C)" to point back at an earlier node; a --set value is one
 * line so its positions would not help. */
const char *first_at(const ctx *c, const ynode *n, char *buf, size_t size)
{
    if (c->set_key) return "";
    snprintf(buf, size, " (first at %lu:%lu)", n->line, n->col);
    return buf;
}

/* "FILE:LINE:COL" or "--set", stored with policy names and parameters. */
char *where_of(const ctx *c, const ynode *n)
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
int read_tree(const ctx *c, const unsigned char *buf, size_t len,
                     ynode **root)
{
    reader r = { .c = c, .buf = buf, .len = len };
    int rc = 0, docs = 0;

    *root = NULL;
    /* A --set value (or an option carried as one) is one line: YAML would
     * fold a line break into a blank, and the message would show a name
     * that is not the one typed. Refused as YAML refuses other controls. */
    for (size_t i = 0; c->set_key && i < len; i++)
        if (buf[i] == '\n' || buf[i] == '\r')
            return fail_text(c, (pos){1, i + 1, i}, "control characters are not allowed"
                             " (U+%04X)", buf[i]);
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
    FILE *f = ws_input_fopen(c->file, c->err);      /* a regular file only */
    if (!f) return -1;
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
int read_file_tree(const ctx *c, ynode **root)
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
bool parse_real(const char *s, bool allow_inf, double *out)
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
bool parse_ulong(const char *s, unsigned long *out)
{
    const char *d = *s == '+' ? s + 1 : s;
    if (!*d || strspn(d, "0123456789") != strlen(d)) return false;
    errno = 0;
    unsigned long v = strtoul(d, NULL, 10);
    if (errno == ERANGE) return false;
    *out = v;
    return true;
}

bool parse_int_in(const char *s, unsigned long lo, unsigned long hi,
                         unsigned long *out)
{
    return parse_ulong(s, out) && *out >= lo && *out <= hi;
}

int get_string(const ctx *c, const ynode *n, const char *what, char **out)
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
int check_name(const ctx *c, const ynode *n, const char *what, const char *s)
{
    char why[64], shown[SHOW_SIZE];
    if (!ws_name_check(s, why, sizeof why)) return 0;
    return fail_at(c, n, "%s '%s' %s; names become part of file names: " WS_NAME_RULE,
                   what, show_text(s, shown, sizeof shown), why);
}

int get_name(const ctx *c, const ynode *n, const char *what, char **out)
{
    if (get_string(c, n, what, out)) return -1;
    return check_name(c, n, what, *out);
}

/* Replace *slot with a freshly parsed string (nothing changes on failure). */
int set_string(const ctx *c, const ynode *n, const char *what, char **slot)
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
int set_display(const ctx *c, const ynode *n, const char *what, char **slot)
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
int find_repeat(const char *const *names, const double *reals, size_t n,
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


int key_id(const keydef *defs, size_t ndefs, const char *name)
{
    for (size_t i = 0; i < ndefs; i++)
        if (!strcmp(defs[i].name, name)) return defs[i].id;
    return -1;
}

void expected_list(const keydef *defs, size_t ndefs, char *buf, size_t size)
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
int match_keys(const ctx *c, const ynode *m, const char *what,
                      const keydef *defs, size_t ndefs, size_t nids,
                      const ynode **keys, const ynode **vals)
{
    char got[DESCRIBE_SIZE], shown[SHOW_SIZE], exp[400], at[64];
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
int check_name_keys(const ctx *c, const ynode *m, const char *what)
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
