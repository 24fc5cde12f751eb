/*
 * The bad-input catalogue (tests/data/bad/, see its README.md): every case
 * is run through the built CLI, the way a user would meet it.
 *
 * A case is a folder. Its input files are laid over the tiny fixture in
 * tests/data/bad/_fixture/ inside a fresh temporary folder, `gen` then
 * builds what is too large or too binary to commit, and `cmd` runs there
 * (so messages name files by relative path). A case with `expected` must
 * exit with status 2, print nothing on stdout, print exactly that one line
 * on stderr and leave the folder as it was (no output file, not even a
 * partial one). A case with `accept` is valid-but-unusual input that must
 * succeed. A case with `known-bug` documents a defect not fixed yet: it
 * must still FAIL the checks, so that the fix is noticed (then delete the
 * file).
 *
 * WS_BAD_PRINT=1 prints every case's actual stderr (to write `expected`).
 */
#define _GNU_SOURCE   /* asprintf */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define BAD_DIR WS_SOURCE_DIR "/tests/data/bad"
#define CLI WS_BUILD_DIR "/sim/wattsim"
#define MAX_ARGS 64

/* ------------------------------------------------------------ files */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap + 1);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *t = realloc(s, (cap *= 2) + 1);
            if (!t) { free(s); s = NULL; }
            else s = t;
        }
    }
    fclose(f);
    if (!s) return NULL;
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int copy_file(const char *from, const char *to)
{
    size_t n;
    char *s = slurp(from, &n);
    if (!s) return -1;
    FILE *f = fopen(to, "wb");
    int rc = f && fwrite(s, 1, n, f) == n ? 0 : -1;
    if (f && fclose(f)) rc = -1;
    free(s);
    return rc;
}

static int is_control(const char *name)
{
    return !strcmp(name, "cmd") || !strcmp(name, "expected") || !strcmp(name, "gen")
        || !strcmp(name, "accept") || !strcmp(name, "known-bug") || !strcmp(name, "warns");
}

/* Copy a folder's files (recursively) into `to`, control files excepted. */
static int copy_tree(const char *from, const char *to, int top)
{
    DIR *d = opendir(from);
    if (!d) return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.' || (top && is_control(e->d_name))) continue;
        char a[4096], b[4096];
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        struct stat st;
        if (stat(a, &st)) { rc = -1; break; }
        if (S_ISDIR(st.st_mode))
            rc = (mkdir(b, 0700) && errno != EEXIST) ? -1 : copy_tree(a, b, 0);
        else
            rc = copy_file(a, b);
    }
    closedir(d);
    return rc;
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st)) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            remove_tree(p);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Every file below dir with its size and mtime, one per line, sorted: two
 * equal snapshots mean no file was created, deleted or rewritten. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct lines { char **v; size_t n, cap; } lines;

static void snap_walk(const char *dir, const char *rel, lines *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[4096], r[4096], line[4400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        snprintf(r, sizeof r, "%s%s", rel, e->d_name);
        struct stat st;
        if (lstat(p, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            /* Folders do not count: `run` may create its (empty) output
             * folder before it fails; files in it do. */
            strncat(r, "/", sizeof r - strlen(r) - 1);
            snap_walk(p, r, out);
            continue;
        }
        snprintf(line, sizeof line, "%s %lld %lld.%09ld", r, (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 32;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = strdup(line);
    }
    if (d) closedir(d);
}

static char *snapshot(const char *dir)
{
    lines l = {0};
    snap_walk(dir, "", &l);
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
    size_t len = 1;
    for (size_t i = 0; i < l.n; i++) len += strlen(l.v[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; i < l.n; i++) {
        strcat(s, l.v[i]);
        strcat(s, "\n");
        free(l.v[i]);
    }
    free(l.v);
    return s;
}

/* ------------------------------------------------------------ gen */

static int gz_write_file(const char *to, const char *data, size_t n, size_t newlines)
{
    gzFile g = gzopen(to, "wb9");
    if (!g) return -1;
    int rc = n && gzwrite(g, data, (unsigned)n) != (int)n ? -1 : 0;
    static char nl[1 << 16];
    memset(nl, '\n', sizeof nl);
    while (rc == 0 && newlines > 0) {
        size_t k = newlines < sizeof nl ? newlines : sizeof nl;
        if (gzwrite(g, nl, (unsigned)k) != (int)k) rc = -1;
        newlines -= k;
    }
    if (gzclose(g) != Z_OK) rc = -1;
    return rc;
}

/*
 * One `gen` directive, run in the case folder:
 *   gzip SRC DST        compress SRC into DST (SRC stays)
 *   rm FILE             delete FILE
 *   chop FILE N         drop the last N bytes
 *   flip FILE OFF       invert the byte at OFF (negative: from the end)
 *   longline FILE N     append a line of N bytes
 *   bomb FILE N         replace FILE by FILE.gz: its header line then N
 *                       newlines (blank lines the reader skips, so only the
 *                       size limit stops it)
 *   repeat FILE N       replace FILE by FILE.gz: its header line, then its
 *                       second line over and over, N bytes of it
 *   symlink TARGET LINK make LINK a symbolic link to TARGET (as written)
 *   fifo FILE           make FILE a FIFO (a reader that opens it blocks)
 *   mkdir DIR           make a folder
 *   sparse FILE N       make FILE N bytes long without writing them
 */
static int gen_one(const char *dir, const char *line)
{
    char op[32], a[256], b[256];
    int n = sscanf(line, "%31s %255s %255s", op, a, b);
    if (n < 2) return -1;
    char pa[4096], pb[4096];
    snprintf(pa, sizeof pa, "%s/%s", dir, a);
    snprintf(pb, sizeof pb, "%s/%s", dir, n > 2 ? b : "");
    if (!strcmp(op, "rm")) return unlink(pa);
    if (!strcmp(op, "fifo")) return mkfifo(pa, 0600);
    if (!strcmp(op, "mkdir")) return mkdir(pa, 0700);
    if (!strcmp(op, "symlink") && n == 3) return symlink(a, pb);
    if (!strcmp(op, "gzip") && n == 3) {
        size_t len;
        char *s = slurp(pa, &len);
        if (!s) return -1;
        int rc = gz_write_file(pb, s, len, 0);
        free(s);
        return rc;
    }
    if (n != 3) return -1;
    long long v = atoll(b);
    if (!strcmp(op, "chop")) {
        struct stat st;
        if (stat(pa, &st) || v > st.st_size) return -1;
        return truncate(pa, st.st_size - v);
    }
    if (!strcmp(op, "flip")) {
        size_t len;
        char *s = slurp(pa, &len);
        if (!s) return -1;
        long long at = v < 0 ? (long long)len + v : v;
        int rc = -1;
        if (at >= 0 && at < (long long)len) {
            s[at] = (char)~s[at];
            FILE *f = fopen(pa, "wb");
            rc = f && fwrite(s, 1, len, f) == len ? 0 : -1;
            if (f && fclose(f)) rc = -1;
        }
        free(s);
        return rc;
    }
    if (!strcmp(op, "sparse")) {
        int fd = open(pa, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return -1;
        int rc = ftruncate(fd, (off_t)v);
        return close(fd) || rc ? -1 : 0;
    }
    if (!strcmp(op, "longline")) {
        FILE *f = fopen(pa, "ab");
        if (!f) return -1;
        for (long long i = 0; i < v; i++) fputc('x', f);
        fputc('\n', f);
        return fclose(f);
    }
    if (!strcmp(op, "bomb")) {
        char *s = slurp(pa, NULL);
        if (!s) return -1;
        char *nl = strchr(s, '\n');
        size_t hl = nl ? (size_t)(nl - s) + 1 : strlen(s);
        char gz[4200];
        snprintf(gz, sizeof gz, "%s.gz", pa);
        int rc = gz_write_file(gz, s, hl, (size_t)v);
        free(s);
        return rc ? rc : unlink(pa);
    }
    if (!strcmp(op, "repeat")) {
        char *s = slurp(pa, NULL);
        if (!s) return -1;
        char *nl = strchr(s, '\n'), *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
        char gz[4200];
        snprintf(gz, sizeof gz, "%s.gz", pa);
        gzFile g = nl2 ? gzopen(gz, "wb9") : NULL;
        int rc = g ? 0 : -1;
        if (g) {
            size_t hl = (size_t)(nl - s) + 1, rl = (size_t)(nl2 - nl);
            static char block[1 << 16];
            size_t per = sizeof block / rl;
            for (size_t i = 0; i < per; i++) memcpy(block + i * rl, nl + 1, rl);
            if (gzwrite(g, s, (unsigned)hl) != (int)hl) rc = -1;
            for (long long done = 0; rc == 0 && done < v; done += (long long)(per * rl))
                if (gzwrite(g, block, (unsigned)(per * rl)) != (int)(per * rl)) rc = -1;
            if (gzclose(g) != Z_OK) rc = -1;
        }
        free(s);
        return rc ? rc : unlink(pa);
    }
    return -1;
}

static int gen_all(const char *case_dir, const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/gen", case_dir);
    char *s = slurp(p, NULL);
    if (!s) return 0;
    int rc = 0;
    for (char *line = strtok(s, "\n"); line && rc == 0; line = strtok(NULL, "\n"))
        if (*line && *line != '#') rc = gen_one(dir, line);
    free(s);
    return rc;
}

/* ------------------------------------------------------------ run */

typedef struct outcome {
    int status;          /* exit status, or 128 + signal */
    char *out, *err;
} outcome;

/* A word of `cmd` with its escapes decoded in place: \xHH is the byte HH
 * (a newline, ESC or invalid UTF-8 in an argument), \\ a backslash. */
static void unescape(char *t)
{
    char *w = t;
    for (const char *r = t; *r;) {
        if (r[0] == '\\' && r[1] == 'x' && isxdigit((unsigned char)r[2])
            && isxdigit((unsigned char)r[3])) {
            char hex[3] = {r[2], r[3], '\0'};
            *w++ = (char)strtol(hex, NULL, 16);
            r += 4;
        } else if (r[0] == '\\' && r[1] == '\\') {
            *w++ = '\\';
            r += 2;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* Run `cmd` (tokens split on blanks, escapes decoded; leading NAME=VALUE
 * tokens set the environment; "wattsim" is the built CLI) in dir. */
static int run_cmd(const char *cmd, const char *dir, outcome *o)
{
    char *copy = strdup(cmd), *argv[MAX_ARGS + 1], *envs[MAX_ARGS];
    int argc = 0, nenv = 0;
    for (char *t = strtok(copy, " \t\n"); t && argc < MAX_ARGS; t = strtok(NULL, " \t\n")) {
        unescape(t);
        if (argc == 0 && strchr(t, '=') && nenv < MAX_ARGS) { envs[nenv++] = t; continue; }
        argv[argc] = !strcmp(t, "wattsim") && argc == 0 ? (char *)CLI : t;
        argc++;
    }
    argv[argc] = NULL;
    char outp[] = "/tmp/ws-bad-out-XXXXXX", errp[] = "/tmp/ws-bad-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    if (argc == 0 || fo < 0 || fe < 0) { free(copy); return -1; }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fi = open("/dev/null", O_RDONLY);
        if (fi < 0 || dup2(fi, 0) < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0
            || chdir(dir))
            _exit(127);
        alarm(120);          /* a case that hangs (a FIFO read) fails, not the suite */
        for (int i = 0; i < nenv; i++) putenv(envs[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) st = 127 << 8;
    close(fo);
    close(fe);
    o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    o->out = slurp(outp, NULL);
    o->err = slurp(errp, NULL);
    unlink(outp);
    unlink(errp);
    free(copy);
    return o->out && o->err ? 0 : -1;
}

/* Replace {dir} in the expected line by the case's temporary folder. */
static char *expand(const char *tmpl, const char *dir)
{
    size_t cap = strlen(tmpl) + 1;
    for (const char *p = tmpl; (p = strstr(p, "{dir}")); p += 5) cap += strlen(dir);
    char *s = calloc(1, cap), *w = s;
    for (const char *p = tmpl; *p;) {
        if (!strncmp(p, "{dir}", 5)) { w = stpcpy(w, dir); p += 5; }
        else *w++ = *p++;
    }
    return s;
}

/* Check one case; returns a malloc'd description of what is wrong, or NULL. */
static char *check_case(const char *name, int *known_bug)
{
    char cdir[2048], p[4096], *why = NULL;
    snprintf(cdir, sizeof cdir, "%s/%s", BAD_DIR, name);
    snprintf(p, sizeof p, "%s/known-bug", cdir);
    *known_bug = exists(p);
    snprintf(p, sizeof p, "%s/cmd", cdir);
    char *cmd = slurp(p, NULL);
    snprintf(p, sizeof p, "%s/expected", cdir);
    char *expected = slurp(p, NULL);
    snprintf(p, sizeof p, "%s/accept", cdir);
    int accept = exists(p);
    snprintf(p, sizeof p, "%s/warns", cdir);
    char *warns = slurp(p, NULL);
    char tmp[] = "/tmp/ws-bad-case-XXXXXX";
    if (!cmd || (!expected == !accept)) {
        why = strdup("needs a `cmd` and one of `expected` or `accept`");
        goto out;
    }
    if (!mkdtemp(tmp) || copy_tree(BAD_DIR "/_fixture", tmp, 1)
        || copy_tree(cdir, tmp, 1) || gen_all(cdir, tmp)) {
        why = strdup("cannot set up the case folder");
        goto out;
    }
    char *before = snapshot(tmp);
    outcome o = {0};
    if (run_cmd(cmd, tmp, &o)) {
        why = strdup("cannot run the command");
    } else if (getenv("WS_BAD_PRINT")) {
        printf("%-28s %d %s", name, o.status, o.err[0] ? o.err : "\n");
    }
    if (!why && accept) {
        snprintf(p, sizeof p, "%s/out", tmp);
        if (o.status != 0 || !o.out[0])
            asprintf(&why, "valid input rejected (status %d): %s", o.status, o.err);
        else if (!strncmp(cmd, "wattsim run", 11)
                 && !exists(strcat(p, "/summary.csv")))
            why = strdup("run succeeded but wrote no summary.csv");
        else if (warns) {
            char *want = expand(warns, tmp);
            if (strcmp(o.err, want))
                asprintf(&why, "warnings\n  got:\n%s  want:\n%s", o.err, want);
            free(want);
        }
    } else if (!why) {
        char *want = expand(expected, tmp);
        char *after = snapshot(tmp);
        size_t nl = 0;
        for (const char *q = o.err; *q; q++) nl += *q == '\n';
        if (o.status != 2)
            asprintf(&why, "exit status %d, want 2 (stderr: %s)", o.status, o.err);
        else if (o.out[0])
            asprintf(&why, "wrote to stdout: %.200s", o.out);
        else if (nl != 1 || o.err[strlen(o.err) - 1] != '\n')
            asprintf(&why, "stderr is not exactly one line: %s", o.err);
        else if (strcmp(o.err, want))
            asprintf(&why, "stderr\n  got:  %s  want: %s", o.err, want);
        else if (strcmp(before, after))
            asprintf(&why, "files changed\n  before:\n%s  after:\n%s", before, after);
        free(want);
        free(after);
    }
    free(o.out);
    free(o.err);
    free(before);
out:
    if (tmp[strlen(tmp) - 1] != 'X') remove_tree(tmp);
    free(cmd);
    free(expected);
    free(warns);
    return why;
}

static size_t list_cases(char ***out)
{
    DIR *d = opendir(BAD_DIR);
    cr_assert(d, "cannot open %s", BAD_DIR);
    char **v = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || e->d_name[0] == '_') continue;
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", BAD_DIR, e->d_name);
        if (stat(p, &st) || !S_ISDIR(st.st_mode)) continue;
        v = realloc(v, (n + 1) * sizeof *v);
        v[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

/* ------------------------------------------------------------ tests */

Test(bad_inputs, catalogue_is_complete)
{
    /* The categories issue 4 lists must stay covered: a case deleted by
     * mistake fails here, not silently. */
    static const char *must[] = {
        "csv_empty_file", "csv_header_only", "csv_missing_column",
        "csv_duplicate_column", "csv_unknown_column", "csv_field_count",
        "csv_non_numeric", "csv_nan", "csv_inf", "csv_negative_time",
        "csv_zero_power", "csv_bs_fraction", "csv_pl_negative",
        "csv_duplicate_knob", "job_no_runs_at_bs", "gz_truncated", "gz_corrupt",
        "csv_line_over_1mib", "gz_over_limit_option", "gz_over_limit_env",
        "yaml_wrong_type_eta", "yaml_unknown_key", "yaml_duplicate_key",
        "yaml_anchor", "yaml_alias_bomb", "yaml_not_utf8", "csv_not_utf8",
        "yaml_unknown_workload", "yaml_unknown_gpu", "yaml_unknown_bso",
        "b0_outside_B", "ok_crlf", "ok_quoted", "ok_bom", "ok_gz", "ok_run",
    };
    for (size_t i = 0; i < sizeof must / sizeof *must; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s/cmd", BAD_DIR, must[i]);
        cr_expect(exists(p), "catalogue case %s is missing", must[i]);
    }
}

/* Every case whose index in the sorted list is `shard` modulo N_SHARDS.
 * The shards are separate tests, so Criterion runs them in parallel: under
 * valgrind each case costs seconds, and the whole catalogue in one test was
 * the valgrind stage's longest pole. */
#define N_SHARDS 4

static void run_shard(size_t shard)
{
    cr_assert(access(CLI, X_OK) == 0, "CLI not built: %s", CLI);
    char **names;
    size_t n = list_cases(&names), failed = 0, ran = 0;
    cr_assert(n >= 40, "only %zu cases in %s", n, BAD_DIR);
    for (size_t i = 0; i < n; i++) {
        if (i % N_SHARDS != shard) { free(names[i]); continue; }
        ran++;
        int known;
        char *why = check_case(names[i], &known);
        if (known && !why) {
            cr_expect_fail("%s: passes now; delete its known-bug file", names[i]);
            failed++;
        } else if (!known && why) {
            cr_expect_fail("%s: %s", names[i], why);
            failed++;
        } else if (known) {
            cr_log_warn("%s: known bug still there (%s)", names[i], why);
        }
        free(why);
        free(names[i]);
    }
    free(names);
    cr_expect_eq(failed, 0, "%zu of %zu catalogue cases (shard %zu of %d) failed", failed, ran,
                 shard + 1, N_SHARDS);
}

Test(bad_inputs, every_case_shard_1, .timeout = 1100) { run_shard(0); }
Test(bad_inputs, every_case_shard_2, .timeout = 1100) { run_shard(1); }
Test(bad_inputs, every_case_shard_3, .timeout = 1100) { run_shard(2); }
Test(bad_inputs, every_case_shard_4, .timeout = 1100) { run_shard(3); }

/* The runner itself: a case whose expected message is wrong must fail, so
 * that a broken comparison cannot let the whole catalogue pass. */
Test(bad_inputs, runner_detects_a_wrong_message)
{
    char tmp[] = "/tmp/ws-bad-self-XXXXXX";
    cr_assert(mkdtemp(tmp));
    cr_assert_eq(copy_tree(BAD_DIR "/_fixture", tmp, 1), 0);
    outcome o = {0};
    cr_assert_eq(run_cmd("wattsim pareto --traces . --catalogue workloads.yaml"
                         " --gpu g1 --workload nope", tmp, &o), 0);
    cr_expect_eq(o.status, 2);
    cr_expect_str_empty(o.out);
    cr_expect(strstr(o.err, "unknown workload 'nope'") != NULL, "stderr: %s", o.err);
    cr_expect_str_neq(o.err, "wattsim: something else\n");
    free(o.out);
    free(o.err);
    o = (outcome){0};
    cr_assert_eq(run_cmd("wattsim pareto --traces . --catalogue workloads.yaml"
                         " --gpu g1 --workload w --format csv", tmp, &o), 0);
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    /* 6 knobs, header + one line each. */
    size_t nl = 0;
    for (const char *q = o.out; *q; q++) nl += *q == '\n';
    cr_expect_eq(nl, 7, "stdout: %s", o.out);
    free(o.out);
    free(o.err);
    remove_tree(tmp);
}
