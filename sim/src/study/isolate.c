/*
 * `--isolate`: each sweep cell (all seeds of one policy pair x gpu x
 * workload x eta x beta) runs in a forked child process, so a policy that
 * crashes, aborts or hangs takes down only its cell. The child runs the
 * cell's simulations with the same code as in process (ws_sweep_run_sim,
 * passed in as `run`)
 * and sends each result as a journal record (journal.c: binary, exact,
 * with a checksum) over a pipe; the parent applies them only when the child exited
 * with status 0 after sending every one. Otherwise -- a signal, a nonzero
 * exit, a missing or malformed record, or the time-out -- every
 * simulation of the cell is recorded as failed with one message, because a
 * cell's seeds are one unit of work here (and a time-out would otherwise
 * make the number of surviving seeds depend on the machine's speed).
 *
 * The parent is one thread with up to `jobs` children, watched with poll():
 * results and the timing do not depend on how many run at a time.
 *
 * Each child leads its own process group, and the group is what gets
 * killed: on the time-out, after the child ends (anything a plugin spawned
 * goes with it), and when the parent gets SIGINT, SIGTERM, SIGHUP (the
 * ssh session that started it dropped) or SIGQUIT -- then every group is
 * killed and reaped, and wattsim exits with 128 + the signal (130, 143,
 * 129, 131) after one line; the journal keeps the cells already done.
 * Being in groups of their own, the cells get none of these signals from
 * a terminal themselves: only this parent can stop them.
 *
 * What a child's policies write to stderr or stdout (their log lines,
 * their prints) comes to the parent on a second pipe and is passed on,
 * line by line, prefixed with the cell ("wattsim: CELL: LINE"), so that
 * isolation does not hide why a cell failed. A third pipe carries the
 * child's last word (ws_host_child_init): the policy call it was in when
 * it crashed or called exit(), which the cell's error then names.
 *
 * --cell-memory: a child may add that many bytes of address space to what
 * it inherited at the fork (RLIMIT_AS, set in the child before it runs
 * anything), so a policy's runaway allocation fails in its cell -- the
 * allocation returns NULL, which the policy reports or crashes on -- and
 * the cell's error says the limit was in force.
 */
#define _GNU_SOURCE                /* strsignal */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wattsim/stopsig.h"
#include "sweep_run.h"

#define LINE_MAX_FWD 1024
#define NOTE_MAX 512

typedef struct child {
    pid_t pid;                 /* 0: slot free */
    int fd;                    /* read end; -1 after EOF */
    int efd;                   /* its stderr and stdout; -1 after EOF */
    int nfd;                   /* its last word; -1 after EOF */
    size_t cell;
    char *buf;
    size_t len, cap;
    char line[LINE_MAX_FWD];   /* a line of its stderr not yet complete */
    size_t line_len;
    char note[NOTE_MAX];       /* what it said on nfd */
    size_t note_len;
    double deadline;           /* monotonic seconds; INFINITY = none */
    int timed_out;
} child;

/* The address space the calling process has mapped, in bytes (0: unknown). */
static size_t mapped_bytes(void)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    unsigned long long pages = strtoull(buf, NULL, 10);
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)(pages * (unsigned long long)page) : 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cell_has_work(const ws_sweep *s, const unsigned char *todo, size_t cell)
{
    for (size_t k = 0; k < s->n_seeds; k++)
        if (todo[cell * s->n_seeds + k]) return 1;
    return 0;
}

/* In the child: run the cell, write the records, never return. */
static void child_main(ws_sweep *s, const ws_sweep_policy *pol, const unsigned char *todo,
                       size_t cell, size_t memory, ws_sweep_run_fn run, int fd, int efd,
                       int nfd)
{
    /* A crashing policy must end this process with its signal, not with a
     * sanitizer's or the plugin's report, so the parent can name it; and its
     * output (ASan reports included) must not interleave with the parent's
     * one line per failure. */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGPIPE,
                               SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    setpgid(0, 0);                 /* its own group, which the parent kills */
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) signal(sigs[k], SIG_DFL);
    if (memory) {
        /* what it has now (the parent's image), plus its allowance */
        size_t base = mapped_bytes();
        struct rlimit rl;
        if (!base || getrlimit(RLIMIT_AS, &rl)) _exit(4);
        rlim_t want = base + memory < base ? RLIM_INFINITY : (rlim_t)(base + memory);
        if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_AS, &rl)) _exit(4);
    }
    /* Its stdout and stderr to the parent, which passes them on; the
     * policy call it dies in, or calls exit() in, named on nfd. */
    if (dup2(efd, 1) < 0 || dup2(efd, 2) < 0) _exit(3);
    if (efd > 2) close(efd);
    ws_host_child_init(nfd, 0);
    FILE *f = fdopen(fd, "w");
    if (!f) _exit(3);
    for (size_t k = 0; k < s->n_seeds; k++) {
        size_t i = cell * s->n_seeds + k;
        if (!todo[i]) continue;
        ws_error why = {{0}};
        run(s, pol, i, &why, NULL);
        if (ws_sweep_record_write(f, s, i, NULL, why.msg) < 0 || fflush(f)) _exit(3);
    }
    /* What the policies left in stdio's buffers goes to the parent (the
     * parent's own buffers were flushed before the fork). _exit: no atexit
     * handlers, no leak report for the parent's heap this process
     * inherited. */
    fflush(stdout);
    fflush(stderr);
    _exit(fclose(f) ? 3 : 0);
}

static void fail_cell(ws_sweep *s, const unsigned char *todo, size_t cell, const char *msg)
{
    for (size_t k = 0; k < s->n_seeds; k++) {
        size_t i = cell * s->n_seeds + k;
        if (todo[i]) ws_sweep_sim_fail(s, i, msg);
    }
}

/* " (its memory limited to N MiB by --cell-memory)" when a limit is set. */
static void memory_note(char *buf, size_t n, size_t memory)
{
    buf[0] = '\0';
    if (memory)
        snprintf(buf, n, " (it may add at most %.4g MiB to its memory: --cell-memory;"
                 " an allocation past that fails)", (double)memory / 1048576.0);
}

/* Apply a finished child's records, or fail its cell. */
static void collect(ws_sweep *s, const unsigned char *todo, child *c, int status, double timeout,
                    size_t memory)
{
    char note[160];
    memory_note(note, sizeof note, memory);
    char msg[WS_ERROR_MAX + 64];      /* room for the prefix of a record's error */
    msg[0] = '\0';
    /* The call it was in ("bso NAME: predict crashed (SIGSEGV)"), from its
     * last word, after a ": ". */
    char call[NOTE_MAX + 2] = "";
    if (!strncmp(c->note, "wattsim: ", 9))
        snprintf(call, sizeof call, ": %.*s", (int)strcspn(c->note + 9, "\n"), c->note + 9);
    if (c->timed_out)
        snprintf(msg, sizeof msg, "policy process timed out after %g s", timeout);
    else if (WIFSIGNALED(status))
        snprintf(msg, sizeof msg, "policy process killed by signal %d (%s)%s%s",
                 WTERMSIG(status), strsignal(WTERMSIG(status)), call, note);
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 4 && memory)
        snprintf(msg, sizeof msg, "policy process could not set its memory limit"
                 " (--cell-memory)");
    else if (!WIFEXITED(status) || WEXITSTATUS(status))
        snprintf(msg, sizeof msg, "policy process exited with status %d%s%s",
                 WEXITSTATUS(status), call, note);
    else {
        /* Check every record before applying any, then apply them. */
        size_t n_todo = 0, n_got = 0;
        for (size_t k = 0; k < s->n_seeds; k++) n_todo += todo[c->cell * s->n_seeds + k];
        for (int apply = 0; apply < 2 && !msg[0]; apply++) {
            const unsigned char *p = (const unsigned char *)c->buf, *end = p + c->len;
            n_got = 0;
            while (p < end) {
                size_t left = (size_t)(end - p);
                size_t len = left < WS_RECORD_SIZE ? 0 : ws_sweep_record_len(s, p);
                if (!len || len > left) {
                    snprintf(msg, sizeof msg, "policy process sent a cut-off record");
                    break;
                }
                size_t i;
                int ok;
                ws_error e = {{0}};
                int bad = ws_sweep_record_parse(s, p, apply, &i, &ok, &e);
                if (!bad && (i / s->n_seeds != c->cell || !todo[i]))
                    bad = ws_fail(&e, "simulation %zu is not one it was given", i);
                if (bad) {
                    snprintf(msg, sizeof msg, "policy process sent a bad record: %s", e.msg);
                    break;
                }
                n_got++;
                p += len;
            }
            if (!msg[0] && n_got != n_todo)
                snprintf(msg, sizeof msg, "policy process sent %zu of %zu results", n_got, n_todo);
        }
    }
    if (msg[0]) fail_cell(s, todo, c->cell, msg);
}

static void release(child *c)
{
    if (c->fd >= 0) close(c->fd);
    if (c->efd >= 0) close(c->efd);
    if (c->nfd >= 0) close(c->nfd);
    free(c->buf);
    memset(c, 0, sizeof *c);
    c->fd = c->efd = c->nfd = -1;
}

static int start(ws_sweep *s, const ws_sweep_policy *pol, const unsigned char *todo,
                 size_t cell, double timeout, size_t memory, ws_sweep_run_fn run, child *c,
                 ws_error *err)
{
    int fd[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    for (int k = 0; k < 3; k++)
        if (pipe2(fd[k], O_CLOEXEC)) {
            int e = errno;
            for (int j = 0; j < k; j++) {
                close(fd[j][0]);
                close(fd[j][1]);
            }
            return ws_fail(err, "cannot start a policy process: pipe: %s", strerror(e));
        }
    fflush(NULL);                  /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        for (int k = 0; k < 3; k++) {
            close(fd[k][0]);
            close(fd[k][1]);
        }
        return ws_fail(err, "cannot start a policy process: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        for (int k = 0; k < 3; k++) close(fd[k][0]);
        child_main(s, pol, todo, cell, memory, run, fd[0][1], fd[1][1], fd[2][1]);
    }
    for (int k = 0; k < 3; k++) close(fd[k][1]);
    setpgid(pid, pid);             /* also here: no race with a kill before the child's */
    /* Non-blocking: drain() reads until the pipe is empty, never waits. */
    for (int k = 0; k < 3; k++) fcntl(fd[k][0], F_SETFL, fcntl(fd[k][0], F_GETFL) | O_NONBLOCK);
    c->pid = pid;
    c->fd = fd[0][0];
    c->efd = fd[1][0];
    c->nfd = fd[2][0];
    c->cell = cell;
    c->deadline = timeout > 0 ? now() + timeout : INFINITY;
    return 0;
}

/* One line of a child's stderr, passed on with its cell in front (a
 * leading "wattsim: " of its own dropped: the line is wattsim's now). */
static void forward_line(const ws_sweep *s, child *c)
{
    char cell[160], text[4 * LINE_MAX_FWD + 1];
    c->line[c->line_len] = '\0';
    const char *l = c->line;
    if (!strncmp(l, "wattsim: ", 9)) l += 9;
    ws_text_escape(text, sizeof text, l);
    ws_sweep_cell_name(s, c->cell, cell, sizeof cell);
    ws_line("wattsim: %s: %s", cell, text);
    c->line_len = 0;
}

/* Read a child's stderr and pass it on line by line; at EOF, also the
 * part line it left. */
static void drain_err(const ws_sweep *s, child *c)
{
    for (;;) {
        char buf[4096];
        ssize_t n = read(c->efd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            if (c->line_len) forward_line(s, c);
            close(c->efd);
            c->efd = -1;
            return;
        }
        for (ssize_t k = 0; k < n; k++) {
            if (buf[k] == '\n') forward_line(s, c);
            else {
                c->line[c->line_len++] = buf[k] ? buf[k] : ' ';
                if (c->line_len == LINE_MAX_FWD - 1) forward_line(s, c);
            }
        }
    }
}

/* Keep what the child says on nfd (its first NOTE_MAX - 1 bytes). */
static void drain_note(child *c)
{
    for (;;) {
        char buf[512];
        ssize_t n = read(c->nfd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            close(c->nfd);
            c->nfd = -1;
            return;
        }
        size_t keep = NOTE_MAX - 1 - c->note_len;
        if (keep > (size_t)n) keep = (size_t)n;
        memcpy(c->note + c->note_len, buf, keep);
        c->note_len += keep;
        c->note[c->note_len] = '\0';
    }
}

/* Read what is there; EOF closes the fd. */
static void drain(child *c)
{
    for (;;) {
        if (c->cap - c->len < 65536) {
            size_t cap = c->cap ? 2 * c->cap : 131072;
            char *b = realloc(c->buf, cap);
            if (!b) {              /* treated as a cut-off stream */
                close(c->fd);
                c->fd = -1;
                return;
            }
            c->buf = b;
            c->cap = cap;
        }
        ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (n > 0) { c->len += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        close(c->fd);
        c->fd = -1;
        return;
    }
}

int ws_sweep_run_isolated(ws_sweep *s, const ws_sweep_policy *pol, const unsigned char *todo,
                          int jobs, double timeout, size_t memory, ws_sweep_run_fn run,
                          ws_sweep_done_fn done, int (*tick)(void *), void *ctx, ws_error *err)
{
    size_t n_cells = ws_sweep_n_cells(s), next = 0;
    if (jobs < 1) jobs = 1;
    child *kids = calloc((size_t)jobs, sizeof *kids);
    struct pollfd *pfd = calloc(3 * (size_t)jobs, sizeof *pfd);
    int *slot = calloc(3 * (size_t)jobs, sizeof *slot);   /* 3 * child + which pipe */
    int rc = 0, active = 0, stop_sig = 0;
    /* SIGINT/SIGTERM/SIGHUP/SIGQUIT while cells run: noted by the handler,
     * acted on by the loop (poll returns EINTR). A library caller keeps its
     * own signal handling: it stops us through tick. */
    ws_stop_catch stop = {0};
    if (!tick) ws_stop_catch_begin(&stop);
    if (!kids || !pfd || !slot) { rc = ws_fail(err, "out of memory"); goto out; }
    for (int k = 0; k < jobs; k++) kids[k].fd = kids[k].efd = kids[k].nfd = -1;
    for (;;) {
        /* Fill free slots with the next cells that have work, in plan order. */
        for (int k = 0; k < jobs && !rc; k++) {
            if (kids[k].pid) continue;
            while (next < n_cells && !cell_has_work(s, todo, next)) next++;
            if (next >= n_cells) break;
            if (start(s, pol, todo, next, timeout, memory, run, &kids[k], err)) { rc = -1; break; }
            next++;
            active++;
        }
        if (rc || !active || (stop_sig = ws_stop_caught(&stop))) break;
        if (tick && tick(ctx)) {
            rc = ws_fail(err, "cancelled");
            break;
        }
        /* Wait for output, an exit or the nearest deadline. */
        int n = 0, wait_ms = -1;
        double t = now();
        for (int k = 0; k < jobs; k++) {
            if (!kids[k].pid) continue;
            if (kids[k].efd >= 0) {
                pfd[n] = (struct pollfd){kids[k].efd, POLLIN, 0};
                slot[n++] = 3 * k + 1;
            }
            if (kids[k].nfd >= 0) {
                pfd[n] = (struct pollfd){kids[k].nfd, POLLIN, 0};
                slot[n++] = 3 * k + 2;
            }
            if (kids[k].fd >= 0) {
                pfd[n] = (struct pollfd){kids[k].fd, POLLIN, 0};
                slot[n++] = 3 * k;
            } else if (wait_ms < 0 || wait_ms > 10) {
                wait_ms = 10;      /* stream closed, process not yet gone */
            }
            /* A grandchild may hold the pipe open after the child is gone:
             * look for exits at least every 50 ms. */
            if (wait_ms < 0 || wait_ms > 50) wait_ms = 50;
            if (isfinite(kids[k].deadline)) {
                double ms = ceil((kids[k].deadline - t) * 1000);
                int m = ms < 0 ? 0 : ms > 1e9 ? 1000000000 : (int)ms;
                if (wait_ms < 0 || m < wait_ms) wait_ms = m;
            }
        }
        if (tick && (wait_ms < 0 || wait_ms > 100)) wait_ms = 100;
        if (poll(pfd, (nfds_t)n, wait_ms) < 0 && errno != EINTR) {
            rc = ws_fail(err, "poll: %s", strerror(errno));
            break;
        }
        if ((stop_sig = ws_stop_caught(&stop))) break;
        for (int q = 0; q < n; q++)
            if (pfd[q].revents) {
                child *c = &kids[slot[q] / 3];
                if (slot[q] % 3 == 0) drain(c);
                else if (slot[q] % 3 == 1) drain_err(s, c);
                else drain_note(c);
            }
        t = now();
        for (int k = 0; k < jobs; k++) {
            child *c = &kids[k];
            if (!c->pid) continue;
            int status = 0;
            pid_t w = 0;
            if (t >= c->deadline) {
                /* SIGKILL cannot be caught: the wait is short. */
                kill(-c->pid, SIGKILL);
                kill(c->pid, SIGKILL);
                c->timed_out = 1;
                while ((w = waitpid(c->pid, &status, 0)) < 0 && errno == EINTR) {}
                if (c->efd >= 0) drain_err(s, c);      /* what it said till then */
                if (c->efd >= 0 && c->line_len) forward_line(s, c);
            } else {
                /* Ended? Look without reaping: while the child is a zombie its
                 * pid, and so its group id, cannot be reused, so the group
                 * kill below hits only what it spawned. */
                siginfo_t si = {0};
                if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0
                    && si.si_pid == c->pid) {
                    kill(-c->pid, SIGKILL);   /* whatever it spawned goes too */
                    while ((w = waitpid(c->pid, &status, 0)) < 0 && errno == EINTR) {}
                    if (c->fd >= 0) drain(c); /* what it sent before it ended */
                    if (c->efd >= 0) drain_err(s, c);
                    if (c->efd >= 0 && c->line_len) forward_line(s, c);
                    if (c->nfd >= 0) drain_note(c);
                }
            }
            if (w == 0) continue;
            if (w < 0) status = 255 << 8;      /* lost (should not happen): a failure */
            collect(s, todo, c, status, timeout, memory);
            for (size_t i = 0; i < s->n_seeds; i++)
                if (todo[c->cell * s->n_seeds + i]) done(ctx, c->cell * s->n_seeds + i);
            release(c);
            active--;
        }
    }
out:
    /* After a failure to start one, or a signal: stop the rest. */
    for (int k = 0; kids && k < jobs; k++)
        if (kids[k].pid) {
            ws_group_kill(kids[k].pid);
            release(&kids[k]);
        }
    free(kids);
    free(pfd);
    free(slot);
    if (!stop_sig) stop_sig = ws_stop_caught(&stop);   /* one that came at the end */
    ws_stop_catch_end(&stop);
    if (stop_sig) {
        ws_outfile_abandon();      /* the journal's last batch kept; temporaries gone */
        fprintf(stderr, "wattsim: interrupted by %s; policy processes stopped (--resume continues"
                " from the journal)\n", ws_stop_name(stop_sig));
        exit(128 + stop_sig);
    }
    return rc;
}
