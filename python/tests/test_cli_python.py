"""`py:MODULE:CLASS` on the command line: the bridge plugin embeds the
interpreter (WATTSIM_PYTHON), serialises Python across threads, runs it
in children under --isolate, and turns exceptions into policy errors."""
import json
import os
import subprocess

import pytest

from conftest import CLI, HERE, SRC

GTS, JIT = "py:wattsim.policies:GaussianTS", "py:wattsim.policies:JIT"


def env():
    e = dict(os.environ, PYTHONPATH=HERE, WATTSIM_PYTHON="/usr/bin/python3")
    e.pop("WATTSIM_LIB", None)
    return e


def wattsim(*args, check=True):
    r = subprocess.run([CLI, *args], capture_output=True, text=True, env=env())
    if check:
        assert r.returncode == 0, r.stderr
    return r


def test_python_policies_equal_c_policies():
    kw = ["simulate", "--workload", "squad", "--seed", "3", "--recurrences", "40", "--format",
          "json"]
    py = json.loads(wattsim(*kw, "--bso", GTS, "--plo", JIT).stdout)
    c = json.loads(wattsim(*kw, "--bso", "gts", "--plo", "jit").stdout)
    assert py["history"] == c["history"] and py["cost"] == c["cost"]
    assert (py["bso"], py["plo"]) == ("py-gaussiants", "py-jit")


def test_sweep_threads_and_isolate_same_bytes(tmp_path):
    cfg = tmp_path / "plan.yaml"
    cfg.write_text("gpu: v100\nworkload: [cifar100, squad]\neta: 0.5\nseed: 1..2\n")
    outs = []
    for extra in (["--threads", "1", "--keep-history"], ["--threads", "2", "--keep-history"],
                  ["--isolate", "--threads", "2"]):
        out = tmp_path / ("o%d" % len(outs))
        wattsim("sweep", str(cfg), "--policies", "%s:%s,gts:jit" % (GTS, JIT), "--out",
                str(out), "--no-plot", "--quiet", *extra)
        outs.append({f: (out / f).read_bytes() for f in ("sweep.json", "sweep.csv",
                                                          "history.csv") if (out / f).exists()})
    assert outs[0] == outs[1]         # every run of every simulation, byte for byte
    assert outs[0]["history.csv"].count(b"\n") > 100
    assert outs[2] == {k: v for k, v in outs[0].items() if k != "history.csv"}
    outs = [o["sweep.json"] for o in outs]
    cells = json.loads(outs[0])["cells"]
    mean = {(c["policy"], c["workload"]): c["energy_j"]["mean"] for c in cells}
    for w in ("cifar100", "squad"):
        assert mean[("py-gaussiants+py-jit", w)] == mean[("gts+jit", w)]


def test_exception_is_one_policy_error_line():
    r = wattsim("simulate", "--workload", "cifar100", "--bso", "py:wstest_policies:Boom",
                "--plo", "jit", "--format", "json", check=False)
    assert r.returncode == 2 and r.stdout == ""
    lines = [x for x in r.stderr.splitlines() if x.startswith("wattsim:")]
    assert lines == ["wattsim: v100/cifar100 eta 0.5 beta 2 seed 1: bso py-boom: predict failed:"
                     " KeyError: 'missing'"]


def test_exception_in_init_is_one_policy_error_line():
    """The class's __init__ runs in the policy's create: its exception is
    the error line, not "create failed (returned -1)"."""
    r = wattsim("simulate", "--workload", "cifar100", "--bso", "py:wstest_policies:InitBoom",
                "--bso-param", "after=5", check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("wattsim: v100/cifar100 eta 0.5 beta 2 seed 1: bso py-initboom: create"
                        " failed: RuntimeError: cannot build with after=5\n")


def test_wrong_return_type_is_a_policy_error():
    r = wattsim("simulate", "--workload", "cifar100", "--bso", "py:wstest_policies:WrongType",
                "--plo", "jit", check=False)
    assert r.returncode == 2
    assert "bso py-wrongtype: predict failed: TypeError: predict returned 1.5 (float), not an" \
           " int" in r.stderr


def test_prints_keep_json_valid():
    r = wattsim("simulate", "--workload", "cifar100", "--recurrences", "3", "--bso",
                "py:wstest_policies:Boom", "--bso-param", "after=100", "--plo", "jit",
                "--format", "json")
    assert json.loads(r.stdout)["runs"] == 3 and "hello from predict" in r.stderr


def test_never_returning_policy_stopped_by_cell_timeout(tmp_path):
    cfg = tmp_path / "plan.yaml"
    cfg.write_text("gpu: v100\nworkload: cifar100\nseed: 1\n")
    r = wattsim("sweep", str(cfg), "--policies", "py:wstest_policies:Hang:jit", "--isolate",
                "--cell-timeout", "1", "--out", str(tmp_path / "o"), "--no-plot", "--quiet",
                check=False)
    assert r.returncode == 1
    cell = json.loads((tmp_path / "o" / "sweep.json").read_text())["cells"][0]
    assert cell["policy"] == "py-hang+jit" and cell["error"] == "policy process timed out after 1 s"


def test_bad_module_and_config_opt_in(tmp_path):
    r = wattsim("simulate", "--workload", "cifar100", "--bso", "py:nosuchmodule:X", check=False)
    assert r.returncode == 2 and r.stderr == ("wattsim: --bso: py:nosuchmodule:X: cannot load"
                                              " it: ModuleNotFoundError: No module named"
                                              " 'nosuchmodule'\n")
    cfg = tmp_path / "run.yaml"
    cfg.write_text("workload: cifar100\nrecurrences: 3\nbso: py:wattsim.policies:GaussianTS\n")
    r = wattsim("run", str(cfg), "--out", str(tmp_path / "o"), check=False)
    assert r.returncode == 2 and "a config may not run code by itself; to run it, pass" \
        " --allow-python wattsim" in r.stderr
    assert not (tmp_path / "o").exists()
    wattsim("run", str(cfg), "--allow-python", "wattsim", "--out", str(tmp_path / "o"))


def test_policy_check_accepts_python():
    r = wattsim("policy", "check", JIT, "--jobs", "10")
    assert r.stdout.splitlines()[-1].startswith(JIT + ": 0 checks failed; wattsim ")
    r = wattsim("policy", "check", "py:wstest_policies:Boom", "--jobs", "10", check=False)
    assert r.returncode == 1 and "FAIL one-size       bso py-boom: predict failed: KeyError:" \
        " 'missing'" in r.stdout


def test_seed_parameter_gets_the_simulations_seed(tmp_path):
    """A class whose __init__ takes `seed` is built with each cell's seed
    (ws_host.seed) unless {seed=S} gives one; the job it gets carries the
    catalogue's definition (configs/workloads.yaml: cifar100 is
    shufflenetv2, adadelta, target 0.6)."""
    import csv
    cfg = tmp_path / "plan.yaml"
    cfg.write_text("gpu: v100\nworkload: cifar100\neta: 0.5\nseed: 1..2\nrecurrences: 8\n")

    def sweep(name, spec):
        r = wattsim("sweep", str(cfg), "--policies", spec + ":jit", "--keep-history",
                    "--out", str(tmp_path / name), "--no-plot", "--quiet")
        raw = (tmp_path / name / "history.csv").read_bytes()
        by_seed = {}
        with open(tmp_path / name / "history.csv") as f:
            for row in csv.DictReader(f):   # the sweep adds its baselines' rows
                if row["policy"].startswith("py-seeded"):
                    by_seed.setdefault(row["seed"], []).append(int(row["bs"]))
        return raw, by_seed, sorted(x for x in r.stderr.splitlines() if x.startswith("seeded:"))

    raw1, h1, said1 = sweep("a", "py:wstest_policies:Seeded")
    raw2, h2, _ = sweep("b", "py:wstest_policies:Seeded")
    assert raw1 == raw2                               # same seeds, same bytes
    assert h1["1"] != h1["2"]
    assert said1 == ["seeded: seed %d dataset cifar100 network shufflenetv2 optimizer adadelta"
                     " target_metric 0.6" % s for s in (1, 2)]
    # every try is one predict, one draw of numpy's default_rng(seed)
    # .integers(10) over cifar100's batch sizes in the V100 traces
    import numpy as np
    bs = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    for s in (1, 2):
        rng = np.random.default_rng(s)
        assert h1[str(s)] == [bs[int(rng.integers(len(bs)))] for _ in h1[str(s)]]
    # given in braces, the class's seed wins: both cells draw from seed 5
    _, h5, said5 = sweep("c", "py:wstest_policies:Seeded{seed=5}")
    assert h5["1"] == h5["2"]
    assert [x.split(" dataset")[0] for x in said5] == ["seeded: seed 5"] * 2


def test_allow_python_is_not_stepped_around_by_extra_colons(tmp_path):
    """--allow-python wattsim lets a config name wattsim's classes, not a
    module `wattsim:evil` (a file wattsim:evil.py on the path): the check
    split py:wattsim:evil:B at the first colon (module wattsim, allowed),
    the import at the last (module wattsim:evil, run). Both now take
    exactly two colons; this spec is refused before anything is imported."""
    mark = tmp_path / "ran"
    (tmp_path / "wattsim:evil.py").write_text(
        "open(%r, 'w').close()\nfrom wstest_policies import Boom as B\n" % str(mark))
    cfg = tmp_path / "run.yaml"
    cfg.write_text("workload: cifar100\nrecurrences: 3\nbso: py:wattsim:evil:B\n")
    e = dict(env(), PYTHONPATH="%s:%s" % (tmp_path, HERE))
    r = subprocess.run([CLI, "run", str(cfg), "--allow-python", "wattsim", "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, env=e)
    assert r.returncode == 2 and "bso 'py:wattsim:evil:B' is not py:MODULE:CLASS, MODULE" \
        " and CLASS dotted Python names" in r.stderr, r.stderr
    assert not mark.exists() and not (tmp_path / "o").exists()
    # on the command line (no config, no opt-in needed): refused the same way
    r = subprocess.run([CLI, "simulate", "--workload", "cifar100", "--bso",
                        "py:wattsim:evil:B"], capture_output=True, text=True, env=e)
    assert r.returncode == 2 and r.stderr == (
        "wattsim: --bso: py:wattsim:evil:B: not py:MODULE:CLASS, MODULE and CLASS dotted"
        " Python names (e.g. py:mylab.policies:MyBSO)\n"), r.stderr
    assert not mark.exists()
