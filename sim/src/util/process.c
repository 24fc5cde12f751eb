/* A process's start: standard descriptors, SIGXFSZ, the locale, a private
 * stdout; see wattsim/process.h. */
#define _GNU_SOURCE
#include "wattsim/process.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int ws_process_init(void)
{
    /* open() returns the lowest free descriptor: filling 0, then 1, then 2
     * in order puts /dev/null exactly on the closed ones. */
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        int nul = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
        if (nul < 0) return -1;
        if (nul != fd) {                 /* cannot happen: fd was the lowest */
            close(nul);
            return -1;
        }
    }
    signal(SIGXFSZ, SIG_IGN);
    /* A reader that went away (`wattsim sweep ... 2>&1 | head`) must not
     * kill the command mid-run, leaving temporaries and no results: a
     * write to it fails with EPIPE instead, the command completes its
     * outputs, and ws_cli_exit ends it with 128 + SIGPIPE, as a shell
     * pipeline expects, without a message no one would read. */
    signal(SIGPIPE, SIG_IGN);
    ws_thread_c_locale();
    return 0;
}

void ws_thread_c_locale(void)
{
    /* glibc's "C" locale object is static: newlocale allocates nothing for
     * it, and the same one serves every thread. */
    static locale_t c;
    locale_t mine = __atomic_load_n(&c, __ATOMIC_ACQUIRE);
    if (!mine) {
        mine = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (!mine) return;
        __atomic_store_n(&c, mine, __ATOMIC_RELEASE);
    }
    uselocale(mine);
}

FILE *ws_stdout_private(void)
{
    fflush(stdout);
    int fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) return NULL;
    /* Buffered as stdout would be: by lines on a terminal (glibc looks at
     * isatty at the first write), else in blocks. */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (dup2(2, 1) < 0) {
        int e = errno;
        fclose(f);
        errno = e;
        return NULL;
    }
    return f;
}

/* The locks of WS_FORK_SAFE_MUTEX: registered by the library's
 * constructors, one per module, before any thread can exist. */
enum { WS_FORK_SAFE_MAX = 32 };
static pthread_mutex_t *fork_safe[WS_FORK_SAFE_MAX];
static int n_fork_safe;

static void fork_safe_child(void)
{
    for (int i = 0; i < n_fork_safe; i++) *fork_safe[i] = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

void ws_mutex_fork_safe(pthread_mutex_t *m)
{
    if (!n_fork_safe) pthread_atfork(NULL, NULL, fork_safe_child);
    /* more modules than slots is a build's bug: fail at load, not in a
     * child that would hang */
    if (n_fork_safe == WS_FORK_SAFE_MAX) abort();
    fork_safe[n_fork_safe++] = m;
}
