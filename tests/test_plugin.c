/*
 * Plugin loading (wattsim/plugin.h), parameter resolution and the host's
 * checks on policy answers, with deliberately broken plugins (the sources
 * in tests/plugins, built into WS_TEST_PLUGIN_DIR) and the built-in
 * policies of WS_POLICY_BUILD_DIR. Also ws_py_floordiv against CPython.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/engine.h"
#include "wattsim/plugin.h"
#include "wattsim/trace.h"

#include "tmpdir.h"

#define PLUGIN(name) WS_TEST_PLUGIN_DIR "/" name ".so"
#define BUILTIN(name) WS_POLICY_BUILD_DIR "/" name ".so"

/* ------------------------------------------------------------ fixture */

static void setup(void)
{
    tmpdir_make("/tmp/wsplugin.XXXXXX");
    /* Name lookups load the built-in folder, the one beside this build's
     * executables (build/policies); WATTSIM_POLICY_DIR would add to it. */
    unsetenv("WATTSIM_POLICY_DIR");
}

static void teardown(void) { tmpdir_remove(); }

TestSuite(plugin, .init = setup, .fini = teardown);

/* Copy a file byte for byte (a second path, a second inode). */
static void copy_file(const char *from, const char *name)
{
    FILE *in = fopen(from, "rb"), *out = fopen(tp(name), "wb");
    cr_assert(in && out, "cannot copy %s", from);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        cr_assert_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
}

static void link_file(const char *target, const char *name)
{
    cr_assert_eq(symlink(target, tp(name)), 0, "symlink %s", target);
}

static char *real(const char *p)
{
    char *r = realpath(p, NULL);
    cr_assert_not_null(r, "realpath %s", p);
    return r;
}

/* Expect ws_registry_load_file(path) to fail with exactly `want`, and the
 * registry to stay empty. */
static void load_fails(const char *path, const char *want)
{
    ws_registry *r = ws_registry_new();
    cr_assert_not_null(r);
    ws_error err = {""};
    int rc = ws_registry_load_file(r, path, &err);
    size_t nb = ws_registry_n_bso(r), np = ws_registry_n_plo(r);
    ws_registry_free(r);
    cr_assert_eq(rc, -1, "loading %s should fail", path);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(nb, 0);
    cr_assert_eq(np, 0);
}

/* ------------------------------------------------------------ loading */

Test(plugin, load_bad_abi)
{
    load_fails(PLUGIN("bad_abi"),
               PLUGIN("bad_abi") ": plugin 'bad_abi' was built for policy ABI"
               " version 999, but this wattsim speaks version 2.3 (and 1.0); rebuild it"
               " against this wattsim's policy.h");
}

/* The entry point and the declared versions must agree (issue 22): an
 * ABI-1 source built against the 2.1 header exports version 1's entry
 * with version 2.1, and would be called through version 2's signatures. */
Test(plugin, load_v1_entry_declaring_v2)
{
    load_fails(PLUGIN("v2_version"),
               PLUGIN("v2_version") ": plugin 'v2_version' declares policy ABI 2.1 but the"
               " plugin exports version 1's entry point ws_plugin_entry (not"
               " ws_plugin_entry_v2): built from an ABI-1 source against a version-2 header,"
               " its calls would get the wrong arguments. Rebuild it with `#define"
               " WS_ABI_REQUEST 1` before `#include <wattsim/policy.h>`, or port it"
               " (docs/writing-a-policy.md, \"Migrating from ABI 1\")");
    load_fails(PLUGIN("v2_descriptor"),
               PLUGIN("v2_descriptor") ": bso 'v2_descriptor' declares policy ABI 2.0 but the"
               " plugin exports version 1's entry point ws_plugin_entry (not"
               " ws_plugin_entry_v2): built from an ABI-1 source against a version-2 header,"
               " its calls would get the wrong arguments. Rebuild it with `#define"
               " WS_ABI_REQUEST 1` before `#include <wattsim/policy.h>`, or port it"
               " (docs/writing-a-policy.md, \"Migrating from ABI 1\")");
}

Test(plugin, load_v2_entry_declaring_v1)
{
    load_fails(PLUGIN("v1_version"),
               PLUGIN("v1_version") ": plugin 'v1_version' declares policy ABI 1.0 but the"
               " plugin exports version 2's entry point ws_plugin_entry_v2, whose calls have"
               " version 2's signatures: declare abi_version = WS_ABI_VERSION (from"
               " <wattsim/policy.h> 2.x), or build a version-1 plugin with `#define"
               " WS_ABI_REQUEST 1` and ws_plugin_entry(void)");
}

Test(plugin, load_no_entry)
{
    load_fails(PLUGIN("no_entry"),
               PLUGIN("no_entry") ": not a wattsim policy plugin: no symbol"
               " ws_plugin_entry_v2 (define `const ws_plugin"
               " *ws_plugin_entry_v2(int host_version)`)");
}

Test(plugin, load_null_entry)
{
    load_fails(PLUGIN("null_entry"), PLUGIN("null_entry") ": ws_plugin_entry() returned NULL");
}

Test(plugin, load_no_predict)
{
    load_fails(PLUGIN("no_predict"),
               PLUGIN("no_predict") ": bso 'no_predict' has no predict function (required)");
}

Test(plugin, load_missing_file)
{
    load_fails(PLUGIN("does_not_exist"),
               PLUGIN("does_not_exist") ": cannot open policy plugin: No such file or directory");
}

Test(plugin, load_not_a_shared_object)
{
    write_file("text.so", "this is not an ELF file\n");
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_eq(ws_registry_load_file(r, tp("text.so"), &err), -1);
    ws_registry_free(r);
    char want[600];
    snprintf(want, sizeof want, "%s: cannot load policy plugin: ", tp("text.so"));
    cr_assert_eq(strncmp(err.msg, want, strlen(want)), 0, "got: %s", err.msg);
}

Test(plugin, load_good_plugin)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_eq(ws_registry_load_file(r, PLUGIN("good_ext"), &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_n_bso(r), 1);
    cr_assert_eq(ws_registry_n_plo(r), 0);
    const ws_bso_type *t = ws_registry_bso_at(r, 0);
    cr_assert_str_eq(t->name, "ext_smallest");
    cr_assert_eq(t->abi_version, 1, "good_ext is a version-1 plugin");
    cr_assert_eq(ws_params_count(t->params), 1);
    char *want = real(PLUGIN("good_ext"));
    cr_assert_str_eq(ws_registry_bso_file(r, 0), want);
    free(want);
    /* Loading the same file again (even through a link) adds nothing. */
    link_file(PLUGIN("good_ext"), "link.so");
    cr_assert_eq(ws_registry_load_file(r, PLUGIN("good_ext"), &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_load_file(r, tp("link.so"), &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_n_bso(r), 1);
    ws_registry_free(r);
}

/* Two builds of one policy, both named by path, may be loaded side by
 * side: FILE.so:NAME picks one, the bare name is ambiguous. */
Test(plugin, two_builds_of_a_policy_by_path)
{
    copy_file(PLUGIN("good_ext"), "copy.so");
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    char a[700], b[700];
    snprintf(a, sizeof a, "%s:ext_smallest", PLUGIN("good_ext"));
    snprintf(b, sizeof b, "%s:ext_smallest", tp("copy.so"));
    const ws_bso_type *ta = ws_registry_bso(r, a, &err);
    cr_assert(ta, "%s", err.msg);
    const ws_bso_type *tb = ws_registry_bso(r, b, &err);
    cr_assert(tb, "%s", err.msg);
    cr_expect_neq(ta, tb);
    cr_expect_str_eq(ta->name, "ext_smallest");
    cr_expect_str_eq(tb->name, "ext_smallest");
    cr_expect_eq(ws_registry_bso(r, a, &err), ta, "the same file again: the same policy");
    cr_assert_null(ws_registry_bso(r, "ext_smallest", &err));
    char *orig = real(PLUGIN("good_ext")), want[2000];
    snprintf(want, sizeof want, "bso policy 'ext_smallest' is defined by both %s and %s;"
             " name one as FILE.so:ext_smallest", orig, tp("copy.so"));
    free(orig);
    cr_expect_str_eq(err.msg, want);
    /* A name the file does not define. */
    snprintf(a, sizeof a, "%s:smallest", PLUGIN("good_ext"));
    cr_assert_null(ws_registry_bso(r, a, &err));
    cr_expect_str_eq(err.msg, PLUGIN("good_ext") ": defines no bso policy 'smallest' (its"
                     " policies: ext_smallest)");
    ws_registry_free(r);
}

/* A plugin named by path may not reuse a built-in's name. */
Test(plugin, plugin_clashing_with_a_builtin)
{
    copy_file(BUILTIN("zeus"), "myzeus.so");
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_null(ws_registry_bso(r, tp("myzeus.so"), &err));
    char *builtin = real(BUILTIN("zeus")), want[1200];
    snprintf(want, sizeof want, "%s: bso 'zeus' is already defined by %s", tp("myzeus.so"),
             builtin);
    free(builtin);
    cr_expect_str_eq(err.msg, want);
    ws_registry_free(r);
}

static int has_bso(const ws_registry *r, const char *name, const char *file)
{
    for (size_t i = 0; i < ws_registry_n_bso(r); i++)
        if (!strcmp(ws_registry_bso_at(r, i)->name, name)) {
            char *want = real(file);
            int same = !strcmp(ws_registry_bso_file(r, i), want);
            free(want);
            return same;
        }
    return 0;
}

static int has_plo(const ws_registry *r, const char *name, const char *file)
{
    for (size_t i = 0; i < ws_registry_n_plo(r); i++)
        if (!strcmp(ws_registry_plo_at(r, i)->name, name)) {
            char *want = real(file);
            int same = !strcmp(ws_registry_plo_file(r, i), want);
            free(want);
            return same;
        }
    return 0;
}

Test(plugin, load_dir_builtin_policies)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_eq(ws_registry_load_dir(r, WS_POLICY_BUILD_DIR, &err), 0, "%s", err.msg);
    cr_assert(has_bso(r, "zeus", BUILTIN("zeus")));
    cr_assert(has_bso(r, "gts", BUILTIN("gts")));
    cr_assert(has_bso(r, "default", BUILTIN("default")));
    cr_assert(has_bso(r, "grid", BUILTIN("grid")));
    cr_assert(has_bso(r, "oracle", BUILTIN("oracle")));
    cr_assert(has_plo(r, "jit", BUILTIN("jit")));
    cr_assert(has_plo(r, "default", BUILTIN("default")));
    cr_assert(has_plo(r, "grid", BUILTIN("grid")));
    cr_assert(has_plo(r, "oracle", BUILTIN("oracle")));
    cr_assert(!has_bso(r, "jit", BUILTIN("jit")));
    cr_assert(!has_plo(r, "zeus", BUILTIN("zeus")));
    /* Files load in name order, whatever the directory order. */
    for (size_t i = 1; i < ws_registry_n_bso(r); i++)
        cr_assert_leq(strcmp(ws_registry_bso_file(r, i - 1), ws_registry_bso_file(r, i)), 0);
    for (size_t i = 1; i < ws_registry_n_plo(r); i++)
        cr_assert_leq(strcmp(ws_registry_plo_file(r, i - 1), ws_registry_plo_file(r, i)), 0);
    /* Loading the folder again adds nothing. */
    size_t nb = ws_registry_n_bso(r), np = ws_registry_n_plo(r);
    cr_assert_geq(nb, 5);
    cr_assert_geq(np, 4);
    cr_assert_eq(ws_registry_load_dir(r, WS_POLICY_BUILD_DIR, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_n_bso(r), nb);
    cr_assert_eq(ws_registry_n_plo(r), np);
    ws_registry_free(r);
}

Test(plugin, load_dir_only_takes_so_files_in_name_order)
{
    link_file(PLUGIN("good_ext"), "b.so");
    link_file(BUILTIN("default"), "a.so");
    write_file("notes.txt", "not a plugin");
    write_file("so", "not a plugin either");
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_eq(ws_registry_load_dir(r, tmp, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_n_bso(r), 2);
    cr_assert_str_eq(ws_registry_bso_at(r, 0)->name, "default");
    cr_assert_str_eq(ws_registry_bso_at(r, 1)->name, "ext_smallest");
    cr_assert_eq(ws_registry_n_plo(r), 1);
    cr_assert_str_eq(ws_registry_plo_at(r, 0)->name, "default");
    ws_registry_free(r);
}

Test(plugin, load_dir_with_a_broken_plugin)
{
    link_file(PLUGIN("good_ext"), "a.so");
    link_file(PLUGIN("no_predict"), "b.so");
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_eq(ws_registry_load_dir(r, tmp, &err), -1);
    ws_registry_free(r);
    char want[600];
    snprintf(want, sizeof want, "%s: bso 'no_predict' has no predict function (required)",
             tp("b.so"));
    cr_assert_str_eq(err.msg, want);
}

Test(plugin, load_dir_missing)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    char dir[600], want[800];
    snprintf(dir, sizeof dir, "%s/missing", tmp);
    cr_assert_eq(ws_registry_load_dir(r, dir, &err), -1);
    ws_registry_free(r);
    snprintf(want, sizeof want, "%s: cannot open policy folder: No such file or directory", dir);
    cr_assert_str_eq(err.msg, want);
}

/* ------------------------------------------------------------ lookup */

Test(plugin, lookup_by_name_loads_builtin)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    const ws_bso_type *z = ws_registry_bso(r, "zeus", &err);
    cr_assert_not_null(z, "%s", err.msg);
    cr_assert_str_eq(z->name, "zeus");
    const ws_plo_type *j = ws_registry_plo(r, "jit", &err);
    cr_assert_not_null(j, "%s", err.msg);
    cr_assert_str_eq(j->name, "jit");
    cr_assert_eq(ws_registry_bso(r, "zeus", &err), z);
    ws_registry_free(r);
}

Test(plugin, lookup_by_path)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    const ws_bso_type *t = ws_registry_bso(r, PLUGIN("good_ext"), &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_str_eq(t->name, "ext_smallest");
    cr_assert_eq(ws_registry_bso(r, PLUGIN("good_ext"), &err), t);
    cr_assert_eq(ws_registry_bso(r, "ext_smallest", &err), t);
    cr_assert_eq(ws_registry_bso(r, PLUGIN("good_ext") ":ext_smallest", &err), t);
    /* The file defines no PLO. */
    cr_assert_null(ws_registry_plo(r, PLUGIN("good_ext"), &err));
    cr_assert_str_eq(err.msg, PLUGIN("good_ext") ": defines no plo policy");
    /* A name ending in .so is a path too. */
    cr_assert_null(ws_registry_bso(r, "nowhere.so", &err));
    cr_assert_str_eq(err.msg, "nowhere.so: cannot open policy plugin: No such file or directory");
    /* A broken plugin named by path reports the load error. */
    cr_assert_null(ws_registry_bso(r, PLUGIN("bad_abi"), &err));
    cr_assert_str_eq(err.msg, PLUGIN("bad_abi") ": plugin 'bad_abi' was built for"
                     " policy ABI version 999, but this wattsim speaks version 2.3"
                     " (and 1.0); rebuild it against this wattsim's policy.h");
    ws_registry_free(r);
}

Test(plugin, lookup_by_path_of_a_builtin_plugin_with_both_kinds)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    const ws_bso_type *b = ws_registry_bso(r, BUILTIN("grid"), &err);
    cr_assert_not_null(b, "%s", err.msg);
    cr_assert_str_eq(b->name, "grid");
    const ws_plo_type *p = ws_registry_plo(r, BUILTIN("grid"), &err);
    cr_assert_not_null(p, "%s", err.msg);
    cr_assert_str_eq(p->name, "grid");
    /* The same descriptors as by name: the file is the built-in one. */
    cr_assert_eq(ws_registry_bso(r, "grid", &err), b);
    cr_assert_eq(ws_registry_plo(r, "grid", &err), p);
    ws_registry_free(r);
}

Test(plugin, lookup_by_path_with_several_policies)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    /* Two PLOs, neither named after the file: ambiguous. */
    const ws_plo_type *p = ws_registry_plo(r, PLUGIN("multi"), &err);
    ws_error perr = err;
    /* Two BSOs, one named after the file's stem: that one (plugin.h). */
    const ws_bso_type *b = ws_registry_bso(r, PLUGIN("multi"), &err);
    char name[64] = "";
    if (b) snprintf(name, sizeof name, "%s", b->name);
    ws_registry_free(r);
    cr_assert_null(p);
    cr_assert_str_eq(perr.msg, PLUGIN("multi") ": defines 2 plo policies and none is"
                     " named 'multi'; name the file after the one you want, or write "
                     PLUGIN("multi") ":NAME");
    cr_assert_not_null(b, "%s", err.msg);
    cr_assert_str_eq(name, "multi");
}

/* WATTSIM_POLICY_DIR adds its folders to the built-in one. */
Test(plugin, policy_dir_adds_to_the_builtin_folder)
{
    link_file(BUILTIN("default"), "default.so");   /* the built-in again: once */
    link_file(PLUGIN("good_ext"), "good_ext.so");
    setenv("WATTSIM_POLICY_DIR", tmp, 1);
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_not_null(ws_registry_bso(r, "ext_smallest", &err), "%s", err.msg);
    cr_assert_not_null(ws_registry_bso(r, "zeus", &err), "%s", err.msg);
    cr_assert_null(ws_registry_bso(r, "zeuss", &err));
    cr_assert_str_eq(err.msg, "unknown bso policy 'zeuss' (known: default, grid, gts,"
                     " oracle, zeus, ext_smallest; or give a path to a .so)");
    ws_registry_free(r);
}

/* A broken plugin or one clashing with a built-in in WATTSIM_POLICY_DIR
 * does not break the lookups of other policies; the clashing name is an
 * error naming both files, and a miss mentions the broken file. */
Test(plugin, policy_dir_with_broken_and_clashing_plugins)
{
    link_file(PLUGIN("good_ext"), "a.so");
    link_file(PLUGIN("no_predict"), "b.so");
    copy_file(BUILTIN("jit"), "c.so");
    setenv("WATTSIM_POLICY_DIR", tmp, 1);
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_not_null(ws_registry_bso(r, "ext_smallest", &err), "%s", err.msg);
    cr_assert_not_null(ws_registry_bso(r, "zeus", &err), "%s", err.msg);
    cr_assert_null(ws_registry_plo(r, "jit", &err));
    char *builtin = real(BUILTIN("jit")), want[1500];
    snprintf(want, sizeof want, "%s: plo 'jit' is already defined by %s", tp("c.so"), builtin);
    free(builtin);
    cr_expect_str_eq(err.msg, want);
    cr_assert_null(ws_registry_bso(r, "no_predict", &err));
    snprintf(want, sizeof want, "unknown bso policy 'no_predict' (known: default, grid,"
             " gts, oracle, zeus, ext_smallest; or give a path to a .so); 2 plugins in the"
             " policy folders did not load, first: %s: bso 'no_predict' has no predict"
             " function (required)", tp("b.so"));
    cr_expect_str_eq(err.msg, want);
    ws_registry_free(r);
}

Test(plugin, unknown_name_with_the_real_builtin_folder)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    cr_assert_null(ws_registry_bso(r, "nope", &err));
    /* The list is every BSO of the registry, in registry order. */
    char want[1024] = "unknown bso policy 'nope' (known: ";
    for (size_t i = 0; i < ws_registry_n_bso(r); i++) {
        strcat(want, ws_registry_bso_at(r, i)->name);
        if (i + 1 < ws_registry_n_bso(r)) strcat(want, ", ");
    }
    strcat(want, "; or give a path to a .so)");
    cr_assert_str_eq(err.msg, want);
    cr_assert(strstr(err.msg, "zeus") && strstr(err.msg, "gts") && strstr(err.msg, "oracle"));
    ws_registry_free(r);
}

/* ------------------------------------------------------------ parameters */

static const ws_param_spec SPEC[] = {
    {"n", WS_PARAM_INT, {.i = 5}, 0, 100, "an int"},
    {"x", WS_PARAM_DOUBLE, {.d = 0.25}, 0, 1, "a double"},
    {"flag", WS_PARAM_BOOL, {.b = 1}, 0, 0, "a bool"},
    {"label", WS_PARAM_STRING, {.s = "abc"}, 0, 0, "a string"},
    {"empty", WS_PARAM_STRING, {.s = NULL}, 0, 0, "a string without default"},
    {0},
};

static ws_param_raw raw(const char *key, const char *value, const char *where)
{
    ws_param_raw p = {(char *)key, (char *)value, (char *)where};
    return p;
}

Test(plugin, params_count)
{
    cr_assert_eq(ws_params_count(SPEC), 5);
    cr_assert_eq(ws_params_count(NULL), 0);
    static const ws_param_spec none[] = {{0}};
    cr_assert_eq(ws_params_count(none), 0);
}

Test(plugin, params_defaults)
{
    ws_value *v = NULL;
    ws_error err = {""};
    cr_assert_eq(ws_params_resolve(SPEC, NULL, 0, "bso t", &v, &err), 0, "%s", err.msg);
    cr_assert_not_null(v);
    cr_assert_eq(v[0].i, 5);
    cr_assert_eq(v[1].d, 0.25);
    cr_assert_eq(v[2].b, 1);
    cr_assert_str_eq(v[3].s, "abc");
    cr_assert_neq(v[3].s, SPEC[3].def.s);      /* a copy owned by the host */
    cr_assert_str_eq(v[4].s, "");
    ws_params_free(SPEC, v);
}

Test(plugin, params_given)
{
    ws_param_raw r[] = {
        raw("label", "hello, world", "run.yaml:7:12"),
        raw("n", "100", "run.yaml:5:8"),
        raw("x", "1e-1", "--set"),
        raw("flag", "No", "--set"),
    };
    ws_value *v = NULL;
    ws_error err = {""};
    cr_assert_eq(ws_params_resolve(SPEC, r, 4, "bso t", &v, &err), 0, "%s", err.msg);
    cr_assert_eq(v[0].i, 100);
    cr_assert_eq(v[1].d, 0.1);
    cr_assert_eq(v[2].b, 0);
    cr_assert_str_eq(v[3].s, "hello, world");
    cr_assert_str_eq(v[4].s, "");
    ws_params_free(SPEC, v);
}

Test(plugin, params_bool_spellings)
{
    const char *yes[] = {"true", "TRUE", "True", "yes", "Yes", "1"};
    const char *no[] = {"false", "FALSE", "no", "NO", "0"};
    for (size_t k = 0; k < 2; k++) {
        const char **list = k ? no : yes;
        size_t n = k ? sizeof no / sizeof *no : sizeof yes / sizeof *yes;
        for (size_t i = 0; i < n; i++) {
            ws_param_raw r = raw("flag", list[i], "--set");
            ws_value *v = NULL;
            ws_error err = {""};
            cr_assert_eq(ws_params_resolve(SPEC, &r, 1, "bso t", &v, &err), 0, "%s", err.msg);
            cr_assert_eq(v[2].b, k ? 0 : 1, "flag=%s", list[i]);
            ws_params_free(SPEC, v);
        }
    }
}

Test(plugin, params_range_edges)
{
    const char *ints[] = {"0", "100", "+7", "-0"};
    const long ivals[] = {0, 100, 7, 0};
    for (size_t i = 0; i < 4; i++) {
        ws_param_raw r = raw("n", ints[i], "--set");
        ws_value *v = NULL;
        ws_error err = {""};
        cr_assert_eq(ws_params_resolve(SPEC, &r, 1, "bso t", &v, &err), 0, "%s", err.msg);
        cr_assert_eq(v[0].i, ivals[i]);
        ws_params_free(SPEC, v);
    }
    const char *dbls[] = {"0", "1", "0.5", "1e0"};
    const double dvals[] = {0, 1, 0.5, 1};
    for (size_t i = 0; i < 4; i++) {
        ws_param_raw r = raw("x", dbls[i], "--set");
        ws_value *v = NULL;
        ws_error err = {""};
        cr_assert_eq(ws_params_resolve(SPEC, &r, 1, "bso t", &v, &err), 0, "%s", err.msg);
        cr_assert_eq(v[1].d, dvals[i]);
        ws_params_free(SPEC, v);
    }
}

static void param_fails(const ws_param_spec *spec, const char *key,
                        const char *value, const char *who, const char *want)
{
    ws_param_raw r = raw(key, value, "run.yaml:3:9");
    ws_value *v = (ws_value *)&r;          /* must be reset to NULL */
    ws_error err = {""};
    cr_assert_eq(ws_params_resolve(spec, &r, 1, who, &v, &err), -1,
                 "%s=%s should fail", key, value);
    cr_assert_null(v);
    cr_assert_str_eq(err.msg, want);
}

Test(plugin, params_errors)
{
    param_fails(SPEC, "n", "1.5", "bso t",
                "run.yaml:3:9: bso t parameter 'n' must be an integer, got \"1.5\"");
    param_fails(SPEC, "n", "", "bso t",
                "run.yaml:3:9: bso t parameter 'n' must be an integer, got \"\"");
    param_fails(SPEC, "n", "99999999999999999999", "bso t",
                "run.yaml:3:9: bso t parameter 'n' must be an integer, got \"99999999999999999999\"");
    param_fails(SPEC, "n", "101", "bso t",
                "run.yaml:3:9: bso t parameter 'n' must be in [0, 100], got 101");
    param_fails(SPEC, "n", "-1", "bso t",
                "run.yaml:3:9: bso t parameter 'n' must be in [0, 100], got -1");
    param_fails(SPEC, "x", "abc", "plo q",
                "run.yaml:3:9: plo q parameter 'x' must be a number, got \"abc\"");
    param_fails(SPEC, "x", "nan", "plo q",
                "run.yaml:3:9: plo q parameter 'x' must be a number, got \"nan\"");
    param_fails(SPEC, "x", "1.5", "plo q",
                "run.yaml:3:9: plo q parameter 'x' must be in [0, 1], got 1.5");
    param_fails(SPEC, "x", "-0.001", "plo q",
                "run.yaml:3:9: plo q parameter 'x' must be in [0, 1], got -0.001");
    param_fails(SPEC, "flag", "maybe", "bso t",
                "run.yaml:3:9: bso t parameter 'flag' must be true or false, got \"maybe\"");
    param_fails(SPEC, "flag", "2", "bso t",
                "run.yaml:3:9: bso t parameter 'flag' must be true or false, got \"2\"");
}

Test(plugin, params_unknown)
{
    param_fails(SPEC, "m", "1", "bso t",
                "run.yaml:3:9: bso t has no parameter 'm' (its parameters: n, x,"
                " flag, label, empty)");
    param_fails(NULL, "window", "3", "bso default",
                "run.yaml:3:9: bso default has no parameter 'window' (it takes none)");
}

Test(plugin, params_none)
{
    ws_value *v = (ws_value *)&v;
    ws_error err = {""};
    cr_assert_eq(ws_params_resolve(NULL, NULL, 0, "bso default", &v, &err), 0, "%s", err.msg);
    cr_assert_null(v);
    ws_params_free(NULL, NULL);
}

Test(plugin, params_of_builtin_zeus)
{
    ws_registry *r = ws_registry_new();
    ws_error err = {""};
    const ws_bso_type *z = ws_registry_bso(r, "zeus", &err);
    cr_assert_not_null(z, "%s", err.msg);
    ws_value *v = NULL;
    cr_assert_eq(ws_params_resolve(z->params, NULL, 0, "bso zeus", &v, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_params_count(z->params), 2);
    cr_assert_str_eq(z->params[0].name, "rounds");
    cr_assert_eq(v[0].i, 2);
    cr_assert_str_eq(z->params[1].name, "window");
    cr_assert_eq(v[1].i, 0);
    ws_params_free(z->params, v);
    ws_param_raw p = raw("rounds", "101", "--set");
    cr_assert_eq(ws_params_resolve(z->params, &p, 1, "bso zeus", &v, &err), -1);
    cr_assert_str_eq(err.msg, "--set: bso zeus parameter 'rounds' must be in [0, 100], got 101");
    ws_registry_free(r);
}

/* ------------------------------------------------------------ simulation */

/*
 * One workload, B = {8, 16, 32}, limits {100, 150, 200} for 8 and 16 and
 * {125, 150, 200} for 32 (so 125 W is measured for 32 only). One run per
 * batch size: 4, 3 and 2 epochs. MaxPower 200 W, b0 16.
 */
typedef struct sim_fixture {
    ws_traces t;
    ws_job_table jt;
    ws_registry *r;
} sim_fixture;

static void sim_setup(sim_fixture *f, double eta, double beta)
{
    write_file("summary_train.csv",
               "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n"
               "toy,net,8,sgd,0.1,0,0.5,4\n"
               "toy,net,16,sgd,0.1,0,0.5,3\n"
               "toy,net,32,sgd,0.1,0,0.5,2\n");
    write_file("summary_power_v100.csv",
               "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
               "toy,net,8,sgd,100,12,90\n"
               "toy,net,8,sgd,150,11,130\n"
               "toy,net,8,sgd,200,10,180\n"
               "toy,net,16,sgd,100,8,95\n"
               "toy,net,16,sgd,150,7,140\n"
               "toy,net,16,sgd,200,6,190\n"
               "toy,net,32,sgd,125,5,120\n"
               "toy,net,32,sgd,150,4.5,145\n"
               "toy,net,32,sgd,200,4,195\n");
    ws_error err = {""};
    cr_assert_eq(ws_traces_load(&f->t, tmp, "v100", NULL, &err), 0, "%s", err.msg);
    ws_workload_spec s = {(char *)"toy", (char *)"toy", (char *)"net",
                          (char *)"sgd", 0.5, 10, 16, NULL, NULL, 0, NULL, 0, NULL, 0};
    cr_assert_eq(ws_job_build(&f->jt, &f->t, &s, eta, beta, &err), 0, "%s", err.msg);
    cr_assert_eq(f->jt.job.max_power, 200.0);
    f->r = ws_registry_new();
    cr_assert_not_null(f->r);
}

static void sim_teardown(sim_fixture *f)
{
    ws_registry_free(f->r);
    ws_job_free(&f->jt);
    ws_traces_free(&f->t);
}

/* Instances for a BSO and a PLO named as ws_registry_* accept them, with
 * `raw` parameters for the BSO. */
static ws_bso *make_bso(sim_fixture *f, const char *name, const ws_param_raw *raw_p,
                        size_t n_raw)
{
    ws_error err = {""};
    const ws_bso_type *t = ws_registry_bso(f->r, name, &err);
    cr_assert_not_null(t, "%s", err.msg);
    ws_value *v = NULL;
    char who[80];
    snprintf(who, sizeof who, "bso %s", t->name);
    cr_assert_eq(ws_params_resolve(t->params, raw_p, n_raw, who, &v, &err), 0, "%s", err.msg);
    ws_bso *b = ws_bso_new(t, v, 42, &err);
    ws_params_free(t->params, v);
    cr_assert_not_null(b, "%s", err.msg);
    return b;
}

static ws_plo *make_plo(sim_fixture *f, const char *name)
{
    ws_error err = {""};
    const ws_plo_type *t = ws_registry_plo(f->r, name, &err);
    cr_assert_not_null(t, "%s", err.msg);
    ws_plo *p = ws_plo_new(t, NULL, 42, &err);
    cr_assert_not_null(p, "%s", err.msg);
    return p;
}

typedef struct records {
    ws_run_record r[64];
    int n;
} records;

static int collect(void *ctx, const ws_run_record *r)
{
    records *rs = ctx;
    if (rs->n < 64) rs->r[rs->n] = *r;
    rs->n++;
    return 0;
}

/* Simulate `recs` recurrences; returns ws_simulate's result. */
static int run(sim_fixture *f, ws_bso *b, ws_plo *p, long recs, records *rs,
               ws_sim_totals *tot, ws_error *err)
{
    ws_sim_params sp = {.recurrences = recs, .seed = 7};
    return ws_simulate(&f->jt.job, b, p, &sp, rs ? collect : NULL, rs, tot, err);
}

static void expect_sim_error(const char *bso, const char *plo, const char *want)
{
    sim_fixture f;
    sim_setup(&f, 0.5, INFINITY);
    ws_bso *b = make_bso(&f, bso, NULL, 0);
    ws_plo *p = make_plo(&f, plo);
    ws_error err = {""};
    ws_sim_totals tot;
    int rc = run(&f, b, p, 3, NULL, &tot, &err);
    ws_bso_free(b);
    ws_plo_free(p);
    sim_teardown(&f);
    cr_assert_eq(rc, -1, "expected the error: %s", want);
    cr_assert_str_eq(err.msg, want);
}

Test(plugin, sim_external_policy_smallest)
{
    sim_fixture f;
    sim_setup(&f, 0.5, INFINITY);
    ws_bso *b = make_bso(&f, PLUGIN("good_ext"), NULL, 0);
    ws_plo *p = make_plo(&f, "default");
    records rs = {.n = 0};
    ws_sim_totals tot;
    ws_error err = {""};
    cr_assert_eq(run(&f, b, p, 3, &rs, &tot, &err), 0, "%s", err.msg);
    /* bs 8 at 200 W: 10 s and 180 W per epoch, 4 epochs: E = 7200 J,
     * T = 40 s, cost = 0.5 * 7200 + 0.5 * 200 * 40 = 7600. */
    cr_assert_eq(tot.runs, 3);
    cr_assert_eq(tot.recurrences, 3);
    cr_assert_eq(tot.skipped, 0);
    cr_assert_eq(tot.final_bs, 8);
    cr_assert_eq(tot.final_pl, 200);
    cr_assert_float_eq(tot.energy_j, 21600.0, 1e-9);
    cr_assert_float_eq(tot.time_s, 120.0, 1e-12);
    cr_assert_float_eq(tot.cost, 22800.0, 1e-9);
    cr_assert_eq(rs.n, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(rs.r[i].recurrence, i + 1);
        cr_assert_eq(rs.r[i].attempt, 1);
        cr_assert_eq(rs.r[i].bs, 8);
        cr_assert_eq(rs.r[i].pl, 200);
        cr_assert_eq(rs.r[i].epochs, 4);
        cr_assert_eq(rs.r[i].reached, 1);
        cr_assert_eq(rs.r[i].profiled, 0);
        cr_assert_float_eq(rs.r[i].energy_j, 7200.0, 1e-9);
        cr_assert_float_eq(rs.r[i].time_s, 40.0, 1e-12);
        cr_assert_float_eq(rs.r[i].cost, 7600.0, 1e-9);
    }
    ws_bso_free(b);
    ws_plo_free(p);
    sim_teardown(&f);
}

Test(plugin, sim_external_policy_offset_parameter)
{
    sim_fixture f;
    sim_setup(&f, 0.5, INFINITY);
    ws_param_raw one = raw("offset", "1", "--set");
    ws_bso *b = make_bso(&f, PLUGIN("good_ext"), &one, 1);
    ws_plo *p = make_plo(&f, "default");
    ws_sim_totals tot;
    ws_error err = {""};
    cr_assert_eq(run(&f, b, p, 3, NULL, &tot, &err), 0, "%s", err.msg);
    /* bs 16 at 200 W: 6 s, 190 W, 3 epochs: E = 3420, T = 18, cost 3510. */
    cr_assert_eq(tot.final_bs, 16);
    cr_assert_float_eq(tot.energy_j, 10260.0, 1e-9);
    cr_assert_float_eq(tot.time_s, 54.0, 1e-12);
    cr_assert_float_eq(tot.cost, 10530.0, 1e-9);
    ws_bso_free(b);

    /* An offset past the largest batch size means the largest. */
    ws_param_raw big = raw("offset", "100", "--set");
    b = make_bso(&f, PLUGIN("good_ext"), &big, 1);
    cr_assert_eq(run(&f, b, p, 2, NULL, &tot, &err), 0, "%s", err.msg);
    /* bs 32 at 200 W: 4 s, 195 W, 2 epochs: E = 1560, T = 8, cost 1580. */
    cr_assert_eq(tot.final_bs, 32);
    cr_assert_eq(tot.runs, 2);
    cr_assert_float_eq(tot.energy_j, 3120.0, 1e-9);
    cr_assert_float_eq(tot.time_s, 16.0, 1e-12);
    cr_assert_float_eq(tot.cost, 3160.0, 1e-9);
    ws_bso_free(b);

    /* Out of range is refused before the policy sees it. */
    ws_param_raw bad = raw("offset", "101", "--set");
    ws_value *v = NULL;
    const ws_bso_type *t = ws_registry_bso(f.r, "ext_smallest", &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_eq(ws_params_resolve(t->params, &bad, 1, "bso ext_smallest", &v, &err), -1);
    cr_assert_str_eq(err.msg, "--set: bso ext_smallest parameter 'offset' must be"
                     " in [0, 100], got 101");
    ws_plo_free(p);
    sim_teardown(&f);
}

Test(plugin, sim_bad_bs)
{
    expect_sim_error(PLUGIN("bad_bs"), "default",
                     "bso bad_bs: predict returned batch size 7, which is not one"
                     " of the job's 3 batch sizes (8..32)");
}

Test(plugin, sim_bad_pl)
{
    /* 125 W is measured for bs 32 only; default asks for b0 = 16. */
    expect_sim_error("default", PLUGIN("bad_pl"),
                     "plo bad_pl: predict(bs 16) returned power limit 125 W, which"
                     " was not measured for that batch size (100..200 W)");
}

Test(plugin, sim_never_pl)
{
    expect_sim_error("default", PLUGIN("never_pl"),
                     "plo never_pl: predict(bs 16) still has no power limit after"
                     " profiling all 3 of them");
}

Test(plugin, sim_fail_observe)
{
    expect_sim_error(PLUGIN("fail_observe"), "default",
                     "bso fail_observe: observe failed (returned -1)");
}

/* ------------------------------------------------------------ answer lookup */

/*
 * The host maps each answer to its index through memos (plugin.c): they
 * must never change an index nor let a wrong answer through, whatever was
 * answered before and whichever job the instance is asked about. A policy
 * here answers whatever `answer` holds.
 */
static int answer;
static int a_create(void *s, const ws_value *v, const ws_host *h) { return 0; }
static void a_destroy(void *s) {}
static int a_register(void *s, const ws_job *job, const ws_ctx *ctx) { return 0; }
static int a_predict_bs(void *s, const ws_job *job, const ws_ctx *ctx, int *bs)
{
    *bs = answer;
    return 0;
}
static int a_observe(void *s, const ws_job *job, const ws_ctx *ctx, int bs, double c, int r)
{
    return 0;
}
static int a_predict_pl(void *s, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)
{
    *pl = answer;
    return 0;
}
static const ws_bso_type answer_bso = {
    .abi_version = WS_ABI_VERSION, .name = "answer", .summary = "answers `answer`",
    .state_size = 0, .create = a_create, .destroy = a_destroy,
    .register_job = a_register, .predict = a_predict_bs, .observe = a_observe};
static const ws_plo_type answer_plo = {
    .abi_version = WS_ABI_VERSION, .name = "answer", .summary = "answers `answer`",
    .state_size = 0, .create = a_create, .destroy = a_destroy, .predict = a_predict_pl};

Test(plugin, bs_answers_map_to_their_index_whatever_came_before)
{
    sim_fixture f;
    sim_setup(&f, 0.5, INFINITY);
    const ws_job *job = &f.jt.job;       /* B = {8, 16, 32} */
    ws_error err = {""};
    ws_bso *b = ws_bso_new(&answer_bso, NULL, 1, &err);
    cr_assert_not_null(b, "%s", err.msg);
    ws_ctx ctx;
    ws_ctx_init(&ctx, 1);
    /* Every valid size, twice over in a mixed order: its own index. */
    const int seq[] = {16, 16, 32, 8, 16, 8, 32, 32, 8};
    for (size_t n = 0; n < sizeof seq / sizeof *seq; n++) {
        int i = -1;
        answer = seq[n];
        cr_assert_eq(ws_bso_predict(b, job, &ctx, &i, &err), 0, "%s", err.msg);
        cr_assert_eq(i, seq[n] == 8 ? 0 : seq[n] == 16 ? 1 : 2, "bs %d -> %d", seq[n], i);
    }
    /* With every valid size learnt, every other answer (whichever memo
     * slot it falls in) is still refused, in one line. */
    for (int bs = -70; bs <= 4200; bs++) {
        if (bs == 8 || bs == 16 || bs == 32) continue;
        int i = -1;
        char want[160];
        answer = bs;
        snprintf(want, sizeof want, "bso answer: predict returned batch size %d, which is"
                 " not one of the job's 3 batch sizes (8..32)", bs);
        cr_assert_eq(ws_bso_predict(b, job, &ctx, &i, &err), -1, "bs %d accepted", bs);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(i, -1);
    }
    /* The same instance asked about another job whose sizes sit at other
     * indices: B = {16, 32}, so 16 is index 0 and 32 index 1, 8 is out. */
    const int bs2[] = {16, 32}, ks2[] = {0, 1, 2}, pl2[] = {100, 200};
    const double d2[] = {1, 1}, r2[] = {1, 1};
    const int rs2[] = {0, 1, 2};
    ws_job other = *job;
    other.n_bs = 2;
    other.bs = bs2;
    other.knob_start = ks2;
    other.knob_pl = pl2;
    other.knob_time = d2;
    other.knob_power = d2;
    other.run_start = rs2;
    other.run_epoch = r2;
    int i = -1;
    answer = 16;
    cr_assert_eq(ws_bso_predict(b, &other, &ctx, &i, &err), 0, "%s", err.msg);
    cr_assert_eq(i, 0);
    answer = 32;
    cr_assert_eq(ws_bso_predict(b, &other, &ctx, &i, &err), 0, "%s", err.msg);
    cr_assert_eq(i, 1);
    answer = 8;
    cr_assert_eq(ws_bso_predict(b, &other, &ctx, &i, &err), -1);
    cr_assert_str_eq(err.msg, "bso answer: predict returned batch size 8, which is not"
                     " one of the job's 2 batch sizes (16..32)");
    /* and back: the first job's indices again */
    answer = 32;
    cr_assert_eq(ws_bso_predict(b, job, &ctx, &i, &err), 0, "%s", err.msg);
    cr_assert_eq(i, 2);
    answer = 16;
    cr_assert_eq(ws_bso_predict(b, job, &ctx, &i, &err), 0, "%s", err.msg);
    cr_assert_eq(i, 1);
    ws_bso_free(b);
    sim_teardown(&f);
}

Test(plugin, pl_answers_map_to_their_knob_whatever_came_before)
{
    sim_fixture f;
    sim_setup(&f, 0.5, INFINITY);
    /* knobs: bs 8 -> k 0..2 = {100, 150, 200}, bs 16 -> 3..5 = {100, 150,
     * 200}, bs 32 -> 6..8 = {125, 150, 200} */
    const ws_job *job = &f.jt.job;
    ws_error err = {""};
    ws_plo *p = ws_plo_new(&answer_plo, NULL, 1, &err);
    cr_assert_not_null(p, "%s", err.msg);
    ws_ctx ctx;
    ws_ctx_init(&ctx, 1);
    const struct { int i, pl, k; } seq[] = {
        {1, 150, 4}, {1, 150, 4}, {1, 200, 5}, {0, 150, 1}, {2, 150, 7},
        {1, 100, 3}, {2, 125, 6}, {0, 200, 2}, {2, 200, 8}, {1, 150, 4}, {0, 100, 0}};
    for (size_t n = 0; n < sizeof seq / sizeof *seq; n++) {
        int k = -2;
        answer = seq[n].pl;
        cr_assert_eq(ws_plo_predict(p, job, &ctx, seq[n].i, &k, &err), 0, "%s", err.msg);
        cr_assert_eq(k, seq[n].k, "i %d pl %d -> %d", seq[n].i, seq[n].pl, k);
    }
    /* "no limit yet" is still -1 after limits were learnt */
    int k = -2;
    answer = WS_PL_UNKNOWN;
    cr_assert_eq(ws_plo_predict(p, job, &ctx, 1, &k, &err), 0, "%s", err.msg);
    cr_assert_eq(k, -1);
    /* 125 W is measured for bs 32 only, and was just answered for it */
    answer = 125;
    cr_assert_eq(ws_plo_predict(p, job, &ctx, 2, &k, &err), 0, "%s", err.msg);
    cr_assert_eq(k, 6);
    cr_assert_eq(ws_plo_predict(p, job, &ctx, 1, &k, &err), -1);
    cr_assert_str_eq(err.msg, "plo answer: predict(bs 16) returned power limit 125 W,"
                     " which was not measured for that batch size (100..200 W)");
    for (int pl = -5; pl <= 400; pl++) {
        if (pl == WS_PL_UNKNOWN || pl == 125 || pl == 150 || pl == 200) continue;
        answer = pl;
        cr_assert_eq(ws_plo_predict(p, job, &ctx, 2, &k, &err), -1, "pl %d accepted", pl);
    }
    answer = 150;
    cr_assert_eq(ws_plo_predict(p, job, &ctx, 2, &k, &err), 0, "%s", err.msg);
    cr_assert_eq(k, 7);
    ws_plo_free(p);
    sim_teardown(&f);
}

Test(plugin, instance_label_is_kind_and_name)
{
    ws_error err = {""};
    ws_bso *b = ws_bso_new(&answer_bso, NULL, 1, &err);
    ws_plo *p = ws_plo_new(&answer_plo, NULL, 1, &err);
    cr_assert(b && p, "%s", err.msg);
    cr_assert_str_eq(ws_bso_who(b), "bso answer");
    cr_assert_str_eq(ws_plo_who(p), "plo answer");
    ws_bso_free(b);
    ws_plo_free(p);
}

/* ------------------------------------------------------------ floordiv */

Test(plugin, py_floordiv_matches_cpython)
{
    /* Values printed by CPython 3 for a // b. */
    static const struct { double a, b, q; } c[] = {
        {1.0, 0.1, 9.0},
        {7.0, 2.0, 3.0},
        {0.5, 2.0, 0.0},
        {6.0, 3.0, 2.0},
        {0.3, 0.1, 2.0},
        {2.0, 0.2, 9.0},
        {1.0, 0.2, 4.0},
        {0.7, 0.1, 6.0},
        {4.2, 0.6, 7.0},
        {5.9, 0.1, 59.0},
        {100.0, 0.7, 142.0},
        {123456.789, 0.001, 123456789.0},
        {-7.0, 2.0, -4.0},
        {-0.5, 2.0, -1.0},
        {1e-300, 1e300, 0.0},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        double q = ws_py_floordiv(c[i].a, c[i].b);
        cr_assert_eq(q, c[i].q, "%.17g // %.17g: got %.17g, CPython %.17g",
                     c[i].a, c[i].b, q, c[i].q);
    }
    /* Signed zeros and overflow as in CPython. */
    double z = ws_py_floordiv(0.0, 5.0);
    cr_assert(z == 0.0 && !signbit(z));
    z = ws_py_floordiv(-0.0, 5.0);
    cr_assert(z == 0.0 && signbit(z));
    cr_assert(isinf(ws_py_floordiv(1e300, 1e-10)));
}

/* ------------------------------------------ 2.3: the seed and the job */

#include "run_cli.h"

#define TRACES WS_SOURCE_DIR "/traces/fetched/zeus-nsdi23"

/* What tests/plugins/seed_probe.c logs in register_job, run by the CLI:
 * ws_host.seed is the simulation's --seed (7, then 4000000000: beyond an
 * int), and the job carries the catalogue's dataset, network, optimizer
 * and target metric (configs/workloads.yaml: cifar100 is cifar100,
 * shufflenetv2, adadelta, 0.6). */
Test(plugin, host_seed_and_job_workload_are_the_simulations)
{
    static const char *const seeds[] = {"7", "4000000000"};
    for (int i = 0; i < 2; i++) {
        cli_result r = cli_run((const char *[]){
            "wattsim", "simulate", "--traces", TRACES, "--catalogue",
            WS_SOURCE_DIR "/configs/workloads.yaml", "--gpu", "v100", "--workload",
            "cifar100", "--seed", seeds[i], "--recurrences", "1", "--bso",
            PLUGIN("seed_probe"), "--plo", "jit", NULL});
        cr_assert_eq(r.status, 0, "%s", r.err);
        char want[200];
        snprintf(want, sizeof want, "probe: seed %s dataset cifar100 network shufflenetv2"
                 " optimizer adadelta target_metric 0.59999999999999998\n", seeds[i]);
        cr_assert(strstr(r.err, want), "want '%s' in:\n%s", want, r.err);
        cli_free(&r);
    }
}

/* ------------------------------------------------- plugins stay mapped */

/* A plugin's thread that outlives its registry (tests/plugins/late/late_thread.c
 * sleeps 300 ms, then runs its code and writes its static data): the code
 * stays mapped (RTLD_NODELETE), so the process survives the wake and the
 * thread's write is there to read. Before, dlclose unmapped the code under
 * the sleeping thread and the process died (SIGSEGV) when it woke. */
Test(plugin, a_thread_the_plugin_started_outlives_its_registry, .timeout = 30)
{
    ws_error err = {0};
    ws_registry *r = ws_registry_new();
    cr_assert_eq(ws_registry_load_file(r, WS_TEST_PLUGIN_DIR "/late/late_thread.so", &err), 0, "%s", err.msg);
    const ws_bso_type *t = ws_registry_bso(r, WS_TEST_PLUGIN_DIR "/late/late_thread.so", &err);
    cr_assert(t, "%s", err.msg);
    cr_assert_str_eq(t->name, "late_thread");
    /* run it: the calls go to the plugin's own code */
    ws_job job = {.b0 = 128};
    int bs = 0;
    cr_assert_eq(t->create(NULL, NULL, NULL), 0);
    cr_assert_eq(t->predict(NULL, &job, NULL, &bs), 0);
    cr_assert_eq(bs, 128);
    t->destroy(NULL);
    ws_registry_free(r);

    struct timespec wait = {0, 900 * 1000000L};    /* 3 times the thread's sleep */
    while (nanosleep(&wait, &wait) != 0) {}
    void *h = dlopen(WS_TEST_PLUGIN_DIR "/late/late_thread.so", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    cr_assert(h, "the plugin is no longer mapped");
    const volatile int *woke = dlsym(h, "late_thread_woke");
    cr_assert(woke && *woke == 1, "the plugin's thread did not run to its end");
    dlclose(h);
}

/* A plugin file replaced at its path (a new inode, as a linker or install
 * writes it) while the process keeps the older build mapped: the next
 * registry loads the new file, not the build the loader knows by that
 * name (plugin_map.c maps it under an alias of the path). And the older
 * build, loaded again by a file with its inode, is the older build. */
Test(plugin, a_replaced_plugin_file_loads_the_new_build)
{
    ws_error err = {0};
    copy_file(PLUGIN("marker"), "swap.so");
    char *swap = real(tp("swap.so"));
    ws_registry *r = ws_registry_new();
    cr_assert_eq(ws_registry_load_file(r, swap, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_n_bso(r), 1);
    cr_assert_str_eq(ws_registry_bso_at(r, 0)->name, "marker");
    ws_registry_free(r);

    /* the old build kept by a second name (the same inode), then replaced */
    char *old = strdup(tp("old.so")), *neu = strdup(tp("new.so"));
    cr_assert_eq(link(swap, old), 0);
    copy_file(PLUGIN("seed_probe"), "new.so");
    cr_assert_eq(rename(neu, swap), 0);
    r = ws_registry_new();
    cr_assert_eq(ws_registry_load_file(r, swap, &err), 0, "%s", err.msg);
    cr_assert_eq(ws_registry_n_bso(r) + ws_registry_n_plo(r), 1);
    cr_assert_str_eq(ws_registry_n_bso(r) ? ws_registry_bso_at(r, 0)->name
                                          : ws_registry_plo_at(r, 0)->name, "seed_probe");
    cr_assert_str_eq(ws_registry_n_bso(r) ? ws_registry_bso_file(r, 0)
                                          : ws_registry_plo_file(r, 0), swap);
    ws_registry_free(r);

    /* replaced again, by the first build's inode: the first build */
    cr_assert_eq(rename(old, swap), 0);
    r = ws_registry_new();
    cr_assert_eq(ws_registry_load_file(r, swap, &err), 0, "%s", err.msg);
    cr_assert_str_eq(ws_registry_bso_at(r, 0)->name, "marker");
    ws_registry_free(r);
    free(swap);
    free(old);
    free(neu);
}
