"""Results as data (issue 29 items 3-6): traces kept in the process
between calls (and read again when they change), notes that say what the
simulation changed, one vocabulary across every table, final knobs as a
long table."""
import ctypes
import hashlib
import os
import shutil

import pytest

import wattsim
from wattsim import _lib
from conftest import TRACES


def _stats():
    L = _lib.lib()
    f = L.ws_trace_cache_stats
    f.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)] * 2
    f.restype = None
    h, m = ctypes.c_ulonglong(), ctypes.c_ulonglong()
    f(ctypes.byref(h), ctypes.byref(m))
    return h.value, m.value


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _copy(dst):
    os.makedirs(dst)
    for n in ("summary_train.csv", "summary_power_v100.csv"):
        shutil.copy2(os.path.join(TRACES, n), dst)
    return dst


def _bumped(text):
    """The power trace with each cifar100 row's average_power changed in its
    first digit: the same size, other numbers."""
    out = []
    for line in text.splitlines(True):
        if line.startswith("cifar100,"):
            head, _, p = line.rpartition(",")
            p = "%d%s" % (int(p[0]) % 9 + 1, p[1:])
            line = head + "," + p
        out.append(line)
    return "".join(out)


def _run(d):
    df = wattsim.simulate(traces=d, gpu="v100", workload="cifar100", seed=3, recurrences=6)
    return df.attrs["energy_j"], df.attrs["provenance"]["traces"]["files"]


def test_traces_are_kept_between_calls_and_read_again_when_changed(tmp_path):
    d = _copy(str(tmp_path / "t"))
    power = os.path.join(d, "summary_power_v100.csv")
    e1, files = _run(d)
    assert files["summary_power_v100.csv"] == _sha(power)
    h0, m0 = _stats()
    assert _run(d) == (e1, files)                  # kept: nothing read
    h1, m1 = _stats()
    assert (h1, m1) == (h0 + 1, m0)

    # rewritten in place: the same size, a new mtime
    st = os.stat(power)
    with open(power) as f:
        new = _bumped(f.read())
    assert len(new) == st.st_size
    with open(power, "w") as f:
        f.write(new)
    os.utime(power, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert os.stat(power).st_ino == st.st_ino
    e2, files2 = _run(d)
    assert _stats()[1] == m1 + 1
    assert e2 != e1
    # what a folder never seen before, with the new power trace, gives
    fresh = _copy(str(tmp_path / "fresh"))
    with open(os.path.join(fresh, "summary_power_v100.csv"), "w") as f:
        f.write(new)
    assert _run(fresh)[0] == e2
    assert files2["summary_power_v100.csv"] == _sha(power) != files["summary_power_v100.csv"]

    # replaced: a new inode, the same size and mtime as the file it replaces
    st = os.stat(power)
    tmp = power + ".new"
    with open(TRACES + "/summary_power_v100.csv") as f:
        old = f.read()
    with open(tmp, "w") as f:
        f.write(old)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, power)
    st2 = os.stat(power)
    assert (st2.st_size, st2.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert st2.st_ino != st.st_ino
    m2 = _stats()[1]
    e3, files3 = _run(d)
    assert _stats()[1] == m2 + 1
    assert e3 == e1 and files3 == files


def test_trace_cache_can_be_turned_off_and_results_do_not_depend_on_it(tmp_path):
    d = _copy(str(tmp_path / "t"))
    e1 = _run(d)
    L = _lib.lib()
    L.ws_trace_cache_set.argtypes = [ctypes.c_size_t]
    cap = L.ws_trace_cache_capacity
    cap.restype = ctypes.c_size_t
    assert cap() == 8
    try:
        L.ws_trace_cache_set(0)
        h, m = _stats()
        assert _run(d) == e1
        assert _stats() == (h, m)                # not looked up at all
    finally:
        L.ws_trace_cache_set(8)


B0_NOTE = ("wattsim: note: librispeech on p100: default batch size b0 = 256 capped to 72, the"
           " largest batch size of p100's power trace for the workload (as the paper's"
           " scripts do)")


def test_b0_capped_is_noted_in_the_result_and_on_the_clis_stderr():
    import subprocess
    import warnings
    from conftest import CLI
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = wattsim.simulate(gpu="p100", workload="librispeech", seed=1, recurrences=2)
    assert df.attrs["notes"] == [B0_NOTE]
    assert [str(x.message) for x in w] == [B0_NOTE]
    assert df["bs"].iloc[0] == 72
    cli = subprocess.run([CLI, "simulate", "--traces", TRACES, "--gpu", "p100", "--workload",
                          "librispeech", "--seed", "1", "--recurrences", "2"],
                         capture_output=True, text=True, check=True)
    assert cli.stderr == B0_NOTE + "\n"
    # not capped: no note
    assert wattsim.simulate(gpu="v100", workload="cifar100", seed=1,
                            recurrences=2).attrs["notes"] == []
    # a sweep notes it once per GPU and workload, whatever its seeds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = wattsim.sweep(gpu="p100", workload="librispeech", seed=range(1, 4), recurrences=2)
    assert res.cells.attrs["notes"].count(B0_NOTE) == 1


def _all_tables(tmp_path):
    """Every table the package returns, by name."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = {"simulate": wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=4,
                                          keep_history=True),
             "pareto": wattsim.pareto(gpu="v100", workload="cifar100"),
             "plan": wattsim.plan(gpu="v100", workload="cifar100", seed=range(1, 3),
                                  recurrences=10)}
        r = wattsim.sweep(gpu="v100", workload=["cifar100", "squad"], seed=range(1, 3),
                          recurrences=4, keep_history=True, curves=True)
        t.update({"sweep.cells": r.cells, "sweep.history": r.history,
                  "sweep.curves": r.curves, "sweep.final_knobs": r.final_knobs})
        cfg = tmp_path / "one.yaml"
        cfg.write_text("gpu: v100\nworkload: cifar100\nseed: 1..2\nrecurrences: 3\n")
        t["run.cells"], t["run.history"] = wattsim.run(str(cfg))
        t["trace.check"] = wattsim.trace.check(TRACES)
        t["workloads"] = wattsim.workloads()
        t["bso"], t["plo"] = wattsim.policies_list()
    return t


def test_one_vocabulary_same_name_same_dtype(tmp_path):
    seen = {}
    for table, df in _all_tables(tmp_path).items():
        assert len(df) and not any("." in c for c in df.columns), (table, list(df.columns))
        for c in df.columns:
            seen.setdefault(c, {})[table] = str(df[c].dtype)
    mixed = {c: d for c, d in seen.items() if len(set(d.values())) > 1}
    assert mixed == {}
    # a run's outcome and the knob table's marks are bool; quantities float
    assert seen["reached"] == dict.fromkeys(["simulate", "sweep.history", "run.history"], "bool")
    for c in ("frontier", "default", "best", "jit"):
        assert seen[c] == {"pareto": "bool"}
    for c in ("eta", "beta", "energy_j", "regret", "regret_lo"):
        assert set(seen[c].values()) == {"float64"}, c
    assert seen["runs_reached"] == {"pareto": "int64", "trace.check": "int64"}
    assert seen["epochs_mean"] == {"pareto": "float64"}
    # the CLI's sweep.csv names (and order) for a sweep's cells
    assert seen["regret_lo"].keys() == {"sweep.cells", "sweep.curves"}
    assert seen["break_even_lo"] == {"plan": "int64"}
    assert set(seen["error"].values()) == {"object"}


def _same_frames(a, b, what):
    import pandas as pd
    assert list(a.columns) == list(b.columns), what
    assert [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes], what
    pd.testing.assert_frame_equal(a, b, check_exact=True, obj=what)
    assert a.attrs == b.attrs, what


def test_tables_built_by_column_are_the_tables_built_by_row(tmp_path, monkeypatch):
    """_frame (columns straight to numpy, issue 29 item 6) gives what the
    general path (pandas' inference from the rows, then _typed) gives, on
    every table the package returns and on rows that need the general path."""
    from wattsim import _run
    fast = _all_tables(tmp_path)
    built = []
    real = _run._frame
    monkeypatch.setattr(_run, "_frame", lambda *a: built.append(a[2]) or real(*a))
    _all_tables(tmp_path)
    assert "history" in built and "knobs" in built          # simulate, pareto: by column
    monkeypatch.setattr(_run, "_frame", lambda *a: None)
    slow = _all_tables(tmp_path)
    assert fast.keys() == slow.keys()
    for k in fast:
        _same_frames(fast[k], slow[k], k)
    rows = [
        [{"a": 1, "reached": 1, "energy_j": 2, "bso": "x", "n": 2 ** 40}],
        [{"a": 1.5, "reached": True, "energy_j": True, "bso": "", "n": -3}],
        [{"a": 1, "b": 2.5}, {"a": 2.5, "b": 1}],
        [{"a": 1, "b": None}, {"a": 2, "b": 1}],                 # None: general path
        [{"bso": 1}, {"bso": "y"}],                              # mixed: general path
        [{"reached": None}, {"reached": True}],
        [{"a": 2 ** 70}],                                        # beyond int64
        [{"a": 1, "b": 2}, {"b": 3, "a": 4}],                    # keys in another order
        [{"a": 1}, {"a": 2, "b": 3}],                            # other keys
        [{"epochs": 2.5, "reached": 3}],                         # renamed (knobs)
        [{"x": [1, 2]}],
    ]
    for i, r in enumerate(rows):
        for kind in (None, "knobs", "history"):
            want = _run._typed(_run._table(r, {"k": i}), kind)
            got = real(r, {"k": i}, kind)
            _same_frames(got if got is not None else want, want, (i, kind))


def test_sweep_cells_are_sweep_csvs_columns(tmp_path):
    import subprocess
    import warnings
    from conftest import CLI
    cfg = tmp_path / "s.yaml"
    cfg.write_text("gpu: v100\nworkload: [cifar100, squad]\nseed: 1..3\nrecurrences: 6\n")
    subprocess.run([CLI, "sweep", str(cfg), "--out", str(tmp_path / "o"), "--no-plot",
                    "--quiet"], check=True, capture_output=True)
    import pandas as pd
    ref = pd.read_csv(tmp_path / "o" / "sweep.csv", keep_default_na=False, na_values=[""],
                      float_precision="round_trip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = wattsim.sweep(config=str(cfg))
    cols = [c for c in ref.columns if c != "final_knobs"]
    assert list(res.cells.columns[:len(cols)]) == cols
    for c in cols:
        a, b = res.cells[c].tolist(), ref[c].tolist()
        if ref[c].dtype == object or c in ("error", "bso_params", "plo_params"):
            b = ["" if x != x else x for x in b]
        assert a == b, c
    # final knobs: the long table of sweep.csv's final_knobs column
    fk = res.final_knobs
    assert list(fk.columns) == ["cell", "bs", "pl", "count"]
    assert all(str(t) == "int64" for t in fk.dtypes)
    assert not any(c.startswith("final_knobs") for c in res.cells.columns)
    want = []
    for i, s in enumerate(ref["final_knobs"]):
        for item in s.split(";"):
            k, n = item.split("=")
            bs, pl = k.split(":")
            want.append([i, int(bs), int(pl), int(n)])
    assert fk.values.tolist() == want
    assert (fk.groupby("cell")["count"].sum() == res.cells["seeds_ok"]).all()
    cells, history, curves = res                 # still a 3-tuple
    assert history is None and curves is None


def test_plan_takes_seeds_as_sweep_does():
    a = wattsim.plan(gpu="v100", workload="cifar100", seed=range(1, 4), recurrences=10)
    b = wattsim.plan(gpu="v100", workload="cifar100", seeds=3, recurrences=10)
    assert a.drop(columns="cumulative_cost_saving").equals(
        b.drop(columns="cumulative_cost_saving"))
    assert a["seeds"].tolist() == [3] * len(a)
    assert wattsim.plan(gpu="v100", workload="cifar100", seed=[1, 2, 3],
                        recurrences=10)["break_even"].tolist() == b["break_even"].tolist()
    with pytest.raises(wattsim.InputError, match=r"seed=range\(2, 4\): plan runs seeds 1..N;"
                       r" give seed=range\(1, N \+ 1\) \(or seeds=N\)"):
        wattsim.plan(gpu="v100", workload="cifar100", seed=range(2, 4))


def test_provenance_names_the_policy_file_as_the_tables_do():
    df = wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2)
    p = df.attrs["provenance"]["policies"][0]
    assert (p["bso_file"], p["plo_file"]) == (df.attrs["bso_file"], df.attrs["plo_file"]) \
        == ("built-in", "built-in")
    assert p["bso_origin"].endswith("/zeus.so")       # kept: the full path
    plan = wattsim.plan(gpu="v100", workload="cifar100", seeds=2, recurrences=5)
    assert plan["bso_file"].tolist() == [q["bso_file"] for q in
                                         plan.attrs["provenance"]["policies"]]
