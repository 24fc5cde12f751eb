/*
 * Test plugin: a BSO that does, in its create call, what a plugin sharing
 * wattsim's process can do to that process (issue 18), then plays b0.
 * Parameter `mode`:
 *   0  nothing
 *   1  setlocale(LC_ALL, "") (a decimal comma under de_DE.UTF-8), and writes
 *      what setlocale(LC_NUMERIC, NULL) then says to `path`
 *   2  chdir(path), once
 *   3  swaps the folder `path` for a symbolic link, once: renames it to
 *      PATH.moved and makes PATH a link to PATH.elsewhere (made, empty)
 *   4  forks a child, once, that writes its pid to `path` and then waits
 *      forever (kill it); create returns after the child has written it
 *   5  allocates `mib` MiB and writes to all of it; when the allocation
 *      fails (under a memory limit) it dies of SIGSEGV, as a careless
 *      policy writing through the NULL would (raised, so that valgrind
 *      sees no invalid write)
 * Once means once per process (a sweep creates an instance per
 * simulation, from several threads).
 */
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stub.h"

static const ws_param_spec params[] = {
    {"mode", WS_PARAM_INT, {.i = 0}, 0, 5, "what to do in create (see hostile.c)"},
    {"path", WS_PARAM_STRING, {.s = ""}, 0, 0, "a path the mode uses"},
    {"mib", WS_PARAM_INT, {.i = 1}, 1, 4096, "MiB to allocate (mode 5)"},
    {0},
};

typedef struct hostile {
    char *mem;
} hostile;

static int once(void)
{
    static int done;
    return __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL) == 0;
}

static void write_text(const char *path, const char *text)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fputs(text, f);
    if (fclose(f) == 0) rename(tmp, path);      /* complete when it appears */
}

static int h_create(void *state, const ws_value *v, const ws_host *host)
{
    hostile *h = state;
    const char *path = v[1].s;
    char a[600], b[600];
    switch (v[0].i) {
    case 1: {
        setlocale(LC_ALL, "");
        const char *now = setlocale(LC_NUMERIC, NULL);
        if (*path) write_text(path, now ? now : "(null)");
        break;
    }
    case 2:
        if (once() && chdir(path) != 0) return -1;
        break;
    case 3:
        if (!once()) break;
        snprintf(a, sizeof a, "%s.moved", path);
        snprintf(b, sizeof b, "%s.elsewhere", path);
        if (rename(path, a) || mkdir(b, 0777) || symlink(b, path)) return -1;
        break;
    case 4: {
        if (!once()) break;
        int p[2];
        if (pipe(p)) return -1;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            char text[32];
            snprintf(text, sizeof text, "%ld\n", (long)getpid());
            write_text(path, text);
            (void)!write(p[1], "x", 1);
            for (;;) pause();
        }
        char c;
        close(p[1]);
        (void)!read(p[0], &c, 1);
        close(p[0]);
        break;
    }
    case 5: {
        size_t n = (size_t)v[2].i << 20;
        h->mem = malloc(n);
        if (!h->mem) raise(SIGSEGV);           /* a careless policy's memset(NULL, ...) */
        memset(h->mem, 1, n);
        break;
    }
    default:
        break;
    }
    return 0;
}

static void h_destroy(void *state) { free(((hostile *)state)->mem); }

static const ws_bso_type bso = {
    .abi_version = WS_ABI_VERSION, .name = "hostile", .summary = "test",
    .state_size = sizeof(hostile), .params = params, .create = h_create,
    .destroy = h_destroy, .register_job = stub_register, .predict = stub_predict,
    .observe = stub_observe};
static const ws_bso_type *const bsos[] = {&bso, NULL};
static const ws_plugin plugin = {WS_ABI_VERSION, "hostile", bsos, NULL, 0};

const ws_plugin *ws_plugin_entry_v2(int host_version) { return &plugin; }
