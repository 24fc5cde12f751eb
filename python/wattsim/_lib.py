"""The library, found and bound with ctypes (wattsim/api.h); nothing else.

Where libwattsim is looked for, first found wins:
  1. $WATTSIM_LIB, a path to libwattsim.so;
  2. the folder `cmake --install` recorded beside this file (_installed.py,
     a path relative to the package, so an installed tree can move);
  3. the build tree when the package is used from the source tree
     (PYTHONPATH=python): build/sim/ beside python/;
  4. the system's loader (libwattsim.so.0 on its search path).
"""
import ctypes
import json
import os
import sys
import threading

API_VERSION = 1  # the WS_API_VERSION this package was written for

OK, INPUT, FAILED, POLICY, CANCELLED, MISUSE, NOMEM, IO = range(8)

_here = os.path.dirname(os.path.abspath(__file__))
_lib = None
_lock = threading.Lock()


def _candidates():
    env = os.environ.get("WATTSIM_LIB")
    if env:
        yield env
        return
    try:
        from . import _installed  # written by cmake --install
        yield os.path.normpath(os.path.join(_here, _installed.LIBDIR, "libwattsim.so"))
    except ImportError:
        pass
    src = os.path.dirname(os.path.dirname(_here))
    for build in ("build", "build-asan", "build-valgrind"):
        yield os.path.join(src, build, "sim", "libwattsim.so")
    yield "libwattsim.so.0"


class Hooks(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint),
                ("progress", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                              ctypes.c_double, ctypes.c_double)),
                ("ctx", ctypes.c_void_p),
                ("cancel", ctypes.POINTER(ctypes.c_int))]


PROGRESS = Hooks._fields_[1][1]

# A callback of this package can raise before its guard (try) runs: Python
# raises a pending Ctrl-C's KeyboardInterrupt at the first bytecode the
# main thread runs once the signal arrived, and while the library runs that
# is the entry of a callback (the progress hook, a live policy's call).
# ctypes then hands the exception to sys.unraisablehook ("Exception ignored
# on calling ctypes callback function"), drops it and returns an undefined
# value. While a call runs, _unraisable keeps what our callbacks raised so
# (the first), every later callback answers "stop", and the call re-raises
# it once the library returns; anything else goes to the previous hook.
swallowed = []
_hooked = 0
_prev_hook = None
_hook_lock = threading.Lock()


def _ours(tb):
    """Whether the traceback starts in this package (a callback's frame)."""
    return tb is not None and os.path.dirname(tb.tb_frame.f_code.co_filename) == \
        os.path.dirname(__file__)


def _unraisable(u):
    if u.exc_value is not None and _ours(u.exc_traceback):
        if not swallowed:
            swallowed.append(u.exc_value)
        return
    (_prev_hook or sys.__unraisablehook__)(u)


def stop(e):
    """A KeyboardInterrupt (or SystemExit) a policy's call raised inside
    its guard, while a call of this process runs: stop the whole call as a
    Ctrl-C at a callback's entry does (a sweep would otherwise go on with
    its next simulations and raise only at its end)."""
    if _hooked and not swallowed:
        swallowed.append(e)


def _hook(on):
    global _hooked, _prev_hook
    with _hook_lock:
        if on:
            if _hooked == 0 and sys.unraisablehook is not _unraisable:
                _prev_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
            _hooked += 1
        else:
            _hooked -= 1
            if _hooked == 0 and sys.unraisablehook is _unraisable:
                sys.unraisablehook, _prev_hook = _prev_hook, None


def lib():
    """The loaded library (loaded once); OSError naming where it looked."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                L = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            break
        else:
            raise OSError("cannot find libwattsim.so (tried %s); build wattsim"
                          " (scripts/setup) or set WATTSIM_LIB=/path/to/libwattsim.so"
                          % ", ".join(tried))
        vp, cp = ctypes.c_void_p, ctypes.c_char_p
        L.ws_api_version.restype = ctypes.c_int
        L.ws_api_wattsim_version.restype = cp
        L.ws_api_call_new.restype = vp
        L.ws_api_call_new.argtypes = [cp]
        L.ws_api_call_free.argtypes = [vp]
        L.ws_api_set.argtypes = [vp, cp, cp]
        for f in (L.ws_api_add_bso, L.ws_api_add_plo):
            f.argtypes = [vp, vp, cp, cp, ctypes.c_char_p, ctypes.c_size_t]
        L.ws_api_run.argtypes = [vp, ctypes.POINTER(Hooks), ctypes.POINTER(vp)]
        L.ws_api_error.restype = cp
        L.ws_api_error.argtypes = [vp]
        L.ws_api_free.argtypes = [vp]
        if L.ws_api_version() < API_VERSION:
            raise OSError("%s has API version %d; this package needs %d or later"
                          % (path, L.ws_api_version(), API_VERSION))
        L.path = path
        _lib = L
        return L


class Call:
    """One ws_api_call: options as keyword arguments, run once."""

    def __init__(self, command):
        self.L = lib()
        self.c = self.L.ws_api_call_new(command.encode())
        if not self.c:
            raise ValueError("unknown command %r" % command)
        self.command = command
        self.keep = []  # descriptors and callbacks that must outlive the call

    def __del__(self):
        if getattr(self, "c", None):
            self.L.ws_api_call_free(self.c)
            self.c = None

    def set(self, option, value):
        value = str(value)
        for what, text in (("option", option), ("value of %s" % option, value)):
            if "\0" in text:   # C would read it up to the NUL: v100\0junk as v100
                raise ValueError("%s: the %s %r holds a NUL character (\\x00), which no"
                                 " option takes; remove it" % (self.command, what, text))
        rc = self.L.ws_api_set(self.c, option.encode(),
                               value.encode("utf-8", "surrogateescape"))
        if rc:
            raise TypeError(self.L.ws_api_error(self.c).decode())

    def add(self, kind, descriptor, origin, sha256=""):
        key = ctypes.create_string_buffer(32)
        f = self.L.ws_api_add_bso if kind == "bso" else self.L.ws_api_add_plo
        rc = f(self.c, ctypes.addressof(descriptor), origin.encode(), sha256.encode(), key, 32)
        if rc:
            raise MemoryError("cannot add a live policy")
        self.keep.append(descriptor)
        return key.value.decode()

    def run(self, progress=None, cancel=None):
        """(status, message, parsed JSON or None). progress(done, total) is
        called on this thread; whatever it raises (KeyboardInterrupt too)
        stops the call and is re-raised by the caller from `raised`."""
        self.raised = None

        def tick(_ctx, done, total):
            try:
                if swallowed:
                    return 1
                if progress is not None and progress(done, total):
                    return 1
                return 1 if cancel is not None and cancel() else 0
            except BaseException as e:  # ctypes would swallow it
                self.raised = e
                return 1

        cb = PROGRESS(tick)
        hooks = Hooks(ctypes.sizeof(Hooks), cb, None, None)
        out = ctypes.c_void_p()
        _hook(True)
        try:
            rc = self.L.ws_api_run(self.c, ctypes.byref(hooks), ctypes.byref(out))
        finally:
            _hook(False)
            if swallowed:
                e = swallowed.pop()
                if self.raised is None:
                    self.raised = e
        if rc == OK:
            try:
                text = ctypes.string_at(out.value).decode()
            finally:
                self.L.ws_api_free(out)
            return rc, "", json.loads(text)
        return rc, self.L.ws_api_error(self.c).decode(), None
