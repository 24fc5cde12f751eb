"""Python policies behind the policy ABI (wattsim/policy.h): one adapter
for both entry points, live objects handed to wattsim.simulate(...) and
`py:MODULE:CLASS` named on the command line (the bridge plugin asks
`provide`).

An adapter is a descriptor (ws_bso_type / ws_plo_type) whose functions are
ctypes callbacks. The host allocates state_size (8) bytes per instance;
create() stores there the handle of a fresh object: a deep copy of the
object as given (live; so every simulation starts from it, as Zeus's
Simulator deep-copies its optimizers) or the class called with the
parameters (py:). Calls translate to Zeus's legacy interface
(zeus._legacy.policy.interface):

  BSO register_job(job, batch_sizes) predict(job) -> int
      observe(job, batch_size, cost, converged)
  PLO predict(job, batch_size) -> int or None (None: profile it)
      observe(job, batch_size, power_limit, cost)     (each profiled limit)
      observe_run(job, batch_size, power_limit, cost, converged) if defined

Whatever a call raises is caught (ctypes would swallow it), the call
returns an error to the host and the exception is kept: the caller raises
PolicyError from it (KeyboardInterrupt as itself) once the C call returns.
What a policy prints goes to stderr, never into a result.
"""
import copy
import ctypes
import hashlib
import inspect
import math
import numbers
import re
import sys
import threading
import traceback

from . import _lib
from .policy import Job, Context, WithContext

c_int, c_long, c_double, c_void_p, c_char_p = (ctypes.c_int, ctypes.c_long, ctypes.c_double,
                                               ctypes.c_void_p, ctypes.c_char_p)
P = ctypes.POINTER
ABI_VERSION = 201  # 2.1, what the descriptors declare; WsCtx and WsHost also
# describe the 2.3 members, read only when the host has them


class WsJob(ctypes.Structure):
    _fields_ = [("abi_version", c_int), ("workload", c_char_p), ("gpu", c_char_p),
                ("eta", c_double), ("beta", c_double), ("max_power", c_double),
                ("max_epochs", c_int), ("b0", c_int), ("concurrent", c_int), ("n_bs", c_int),
                ("bs", P(c_int)), ("knob_start", P(c_int)), ("knob_pl", P(c_int)),
                ("knob_time", P(c_double)), ("knob_power", P(c_double)),
                ("run_start", P(c_int)), ("run_epoch", P(c_double)),
                ("profile_power", P(c_double)), ("profile_time", P(c_double)),
                ("first_epoch_energy", P(c_double)), ("first_epoch_time", P(c_double)),
                ("gpus_per_job", c_int),
                # 2.3: read only when the job's abi_version is 203 or more
                ("dataset", c_char_p), ("network", c_char_p), ("optimizer", c_char_p),
                ("target_metric", c_double)]


class WsCtx(ctypes.Structure):
    _fields_ = [("abi_version", c_int), ("size", ctypes.c_uint), ("recurrence", c_long),
                ("recurrences", c_long), ("attempt", c_int), ("run_started", c_int),
                ("run_epochs", c_int), ("run_early_stopped", c_int),
                ("run_epoch_budget", c_double), ("run_time_s", c_double),
                ("run_energy_j", c_double), ("profile_time_s", c_double),
                ("profile_power_w", c_double), ("carbon_intensity", c_double),
                ("price", c_double),
                # 2.3: read only when the host's ctx.size covers them
                ("now_s", c_double), ("due_s", c_double), ("every_s", c_double),
                ("defer_s", c_double)]


class WsHost(ctypes.Structure):
    _fields_ = [("abi_version", c_int), ("ctx", c_void_p),
                ("uniform", ctypes.CFUNCTYPE(c_double, c_void_p)),
                ("uniform_int", ctypes.CFUNCTYPE(ctypes.c_ulong, c_void_p, ctypes.c_ulong)),
                ("gaussian", ctypes.CFUNCTYPE(c_double, c_void_p, c_double)),
                ("log", ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)),
                ("normal", ctypes.CFUNCTYPE(c_double, c_void_p, c_double, c_double)),
                ("choice", ctypes.CFUNCTYPE(c_int, c_void_p, c_long, c_long, P(c_long))),
                ("permutation", ctypes.CFUNCTYPE(c_int, c_void_p, c_long, P(c_long))),
                # 2.3: read only when the host's abi_version is 203 or more
                ("forecast", ctypes.CFUNCTYPE(c_double, c_void_p, c_int, c_double, c_double)),
                ("forecast_next", ctypes.CFUNCTYPE(c_double, c_void_p, c_int, c_double)),
                ("seed", ctypes.c_ulonglong)]

FORECAST_KINDS = {"carbon": 1, "price": 2}  # WS_FORECAST_CARBON, _PRICE


# An instance holds its thread's Python thread state from create to
# destroy. ctypes runs a callback on a thread Python did not start (a
# sweep's worker threads, in the package or in the CLI's bridge) under
# PyGILState_Ensure, which makes a thread state for that one call and
# destroys it after: about 150 us a call against 5 us with one kept,
# measured on a sweep with threads=2. One more Ensure at create, released
# at destroy (on the same thread, within one simulation), keeps it for the
# simulation's calls; on a Python thread it only counts.
try:
    _ensure, _release = ctypes.pythonapi.PyGILState_Ensure, ctypes.pythonapi.PyGILState_Release
    _ensure.restype, _release.argtypes = c_int, [c_int]
except (AttributeError, OSError):   # no C API to reach: every call makes its own
    _ensure = _release = None

CREATE = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, P(WsHost))
DESTROY = ctypes.CFUNCTYPE(None, c_void_p)
REGISTER = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
BSO_PREDICT = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, P(c_int))
BSO_OBSERVE = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_int, c_double, c_int)
PLO_PREDICT = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_int, P(c_int))
PLO_PROFILE = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_int, c_int, c_double)
PLO_RUN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p, c_int, c_int, c_double, c_int)


class BsoType(ctypes.Structure):
    _fields_ = [("abi_version", c_int), ("name", c_char_p), ("summary", c_char_p),
                ("state_size", ctypes.c_size_t), ("params", c_void_p), ("create", CREATE),
                ("destroy", DESTROY), ("register_job", REGISTER), ("predict", BSO_PREDICT),
                ("observe", BSO_OBSERVE), ("param_spec_size", ctypes.c_size_t),
                ("value_size", ctypes.c_size_t)]


class PloType(ctypes.Structure):
    _fields_ = [("abi_version", c_int), ("name", c_char_p), ("summary", c_char_p),
                ("state_size", ctypes.c_size_t), ("params", c_void_p), ("create", CREATE),
                ("destroy", DESTROY), ("predict", PLO_PREDICT),
                ("observe_profile", PLO_PROFILE), ("register_job", REGISTER),
                ("observe_run", PLO_RUN), ("param_spec_size", ctypes.c_size_t),
                ("value_size", ctypes.c_size_t)]


class Value(ctypes.Union):
    _fields_ = [("i", c_long), ("d", c_double), ("b", c_int), ("s", c_char_p)]


INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1     # C int: answers (batch size, power limit)
LONG_MAX = 2 ** 63 - 1                        # C long (64-bit): counts of draws


def _refused(e):
    """An answer wattsim refuses (its own exception, no policy's): the
    error names it without an exception name or __cause__."""
    e.wattsim_refused = True
    return e


def _index(call, v):
    """An integer argument (int, numpy integer; not bool, not float)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError("%s: %r (%s) is not an int" % (call, v, type(v).__name__))
    return int(v)


class Host:
    """The instance's random stream (numpy's Generator, draw for draw; see
    ws_host in wattsim/policy.h), for a WithContext policy: self.host."""

    def __init__(self, h):
        self._h = h

    def random(self):
        return self._h.uniform(self._h.ctx)

    # The arguments are checked here, as numpy's Generator checks them (its
    # messages): ctypes would pass -1 as 2^64 - 1 to an unsigned long, and
    # any int beyond a C long modulo 2^64, without a word.
    def integers(self, n):
        n = _index("integers", n)
        if n <= 0:
            raise ValueError("high <= 0")
        if n > LONG_MAX + 1:
            raise ValueError("high is out of bounds for int64")
        return int(self._h.uniform_int(self._h.ctx, n))

    def normal(self, loc=0.0, scale=1.0):
        loc, scale = float(loc), float(scale)
        if scale < 0:
            raise ValueError("scale < 0")
        return self._h.normal(self._h.ctx, loc, scale)

    def choice(self, n, k):
        n, k = _index("choice", n), _index("choice", k)
        if k < 0:
            raise ValueError("negative dimensions are not allowed")
        if n < 0:
            raise ValueError("a must be a positive integer unless no samples are taken")
        if k > n:
            raise ValueError("Cannot take a larger sample than population when replace is"
                             " False")
        if n > LONG_MAX:
            raise ValueError("choice(%d, %d): a is out of bounds for int64" % (n, k))
        out = (c_long * max(k, 1))()
        if self._h.choice(self._h.ctx, n, k, out):
            raise ValueError("choice(%d, %d): k > n" % (n, k))
        return list(out[:k])

    def permutation(self, n):
        n = _index("permutation", n)
        if n < 0 or n > 2 ** 32:
            raise ValueError("permutation(%d): n must be in [0, 2^32]" % n)
        out = (c_long * max(n, 1))()
        if self._h.permutation(self._h.ctx, n, out):
            raise ValueError("permutation(%d)" % n)
        return list(out[:n])

    def _forecasts(self):
        return self._h.abi_version >= 203 and bool(self._h.forecast)

    def forecast(self, kind, t, dur=0.0):
        """The series `kind` ("carbon" gCO2eq/kWh, "price" $/kWh) as a
        perfect forecast on the simulation's clock (ctx.now_s): its mean
        over [t, t + dur], its value at t for dur 0; nan without that
        series (ws_host.forecast)."""
        if not self._forecasts():
            return math.nan
        return self._h.forecast(self._h.ctx, FORECAST_KINDS[kind], float(t), float(dur))

    def forecast_next(self, kind, t):
        """When the series `kind` next changes after t (inf for a constant);
        nan without it (ws_host.forecast_next)."""
        if not self._forecasts():
            return math.nan
        return self._h.forecast_next(self._h.ctx, FORECAST_KINDS[kind], float(t))


def _source_sha256(cls):
    try:
        with open(inspect.getsourcefile(cls), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (OSError, TypeError):
        return ""


def origin(obj_or_cls):
    cls = obj_or_cls if inspect.isclass(obj_or_cls) else type(obj_or_cls)
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def _last_line(e):
    lines = traceback.format_exception_only(type(e), e)
    return lines[-1].strip() if lines else type(e).__name__


class Adapter:
    """One policy: its descriptor, its instances, the first fault."""

    _names = 0
    _names_lock = threading.Lock()

    def __init__(self, kind, make, origin_name, sha256="", workloads=None, name=None):
        self.kind = kind                  # "bso" or "plo"
        self.make = make                  # () -> a fresh policy object
        self.origin = origin_name
        self.sha256 = sha256
        self.workloads = workloads or {}  # workload -> catalogue entry
        self.objs = {}
        self.hosts = {}
        self.with_params = False          # make(values, host): the bridge's classes
        self.next = 1
        self.fault = None                 # (call, exception, simulation): the first
        self.given = ""                   # the label's parameters: "{eta=0.05}"
        self.shown = []                   # the same as [(name, text)]
        self.faulted = set()              # instances whose call failed
        self.jobs = {}                    # ws_job address -> Job
        self.jobs_by_key = {}             # its values -> Job (one Job per job)
        self.with_ctx = set()             # instances that are WithContext
        self.held = {}                    # instance -> (thread, its PyGILState_Ensure)
        if name is None:
            with Adapter._names_lock:
                Adapter._names += 1
                name = "py-%s-%d" % (kind, Adapter._names)
        self.cbs = []
        T = BsoType if kind == "bso" else PloType
        d = T()
        d.abi_version = ABI_VERSION
        d.name = name.encode()
        d.summary = ("Python " + origin_name).encode()
        d.state_size = 8
        d.params = None
        d.create = self._cb(CREATE, self._create)
        d.destroy = self._cb(DESTROY, self._destroy)
        d.register_job = self._cb(REGISTER, self._register)
        if kind == "bso":
            d.predict = self._cb(BSO_PREDICT, self._bso_predict)
            d.observe = self._cb(BSO_OBSERVE, self._bso_observe)
        else:
            d.predict = self._cb(PLO_PREDICT, self._plo_predict)
            d.observe_profile = self._cb(PLO_PROFILE, self._plo_profile)
            d.observe_run = self._cb(PLO_RUN, self._plo_run)
        d.param_spec_size = 0
        d.value_size = 0
        self.descriptor = d

    def _cb(self, proto, fn):
        c = proto(fn)
        self.cbs.append(c)
        return c

    # -------------------------------------------------------- plumbing
    def _obj(self, state):
        return self.objs[ctypes.c_int64.from_address(state).value]

    def _call(self, call, state, job, ctx, fn):
        """fn(obj, Job) under the guard: 0, or -1 with the fault kept.
        job and ctx are addresses (c_void_p): converted only when used."""
        h = ctypes.c_int64.from_address(state).value
        if h in self.faulted or _lib.swallowed:   # a Ctrl-C is stopping the call
            return -1
        # what the policy prints goes to stderr (contextlib's
        # redirect_stdout, without its per-call object)
        saved = sys.stdout
        try:
            o = self.objs[h]
            if h in self.with_ctx:
                o.ctx = Context.from_c(WsCtx.from_address(ctx)) if ctx else None
            J = self.jobs.get(job) or self._job(job)
            sys.stdout = sys.stderr
            fn(o, J)
            return 0
        except BaseException as e:  # noqa: B036 -- re-raised by the caller
            self.faulted.add(h)
            if self.fault is None:
                self.fault = (call, e, self._where(h, job))
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                _lib.stop(e)
            # the host's error line: "bso NAME: predict failed: LINE"
            host = self.hosts.get(h)
            if host is not None:
                host.log(host.ctx, 0, _last_line(e).encode("utf-8", "replace")[:900])
            return -1
        finally:
            sys.stdout = saved

    @staticmethod
    def _seed(host):
        return "seed %d" % host.seed if host.abi_version >= 203 else ""

    def _where(self, h, job):
        """The simulation, as the host's errors name it: "v100/cifar100
        eta 0.5 beta 2 seed 3" (what is known of it)."""
        host = self.hosts.get(h)
        seed = self._seed(host) if host is not None else ""
        try:
            J = self.jobs.get(job) or self._job(job)
        except Exception:   # noqa: BLE001 -- no job to name
            return seed
        return ("%s/%s eta %s beta %s %s" % (J.gpu, J.workload, _g(J.eta), _g(J.beta),
                                              seed)).strip()

    @property
    def label(self):
        return self.descriptor.name.decode() + self.given

    def _job(self, address):
        """The Job of the ws_job at `address`, kept by address: a
        simulation's job stays where it is while it runs, and the cache is
        emptied when an instance is created (an address freed and reused
        may hold another job then)."""
        j = WsJob.from_address(address)
        key = (j.workload, j.gpu, j.eta, j.beta, j.n_bs, j.max_epochs, j.b0)
        job = self.jobs_by_key.get(key)
        if job is None:
            w = j.workload.decode()
            info = dict(self.workloads.get(w, {}))
            if j.abi_version >= 203:      # the host's definition of it (2.3)
                for f in ("dataset", "network", "optimizer"):
                    v = getattr(j, f)
                    if v is not None:
                        info[f] = v.decode()
                if not math.isnan(j.target_metric):
                    info["target_metric"] = j.target_metric
            job = Job(dataset=info.get("dataset", w), network=info.get("network"),
                      optimizer=info.get("optimizer"),
                      target_metric=info.get("target_metric"), max_epochs=j.max_epochs,
                      default_bs=j.b0, workload=w, gpu=j.gpu.decode(), eta=j.eta,
                      beta=j.beta, max_power=j.max_power,
                      batch_sizes=tuple(j.bs[i] for i in range(j.n_bs)))
            self.jobs_by_key[key] = job
        self.jobs[address] = job
        return job

    def _create(self, state, _params, host):
        if _lib.swallowed:
            return -1
        try:
            o = (self.make(ctypes.cast(_params, P(Value)), host.contents) if self.with_params
                 else self.make())
            if isinstance(o, WithContext):
                o.host = Host(host.contents)
        except BaseException as e:  # noqa: B036
            if self.fault is None:
                self.fault = ("create", e, self._seed(host.contents))
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                _lib.stop(e)
            # the host's error line: "bso NAME: create failed: LINE"
            h = host.contents
            h.log(h.ctx, 0, _last_line(e).encode("utf-8", "replace")[:900])
            return -1
        h = self.next
        self.next += 1
        self.objs[h] = o
        self.jobs.clear()
        if isinstance(o, WithContext):
            self.with_ctx.add(h)
        self.hosts[h] = host.contents
        if _ensure is not None:
            self.held[h] = (threading.get_ident(), _ensure())
        ctypes.c_int64.from_address(state).value = h
        return 0

    def _destroy(self, state):
        h = ctypes.c_int64.from_address(state).value
        self.objs.pop(h, None)
        self.hosts.pop(h, None)
        self.with_ctx.discard(h)
        self.faulted.discard(h)
        held = self.held.pop(h, None)
        if held is not None and held[0] == threading.get_ident():
            _release(held[1])             # (another thread: kept, never misreleased)

    def _register(self, state, job, ctx):
        if self.kind == "bso":
            return self._call("register_job", state, job, ctx,
                              lambda o, J: o.register_job(J, list(J.batch_sizes)))
        o = self.objs.get(ctypes.c_int64.from_address(state).value)
        if not hasattr(o, "register_job"):
            return 0
        return self._call("register_job", state, job, ctx,
                          lambda o, J: o.register_job(J, list(J.batch_sizes)))

    @staticmethod
    def _int(call, v, none_ok=False):
        """An answer as the C int it becomes: refused, never masked, when
        outside the C int range (ctypes would keep its low 32 bits:
        1024 + 2**32 would be 1024)."""
        if type(v) is not int:            # the usual answer skips the ABC check
            if v is None and none_ok:
                return 0
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise _refused(TypeError("%s returned %r (%s), not an int%s" % (
                    call, v, type(v).__name__, " or None" if none_ok else "")))
            v = int(v)
        if not INT_MIN <= v <= INT_MAX:
            raise _refused(ValueError("%s returned %d, outside the C int range [%d, %d]"
                                      % (call, v, INT_MIN, INT_MAX)))
        return v

    def _bso_predict(self, state, job, ctx, out):
        def f(o, J):
            out[0] = self._int("predict", o.predict(J))
        return self._call("predict", state, job, ctx, f)

    def _bso_observe(self, state, job, ctx, bs, cost, reached):
        return self._call("observe", state, job, ctx,
                          lambda o, J: o.observe(J, bs, cost, bool(reached)))

    def _plo_predict(self, state, job, ctx, bs, out):
        def f(o, J):
            v = o.predict(J, bs)
            if v is not None and not isinstance(v, bool) and isinstance(v, numbers.Integral) \
                    and v <= 0:   # 0 would read as None (profile) to the host
                raise _refused(ValueError(
                    "predict(bs %d) returned power limit %d W; return None to profile the"
                    " batch size's power limits, or one of them in W" % (bs, v)))
            out[0] = self._int("predict", v, none_ok=True)
        return self._call("predict", state, job, ctx, f)

    def _plo_profile(self, state, job, ctx, bs, pl, cost):
        return self._call("observe", state, job, ctx, lambda o, J: o.observe(J, bs, pl, cost))

    def _plo_run(self, state, job, ctx, bs, pl, cost, reached):
        o = self.objs.get(ctypes.c_int64.from_address(state).value)
        if not hasattr(o, "observe_run"):
            return 0
        return self._call("observe_run", state, job, ctx,
                          lambda o, J: o.observe_run(J, bs, pl, cost, bool(reached)))

    def raise_fault(self, key):
        """After the C call: re-raise what a call raised."""
        if self.fault is None:
            return
        call, e, where = self.fault
        self.fault = None
        self.faulted.clear()
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise e
        from . import PolicyError
        head = "%s%s %s (%s): " % (where + ": " if where else "", self.kind, self.label,
                                   self.origin)
        if getattr(e, "wattsim_refused", False):
            raise PolicyError(head + str(e)) from None
        raise PolicyError(head + "%s: %s" % (call, _last_line(e))) from e

    def restyle(self, msg):
        """The host's message about this policy ("... bso py-b: predict
        returned ...") with its label and class, as raise_fault words its
        own: "... bso py-b{x=1} (mylab.B): predict returned ..."."""
        name = "%s %s: " % (self.kind, self.descriptor.name.decode())
        return msg.replace(name, "%s %s (%s): " % (self.kind, self.label, self.origin), 1)


_SAFE_TEXT = re.compile(r"[A-Za-z0-9_.+/-]{0,200}\Z")
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def fmt(v):
    """A parameter's value as labels show it: a float as the shortest text
    that reads back (repr: 0.05, not 0.050000000000000003), a bool as
    true/false (as the host prints a bool parameter)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return float.__repr__(v)
    return str(v)


def _g(x):
    """x as the host writes a number in its messages (%g, to the digits
    that read back: 2, 0.05)."""
    for p in (15, 16, 17):
        t = "%.*g" % (p, x)
        if float(t) == x:
            return t
    return t


def _scalar(v):
    """v as an int, float, bool or str a parameter can hold, else None."""
    if type(v).__module__.split(".")[0] == "numpy" and hasattr(v, "item"):
        v = v.item() if getattr(v, "ndim", 0) == 0 else None
    if isinstance(v, bool):
        return v
    if isinstance(v, numbers.Integral):
        return int(v) if -2 ** 53 <= v <= 2 ** 53 else None
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, str):      # text that stays one value in NAME{k=v,...}
        return v if _SAFE_TEXT.match(v) else None
    return None


def object_params(obj):
    """A live object's parameters as [(name, value, is_default)]: the
    arguments of its class's __init__ it keeps under the same name (or
    _name), else its public scalar attributes (is_default False)."""
    out = []
    try:
        sig = inspect.signature(type(obj).__init__)
        ps = [p for p in list(sig.parameters.values())[1:]
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        ps = []
    for p in ps:
        for attr in (p.name, "_" + p.name):
            v = _scalar(getattr(obj, attr, None)) if hasattr(obj, attr) else None
            if v is not None and _PARAM_NAME.match(p.name):
                d = p.default
                out.append((p.name, v, d is not p.empty and type(d) is type(v) and d == v))
                break
    if out:
        return out
    for k, v in sorted(vars(obj).items()) if hasattr(obj, "__dict__") else ():
        v = _scalar(v)
        if not k.startswith("_") and v is not None and _PARAM_NAME.match(k):
            out.append((k, v, False))
    return out


def _specs(params):
    """(name, value, _) as the bridge's parameter declarations, each
    defaulting to the value (so the host records it as a C policy's)."""
    from ._bridge import KINDS, BIG
    out = []
    for name, v, _d in params:
        k = KINDS[type(v)]
        val = Value()
        if k == 1:
            val.i = v
        elif k == 2:
            val.d = v
        elif k == 3:
            val.b = int(v)
        else:
            val.s = v.encode()
        lo, hi = {1: (-BIG, BIG), 2: (-sys.float_info.max, sys.float_info.max)}.get(k, (0, 0))
        out.append((name, k, val, lo, hi))
    return out


def seeded(obj):
    """Whether a live object carries a seed of its own: it holds a random
    generator (numpy's, random.Random), or its __init__ takes `seed` and it
    keeps one that is not None (GaussianTS(seed=None) draws from the
    host's stream, seeded per simulation)."""
    import random
    d = getattr(obj, "__dict__", {})
    if any(isinstance(v, random.Random) or type(v).__name__ in ("Generator", "RandomState")
           for v in d.values()):
        return True
    try:
        takes = "seed" in inspect.signature(type(obj).__init__).parameters
    except (TypeError, ValueError):
        takes = False
    return takes and any(d.get(k) is not None for k in ("seed", "_seed"))


def _has_methods(kind, x):
    need = ("register_job", "predict", "observe") if kind == "bso" else ("predict", "observe")
    return all(hasattr(x, m) for m in need)


def _interface(kind):
    return ("register_job/predict/observe (Zeus's BatchSizeOptimizer interface)"
            if kind == "bso" else "predict/observe (Zeus's PowerLimitOptimizer interface)")


def short_name(cls, taken, given=""):
    """The descriptor's name (policy labels: "py-gaussiants+jit"): the
    class name in [a-z0-9_-] after "py-" (never a C policy's name), made
    unique within a call among policies with the same parameters (given:
    the label's "{k=v,...}")."""
    base = "py-" + (re.sub(r"[^a-z0-9_-]", "", cls.__name__.lower()) or "class")
    name, k = base, 1
    while name + given in taken:
        k += 1
        name = "%s-%d" % (base, k)
    taken.add(name + given)
    return name


def live(kind, p, workloads, taken=None, first_seed=1):
    """An adapter for what a call was given as a policy: an instance
    (every simulation starts from a deep copy of it), a class (called per
    simulation, with seed= the simulation's when __init__ takes it, as
    the bridge calls a py:MODULE:CLASS) or a factory (called per
    simulation with the simulation's seed). Its parameters are declared
    to the host (provenance: bso_params/plo_params); `a.given` is what
    the label shows of them ("{eta=0.05}": an instance's, a factory's
    object's, that differ from __init__'s defaults)."""
    from . import _bridge
    taken = taken if taken is not None else set()
    what = {"bso": "batch-size optimizer (bso)", "plo": "power-limit optimizer (plo)"}[kind]
    if inspect.isclass(p):
        if not _has_methods(kind, p):
            raise TypeError("%s %s: the class has no %s" % (kind, origin(p), _interface(kind)))
        try:
            params = _bridge._params(p)
        except _bridge.BridgeError as e:
            raise TypeError(str(e)) from None
        a = Adapter(kind, _bridge.maker(p, params), origin(p), _source_sha256(p), workloads,
                    short_name(p, taken))
        _bridge.declare(a, params)
        a.given = ""
        return a
    if callable(p) and not _has_methods(kind, p):      # a factory: seed -> object
        import contextlib
        try:
            with contextlib.redirect_stdout(sys.stderr):   # as a policy's calls print
                probe = p(first_seed)
        except Exception as e:
            raise TypeError("%s %r: the factory called with seed %d raised %s" % (
                kind, p, first_seed, _last_line(e))) from e
        if not _has_methods(kind, probe):
            raise TypeError("%s %r: the factory returned %s (%s), not a %s with %s" % (
                kind, p, _short_repr(probe), origin(probe), what, _interface(kind)))
        params = [x for x in object_params(probe) if x[0] != "seed"]

        def make(_values, host):
            return p(int(host.seed) if host.abi_version >= 203 else first_seed)
        cls, sha, src = type(probe), _source_sha256(type(probe)), origin(probe)
    else:
        if not _has_methods(kind, p):
            raise TypeError("%s %s (%s) is not a %s: it has no %s; pass an instance, its"
                            " class or a factory (seed -> instance)" % (
                                kind, _short_repr(p), origin(p), what, _interface(kind)))
        params = object_params(p)

        def make(_values, _host):
            return copy.deepcopy(p)
        cls, sha, src = type(p), _source_sha256(type(p)), origin(p)
    params = _fit(params, 900)    # the host records at most 1023 characters
    shown = _fit([(n, v, d) for n, v, d in params if not d], 200)  # a label: 599
    shown = [(n, v) for n, v, _d in shown]
    given = "{%s}" % ",".join("%s=%s" % (n, fmt(v)) for n, v in shown) if shown else ""
    a = Adapter(kind, make, src, sha, workloads, short_name(cls, taken, given))
    _bridge.declare(a, _specs(params), b"the live object's value")
    a.given, a.shown = given, [(n, fmt(v)) for n, v in shown]
    return a


def _fit(params, room):
    """The first of params whose "k=v,..." text fits in room characters
    (an object with hundreds of attributes is still recorded, in part)."""
    out, used = [], 0
    for x in params:
        used += len("%s=%s," % (x[0], fmt(x[1])))
        if used > room:
            break
        out.append(x)
    return out


def _short_repr(x):
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."
