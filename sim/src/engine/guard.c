/*
 * Guards around policy code (see guard.h): the exit() guard and the stdout
 * redirection, shared by the plugin loader (registry.c) and the instances
 * (plugin.c).
 */
#include "guard.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Policy code runs inside wattsim, and two of its mistakes would otherwise
 * pass for wattsim's own behaviour:
 *  - exit() in a callback would end wattsim with the plugin's status (0!)
 *    and no output. Each thread records the policy and call it is in; an
 *    atexit handler turns an exit during a call into one line on stderr
 *    and exit status 1.
 *  - Writing to stdout would corrupt `--format json`/csv. While a policy
 *    instance exists or a plugin is being loaded or unloaded, fd 1 points
 *    to stderr (stdio flushed at both switches); wattsim writes its results
 *    after it has freed its instances. Policies should log through
 *    host->log instead.
 */
_Thread_local const char *ws_guard_who, *ws_guard_call;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int out_users, out_saved = -1;

static void exit_guard(void)
{
    if (!ws_guard_call) return;
    fprintf(stderr, "wattsim: %s: %s called exit(); a policy must return an error"
            " instead\n", ws_guard_who, ws_guard_call);
    fflush(stderr);
    _exit(1);
}

static void guard_init(void) { atexit(exit_guard); }

void ws_guard_stdout_enter(void)
{
    pthread_once(&guard_once, guard_init);
    pthread_mutex_lock(&out_lock);
    if (out_users++ == 0) {
        fflush(stdout);
        int saved = fcntl(1, F_DUPFD_CLOEXEC, 3);
        if (saved >= 0 && dup2(2, 1) >= 0) out_saved = saved;
        else if (saved >= 0) close(saved);
    }
    pthread_mutex_unlock(&out_lock);
}

void ws_guard_stdout_leave(void)
{
    pthread_mutex_lock(&out_lock);
    if (--out_users == 0 && out_saved >= 0) {
        fflush(stdout);
        dup2(out_saved, 1);
        close(out_saved);
        out_saved = -1;
    }
    pthread_mutex_unlock(&out_lock);
}
