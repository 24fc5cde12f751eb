/*
 * `wattsim report` on a folder someone else filled (issue 18, item 1):
 * nothing outside the folder is read, nothing blocks, nothing of the
 * folder becomes markup or script in REPORT.md or report.html. Also the
 * escaping functions behind it (wattsim/markup.h).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/markup.h"
#include "tmpdir.h"

#define CLI WS_BUILD_DIR "/sim/wattsim"

static void mktmp(void) { tmpdir_make("/tmp/wsrepf.XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static const char SECRET[] = "SECRET-7f3a9c: the colleague's private key\n";

static char *b64(const unsigned char *s, size_t n)
{
    static const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *o = malloc(4 * (n / 3 + 1) + 1), *w = o;
    cr_assert(o);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0)
                     | (i + 2 < n ? s[i + 2] : 0);
        *w++ = t[v >> 18 & 63];
        *w++ = t[v >> 12 & 63];
        *w++ = i + 1 < n ? t[v >> 6 & 63] : '=';
        *w++ = i + 2 < n ? t[v & 63] : '=';
    }
    *w = '\0';
    return o;
}

/* needle occurs in s other than right after a backslash (Markdown's
 * escape): it would be live markup. */
static int unescaped(const char *s, const char *needle)
{
    for (const char *p = s; (p = strstr(p, needle)); p++)
        if (p == s || p[-1] != '\\') return 1;
    return 0;
}

static const char EVIL_SVG[] =
    "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\">"
    "<script>alert(2)</script><a href=\"javascript:alert(3)\"><text>x</text></a></svg>\n";

/* A received folder: b.png links to a secret outside it, z.png to
 * /dev/zero, f.png is a FIFO, e.svg carries script, the manifest's titles
 * and commands carry HTML and Markdown. */
static void hostile_folder(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p %1$s/r %1$s/outside && ln -s ../outside/secret %1$s/r/b.png"
             " && ln -s /dev/zero %1$s/r/z.png && mkfifo %1$s/r/f.png", tmp);
    cr_assert_eq(run_shell("%s", cmd), 0);
    write_file("outside/secret", SECRET);
    write_file("r/e.svg", EVIL_SVG);
    write_file("r/t.md", "| a | b |\n|---|---:|\n| <script>alert(4)</script> | [x](javascript:y) |\n");
    write_file("r/manifest.tsv",
               "file\tkind\ttitle\tcommand\n"
               "b.png\tfigure\tB\twattsim b\n"
               "z.png\tfigure\tZ\twattsim z\n"
               "f.png\tfigure\tF\twattsim f\n"
               "e.svg\tfigure\t<img src=x onerror=alert(5)> [c](javascript:alert(6))\t"
               "wattsim `x` <b onmouseover=alert(7)>\n"
               "t.md\ttable\t<script>alert(8)</script>\tc\n");
}

Test(report_folder, a_hostile_folder_leaks_and_runs_nothing, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    hostile_folder();
    cr_assert_eq(run_shell(CLI " report %1$s/r >%1$s/out.txt 2>%1$s/err.txt", tmp), 0);
    char *err = slurp_file(tp("err.txt"));
    char want[2048];
    snprintf(want, sizeof want,
             "wattsim: warning: %1$s/r/b.png: a symbolic link; left out of the report\n"
             "wattsim: warning: %1$s/r/z.png: a symbolic link; left out of the report\n"
             "wattsim: warning: %1$s/r/f.png: a FIFO; left out of the report\n", tmp);
    cr_expect_str_eq(err, want);
    char *html = slurp_file(tp("r/report.html")), *md = slurp_file(tp("r/REPORT.md"));
    char *secret64 = b64((const unsigned char *)SECRET, strlen(SECRET));
    cr_expect(!strstr(html, "SECRET-7f3a9c") && !strstr(html, secret64), "secret leaked");
    cr_expect(!strstr(md, "SECRET-7f3a9c"), "secret leaked");
    /* Nothing of the folder is markup: no tag, handler or link of it. */
    const char *live[] = {"<script", "<svg", "<img src=x", "<b onmouseover", "onload=\"",
                          "href=\"javascript"};
    for (size_t i = 0; i < sizeof live / sizeof *live; i++)
        cr_expect(!strstr(html, live[i]), "report.html holds %s", live[i]);
    /* (the command's <b ...> is inside its code span: text there) */
    const char *md_live[] = {"<script", "<img", "](javascript"};
    for (size_t i = 0; i < sizeof md_live / sizeof *md_live; i++)
        cr_expect(!unescaped(md, md_live[i]), "REPORT.md holds %s", md_live[i]);
    /* the command stays one code span: its backtick does not end it */
    cr_expect(strstr(md, "Command: ``wattsim `x` <b onmouseover=alert(7)>``"), "%s", md);
    /* no script may run: the page's policy comes first */
    char *csp = strstr(html, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src"
                             " 'none'; img-src data:;");
    cr_expect(csp && csp < strstr(html, "<title>"), "CSP");
    /* the refused images are neither linked nor embedded */
    cr_expect(!strstr(md, "b.png") && !strstr(md, "z.png") && !strstr(md, "f.png"), "%s", md);
    cr_expect_eq(strstr(html, "data:image/png"), NULL);
    free(secret64);
    free(html);
    free(md);
    free(err);
}

/* The SVG is embedded as an image, byte for byte, never as markup. */
Test(report_folder, an_svg_is_an_image_never_inline_markup, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    hostile_folder();
    cr_assert_eq(run_shell(CLI " report %1$s/r >/dev/null 2>&1", tmp), 0);
    char *html = slurp_file(tp("r/report.html"));
    char *svg64 = b64((const unsigned char *)EVIL_SVG, strlen(EVIL_SVG)), want[4096];
    snprintf(want, sizeof want, "<img alt=\"&lt;img src=x onerror=alert(5)&gt; [c](javascript:"
             "alert(6))\" src=\"data:image/svg+xml;base64,%s\">", svg64);
    cr_expect(strstr(html, want), "%s", html);
    free(svg64);
    free(html);
}

/* A manifest naming a path is corrupt: exit 2, one line, nothing written
 * (not even the lock). */
Test(report_folder, a_manifest_naming_a_path_writes_nothing, .init = mktmp, .fini = rmtmp)
{
    cr_assert_eq(run_shell("mkdir %s/r", tmp), 0);
    write_file("r/manifest.tsv", "file\tkind\ttitle\tcommand\n..\tfigure\tX\tc\n");
    cr_assert_eq(run_shell(CLI " report %1$s/r >%1$s/out.txt 2>%1$s/err.txt", tmp), 2);
    char *err = slurp_file(tp("err.txt")), want[512];
    snprintf(want, sizeof want, "wattsim: %s/r/manifest.tsv:2:1: the file '..' is not a file"
             " name of this folder (letters, digits, . _ + -, not starting with '.'); the"
             " manifest is corrupt\n", tmp);
    cr_expect_str_eq(err, want);
    struct stat st;
    cr_expect_neq(stat(tp("r/REPORT.md"), &st), 0);
    cr_expect_neq(stat(tp("r/report.html"), &st), 0);
    cr_expect_neq(stat(tp("r/.wattsim.lock"), &st), 0);
    free(err);
}

/* ------------------------------------------------------------ markup */

static char *render(void (*fn)(FILE *, const char *), const char *s)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    cr_assert(f);
    fn(f, s);
    cr_assert_eq(fclose(f), 0);
    return out;
}

static char *render_md(const char *s, int html)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    cr_assert(f);
    ws_md_render(f, s, html);
    cr_assert_eq(fclose(f), 0);
    return out;
}

#define EXPECT_RENDER(fn, in, want)                                   \
    do {                                                              \
        char *got_ = render(fn, in);                                  \
        cr_expect_str_eq(got_, want, "%s(%s)", #fn, in);              \
        free(got_);                                                   \
    } while (0)

Test(markup, text_is_escaped_for_html_and_markdown)
{
    EXPECT_RENDER(ws_html_text, "<a href='x'>&\"</a>", "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
    EXPECT_RENDER(ws_html_text, "η \x1b[31m\n", "η \\x1B[31m\\x0A");
    EXPECT_RENDER(ws_md_text, "<b>*x* _y_ [l](u) `c` | # ~ ! $ & \\",
                  "\\<b\\>\\*x\\* \\_y\\_ \\[l\\](u) \\`c\\` \\| \\# \\~ \\! \\$ \\& \\\\");
    EXPECT_RENDER(ws_md_text, "ETA (η = 0.5), 3.2 kJ", "ETA (η = 0.5), 3.2 kJ");
}

Test(markup, a_code_span_is_never_ended_by_its_text)
{
    EXPECT_RENDER(ws_md_code, "wattsim run c.yaml", "`wattsim run c.yaml`");
    EXPECT_RENDER(ws_md_code, "a `b` c", "``a `b` c``");
    EXPECT_RENDER(ws_md_code, "a ``b`` c", "```a ``b`` c```");
    EXPECT_RENDER(ws_md_code, "`x", "`` `x ``");
    EXPECT_RENDER(ws_md_code, "", "–");
    EXPECT_RENDER(ws_md_url, "my figs/a(1).png", "my%20figs/a%281%29.png");
}

static const char TABLE[] =
    "What-if: carbon series c_1.csv\n"
    "\n"
    "| policy | ETA (kJ) | error |\n"
    "|---|---:|---|\n"
    "| zeus+jit | 1.5 ± 0.1 | a \\| b <i>x</i> |\n"
    "\n"
    "Means over 3 seeds.\n";

Test(markup, a_table_is_rendered_as_text_in_both_forms)
{
    char *md = render_md(TABLE, 0), *html = render_md(TABLE, 1);
    cr_expect_str_eq(md, "What-if: carbon series c\\_1.csv\n\n| policy | ETA (kJ) | error |\n"
                         "|---|---:|---|\n| zeus+jit | 1.5 ± 0.1 | a \\| b \\<i\\>x\\</i\\> |\n\n"
                         "Means over 3 seeds.\n");
    cr_expect_str_eq(html, "<p>What-if: carbon series c_1.csv</p>\n<table>\n<tr><th>policy</th>"
                           "<th>ETA (kJ)</th><th>error</th></tr>\n<tr><td>zeus+jit</td><td>1.5 ±"
                           " 0.1</td><td>a | b &lt;i&gt;x&lt;/i&gt;</td></tr>\n</table>\n"
                           "<p>Means over 3 seeds.</p>\n");
    /* rendering its own output again changes nothing */
    char *again = render_md(md, 0);
    cr_expect_str_eq(again, md);
    free(again);
    free(md);
    free(html);
}
