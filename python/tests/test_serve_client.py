"""bso="http://HOST:PORT" from the Python package: the library is a client of
a batch-size optimizer server (wattsim serve here), as the command line is.
Skipped when this wattsim was built without serve."""
import os
import re
import signal
import subprocess
import tempfile

import pytest

import wattsim
from conftest import CLI


def _serve(db, *extra):
    """Start `wattsim serve` on a free loopback port: (process, url)."""
    p = subprocess.Popen([CLI, "serve", "--db", db, "--listen", "127.0.0.1:0", *extra],
                         stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        p.kill()
        p.wait(10)
        if "built without" in line:
            pytest.skip("this wattsim was built without serve")
        raise AssertionError(f"wattsim serve did not start: {line}")
    return p, f"http://127.0.0.1:{m.group(1)}"


def _stop(p):
    p.send_signal(signal.SIGTERM)   # our own child, by its pid
    try:
        p.wait(20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
        p.stderr.close()


@pytest.mark.parametrize("served,local", [((), "zeus"), (("--bso", "wattsim=gts"), "gts")])
def test_simulate_http_equals_local(served, local):
    with tempfile.TemporaryDirectory() as d:
        p, url = _serve(os.path.join(d, "bso.db"), "--quiet", *served)
        try:
            got = wattsim.simulate(gpu="v100", workload="librispeech", seed=1, recurrences=40, bso=url)
        finally:
            _stop(p)
    want = wattsim.simulate(gpu="v100", workload="librispeech", seed=1, recurrences=40, bso=local)
    assert len(want) > 40
    assert got.to_dict("records") == want.to_dict("records")
    for k in ("energy_j", "time_s", "cost", "final_bs", "runs"):
        assert got.attrs[k] == want.attrs[k]


def test_simulate_http_refused_and_remote():
    with pytest.raises(wattsim.WattsimError, match=r"cannot connect to 127\.0\.0\.1:1"):
        wattsim.simulate(gpu="v100", workload="librispeech", seed=1, recurrences=2,
                         bso="http://127.0.0.1:1")
    with pytest.raises(wattsim.WattsimError, match="not a loopback address"):
        wattsim.simulate(gpu="v100", workload="librispeech", seed=1, recurrences=2,
                         bso="http://192.0.2.1:8000")
