/*
 * A config runs no code (issue 18, item 2). A policy a config names as a
 * file (X.so, a path, FILE.so:NAME) loads only from the policy folders or
 * a folder the command line allows (--allow-plugins DIR); otherwise it is
 * refused before dlopen, so its constructor never runs: tests/plugins/
 * marker.c writes $WS_MARKER when loaded, and the marker must be absent.
 * The command line (--set, --policies) may still name any .so. A config's
 * `out:` may not be absolute or climb out with `..`.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpdir.h"

#define CLI WS_BUILD_DIR "/sim/wattsim"
#define FIX WS_SOURCE_DIR "/tests/data/bad/_fixture"
#define PLUGINS WS_TEST_PLUGIN_DIR
#define MARKER_SO PLUGINS "/marker.so"
#define DATA " --traces " FIX " --catalogue " FIX "/workloads.yaml"
#define BASE "gpu: g1\nworkload: w\nseed: 1\nrecurrences: 4\n"

static void mktmp(void) { tmpdir_make("/tmp/wsallow.XXXXXX"); }
static void rmtmp(void) { tmpdir_remove(); }

static int marked(void)
{
    struct stat st;
    return stat(tp("marker"), &st) == 0;
}

/* Run a command line (printf format) in tmp with WS_MARKER set; its
 * stderr in err.txt. */
__attribute__((format(printf, 1, 2)))
static int run(const char *fmt, ...)
{
    char cmd[3000], line[3500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "cd %1$s && WS_MARKER=%1$s/marker %2$s >%1$s/out.txt"
             " 2>%1$s/err.txt", tmp, cmd);
    return run_shell("%s", line);
}

static char *err_txt(void) { return slurp_file(tp("err.txt")); }

static const char *real_plugins(void)
{
    static char r[PATH_MAX];
    cr_assert(realpath(PLUGINS, r));
    return r;
}

/* The refusal names the place in the config and the option to use. */
static void expect_refused(const char *where, const char *kind, const char *name)
{
    char *err = err_txt(), want[2048];
    snprintf(want, sizeof want, "wattsim: %s: %s '%s' is a plugin file, and a config may name"
             " plugins only in the policy folders (a config runs no code); to run it, pass"
             " --allow-plugins %s\n", where, kind, name, real_plugins());
    cr_expect_str_eq(err, want);
    free(err);
    cr_expect(!marked(), "the plugin's constructor ran");
}

Test(plugin_allow, a_config_naming_a_plugin_never_loads_it, .init = mktmp, .fini = rmtmp)
{
    write_file("c.yaml", BASE "bso: " MARKER_SO "\n");
    cr_expect_eq(run(CLI " run c.yaml --out o" DATA), 2);
    expect_refused("c.yaml:5:6", "bso", MARKER_SO);
    write_file("c.yaml", BASE "bso: {name: " MARKER_SO ":marker, params: {}}\n");
    cr_expect_eq(run(CLI " run c.yaml --out o" DATA), 2);
    expect_refused("c.yaml:5:13", "bso", MARKER_SO ":marker");
    write_file("c.yaml", BASE "plo: [jit, " MARKER_SO "]\n");
    cr_expect_eq(run(CLI " run c.yaml --out o" DATA), 2);
    expect_refused("c.yaml:5:12", "plo", MARKER_SO);
    write_file("c.yaml", BASE "policies:\n  - {bso: zeus, plo: jit}\n  - {bso: " MARKER_SO
               ", plo: jit}\n");
    cr_expect_eq(run(CLI " sweep c.yaml --out o --no-plot" DATA), 2);
    expect_refused("c.yaml:7:11", "bso", MARKER_SO);
    struct stat st;
    cr_expect_neq(stat(tp("o"), &st), 0, "nothing written");
}

/* A link in an untrusted folder to an allowed plugin is that plugin; a
 * link in an allowed folder to an outside one is the outside one. */
Test(plugin_allow, links_are_judged_by_what_they_point_to, .init = mktmp, .fini = rmtmp)
{
    cr_assert_eq(run_shell("mkdir %1$s/mine && cp " MARKER_SO " %1$s/mine/m.so && ln -s"
                           " %1$s/mine/m.so %1$s/link.so", tmp), 0);
    write_file("c.yaml", BASE "bso: link.so:marker\n");
    char real[PATH_MAX];
    cr_assert(realpath(tp("mine"), real));
    /* allowing the link's folder does not allow the target's */
    cr_expect_eq(run(CLI " run c.yaml --out o --allow-plugins ." DATA), 2);
    char *err = err_txt(), want[PATH_MAX + 32];
    snprintf(want, sizeof want, "--allow-plugins %s\n", real);
    cr_expect(strstr(err, want), "%s", err);
    free(err);
    cr_expect(!marked());
    cr_expect_eq(run(CLI " run c.yaml --out o --allow-plugins mine" DATA), 0);
    cr_expect(marked());
}

Test(plugin_allow, allowed_folders_run_and_are_recorded, .init = mktmp, .fini = rmtmp)
{
    write_file("c.yaml", BASE "bso: " MARKER_SO "\n");
    cr_assert_eq(run(CLI " run c.yaml --out o --allow-plugins " PLUGINS DATA), 0);
    cr_expect(marked());
    char *json = slurp_file(tp("o/summary.json")), want[1024];
    snprintf(want, sizeof want, "\"allow_plugins\": [\"%s\"]", real_plugins());
    cr_expect(strstr(json, want), "%s", json);
    free(json);
    /* a sweep records it in sweep.json */
    cr_assert_eq(run(CLI " sweep c.yaml --out s --no-plot --allow-plugins " PLUGINS DATA), 0);
    json = slurp_file(tp("s/sweep.json"));
    cr_expect(strstr(json, want), "%s", json);
    free(json);
    /* without it, nothing says so */
    cr_assert_eq(run(CLI " run c.yaml --out o2 --set bso=zeus" DATA), 0);
    json = slurp_file(tp("o2/summary.json"));
    cr_expect(!strstr(json, "allow_plugins"), "%s", json);
    free(json);
}

/* $WATTSIM_POLICY_DIR is a policy folder: its plugins need no option. */
Test(plugin_allow, the_policy_folders_are_allowed, .init = mktmp, .fini = rmtmp)
{
    write_file("c.yaml", BASE "bso: " MARKER_SO "\n");
    const char *dir = getenv("WATTSIM_POLICY_DIR");
    cr_assert_eq(run("WATTSIM_POLICY_DIR=%s:" PLUGINS " " CLI " run c.yaml --out o" DATA,
                     dir ? dir : ""), 0);
    cr_expect(marked());
}

/* What the user types may name any .so. */
Test(plugin_allow, the_command_line_may_name_any_plugin, .init = mktmp, .fini = rmtmp)
{
    write_file("c.yaml", BASE "bso: " MARKER_SO "\n");
    cr_expect_eq(run(CLI " run c.yaml --out o --set bso=" MARKER_SO DATA), 0);
    cr_expect(marked());
    unlink(tp("marker"));
    cr_expect_eq(run(CLI " sweep c.yaml --out s --no-plot --policies " MARKER_SO ":jit" DATA),
                 0);
    cr_expect(marked());
}

/* --resume and merge read the config again and check it again: without
 * the allowance they refuse before any code runs; with it they go on
 * (the journal's plan fingerprint holds each plugin's sha256). */
Test(plugin_allow, resume_and_merge_need_the_allowance_again, .init = mktmp, .fini = rmtmp)
{
    write_file("c.yaml", "gpu: g1\nworkload: w\nseeds: [1, 6, 9]\nrecurrences: 4\nbso: " MARKER_SO "\n");
    cr_assert_eq(run(CLI " sweep c.yaml --out a --no-plot --shard 0/2 --allow-plugins " PLUGINS
                     DATA), 0);
    cr_assert_eq(run(CLI " sweep c.yaml --out b --no-plot --shard 1/2 --allow-plugins " PLUGINS
                     DATA), 0);
    unlink(tp("marker"));
    cr_expect_eq(run(CLI " merge sweep c.yaml a b --out m --no-plot" DATA), 2);
    expect_refused("c.yaml:5:6", "bso", MARKER_SO);
    cr_expect_eq(run(CLI " sweep c.yaml --out a --no-plot --resume" DATA), 2);
    expect_refused("c.yaml:5:6", "bso", MARKER_SO);
    cr_expect_eq(run(CLI " merge sweep c.yaml a b --out m --no-plot --allow-plugins " PLUGINS
                     DATA), 0);
    cr_expect(marked());
    /* an isolated sweep's children are forked: the parent's check holds */
    cr_expect_eq(run(CLI " sweep c.yaml --out i --no-plot --isolate --allow-plugins " PLUGINS
                     DATA), 0);
}

Test(plugin_allow, the_option_wants_a_folder, .init = mktmp, .fini = rmtmp)
{
    write_file("c.yaml", BASE);
    cr_expect_eq(run(CLI " run c.yaml --out o --allow-plugins c.yaml" DATA), 2);
    char *err = err_txt();
    cr_expect_str_eq(err, "wattsim: --allow-plugins c.yaml: not a folder\n");
    free(err);
}

/* ------------------------------------------------------------ out */

Test(plugin_allow, a_configs_out_stays_below_the_current_folder, .init = mktmp, .fini = rmtmp)
{
    char cfg[700], want[1500];
    snprintf(cfg, sizeof cfg, BASE "out: %s/never\n", tmp);      /* absolute */
    write_file("c.yaml", cfg);
    cr_expect_eq(run(CLI " run c.yaml" DATA), 2);
    char *err = err_txt();
    snprintf(want, sizeof want, "wattsim: c.yaml:5:6: out '%1$s/never' is an absolute path; a"
             " config's output folder must stay below the current folder: make it relative,"
             " or pass --out %1$s/never\n", tmp);
    cr_expect_str_eq(err, want);
    free(err);
    write_file("c.yaml", BASE "out: x/../../up\n");
    cr_expect_eq(run(CLI " run c.yaml" DATA), 2);
    err = err_txt();
    cr_expect(strstr(err, "c.yaml:5:6: out 'x/../../up' climbs out of the current folder"),
              "%s", err);
    free(err);
    struct stat st;
    cr_expect_neq(stat(tp("never"), &st), 0);
    /* the command line may send it anywhere */
    char out[600];
    snprintf(out, sizeof out, "%s/elsewhere", tmp);
    cr_expect_eq(run(CLI " run c.yaml --out %s" DATA, out), 0);
    cr_expect_eq(run(CLI " run c.yaml --set out=../%s/x" DATA, strrchr(tmp, '/') + 1), 0);
    cr_expect_eq(stat(tp("x/summary.csv"), &st), 0);
}
