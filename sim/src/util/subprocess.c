/*
 * A function run in a child process the parent watches (wattsim/
 * subprocess.h).
 *
 * The parent polls the child's three pipes (stdout, stderr, report) until
 * all are closed and the child has ended, or its time is up. Like
 * isolate.c's cells, the child leads its own process group, and the group
 * is what gets killed: at the time limit, and after the child ended, so a
 * grandchild holding a pipe open cannot keep the parent waiting. The
 * child's end is looked for without reaping it (waitid WNOWAIT): while it
 * is a zombie its pid, and so its group id, cannot be reused.
 *
 * Being in a group of its own, the child gets no SIGINT, SIGTERM, SIGHUP
 * or SIGQUIT from a terminal, and would outlive a parent killed by one. So
 * while it runs, the parent catches them (wattsim/stopsig.h, as isolate.c
 * does): on one, it kills the child's group and reaps it, gives the signal
 * back its earlier action and raises it again -- the CLI's handler then
 * removes unfinished outputs, says so and ends the process by the signal.
 */
#define _GNU_SOURCE
#include "wattsim/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/stopsig.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

const char *ws_signal_name(int sig, char buf[16])
{
    static const struct { int sig; const char *name; } names[] = {
        {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
        {SIGABRT, "SIGABRT"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"}, {SIGKILL, "SIGKILL"},
        {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGHUP, "SIGHUP"}, {SIGQUIT, "SIGQUIT"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
        {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (names[i].sig == sig) return names[i].name;
    snprintf(buf, 16, "signal %d", sig);
    return buf;
}

void ws_sub_describe(const ws_sub_result *r, double limit, char *buf, size_t size)
{
    char name[16];
    if (r->killed)
        snprintf(buf, size, "was killed at its time limit of %g s", limit);
    else if (WIFSIGNALED(r->status))
        snprintf(buf, size, "was killed by signal %d (%s)", WTERMSIG(r->status),
                 ws_signal_name(WTERMSIG(r->status), name));
    else if (WIFEXITED(r->status) && WEXITSTATUS(r->status))
        snprintf(buf, size, "exited with status %d", WEXITSTATUS(r->status));
    else
        buf[0] = '\0';
}

void ws_sub_result_free(ws_sub_result *r)
{
    free(r->out.data);
    free(r->err.data);
    free(r->report.data);
    memset(r, 0, sizeof *r);
}

/* Read what fd has into s (keeping cap bytes); 0 at EOF or an error. */
static int drain(int fd, ws_sub_stream *s, size_t cap)
{
    char buf[8192];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
        if (n <= 0) return 0;
        size_t keep = s->len < cap ? cap - s->len : 0;
        if (keep > (size_t)n) keep = (size_t)n;
        memcpy(s->data + s->len, buf, keep);
        s->len += keep;
        s->data[s->len] = '\0';
        s->total += (size_t)n;
    }
}

/* In the child: its own group, the signals' actions as they were, the
 * pipes on 1 and 2, fn, _exit. */
static void child(ws_sub_fn fn, void *arg, const int out[2], const int err[2],
                  const int rep[2], ws_stop_catch *stop)
{
    setpgid(0, 0);
    ws_stop_catch_end(stop);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0 && nul != 0) {
        dup2(nul, 0);
        close(nul);
    }
    close(out[0]);
    close(err[0]);
    close(rep[0]);
    if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(125);
    close(out[1]);
    close(err[1]);
    int rc = fn(arg, rep[1]);
    /* Its own stdout and stderr (the pipes), not the copies of the
     * parent's other streams it inherited: those are the parent's to
     * write. */
    fflush(stdout);
    fflush(stderr);
    _exit(rc & 0xFF);
}

int ws_sub_run(ws_sub_fn fn, void *arg, double limit, size_t cap, ws_sub_result *r,
               ws_error *err)
{
    memset(r, 0, sizeof *r);
    int p[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    ws_sub_stream *streams[3] = {&r->out, &r->err, &r->report};
    for (int i = 0; i < 3; i++) {
        if (!(streams[i]->data = malloc(cap + 1))) {
            ws_sub_result_free(r);
            return ws_fail(err, "out of memory");
        }
        streams[i]->data[0] = '\0';
    }
    for (int i = 0; i < 3; i++)
        if (pipe2(p[i], O_CLOEXEC)) {
            ws_fail(err, "cannot start a check process: pipe: %s", strerror(errno));
            for (int j = 0; j < i; j++) {
                close(p[j][0]);
                close(p[j][1]);
            }
            ws_sub_result_free(r);
            return -1;
        }
    ws_stop_catch stop = {0};
    ws_stop_catch_begin(&stop);    /* before the fork: no signal is missed */
    fflush(NULL);                  /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) child(fn, arg, p[0], p[1], p[2], &stop);
    for (int i = 0; i < 3; i++) close(p[i][1]);
    if (pid < 0) {
        int e = errno;
        ws_stop_catch_end(&stop);
        for (int i = 0; i < 3; i++) close(p[i][0]);
        ws_sub_result_free(r);
        return ws_fail(err, "cannot start a check process: fork: %s", strerror(e));
    }
    setpgid(pid, pid);             /* also here: no race with a kill before the child's */
    int fds[3] = {p[0][0], p[1][0], p[2][0]};
    for (int i = 0; i < 3; i++) fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    const double deadline = limit > 0 ? now() + limit : INFINITY;
    int ended = 0, status = 0, sig = 0;
    for (;;) {
        if (!ended && (sig = ws_stop_caught(&stop))) break;
        struct pollfd pfd[3];
        int n = 0, slot[3];
        for (int i = 0; i < 3; i++)
            if (fds[i] >= 0) {
                pfd[n] = (struct pollfd){fds[i], POLLIN, 0};
                slot[n++] = i;
            }
        if (ended && n == 0) break;
        /* Look for the child's end at least every 50 ms: a grandchild may
         * hold the pipes open after it is gone. */
        int wait_ms = 50;
        if (isfinite(deadline)) {
            double ms = ceil((deadline - now()) * 1000);
            if (ms < wait_ms) wait_ms = ms < 0 ? 0 : (int)ms;
        }
        if (poll(pfd, (nfds_t)n, wait_ms) < 0 && errno != EINTR) break;
        for (int q = 0; q < n; q++)
            if (pfd[q].revents && !drain(fds[slot[q]], streams[slot[q]], cap)) {
                close(fds[slot[q]]);
                fds[slot[q]] = -1;
            }
        if (!ended) {
            siginfo_t si = {0};
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0
                && si.si_pid == pid) {
                kill(-pid, SIGKILL);           /* whatever it spawned goes too */
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
                ended = 1;
                for (int i = 0; i < 3; i++)    /* what it wrote before it ended */
                    if (fds[i] >= 0) {
                        drain(fds[i], streams[i], cap);
                        close(fds[i]);
                        fds[i] = -1;
                    }
            } else if (now() >= deadline) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
                ended = r->killed = 1;
                for (int i = 0; i < 3; i++)
                    if (fds[i] >= 0) {
                        drain(fds[i], streams[i], cap);
                        close(fds[i]);
                        fds[i] = -1;
                    }
            }
        }
    }
    /* A stop signal, or poll failing: it and whatever it spawned go. */
    if (!ended) status = ws_group_kill(pid);
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0) close(fds[i]);
    r->status = status;
    if (!sig) sig = ws_stop_caught(&stop);  /* one that came as it ended */
    ws_stop_catch_end(&stop);
    if (sig) {
        /* Now that nothing of the child's is left: the signal as if it had
         * come now (the caller's action; the default one ends us). */
        raise(sig);
        ws_sub_result_free(r);
        return ws_fail(err, "interrupted by %s", ws_stop_name(sig));
    }
    return 0;
}
