/*
 * The policy kit as a user gets it: `cmake --install` into a temporary
 * prefix, which is then moved (an installed wattsim finds its catalogue,
 * policies and traces relative to itself), and policies built out of tree
 * against the installed kit with pkg-config and with CMake
 * (find_package(wattsim), wattsim_add_policy), then simulated.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "run_cli.h"
#include "tmpdir.h"
#include "wattsim/version.h"

#define WS_STR_(x) #x
#define WS_STR(x) WS_STR_(x)
/* What every version line says (wattsim/version.h). */
#define VERSIONS "wattsim " WATTSIM_VERSION " (policy ABI " WATTSIM_POLICY_ABI \
    ", random streams " WS_STR(WATTSIM_RANDOM_STREAMS) ")"

/* The environment of ctest points at the build tree: a user's has none. */
#define CLEAN_ENV "env -u WATTSIM_POLICY_DIR -u WATTSIM_TRACES -u WATTSIM_CATALOGUE "

static char prefix[600];

static void install_kit(void)
{
    cli_no_asan_quarantine();
    tmpdir_make("/tmp/wsinstall.XXXXXX");
    cr_assert_eq(run_shell("cmake --install '%s' --prefix '%s/stage' >'%s/install.log' 2>&1",
                           WS_BUILD_DIR, tmp, tmp), 0, "cmake --install failed (%s/install.log)",
                 tmp);
    /* Move the tree: nothing may depend on the prefix it was installed to. */
    cr_assert_eq(run_shell("mv '%s/stage' '%s/moved'", tmp, tmp), 0);
    snprintf(prefix, sizeof prefix, "%s/moved", tmp);
}

/* 900 s: the tests build with cmake and cc, which under valgrind on a
 * loaded machine took over 300 s. */
TestSuite(install, .init = install_kit, .fini = tmpdir_remove, .timeout = 900);

static int exists(const char *rel)
{
    char p[900];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", prefix, rel);
    return stat(p, &st) == 0;
}

/* Output of a shell command (its stdout), malloc'd. */
static char *capture(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *capture(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    for (size_t r; (r = fread(s + n, 1, cap - 1 - n, p)) > 0;) {
        n += r;
        if (n == cap - 1) cr_assert_not_null(s = realloc(s, cap *= 2));
    }
    s[n] = '\0';
    pclose(p);
    return s;
}

Test(install, layout)
{
    static const char *files[] = {
        "bin/wattsim", "lib/libwattsim.a", "lib/libwattsim.so", "include/wattsim/policy.h",
        "include/wattsim/engine.h", "lib/pkgconfig/wattsim.pc",
        "lib/cmake/wattsim/wattsimConfig.cmake", "lib/cmake/wattsim/wattsimConfigVersion.cmake",
        "lib/wattsim/policies/zeus.so", "lib/wattsim/policies/jit.so",
        "share/wattsim/workloads.yaml", "share/wattsim/examples/capped.c",
        "share/wattsim/traces/zeus-nsdi23", "share/wattsim/examples/egreedy.c",
        "share/wattsim/examples/carbon.c", "include/wattsim/policy_v1.h",
        "include/wattsim/version.h", "lib/cmake/wattsim/wattsim-kit.cmake",
        "share/doc/wattsim/writing-a-policy.md", "share/doc/wattsim/README.md",
        "share/doc/wattsim/model.md", "share/man/man1/wattsim.1", "share/doc/wattsim/NOTICE",
        "share/doc/wattsim/LICENSE"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        cr_expect(exists(files[i]), "%s/%s is not installed", prefix, files[i]);
}

/* The moved install finds everything by itself, gives the same numbers as
 * the build tree, and its help names no build-tree path. */
Test(install, runs_relative_to_its_prefix)
{
    const char *args = "simulate --workload squad --gpu v100 --seed 2 --format json";
    char *installed = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' %s", prefix, args);
    char *built = capture("cd / && " CLEAN_ENV "'%s/sim/wattsim' %s", WS_BUILD_DIR, args);
    cr_assert(strstr(installed, "\"workload\": \"squad\""), "installed run: %.200s", installed);
    cr_expect_str_eq(installed, built);
    free(installed);
    free(built);
    char *list = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' list policies%s", prefix, "");
    char want[900];
    snprintf(want, sizeof want, "(from %s/lib/wattsim/policies)\n", prefix);
    cr_expect(strstr(list, want), "list policies: %s", list);
    free(list);
    static const char *cmds[] = {"--help", "simulate --help", "run --help", "sweep --help",
                                 "groups --help", "list --help", "pareto --help"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *h = capture(CLEAN_ENV "'%s/bin/wattsim' %s 2>&1", prefix, cmds[i]);
        cr_expect(!strstr(h, WS_SOURCE_DIR) && !strstr(h, WS_BUILD_DIR),
                  "'wattsim %s' names a build-tree path", cmds[i]);
        free(h);
    }
}

/* Build the installed example with cc and pkg-config, run it. */
Test(install, example_with_pkg_config)
{
    cr_assert_eq(run_shell("cd '%s' && export PKG_CONFIG_PATH='%s/lib/pkgconfig' &&"
                           " pkg-config --cflags --libs wattsim >pc.txt &&"
                           " cc -std=c17 -Wall -Wextra -Werror -Wno-unused-parameter -O2 -fPIC"
                           " -shared $(pkg-config --cflags wattsim) -o capped.so"
                           " '%s/share/wattsim/examples/capped.c'", tmp, prefix, prefix), 0);
    char *run = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' simulate --workload imagenet"
                        " --gpu v100 --plo '%s/capped.so' --plo-param max_watts=175"
                        " --format json", prefix, tmp);
    cr_assert(strstr(run, "\"history\": ["), "%.300s", run);
    /* Every run is at a limit at or below the cap. */
    int runs = 0;
    for (const char *p = strstr(run, "\"pl\": "); p; p = strstr(p + 1, "\"pl\": ")) {
        cr_expect_leq(atoi(p + 6), 175);
        runs++;
    }
    cr_expect_gt(runs, 0);
    free(run);
}

/* The package version tells kits apart: find_package(wattsim MAJOR.MINOR+1)
 * and pkg-config --atleast-version refuse this one; pkg-config names the
 * policy ABI and the random streams beside it, as `wattsim --version`. */
Test(install, versions)
{
    char next[32], cml[256];
    snprintf(next, sizeof next, "%d.%d", WATTSIM_VERSION_MAJOR, WATTSIM_VERSION_MINOR + 1);
    snprintf(cml, sizeof cml, "cmake_minimum_required(VERSION 3.18)\nproject(v C)\n"
             "find_package(wattsim %s REQUIRED)\n", next);
    write_file("CMakeLists.txt", cml);
    char *out = capture("cd '%s' && cmake -S . -B bv -DCMAKE_PREFIX_PATH='%s' 2>&1 |"
                        " grep -c 'version: " WATTSIM_VERSION "$'", tmp, prefix);
    cr_expect_str_eq(out, "1\n");
    free(out);
    out = capture("PKG_CONFIG_PATH='%s/lib/pkgconfig' sh -c 'pkg-config --modversion wattsim;"
                  " pkg-config --variable=policy_abi wattsim; pkg-config --variable=random_streams"
                  " wattsim; pkg-config --atleast-version=" WATTSIM_VERSION " wattsim && echo ok;"
                  " pkg-config --atleast-version=%s wattsim || echo %s refused'", prefix, next,
                  next);
    char want[256];
    snprintf(want, sizeof want, WATTSIM_VERSION "\n" WATTSIM_POLICY_ABI "\n"
             WS_STR(WATTSIM_RANDOM_STREAMS) "\nok\n%s refused\n", next);
    cr_expect_str_eq(out, want);
    free(out);
    out = capture(CLEAN_ENV "'%s/bin/wattsim' --version", prefix);
    cr_expect_str_eq(out, VERSIONS "\n");
    free(out);
}

/* A program linked against the installed libwattsim (pkg-config --libs). */
Test(install, program_links_libwattsim)
{
    write_file("prog.c",
               "#include <stdio.h>\n#include <wattsim/sha256.h>\n"
               "int main(int argc, char **argv) {\n"
               "    char h[65]; ws_error e = {{0}};\n"
               "    if (ws_sha256_file(argv[1], h, &e)) { fprintf(stderr, \"%s\\n\", e.msg); return 1; }\n"
               "    puts(h); return 0;\n}\n");
    write_file("abc", "abc");
    char *out = capture("cd '%s' && export PKG_CONFIG_PATH='%s/lib/pkgconfig' &&"
                        " cc -std=c17 " WS_TEST_LINK_FLAGS " -o prog prog.c $(pkg-config --cflags --libs wattsim) &&"
                        " LD_LIBRARY_PATH=\"$(pkg-config --variable=libdir wattsim)\" ./prog abc",
                        tmp, prefix);
    cr_expect_str_eq(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
    free(out);
}

/* The same example built with CMake: find_package(wattsim) and
 * wattsim_add_policy. */
Test(install, example_with_cmake)
{
    write_file("CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.18)\n"
               "project(mypolicy C)\n"
               "find_package(wattsim " WS_STR(WATTSIM_VERSION_MAJOR) "."
               WS_STR(WATTSIM_VERSION_MINOR) " REQUIRED)\n"
               "message(STATUS \"wattsim ${wattsim_VERSION}, policy ABI ${WATTSIM_POLICY_ABI},"
               " random streams ${WATTSIM_RANDOM_STREAMS}\")\n"
               "wattsim_add_policy(capped SOURCES capped.c)\n");
    cr_assert_eq(run_shell("cd '%s' && cp '%s/share/wattsim/examples/capped.c' . &&"
                           " cmake -S . -B b -DCMAKE_PREFIX_PATH='%s' >cmake.log 2>&1 &&"
                           " cmake --build b >>cmake.log 2>&1 && test -f b/capped.so",
                           tmp, prefix, prefix), 0, "see %s/cmake.log", tmp);
    char *log = capture("grep -- '-- wattsim' '%s/cmake.log'", tmp);
    cr_expect_str_eq(log, "-- wattsim " WATTSIM_VERSION ", policy ABI " WATTSIM_POLICY_ABI
                     ", random streams " WS_STR(WATTSIM_RANDOM_STREAMS) "\n");
    free(log);
    char *run = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' list policies --plugin"
                        " '%s/b/capped.so'", prefix, tmp);
    cr_expect(strstr(run, "policy ABI " WATTSIM_POLICY_ABI ",") && strstr(run, "  capped     "), "%s", run);
    free(run);
}

/* An ABI-1 source (the frozen version-1 kit, tests/plugins/v1) against
 * the installed version-2 header, as GCC 12 compiles by default: it does
 * not compile, and the error shows the line that names the opt-in and the
 * migration section; C++ too. With `#define WS_ABI_REQUEST 1` before the
 * include it builds unchanged, warning-free, as a version-1 plugin that
 * passes `policy check` and gives the numbers of the copy built against
 * the frozen header. */
Test(install, abi1_source_needs_the_opt_in)
{
    static const char *srcs[] = {"capped_v1", "multi", "good_ext"};
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        char *out = capture("cd '%s' && cc -std=c17 -fPIC -shared -I'%s/include' -o x.so"
                            " '" WS_SOURCE_DIR "/tests/plugins/v1/%s.c' 2>&1; echo status $?",
                            tmp, prefix, srcs[i]);
        cr_expect(strstr(out, "error: \u2018ws_plugin_entry\u2019 redeclared as different kind of"
                         " symbol") || strstr(out, "error: 'ws_plugin_entry' redeclared"),
                  "%s: %s", srcs[i], out);
        cr_expect(strstr(out, "build it as ABI 1 with `#define WS_ABI_REQUEST 1` before"
                         " `#include <wattsim/policy.h>`, or port it to ABI 2:"
                         " docs/writing-a-policy.md, \"Migrating from ABI 1\"")
                  && strstr(out, "status 1\n"), "%s: %s", srcs[i], out);
        free(out);
    }
    /* The same in C++ (where a function of another signature would
     * otherwise be an overload with C++ linkage, and no entry point). */
    write_file("v1.cc", "#include <wattsim/policy.h>\n"
               "static const ws_plugin plugin = {1, \"v1cc\", nullptr, nullptr};\n"
               "extern \"C\" const ws_plugin *ws_plugin_entry(void) { return &plugin; }\n");
    char *out = capture("cd '%s' && c++ -fsyntax-only -I'%s/include' v1.cc 2>&1;"
                        " echo status $?", tmp, prefix);
    cr_expect(strstr(out, "redeclared as different kind of") && strstr(out, "#define"
                     " WS_ABI_REQUEST 1") && strstr(out, "status 1\n"), "%s", out);
    free(out);
    write_file("v1b.cc", "#include <wattsim/policy.h>\n"
               "static const ws_plugin plugin = {1, \"v1cc\", nullptr, nullptr};\n"
               "const ws_plugin *ws_plugin_entry(void) { return &plugin; }\n");
    out = capture("cd '%s' && c++ -fsyntax-only -I'%s/include' v1b.cc 2>&1; echo status $?",
                  tmp, prefix);
    cr_expect(strstr(out, "Migrating from ABI 1") && strstr(out, "status 1\n"), "%s", out);
    free(out);

    /* The opt-in: the unchanged source after one line. */
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        cr_assert_eq(run_shell("cd '%s' && { echo '#define WS_ABI_REQUEST 1'; cat '"
                               WS_SOURCE_DIR "/tests/plugins/v1/%s.c'; } >%s.c &&"
                               " cc -std=c17 -Wall -Wextra -Werror -Wno-unused-parameter -fPIC"
                               " -shared -I'%s/include' -o %s.so %s.c", tmp, srcs[i], srcs[i],
                               prefix, srcs[i], srcs[i]), 0, "%s with the opt-in", srcs[i]);
        char *list = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' list policies --plugin"
                             " '%s/%s.so'", prefix, tmp, srcs[i]);
        cr_expect(strstr(list, "policy ABI 1.0, sha256 "), "%s: %s", srcs[i], list);
        free(list);
        cr_expect_eq(run_shell(CLEAN_ENV "'%s/bin/wattsim' policy check --jobs 1000 '%s/%s.so'"
                               " >'%s/check-%s.log' 2>&1", prefix, tmp, srcs[i], tmp, srcs[i]),
                     0, "policy check %s (%s/check-%s.log)", srcs[i], tmp, srcs[i]);
    }
    /* The same runs as the copy built against the frozen header; only the
     * policy's file and hash differ, before the totals. */
    char *mine = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' simulate --workload imagenet"
                         " --gpu v100 --plo-param max_watts=175 --format json --plo"
                         " '%s/capped_v1.so'", prefix, tmp);
    char *ours = capture("cd / && " CLEAN_ENV "'%s/bin/wattsim' simulate --workload imagenet"
                         " --gpu v100 --plo-param max_watts=175 --format json --plo"
                         " '%s/capped_v1.so'", prefix, WS_TEST_PLUGIN_DIR);
    const char *a = strstr(mine, "\"energy_j\""), *b = strstr(ours, "\"energy_j\"");
    cr_assert(a && b && strstr(a, "\"history\": ["), "%.300s", mine);
    cr_expect_str_eq(a, b);
    free(mine);
    free(ours);
}

/* `policy new` skeletons (bso and plo) build against the installed kit with
 * CMake and with pkg-config, pass `policy check` and simulate unchanged. */
Test(install, policy_new_skeletons)
{
    static const char *kinds[] = {"bso", "plo"};
    for (int k = 0; k < 2; k++) {
        const char *kind = kinds[k];
        cr_assert_eq(run_shell("cd '%s' && " CLEAN_ENV "'%s/bin/wattsim' policy new my_%s"
                               " --kind %s >new.log 2>&1", tmp, prefix, kind, kind), 0,
                     "policy new --kind %s failed (%s/new.log)", kind, tmp);
        cr_assert_eq(run_shell("cd '%s/my_%s' && cmake -S . -B build -DCMAKE_PREFIX_PATH='%s'"
                               " >cmake.log 2>&1 && cmake --build build >>cmake.log 2>&1",
                               tmp, kind, prefix), 0, "CMake build of my_%s failed", kind);
        cr_assert_eq(run_shell("cd '%s/my_%s' && PKG_CONFIG_PATH='%s/lib/pkgconfig' cc"
                               " -std=c17 -Wall -Wextra -Werror -fPIC"
                               " -shared $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config"
                               " --cflags wattsim) -o pc.so my_%s.c", tmp, kind, prefix,
                               prefix, kind), 0, "pkg-config build of my_%s failed", kind);
        cr_expect_eq(run_shell(CLEAN_ENV "'%s/bin/wattsim' policy check"
                               " '%s/my_%s/build/my_%s.so' >'%s/check-%s.log'", prefix, tmp,
                               kind, kind, tmp, kind), 0, "policy check my_%s (%s/check-%s.log)",
                     kind, tmp, kind);
        cr_expect_eq(run_shell(CLEAN_ENV "'%s/bin/wattsim' simulate --workload imagenet"
                               " --gpu v100 --%s '%s/my_%s/pc.so' >/dev/null", prefix, kind,
                               tmp, kind), 0, "simulate with my_%s", kind);
    }
    /* The build command `policy new` prints works as printed, with nothing
     * in the environment pointing at a kit: from an install (it names the
     * prefix) and from the build tree (it names the build's package
     * configuration; without it: "Could not find a package configuration
     * file provided by "wattsim""). */
    const char *const exes[2][2] = {{prefix, "bin"}, {WS_BUILD_DIR, "sim"}};
    for (int e = 0; e < 2; e++) {
        char *said = capture("cd '%s' && " CLEAN_ENV "'%s/%s/wattsim' policy new from_%s 2>&1",
                             tmp, exes[e][0], exes[e][1], exes[e][1]);
        const char *cmd = strstr(said, "\n  cmake -S ");
        cr_assert_not_null(cmd, "%s", said);
        cmd += 3;
        cr_expect(strstr(cmd, e ? " -Dwattsim_DIR=" : " -DCMAKE_PREFIX_PATH="), "%s", cmd);
        char script[700];
        snprintf(script, sizeof script, "%s/from_%s.sh", tmp, exes[e][1]);
        FILE *f = fopen(script, "w");
        cr_assert_not_null(f);
        fputs(cmd, f);
        cr_assert_eq(fclose(f), 0);
        cr_expect_eq(run_shell("cd '%s' && env -u CMAKE_PREFIX_PATH -u PKG_CONFIG_PATH"
                               " -u wattsim_DIR sh from_%s.sh >from_%s.log 2>&1", tmp,
                               exes[e][1], exes[e][1]), 0, "%s failed (%s/from_%s.log)", cmd,
                     tmp, exes[e][1]);
        free(said);
    }
    /* Files that exist are not replaced without --force. */
    char *out = capture("cd '%s' && " CLEAN_ENV "'%s/bin/wattsim' policy new my_bso 2>&1;"
                        " echo status $?", tmp, prefix);
    cr_expect(strstr(out, "my_bso/my_bso.c already exists (use --force to replace it)")
              && strstr(out, "status 2"), "%s", out);
    free(out);
}

/* The guide's example, built from the install with pkg-config, swept
 * against zeus:jit. */
Test(install, egreedy_sweep_against_zeus)
{
    cr_assert_eq(run_shell("cd '%s' && PKG_CONFIG_PATH='%s/lib/pkgconfig' cc -std=c17 -O2"
                           " -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -shared"
                           " $(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags wattsim)"
                           " -o egreedy.so '%s/share/wattsim/examples/egreedy.c'", tmp, prefix,
                           prefix, prefix), 0);
    write_file("cmp.yaml", "gpu: v100\nworkload: squad\nseed: 1..4\nrecurrences: 40\n");
    char *out = capture("cd '%s' && " CLEAN_ENV "'%s/bin/wattsim' sweep cmp.yaml --no-plot"
                        " --out sw --policies ./egreedy.so:jit,zeus:jit 2>&1 &&"
                        " cat sw/sweep.csv", tmp, prefix);
    cr_expect(strstr(out, "\n./egreedy.so,jit,") && strstr(out, "\nzeus,jit,"), "%s", out);
    free(out);
    /* The same pairs from a config (docs/writing-a-policy.md): a config
     * runs no code, so ./egreedy.so is refused until its folder is allowed;
     * then the sweep is the same, byte for byte. */
    write_file("cmp2.yaml", "gpu: v100\nworkload: squad\nseed: 1..4\nrecurrences: 40\n"
               "policies:\n  - {bso: ./egreedy.so, plo: jit}\n  - {bso: zeus, plo: jit}\n");
    out = capture("cd '%s' && " CLEAN_ENV "'%s/bin/wattsim' sweep cmp2.yaml --no-plot"
                  " --out sw2 2>&1; echo status $?", tmp, prefix);
    cr_expect(strstr(out, "cmp2.yaml:6:11: bso './egreedy.so' is a plugin file") &&
              strstr(out, "status 2"), "%s", out);
    free(out);
    out = capture("cd '%s' && " CLEAN_ENV "'%s/bin/wattsim' sweep cmp2.yaml --no-plot"
                  " --out sw2 --allow-plugins . >/dev/null 2>&1 && cmp sw/sweep.csv sw2/sweep.csv"
                  " && echo identical", tmp, prefix);
    cr_expect_str_eq(out, "identical\n");
    free(out);
}
