"""Python policies through the library: the ports of the C policies give
the C policies' histories seed for seed; faults become exceptions."""
import os
import subprocess
import sys

import pandas as pd
import pytest

import wattsim
from wattsim.policies import EpsilonGreedy, GaussianTS, JIT
from conftest import BUILD, HERE

V100 = ["cifar100", "imagenet", "squad", "librispeech", "movielens-1m", "sentiment140"]
EGREEDY = os.path.join(BUILD, "tests", "plugins", "egreedy.so")


def per_simulation(history, policy):
    h = history[history.policy == policy].drop(columns=["policy", "simulation"])
    return {k: g.reset_index(drop=True) for k, g in h.groupby(["workload", "seed"])}


def same_histories(res, a, b):
    ha, hb = per_simulation(res.history, a), per_simulation(res.history, b)
    assert ha.keys() == hb.keys() and ha
    for k in ha:
        pd.testing.assert_frame_equal(ha[k], hb[k], check_exact=True, obj=str(k))
    return len(ha)


def test_gts_port_equals_c_gts_on_all_v100_workloads():
    """GaussianTS(seed=None) draws from the host's stream, as the C gts."""
    res = wattsim.sweep(gpu="v100", workload=V100, eta=0.5, seed=range(1, 5), threads=2,
                        keep_history=True, policies=[(GaussianTS(), JIT()), ("gts", "jit")])
    assert same_histories(res, "py-gaussiants+py-jit", "gts+jit") == 24


def test_egreedy_port_equals_c_example():
    """The C worked example and its port (host stream, call context)."""
    res = wattsim.sweep(gpu="v100", workload=V100, eta=0.3, seed=range(1, 6), threads=1,
                        keep_history=True,
                        policies=[(EpsilonGreedy(), JIT()), (EGREEDY, "jit")])
    assert same_histories(res, "py-epsilongreedy+py-jit", "egreedy+jit") == 30


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_zeus_style_seeded_object_equals_c(seed):
    """Zeus's way, an object built with the seed: its own
    np.random.default_rng(seed) is the C BSO's stream."""
    kw = dict(gpu="v100", workload="librispeech", eta=0.5, seed=seed, recurrences=60)
    py = wattsim.simulate(bso=GaussianTS(seed=seed), plo=JIT(), **kw)
    c = wattsim.simulate(bso="gts", plo="jit", **kw)
    pd.testing.assert_frame_equal(py, c, check_exact=True)
    assert py.attrs["cost"] == c.attrs["cost"]
    assert py.attrs["provenance"]["policies"][0]["bso_origin"] == "wattsim.policies.GaussianTS"


def test_objects_are_deep_copied_per_simulation():
    bso = GaussianTS(seed=5)
    state = bso.rng.bit_generator.state
    kw = dict(workload="cifar100", eta=0.5, seed=5, recurrences=30, bso=bso, plo=JIT())
    a, b = wattsim.simulate(**kw), wattsim.simulate(**kw)
    pd.testing.assert_frame_equal(a, b)
    assert bso.rng.bit_generator.state == state and bso.rewards == {}


def test_threads_give_the_same_bytes():
    kw = dict(gpu="v100", workload=["cifar100", "squad"], eta=[0.3, 0.7], seed=range(1, 4),
              keep_history=True, policies=[(GaussianTS(), JIT()), ("zeus", JIT())])
    one, two = wattsim.sweep(threads=1, **kw), wattsim.sweep(threads=2, **kw)
    pd.testing.assert_frame_equal(one.cells, two.cells, check_exact=True)
    pd.testing.assert_frame_equal(one.history, two.history, check_exact=True)


class Faulty(wattsim.BatchSizeOptimizer):
    def __init__(self, fault, after=3):
        self.fault, self.after, self.calls = fault, after, 0

    def register_job(self, job, batch_sizes):
        self.b0 = job.default_bs

    def predict(self, job):
        self.calls += 1
        if self.calls > self.after:
            if self.fault == "raise":
                return 1 // 0
            if self.fault == "type":
                return "1024"
            if self.fault == "bs":
                return 7
            if self.fault == "interrupt":
                raise KeyboardInterrupt
        print("predicting", self.calls)  # goes to stderr
        return self.b0

    def observe(self, job, batch_size, cost, converged):
        pass


def test_exception_is_a_policy_error_naming_call_and_line():
    with pytest.raises(wattsim.PolicyError) as e:
        wattsim.simulate(workload="cifar100", seed=1, bso=Faulty("raise"), plo="jit")
    # one style (issue 29): the simulation, the policy's label (its
    # parameters) and class, the call, the exception's line
    assert str(e.value) == ("v100/cifar100 eta 0.5 beta 2 seed 1: bso py-faulty{fault=raise}"
                            " (test_policies.Faulty): predict:"
                            " ZeroDivisionError: integer division or modulo by zero")
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_wrong_return_type():
    # wattsim's own refusal: the value, no exception name, no __cause__
    with pytest.raises(wattsim.PolicyError, match=r"^v100/cifar100 eta 0.5 beta 2 seed 1: bso"
                       r" py-faulty\{fault=type\} \(test_policies.Faulty\): predict returned"
                       r" '1024' \(str\), not an int$") as e:
        wattsim.simulate(workload="cifar100", seed=1, bso=Faulty("type"), plo="jit")
    assert e.value.__cause__ is None


def test_batch_size_not_in_the_set_is_the_hosts_policy_error():
    with pytest.raises(wattsim.PolicyError, match="7"):
        wattsim.simulate(workload="cifar100", seed=1, bso=Faulty("bs"), plo="jit")


def test_a_faulty_live_policy_in_a_sweep_keeps_the_other_results():
    """The fault fails its simulations, not the sweep (as the CLI, which
    writes the results and exits 1): the PolicyError carries them. Every
    seed of the faulty pair fails at its 4th predict; the reference pairs
    (default, oracle) and zeus+jit give the same cells as without it."""
    kw = dict(workload="cifar100", seed=range(1, 4), threads=1)
    with pytest.raises(wattsim.PolicyError, match="predict: ZeroDivisionError") as e:
        wattsim.sweep(policies=[(Faulty("raise"), "jit"), ("zeus", "jit")], **kw)
    res = e.value.result
    assert res is not None and res.cells.attrs["n_failed"] == 3
    bad = res.cells[res.cells["policy"] == "py-faulty{fault=raise}+jit"]
    assert bad["seeds_failed"].tolist() == [3] and bad["seeds_ok"].tolist() == [0]
    assert "ZeroDivisionError" in bad["error"].item()
    clean = wattsim.sweep(policies=[("zeus", "jit")], **kw)
    assert clean.cells.attrs["n_failed"] == 0
    got = res.cells[res.cells["policy"] != "py-faulty{fault=raise}+jit"].reset_index(drop=True)
    num = [c for c in clean.cells.columns if c + "_lo" in clean.cells.columns]
    assert num and set(got["policy"]) == set(clean.cells["policy"])
    pd.testing.assert_frame_equal(got.sort_values("policy")[num].reset_index(drop=True),
                                  clean.cells.sort_values("policy")[num].reset_index(drop=True),
                                  check_exact=True)
    # simulate has no other simulations: nothing to keep
    with pytest.raises(wattsim.PolicyError) as e:
        wattsim.simulate(workload="cifar100", seed=1, bso=Faulty("raise"), plo="jit")
    assert e.value.result is None


def test_keyboard_interrupt_in_a_policy_propagates():
    with pytest.raises(KeyboardInterrupt):
        wattsim.simulate(workload="cifar100", seed=1, bso=Faulty("interrupt"), plo="jit")
    # the library is usable afterwards
    assert len(wattsim.simulate(workload="cifar100", seed=1, recurrences=2)) == 2


@pytest.mark.parametrize("threads", [1, 2])
def test_keyboard_interrupt_in_a_policy_stops_a_sweep(threads):
    """Ctrl-C while a live policy's code runs (with threads=1 the policy
    runs on the calling thread, where Python raises it) stops the sweep
    there, not after its every other simulation: the 8 simulations of the
    pair after the first make no call."""
    calls = []

    class Interrupted(Faulty):
        def predict(self, job):
            calls.append(1)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        wattsim.sweep(workload=["cifar100", "squad", "imagenet"], seed=range(1, 4),
                      threads=threads, policies=[(Interrupted("none"), "jit")])
    assert len(calls) == 1
    assert len(wattsim.simulate(workload="cifar100", seed=1, recurrences=2)) == 2


def test_prints_go_to_stderr(capfd):
    df = wattsim.simulate(workload="cifar100", seed=1, recurrences=3, bso=Faulty("none"),
                          plo="jit")
    out, err = capfd.readouterr()
    assert out == "" and "predicting 3" in err and len(df) == 3


def test_progress_interrupt_stops_a_sweep_cleanly():
    calls = []

    def progress(done, total):
        calls.append((done, total))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        wattsim.sweep(workload=V100, seed=range(1, 50), threads=2, progress=progress)
    assert len(calls) == 1
    with pytest.raises(wattsim.CancelledError, match="cancelled"):
        wattsim.sweep(workload=V100, seed=range(1, 50), threads=2,
                      progress=lambda d, t: True)
    done = []
    wattsim.sweep(workload="cifar100", seed=range(1, 3), threads=1,
                  progress=lambda d, t: done.append((d, t)))
    assert done[-1] == (6, 6)  # 3 pairs (zeus+jit, default, oracle) x 2 seeds


def test_live_policy_is_refused_under_isolate():
    """A live object lives in this interpreter, which a forked child
    cannot share: no isolate, hence no cell-timeout, for live objects."""
    with pytest.raises(wattsim.InputError, match=r"^policy pair py-gaussiants\+py-jit: its Python"
                       r" policy runs in this process's interpreter"):
        wattsim.sweep(workload="cifar100", seed=range(1, 3), isolate=True,
                      policies=[(GaussianTS(), JIT())])


def test_subclass_interface_and_job_attributes():
    seen = {}

    class Spy(wattsim.BatchSizeOptimizer):
        def register_job(self, job, batch_sizes):
            seen["job"], seen["bs"] = job, batch_sizes
            hash(job)

        def predict(self, job):
            return job.default_bs

        def observe(self, job, batch_size, cost, converged):
            seen.setdefault("obs", []).append((batch_size, cost, converged))

    class Spy2(Spy):
        pass

    wattsim.simulate(gpu="v100", workload="squad", seed=1, recurrences=2, bso=Spy(), plo=JIT())
    j = seen["job"]
    assert (j.dataset, j.network, j.optimizer, j.default_bs, j.max_epochs, j.gpu) == \
        ("squad", "bert_base_uncased", "adamw", 32, 6, "v100")
    knobs = wattsim.pareto(gpu="v100", workload="squad")
    assert seen["bs"] == sorted(set(knobs["bs"])) and seen["obs"][0][0] == 32
    assert seen["obs"][0][1] > 0 and seen["obs"][0][2] is True


def test_py_names_from_the_package_join_this_interpreter():
    """py:MODULE:CLASS named in a call from Python: the bridge uses the
    interpreter the process runs, never a second libpython."""
    def libpython():
        with open("/proc/self/maps") as f:
            return {line.split()[-1] for line in f if "libpython" in line}

    before = libpython()
    kw = dict(workload="squad", seed=2, recurrences=10)
    a = wattsim.simulate(bso="py:wattsim.policies:GaussianTS", plo="py:wattsim.policies:JIT",
                         **kw)
    b = wattsim.simulate(bso="gts", plo="jit", **kw)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.attrs["provenance"]["policies"][0]["bso_origin"].startswith(
        "wattsim.policies.GaussianTS from ")
    assert libpython() == before       # the bridge loaded no libpython


def test_with_context_sees_the_clock_and_the_forecast(tmp_path):
    """ABI 2.3 through the bridge: a WithContext policy reads ctx.now_s and
    host.forecast, checked against the hourly series written here (400,
    100, 250 gCO2eq/kWh from midnight; one recurrence every hour, each
    shorter than an hour, so recurrence r is predicted at (r - 1) x 3600 s)."""
    series = tmp_path / "carbon.csv"
    series.write_text("timestamp,duration,value\n2022-10-20T00:00:00Z,60,400\n"
                      "2022-10-20T01:00:00Z,60,100\n2022-10-20T02:00:00Z,60,250\n")
    seen = []

    class Probe(wattsim.WithContext, wattsim.BatchSizeOptimizer):
        def register_job(self, job, batch_sizes):
            pass

        def predict(self, job):
            c, h = self.ctx, self.host
            seen.append((c.recurrence, c.now_s, c.due_s, c.every_s,
                         h.forecast("carbon", c.now_s), h.forecast("carbon", 3000, 1200),
                         h.forecast_next("carbon", c.now_s), h.forecast("price", c.now_s)))
            return job.default_bs

        def observe(self, job, batch_size, cost, converged):
            pass

    wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=3, bso=Probe(),
                     plo="default", carbon=str(series), every="1h")
    firsts = {}
    for s in seen:
        firsts.setdefault(s[0], s)
    assert sorted(firsts) == [1, 2, 3]
    want = {1: 400.0, 2: 100.0, 3: 250.0}
    for r, (_, now, due, every, at, mean, nxt, price) in firsts.items():
        assert now == due == (r - 1) * 3600.0 and every == 3600.0
        assert at == want[r]
        # [3000, 4200]: 600 s at 400, 600 s at 100
        assert mean == pytest.approx((600 * 400 + 600 * 100) / 1200, rel=1e-12)
        assert nxt == r * 3600.0
        assert price != price  # no price series: nan


def test_ctrl_c_during_a_sweep_is_a_keyboard_interrupt(tmp_path):
    """A real Ctrl-C (SIGINT) while the library runs: Python raises the
    KeyboardInterrupt at the next bytecode the main thread runs, the entry
    of the package's progress hook, before the hook's own try (ctypes would
    print "Exception ignored on calling ctypes callback function" and the
    hook's answer be undefined). It must stop the sweep as the Ctrl-C it
    is, quietly, and leave the library usable. The signal is sent from a
    thread the first cancel() poll starts, so it arrives while the C call
    runs (a sweep of 1.44 million simulations, minutes if not stopped)."""
    code = """if True:
        import os, signal, threading, time
        import wattsim
        started = []
        def cancel():
            if not started:
                started.append(threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)))
                started[0].start()
            return False
        t0 = time.monotonic()
        try:
            wattsim.sweep(gpu=["v100", "a40", "p100", "rtx6000"], workload=%r,
                          seed=range(1, 20001), threads=2, cancel=cancel)
            print("finished")
        except KeyboardInterrupt:
            print("KeyboardInterrupt", time.monotonic() - t0 < 30)
        except BaseException as e:
            print(type(e).__name__, e)
        print(len(wattsim.simulate(workload="cifar100", seed=1, recurrences=2)))
    """ % (V100,)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.stdout == "KeyboardInterrupt True\n2\n", r.stdout + r.stderr
    assert "Exception ignored" not in r.stderr, r.stderr


def test_a_simulation_keeps_its_python_thread_state():
    """A sweep's worker threads are not Python's: ctypes gives each call
    there a thread state of its own, made and destroyed around it (what
    made threads=2 some 20x slower a call than threads=1), unless the
    instance holds one from create to destroy. Held, a thread-local set in
    register_job is still there at every predict of the simulation."""
    import threading
    local, seen, main = threading.local(), [], threading.get_ident()

    class Local(wattsim.BatchSizeOptimizer):
        def register_job(self, job, batch_sizes):
            local.mine = id(self)

        def predict(self, job):
            seen.append((threading.get_ident() != main, getattr(local, "mine", None) == id(self)))
            return job.default_bs

        def observe(self, job, batch_size, cost, converged):
            pass

    wattsim.sweep(workload=["cifar100", "squad"], seed=range(1, 5), threads=2,
                  policies=[(Local(), "jit")])
    assert len(seen) > 100 and all(worker for worker, _ in seen)
    assert all(kept for _, kept in seen)
