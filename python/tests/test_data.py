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
