/*
 * Run the built `wattsim` binary from a test: argv in, exit status,
 * stdout and stderr out (captured through temp files, so output of any
 * size is fine). Environment: WATTSIM_POLICY_DIR and WATTSIM_TRACES as
 * the caller's, plus extra "NAME=VALUE" entries.
 */
#ifndef WS_TEST_RUN_CLI_H
#define WS_TEST_RUN_CLI_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WS_CLI WS_BUILD_DIR "/sim/wattsim"

typedef struct cli_result {
    int status;               /* exit status, or 128 + signal */
    char *out, *err;          /* NUL-terminated, malloc'd */
    size_t out_len, err_len;
} cli_result;

static inline char *cli_slurp(FILE *f, size_t *len)
{
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert(s);
    *len = fread(s, 1, (size_t)n, f);
    s[*len] = '\0';
    return s;
}

/* argv[0] is ignored (the CLI path is used); argv is NULL-terminated. */
static inline cli_result cli_run(const char *const *argv)
{
    cli_result r = {0};
    FILE *out = tmpfile(), *err = tmpfile();
    cr_assert(out && err);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(fileno(out), 1);
        dup2(fileno(err), 2);
        execv(WS_CLI, (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = cli_slurp(out, &r.out_len);
    r.err = cli_slurp(err, &r.err_len);
    fclose(out);
    fclose(err);
    return r;
}

static inline void cli_free(cli_result *r)
{
    free(r->out);
    free(r->err);
}

/* Under ASan (scripts/test --asan) freed memory sits in a quarantine,
 * which `policy check`'s leak check sees as growth: let the processes a
 * test starts run without it. */
static inline void cli_no_asan_quarantine(void)
{
    const char *o = getenv("ASAN_OPTIONS");
    char buf[2048];
    snprintf(buf, sizeof buf, "%s%squarantine_size_mb=0:thread_local_quarantine_size_kb=0",
             o ? o : "", o && *o ? ":" : "");
    setenv("ASAN_OPTIONS", buf, 1);
}

/* Number of lines in s (a last line without '\n' counts). */
static inline int cli_lines(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++) n += *p == '\n';
    if (*s && s[strlen(s) - 1] != '\n') n++;
    return n;
}

#endif
