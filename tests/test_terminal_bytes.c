/*
 * Bytes that must never reach a terminal (issue 26, items 8, 9 and 12):
 *  - ws_text_escape, the one escaping function of every message, shows
 *    the Unicode bidirectional controls (U+061C, U+200E, U+200F,
 *    U+202A..U+202E, U+2066..U+2069) and U+2028/U+2029 as \xHH bytes, as
 *    it shows C0 and C1 controls, and leaves other text alone; a `--gpu`
 *    and an OpenEI label read from a file come out escaped;
 *  - output paths (--out, a config's `out:`, --plot, groups synth --out,
 *    policy new DIR) obey ws_path_check: ESC, CR, NL, an OSC...BEL title
 *    sequence, C1 controls, bidi controls and bytes that are not UTF-8
 *    are refused, naming the option (or FILE:LINE:COL), shown escaped,
 *    and no folder is made;
 *  - --price nan, inf, -inf, 1e400 is a number that breaks the price
 *    rule, not a file named "nan" that cannot be opened (as --eta nan
 *    is a number message).
 * Needs the fetched Zeus traces.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_cli.h"
#include "tmpdir.h"
#include "wattsim/error.h"
#include "wattsim/name.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"
#define CATALOGUE WS_SOURCE_DIR "/configs/workloads.yaml"

static void mktmp(void) { tmpdir_make("/tmp/ws-test-termbytes-XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static const char *esc(const char *s)
{
    static char buf[512];
    ws_text_escape(buf, sizeof buf, s);
    return buf;
}

/* Does s hold a byte that drives a terminal, or a bidi control, raw? */
static int raw_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f) return 1;
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) return 1;
        if (p[0] == 0xe2 && (p[1] == 0x80 || p[1] == 0x81)) return 1;   /* U+2000..U+207F */
        if (p[0] == 0xd8 && p[1] == 0x9c) return 1;
    }
    return 0;
}

Test(escape, bidi_controls_are_shown_as_bytes)
{
    cr_expect_str_eq(esc("a\xe2\x80\xae" "b"), "a\\xE2\\x80\\xAEb");          /* U+202E RLO */
    cr_expect_str_eq(esc("\xe2\x80\xaa"), "\\xE2\\x80\\xAA");                /* U+202A LRE */
    cr_expect_str_eq(esc("\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
                     "\\xE2\\x80\\xAB\\xE2\\x80\\xAC\\xE2\\x80\\xAD");
    cr_expect_str_eq(esc("\xe2\x81\xa6\xe2\x81\xa9"), "\\xE2\\x81\\xA6\\xE2\\x81\\xA9");
    cr_expect_str_eq(esc("\xe2\x81\xa7\xe2\x81\xa8"), "\\xE2\\x81\\xA7\\xE2\\x81\\xA8");
    cr_expect_str_eq(esc("\xe2\x80\x8e\xe2\x80\x8f"), "\\xE2\\x80\\x8E\\xE2\\x80\\x8F");
    cr_expect_str_eq(esc("\xd8\x9c"), "\\xD8\\x9C");                          /* U+061C ALM */
    cr_expect_str_eq(esc("\xe2\x80\xa8\xe2\x80\xa9"), "\\xE2\\x80\\xA8\\xE2\\x80\\xA9");
    /* with the C0 and C1 controls, as before */
    cr_expect_str_eq(esc("\x1b]0;t\x07\r\n\xc2\x9b"), "\\x1B]0;t\\x07\\x0D\\x0A\\xC2\\x9B");
    /* the neighbours stay: U+200D (a joiner), U+2030, U+2065, U+2070, é, 中, U+061B */
    const char *fine = "\xe2\x80\x8d\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xb0 \xc3\xa9 \xe4\xb8\xad"
                       " \xd8\x9b";
    cr_expect_str_eq(esc(fine), fine);
    /* escaping twice changes nothing */
    char once[512];
    snprintf(once, sizeof once, "%s", esc("x\xe2\x80\xae\x1b"));
    cr_expect_str_eq(esc(once), once);
}

static const char *path_why(const char *s)
{
    static char buf[64];
    return ws_path_check(s, buf, sizeof buf) ? buf : NULL;
}

Test(path, the_rule)
{
    cr_expect_null(path_why("results"));
    cr_expect_null(path_why("/tmp/my results/r\xc3\xa9sultats/../x"));
    cr_expect_null(path_why("./a-b_c+d.e/\xe4\xb8\xad"));
    cr_expect_str_eq(path_why(""), "is empty");
    cr_expect_str_eq(path_why("r\x1b[2J"), "contains the control character 0x1b");
    cr_expect_str_eq(path_why("r\rfake"), "contains the control character 0x0d");
    cr_expect_str_eq(path_why("r\nfake"), "contains the control character 0x0a");
    cr_expect_str_eq(path_why("\x1b]0;title\x07"), "contains the control character 0x1b");
    cr_expect_str_eq(path_why("t\x07"), "contains the control character 0x07");
    cr_expect_str_eq(path_why("a\x7f"), "contains the control character 0x7f");
    cr_expect_str_eq(path_why("a\xc2\x9b" "31m"), "contains the control character U+009B");
    cr_expect_str_eq(path_why("a\xc2\x85"), "contains the control character U+0085");
    cr_expect_str_eq(path_why("a\xe2\x80\xae" "fdp.exe"), "contains the control character U+202E");
    cr_expect_str_eq(path_why("a\xe2\x81\xa6"), "contains the control character U+2066");
    cr_expect_str_eq(path_why("a\xe2\x80\x8f"), "contains the control character U+200F");
    cr_expect_str_eq(path_why("a\xd8\x9c"), "contains the control character U+061C");
    cr_expect_str_eq(path_why("a\xff"), "is not UTF-8 (byte 0xff)");
    cr_expect_str_eq(path_why("a\xc0\xaf"), "is not UTF-8 (byte 0xc0)");        /* overlong '/' */
    cr_expect_str_eq(path_why("a\xed\xa0\x80"), "is not UTF-8 (byte 0xed)");    /* a surrogate */
    cr_expect_str_eq(path_why("a\xe2\x80"), "is not UTF-8 (byte 0xe2)");        /* cut short */
    char big[WS_PATH_MAX + 2];
    memset(big, 'a', WS_PATH_MAX + 1);
    big[WS_PATH_MAX + 1] = '\0';
    cr_expect_str_eq(path_why(big), "is longer than 4095 bytes");
}

Test(label, a_bidi_control_is_a_control_character)
{
    char why[64];
    cr_expect_eq(ws_label_check("cifar\xe2\x80\xae" "001", why, sizeof why), -1);
    cr_expect_str_eq(why, "contains the control character U+202E");
    cr_expect(ws_has_control("x\xe2\x81\xa8"));
    cr_expect(!ws_has_control("caf\xc3\xa9 \xe2\x80\x94 ok"));                 /* em dash */
}

/* ------------------------------------------------------------ the CLI */

/* The CLI with argv (no shell: any byte goes through). */
static cli_result cli(const char *const *argv) { return cli_run(argv); }

Test(cli, a_bidi_gpu_name_is_shown_escaped, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    const char *argv[] = {"wattsim", "simulate", "--gpu", "v100\xe2\x80\xae" "exe.txt",
                          "--workload", "squad", "--traces", TRACES, "--catalogue", CATALOGUE,
                          NULL};
    cli_result r = cli(argv);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "v100\\xE2\\x80\\xAEexe.txt"), "%s", r.err);
    cr_expect(!raw_control(r.err), "raw bytes reach the terminal: %s", r.err);
    free(r.out);
    free(r.err);
}

Test(cli, a_bidi_label_from_a_file_is_shown_escaped, .init = mktmp, .fini = rmtmp,
     .timeout = 60)
{
    /* An OpenEI tariff's labels: one written as \u202E, one as its bytes. */
    write_file("t.json", "{\"items\": [{\"label\": \"a\\u202Eevil\"},"
                         " {\"label\": \"b\xe2\x81\xa6" "evil\"}]}");
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\n");
    char cfg[600], price[600], out[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    snprintf(price, sizeof price, "%s/t.json", tmp);
    snprintf(out, sizeof out, "%s/o", tmp);
    const char *argv[] = {"wattsim", "run", cfg, "--price", price, "--start",
                          "2024-01-01T00:00:00Z", "--traces", TRACES, "--catalogue", CATALOGUE,
                          "--out", out, NULL};
    cli_result r = cli(argv);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "(the first is 'a\\xE2\\x80\\xAEevil')"), "%s", r.err);
    cr_expect(!raw_control(r.err), "raw bytes reach the terminal: %s", r.err);
    free(r.out);
    free(r.err);
    /* and a --price-label typed with one */
    const char *argv2[] = {"wattsim", "run", cfg, "--price", price, "--price-label",
                           "b\xe2\x81\xa9", "--start", "2024-01-01T00:00:00Z", "--traces",
                           TRACES, "--catalogue", CATALOGUE, "--out", out, NULL};
    r = cli(argv2);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "'b\\xE2\\x81\\xA9'"), "%s", r.err);
    cr_expect(!raw_control(r.err), "raw bytes reach the terminal: %s", r.err);
    free(r.out);
    free(r.err);
}

/* How many entries folder tmp holds. */
static int entries(void)
{
    DIR *d = opendir(tmp);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

static const char *const hostile[] = {
    "r\x1b[2J",                           /* ESC: erase the screen */
    "r\rPASS",                            /* CR: overwrite the line */
    "r\n12 simulations, 0 failed",        /* NL: a fake line */
    "r\x1b]0;owned\x07",                  /* OSC ... BEL: the terminal's title */
    "r\xc2\x9b" "31m",                    /* C1 CSI */
    "r\xe2\x80\xae" "cod.exe",            /* U+202E */
    "r\xff\xfe",                          /* not UTF-8 */
};

Test(cli, a_hostile_out_is_refused_and_makes_nothing, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\n");
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    const int before = entries();
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        char out[600], synth[600], plot[600];
        snprintf(out, sizeof out, "%s/%s", tmp, hostile[i]);
        snprintf(synth, sizeof synth, "%s/%s.csv", tmp, hostile[i]);
        snprintf(plot, sizeof plot, "%s/%s/p.png", tmp, hostile[i]);
        const char *run[] = {"wattsim", "run", cfg, "--traces", TRACES, "--catalogue",
                             CATALOGUE, "--force", "--out", out, NULL};
        const char *sweep[] = {"wattsim", "sweep", cfg, "--traces", TRACES, "--catalogue",
                               CATALOGUE, "--no-plot", "--out", out, NULL};
        const char *groups[] = {"wattsim", "groups", "synth", "--catalogue", CATALOGUE,
                                "--out", synth, NULL};
        const char *plan[] = {"wattsim", "plan", "--gpu", "v100", "--workload", "squad",
                              "--traces", TRACES, "--catalogue", CATALOGUE, "--out", out, NULL};
        const char *plan_plot[] = {"wattsim", "plan", "--gpu", "v100", "--workload", "squad",
                                   "--traces", TRACES, "--catalogue", CATALOGUE, "--plot", plot,
                                   NULL};
        const char *policy[] = {"wattsim", "policy", "new", "mine", out, NULL};
        const char *const *cmds[] = {run, sweep, groups, plan, plan_plot, policy};
        const char *opt[] = {"--out '", "--out '", "--out '", "--out '", "--plot '", "DIR '"};
        for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
            cli_result r = cli(cmds[k]);
            cr_expect_eq(r.status, 2, "%s %s (%zu): exit %d: %s", cmds[k][1], cmds[k][2], i,
                         r.status, r.err);
            cr_expect_not_null(strstr(r.err, opt[k]), "%s (%zu): names the option: %s",
                               cmds[k][1], i, r.err);
            cr_expect_not_null(strstr(r.err, "UTF-8 without control characters"), "%s (%zu): %s",
                               cmds[k][1], i, r.err);
            cr_expect(!raw_control(r.err), "%s (%zu): raw bytes: %s", cmds[k][1], i, r.err);
            cr_expect(!raw_control(r.out), "%s (%zu): raw bytes: %s", cmds[k][1], i, r.out);
            cr_expect_eq(entries(), before, "%s (%zu): something was made", cmds[k][1], i);
            free(r.out);
            free(r.err);
        }
    }
}

Test(cli, a_hostile_out_in_a_config_is_refused, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    /* YAML's double-quoted escapes make every byte; the message is
     * FILE:LINE:COL, the value escaped. */
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\nout: \"r\\e]0;owned\\a\"\n");
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    const int before = entries();
    const char *argv[] = {"wattsim", "run", cfg, "--traces", TRACES, "--catalogue", CATALOGUE,
                          NULL};
    cli_result r = cli(argv);
    cr_expect_eq(r.status, 2);
    char want[900];
    snprintf(want, sizeof want, "wattsim: %s:9:6: out 'r\\x1B]0;owned\\x07' contains the control"
             " character 0x1b; an output folder's path is printed and made a folder: "
             WS_PATH_RULE "\n", cfg);
    cr_expect_str_eq(r.err, want);
    cr_expect_eq(entries(), before, "a folder was made");
    free(r.out);
    free(r.err);
}

Test(cli, a_non_finite_price_is_a_number_message, .init = mktmp, .fini = rmtmp, .timeout = 60)
{
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\n");
    char cfg[600], out[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    snprintf(out, sizeof out, "%s/o", tmp);
    const char *bad[] = {"nan", "NaN", "inf", "-inf", "+inf", "infinity", "1e400", "-1e400"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *argv[] = {"wattsim", "run", cfg, "--price", bad[i], "--traces", TRACES,
                              "--catalogue", CATALOGUE, "--out", out, NULL};
        cli_result r = cli(argv);
        cr_expect_eq(r.status, 2, "%s", bad[i]);
        char want[300];
        snprintf(want, sizeof want, "wattsim: --price must be a price in $/kWh (0, or from"
                 " 0.000001 to 1000000) or a series file, got \"%s\"\n", bad[i]);
        cr_expect_str_eq(r.err, want);
        free(r.out);
        free(r.err);
    }
    /* in a config: FILE:LINE:COL */
    write_file("p.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 10\nbso: zeus\nplo: jit\nprice: nan\n");
    snprintf(cfg, sizeof cfg, "%s/p.yaml", tmp);
    const char *argv[] = {"wattsim", "run", cfg, "--traces", TRACES, "--catalogue", CATALOGUE,
                          "--out", out, NULL};
    cli_result r = cli(argv);
    cr_expect_eq(r.status, 2);
    cr_expect_null(strstr(r.err, "cannot open"), "%s", r.err);
    free(r.out);
    free(r.err);
    /* a file that is named like a number is still read as ./NAME */
    write_file("nan", "time,value\n2024-01-01T00:00:00Z,0.1\n2024-01-02T00:00:00Z,0.1\n");
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    char dotnan[600];
    snprintf(dotnan, sizeof dotnan, "%s/nan", tmp);
    const char *argv3[] = {"wattsim", "run", cfg, "--price", dotnan, "--traces", TRACES,
                           "--catalogue", CATALOGUE, "--out", out, NULL};
    r = cli(argv3);
    cr_expect_null(strstr(r.err, "must be a price"), "%s", r.err);
    free(r.out);
    free(r.err);
}

Test(cli, a_series_files_name_is_shown_escaped_in_a_table, .init = mktmp, .fini = rmtmp,
     .timeout = 120)
{
    /* A carbon series named with ESC and U+202E (a config carries any
     * bytes in a double-quoted string): the table's what-if line shows it
     * escaped. */
    cr_assert_eq(run_shell("cp " WS_SOURCE_DIR "/traces/fetched/carbon/miso_mason_city_2022-10.csv"
                           " '%s/c'\"$(printf '\\033')\"'[31m'\"$(printf '\\342\\200\\256')\"'x.csv'",
                           tmp), 0);
    write_file("c.yaml", "gpu: v100\nworkload: squad\neta: 0.5\nbeta: 2\nseed: 1\n"
                         "recurrences: 3\nbso: zeus\nplo: jit\ncarbon: \"c\\e[31m\\u202Ex.csv\"\n");
    char cfg[600], out[600];
    snprintf(cfg, sizeof cfg, "%s/c.yaml", tmp);
    snprintf(out, sizeof out, "%s/o", tmp);
    cr_assert_eq(chdir(tmp), 0);                 /* the series is named relative to here */
    const char *argv[] = {"wattsim", "run", cfg, "--traces", TRACES, "--catalogue", CATALOGUE,
                          "--out", out, NULL};
    cli_result r = cli(argv);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "what-if: carbon c\\x1B[31m\\xE2\\x80\\xAEx.csv from"),
                       "%s", r.out);
    cr_expect(!raw_control(r.out), "raw bytes reach the terminal: %s", r.out);
    free(r.out);
    free(r.err);
}

Test(cli, a_plugins_words_are_listed_escaped, .timeout = 60)
{
    const char *argv[] = {"wattsim", "list", "policies", "--plugin",
                          WS_TEST_PLUGIN_DIR "/bidi_words.so", NULL};
    cli_result r = cli(argv);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "summary \\x1B[2J\\xE2\\x80\\xAEtxt.exe"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "default \"a\\xE2\\x80\\xAEb\"): help \\x1B]0;owned\\x07"
                                     " with \\xE2\\x81\\xA6isolate"), "%s", r.out);
    cr_expect(!raw_control(r.out), "raw bytes reach the terminal: %s", r.out);
    free(r.out);
    free(r.err);
}
