/*
 * wattsim-bench, at token sizes (--quick): it runs, and each of its tables
 * comes out once when stdout is a file. Its children are forked while
 * stdio holds the tables printed so far; a child that flushed its copy
 * (freopen of stdout, before exec) wrote the sweep table again, once per
 * reader child: 12 times (issue 26).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH WS_BUILD_DIR "/sim/wattsim-bench"

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

Test(bench, each_table_once_on_a_file, .timeout = 600)
{
    char out[] = "/tmp/ws-bench-out-XXXXXX";
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int nul = open("/dev/null", 0);
        if (dup2(fd, 1) < 0 || nul < 0 || dup2(nul, 2) < 0) _exit(126);
        /* Under valgrind (its preload is in LD_PRELOAD) the Python row is
         * left out, as under the sanitizers: an interpreter embedded in
         * wattsim (the py: bridge) keeps its allocations at exit. */
        const char *pre = getenv("LD_PRELOAD");
        if (pre && strstr(pre, "vgpreload")) setenv("WATTSIM_PYTHON", "/nonexistent/python3", 1);
        execl(BENCH, "wattsim-bench", "--quick", (char *)NULL);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);     /* the child's writes moved it */
    FILE *f = fdopen(fd, "r");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(out);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "wattsim-bench ended with %#x", st);
    cr_expect_eq(count(text, "wattsim-bench: zeus + jit"), 1, "%s", text);
    cr_expect_eq(count(text, "mean over "), 1, "%s", text);
    cr_expect_eq(count(text, "sweep (1 thread)"), 1, "%s", text);
    cr_expect_eq(count(text, "paper-scale"), 1, "%s", text);
    cr_expect_eq(count(text, "reader (wall, 1 thread)"), 1, "%s", text);
    /* a sweep row each: paper-scale, three one-job sweeps, C and Python */
    cr_expect_eq(count(text, "one job, 1 seed"), 3, "%s", text);
    cr_expect_eq(count(text, "(failed)"), 0, "%s", text);
}
