/*
 * Children that run policy code in process groups of their own (sweep
 * --isolate's cells, `policy check`'s checks), and the signals that stop
 * their parent: SIGINT (Ctrl-C), SIGTERM, SIGHUP (the terminal or ssh
 * session went away) and SIGQUIT. Such a child gets none of these from a
 * terminal -- it is not in the terminal's foreground group -- so only its
 * parent can stop it; a parent that died of one of them would leave it
 * running, re-parented to init, with whatever it spawned.
 *
 * So while it has such children, the parent catches those signals (a
 * handler that only notes the signal; no SA_RESTART, so poll() and
 * waitpid() return EINTR), kills every child's group and reaps it, and
 * only then acts on the signal. One copy of this, used by isolate.c and
 * subprocess.c.
 */
#ifndef WATTSIM_STOPSIG_H
#define WATTSIM_STOPSIG_H

#include <signal.h>
#include <sys/types.h>

#define WS_STOP_N 4                /* SIGINT, SIGTERM, SIGHUP, SIGQUIT */

typedef struct ws_stop_catch {
    struct sigaction old[WS_STOP_N];
    int on;                        /* ws_stop_catch_begin installed the handler */
} ws_stop_catch;

/* Catch the stop signals from now on (one not ignored when the process
 * started, as under nohup, which stays ignored); forget any noted earlier. */
void ws_stop_catch_begin(ws_stop_catch *c);

/* The stop signal caught since ws_stop_catch_begin, or 0 (also when c did
 * not begin). */
int ws_stop_caught(const ws_stop_catch *c);

/* Give the stop signals back their earlier actions. In a forked child,
 * first thing, too: its policy code runs with the actions the process had
 * before (the child's own group is killed by its parent anyway). */
void ws_stop_catch_end(ws_stop_catch *c);

/* "SIGINT", "SIGTERM", "SIGHUP" or "SIGQUIT" ("a signal" otherwise). */
const char *ws_stop_name(int sig);

/* Kill the process group `pid` leads (and pid itself, should its setpgid
 * have failed) with SIGKILL and reap pid; returns its wait status. */
int ws_group_kill(pid_t pid);

#endif
