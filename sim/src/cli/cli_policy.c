/*
 * wattsim policy new NAME [--kind bso|plo] [--force] [DIR]: a policy
 * skeleton (NAME.c, CMakeLists.txt) that builds out of tree against the
 * installed kit and runs unchanged.
 * wattsim policy check FILE.so|POLICY|py:M:C [--policy NAME] [--jobs N]: the conformance
 * checks of wattsim/conformance.h, one line per check; exit 1 on a failure.
 */
#include "cli_policy.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"
#include "wattsim/conformance.h"
#include "wattsim/outfile.h"
#include "wattsim/report.h"

#define POLICY_NEW_USAGE "wattsim policy new NAME [--kind bso|plo] [--force] [DIR]\n"
#define POLICY_CHECK_USAGE                                                     \
    "wattsim policy check FILE.so|POLICY [--policy NAME]\n"                    \
    "                            [--param NAME=VALUE]... [--jobs N]\n"         \
    "                            [--timeout SECONDS]\n"

/* `policy --help`: the two subcommands, each described by its own --help. */
static const char *POLICY_HELP =
    "usage: " POLICY_NEW_USAGE
    "       " POLICY_CHECK_USAGE
    "\n"
    "  new     write a policy skeleton (C source and CMakeLists.txt) to build\n"
    "  check   check a plugin's or a policy's conformance to the policy ABI\n"
    "\n"
    "'wattsim policy new --help' and 'wattsim policy check --help' describe them.\n";

static const char *POLICY_NEW_HELP =
    "usage: " POLICY_NEW_USAGE
    "\n"
    "Write a policy skeleton into DIR (default: ./NAME): NAME.c, a batch-size\n"
    "(bso, the default) or power-limit (plo) optimizer that runs as it is, and\n"
    "a CMakeLists.txt that builds NAME.so against the wattsim kit\n"
    "(find_package(wattsim)). The build command it prints names the kit of the\n"
    "wattsim that wrote it: its build tree (-Dwattsim_DIR) or its install\n"
    "prefix (-DCMAKE_PREFIX_PATH, unless /usr or /usr/local). NAME: a letter,\n"
    "then letters, digits or _ (lower case).\n"
    "\n"
    "  --kind K           bso (a batch-size optimizer, the default) or plo (a\n"
    "                     power-limit optimizer)\n"
    "  --force            replace existing files (without it, none is replaced)\n"
    "  --help             this help\n";

static const char *POLICY_CHECK_HELP =
    "usage: " POLICY_CHECK_USAGE
    "\n"
    "Load the plugin and exercise each of its policies (or NAME) on generated\n"
    "jobs: loading (ABI version, entry point, required functions, parameter\n"
    "specs), the parameters, one batch size, many, eta 0 and 1, no early\n"
    "stopping, a carbon intensity and a price in the context, hourly carbon\n"
    "and price series on a schedule (the clock and the forecast), concurrent\n"
    "submissions (bso), determinism for a seed, no state shared between\n"
    "instances, N jobs without leaking, the time per call, and nothing written\n"
    "to stdout. One PASS/FAIL line per check; exit 1 if any fails. POLICY\n"
    "instead of a file: a policy as --bso/--plo name it (NAME, FILE.so:NAME),\n"
    "checked as a bso and/or plo; py:MODULE:CLASS checks a Python class\n"
    "through the Python bridge (docs/python.md), imported by the interpreter\n"
    "WATTSIM_PYTHON names. Loading and each check run in a process of their\n"
    "own: a crash, an exit() or a hang fails that check, naming the call and\n"
    "the signal. Once a call has hung, the policy's remaining checks are SKIP\n"
    "lines naming it and the check it hung in (\"skipped (predict hung in\n"
    "check one-size)\").\n"
    "\n"
    "  --policy NAME      check only the policy NAME of the plugin (default:\n"
    "                     every policy it defines)\n"
    "  --param NAME=VALUE  a parameter of the policy checked (repeatable; or\n"
    "                     POLICY{NAME=VALUE,...} as --policies takes it)\n"
    "  --jobs N           jobs of the leak and timing checks, 10..10000000\n"
    "                     (default 10000)\n"
    "  --timeout S        seconds each check may take (default 60; 0: no limit;\n"
    "                     loading the plugin: at least 30)\n"
    "  --help             this help\n"
    "\n"
    "Checking a plugin runs its code, with your rights (in child processes,\n"
    "which are not a sandbox): check only plugins you would run.\n";

/* ------------------------------------------------------------ new */

static const char *BSO_TEMPLATE =
    "/*\n"
    " * @NAME@: a batch-size optimizer (wattsim policy ABI 2). It tries every\n"
    " * batch size once, b0 first, then always the one whose runs cost least\n"
    " * on average. Replace the logic in predict/observe with your own.\n"
    " *\n"
    " *     cmake -S . -B build && cmake --build build\n"
    " *     wattsim simulate --workload imagenet --bso ./build/@NAME@.so\n"
    " *     wattsim policy check ./build/@NAME@.so\n"
    " */\n"
    "#include <math.h>\n"
    "#include <stdlib.h>\n"
    "#include <wattsim/policy.h>\n"
    "\n"
    "/* Parameters, in the order create() receives their values. */\n"
    "static const ws_param_spec params[] = {\n"
    "    {\"penalty\", WS_PARAM_DOUBLE, {.d = 2.0}, 1.0, 100.0,\n"
    "     \"cost factor for a run that did not reach the target\"},\n"
    "    {0},\n"
    "};\n"
    "\n"
    "/* Per-instance state: the host allocates state_size zeroed bytes. */\n"
    "typedef struct state {\n"
    "    double penalty;\n"
    "    long *n;            /* runs observed per batch-size index */\n"
    "    double *sum;        /* their total (penalised) cost */\n"
    "} state;\n"
    "\n"
    "static int s_create(void *st, const ws_value *v, const ws_host *host)\n"
    "{\n"
    "    (void)host;                 /* the host's services: random streams, log */\n"
    "    ((state *)st)->penalty = v[0].d;\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "static void s_destroy(void *st)\n"
    "{\n"
    "    free(((state *)st)->n);\n"
    "    free(((state *)st)->sum);\n"
    "}\n"
    "\n"
    "static int s_register(void *st, const ws_job *job, const ws_ctx *ctx)\n"
    "{\n"
    "    (void)ctx;                  /* the call context: recurrence, try, ... */\n"
    "    state *s = st;\n"
    "    s->n = calloc((size_t)job->n_bs, sizeof *s->n);\n"
    "    s->sum = calloc((size_t)job->n_bs, sizeof *s->sum);\n"
    "    return s->n && s->sum ? 0 : -1;\n"
    "}\n"
    "\n"
    "static int s_predict(void *st, const ws_job *job, const ws_ctx *ctx, int *bs)\n"
    "{\n"
    "    (void)ctx;\n"
    "    const state *s = st;\n"
    "    int b0 = ws_job_bs_index(job, job->b0), best = b0;\n"
    "    if (s->n[b0] == 0) { *bs = job->b0; return 0; }\n"
    "    for (int i = 0; i < job->n_bs; i++)\n"
    "        if (s->n[i] == 0) { *bs = job->bs[i]; return 0; }\n"
    "    for (int i = 0; i < job->n_bs; i++)\n"
    "        if (s->sum[i] / s->n[i] < s->sum[best] / s->n[best]) best = i;\n"
    "    *bs = job->bs[best];\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "static int s_observe(void *st, const ws_job *job, const ws_ctx *ctx, int bs,\n"
    "                     double cost, int reached)\n"
    "{\n"
    "    (void)ctx;\n"
    "    state *s = st;\n"
    "    int i = ws_job_bs_index(job, bs);\n"
    "    if (i < 0) return -1;\n"
    "    s->n[i]++;\n"
    "    s->sum[i] += reached ? cost : s->penalty * cost;\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "static const ws_bso_type bso = {\n"
    "    .abi_version = WS_ABI_VERSION,\n"
    "    .name = \"@NAME@\",\n"
    "    .summary = \"every batch size once, then the least average cost\",\n"
    "    .state_size = sizeof(state),\n"
    "    .params = params,\n"
    "    .create = s_create,\n"
    "    .destroy = s_destroy,\n"
    "    .register_job = s_register,\n"
    "    .predict = s_predict,\n"
    "    .observe = s_observe,\n"
    "};\n"
    "\n"
    "static const ws_bso_type *const bsos[] = {&bso, NULL};\n"
    "static const ws_plugin plugin = {WS_ABI_VERSION, \"@NAME@\", bsos, NULL,\n"
    "                                 WS_ABI_VERSION_OF(2, 0)};\n"
    "\n"
    "/* host_version: the host's ABI; return NULL if you cannot run there. */\n"
    "const ws_plugin *ws_plugin_entry_v2(int host_version)\n"
    "{\n"
    "    (void)host_version;\n"
    "    return &plugin;\n"
    "}\n";

static const char *PLO_TEMPLATE =
    "/*\n"
    " * @NAME@: a power-limit optimizer (wattsim policy ABI 2). For each batch\n"
    " * size it asks the host to profile every limit (WS_PL_UNKNOWN), then\n"
    " * answers the one whose epoch took least energy, if it is at most\n"
    " * `slowdown` times slower than the fastest. Replace with your own logic.\n"
    " *\n"
    " *     cmake -S . -B build && cmake --build build\n"
    " *     wattsim simulate --workload imagenet --plo ./build/@NAME@.so\n"
    " *     wattsim policy check ./build/@NAME@.so\n"
    " */\n"
    "#include <math.h>\n"
    "#include <stdlib.h>\n"
    "#include <wattsim/policy.h>\n"
    "\n"
    "static const ws_param_spec params[] = {\n"
    "    {\"slowdown\", WS_PARAM_DOUBLE, {.d = 1.2}, 1.0, 10.0,\n"
    "     \"largest time per epoch accepted, relative to the fastest limit\"},\n"
    "    {0},\n"
    "};\n"
    "\n"
    "typedef struct state {\n"
    "    double slowdown;\n"
    "    int *pl;            /* answer per batch-size index; 0 = not profiled */\n"
    "    double *fastest, *best_energy;\n"
    "    int *best_pl;\n"
    "} state;\n"
    "\n"
    "static int s_create(void *st, const ws_value *v, const ws_host *host)\n"
    "{\n"
    "    (void)host;                 /* the host's services: random streams, log */\n"
    "    ((state *)st)->slowdown = v[0].d;\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "static void s_destroy(void *st)\n"
    "{\n"
    "    state *s = st;\n"
    "    free(s->pl);\n"
    "    free(s->fastest);\n"
    "    free(s->best_energy);\n"
    "    free(s->best_pl);\n"
    "}\n"
    "\n"
    "static int s_register(void *st, const ws_job *job, const ws_ctx *ctx)\n"
    "{\n"
    "    (void)ctx;                  /* the call context: recurrence, try, ... */\n"
    "    state *s = st;\n"
    "    size_t n = (size_t)job->n_bs;\n"
    "    s->pl = calloc(n, sizeof *s->pl);\n"
    "    s->best_pl = calloc(n, sizeof *s->best_pl);\n"
    "    s->fastest = calloc(n, sizeof *s->fastest);\n"
    "    s->best_energy = calloc(n, sizeof *s->best_energy);\n"
    "    return s->pl && s->best_pl && s->fastest && s->best_energy ? 0 : -1;\n"
    "}\n"
    "\n"
    "static int s_predict(void *st, const ws_job *job, const ws_ctx *ctx, int bs, int *pl)\n"
    "{\n"
    "    (void)ctx;\n"
    "    state *s = st;\n"
    "    int i = ws_job_bs_index(job, bs);\n"
    "    if (i < 0) return -1;\n"
    "    if (!s->pl[i] && s->best_pl[i]) s->pl[i] = s->best_pl[i];\n"
    "    *pl = s->pl[i] ? s->pl[i] : WS_PL_UNKNOWN;\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "/* Reported for every limit of bs, highest (fastest) first; the epoch's\n"
    " * time and power are in the context. */\n"
    "static int s_profile(void *st, const ws_job *job, const ws_ctx *ctx, int bs, int pl,\n"
    "                     double epoch_cost)\n"
    "{\n"
    "    (void)epoch_cost;           /* chosen here by time and energy instead */\n"
    "    state *s = st;\n"
    "    int i = ws_job_bs_index(job, bs);\n"
    "    if (i < 0 || !WS_CTX_HAS(ctx, profile_power_w)) return -1;\n"
    "    double t = ctx->profile_time_s, e = t * ctx->profile_power_w;\n"
    "    if (!s->best_pl[i]) {\n"
    "        s->fastest[i] = t;\n"
    "        s->best_pl[i] = pl;\n"
    "        s->best_energy[i] = e;\n"
    "    } else if (t <= s->slowdown * s->fastest[i] && e < s->best_energy[i]) {\n"
    "        s->best_pl[i] = pl;\n"
    "        s->best_energy[i] = e;\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "static const ws_plo_type plo = {\n"
    "    .abi_version = WS_ABI_VERSION,\n"
    "    .name = \"@NAME@\",\n"
    "    .summary = \"least epoch energy within a slowdown of the fastest limit\",\n"
    "    .state_size = sizeof(state),\n"
    "    .params = params,\n"
    "    .create = s_create,\n"
    "    .destroy = s_destroy,\n"
    "    .predict = s_predict,\n"
    "    .observe_profile = s_profile,\n"
    "    .register_job = s_register,\n"
    "};\n"
    "\n"
    "static const ws_plo_type *const plos[] = {&plo, NULL};\n"
    "static const ws_plugin plugin = {WS_ABI_VERSION, \"@NAME@\", NULL, plos,\n"
    "                                 WS_ABI_VERSION_OF(2, 0)};\n"
    "\n"
    "/* host_version: the host's ABI; return NULL if you cannot run there. */\n"
    "const ws_plugin *ws_plugin_entry_v2(int host_version)\n"
    "{\n"
    "    (void)host_version;\n"
    "    return &plugin;\n"
    "}\n";

static const char *CMAKE_TEMPLATE =
    "# Builds @NAME@.so against the installed wattsim kit:\n"
    "#   cmake -S . -B build [-DCMAKE_PREFIX_PATH=WATTSIM_PREFIX] && cmake --build build\n"
    "cmake_minimum_required(VERSION 3.18)\n"
    "project(@NAME@ C)\n"
    "find_package(wattsim 0.1 REQUIRED)\n"
    "wattsim_add_policy(@NAME@ SOURCES @NAME@.c)\n";

static int name_ok(const char *s)
{
    if (!s || !(*s >= 'a' && *s <= 'z') || strlen(s) > 64) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* Write template t with @NAME@ replaced, through an atomic output file. */
static int write_template(const char *path, const char *t, const char *name, int force,
                          ws_error *err)
{
    struct stat st;
    if (!force && lstat(path, &st) == 0)
        return ws_fail(err, "%s already exists (use --force to replace it)", path);
    ws_outfile o = {0};
    if (ws_outfile_open(&o, path, err)) return -1;
    for (const char *p = t; *p;) {
        const char *at = strstr(p, "@NAME@");
        size_t n = at ? (size_t)(at - p) : strlen(p);
        fwrite(p, 1, n, o.f);
        if (!at) break;
        fputs(name, o.f);
        p = at + 6;
    }
    return ws_outfile_commit(&o, err);
}

/* s for a POSIX shell: as it is when it has only safe characters, else
 * in single quotes ('\'' for a quote). */
static void shell_word(const char *s, char *buf, size_t size)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                        "_./+-=:,@%") == strlen(s)) {
        snprintf(buf, size, "%s", s);
        return;
    }
    size_t n = 0;
    if (n + 1 < size) buf[n++] = '\'';
    for (; *s && n + 5 < size; s++) {
        if (*s == '\'') {
            memcpy(buf + n, "'\\''", 4);
            n += 4;
        } else {
            buf[n++] = *s;
        }
    }
    if (n + 1 < size) buf[n++] = '\'';
    buf[n] = '\0';
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * The CMake option that finds the kit of this wattsim, with a leading
 * space: its build tree (the executable is BUILD/sim/wattsim, and the
 * build exports BUILD/wattsimConfig.cmake: kit/CMakeLists.txt) as
 * -Dwattsim_DIR=BUILD, or its install prefix (PREFIX/bin/wattsim) as
 * -DCMAKE_PREFIX_PATH=PREFIX unless CMake looks there anyway (/usr,
 * /usr/local). "" when neither is found.
 */
static void kit_option(char *buf, size_t size)
{
    buf[0] = '\0';
    char exe[4096], path[4200], real[4096], word[8300];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';                 /* the executable's folder */
    snprintf(path, sizeof path, "%s/../wattsimConfig.cmake", exe);
    if (is_file(path)) {
        snprintf(path, sizeof path, "%s/..", exe);
        if (!realpath(path, real)) return;
        shell_word(real, word, sizeof word);
        snprintf(buf, size, " -Dwattsim_DIR=%s", word);
        return;
    }
    static const char *const libs[] = {"lib", "lib64", "lib/x86_64-linux-gnu",
                                       "lib/aarch64-linux-gnu"};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        snprintf(path, sizeof path, "%s/../%s/cmake/wattsim/wattsimConfig.cmake", exe, libs[i]);
        if (!is_file(path)) continue;
        snprintf(path, sizeof path, "%s/..", exe);
        if (!realpath(path, real) || !strcmp(real, "/usr") || !strcmp(real, "/usr/local"))
            return;
        shell_word(real, word, sizeof word);
        snprintf(buf, size, " -DCMAKE_PREFIX_PATH=%s", word);
        return;
    }
}

static int cmd_new(int argc, char **argv)
{
    static const struct option opts[] = {{"kind", required_argument, 0, 'k'},
                                         {"force", no_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *kind = "bso";
    int force = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        if (c == 'k') kind = optarg;
        else if (c == 'f') force = 1;
        else if (c == 'h') { fputs(POLICY_NEW_HELP, ws_cli_out); return 0; }
        else return ws_cli_bad_option("policy new", argv, c);
    }
    if (optind >= argc || argc - optind > 2)
        return ws_cli_usage("policy new", "%s", "needs NAME and at most one DIR");
    const char *name = argv[optind], *dir = optind + 1 < argc ? argv[optind + 1] : name;
    if (!name_ok(name))
        return ws_cli_usage("policy new", "bad NAME '%s' (a lower-case letter, then"
                            " lower-case letters, digits or _; at most 64)", name);
    if (strcmp(kind, "bso") && strcmp(kind, "plo"))
        return ws_cli_usage("policy new", "--kind: '%s' is not bso or plo", kind);
    if (ws_cli_check_out("policy new", "DIR", dir)) return WS_EXIT_USAGE;
    char src[4200], cml[4200];
    snprintf(src, sizeof src, "%s/%s.c", dir, name);
    snprintf(cml, sizeof cml, "%s/CMakeLists.txt", dir);
    ws_error err = {{0}};
    if (write_template(src, strcmp(kind, "bso") ? PLO_TEMPLATE : BSO_TEMPLATE, name, force,
                       &err)
        || write_template(cml, CMAKE_TEMPLATE, name, force, &err))
        return ws_cli_die(&err);
    /* A command that works from here: it names the kit of this wattsim. */
    char kit[8400], qdir[8300], qbuild[8400], build[4200];
    kit_option(kit, sizeof kit);
    snprintf(build, sizeof build, "%s/build", dir);
    shell_word(dir, qdir, sizeof qdir);
    shell_word(build, qbuild, sizeof qbuild);
    fprintf(ws_cli_out, "wrote %s and %s: build with\n  cmake -S %s -B %s%s && cmake --build %s\n",
            src, cml, qdir, qbuild, kit, qbuild);
    return 0;
}

/* ------------------------------------------------------------ check */

/* ctx: the number of checks skipped. */
static void print_check(void *ctx, int result, const char *check, const char *who,
                        const char *detail)
{
    *(int *)ctx += result == WS_CHECK_SKIP;
    fprintf(ws_cli_out, "%s %-14s %s%s%s\n",
            result == WS_CHECK_PASS ? "PASS" : result == WS_CHECK_SKIP
            ? "SKIP" : "FAIL", check, who, *who ? ": " : "", detail);
    fflush(ws_cli_out);
}

/* --param NAME=VALUE, added to the policy's parameters (after any given
 * in braces); a name given twice is an error, as in braces. */
static int add_param(ws_policy_ref *ref, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || !eq[1])
        return ws_cli_usage("policy check", "--param: want NAME=VALUE, got '%s'", kv);
    size_t klen = (size_t)(eq - kv);
    for (size_t i = 0; i < ref->n_params; i++)
        if (strlen(ref->params[i].key) == klen && !strncmp(ref->params[i].key, kv, klen))
            return ws_cli_usage("policy check", "--param: parameter '%s' given twice",
                                ref->params[i].key);
    ws_param_raw r = {strndup(kv, klen), strdup(eq + 1), strdup("--param")};
    ws_param_raw *np = realloc(ref->params, (ref->n_params + 1) * sizeof *np);
    if (np) ref->params = np;
    if (!r.key || !r.value || !r.where || !np) {
        free(r.key);
        free(r.value);
        free(r.where);
        return ws_cli_die(&(ws_error){"out of memory"});
    }
    ref->params[ref->n_params++] = r;
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {{"policy", required_argument, 0, 'p'},
                                         {"jobs", required_argument, 0, 'j'},
                                         {"param", required_argument, 0, 'P'},
                                         {"timeout", required_argument, 0, 't'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *only = NULL;
    const char **kv = calloc((size_t)argc + 1, sizeof *kv);
    size_t n_kv = 0;
    ws_check_opts o = {.jobs = 10000, .timeout = 60};
    int c;
    if (!kv) return ws_cli_die(&(ws_error){"out of memory"});
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        char *end;
        errno = 0;
        if (c == 'p') only = optarg;
        else if (c == 'P') kv[n_kv++] = optarg;
        else if (c == 'j') {
            o.jobs = strtol(optarg, &end, 10);
            if (!*optarg || *end || errno || o.jobs < 10 || o.jobs > 10000000) {
                free(kv);
                return ws_cli_usage("policy check", "--jobs: want an integer in"
                                    " [10, 10000000], got '%s'", optarg);
            }
        } else if (c == 't') {
            o.timeout = strtod(optarg, &end);
            if (!*optarg || *end || errno || !(o.timeout >= 0 && o.timeout <= 86400)) {
                free(kv);
                return ws_cli_usage("policy check", "--timeout: want seconds in [0, 86400]"
                                    " (0: no limit), got '%s'", optarg);
            }
        } else if (c == 'h') {
            free(kv);
            fputs(POLICY_CHECK_HELP, ws_cli_out);
            return 0;
        } else {
            free(kv);
            return ws_cli_bad_option("policy check", argv, c);
        }
    }
    if (argc - optind != 1) {
        free(kv);
        return ws_cli_usage("policy check", "%s", "needs one FILE.so or POLICY");
    }
    /* POLICY{NAME=VALUE,...}, as --policies takes it, then --param. */
    ws_policy_ref ref;
    ws_error err = {{0}};
    const char *target = argv[optind];
    if (ws_policy_ref_parse(target, strlen(target), "policy check", &ref, &err)) {
        free(kv);
        return ws_cli_usage("policy check", "%s", err.msg + strlen("policy check: "));
    }
    int rc = 0;
    for (size_t i = 0; i < n_kv && !rc; i++) rc = add_param(&ref, kv[i]);
    free(kv);
    if (rc) {
        ws_policy_ref_free(&ref);
        return rc;
    }
    o.params = ref.params;
    o.n_params = ref.n_params;
    int skipped = 0;
    int failed = ws_conformance_check(ref.name, only, &o, print_check, &skipped, &err);
    if (failed < 0) {
        ws_policy_ref_free(&ref);
        return ws_cli_die(&err);
    }
    char skips[48] = "";
    if (skipped) snprintf(skips, sizeof skips, ", %d skipped", skipped);
    fprintf(ws_cli_out, "%s: %d check%s failed%s; %s\n", ref.name, failed, failed == 1 ? "" : "s",
            skips, ws_version_line());
    ws_policy_ref_free(&ref);
    return failed ? 1 : 0;
}

int ws_cmd_policy(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "new")) return cmd_new(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "check")) return cmd_check(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(POLICY_HELP, ws_cli_out);
        return 0;
    }
    return ws_cli_usage("policy", "%s", "needs 'new' or 'check'");
}
