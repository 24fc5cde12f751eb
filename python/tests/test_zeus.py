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
