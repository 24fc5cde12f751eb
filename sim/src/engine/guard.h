/*
 * The policy host's guards (private to the engine): which policy call a
 * thread is in, for the exit() guard, and the working folder while policy
 * code may run. See guard.c.
 */
#ifndef WATTSIM_ENGINE_GUARD_H
#define WATTSIM_ENGINE_GUARD_H

#include <stddef.h>

/* The policy ("bso zeus", or a plugin path) and call this thread is in;
 * call NULL outside policy code. Set around every call into a plugin:
 * inline, because that is once per policy call of every simulation. */
/* Initial-exec: an offset from the thread pointer, read once per
 * simulation, not a general-dynamic lookup per access (16 bytes of the
 * static TLS that libraries loaded at start-up or dlopen'ed may use). */
extern _Thread_local const char *ws_guard_who __attribute__((tls_model("initial-exec")));
extern _Thread_local const char *ws_guard_call __attribute__((tls_model("initial-exec")));

static inline void ws_guard_call_enter(const char *who, const char *name)
{
    ws_guard_who = who;
    ws_guard_call = name;
}

static inline void ws_guard_call_leave(void) { ws_guard_call = NULL; }

/* While any holder exists (nested, thread-safe) policy code may run: the
 * first enter notes the working folder, which the last leave goes back to,
 * and installs the exit() guard (once). */
void ws_guard_enter(void);
void ws_guard_leave(void);

#endif
