"""What a library call keeps besides traces (issue 29 item 6): policy
plugins (engine/plugin_cache.c) and parsed catalogues
(io/catalogue_cache.c), each known by path, device, inode, size and mtime
in ns. A rebuilt or replaced file is read again and provenance's sha256 is
the file's as it is now; results do not depend on the caches."""
import ctypes
import hashlib
import os
import shutil
import subprocess

import pytest

import wattsim
from wattsim import _lib
from conftest import SRC, TRACES

CAPPED = os.path.join(SRC, "policies", "example", "capped.c")


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _opened():
    L = _lib.lib()
    f = L.ws_plugin_cache_count
    f.argtypes = [ctypes.POINTER(ctypes.c_ulonglong)]
    f.restype = ctypes.c_size_t
    n = ctypes.c_ulonglong()
    kept = f(ctypes.byref(n))
    return kept, n.value


def _parses():
    f = _lib.lib().ws_catalogue_cache_parses
    f.restype = ctypes.c_ulonglong
    return f()


def _build(out, max_watts):
    """capped.c built with another default cap: a rebuild that changes
    what the plugin does."""
    src = out + ".c"
    with open(CAPPED) as f:
        text = f.read()
    old = '{"max_watts", WS_PARAM_INT, {.i = 200}'
    assert old in text
    with open(src, "w") as f:
        f.write(text.replace(old, '{"max_watts", WS_PARAM_INT, {.i = %d}' % max_watts))
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    subprocess.run([cc, "-std=c17", "-O2", "-fPIC", "-shared", "-I",
                    os.path.join(SRC, "sim", "include"), "-o", out, src], check=True)


def _run(plo, **kw):
    df = wattsim.simulate(traces=TRACES, gpu="v100", workload="cifar100", seed=4,
                          recurrences=4, plo=plo, **kw)
    p = df.attrs["provenance"]["policies"][0]
    return df["pl"].tolist(), p["plo_sha256"]


def test_a_rebuilt_or_replaced_plugin_is_loaded_again_with_its_new_sha256(tmp_path):
    so = str(tmp_path / "capped.so")
    _build(so, 200)
    pl1, sha1 = _run(so)
    assert sha1 == _sha(so)
    assert set(pl1) <= {100, 125, 150, 175} and max(pl1) > 150    # under a 200 W cap
    kept, opened = _opened()
    assert kept >= 1
    assert _run(so) == (pl1, sha1)
    assert _opened()[1] == opened                  # kept: no file opened again

    # rebuilt as a linker does (a new file, a new inode): cap 150 W
    new = str(tmp_path / "new.so")
    _build(new, 150)
    os.replace(new, so)
    pl2, sha2 = _run(so)
    assert max(pl2) <= 150                         # the new code runs, not the kept one
    assert sha2 == _sha(so) != sha1
    assert _opened()[1] == opened + 1

    # rewritten in place (the same inode): a new size and mtime
    ino = os.stat(so).st_ino
    with open(so, "ab") as f:
        f.write(b"\0" * 16)
    assert os.stat(so).st_ino == ino
    pl3, sha3 = _run(so)
    assert _opened()[1] == opened + 2
    assert pl3 == pl2 and sha3 == _sha(so) not in (sha1, sha2)


def test_a_changed_catalogue_is_parsed_again_with_its_new_sha256(tmp_path):
    cat = str(tmp_path / "workloads.yaml")
    text = (
        "gpus: [v100, a40, p100, rtx6000]\n"
        "workloads:\n"
        "  cifar100: {dataset: cifar100, network: shufflenetv2, optimizer: adadelta,\n"
        "             target_metric: 0.6, max_epochs: 100, b0: 1024}\n")
    with open(cat, "w") as f:
        f.write(text)

    def run():
        df = wattsim.simulate(traces=TRACES, gpu="v100", workload="cifar100", seed=2,
                              recurrences=3, catalogue=cat)
        return df["bs"].tolist(), df.attrs["provenance"]["catalogue"]["sha256"]

    p0 = _parses()
    bs1, sha1 = run()
    assert sha1 == _sha(cat) and bs1[0] == 1024
    assert _parses() == p0 + 1
    assert run() == (bs1, sha1)
    assert _parses() == p0 + 1                     # kept: not parsed again

    # the same file, rewritten: another b0 (the same size)
    st = os.stat(cat)
    with open(cat, "w") as f:
        f.write(text.replace("b0: 1024", "b0:  512"))
    os.utime(cat, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert os.stat(cat).st_size == st.st_size
    bs2, sha2 = run()
    assert _parses() == p0 + 2
    assert bs2[0] == 512 and sha2 == _sha(cat) != sha1

    # replaced by another file (a new inode)
    tmp = cat + ".new"
    with open(tmp, "w") as f:
        f.write(text.replace("b0: 1024", "b0: 256"))
    os.replace(tmp, cat)
    bs3, sha3 = run()
    assert _parses() == p0 + 3
    assert bs3[0] == 256 and sha3 == _sha(cat)


def test_results_are_the_same_with_and_without_the_caches():
    """The same calls in a process with every cache off
    (WATTSIM_TRACE_CACHE=0) give the same tables and provenance."""
    code = r"""
import json, sys, wattsim
out = []
for plo in ("jit", "default"):
    for s in (1, 2, 3):
        df = wattsim.simulate(traces=sys.argv[1], gpu="v100", workload="cifar100",
                              seed=s, recurrences=5, plo=plo)
        p = dict(df.attrs["provenance"])
        out.append([df.to_dict("list"), {k: str(v) for k, v in df.dtypes.items()},
                    p.get("policies"), p.get("catalogue"), p.get("traces")])
print(json.dumps(out, sort_keys=True))
"""
    res = {}
    for cache in ("8", "0"):
        env = dict(os.environ, WATTSIM_TRACE_CACHE=cache,
                   PYTHONPATH=os.path.join(SRC, "python"))
        r = subprocess.run(["/usr/bin/python3", "-c", code, TRACES], env=env,
                           capture_output=True, text=True, check=True)
        res[cache] = r.stdout
    assert res["8"] == res["0"] and len(res["8"]) > 1000
