/*
 * Guards around policy code (see guard.h): the exit() guard and the working
 * folder, shared by the plugin loader (registry.c) and the instances
 * (plugin.c).
 */
#define _GNU_SOURCE         /* O_PATH */
#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>         /* __fpending */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "wattsim/outfile.h"
#include "wattsim/plugin.h"

/*
 * Policy code runs inside wattsim, and two of its mistakes would otherwise
 * pass for wattsim's own behaviour:
 *  - exit() in a callback would end wattsim with the plugin's status (0!)
 *    and no output. Each thread records the policy and call it is in; an
 *    atexit handler turns an exit during a call into one line on stderr
 *    and exit status 1.
 *  - Writing to stdout would corrupt `--format json`/csv. That is not
 *    guarded here but by the program, for its whole run: the CLI writes
 *    results to a private duplicate of its stdout and points fd 1 at
 *    stderr (wattsim/process.h, ws_stdout_private), so that a thread
 *    policy code started, still printing after its instance is gone,
 *    cannot reach them either. Policies should log through host->log.
 * And one it would make for wattsim's inputs: a chdir() in policy code
 * would make every relative input path read after it (`run` reads the
 * traces again for its figures) name another file or none. The first
 * holder notes the working folder (a descriptor) and the last one leaves
 * it as it was; outputs do not need this (they are written relative to the
 * output folder's descriptor).
 */
_Thread_local const char *ws_guard_who, *ws_guard_call;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int out_users, cwd_saved = -1;
/* Where the last word of a process that dies in policy code goes (stderr;
 * in a watched child, what its parent reads: ws_host_child_init). */
static int note_fd = 2;
/* Off for a library caller (api.c): a program that embeds wattsim keeps
 * its working folder and its exit() as they are. */
static int guards_on = 1;

void ws_policy_guards(int on) { guards_on = on; }

int ws_policy_code_running(void) { return ws_guard_call != NULL; }

/* Whether what stdio holds for f, not yet written, is nothing or ends a
 * line. */
static int pending_ends_line(FILE *f)
{
    size_t n = __fpending(f);
#ifdef __GLIBC__
    return n == 0 || f->_IO_write_ptr[-1] == '\n';
#else
    return n == 0;     /* unknown: end the line (at worst an empty one) */
#endif
}

static void exit_guard(void)
{
    if (!ws_guard_call) return;
    ws_outfile_abandon();          /* no half-written output stays */
    ws_error e;
    ws_fail(&e, "wattsim: %s: %s called exit(); a policy must return an error"
            " instead", ws_guard_who, ws_guard_call);
    size_t n = strlen(e.msg);
    e.msg[n < sizeof e.msg - 1 ? n++ : n - 1] = '\n';
    /* What the policy printed before it called exit() is written first, as
     * its exit() would have: _exit below skips stdio's flush at exit, and
     * on a file or pipe (fully buffered) its lines would be lost. Only
     * stdout and stderr, where policy code prints: results have their own
     * stream (the CLI's), which must not come out half-written. A line the
     * policy left open is ended, so that wattsim's is one of its own. */
    if (!pending_ends_line(stdout)) fputc('\n', stdout);
    fflush(stdout);
    fflush(stderr);
    (void)!write(note_fd, e.msg, n);
    _exit(1);
}

static void guard_init(void) { atexit(exit_guard); }

void ws_guard_enter(void)
{
    if (!guards_on) return;
    pthread_once(&guard_once, guard_init);
    pthread_mutex_lock(&out_lock);
    if (out_users++ == 0) {
#ifdef O_PATH
        cwd_saved = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
        cwd_saved = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
    }
    pthread_mutex_unlock(&out_lock);
}

void ws_guard_leave(void)
{
    if (!guards_on) return;
    pthread_mutex_lock(&out_lock);
    if (--out_users == 0) {
        if (cwd_saved >= 0) {
            (void)!fchdir(cwd_saved);    /* a folder removed meanwhile: nothing to do */
            close(cwd_saved);
            cwd_saved = -1;
        }
    }
    pthread_mutex_unlock(&out_lock);
}

/*
 * Dying of a signal: a policy's crash (wattsim runs policies in-process
 * unless --isolate), or SIGINT/SIGTERM/SIGHUP/SIGQUIT. The handler removes what
 * the command had not finished writing (ws_outfile_abandon: temporaries,
 * folders that hold only the lock), says so in one line -- naming the
 * policy and call when the thread died inside one -- then restores the
 * previous action (the default, or a sanitizer's) and raises the signal
 * again, so the process still ends by it (exit status 128 + N in a shell)
 * and a sanitizer still reports. Only async-signal-safe calls: write,
 * unlink, rmdir, sigaction, raise.
 */
static const int handled[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGTERM, SIGHUP,
                             SIGQUIT};
#define N_HANDLED (sizeof handled / sizeof *handled)
static struct sigaction previous[N_HANDLED];
static pid_t signals_owner;

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

static void on_signal(int sig)
{
    int saved = errno;
    size_t k = 0;
    while (k < N_HANDLED && handled[k] != sig) k++;
    if (getpid() == signals_owner) {
        static const char *const names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT",
                                            "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"};
        ws_outfile_abandon();
        const char *name = k < N_HANDLED ? names[k] : "a signal";
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
            say("wattsim: interrupted by ");
            say(name);
        } else if (ws_guard_call) {
            say("wattsim: ");
            say(ws_guard_who ? ws_guard_who : "a policy");
            say(": ");
            say(ws_guard_call);
            say(" crashed (");
            say(name);
            say("); --isolate runs each cell of a sweep in its own process");
        } else {
            say("wattsim: crashed (");
            say(name);
            say("), a bug in wattsim: please report it");
        }
        say("; unfinished outputs removed\n");
    }
    if (k < N_HANDLED) sigaction(sig, &previous[k], NULL);
    else signal(sig, SIG_DFL);
    raise(sig);
    errno = saved;
}

void ws_host_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    signals_owner = getpid();
    for (size_t k = 0; k < N_HANDLED; k++) {
        struct sigaction old;
        if (sigaction(handled[k], NULL, &old) != 0) continue;
        if (old.sa_handler == SIG_IGN) continue;     /* e.g. nohup: stay ignored */
        if (sigaction(handled[k], &sa, &previous[k]) != 0) continue;
    }
}

/*
 * A forked child that runs policy code for a parent watching it (sweep
 * --isolate, policy check). Its parent learns how it ended from its exit
 * status; this adds which policy call it was in, in one line on `fd`:
 *   wattsim: bso NAME: predict crashed (SIGSEGV)
 *   wattsim: bso NAME: predict called exit(); ...      (exit status 1)
 *   wattsim: bso NAME: predict did not return within 2 s  (SIGALRM)
 * after which the child dies of the signal by its default action, not by a
 * sanitizer's report or the parent's handler (on_signal), so the parent
 * names the signal. The handler runs on a stack of its own: a policy that
 * overflowed its stack still gets its line. Only async-signal-safe calls.
 */
static const int child_handled[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
                                    SIGSYS, SIGALRM};
static const char *const child_names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT",
                                          "SIGTRAP", "SIGSYS", "SIGALRM"};
#define N_CHILD (sizeof child_handled / sizeof *child_handled)
static char child_limit[32];       /* "2 s", for the SIGALRM line */

static void note(const char *s) { (void)!write(note_fd, s, strlen(s)); }

static void on_child_signal(int sig)
{
    size_t k = 0;
    while (k < N_CHILD && child_handled[k] != sig) k++;
    note("wattsim: ");
    if (ws_guard_call) {
        note(ws_guard_who ? ws_guard_who : "a policy");
        note(": ");
        note(ws_guard_call);
        note(sig == SIGALRM ? " did not return within " : " crashed (");
    } else {
        note(sig == SIGALRM ? "did not finish within " : "crashed outside a policy call (");
    }
    if (sig == SIGALRM) {
        note(child_limit);
    } else {
        note(k < N_CHILD ? child_names[k] : "a signal");
        note(")");
    }
    note("\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

void ws_host_child_init(int fd, double timeout)
{
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    note_fd = fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_child_signal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < N_CHILD; k++)
        if (child_handled[k] != SIGALRM || timeout > 0) sigaction(child_handled[k], &sa, NULL);
    if (timeout > 0) {
        snprintf(child_limit, sizeof child_limit, "%g s", timeout);
        struct itimerval it = {{0, 0}, {(time_t)timeout,
                                        (suseconds_t)((timeout - (double)(time_t)timeout) * 1e6)}};
        if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0) it.it_value.tv_usec = 1;
        setitimer(ITIMER_REAL, &it, NULL);
    }
}
