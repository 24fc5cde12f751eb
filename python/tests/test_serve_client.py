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


def _py_env():
    here = os.path.dirname(os.path.abspath(__file__))
    return dict(os.environ, PYTHONPATH=here, WATTSIM_PYTHON="/usr/bin/python3")


def _call(url, method, path, body=None):
    import json
    import urllib.request
    req = urllib.request.Request(url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def _drive_py_policy(db, kill_every):
    """A job decided by a py: policy behind serve: 12 predict + report pairs;
    the server killed -9 (our child, by pid) and restarted on the same file
    every kill_every requests (0: never). The batch sizes in order."""
    argv = ["--quiet", "--bso", "job=py:wstest_policies:Seeded", "--allow-python", "wstest_policies"]
    old = dict(os.environ)
    os.environ.update(_py_env())
    try:
        p, url = _serve(db, *argv)
        n, sizes = 0, []

        def request(method, path, body=None):
            nonlocal p, url, n
            out = _call(url, method, path, body)
            n += 1
            if kill_every and n % kill_every == 0:
                p.kill()
                p.wait(10)
                p.stderr.close()
                p, url = _serve(db, *argv)
            return out

        request("POST", "/jobs", {"job_id": "job-1", "job_id_prefix": "job", "batch_sizes": [16, 32, 64, 128],
                                  "default_batch_size": 32, "eta_knob": 0.5, "beta_knob": None,
                                  "target_metric": 0.5, "max_epochs": 10, "mab_seed": 5, "max_power": 300,
                                  "number_of_gpus": 1, "gpu_model": "v100"})
        for _ in range(12):
            t = request("GET", "/jobs/batch_size?job_id=job-1")
            sizes.append(t["batch_size"])
            request("POST", "/report", {"job_id": "job-1", "batch_size": t["batch_size"],
                                        "trial_number": t["trial_number"], "time": 10.0 + t["batch_size"],
                                        "energy": 1000.0, "metric": 0.6, "current_epoch": 3})
        _stop(p)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return sizes


def test_py_policy_behind_serve_survives_kill9():
    with tempfile.TemporaryDirectory() as d:
        want = _drive_py_policy(os.path.join(d, "a.db"), 0)
        got = _drive_py_policy(os.path.join(d, "b.db"), 3)
    import numpy as np
    rng = np.random.default_rng(5)      # Seeded's draws, seeded with mab_seed
    assert want == [[16, 32, 64, 128][int(rng.integers(4))] for _ in range(12)]
    assert got == want
