"""The bridge plugin's Python side (python/bridge.c): a `py:MODULE:CLASS`
named on the command line becomes a descriptor of the same adapter live
objects use (_policy.py). The class is called once per simulation with
the parameters given in braces (py:mod:Cls{seed=3}), each declared to the
host from the defaults of its __init__ (int, float, bool or str), so the
host checks and records them as it does a C policy's.

An explicit `seed` parameter of __init__ (not **kwargs) gets the seed of
the simulation the instance is for (ws_host.seed) unless {seed=S} gives
one, as Zeus's run_single.py builds PruningGTSBatchSizeOptimizer(seed=seed)
with the simulation's seed: a sweep over seeds then seeds the class per
cell. It is declared to the host as an int parameter whose default,
SEED_FROM_SIMULATION (-1), stands for that."""
import ctypes
import importlib
import inspect
import math
import re
import sys

from . import _policy

BSO, PLO = 1, 2
_kept = []   # descriptors live as long as the process


class BridgeError(Exception):
    """A message for the user as it stands (no exception name)."""


class Answer(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("descriptor", ctypes.c_void_p),
                ("origin", ctypes.c_char * 1024), ("sha256", ctypes.c_char * 65),
                ("error", ctypes.c_char * 1)]


Value = _policy.Value


class ParamSpec(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("default", Value),
                ("min", ctypes.c_double), ("max", ctypes.c_double), ("help", ctypes.c_char_p)]


KINDS = {bool: 3, int: 1, float: 2, str: 4}
BIG = 2.0 ** 53
SEED_FROM_SIMULATION = -1


def _kind(cls):
    """BSO when predict takes the job alone, PLO when (job, batch_size)."""
    try:
        n = len([p for p in inspect.signature(cls.predict).parameters.values()
                 if p.default is p.empty and p.kind == p.POSITIONAL_OR_KEYWORD])
    except (AttributeError, TypeError, ValueError):
        return None
    return BSO if n == 2 and hasattr(cls, "register_job") else PLO if n == 3 else None


def _check_default(cls, name, k, d):
    """A default the host can take as it is: an int within the declared
    range (ctypes would store 2**64 + 7 as 7, past the bounds, without a
    word), a float that is a number, a str without NUL (C would cut it)."""
    where = "%s.%s: __init__'s default %s=%r" % (cls.__module__, cls.__qualname__, name, d)
    if k == 1 and not -BIG <= d <= BIG:
        raise BridgeError("%s is outside the range of an int parameter [-2^53, 2^53];"
                          " give a default within it" % where)
    if k == 2 and math.isnan(d):
        raise BridgeError("%s is NaN, which no bound admits; give a float parameter a"
                          " number as its default" % where)
    if k == 2 and math.isinf(d):
        raise BridgeError("%s is infinite, outside the range of a float parameter; give a"
                          " finite default" % where)
    if k == 4 and "\0" in d:
        raise BridgeError("%s holds a NUL character, which C would cut the value at;"
                          " remove it" % where)


def _params(cls):
    out = []
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return out
    for p in list(sig.parameters.values())[1:]:
        if p.name == "seed" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            v = Value()
            v.i = SEED_FROM_SIMULATION
            out.append((p.name, 1, v, float(SEED_FROM_SIMULATION), BIG))
            continue
        if p.default is p.empty or type(p.default) not in KINDS:
            continue
        k = KINDS[type(p.default)]
        _check_default(cls, p.name, k, p.default)
        v = Value()
        if k == 1:
            v.i = p.default
        elif k == 2:
            v.d = p.default
        elif k == 3:
            v.b = int(p.default)
        else:
            v.s = p.default.encode()
        lo, hi = {1: (-BIG, BIG), 2: (-sys.float_info.max, sys.float_info.max)}.get(k, (0, 0))
        out.append((p.name, k, v, lo, hi))
    return out


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


def split_spec(spec):
    """py:MODULE:CLASS as (MODULE, CLASS), both dotted names: split at the
    colons as registry.c's --allow-python check splits it (a spec with
    another colon is refused by both, never split one way for the check
    and another for the import)."""
    parts = spec.split(":")
    if len(parts) != 3 or parts[0] != "py" or not all(_DOTTED.match(x) for x in parts[1:]):
        raise BridgeError("not py:MODULE:CLASS, MODULE and CLASS dotted Python names"
                          " (e.g. py:mylab.policies:MyBSO)")
    return parts[1], parts[2]


def maker(cls, params):
    """make(values, host): cls called with the declared parameters' values,
    `seed` the simulation's when it stands at SEED_FROM_SIMULATION."""
    def make(values, host):
        kw = {}
        for i, (pname, k, *_rest) in enumerate(params):
            v = values[i]
            kw[pname] = (v.i if k == 1 else v.d if k == 2 else bool(v.b) if k == 3
                         else (v.s or b"").decode())
        if kw.get("seed") == SEED_FROM_SIMULATION:
            if host.abi_version >= 203:   # ws_host.seed (2.3)
                kw["seed"] = int(host.seed)
            else:                         # an older host: the class's default
                del kw["seed"]
        return cls(**kw)
    return make


def declare(ad, params, help_text=b"keyword argument of __init__"):
    """The adapter's parameters declared to the host (its descriptor's
    param specs), which checks and records them as a C policy's."""
    specs = (ParamSpec * (len(params) + 1))()
    for i, (pname, k, v, lo, hi) in enumerate(params):
        specs[i] = ParamSpec(pname.encode(), k, v, lo, hi,
                             help_text + b"; -1: the simulation's seed"
                             if pname == "seed" and v.i == SEED_FROM_SIMULATION and k == 1
                             else help_text)
    ad.descriptor.params = ctypes.cast(specs, ctypes.c_void_p)
    ad.descriptor.param_spec_size = ctypes.sizeof(ParamSpec)
    ad.descriptor.value_size = ctypes.sizeof(Value)
    ad.param_names = [p[0] for p in params]
    ad.with_params = True
    ad.specs = (specs, [p[2] for p in params])   # as long as the adapter


def provide(spec, want, host_abi, address):
    a = Answer.from_address(address)
    mod, name = split_spec(spec)
    cls = importlib.import_module(mod)
    for part in name.split("."):
        cls = getattr(cls, part)
    if not inspect.isclass(cls):
        raise BridgeError("%s.%s is not a class" % (mod, name))
    kind = _kind(cls)
    if kind is None:
        raise BridgeError("%s.%s is neither a batch-size optimizer (register_job, predict(job),"
                          " observe) nor a power-limit optimizer (predict(job, batch_size),"
                          " observe)" % (mod, name))
    if want and want != kind:
        raise BridgeError("%s.%s is a %s, not a %s" % (
            mod, name, *(("batch-size optimizer (bso)", "power-limit optimizer (plo)")
                         [::1 if kind == BSO else -1])))
    params = _params(cls)
    make = maker(cls, params)
    ad = _policy.Adapter("bso" if kind == BSO else "plo", make,
                         "%s.%s" % (mod, name), _policy._source_sha256(cls),
                         name=_policy.short_name(cls, set()))
    declare(ad, params)
    _kept.append(ad)
    a.kind = kind
    a.descriptor = ctypes.addressof(ad.descriptor)
    a.origin = ("%s.%s from %s" % (mod, name, inspect.getsourcefile(cls) or "?")).encode()[:1023]
    a.sha256 = ad.sha256.encode()
    return 0
