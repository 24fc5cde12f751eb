/*
 * `wattsim report DIR`: an index of every figure and table that wattsim
 * wrote into DIR and its subfolders (from their manifest.tsv files), as
 * REPORT.md and a self-contained report.html (figures embedded as images),
 * each item with the command behind it.
 *
 * DIR may have come from someone else (a colleague's results, a cluster's
 * scratch space), so the folder decides nothing about what is read or run:
 *   - files are read relative to the folder's descriptor, one name at a
 *     time, never through a symbolic link, only when regular (a FIFO would
 *     block, /dev/zero never ends), at most REPORT_MAX_FILE bytes each;
 *   - a manifest row names a file of its folder (a safe name: no '/', no
 *     leading '.'), else the manifest is corrupt: exit 2, nothing written;
 *   - an image is embedded only with its format's signature (PNG) or an
 *     XML prolog / <svg> element (SVG), and only as an <img> data URI under
 *     a Content-Security-Policy that allows no script: an SVG's <script>,
 *     onload= or javascript: never run, and no markup of it is inlined;
 *   - every text of a manifest or table is escaped for HTML and Markdown.
 * A listed file that is refused (a link, not a regular file, too large, a
 * wrong signature) is left out with one warning line each; the report is
 * still written and the exit status is 0.
 */
#define _GNU_SOURCE   /* O_DIRECTORY, O_CLOEXEC, fdopendir, fstatat */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_sweep.h"
#include "wattsim/infile.h"
#include "wattsim/markup.h"
#include "wattsim/outfile.h"
#include "wattsim/paper.h"
#include "wattsim/plot.h"

/* The most bytes read of any one file (a manifest, a table, an image):
 * wattsim's own are well under 1 MiB. */
#define REPORT_MAX_FILE (16u << 20)

static const char *REPORT_HELP =
    "usage: wattsim report DIR [--title TEXT] [--catalogue FILE] [--force]\n"
    "\n"
    "Write DIR/REPORT.md and DIR/report.html listing every figure and table in\n"
    "DIR and its subfolders (read from their manifest.tsv, which every figure\n"
    "command keeps) with the command that produced it. The HTML page is self-\n"
    "contained: each figure is embedded as an image (its SVG, else its PNG), under\n"
    "a Content-Security-Policy that runs no script; a table of contents comes\n"
    "first. Folders of the paper reproduction (potential, frontiers, comparison,\n"
    "curves, eta-sensitivity, beta-sensitivity) come in the paper's order, others\n"
    "after them by name. When DIR holds the reproduction's potential/ or\n"
    "comparison/ outputs, also write DIR/paper.md, wattsim's numbers beside the\n"
    "paper's, and put that table at the top of both reports as the key numbers;\n"
    "with comparison/history.csv (sweep --keep-history, as reproduce-paper runs\n"
    "it), paper.md gives zeus's energy saving per GPU x workload estimator by\n"
    "estimator and where its cost is above the default's.\n"
    "\n"
    "DIR may come from elsewhere: only regular files in DIR and its subfolders\n"
    "are read (never through a symbolic link, never a FIFO or device), at most\n"
    "16 MiB each; an image must carry its format's signature. A listed file that\n"
    "is refused is left out with a warning (exit status 0); a manifest row that\n"
    "names anything but a file of its folder is an error (exit status 2).\n"
    "\n"
    "  --title TEXT       the reports' title (default: wattsim report)\n"
    "  --catalogue FILE   workload catalogue, for display names in paper.md\n"
    "  --force            replace REPORT.md, report.html and paper.md (those of\n"
    "                     them that exist)\n";

/* The page's policy: images only as data: URIs, the page's own style, no
 * script, no frame, no form, no other origin. */
#define REPORT_CSP                                                              \
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none';" \
    " form-action 'none'; frame-ancestors 'none'"

static void base64(FILE *f, const unsigned char *s, size_t n)
{
    static const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0)
                     | (i + 2 < n ? s[i + 2] : 0);
        fputc(t[v >> 18 & 63], f);
        fputc(t[v >> 12 & 63], f);
        fputc(i + 1 < n ? t[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? t[v & 63] : '=', f);
    }
}

/* The reproduction's folders in the paper's order, with their headings. */
static const char *const PAPER_ORDER[][2] = {
    {"potential", "Energy-saving potential (motivation)"},
    {"frontiers", "Pareto frontiers of every GPU and workload"},
    {"comparison", "Zeus versus default, grid and oracle"},
    {"curves", "Learning curves"},
    {"eta-sensitivity", "Sensitivity to η"},
    {"beta-sensitivity", "Sensitivity to β"},
};
#define N_PAPER (sizeof PAPER_ORDER / sizeof *PAPER_ORDER)

static size_t paper_rank(const char *name)
{
    size_t k = 0;
    while (k < N_PAPER && strcmp(PAPER_ORDER[k][0], name)) k++;
    return k;
}

static const char *heading(const char *name)
{
    size_t k = paper_rank(name);
    return k < N_PAPER ? PAPER_ORDER[k][1] : name;
}

/* ------------------------------------------------------------ folders */

/* One row of a manifest. */
typedef struct entry {
    char *file, *kind, *title, *command;      /* views into the manifest */
    int first;                                /* first row of its figure */
} entry;

/* A folder with a manifest: DIR itself ("") or a subfolder of it. */
typedef struct folder {
    char *name;
    int fd;
    char *man;                                /* the manifest, split in place */
    entry *e;
    size_t n;
} folder;

typedef struct report {
    const char *dir;                          /* as the user typed it */
    int fd;
    folder *f;
    size_t nf;
    char **warn;                              /* printed once the report is written */
    size_t n_warn;
} report;

__attribute__((format(printf, 2, 3)))
static void warn(report *r, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    char **t = n >= 0 ? realloc(r->warn, (r->n_warn + 1) * sizeof *t) : NULL;
    if (!t) { free(s); return; }
    r->warn = t;
    r->warn[r->n_warn++] = s;
}

/* "DIR/SUB/NAME" for messages (SUB may be ""). */
static const char *shown_path(const report *r, const folder *f, const char *name, char *buf,
                              size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s", r->dir, f->name[0] ? "/" : "", f->name, name ? "/" : "",
             name ? name : "");
    return buf;
}

static int cmp_name(const void *a, const void *b)
{
    const char *x = ((const folder *)a)->name, *y = ((const folder *)b)->name;
    size_t rx = paper_rank(x), ry = paper_rank(y);
    return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x, y);
}

/* Add the folder (its descriptor taken over) if it holds a manifest that
 * may be read; a refused one is warned about and left out. */
static int add_folder(report *r, const char *name, int fd, ws_error *err)
{
    folder f = {strdup(name), fd, NULL, NULL, 0};
    char why[128], p[4200];
    size_t len;
    if (!f.name) { close(fd); return ws_fail(err, "out of memory"); }
    int rc = ws_infile_read_at(fd, "manifest.tsv", REPORT_MAX_FILE, &f.man, &len, why,
                               sizeof why);
    if (rc == WS_INFILE_OK && memchr(f.man, '\0', len)) {
        snprintf(why, sizeof why, "not a text file (it holds NUL bytes)");
        rc = WS_INFILE_REFUSED;
    }
    if (rc != WS_INFILE_OK) {
        if (rc == WS_INFILE_REFUSED)
            warn(r, "%s: %s; its folder is left out of the report",
                 shown_path(r, &f, "manifest.tsv", p, sizeof p), why);
        free(f.man);
        free(f.name);
        close(fd);
        return 0;
    }
    folder *t = realloc(r->f, (r->nf + 1) * sizeof *t);
    if (!t) {
        free(f.man);
        free(f.name);
        close(fd);
        return ws_fail(err, "out of memory");
    }
    r->f = t;
    r->f[r->nf++] = f;
    return 0;
}

/* DIR itself, then its subfolders (not through links) in the paper's
 * order, then by name. */
static int scan(report *r, ws_error *err)
{
    int fd = dup(r->fd);
    if (fd < 0 || add_folder(r, "", fd, err)) return fd < 0 ? ws_fail(err, "%s: %s", r->dir,
                                                                     strerror(errno)) : -1;
    size_t first_sub = r->nf;
    int dfd = dup(r->fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        return ws_fail(err, "%s: cannot list: %s", r->dir, strerror(errno));
    }
    rewinddir(d);
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char why[128];
        int sub = ws_infile_dir_at(r->fd, e->d_name, why, sizeof why);
        if (sub >= 0) {
            rc = add_folder(r, e->d_name, sub, err);
            continue;
        }
        /* A link to a folder is not followed: say so if it would have
         * been one of the report's. */
        struct stat st;
        if (errno == ELOOP && fstatat(r->fd, e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode))
            warn(r, "%s/%s: a symbolic link to a folder; left out of the report", r->dir,
                 e->d_name);
    }
    closedir(d);
    if (r->nf > first_sub)
        qsort(r->f + first_sub, r->nf - first_sub, sizeof *r->f, cmp_name);
    return rc;
}

/* A file name as wattsim writes them into a manifest: letters, digits,
 * . _ + -, not starting with '.', at most 255 bytes. 0, or the 1-based
 * position of the first byte that is not. */
static size_t bad_name_at(const char *s)
{
    static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-";
    size_t n = strlen(s), k = strspn(s, ok);
    if (!n || s[0] == '.') return 1;
    if (k < n) return k + 1;
    return n > 255 ? 256 : 0;
}

static size_t stem_len(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot ? (size_t)(dot - s) : strlen(s);
}

/* By stem, then in manifest order. */
static int cmp_stem(const void *a, const void *b)
{
    const entry *x = *(entry *const *)a, *y = *(entry *const *)b;
    size_t nx = stem_len(x->file), ny = stem_len(y->file);
    int c = memcmp(x->file, y->file, nx < ny ? nx : ny);
    if (c) return c;
    if (nx != ny) return nx < ny ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Split a folder's manifest into rows, checking each. A corrupt manifest
 * is an error: FILE:LINE[:COL]. */
static int parse_manifest(const report *r, folder *f, ws_error *err)
{
    static const char header[] = "file\tkind\ttitle\tcommand";
    char p[4200];
    shown_path(r, f, "manifest.tsv", p, sizeof p);
    size_t lines = 1;
    for (const char *c = f->man; *c; c++) lines += *c == '\n';
    if (!(f->e = calloc(lines, sizeof *f->e))) return ws_fail(err, "out of memory");
    char *line = f->man;
    for (unsigned long no = 1; *line; no++) {
        char *nl = strchr(line, '\n'), *next = nl ? nl + 1 : line + strlen(line);
        if (nl) *nl = '\0';
        if (no == 1) {
            if (strcmp(line, header))
                return ws_fail(err, "%s:1: not a wattsim manifest: the first line must be"
                               " the header file, kind, title, command (tab-separated)", p);
            line = next;
            continue;
        }
        if (!*line) { line = next; continue; }
        char *fld[4] = {0}, *q = line;
        int k = 0;
        for (; k < 4 && q; k++) {
            fld[k] = q;
            q = k < 3 ? strchr(q, '\t') : NULL;
            if (q) *q++ = '\0';
        }
        if (!fld[3])
            return ws_fail(err, "%s:%lu: expected 4 tab-separated fields (file, kind, title,"
                           " command), got %d", p, no, k);
        size_t at = bad_name_at(fld[0]);
        if (at)
            return ws_fail(err, "%s:%lu:%zu: the file '%s' is not a file name of this folder"
                           " (letters, digits, . _ + -, not starting with '.'); the manifest"
                           " is corrupt", p, no, at, fld[0]);
        if (strcmp(fld[1], "figure") && strcmp(fld[1], "table"))
            return ws_fail(err, "%s:%lu:%zu: kind '%s' is neither figure nor table", p, no,
                           strlen(fld[0]) + 2, fld[1]);
        f->e[f->n++] = (entry){fld[0], fld[1], fld[2], fld[3], 1};
        line = next;
    }
    /* A figure's png, svg and pdf rows share a stem: one entry, at its
     * first row. */
    entry **by = malloc((f->n + 1) * sizeof *by);
    size_t nfig = 0;
    if (!by) return ws_fail(err, "out of memory");
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].kind, "figure")) by[nfig++] = &f->e[i];
    qsort(by, nfig, sizeof *by, cmp_stem);
    for (size_t i = 1; i < nfig; i++) {
        size_t a = stem_len(by[i - 1]->file), b = stem_len(by[i]->file);
        if (a == b && !memcmp(by[i - 1]->file, by[i]->file, a)) by[i]->first = 0;
    }
    free(by);
    return 0;
}

/* ------------------------------------------------------------ images */

static int is_png(const char *s, size_t n)
{
    return n >= 16 && !memcmp(s, "\x89PNG\r\n\x1a\n", 8) && !memcmp(s + 12, "IHDR", 4);
}

static int is_svg(const char *s, size_t n)
{
    if (memchr(s, '\0', n)) return 0;
    if (n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) s += 3;
    s += strspn(s, " \t\r\n");
    return (!strncmp(s, "<?xml", 5) || !strncmp(s, "<svg", 4) || !strncmp(s, "<!--", 4)
            || !strncmp(s, "<!DOCTYPE svg", 13))
        && strstr(s, "<svg") != NULL;
}

/* The figure's image to embed: its SVG, else its PNG, read and checked
 * (kind 1 svg, 0 png); NULL when neither may be, each refusal warned. */
static char *figure_image(report *r, const folder *f, const char *stem, int *kind,
                          size_t *len, int listed[2])
{
    static const char *const ext[2] = {".svg", ".png"};
    for (int k = 0; k < 2; k++) {
        char name[320], why[128], p[4600];
        snprintf(name, sizeof name, "%s%s", stem, ext[k]);
        char *s = NULL;
        int rc = ws_infile_read_at(f->fd, name, REPORT_MAX_FILE, &s, len, why, sizeof why);
        listed[k] = rc == WS_INFILE_OK;
        if (rc == WS_INFILE_MISSING) continue;
        if (rc == WS_INFILE_OK && !(k == 0 ? is_svg(s, *len) : is_png(s, *len))) {
            snprintf(why, sizeof why, "%s", k == 0 ? "not an SVG image (no XML prolog or <svg>"
                                                     " element)"
                                                   : "not a PNG image (no PNG signature)");
            rc = WS_INFILE_REFUSED;
            listed[k] = 0;
        }
        if (rc == WS_INFILE_OK) {
            *kind = k == 0;
            /* the other format is still listed if it is a regular file */
            if (k == 0) {
                snprintf(name, sizeof name, "%s.png", stem);
                listed[1] = ws_infile_check_at(f->fd, name, why, sizeof why) == WS_INFILE_OK;
            }
            return s;
        }
        warn(r, "%s: %s; left out of the report", shown_path(r, f, name, p, sizeof p), why);
        free(s);
    }
    return NULL;
}

/* ------------------------------------------------------------ writing */

static void md_files(FILE *md, const char *relstem, const char *const *ext, const int *have,
                     int n)
{
    int any = 0;
    fputs("Files:", md);
    for (int i = 0; i < n; i++) {
        if (!have[i]) continue;
        char name[1300];
        snprintf(name, sizeof name, "%s%s", relstem, ext[i]);
        fputc(' ', md);
        ws_md_code(md, name);
        any = 1;
    }
    if (!any) fputs(" –", md);
}

/* One figure: heading, image, files and command. 1 when written, 0 when
 * left out (no image may be embedded). */
static int write_figure(report *r, const folder *f, const entry *e, FILE *md, FILE *html)
{
    char stem[300], relstem[600], why[128];
    const char *dot = strrchr(e->file, '.');
    snprintf(stem, sizeof stem, "%.*s", (int)(dot ? dot - e->file : (long)strlen(e->file)),
             e->file);
    snprintf(relstem, sizeof relstem, "%s%s%s", f->name, f->name[0] ? "/" : "", stem);
    int kind = 0, listed[2] = {0, 0};
    size_t len = 0;
    char *img = figure_image(r, f, stem, &kind, &len, listed);
    if (!img) return 0;
    static const char *const ext[] = {".png", ".svg", ".pdf", ".csv", ".gp"};
    int have[5] = {listed[1], listed[0], 0, 0, 0};
    for (int i = 2; i < 5; i++) {
        char name[320];
        snprintf(name, sizeof name, "%s%s", stem, ext[i]);
        have[i] = ws_infile_check_at(f->fd, name, why, sizeof why) == WS_INFILE_OK;
    }
    fputs("\n### ", md);
    ws_md_text(md, e->title);
    fputs("\n\n![", md);
    ws_md_text(md, e->title);
    fputs("](", md);
    ws_md_url(md, relstem);
    fputs(have[0] ? ".png" : ".svg", md);     /* Markdown viewers show PNGs best */
    fputs(")\n\n", md);
    md_files(md, relstem, ext, have, 5);
    fputs("  \nCommand: ", md);
    ws_md_code(md, e->command);
    fputc('\n', md);

    fputs("<figure>\n<h3>", html);
    ws_html_text(html, e->title);
    fputs("</h3>\n<img alt=\"", html);
    ws_html_text(html, e->title);
    fputs(kind ? "\" src=\"data:image/svg+xml;base64," : "\" src=\"data:image/png;base64,",
          html);
    base64(html, (const unsigned char *)img, len);
    fputs("\">\n<figcaption>Data: <code>", html);
    ws_html_text(html, relstem);
    fputs(".csv</code>, script: <code>", html);
    ws_html_text(html, relstem);
    fputs(".gp</code><br>Command: <code>", html);
    ws_html_text(html, e->command);
    fputs("</code></figcaption>\n</figure>\n", html);
    free(img);
    return 1;
}

/* One table: heading, file, command, and a Markdown table's content. */
static int write_table(report *r, const folder *f, const entry *e, FILE *md, FILE *html)
{
    char rel[600], why[128], p[4600];
    snprintf(rel, sizeof rel, "%s%s%s", f->name, f->name[0] ? "/" : "", e->file);
    size_t n = strlen(e->file), len = 0;
    char *text = NULL;
    int is_md = n > 3 && !strcmp(e->file + n - 3, ".md");
    int rc = is_md ? ws_infile_read_at(f->fd, e->file, REPORT_MAX_FILE, &text, &len, why,
                                       sizeof why)
                   : ws_infile_check_at(f->fd, e->file, why, sizeof why);
    if (rc == WS_INFILE_OK && text && memchr(text, '\0', len)) {
        snprintf(why, sizeof why, "not a text file (it holds NUL bytes)");
        rc = WS_INFILE_REFUSED;
    }
    if (rc != WS_INFILE_OK) {
        if (rc == WS_INFILE_REFUSED)
            warn(r, "%s: %s; left out of the report", shown_path(r, f, e->file, p, sizeof p),
                 why);
        free(text);
        return 0;                     /* a file listed but since removed: quietly */
    }
    fputs("\n### ", md);
    ws_md_text(md, e->title);
    fputs("\n\nFile: ", md);
    ws_md_code(md, rel);
    fputs("  \nCommand: ", md);
    ws_md_code(md, e->command);
    fputc('\n', md);
    fputs("<h3>", html);
    ws_html_text(html, e->title);
    fputs("</h3>\n<p>File: <code>", html);
    ws_html_text(html, rel);
    fputs("</code><br>Command: <code>", html);
    ws_html_text(html, e->command);
    fputs("</code></p>\n", html);
    if (text) {
        fputc('\n', md);
        ws_md_render(md, text, 0);
        ws_md_render(html, text, 1);
    }
    free(text);
    return 1;
}

static void section_heading(FILE *md, FILE *html, size_t i, const char *name)
{
    fprintf(md, "\n<a id=\"sec-%zu\"></a>\n\n## ", i);
    ws_md_text(md, heading(name));
    fputs(" (", md);
    ws_md_code(md, name);
    fputs(")\n", md);
    fprintf(html, "<h2 id=\"sec-%zu\">", i);
    ws_html_text(html, heading(name));
    fputs(" (<code>", html);
    ws_html_text(html, name);
    fputs("</code>)</h2>\n", html);
}

int ws_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"title", required_argument, 0, 'T'},
        {"catalogue", required_argument, 0, 'c'},
        {"force", no_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *title = "wattsim report", *catalogue = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'h') { fprintf(ws_cli_out, "%s", REPORT_HELP); return 0; }
        if (c == 'T') { title = optarg; continue; }
        if (c == 'c') { catalogue = optarg; continue; }
        if (c == 'f') { ws_outfile_set_force(1); continue; }
        if (c == ':') return ws_cli_usage("report", "option '%s' needs a value", argv[optind - 1]);
        return ws_cli_usage("report", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1) return ws_cli_usage("report", "%s", "needs one DIR");
    report r = {argv[optind], -1, NULL, 0, NULL, 0};
    const char *dir = r.dir;
    ws_error err = {{0}};
    ws_outfile md = {0}, html = {0}, pmd = {0};
    ws_catalogue cat = {0};
    ws_paper_numbers pn;
    char *key = NULL;           /* the key-numbers table, Markdown */
    size_t key_len = 0, items = 0;
    int rc = 2, paper = 0;
    char path[8400];
    /* DIR as typed (a link the user names is followed); below it, none. */
    if ((r.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        ws_fail(&err, "%s: %s", dir, errno == ENOTDIR ? "not a folder" : strerror(errno));
        goto out;
    }
    if (scan(&r, &err)) goto out;
    for (size_t i = 0; i < r.nf; i++)
        if (parse_manifest(&r, &r.f[i], &err)) goto out;
    /* The catalogue (display names) only when there is a reproduction to
     * compare: a report of any other folder needs none. */
    if ((paper = ws_paper_inputs(dir, &err)) < 0
        || (paper && ws_cli_catalogue(catalogue, &cat, &err))
        || ws_paper_numbers_read(dir, &cat, &pn, &err))
        goto out;
    /* Everything read and checked: only now is the folder ours to write. */
    if (ws_outdir_lock(dir, &err)) goto out;
    if (pn.have_potential || pn.have_savings) {
        FILE *k = open_memstream(&key, &key_len);
        if (!k) { ws_fail(&err, "out of memory"); goto out; }
        ws_paper_write_md(k, &pn);
        if (fclose(k) != 0) { ws_fail(&err, "out of memory"); goto out; }
        snprintf(path, sizeof path, "%s/paper.md", dir);
        if (ws_outfile_open(&pmd, path, &err)) goto out;
        fprintf(pmd.f, "# wattsim beside the Zeus paper (NSDI'23)\n\nWritten by `wattsim report`"
                       " from the outputs of `scripts/reproduce-paper` in this folder.\n\n%s", key);
        if (ws_outfile_commit(&pmd, &err)) goto out;
    }
    snprintf(path, sizeof path, "%s/REPORT.md", dir);
    if (ws_outfile_open(&md, path, &err)) goto out;
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (ws_outfile_open(&html, path, &err)) goto out;
    fputs("# ", md.f);
    ws_md_text(md.f, title);
    fputs("\n\nEvery figure and table in this folder, with the command that produced it. Each"
          " figure's data (.csv) and gnuplot script (.gp) sit next to it: restyle the script"
          " and run `gnuplot NAME.gp` in its folder.\n", md.f);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"" REPORT_CSP "\">\n<title>",
          html.f);
    ws_html_text(html.f, title);
    fputs("</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;max-width:1200px;"
          "margin:2em auto;padding:0 1em;color:#222}figure{margin:1.5em 0}img{max-width:100%;"
          "height:auto}code,pre{background:#f4f4f4;padding:.2em .4em;white-space:pre-wrap}"
          "table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;"
          "padding:.2em .5em;text-align:right}th{background:#eee}h2{border-bottom:1px solid #ccc}"
          "</style></head><body>\n<h1>", html.f);
    ws_html_text(html.f, title);
    fputs("</h1>\n<p>Every figure and table with the command that produced it. Data (.csv) and"
          " gnuplot scripts (.gp) sit next to each figure.</p>\n", html.f);
    if (key) {
        fputs("\n## Key numbers\n\nAlso in `paper.md`.\n\n", md.f);
        ws_md_render(md.f, key, 0);
        fputs("<h2 id=\"key-numbers\">Key numbers</h2>\n", html.f);
        ws_md_render(html.f, key, 1);
    }
    /* Table of contents: one entry per folder with a manifest. */
    fputs("\n## Contents\n\n", md.f);
    fputs("<nav><h2>Contents</h2><ol>\n", html.f);
    if (key) fputs("<li><a href=\"#key-numbers\">Key numbers</a></li>\n", html.f);
    for (size_t i = 0; i < r.nf; i++) {
        const char *name = r.f[i].name[0] ? r.f[i].name : ".";
        fprintf(md.f, "%zu. [", i + 1);
        ws_md_text(md.f, heading(name));
        fprintf(md.f, "](#sec-%zu) (", i);
        ws_md_code(md.f, name);
        fputs(")\n", md.f);
        fprintf(html.f, "<li><a href=\"#sec-%zu\">", i);
        ws_html_text(html.f, heading(name));
        fputs("</a> (<code>", html.f);
        ws_html_text(html.f, name);
        fputs("</code>)</li>\n", html.f);
    }
    fputs("</ol></nav>\n", html.f);
    for (size_t i = 0; i < r.nf; i++) {
        folder *f = &r.f[i];
        section_heading(md.f, html.f, i, f->name[0] ? f->name : ".");
        for (size_t k = 0; k < f->n; k++) {
            const entry *e = &f->e[k];
            if (!strcmp(e->kind, "figure")) {
                if (e->first) items += (size_t)write_figure(&r, f, e, md.f, html.f);
            } else {
                items += (size_t)write_table(&r, f, e, md.f, html.f);
            }
        }
    }
    fputs("</body></html>\n", html.f);
    if (ws_outfile_commit(&md, &err) || ws_outfile_commit(&html, &err)) goto out;
    static char shown[WS_CLI_SHOW];
    ws_name_show(dir, shown, sizeof shown);     /* DIR as typed: any bytes */
    fprintf(ws_cli_out, "%zu item%s; %s/REPORT.md and %s/report.html%s%s%s\n", items, ws_s(items),
           shown, shown,
           key ? " (and " : "", key ? shown : "", key ? "/paper.md)" : "");
    fflush(ws_cli_out);
    for (size_t i = 0; i < r.n_warn; i++) ws_line("wattsim: warning: %s", r.warn[i]);
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_outfile_abort(&md);
    ws_outfile_abort(&html);
    ws_outfile_abort(&pmd);
    ws_catalogue_free(&cat);
    free(key);
    for (size_t i = 0; i < r.nf; i++) {
        close(r.f[i].fd);
        free(r.f[i].name);
        free(r.f[i].man);
        free(r.f[i].e);
    }
    free(r.f);
    for (size_t i = 0; i < r.n_warn; i++) free(r.warn[i]);
    free(r.warn);
    if (r.fd >= 0) close(r.fd);
    return rc;
}
