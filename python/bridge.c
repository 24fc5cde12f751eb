/*
 * The Python bridge (the C half of wattsim/_bridge.py): what the registry
 * loads (sim/src/engine/bridge.h) to answer a policy named
 * `py:MODULE:CLASS`; no part of libwattsim, beside the package it runs
 * (python/CMakeLists.txt builds it). It needs no Python header and links
 * against no libpython: it finds the interpreter the process already runs
 * (a program using libwattsim from Python), else it embeds the one named by
 * WATTSIM_PYTHON (default /usr/bin/python3):
 *
 *  1. that interpreter's own libpython, asked of the interpreter itself
 *     (sysconfig's LIBDIR/LDLIBRARY, run without a shell), is loaded by
 *     absolute path with RTLD_GLOBAL, so that the extension modules it
 *     imports later (math, numpy) find its symbols -- plugins are loaded
 *     RTLD_LOCAL, and a libpython loaded so would leave them undefined;
 *  2. it is initialised once per process (Py_InitializeEx(0): no signal
 *     handler, the host's stay), named after the interpreter so that a
 *     virtual environment's site folder is found, and the GIL released
 *     (PyEval_SaveThread): every later call takes it (PyGILState_Ensure,
 *     also what ctypes' callbacks do) and gives it back;
 *  3. the answer is Python's: wattsim._bridge.provide() imports the class
 *     and fills the ws_bridge_answer (with ctypes) with a descriptor of
 *     the same adapter live objects use (python/wattsim/_policy.py).
 * The name reaches Python as hex, never as code. The registry serialises
 * calls; the interpreter, once started, lives as long as the process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "bridge.h"

extern char **environ;

/* Where the wattsim package is, tried when `import wattsim` fails: the
 * install's site folder, named relative to this file's folder by the file
 * python-site beside it (written by `cmake --install`, which alone knows
 * the prefix), and the source tree's python/ (a build tree). */
#ifndef WS_BRIDGE_SRC_PY
#define WS_BRIDGE_SRC_PY ""
#endif

/* dir + "/" + the first line of dir/python-site into buf ("" when there
 * is no such regular file, or its line is empty or too long). */
static void installed_site(const char *dir, char *buf, size_t size)
{
    char path[PATH_MAX], line[PATH_MAX];
    buf[0] = '\0';
    if ((size_t)snprintf(path, sizeof path, "%s/python-site", dir) >= sizeof path) return;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                    ? read(fd, line, sizeof line - 1) : -1;
    close(fd);
    if (n <= 0) return;
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (!line[0] || (size_t)n == sizeof line - 1) return;
    if ((size_t)snprintf(buf, size, "%s/%s", dir, line) >= size) buf[0] = '\0';
}

typedef int gil_state;
static struct {
    int ready;
    int (*Py_IsInitialized)(void);
    void (*Py_InitializeEx)(int);
    void (*Py_SetProgramName)(const wchar_t *);
    wchar_t *(*Py_DecodeLocale)(const char *, size_t *);
    void *(*PyEval_SaveThread)(void);
    gil_state (*PyGILState_Ensure)(void);
    void (*PyGILState_Release)(gil_state);
    int (*PyRun_SimpleString)(const char *);
} py;

static int fail(ws_bridge_answer *out, const char *spec, const char *fmt, const char *a,
                const char *b)
{
    char msg[WS_ERROR_MAX];
    snprintf(msg, sizeof msg, fmt, a, b);
    snprintf(out->error, sizeof out->error, "%.200s: %.300s", spec, msg);
    return -1;
}

/* The interpreter's answer to `code` (one line on stdout), without a
 * shell; its stderr goes to ours. */
static int ask(const char *python, const char *code, char *buf, size_t len)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    char *argv[] = {(char *)python, "-I", "-c", (char *)code, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, python, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    size_t n = 0;
    if (rc == 0) {
        ssize_t r;
        while (n + 1 < len && ((r = read(fd[0], buf + n, len - 1 - n)) > 0
                               || (r < 0 && errno == EINTR)))
            if (r > 0) n += (size_t)r;
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(st) || WEXITSTATUS(st)) rc = -1;
    }
    close(fd[0]);
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return rc || !buf[0] ? -1 : 0;
}

#define SYM(name)                                                            \
    if (!(*(void **)&py.name = dlsym(h, #name)))                             \
        return fail(out, spec, "%s has no %s (not a CPython 3 library)", where, #name)

static int bind(void *h, const char *spec, const char *where, ws_bridge_answer *out)
{
    SYM(Py_IsInitialized);
    SYM(Py_InitializeEx);
    SYM(Py_SetProgramName);
    SYM(Py_DecodeLocale);
    SYM(PyEval_SaveThread);
    SYM(PyGILState_Ensure);
    SYM(PyGILState_Release);
    SYM(PyRun_SimpleString);
    return 0;
}

static int start(const char *spec, ws_bridge_answer *out)
{
    /* A process that runs Python already: its interpreter, never a second. */
    int (*running)(void) = NULL;
    *(void **)&running = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (running && running()) {
        if (bind(RTLD_DEFAULT, spec, "this process's Python", out)) return -1;
        py.ready = 1;
        return 0;
    }
    const char *python = getenv("WATTSIM_PYTHON");
    if (!python || !*python) python = "/usr/bin/python3";
    if (python[0] != '/')
        return fail(out, spec, "WATTSIM_PYTHON must be an absolute path, got '%s'%s", python,
                    "");
    if (access(python, X_OK))
        return fail(out, spec, "cannot run the Python interpreter %s (set WATTSIM_PYTHON to"
                    " one)%s", python, "");
    char lib[PATH_MAX];
    if (ask(python, "import os, sysconfig as s; v = s.get_config_var;"
            " print(os.path.join(v('LIBDIR') or '', v('LDLIBRARY') or ''))", lib, sizeof lib)
        || lib[0] != '/')
        return fail(out, spec, "%s does not say where its libpython is%s", python, "");
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        /* a static interpreter's LDLIBRARY is the .a: its shared twin */
        char *a = strstr(lib, ".a");
        if (a && !a[2] && (size_t)(a - lib) + 4 < sizeof lib) {
            strcpy(a, ".so");
            h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
        }
    }
    if (!h) return fail(out, spec, "cannot load libpython of %s: %s", python, dlerror());
    if (bind(h, spec, lib, out)) return -1;
    wchar_t *name = py.Py_DecodeLocale(python, NULL);
    if (name) py.Py_SetProgramName(name);   /* kept: Python reads it later */
    py.Py_InitializeEx(0);                  /* no signal handlers */
    py.PyEval_SaveThread();
    py.ready = 1;
    return 0;
}

__attribute__((visibility("default"))) int ws_bridge_python_v1(const char *spec, int want, int host_abi,
                                                ws_bridge_answer *out)
{
    memset(out, 0, sizeof *out);
    if (!py.ready && start(spec, out)) return -1;
    /* The code, with the name as hex and the folders as hex: data only. */
    size_t n = strlen(spec);
    char *hex = malloc(2 * n + 1), *code = NULL;
    char here[PATH_MAX] = "";
    Dl_info di;
    if (dladdr((void *)ws_bridge_python_v1, &di) && di.dli_fname) {
        char *real = realpath(di.dli_fname, NULL);
        if (real) {
            char *slash = strrchr(real, '/');
            if (slash) *slash = '\0';
            installed_site(real, here, sizeof here);
            free(real);
        }
    }
    const char *dirs[2] = {here, WS_BRIDGE_SRC_PY};
    char dhex[2][2 * PATH_MAX + 1];
    if (!hex) return fail(out, spec, "out of memory%s%s", "", "");
    for (size_t i = 0; i < n; i++) sprintf(hex + 2 * i, "%02x", (unsigned char)spec[i]);
    for (int k = 0; k < 2; k++) {
        dhex[k][0] = '\0';
        for (size_t i = 0; dirs[k][i] && i < PATH_MAX; i++)
            sprintf(dhex[k] + 2 * i, "%02x", (unsigned char)dirs[k][i]);
    }
    static const char fmt[] =
        "def _ws_bridge():\n"
        " import ctypes, sys\n"
        " a = %llu\n"
        " try:\n"
        "  try:\n"
        "   import wattsim._bridge as b\n"
        "  except ImportError:\n"
        "   for d in ('%s', '%s'):\n"
        "    d = bytes.fromhex(d).decode()\n"
        "    if d and d not in sys.path: sys.path.append(d)\n"
        "   import wattsim._bridge as b\n"
        "  b.provide(bytes.fromhex('%s').decode(), %d, %d, a)\n"
        " except BaseException as e:\n"
        "  import traceback\n"
        "  m = traceback.format_exception_only(type(e), e)[-1].strip()\n"
        "  m = str(e) if type(e).__name__ == 'BridgeError' else 'cannot load it: ' + m\n"
        "  m = m.encode()[:%d]\n"
        "  ctypes.memmove(a + %zu, m + b'\\0', len(m) + 1)\n"
        "_ws_bridge()\n"
        "del _ws_bridge\n";
    size_t len = sizeof fmt + strlen(hex) + strlen(dhex[0]) + strlen(dhex[1]) + 128;
    if (!(code = malloc(len))) {
        free(hex);
        return fail(out, spec, "out of memory%s%s", "", "");
    }
    snprintf(code, len, fmt, (unsigned long long)(uintptr_t)out, dhex[0], dhex[1], hex, want,
             host_abi, (int)sizeof out->error - 200, offsetof(ws_bridge_answer, error));
    free(hex);
    gil_state g = py.PyGILState_Ensure();
    int rc = py.PyRun_SimpleString(code);
    py.PyGILState_Release(g);
    free(code);
    if (out->error[0]) {
        char msg[WS_ERROR_MAX];
        snprintf(msg, sizeof msg, "%.200s: %.300s", spec, out->error);
        snprintf(out->error, sizeof out->error, "%s", msg);
        return -1;
    }
    if (rc || !out->descriptor) return fail(out, spec, "the Python bridge failed%s%s", "", "");
    return 0;
}
