"""The calls behind wattsim.simulate & co.: options in, a table out, the
library's status turned into exceptions."""
import collections
import csv
import io
import operator
import warnings

from . import _lib, _policy

try:
    import numpy as _np
    import pandas as _pd
except ImportError:  # the standard library alone: lists of dicts
    _np = _pd = None


class WattsimError(Exception):
    """Base of the exceptions wattsim raises."""


class InputError(WattsimError, ValueError):
    """Bad input: what the CLI exits 2 for, with its one-line message."""


class PolicyError(WattsimError):
    """A policy failed: the message names the policy and the call. From
    sweep(), whose other simulations go on (the CLI writes their results
    and exits 1), `result` holds what they computed, as the call would
    have returned it (the failed simulations counted in
    attrs["n_failed"]); else None."""
    result = None


class SimulationError(WattsimError):
    """A simulation failed, not by a policy's fault (b0 never reaches the
    target, ...)."""


class CancelledError(WattsimError):
    """The progress callback (or cancel) asked to stop."""


class WattsimWarning(UserWarning):
    """A note or warning of wattsim's (what the CLI prints on stderr: a
    what-if that moved the default knob, a series that wrapped around, a
    policy's log line). Each is also in the result's attrs["notes"]."""


class Table(list):
    """A list of dicts with attrs, what a call returns without pandas."""
    attrs = None


# Options given once per value (the CLI's repeatable ones; carbon=[a, b]
# joins several series files, as --carbon a --carbon b).
_REPEATED = {"set", "bso-param", "plo-param", "allow-plugins", "allow-python", "plugin",
             "carbon"}
_workloads = {}


def version():
    """(wattsim version, API version) of the loaded library."""
    L = _lib.lib()
    return L.ws_api_wattsim_version().decode(), L.ws_api_version()


def _plain(v):
    """A numpy scalar as the Python number it holds (np.float64 is a float
    whose repr, from numpy 2, is "np.float64(0.5)"); a numpy array or a
    pandas Series as a list; anything else as it is."""
    if type(v).__module__.split(".")[0] in ("numpy", "pandas") and hasattr(v, "tolist"):
        return v.tolist()
    return v


def _scalar(v):
    v = _plain(v)
    if v is True:
        return "1"
    if v is False:
        return "0"
    if isinstance(v, float):
        return float.__repr__(v)
    return str(v)


def _axis(v):
    """A list or range for a config axis: A..B when contiguous, else a
    YAML flow list."""
    if isinstance(v, range) and v.step == 1 and len(v) > 0:
        return "%d..%d" % (v.start, v.stop - 1)
    return "[" + ", ".join(_scalar(x) for x in v) + "]"


def _table(rows, attrs):
    if _pd is not None:
        df = _pd.DataFrame(rows)
        df.attrs.update(attrs)
        return df
    t = Table(rows)
    t.attrs = attrs
    return t


def _csv_table(text, attrs):
    if text is None:
        return None
    if _pd is not None:
        # round_trip: the CSV's %.17g numbers read back to the bit (pandas'
        # default parser may be off in the last bit)
        df = _pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""],
                          float_precision="round_trip")
        df.attrs.update(attrs)
        return _typed(df)
    rows = []
    for r in csv.DictReader(io.StringIO(text)):
        for k, v in r.items():
            try:
                r[k] = int(v)
            except ValueError:
                try:
                    r[k] = float(v)
                except ValueError:
                    pass
        rows.append(r)
    return _table(rows, attrs)


def _flat(d, prefix=""):
    """A JSON object as one row in the CLI's CSV vocabulary (sweep.csv,
    curves.csv): {"energy_j": {"mean": m, "ci95": [lo, hi]}} -> energy_j,
    energy_j_lo, energy_j_hi; {"break_even": {"median": m, "lo": a, "hi":
    b}} -> break_even, break_even_lo, break_even_hi; {"saving": {"energy":
    x}} -> saving_energy."""
    out = {}
    for k, v in d.items():
        name = prefix + k
        if isinstance(v, dict) and ("mean" in v or "median" in v):
            out[name] = v.get("mean", v.get("median"))
            lo_hi = v.get("ci95", [v.get("lo"), v.get("hi")])
            out[name + "_lo"], out[name + "_hi"] = lo_hi
            for k2, v2 in v.items():
                if k2 not in ("mean", "median", "ci95", "lo", "hi"):
                    out[name + "_" + k2] = v2
        elif isinstance(v, dict):
            out.update(_flat(v, name + "_"))
        elif isinstance(v, list) and len(v) == 2 and k.startswith("ci"):
            out[name + "_lo"], out[name + "_hi"] = v
        else:
            out[name] = v
    return out


# One vocabulary (docs/python.md, "Columns"): a column of a given name has
# one dtype in every table. Marks and a run's outcome are bool (the CLI's
# CSV writes them 0/1); knob settings, counts and indices int; quantities
# float; names, parameters, hashes and messages str ("" when empty, never
# NaN). Columns not named here keep what the reader inferred.
_BOOL = {"reached", "profiled", "frontier", "default", "best", "jit", "early_stopping"}
_FLOAT = {"eta", "beta", "energy_j", "time_s", "cost", "co2_g", "usd", "start_s",
          "cum_cost", "regret", "steady_energy_j", "steady_time_s", "tta_s", "eta_j",
          "time_per_epoch_s", "average_power_w", "reach_rate", "energy_saving_j",
          "target_metric"}
_FLOAT |= {n + e for n in list(_FLOAT) for e in ("_lo", "_hi")}
_FLOAT |= {"saving_" + k for k in ("energy", "time", "cost", "steady_energy", "steady_time")}
_STR = {"policy", "gpu", "workload", "bso", "plo", "bso_params", "plo_params", "bso_sha256",
        "plo_sha256", "bso_file", "plo_file", "error", "status", "whatif", "dataset",
        "network", "optimizer", "name", "file", "summary", "params", "display", "metric",
        "better"}
# Where the CLI's pareto and trace check use a run's word for a knob's or a
# batch size's figure, their tables rename it: `reached` there counts runs
# (a run's `reached` is bool), pareto's `epochs` is a mean (a run's is an
# int).
_RENAME = {"knobs": {"reached": "runs_reached", "epochs": "epochs_mean"},
           "check": {"reached": "runs_reached"}}


def _typed(df, kind=None):
    """df (a DataFrame, or a Table) in the vocabulary above."""
    if _pd is None or df is None or not hasattr(df, "columns"):
        return df
    # attrs off while columns are read: pandas deep-copies them into every
    # Series taken out (the provenance, for each column)
    attrs = dict(df.attrs)
    df.attrs = {}
    ren = _RENAME.get(kind)
    if ren:
        df = df.rename(columns=ren)
    for c, t in df.dtypes.items():
        if c not in _BOOL and c not in _FLOAT and c not in _STR:
            continue
        col = df[c]
        try:
            if c in _BOOL and t != bool and col.notna().all():
                df[c] = col.astype(bool)
            elif c in _FLOAT and t != float:
                df[c] = col.astype(float)
            elif c in _STR and (t != object or col.isna().any()):
                df[c] = col.astype(object).where(col.notna(), "").map(
                    lambda v: v if isinstance(v, str) else str(v))
        except (TypeError, ValueError):
            pass
    df.attrs = attrs
    return df


def _column(name, v):
    """One column's values (a tuple of JSON scalars) as the numpy array
    _typed would leave in a DataFrame built from rows, or None when it is
    not that simple (None, mixed kinds, a name whose dtype would not take
    them): then the general path decides."""
    kinds = set(map(type, v))
    if kinds == {bool}:
        if name in _STR:
            return None
        return _np.array(v, dtype=float if name in _FLOAT else bool)
    if kinds == {int}:
        if name in _STR:
            return None
        try:
            a = _np.array(v, dtype=_np.int64)
        except OverflowError:
            return None
        return a.astype(bool) if name in _BOOL else a.astype(float) if name in _FLOAT else a
    if kinds <= {int, float}:
        return None if name in _BOOL or name in _STR else _np.array(v, dtype=float)
    if kinds == {str}:
        if name in _BOOL or name in _FLOAT:
            return None
        a = _np.empty(len(v), dtype=object)
        a[:] = v
        return a
    return None


def _frame(rows, attrs, kind=None):
    """rows (JSON objects, all with the same keys) as a DataFrame built
    column by column, already in the vocabulary (what _typed(_table(rows))
    gives, without pandas' inference per row and a second pass per
    column), or None when the rows are not that regular."""
    if _pd is None or not isinstance(rows, list) or not rows:
        return None
    first = rows[0]
    if not isinstance(first, dict) or not first:
        return None
    keys = first.keys()
    for r in rows:
        if not isinstance(r, dict) or r.keys() != keys:
            return None
    names = list(keys)
    get = operator.itemgetter(*names)
    cols = list(zip(*map(get, rows))) if len(names) > 1 else [tuple(map(get, rows))]
    ren = _RENAME.get(kind, {})
    data = {}
    for k, v in zip(names, cols):
        name = ren.get(k, k)
        if name in data:
            return None
        a = _column(name, v)
        if a is None:
            return None
        data[name] = a
    df = _pd.DataFrame(data, copy=False)
    df.attrs.update(attrs)
    return df


def _catalogue(options):
    """The catalogue's workloads (for the Job a Python policy sees)."""
    key = options.get("catalogue")
    if key not in _workloads:
        c = _lib.Call("workloads")
        if key:
            c.set("catalogue", key)
        rc, _msg, j = c.run()
        _workloads[key] = {w["workload"]: w for w in j["result"]} if rc == 0 else {}
    found = dict(_workloads[key])
    job = options.get("job")
    if job and job.count("/") == 2:    # an inline job: its own names
        d, n, o = job.split("/")
        found[d] = {"dataset": d, "network": n, "optimizer": o,
                    "target_metric": float(options.get("target", "nan"))}
    return found


class _Policies:
    """Live objects of a call, adapted and added to it."""

    def __init__(self, call, options):
        self.call, self.options, self.adapters, self.taken = call, options, [], set()
        self.keys = {}                    # the same object twice: one policy
        self.seeds = _seeds(options)

    def name(self, kind, p, given=False):
        """The option text for p: a name as it is; a live object, class or
        factory as its key ("py:@live:1"), with the parameters its label
        shows when `given` ("py:@live:1{eta=0.05}": a policy pair's label;
        all of them are in provenance either way)."""
        if p is None or isinstance(p, str):
            return p
        if (kind, id(p)) in self.keys:
            key, a = self.keys[(kind, id(p))]
            return key + a.given if given else key
        a = _policy.live(kind, p, _catalogue(self.options), self.taken,
                         self.seeds[0] if self.seeds else 1)
        if len(self.seeds) > 1 and not callable(p) and _policy.seeded(p):
            cls = type(p).__name__
            warnings.warn(
                "%s %s (%s): one live object for %d seeds: every simulation starts from a copy"
                " of it, seeded as it was built, not with the simulation's seed; pass the class"
                " (%s) or a factory (lambda seed: %s(seed=seed)) to build one per simulation"
                % (kind, a.label, a.origin, len(self.seeds), cls, cls),
                WattsimWarning, stacklevel=_outside())
        key = self.call.add(kind, a.descriptor, a.origin, a.sha256)
        self.adapters.append((key, a))
        self.keys[(kind, id(p))] = key, a
        return key + a.given if given else key

    def raise_faults(self):
        for key, a in self.adapters:
            a.raise_fault(key)

    def restyle(self, msg):
        for _key, a in self.adapters:
            msg = a.restyle(msg)
        return msg


def _outside():
    """The stacklevel of the first frame outside the package: the user's
    line that made the call."""
    import os
    import sys
    here, f, level = os.path.dirname(os.path.abspath(__file__)), sys._getframe(1), 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f, level = f.f_back, level + 1
    return level


def _seeds(options):
    """The seeds a call runs (seed=3, seed=range(1, 11), seed="1..10",
    seeds=N: 1..N), as far as the options say; [] when they do not."""
    v = _plain(options.get("seed"))
    if isinstance(v, (list, tuple, range)):
        return [int(x) for x in v]
    if isinstance(v, str) and ".." in v:
        a, _, b = v.partition("..")
        try:
            return list(range(int(a), int(b) + 1))
        except ValueError:
            return []
    if isinstance(v, (int, str)) and str(v).lstrip("-").isdigit():
        return [int(v)]
    n = _plain(options.get("seeds"))
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return list(range(1, n + 1))
    return []


def _command(command, options, table=None, progress=None, cancel=None, build=None):
    call = _lib.Call(command)
    opts = {k.replace("_", "-"): v for k, v in options.items() if v is not None}
    live = _Policies(call, opts)
    for k, v in opts.items():
        v = _plain(v)
        if k in ("bso", "plo"):
            p, v = v, live.name(k, v)
            if p is not v:    # a live policy: its label's parameters, given as options
                for name, text in live.keys[(k, id(p))][1].shown:
                    try:
                        call.set(k + "-param", "%s=%s" % (name, text))
                    except TypeError:     # a command without it (plan): provenance has them
                        break
        elif k == "policies" and not isinstance(v, str):
            # plan runs its policies as they are: no {...} in its labels
            g = command != "plan"
            v = ",".join("%s:%s" % (live.name("bso", b, g), live.name("plo", p, g)) for b, p in v)
        if k in _REPEATED:
            items = v.items() if isinstance(v, dict) else None
            for x in (["%s=%s" % (a, _scalar(b)) for a, b in items] if items is not None
                      else [v] if isinstance(v, str) else v):
                call.set(k, _scalar(x))
        elif isinstance(v, (list, tuple, range)):
            call.set(k, _axis(v))
        else:
            call.set(k, _scalar(v))
    rc, msg, j = call.run(progress, cancel)
    if call.raised is not None:
        raise call.raised
    notes = list(j.get("notes", [])) if rc == _lib.OK and j is not None else []
    for n in notes:    # shown where the call is (a notebook's cell), not only on a terminal
        warnings.warn(n, WattsimWarning, stacklevel=3)
    try:
        live.raise_faults()
    except PolicyError as e:
        # A live policy's fault fails its simulation, not the call: keep
        # what the others computed (build: the caller's result from it).
        if rc == _lib.OK and j is not None and build is not None:
            e.result = build(j["result"], {"provenance": j["provenance"], "notes": notes})
        raise
    if rc != _lib.OK:
        exc = {_lib.INPUT: InputError, _lib.FAILED: SimulationError,
               _lib.POLICY: PolicyError, _lib.CANCELLED: CancelledError,
               _lib.MISUSE: TypeError, _lib.NOMEM: MemoryError, _lib.IO: OSError}[rc]
        raise exc(live.restyle(msg))
    prov, res = j["provenance"], j["result"]
    attrs = {"provenance": prov, "notes": notes}
    if table is None:
        return res, attrs
    rows = res.get(table) if isinstance(res, dict) else res
    if table == "check":
        rows = [dict(gpu=w["gpu"], dataset=w["dataset"], network=w["network"],
                     optimizer=w["optimizer"], **{k: v for k, v in b.items()})
                for w in res["workloads"] for b in w["batch_sizes"]]
        attrs["report"] = res
    else:
        attrs.update({k: v for k, v in res.items() if k != table} if isinstance(res, dict)
                     else {})
    df = _frame(rows, attrs, table)
    return df if df is not None else _typed(_table(rows, attrs), table)


def simulate(*, progress=None, **options):
    """`wattsim simulate`: one row per run (recurrence, try, bs, pl,
    energy_j, time_s, cost, reached, ...); the simulation's totals in
    attrs (energy_j, time_s, cost, final_bs, ...), its provenance in
    attrs["provenance"]. bso/plo may be live Python objects."""
    return _command("simulate", options, table="history", progress=progress)


def pareto(**options):
    """`wattsim pareto`: the knob table, one row per (bs, pl), with the
    frontier, default, best and jit flags."""
    return _command("pareto", options, table="knobs")


def _plan_seeds(options):
    """plan's seeds as sweep's: seed=range(1, N + 1) (or any list of 1..N
    in order) is seeds=N; plan runs seeds 1..N."""
    seed = options.pop("seed", None)
    if seed is None:
        return options
    if options.get("seeds") is not None:
        raise InputError("plan: give seed=range(1, N + 1) or seeds=N, not both")
    v = _plain(seed)
    v = [v] if isinstance(v, int) and not isinstance(v, bool) else v
    try:
        v = [int(x) for x in v] if all(float(x) == int(x) for x in v) else None
    except (TypeError, ValueError):
        v = None
    if not v or v != list(range(1, len(v) + 1)):
        raise InputError("plan: seed=%r: plan runs seeds 1..N; give seed=range(1, N + 1)"
                         " (or seeds=N)" % (seed,))
    return dict(options, seeds=len(v))


def plan(*, progress=None, **options):
    """`wattsim plan`: one row per policy (break-even, savings); the
    recommendation and the default in attrs. seed=range(1, N + 1) or
    seeds=N: the seeds 1..N."""
    df = _command("plan", _plan_seeds(dict(options)), table="policies", progress=progress)
    if _pd is not None and len(df):
        attrs = df.attrs
        df = _typed(_pd.DataFrame([_flat(r) for r in df.to_dict("records")]))
        df.attrs.update(attrs)
    return df


class SweepResult(collections.namedtuple("SweepResult", "cells history curves")):
    """What sweep() returns: (cells, history, curves), and final_knobs, a
    long table (cell, bs, pl, count): how many of each cell's seeds ended
    on each knob, `cell` the row of `cells` (its index)."""
    final_knobs = None


def sweep(*, progress=None, cancel=None, **options):
    """`wattsim sweep` (a config file as config=..., or the axes as
    options): SweepResult(cells, history, curves) with .final_knobs, cells
    one row per cell in sweep.csv's columns (means and 95% intervals:
    energy_j, energy_j_lo, energy_j_hi, ...), history (keep_history=True)
    one row per run, curves (curves=True), final_knobs one row per cell and
    final knob (cell, bs, pl, count). progress(done, total) is called
    about every 0.1 s; a true return, cancel() returning true or Ctrl-C
    stops the sweep."""
    return _sweep_result(*_command("sweep", options, progress=progress, cancel=cancel,
                                   build=_sweep_result))


# sweep.csv's columns, in its order (sim/src/report/sweep_report.c), then
# what sweep.json has besides
_CELL_ORDER = ("bso plo policy gpu workload eta beta seeds seeds_ok seeds_failed recurrences"
               " energy_j energy_j_lo energy_j_hi time_s time_s_lo time_s_hi cost cost_lo"
               " cost_hi steady_energy_j steady_energy_j_lo steady_energy_j_hi steady_time_s"
               " steady_time_s_lo steady_time_s_hi saving_energy saving_time saving_cost"
               " saving_steady_energy saving_steady_time regret regret_lo regret_hi error"
               " co2_g co2_g_lo co2_g_hi usd usd_lo usd_hi whatif bso_params bso_sha256"
               " plo_params plo_sha256").split()


def _sweep_result(res, attrs):
    import json
    summary = json.loads(res["summary_json"])
    rows, knobs = [], []
    for i, c in enumerate(summary["cells"]):
        c = dict(c, seeds=summary.get("n_seeds"))
        for k, n in (c.pop("final_knobs", None) or {}).items():
            bs, pl = k.split(":")
            knobs.append({"cell": i, "bs": int(bs), "pl": int(pl), "count": int(n)})
        f = _flat(c)
        rows.append({k: f[k] for k in _CELL_ORDER if k in f}
                    | {k: v for k, v in f.items() if k not in _CELL_ORDER})
    cell_attrs = dict(attrs, **{k: v for k, v in summary.items() if k != "cells"},
                      n_failed=res["n_failed"])
    cells = _typed(_table(rows, cell_attrs))
    final = _table(knobs, dict(attrs))
    if _pd is not None and not len(final):
        final = _pd.DataFrame({"cell": _pd.Series(dtype=int), "bs": _pd.Series(dtype=int),
                               "pl": _pd.Series(dtype=int), "count": _pd.Series(dtype=int)})
        final.attrs.update(attrs)
    r = SweepResult(cells, _csv_table(res["history_csv"], attrs),
                    _csv_table(res["curves_csv"], attrs))
    r.final_knobs = final
    return r


def run(config, *, progress=None, **options):
    """`wattsim run CONFIG` without files: (cells, history)."""
    res, attrs = _command("run", dict(options, config=config), progress=progress)
    return (_typed(_table([_flat(c) for c in res["cells"] or []], attrs)),
            _csv_table(res["history_csv"], attrs))


def workloads(**options):
    """`wattsim list workloads`."""
    return _command("workloads", options, table="")


def gpus(**options):
    """`wattsim list gpus`: the GPUs of the trace folder."""
    res, _ = _command("gpus", options)
    return res


def policies_list(**options):
    """`wattsim list policies`: (bso, plo) tables."""
    res, attrs = _command("policies", options)
    return _table(res["bso"], attrs), _table(res["plo"], attrs)
