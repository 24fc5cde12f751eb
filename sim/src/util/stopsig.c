/* The stop signals while children in groups of their own run; see
 * wattsim/stopsig.h. */
#include "wattsim/stopsig.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>

static const int stop_sigs[WS_STOP_N] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static volatile sig_atomic_t stop_sig;

static void on_stop(int sig) { stop_sig = sig; }

void ws_stop_catch_begin(ws_stop_catch *c)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;       /* no SA_RESTART: poll and waitpid return EINTR */
    sigemptyset(&sa.sa_mask);
    stop_sig = 0;
    for (int k = 0; k < WS_STOP_N; k++) {
        sigaction(stop_sigs[k], NULL, &c->old[k]);
        /* ignored when started (nohup): stays ignored */
        if (c->old[k].sa_handler != SIG_IGN) sigaction(stop_sigs[k], &sa, NULL);
    }
    c->on = 1;
}

int ws_stop_caught(const ws_stop_catch *c) { return c->on ? (int)stop_sig : 0; }

void ws_stop_catch_end(ws_stop_catch *c)
{
    if (!c->on) return;
    for (int k = 0; k < WS_STOP_N; k++) sigaction(stop_sigs[k], &c->old[k], NULL);
    c->on = 0;
}

const char *ws_stop_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP"
           : sig == SIGQUIT ? "SIGQUIT" : "a signal";
}

int ws_group_kill(pid_t pid)
{
    int status = 0;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
}
