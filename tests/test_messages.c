/*
 * Messages never carry a raw control character from their input: every
 * ws_error and every line printed with ws_line goes through
 * ws_text_escape (wattsim/error.h), which shows C0 and C1 controls, DEL
 * and bytes outside well-formed UTF-8 as \xHH and keeps the rest.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wattsim/error.h"
#include "run_cli.h"

static const char *esc(const char *s, size_t size)
{
    static char buf[512];
    cr_assert(size <= sizeof buf);
    ws_text_escape(buf, size, s);
    return buf;
}

Test(messages, control_characters_are_shown_not_sent)
{
    cr_assert_str_eq(esc("a\nb", 64), "a\\x0Ab");
    cr_assert_str_eq(esc("\r\t\x1b[31m\x7f", 64), "\\x0D\\x09\\x1B[31m\\x7F");
    cr_assert_str_eq(esc("x\x07y", 64), "x\\x07y");
}

Test(messages, utf8_text_is_kept_c1_and_invalid_bytes_are_not)
{
    cr_assert_str_eq(esc("η ≥ 0.5 – ok €", 64), "η ≥ 0.5 – ok €");
    cr_assert_str_eq(esc("a\xc2\x9b" "2Jb", 64), "a\\xC2\\x9B2Jb");        /* C1 CSI */
    cr_assert_str_eq(esc("\xc2\xa0", 64), "\xc2\xa0");                     /* NBSP is text */
    cr_assert_str_eq(esc("\x9b", 64), "\\x9B");                           /* lone C1 byte */
    cr_assert_str_eq(esc("\xff\xfe", 64), "\\xFF\\xFE");
    cr_assert_str_eq(esc("\xc0\xaf", 64), "\\xC0\\xAF");                  /* overlong '/' */
    cr_assert_str_eq(esc("\xed\xa0\x80", 64), "\\xED\\xA0\\x80");         /* surrogate */
    cr_assert_str_eq(esc("\xe2\x82", 64), "\\xE2\\x82");                  /* cut short */
}

Test(messages, escaping_twice_changes_nothing)
{
    const char *in = "a\nb\x1b\xc2\x9b\xff η \\x41";
    char once[128], twice[128];
    ws_text_escape(once, sizeof once, in);
    ws_text_escape(twice, sizeof twice, once);
    cr_assert_str_eq(once, twice);
}

Test(messages, a_cut_never_splits_an_escape_or_a_character)
{
    cr_assert_str_eq(esc("ab\ncd", 6), "ab");          /* \x0A needs 4 + NUL */
    cr_assert_str_eq(esc("ab\ncd", 7), "ab\\x0A");
    cr_assert_str_eq(esc("aη", 3), "a");               /* η is 2 bytes + NUL */
    cr_assert_str_eq(esc("aη", 4), "aη");
    cr_assert_str_eq(esc("abc", 1), "");
}

Test(messages, errors_escape_what_they_quote)
{
    ws_error e = {{0}};
    cr_assert_eq(ws_fail(&e, "unknown GPU '%s'", "g1\n\x1b]0;x\x07"), -1);
    cr_assert_str_eq(e.msg, "unknown GPU 'g1\\x0A\\x1B]0;x\\x07'");
    ws_fail_prefix(&e, "%s", "c\rfg.yaml:1:2");
    cr_assert_str_eq(e.msg, "c\\x0Dfg.yaml:1:2: unknown GPU 'g1\\x0A\\x1B]0;x\\x07'");
}

Test(messages, ws_line_prints_one_escaped_line)
{
    char path[] = "/tmp/ws-msg-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    /* stderr into the file for one call, in this process */
    fflush(stderr);
    int saved = dup(2);
    cr_assert(saved >= 0 && dup2(fd, 2) == 2);
    ws_line("wattsim: warning: %s: %s", "cell\n1", "policy said \x1b[2Jhi");
    fflush(stderr);
    cr_assert(dup2(saved, 2) == 2);
    close(saved);
    char buf[256] = {0};
    cr_assert(pread(fd, buf, sizeof buf - 1, 0) > 0);
    close(fd);
    unlink(path);
    cr_assert_str_eq(buf, "wattsim: warning: cell\\x0A1: policy said \\x1B[2Jhi\n");
}

/* Usage errors echo the option as typed: escaped, on one line. */
Test(messages, usage_errors_echo_options_escaped)
{
    const char *argv[] = {"wattsim", "list", "a\nb\x1b[31m", NULL};
    cli_result r = cli_run(argv);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "wattsim list: unknown list 'a\\x0Ab\\x1B[31m' (workloads, gpus or"
                            " policies) (see 'wattsim list --help')\n");
    cli_free(&r);
}

/* A policy's words (a log line, an error) reach stderr, sweep.md and the
 * report as text on one line: tests/plugins/loud.c logs and fails with
 * ESC, newlines, HTML and a '|'. */
#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"

Test(messages, a_policys_words_stay_text, .timeout = 120)
{
    char dir[] = "/tmp/ws-msg-sweep-XXXXXX", cfg[600], out[600];
    cr_assert(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    snprintf(out, sizeof out, "%s/o", dir);
    FILE *f = fopen(cfg, "w");
    cr_assert(f);
    fputs("gpu: v100\nworkload: cifar100\nseeds: 1\nrecurrences: 3\n", f);
    cr_assert_eq(fclose(f), 0);
    const char *argv[] = {"wattsim", "sweep", cfg, "--policies", WS_TEST_PLUGIN_DIR
                          "/loud.so:jit", "--out", out, "--no-plot", "--traces", TRACES,
                          "--catalogue", CATALOGUE, "--threads", "1", NULL};
    cli_result r = cli_run(argv);
    cr_expect_eq(r.status, 1, "%s", r.err);        /* a failed cell */
    for (const char *p = r.err; *p; p++)
        cr_assert(*p == '\n' || ((unsigned char)*p >= 0x20 && *p != 0x7f),
                  "raw control character 0x%02x on stderr: %s", (unsigned char)*p, r.err);
    for (const char *line = r.err; *line; line = strchr(line, '\n') + 1)
        cr_assert(!strncmp(line, "wattsim", 7), "a line not of wattsim's: %s", line);
    cr_expect(strstr(r.err, "warning: warn \\x1B[31mred\\x1B[0m\\x0Asecond line\n"), "%s", r.err);
    cr_expect(strstr(r.err, "<script>alert(1)</script> | broke\\x1B[2J\\x0Ahere"), "%s", r.err);
    char md_path[700];
    snprintf(md_path, sizeof md_path, "%s/sweep.md", out);
    FILE *m = fopen(md_path, "r");
    cr_assert(m);
    char md[16384] = {0};
    cr_assert(fread(md, 1, sizeof md - 1, m) > 0);
    fclose(m);
    cr_expect(strstr(md, "\\<script\\>alert(1)\\</script\\> \\| broke\\\\x1B\\[2J\\\\x0Ahere |"),
              "%s", md);
    for (const char *p = md; (p = strstr(p, "<script")); p++)
        cr_expect(p > md && p[-1] == '\\', "raw HTML in sweep.md: %s", md);
    cli_free(&r);
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}
