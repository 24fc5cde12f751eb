"""Zeus's own policy classes, unmodified, through wattsim: the published
simulator's histories run for run (../shared/reference/, V100, eta 0.5,
seeds 1-20, all six workloads). Needs a Zeus checkout: ZEUS_SRC=/path
(the folder holding zeus/); skips with a message otherwise."""
import gzip
import json
import os
import sys

import pytest

import wattsim
from conftest import SRC

ZEUS = os.environ.get("ZEUS_SRC")
REF = os.environ.get("WS_ZEUS_HISTORIES", os.path.join(
    os.path.dirname(SRC), "shared", "reference", "zeus-v100-eta0.5-histories.jsonl.gz"))

pytestmark = [
    pytest.mark.skipif(not ZEUS, reason="no Zeus checkout: set ZEUS_SRC=/path/to/zeus (the"
                       " folder holding zeus/) to run Zeus's own classes through wattsim"),
    pytest.mark.skipif(not os.path.exists(REF), reason="no reference histories at " + REF),
]


def reference():
    with gzip.open(REF, "rt") as f:
        return [json.loads(line) for line in f]


def test_zeus_classes_equal_published_histories(capfd):
    sys.path.insert(0, ZEUS)
    from zeus._legacy.policy.optimizer import (JITPowerLimitOptimizer,
                                               PruningGTSBatchSizeOptimizer)
    refs = reference()
    assert len(refs) == 120
    for ref in refs:
        s = ref["seed"]
        df = wattsim.simulate(gpu="v100", workload=ref["workload"], eta=0.5, beta=2, seed=s,
                              bso=PruningGTSBatchSizeOptimizer(seed=s),
                              plo=JITPowerLimitOptimizer())
        got = [[r["bs"], r["pl"], r["energy_j"], r["time_s"], bool(r["reached"])]
               for r in df.to_dict("records")]
        assert got == ref["history"], (ref["workload"], s)
        assert df.attrs["recurrences"] == ref["recurrences"]
    out, err = capfd.readouterr()
    assert out == ""            # Zeus's policies print: to stderr, never into a result
    assert "[Pruning GaussianTS BSO] Registered Job(dataset='sentiment140', network=" in err


ZBSO = "py:zeus._legacy.policy.optimizer:PruningGTSBatchSizeOptimizer"
ZPLO = "py:zeus._legacy.policy.optimizer:JITPowerLimitOptimizer"


def test_zeus_classes_from_the_cli(tmp_path):
    """The same through the bridge: one sweep over seeds 1-20 and the six
    workloads, the class seeded by each cell's seed (its `seed` parameter
    gets the simulation's, as Zeus's run_single.py passes it)."""
    import csv
    import subprocess
    from conftest import CLI
    env = dict(os.environ, PYTHONPATH=ZEUS, WATTSIM_PYTHON="/usr/bin/python3")
    refs = {(r["workload"], r["seed"]): r for r in reference()}
    cfg = tmp_path / "plan.yaml"
    cfg.write_text("gpu: v100\nworkload: [cifar100, imagenet, squad, librispeech,"
                   " movielens-1m, sentiment140]\neta: 0.5\nbeta: 2\nseed: 1..20\n")
    out = tmp_path / "out"
    subprocess.run([CLI, "sweep", str(cfg), "--policies", "%s:%s" % (ZBSO, ZPLO),
                    "--keep-history", "--threads", "2", "--out", str(out), "--no-plot",
                    "--quiet"], check=True, capture_output=True, env=env)
    runs = {}
    with open(out / "history.csv") as f:
        for r in csv.DictReader(f):
            if r["policy"].startswith("py-pruninggts"):
                runs.setdefault((r["workload"], int(r["seed"])), []).append(
                    [int(r["bs"]), int(r["pl"]), float(r["energy_j"]), float(r["time_s"]),
                     r["reached"] == "1"])
    assert sorted(runs) == sorted(refs)
    for key, got in runs.items():
        assert got == refs[key]["history"], key
    # Zeus's policies print (verbose=True): stdout stays the JSON asked for
    r = subprocess.run([CLI, "simulate", "--workload", "cifar100", "--seed", "1", "--bso", ZBSO,
                        "--bso-param", "seed=1", "--plo", ZPLO, "--format", "json"],
                       check=True, capture_output=True, text=True, env=env)
    got = [[h["bs"], h["pl"], h["energy_j"], h["time_s"], h["reached"]]
           for h in json.loads(r.stdout)["history"]]
    assert got == refs[("cifar100", 1)]["history"]
    assert "[Pruning GaussianTS BSO]" in r.stderr


def test_zeus_classes_swept_over_seeds_as_classes():
    """policies=[(Cls, Cls)] over seeds (issue 29): each simulation builds
    Zeus's classes anew, the BSO with seed= the simulation's, as
    simulate(seed=s, bso=PruningGTSBatchSizeOptimizer(seed=s)) and Zeus's
    run_single.py do; a factory does the same."""
    sys.path.insert(0, ZEUS)
    from zeus._legacy.policy.optimizer import (JITPowerLimitOptimizer,
                                               PruningGTSBatchSizeOptimizer)
    refs = {(r["workload"], r["seed"]): r["history"] for r in reference()}
    kw = dict(gpu="v100", workload="imagenet", eta=0.5, beta=2)

    def runs(df):
        return [[r["bs"], r["pl"], r["energy_j"], r["time_s"], bool(r["reached"])]
                for r in df.to_dict("records")]
    want = {s: runs(wattsim.simulate(seed=s, bso=PruningGTSBatchSizeOptimizer(seed=s),
                                     plo=JITPowerLimitOptimizer(), **kw)) for s in range(1, 4)}
    for s in range(1, 4):
        assert want[s] == refs[("imagenet", s)], s
    for bso in (PruningGTSBatchSizeOptimizer,
                lambda seed: PruningGTSBatchSizeOptimizer(seed=seed, verbose=False)):
        h = wattsim.sweep(seed=range(1, 4), policies=[(bso, JITPowerLimitOptimizer)],
                          keep_history=True, **kw).history
        h = h[h["policy"].str.startswith("py-pruninggts")]
        for s in range(1, 4):
            assert runs(h[h["seed"] == s]) == want[s], s
