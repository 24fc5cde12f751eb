/*
 * `wattsim report DIR`: an index of every figure and table that wattsim
 * wrote into DIR and its subfolders (from their manifest.tsv files), as
 * REPORT.md and a self-contained report.html (SVGs inlined, PNGs without
 * an SVG embedded as data URIs), each item with the command behind it.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_sweep.h"
#include "wattsim/outfile.h"
#include "wattsim/paper.h"
#include "wattsim/plot.h"

static const char *REPORT_HELP =
    "usage: wattsim report DIR [--title TEXT] [--catalogue FILE] [--force]\n"
    "\n"
    "Write DIR/REPORT.md and DIR/report.html listing every figure and table in\n"
    "DIR and its subfolders (read from their manifest.tsv, which every figure\n"
    "command keeps) with the command that produced it. The HTML page is self-\n"
    "contained: SVG figures are inlined (their ids made unique), PNG-only\n"
    "figures embedded; a table of contents comes first. Folders of the paper\n"
    "reproduction (potential, frontiers, comparison, curves, eta-sensitivity,\n"
    "beta-sensitivity) come in the paper's order, others after them by name.\n"
    "When DIR holds the reproduction's potential/ or comparison/ outputs, also\n"
    "write DIR/paper.md, wattsim's numbers beside the paper's, and put that\n"
    "table at the top of both reports as the key numbers.\n"
    "\n"
    "  --force            replace REPORT.md, report.html and paper.md if there\n";

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) { free(s); s = NULL; }
            else s = t;
        }
    }
    fclose(f);
    if (s) s[n] = '\0';
    if (len) *len = n;
    return s;
}

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

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

/* A Markdown table (our sweep.md) as an HTML table; other lines as text. */
static void md_to_html(FILE *f, const char *md)
{
    int in_table = 0;
    const char *line = md;
    while (*line) {
        size_t n = strcspn(line, "\n");
        char *l = strndup(line, n);
        if (!l) return;
        if (l[0] == '|') {
            if (!in_table) { fputs("<table>\n", f); in_table = 1; }
            if (!strstr(l, "---")) {
                fputs("<tr>", f);
                char *save, *cell = strtok_r(l + 1, "|", &save);
                for (; cell; cell = strtok_r(NULL, "|", &save)) {
                    while (*cell == ' ') cell++;
                    fputs(in_table == 1 ? "<th>" : "<td>", f);
                    html_text(f, cell);
                    fputs(in_table == 1 ? "</th>" : "</td>", f);
                }
                fputs("</tr>\n", f);
                in_table = 2;
            }
        } else {
            if (in_table) { fputs("</table>\n", f); in_table = 0; }
            if (*l) { fputs("<p>", f); html_text(f, l); fputs("</p>\n", f); }
        }
        free(l);
        line += n;
        if (*line) line++;
    }
    if (in_table) fputs("</table>\n", f);
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

static int cmp_str(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    size_t rx = paper_rank(x), ry = paper_rank(y);
    return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x, y);
}

/* An SVG inlined into HTML: every id and reference to one prefixed with
 * "fN-", so two figures' ids (gnuplot names them alike) never clash. */
static void svg_inline(FILE *f, const char *s, size_t fig)
{
    static const char *const keys[] = {"id=\"", "url(#", "href=\"#"};
    while (*s) {
        int hit = -1;
        for (int k = 0; k < 3 && hit < 0; k++)
            if (!strncmp(s, keys[k], strlen(keys[k]))) hit = k;
        if (hit < 0) { fputc(*s++, f); continue; }
        fputs(keys[hit], f);
        fprintf(f, "f%zu-", fig);
        s += strlen(keys[hit]);
    }
}

/* Folders with a manifest: DIR itself, then its subfolders by name. */
static char **folders(const char *dir, size_t *n)
{
    char **out = calloc(1, sizeof *out);
    *n = 0;
    if (!out) return NULL;
    out[(*n)++] = strdup("");
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s/manifest.tsv", dir, e->d_name);
        if (stat(p, &st) != 0) continue;
        char **t = realloc(out, (*n + 1) * sizeof *out);
        if (!t) break;
        out = t;
        out[(*n)++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(out + 1, *n - 1, sizeof *out, cmp_str);
    return out;
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
        if (c == 'h') { printf("%s", REPORT_HELP); return 0; }
        if (c == 'T') { title = optarg; continue; }
        if (c == 'c') { catalogue = optarg; continue; }
        if (c == 'f') { ws_outfile_set_force(1); continue; }
        if (c == ':') return ws_cli_usage("report", "option '%s' needs a value", argv[optind - 1]);
        return ws_cli_usage("report", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1) return ws_cli_usage("report", "%s", "needs one DIR");
    const char *dir = argv[optind];
    ws_error err = {{0}};
    ws_outfile md = {0}, html = {0}, pmd = {0};
    ws_catalogue cat = {0};
    ws_paper_numbers pn;
    char *key = NULL;           /* the key-numbers table, Markdown */
    size_t key_len = 0, nf = 0, items = 0, n_fig = 0;
    char **sub = folders(dir, &nf);
    int rc = 2;
    char path[8400];
    struct stat dst;
    if (stat(dir, &dst) != 0 || !S_ISDIR(dst.st_mode)) {
        ws_fail(&err, "%s: not a folder", dir);
        goto out;
    }
    if (ws_outdir_lock(dir, &err)) goto out;
    /* The catalogue (display names) only when there is a reproduction to
     * compare: a report of any other folder needs none. */
    struct stat pst;
    char pot[8400], sav[8400];
    snprintf(pot, sizeof pot, "%s/potential/potential.csv", dir);
    snprintf(sav, sizeof sav, "%s/comparison/savings.csv", dir);
    int paper = stat(pot, &pst) == 0 || stat(sav, &pst) == 0;
    if ((paper && ws_cli_catalogue(catalogue, &cat, &err))
        || ws_paper_numbers_read(dir, &cat, &pn, &err))
        goto out;
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
    if (!sub || ws_outfile_open(&md, path, &err)) goto out;
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (ws_outfile_open(&html, path, &err)) goto out;
    fprintf(md.f, "# %s\n\nEvery figure and table in this folder, with the command that produced"
                  " it. Each figure's data (.csv) and gnuplot script (.gp) sit next to it:"
                  " restyle the script and run `gnuplot NAME.gp` in its folder.\n", title);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", html.f);
    html_text(html.f, title);
    fputs("</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;max-width:1200px;"
          "margin:2em auto;padding:0 1em;color:#222}figure{margin:1.5em 0}svg,img{max-width:100%;"
          "height:auto}code,pre{background:#f4f4f4;padding:.2em .4em;white-space:pre-wrap}"
          "table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;"
          "padding:.2em .5em;text-align:right}th{background:#eee}h2{border-bottom:1px solid #ccc}"
          "</style></head><body>\n<h1>", html.f);
    html_text(html.f, title);
    fputs("</h1>\n<p>Every figure and table with the command that produced it. Data (.csv) and"
          " gnuplot scripts (.gp) sit next to each figure.</p>\n", html.f);
    if (key) {
        fprintf(md.f, "\n## Key numbers\n\nAlso in `paper.md`.\n\n%s", key);
        fputs("<h2 id=\"key-numbers\">Key numbers</h2>\n", html.f);
        md_to_html(html.f, key);
    }
    /* Table of contents: one entry per folder with a manifest. */
    fputs("\n## Contents\n\n", md.f);
    fputs("<nav><h2>Contents</h2><ol>\n", html.f);
    if (key) fputs("<li><a href=\"#key-numbers\">Key numbers</a></li>\n", html.f);
    for (size_t i = 0, k = 0; i < nf; i++) {
        const char *name = sub[i][0] ? sub[i] : ".";
        struct stat mst;
        snprintf(path, sizeof path, "%s%s%s/manifest.tsv", dir, sub[i][0] ? "/" : "", sub[i]);
        if (stat(path, &mst) != 0) continue;            /* nothing listed there */
        fprintf(md.f, "%zu. [%s](#sec-%zu) (`%s`)\n", ++k, heading(name), i, name);
        fprintf(html.f, "<li><a href=\"#sec-%zu\">", i);
        html_text(html.f, heading(name));
        fputs("</a> (<code>", html.f);
        html_text(html.f, name);
        fputs("</code>)</li>\n", html.f);
    }
    fputs("</ol></nav>\n", html.f);
    for (size_t i = 0; i < nf; i++) {
        char base[4096];
        snprintf(base, sizeof base, "%s%s%s", dir, sub[i][0] ? "/" : "", sub[i]);
        snprintf(path, sizeof path, "%s/manifest.tsv", base);
        char *man = slurp(path, NULL);
        if (!man) continue;
        const char *name = sub[i][0] ? sub[i] : ".";
        fprintf(md.f, "\n<a id=\"sec-%zu\"></a>\n\n## %s (`%s`)\n", i, heading(name), name);
        fprintf(html.f, "<h2 id=\"sec-%zu\">", i);
        html_text(html.f, heading(name));
        fputs(" (<code>", html.f);
        html_text(html.f, name);
        fputs("</code>)</h2>\n", html.f);
        char *save, *line = strtok_r(man, "\n", &save);
        char seen[256][256];
        size_t n_seen = 0;
        for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char *f[4] = {0};
            char *p = line;
            for (int k = 0; k < 4 && p; k++) {
                f[k] = p;
                p = strchr(p, '\t');
                if (p) *p++ = '\0';
            }
            if (!f[3]) continue;
            const char *rel_prefix = sub[i][0] ? sub[i] : "";
            char rel[1024], file[4200];
            snprintf(rel, sizeof rel, "%s%s%s", rel_prefix, *rel_prefix ? "/" : "", f[0]);
            snprintf(file, sizeof file, "%s/%s", base, f[0]);
            struct stat st;
            if (stat(file, &st) != 0) continue;      /* listed but since removed */
            if (!strcmp(f[1], "figure")) {
                /* One entry per figure: its png and svg share a stem. */
                char *stem = ws_plot_sibling(f[0], "");
                int dup = 0;
                for (size_t k = 0; stem && k < n_seen; k++) dup |= !strcmp(seen[k], stem);
                if (stem && !dup && n_seen < 256) snprintf(seen[n_seen++], sizeof seen[0], "%s", stem);
                if (dup || !stem) { free(stem); continue; }
                char relstem[1100], png[4400], svg[4400];
                snprintf(relstem, sizeof relstem, "%s%s%s", rel_prefix, *rel_prefix ? "/" : "", stem);
                snprintf(png, sizeof png, "%s/%s.png", base, stem);
                snprintf(svg, sizeof svg, "%s/%s.svg", base, stem);
                int has_png = stat(png, &st) == 0, has_svg = stat(svg, &st) == 0;
                fprintf(md.f, "\n### %s\n\n![%s](%s.%s)\n\nFiles: ", f[2], f[2], relstem,
                        has_png ? "png" : "svg");
                if (has_png) fprintf(md.f, "`%s.png` ", relstem);
                if (has_svg) fprintf(md.f, "`%s.svg` ", relstem);
                fprintf(md.f, "`%s.csv` `%s.gp`  \nCommand: `%s`\n", relstem, relstem, f[3]);
                fputs("<figure>\n<h3>", html.f); html_text(html.f, f[2]); fputs("</h3>\n", html.f);
                if (has_svg) {
                    char *s = slurp(svg, NULL);
                    const char *start = s ? strstr(s, "<svg") : NULL;
                    if (start) svg_inline(html.f, start, n_fig++);
                    free(s);
                } else {
                    size_t len;
                    char *s = slurp(png, &len);
                    if (s) {
                        fputs("<img alt=\"", html.f); html_text(html.f, f[2]);
                        fputs("\" src=\"data:image/png;base64,", html.f);
                        base64(html.f, (const unsigned char *)s, len);
                        fputs("\">", html.f);
                    }
                    free(s);
                }
                fputs("\n<figcaption>Data: <code>", html.f); html_text(html.f, relstem);
                fputs(".csv</code>, script: <code>", html.f); html_text(html.f, relstem);
                fputs(".gp</code><br>Command: <code>", html.f); html_text(html.f, f[3]);
                fputs("</code></figcaption>\n</figure>\n", html.f);
                free(stem);
            } else {
                fprintf(md.f, "\n### %s\n\nFile: `%s`  \nCommand: `%s`\n", f[2], rel, f[3]);
                fputs("<h3>", html.f); html_text(html.f, f[2]); fputs("</h3>\n<p>File: <code>", html.f);
                html_text(html.f, rel); fputs("</code><br>Command: <code>", html.f);
                html_text(html.f, f[3]); fputs("</code></p>\n", html.f);
                size_t n = strlen(f[0]);
                if (n > 3 && !strcmp(f[0] + n - 3, ".md")) {
                    char *s = slurp(file, NULL);
                    if (s) {
                        fprintf(md.f, "\n%s\n", s);
                        md_to_html(html.f, s);
                    }
                    free(s);
                }
            }
            items++;
        }
        free(man);
    }
    fputs("</body></html>\n", html.f);
    if (ws_outfile_commit(&md, &err) || ws_outfile_commit(&html, &err)) goto out;
    printf("%zu items; %s/REPORT.md and %s/report.html%s%s%s\n", items, dir, dir,
           key ? " (and " : "", key ? dir : "", key ? "/paper.md)" : "");
    rc = 0;
out:
    if (rc && err.msg[0]) ws_cli_die(&err);
    ws_outfile_abort(&md);
    ws_outfile_abort(&html);
    ws_outfile_abort(&pmd);
    ws_catalogue_free(&cat);
    free(key);
    for (size_t i = 0; sub && i < nf; i++) free(sub[i]);
    free(sub);
    return rc;
}
