/*
 * A temporary folder per test, for suites whose tests write small files:
 * tmpdir_make() in the suite's .init, tmpdir_remove() in its .fini (it
 * removes the folder and everything in it).
 */
#ifndef WS_TEST_TMPDIR_H
#define WS_TEST_TMPDIR_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[64];

/* template: e.g. "/tmp/wscsv.XXXXXX". */
static inline void tmpdir_make(const char *template)
{
    snprintf(tmp, sizeof tmp, "%s", template);
    cr_assert_not_null(mkdtemp(tmp), "mkdtemp failed");
}

static inline void tmpdir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
}

/* Exit status of a shell command line (printf format); 128 + N when signal
 * N ended it. */
static inline int run_shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int run_shell(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* "<tmp>/<name>" in a static buffer (one at a time). */
static inline const char *tp(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp, name);
    return p;
}

/* Write text to <tmp>/<name>. */
static inline void write_file(const char *name, const char *text)
{
    FILE *f = fopen(tp(name), "wb");
    cr_assert_not_null(f, "cannot write %s", tp(name));
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* The whole of a file, NUL-terminated (malloc'd); fails the test if it
 * cannot be read. */
static inline char *slurp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    cr_assert_geq(n, 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Expects <tmp>/<a>/<f> and <tmp>/<b>/<f> to hold the same text for each
 * of the n files f. */
static inline void tmpdir_expect_same_files(const char *a, const char *b,
                                            const char *const *files, int n)
{
    for (int i = 0; i < n; i++) {
        char x[600], y[600];
        snprintf(x, sizeof x, "%s/%s/%s", tmp, a, files[i]);
        snprintf(y, sizeof y, "%s/%s/%s", tmp, b, files[i]);
        char *p = slurp_file(x), *q = slurp_file(y);
        cr_expect_str_eq(p, q, "%s differs between %s and %s", files[i], a, b);
        free(p);
        free(q);
    }
}

/* Start the command argv (argv[0] its path; NULL-terminated) with stdout
 * and stderr to /dev/null and, unless env is NULL, with env
 * ("NAME=VALUE") added; returns its pid. */
static inline pid_t tmpdir_spawn_quiet(char *const argv[], const char *env)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int dn = open("/dev/null", O_WRONLY);
        dup2(dn, 1);
        dup2(dn, 2);
        if (env) putenv((char *)env);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Peak RSS (KiB) of the command argv, run as tmpdir_spawn_quiet runs it;
 * fails the test unless it exits 0. */
static inline long tmpdir_peak_kib(char *const argv[], const char *env)
{
    const pid_t pid = tmpdir_spawn_quiet(argv, env);
    int st;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed", argv[0]);
    return ru.ru_maxrss;
}

#endif
