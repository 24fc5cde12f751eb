/*
 * Figures are data, never code: the gnuplot escaping function against the
 * real gnuplot (quotes, backquotes, newlines, @macros), the issue-7 payload
 * in a --plot name, the private-folder rendering (fixed names, captured
 * output, one-line failure, no half-written image), and the kept .gp script
 * rendering on its own from any folder, and PDFs without a time stamp.
 * And the axes a figure chooses in points (plot_axis.c): ranges and tick
 * steps worked out by hand from the data, the label widths and the rules.
 * Needs gnuplot and the fetched Zeus traces (scripts/fetch-traces).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wattsim/plot.h"

#include "table.h"
#include "tmpdir.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define PARETO CLI " pareto --workload cifar100 --traces " TRACES " --catalogue " CATALOGUE

static void mktmp(void) { tmpdir_make("/tmp/ws-test-plot-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of entries of `dir` whose name starts with `prefix`. */
static int count_prefix(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

/* A gnuplot script `a = <escaped s>` / `print a`, run by the real gnuplot in
 * tmp; returns what it printed (stderr, where print goes). */
static char *gnuplot_echo(const char *s)
{
    char path[600];
    snprintf(path, sizeof path, "%s/echo.gp", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("a = ", f);
    ws_plot_str(f, s);
    fputs("\nprint a\n", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(run_shell("cd %s && gnuplot echo.gp 2>printed.txt", tmp), 0);
    snprintf(path, sizeof path, "%s/printed.txt", tmp);
    return slurp(path);
}

Test(plot, escaped_strings_reach_gnuplot_as_text, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    static const char *in[] = {
        "x';system('touch PWNED');y='",
        "`touch PWNED`",
        "a\nsystem('touch PWNED')\nb",
        "@a \\ \" \\n ''",
        "cr\rtab\tdel\x7f",
        "η = 0.5, β = 2",
    };
    static const char *want[] = {
        "x’;system(’touch PWNED’);y=’\n",
        "`touch PWNED`\n",
        "a system(’touch PWNED’) b\n",
        "@a \\ \" \\n ’’\n",
        "cr tab del \n",
        "η = 0.5, β = 2\n",
    };
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        char *got = gnuplot_echo(in[i]);
        cr_expect_str_eq(got, want[i], "case %zu", i);
        free(got);
        cr_expect(!exists(tp("PWNED")), "case %zu ran a command", i);
    }
}

/* Why ws_plot_chars uses single quotes: gnuplot substitutes `command`
 * inside double quotes, even in a branch never taken. If this ever stops
 * failing the design is still safe; if single quotes started substituting,
 * the test above would catch it. */
Test(plot, gnuplot_substitutes_backquotes_in_double_quotes, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    write_file("dq.gp", "if (0) { z = \"`touch DQ`\" }\nz = '`touch SQ`'\n");
    cr_assert_eq(run_shell("cd %s && gnuplot dq.gp 2>/dev/null", tmp), 0);
    cr_expect(exists(tp("DQ")));
    cr_expect(!exists(tp("SQ")));
}

Test(plot, payload_in_plot_name_runs_nothing, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    /* Refused as a name (exit 2), and nothing runs or is written. */
    cr_expect_eq(run_shell("mkdir -p %s/out && cd %s/out && " PARETO
                           " --plot \"x';system('touch pwned');y='.png\" >/dev/null 2>&1",
                           tmp, tmp), 2);
    cr_expect_eq(run_shell("cd %s && " PARETO " --plot \"out/y';system('touch pwned');y='.png\""
                           " >/dev/null 2>&1", tmp), 2);
    cr_expect(!exists(tp("out/pwned")));
    cr_expect(!exists(tp("pwned")));
    cr_expect_eq(count_prefix(tp("out"), ""), 2, "only . and .. in out/");
}

/* The same payload as a workload name in an inline job of a run config
 * (the first case) is refused at its FILE:LINE:COL, see
 * tests/data/bad/name_job_injection. Were such a name to reach a figure
 * anyway, rendering keeps it out of gnuplot's parser: a script and data
 * named with the payload render through ws_plot_render with the real
 * gnuplot, and nothing runs. */
Test(plot, payload_as_figure_file_name_runs_nothing, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    const char *stem = "x';system('touch pwned');y='";
    char gp[600], csv[600], png[600];
    snprintf(gp, sizeof gp, "%s/%s.gp", tmp, stem);
    snprintf(csv, sizeof csv, "%s/%s.csv", tmp, stem);
    snprintf(png, sizeof png, "%s/%s.png", tmp, stem);
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fputs("x,y\n1,2\n2,3\n", f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_not_null(f = fopen(gp, "w"));
    ws_plot_preamble(f, strrchr(png, '/') + 1, WS_PLOT_COL1, 2.5, stem);
    fputs("plot data skip 1 using 1:2 with lines title 'y'\n", f);
    cr_assert_eq(fclose(f), 0);
    ws_error err = {{0}};
    const char *imgs[1] = {png};
    cr_assert_eq(ws_plot_render(gp, imgs, 1, &err), 0, "%s", err.msg);
    cr_expect(exists(png));
    cr_expect(!exists(tp("pwned")));
    cr_expect_eq(count_prefix(tmp, ".wattsim-plot-"), 0);
}

Test(plot, kept_script_renders_from_any_folder, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    cr_assert_eq(run_shell(PARETO " --plot %s/out/f.png >/dev/null", tmp), 0);
    cr_assert(exists(tp("out/f.png")));
    cr_expect_eq(count_prefix(tp("out"), ".wattsim-plot-"), 0, "private folder left behind");
    char *gp = slurp(tp("out/f.gp"));
    /* No file name in the script as code: only in comments. */
    for (char *line = gp; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (*line != '#')
            cr_expect(strncmp(line, "data =", 6) && !strstr(line, "f.csv") && !strstr(line, "f.png"),
                      "a file name in script code: %.80s", line);
    free(gp);
    unlink(tp("out/f.png"));
    cr_assert_eq(run_shell("cd %s && gnuplot out/f.gp 2>/dev/null", tmp), 0);
    cr_expect(exists(tp("out/f.png")));
    cr_assert_eq(run_shell("cd %s/out && gnuplot -e \"out='g.svg'\" f.gp 2>/dev/null", tmp), 0);
    char *svg = slurp(tp("out/g.svg"));
    cr_expect(strstr(svg, "</svg>"));
    free(svg);
}

/* A stand-in gnuplot: records its arguments and working folder, then acts
 * out `body`. */
static void fake_gnuplot(const char *body)
{
    char text[2048];
    snprintf(text, sizeof text,
             "#!/bin/sh\nprintf '%%s\\n' \"$@\" > %s/args.txt\nls > %s/cwd.txt\n"
             "basename \"$PWD\" >> %s/cwd.txt\n%s\n", tmp, tmp, tmp, body);
    cr_assert_eq(run_shell("mkdir -p %s/bin", tmp), 0);
    write_file("bin/gnuplot", text);
    cr_assert_eq(chmod(tp("bin/gnuplot"), 0755), 0);
}

Test(plot, gnuplot_runs_on_fixed_names_in_a_private_folder, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    fake_gnuplot("printf '\\211PNG....\\0\\0\\0\\0IEND\\256B`\\202' > out0.png");
    cr_assert_eq(run_shell("PATH=%s/bin:/usr/bin:/bin " PARETO " --plot %s/out/n.png"
                           " >/dev/null", tmp, tmp), 0);
    char *args = slurp(tp("args.txt")), *cwd = slurp(tp("cwd.txt"));
    cr_expect_str_eq(args, "-e\ndata='data.csv'; out='out0.png'\nplot.gp\n");
    cr_expect(!strncmp(cwd, "data.csv\ngnuplot.log\nplot.gp\n", 29), "%s", cwd);
    cr_expect(strstr(cwd, "\n.wattsim-plot-"), "%s", cwd);
    free(args);
    free(cwd);
    cr_expect(exists(tp("out/n.png")));
    cr_expect_eq(count_prefix(tp("out"), ".wattsim-plot-"), 0);
}

Test(plot, gnuplot_failure_is_one_line_and_no_image, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    fake_gnuplot("echo chatter on stdout\necho '\"plot.gp\" line 7: something broke' >&2\n"
                 "echo partial > out0.png\nexit 1");
    cr_assert_eq(run_shell("PATH=%s/bin:/usr/bin:/bin " PARETO " --plot %s/out/f.png"
                           " >%s/stdout.txt 2>%s/stderr.txt", tmp, tmp, tmp, tmp), 2);
    char *e = slurp(tp("stderr.txt")), *o = slurp(tp("stdout.txt"));
    cr_expect(strstr(e, "f.png") && strstr(e, "line 7: something broke"), "%s", e);
    cr_expect_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
    cr_expect(!strstr(o, "chatter"), "%s", o);
    free(e);
    free(o);
    cr_expect(!exists(tp("out/f.png")));
    cr_expect_eq(count_prefix(tp("out"), ".wattsim-plot-"), 0);
}

Test(plot, truncated_image_is_not_put_in_place, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    /* exit 0, but the image stops short (as on a full disk) */
    fake_gnuplot("printf '\\211PNG\\r\\n' > out0.png");
    cr_assert_eq(run_shell("PATH=%s/bin:/usr/bin:/bin " PARETO " --plot %s/out/f.png"
                           " >/dev/null 2>%s/stderr.txt", tmp, tmp, tmp), 2);
    char *e = slurp(tp("stderr.txt"));
    cr_expect(strstr(e, "no complete image for") && strstr(e, "f.png"), "%s", e);
    cr_expect_eq(strchr(e, '\n'), e + strlen(e) - 1, "one line: %s", e);
    free(e);
    cr_expect(!exists(tp("out/f.png")));
    cr_expect_eq(count_prefix(tp("out"), ".wattsim-plot-"), 0);
}

/* cairo stamps a PDF with the time it was drawn; wattsim overwrites the
 * stamp (same length) with SOURCE_DATE_EPOCH, else the Unix epoch, so a
 * figure is the same bytes from one run to the next. */
Test(plot, pdf_creation_date_is_fixed, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    static const char pdf[] = "%PDF-1.5\n<< /Producer (cairo)\n   /CreationDate (D:20261123161447Z)\n"
                              ">>\n%%EOF\n";
    char body[256];
    snprintf(body, sizeof body, "printf '%%s' '%s' > out0.pdf", pdf);
    fake_gnuplot(body);
    cr_assert_eq(run_shell("PATH=%s/bin:/usr/bin:/bin " PARETO " --plot %s/a.pdf >/dev/null", tmp,
                           tmp), 0);
    cr_assert_eq(run_shell("SOURCE_DATE_EPOCH=1700000000 PATH=%s/bin:/usr/bin:/bin " PARETO
                           " --plot %s/b.pdf >/dev/null", tmp, tmp), 0);
    char *a = slurp(tp("a.pdf")), *b = slurp(tp("b.pdf"));
    cr_expect_eq(strlen(a), strlen(pdf));
    cr_expect(strstr(a, "/CreationDate (D:19700101000000Z)\n"), "%s", a);
    cr_expect(strstr(b, "/CreationDate (D:20231114221320Z)\n"), "%s", b);
    cr_expect(strstr(a, "%%EOF\n"), "%s", a);
    free(a);
    free(b);
}

Test(plot, real_pdf_is_byte_reproducible, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    cr_assert_eq(run_shell(PARETO " --plot %s/a.pdf >/dev/null", tmp), 0);
    sleep(1); /* cairo's stamp has a resolution of one second */
    cr_assert_eq(run_shell(PARETO " --plot %s/b.pdf >/dev/null", tmp), 0);
    cr_expect_eq(run_shell("cmp -s %s/a.pdf %s/b.pdf", tmp, tmp), 0, "two renderings differ");
}

/* ------------------------------------------------------------ axes */

/* An axis' ticks as "label@value label@value ...". */
static void ticks(const ws_plot_axis *a, char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < a->n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s@%g", i ? " " : "", a->label[i], a->tick[i]);
    }
}

#define CLOSE(a, b) (fabs((a) - (b)) <= 1e-6 * fmax(1.0, fabs(b)))

/* DejaVu Sans' advance widths: digits 0.636 em, the point 0.318 em. */
Test(plot, text_width_in_points)
{
    cr_expect(CLOSE(ws_plot_text_width("30.5", 8), (3 * 0.636 + 0.318) * 8));
    cr_expect(CLOSE(ws_plot_text_width("", 8), 0.0));
    /* a few non-ASCII signs the figures use: ∞ as wide as =, η about a digit */
    cr_expect(CLOSE(ws_plot_text_width("∞", 10), 8.38));
    cr_expect(CLOSE(ws_plot_text_width("η", 10), 6.4));
}

/* NCF/MovieLens-1M's frontier: TTA 30.879 to 31.042 s on a 190 pt axis,
 * 8 pt labels, data 6 pt clear of the ends. 5 % of 31.042 is 1.5521 s
 * about the centre 30.9605: 30.18445 to 31.73655, 178 pt of the axis, so
 * 114.683 pt/s and 6 pt are 0.05232 s: 30.13213 to 31.78887. Steps: 0.1
 * gives 16 labels (over 8); 0.2 gives 30.2 ... 31.6, 22.9 pt apart for
 * labels 17.8 pt wide and an 8 pt gap (25.8); 0.25 gives 28.7 pt for
 * 22.9 + 8; 0.5 gives 30.5, 31.0, 31.5, one decimal each. */
Test(plot, linear_axis_spans_five_percent_with_ticks_that_fit)
{
    ws_plot_axis a;
    ws_plot_axis_opts o = {190, 0, 8, 6, 6, WS_PLOT_MIN_SPAN, 0};
    ws_plot_axis_linear(&a, 30.879, 31.042, &o);
    const double c = (30.879 + 31.042) / 2, span = 0.05 * 31.042, pad = 6 / (178 / span);
    cr_expect(CLOSE(a.lo, c - span / 2 - pad), "lo %.9g", a.lo);
    cr_expect(CLOSE(a.hi, c + span / 2 + pad), "hi %.9g", a.hi);
    char buf[512];
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "30.5@30.5 31.0@31 31.5@31.5");
    cr_expect_eq(a.log, 0);
    cr_expect_eq(a.label_chars, 4);
    cr_expect(CLOSE(a.label_w, (3 * 0.636 + 0.318) * 8));
}

/* Cumulative cost 0 to 2500 on a 100 pt axis, stacked labels: the range
 * starts at 0 (no pad there), ends 5 pt over the data (2500 + 5 / 0.038 =
 * 2631.58). Step 100: 27 ticks; 200: 14 and 250: 11 (over 7 stacked);
 * 500: 0 ... 2500, 19 pt apart (1.8 em = 14.4 pt needed). */
Test(plot, linear_axis_from_zero_stacked)
{
    ws_plot_axis a;
    ws_plot_axis_opts o = {100, 1, 8, 0, 5, 0, 1};
    ws_plot_axis_linear(&a, 0, 2500, &o);
    cr_expect_eq(a.lo, 0);
    cr_expect(CLOSE(a.hi, 2500 + 5 / (95.0 / 2500)), "hi %.9g", a.hi);
    char buf[512];
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "0@0 500@500 1000@1000 1500@1500 2000@2000 2500@2500");
    /* 0 to 100 on 90 pt: a 20 step puts "80" (10.2 pt wide) and "100"
     * (15.3 pt) 18 pt apart, 20.7 needed (their half widths and an em);
     * 25 puts "75" and "100" 22.5 pt apart */
    ws_plot_axis_opts o2 = {90, 0, 8, 0, 0, 0, 0};
    ws_plot_axis_linear(&a, 0, 100, &o2);
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "0@0 25@25 50@50 75@75 100@100", "%s", buf);
    /* about zero: no "-0" */
    ws_plot_axis_opts o3 = {300, 0, 8, 0, 0, 0, 0};
    ws_plot_axis_linear(&a, -0.5, 0.5, &o3);
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "-0.4@-0.4 -0.2@-0.2 0.0@0 0.2@0.2 0.4@0.4", "%s", buf);
}

/* Two labelled ticks at least, however short the axis: 0.1 to 0.2 on
 * 20 pt has room for no two labels an em apart; the ends move out to
 * multiples of the coarsest step that has two (0.1). */
Test(plot, short_axis_keeps_two_ticks)
{
    ws_plot_axis a;
    ws_plot_axis_opts o = {20, 0, 8, 0, 0, 0, 0};
    ws_plot_axis_linear(&a, 0.1, 0.2, &o);
    cr_expect_geq(a.n, 2);
    for (size_t i = 0; i < a.n; i++) cr_expect(a.tick[i] >= a.lo && a.tick[i] <= a.hi);
}

/* Log axes: the P100/ImageNet overview (56 to 64 h on 130 pt, 7 pt labels)
 * once had one tick. The range widens to 1.5x about the geometric mean
 * (48.88 to 73.30), pads 6 pt of 670.5 pt a decade; of 1, 2, 5 x 10^k only
 * 50 falls in it: linear steps then, 5 (50 ... 70; 2 gives 14 labels, 2.5
 * gives 10, over 8). A wide range takes 1, 2, 5 x 10^k while they fit,
 * with SI suffixes. */
Test(plot, log_axis_has_two_ticks_at_least)
{
    ws_plot_axis a;
    ws_plot_axis_opts o = {130, 0, 7, 6, 6, 0, 0};
    ws_plot_axis_log(&a, 56, 64, &o);
    char buf[512];
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "50@50 55@55 60@60 65@65 70@70", "%s", buf);
    cr_expect_eq(a.log, 1);
    double mid = sqrt(56.0 * 64), per = 118 / log10(1.5);
    cr_expect(CLOSE(a.lo, mid / sqrt(1.5) / pow(10, 6 / per)), "lo %.9g", a.lo);
    cr_expect(CLOSE(a.hi, mid * sqrt(1.5) * pow(10, 6 / per)), "hi %.9g", a.hi);
    /* 25 s to 20000 s (2.903 decades): 1, 2, 5 x 10^k would be 9 labels
     * (over 8); 1, 3 x 10^k puts 1000 and 3000 (17.8 pt wide, 7 pt gap)
     * 0.477 decade apart: 26.3 pt on 160 pt, enough; on 150 pt, 24.7 pt,
     * too close: decades then, 10^4 as 10k */
    ws_plot_axis_opts o2 = {160, 0, 7, 0, 0, 0, 0};
    ws_plot_axis_log(&a, 25, 20000, &o2);
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "30@30 100@100 300@300 1000@1000 3000@3000 10k@10000", "%s", buf);
    o2.len = 150;
    ws_plot_axis_log(&a, 25, 20000, &o2);
    ticks(&a, buf, sizeof buf);
    cr_expect_str_eq(buf, "100@100 1000@1000 10k@10000", "%s", buf);
}

Test(plot, viridis_along_its_stops)
{
    char c[8];
    ws_plot_viridis(0, c);
    cr_expect_str_eq(c, "#440154");
    ws_plot_viridis(1, c);
    cr_expect_str_eq(c, "#b5de2b");
    ws_plot_viridis(0.5, c);
    cr_expect_str_eq(c, "#21918c");
    /* halfway between the first two stops, rounded */
    ws_plot_viridis(0.125, c);
    cr_expect_str_eq(c, "#402a70");
}

/* Issue 30, item 7: one policy, one look in every figure. The table gives
 * each policy its own colour and marker whatever the pairs' order (the
 * curves listed zeus, grid, default and coloured them by position: grid
 * orange, default green; the steady-state figures the other way round). */
Test(plot, policy_looks_by_name_not_position)
{
    const char *a[] = {"zeus+jit", "grid+grid", "default", "oracle"};
    const char *b[] = {"default+default", "oracle", "grid", "zeus+jit"};
    ws_plot_look la[4], lb[4];
    ws_plot_policy_looks(a, 4, la);
    ws_plot_policy_looks(b, 4, lb);
    cr_expect_str_eq(la[0].colour, "#0072B2");
    cr_expect_str_eq(la[1].colour, "#E69F00");
    cr_expect_str_eq(la[2].colour, "#D55E00");
    cr_expect_str_eq(la[3].colour, "#000000");
    cr_expect_eq(la[0].pt, 7);
    cr_expect_eq(la[2].pt, 4);
    cr_expect_eq(la[3].pt, 6);
    /* the same policy, the same look, in another order */
    cr_expect_str_eq(lb[3].colour, la[0].colour);
    cr_expect_str_eq(lb[2].colour, la[1].colour);
    cr_expect_str_eq(lb[0].colour, la[2].colour);
    cr_expect_str_eq(lb[1].colour, la[3].colour);
    /* a second zeus pair and an unknown policy: the next looks outside the
     * table, each its own, none a table colour */
    const char *c[] = {"zeus+jit", "zeus{window=10}+jit", "egreedy+jit", "grid"};
    ws_plot_look lc[4];
    ws_plot_policy_looks(c, 4, lc);
    cr_expect_str_eq(lc[0].colour, "#0072B2");
    cr_expect_str_eq(lc[1].colour, "#009E73");
    cr_expect_str_eq(lc[2].colour, "#CC79A7");
    cr_expect_str_eq(lc[3].colour, "#E69F00");
    /* a name that only starts like a policy is not it */
    cr_expect_null(ws_plot_policy_look("zeusx+jit").colour);
    cr_expect_str_eq(ws_plot_policy_look("zeus{window=0}+jit").colour, "#0072B2");
}

/* Issue 30, item 12: a style for papers, `style: "font=..., col1=...,
 * col2=..., palette=..."` in a config (or --set style=...). The font
 * reaches a gnuplot script: only letters, digits, spaces and '-'. */
Test(plot, style_parsed_and_checked)
{
    ws_style s;
    ws_error err = {{0}};
    cr_assert_eq(ws_style_parse(" font = Times New Roman , col2=6.5, palette=grey", &s, &err), 0,
                 "%s", err.msg);
    cr_expect_str_eq(s.font, "Times New Roman");
    cr_expect_float_eq(s.col2, 6.5, 1e-12);
    cr_expect_float_eq(s.col1, 3.4, 1e-12, "unset keys keep their default");
    cr_expect_float_eq(s.size, 8, 1e-12, "the size too");
    cr_expect_eq(s.palette, WS_PALETTE_GREY);
    static const char *bad[][2] = {
        {"font=Times'New", "font must be a font family"},
        {"font=`id`", "font must be a font family"},
        {"font=1Times", "font must be a font family"},
        {"col1=1", "col1 must be a width in inches, 2.5 to 5"},
        {"col2=nan", "col2 must be a width in inches"},
        {"palette=pink", "palette must be okabe-ito, tol or grey"},
        {"sizes=9", "no key 'sizes'"},
        {"size=4.9", "size must be the base font size in points, 5 to 14"},
        {"size=15", "size must be the base font size in points, 5 to 14"},
        {"size=nan", "size must be the base font size"},
        {"size=9pt", "size must be the base font size"},
        {"size=9, size=10", "size given twice"},
        {"col1=3, col1=3.2", "col1 given twice"},
        {"font", "'font' is not KEY=VALUE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ws_style t = s;
        cr_expect_eq(ws_style_parse(bad[i][0], &t, &err), -1, "%s", bad[i][0]);
        cr_expect(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
        cr_expect_str_eq(t.font, "Times New Roman", "a refused style changes nothing");
    }
    /* the palette colours the policies and the GPUs */
    ws_style tol;
    cr_assert_eq(ws_style_parse("palette=tol", &tol, &err), 0);
    ws_plot_set_style(&tol);
    cr_expect_str_eq(ws_plot_colour(0), "#4477AA");
    cr_expect_str_eq(ws_plot_policy_look("zeus+jit").colour, "#4477AA");
    cr_expect_str_eq(ws_plot_policy_look("oracle").colour, "#000000");
    ws_style def;
    ws_style_default(&def);
    ws_plot_set_style(&def);
    cr_expect_str_eq(ws_plot_colour(0), "#0072B2");
    cr_expect_float_eq(WS_PLOT_COL2, 7.0, 1e-12);
}

/* Sweep the config `yaml` (without gnuplot: the scripts only) into
 * tmp/o; the script of its steady-state figure for V100 / SQuAD, to free. */
static char *sweep_steady_squad_gp(const char *yaml)
{
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/s.yaml", tmp);
    FILE *f = fopen(cfg, "w");
    cr_assert_not_null(f);
    fputs(yaml, f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " sweep %s --traces " TRACES " --catalogue "
                           CATALOGUE " --out %s/o >/dev/null 2>&1", cfg, tmp), 0);
    return slurp(tp("o/steady-v100-squad.gp"));
}

Test(plot, style_from_a_config_reaches_the_scripts, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    char *gp = sweep_steady_squad_gp("gpu: v100\nworkload: squad\nseed: 1..2\nrecurrences: 20\n"
                                     "bso: zeus\nplo: jit\n"
                                     "style: \"font=DejaVu Serif, col2=6, palette=tol\"\n");
    cr_expect(strstr(gp, "W = 6.000;"), "two columns are 6 in wide");
    cr_expect(strstr(gp, "font 'DejaVu Serif,8'"), "the font");
    cr_expect(strstr(gp, "lc rgb '#4477AA'"), "zeus in Tol's blue");
    cr_expect(!strstr(gp, "#0072B2"), "no Okabe-Ito");
    free(gp);
    /* a bad style: exit 2 naming the option and key, nothing written */
    cr_expect_eq(run_shell(CLI " sweep %s/s.yaml --set 'style=font=a;b' --traces " TRACES
                           " --catalogue " CATALOGUE " --out %s/bad 2>%s/err.txt", tmp, tmp, tmp),
                 2);
    char *e = slurp(tp("err.txt"));
    cr_expect(strstr(e, "--set style: style: font must be a font family"), "%s", e);
    free(e);
    cr_expect(!exists(tp("bad")));
}

/* Issue 30: the plan figure's title named the job by its ids as typed
 * ("cifar100 on v100"); every other figure uses the catalogue's display
 * names, escaped like any text of a script. */
Test(plot, plan_title_uses_display_names, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " plan --gpu v100 --workload cifar100"
                           " --seeds 2 --traces " TRACES " --catalogue " CATALOGUE
                           " --plot %s/p.png >/dev/null 2>&1", tmp), 0);
    char *gp = slurp(tp("p.gp"));
    cr_expect(strstr(gp, "set title 'ShuffleNet-v2 / CIFAR-100 on V100 (η = 0.5): learning vs the"
                         " default knob'"), "%s", gp);
    cr_expect(!strstr(gp, "cifar100 on v100"));
    free(gp);
}

/* Issue 30, item 12: the font size is part of the style, one base size
 * (8 pt by default) from which the title's (+1) and the keys' (-1) derive;
 * it reaches the terminal line and every text of a figure, and the
 * layout's text-holding lengths grow with it. */
Test(plot, style_size_reaches_the_scripts, .init = mktmp, .fini = rmtmp, .timeout = 120)
{
    ws_style s;
    ws_error err = {{0}};
    cr_assert_eq(ws_style_parse("size=12, font=Times", &s, &err), 0, "%s", err.msg);
    cr_expect_float_eq(s.size, 12, 1e-12);
    ws_plot_set_style(&s);
    cr_expect_float_eq(WS_PLOT_FONT_PT, 12, 1e-12);
    cr_expect_float_eq(WS_PLOT_FONT_TITLE, 13, 1e-12);
    cr_expect_float_eq(WS_PLOT_FONT_SMALL, 11, 1e-12);
    cr_expect_float_eq(WS_PLOT_EM, 1.5, 1e-12);
    /* room for tick and axis labels grows with the font */
    double b8, b12 = ws_plot_bottom_room(12, 12);
    ws_style_default(&s);
    ws_plot_set_style(&s);
    b8 = ws_plot_bottom_room(8, 8);
    cr_expect_float_eq(b8, 6.9 + 1.17 * 8 + 5 + 1.17 * 8, 1e-9, "as measured at 8 pt");
    cr_expect_float_eq(b12, 6.9 + 3.9 * 0.5 + 1.17 * 12 + 5 + 5 * 0.5 + 1.17 * 12, 1e-9);
    /* the sweep's figures: the terminal's base, the title's, the keys' */
    char *gp = sweep_steady_squad_gp("gpu: v100\nworkload: squad\neta: [0.2, 0.8]\nseed: 1..2\n"
                                     "recurrences: 20\nbso: zeus\nplo: jit\nstyle: \"size=12\"\n");
    cr_expect(strstr(gp, "font 'Helvetica,12' fontscale 0.75"), "the terminal's font");
    cr_expect(strstr(gp, "set multiplot title"), "a title");
    cr_expect(strstr(gp, "font ',13'\n"), "titles 1 pt larger");
    cr_expect(strstr(gp, "with labels left font ',11'"), "the eta labels 1 pt smaller");
    cr_expect(!strstr(gp, "font ',7'") && !strstr(gp, "font ',8'") && !strstr(gp, "font ',9'"),
              "no text left at the default sizes");
    free(gp);
    /* the plan figure takes the style as an option */
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " plan --gpu v100 --workload squad --seeds 2"
                           " --style size=6 --traces " TRACES " --catalogue " CATALOGUE
                           " --plot %s/p.png >/dev/null 2>&1", tmp), 0);
    gp = slurp(tp("p.gp"));
    cr_expect(strstr(gp, "noenhanced font 'Helvetica,6' background"), "the terminal's font");
    cr_expect(strstr(gp, "font ',7'\n"), "the title at 7");
    cr_expect(strstr(gp, "Left reverse font ',5'"), "the key at 5");
    free(gp);
    /* out of range: exit 2, the option named, no figure */
    cr_expect_eq(run_shell(CLI " plan --gpu v100 --workload squad --seeds 2 --style size=15"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/q.png"
                           " 2>%s/err.txt", tmp, tmp), 2);
    char *e = slurp(tp("err.txt"));
    cr_expect(strstr(e, "wattsim: --style: size must be the base font size in points, 5 to 14"),
              "%s", e);
    free(e);
    cr_expect(!exists(tp("q.gp")) && !exists(tp("q.png")));
    /* and pareto --plot, as plan */
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " pareto --gpu v100 --workload squad --style size=11"
                           " --traces " TRACES " --catalogue " CATALOGUE " --plot %s/r.png >/dev/null 2>&1",
                           tmp), 0);
    gp = slurp(tp("r.gp"));
    cr_expect(strstr(gp, "noenhanced font 'Helvetica,11' background"), "the terminal's font");
    free(gp);
    cr_expect_eq(run_shell(CLI " pareto --gpu v100 --workload squad --style size=15 --traces " TRACES
                           " --catalogue " CATALOGUE " --plot %s/s.png 2>/dev/null", tmp), 2);
    cr_expect(!exists(tp("s.gp")) && !exists(tp("s.png")));
}

/* Issue 30, item 11/12 follow-up: on V100 / CIFAR-100 the η = 0–0.1 label
 * sat below its point with a leader 20° off the point's vertical error
 * bar, reading as part of it, and ending short of the text. A leader now
 * leaves its point at least 35° off both error bars (on the page) unless
 * the text's edge is too short to allow it. */
Test(plot, eta_leaders_leave_the_error_bars_at_an_angle, .init = mktmp, .fini = rmtmp,
     .timeout = 180)
{
    cr_assert_eq(run_shell("PATH=/nonexistent " CLI " sweep " WS_SOURCE_DIR
                           "/configs/paper/eta-sensitivity.yaml --set workload=cifar100"
                           " --policies zeus:jit --traces " TRACES " --catalogue " CATALOGUE
                           " --out %s/o >/dev/null 2>&1", tmp), 0);
    char *gp = slurp(tp("o/steady-v100-cifar100.gp"));
    double w_in, h_in, x0, x1, y0, y1, l, r, b, t;
    const char *p = strstr(gp, "W = ");
    cr_assert(p && sscanf(p, "W = %lf; H = %lf", &w_in, &h_in) == 2);
    p = strstr(gp, "set lmargin at screen ");
    cr_assert(p && sscanf(p, "set lmargin at screen %lf; set rmargin at screen %lf\n"
                             "set bmargin at screen %lf; set tmargin at screen %lf",
                          &l, &r, &b, &t) == 4);
    p = strstr(gp, "X0 = ");
    cr_assert(p && sscanf(p, "X0 = %lf; X1 = %lf; Y0 = %lf; Y1 = %lf", &x0, &x1, &y0, &y1) == 4);
    free(gp);
    const double sx = (r - l) * 72 * w_in / (x1 - x0), sy = (t - b) * 72 * h_in / (y1 - y0);
    char *csv = slurp(tp("o/steady-v100-cifar100.csv"));
    char *blk = strstr(csv, "# block 2");
    cr_assert_not_null(blk);
    int leaders = 0, eta0 = 0;
    for (char *line = strchr(blk, '\n') + 1; *line && *line != '\n' && *line != '#';) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        /* series,eta,beta,tta,eta,tta_lo,tta_hi,eta_lo,eta_hi,label,ltta,leta,ex,ey */
        char *f[14] = {0};
        int n = 0;
        for (char *q = line; n < 14; n++) {
            f[n] = q;
            q = strchr(q, ',');
            if (!q) { n++; break; }
            *q++ = '\0';
        }
        if (n == 14 && f[12][0]) {
            double dx = (atof(f[12]) - atof(f[3])) * sx, dy = (atof(f[13]) - atof(f[4])) * sy;
            double deg = atan2(fabs(dy), fabs(dx)) * 180 / 3.14159265358979;
            cr_expect(deg >= 34.9 && deg <= 55.1,
                      "%s: its leader leaves %.1f° off the horizontal", f[9], deg);
            leaders++;
            eta0 += !strcmp(f[9], "η=0–0.1");
        }
        if (!end) break;
        line = end + 1;
    }
    cr_expect_geq(leaders, 1, "the crowded η = 0 and 0.1 get a leader");
    cr_expect_eq(eta0, 1, "η=0–0.1 has a leader");
    free(csv);
}
