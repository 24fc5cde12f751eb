"""Policies given as objects (issue 29 items 1, 2, 7): a class or a factory
instantiated per simulation with its seed, a live instance's parameters in
provenance and labels, and one style for every policy error."""
import warnings

import pytest

import wattsim
from wstest_policies import Seeded

KW = dict(gpu="v100", workload="cifar100", eta=0.5, recurrences=6)


def runs(df):
    return [[r["bs"], r["pl"], r["energy_j"], r["time_s"], bool(r["reached"])]
            for r in df.to_dict("records")]


def per_seed(seeds):
    return {s: runs(wattsim.simulate(seed=s, bso=Seeded(seed=s), plo="jit", **KW))
            for s in seeds}


@pytest.mark.parametrize("form", ["class", "factory"])
def test_a_class_or_factory_is_built_per_simulation_with_its_seed(form):
    """sweep(seed=range(1, 4), policies=[(Cls, jit)]) runs each seed as
    simulate(seed=s, bso=Cls(seed=s)) does: the seeds' histories differ."""
    p = Seeded if form == "class" else (lambda seed: Seeded(seed=seed))
    h = wattsim.sweep(seed=range(1, 4), policies=[(p, "jit")], keep_history=True,
                      **KW).history
    h = h[h["policy"] == "py-seeded+jit"]
    want = per_seed(range(1, 4))
    assert len({str(v) for v in want.values()}) == 3       # the seeds differ
    for s in range(1, 4):
        assert runs(h[h["seed"] == s]) == want[s], s


def test_a_class_in_simulate_gets_the_simulations_seed():
    assert runs(wattsim.simulate(seed=2, bso=Seeded, plo="jit", **KW)) == per_seed([2])[2]


def test_a_live_seeded_instance_over_seeds_warns_naming_the_fix():
    with pytest.warns(wattsim.WattsimWarning, match=r"bso py-seeded\{seed=1\}"
                      r" \(wstest_policies.Seeded\): one live object for 3 seeds: .* pass the"
                      r" class \(Seeded\) or a factory \(lambda seed: Seeded\(seed=seed\)\)"):
        wattsim.sweep(seed=range(1, 4), policies=[(Seeded(seed=1), "jit")], **KW)
    with pytest.warns(wattsim.WattsimWarning, match="one live object for 2 seeds") as w:
        wattsim.plan(seeds=2, policies=[(Seeded(seed=1), "jit")], **KW)
    assert {x.filename for x in w} == {__file__}      # the warning points at the call


def test_no_warning_for_one_seed_or_an_unseeded_object():
    from wattsim.policies import GaussianTS, JIT
    with warnings.catch_warnings():
        warnings.simplefilter("error", wattsim.WattsimWarning)
        wattsim.sweep(seed=3, policies=[(Seeded(seed=3), "jit")], **KW)
        # draws from the host's stream, seeded per simulation
        wattsim.sweep(seed=range(1, 3), policies=[(GaussianTS(), JIT())], **KW)


class LogTS(wattsim.BatchSizeOptimizer):
    """b0 always; parameters as a Zeus-style class keeps them."""

    def __init__(self, eta=0.1, window=0, seed=123, verbose=True):
        self.eta, self.window, self.seed, self.verbose = eta, window, seed, verbose

    def register_job(self, job, batch_sizes):
        self.b = job.default_bs

    def predict(self, job):
        return self.b

    def observe(self, job, batch_size, cost, converged):
        pass


class Bare(LogTS):
    """No readable constructor arguments: its public scalar attributes."""

    def __init__(self):
        self.alpha, self._hidden, self.table = 0.1 + 0.2, 5, {}


def test_a_live_objects_parameters_are_in_provenance_and_labels():
    res = wattsim.sweep(seed=1, policies=[(LogTS(eta=0.05), "jit"), (LogTS(), "jit"),
                                          (LogTS(eta=0.1 + 0.2, verbose=False), "jit"),
                                          (Bare(), "jit")], **KW)
    c = res.cells.set_index("policy")
    assert (c.loc["py-logts{eta=0.05}+jit", "bso_params"]
            == "eta=0.05,window=0,seed=123,verbose=true")
    assert c.loc["py-logts+jit", "bso_params"] == "eta=0.1,window=0,seed=123,verbose=true"
    # floats as the shortest text that reads back, in labels and provenance
    assert (c.loc["py-logts{eta=0.30000000000000004,verbose=false}+jit", "bso_params"]
            == "eta=0.30000000000000004,window=0,seed=123,verbose=false")
    assert c.loc["py-bare{alpha=0.30000000000000004}+jit", "bso_params"] == \
        "alpha=0.30000000000000004"
    df = wattsim.simulate(seed=1, bso=LogTS(eta=0.05), plo="jit", **KW)
    (p,) = df.attrs["provenance"]["policies"]
    assert p["policy"] == "py-logts{eta=0.05}+jit"
    assert p["bso_params"] == "eta=0.05,window=0,seed=123,verbose=true"


def test_a_class_records_its_defaults_as_the_cli_does():
    df = wattsim.simulate(seed=1, bso=LogTS, plo="jit", **KW)
    (p,) = df.attrs["provenance"]["policies"]
    assert p["policy"] == "py-logts+jit"
    assert p["bso_params"] == "eta=0.1,window=0,seed=-1,verbose=true"


class Zero:
    def predict(self, job, batch_size):
        return 0

    def observe(self, job, batch_size, power_limit, cost):
        pass


class Thousand(LogTS):
    def predict(self, job):
        return 1000


class KeyErr(LogTS):
    def predict(self, job):
        return {}["missing"]


SIM = "v100/cifar100 eta 0.5 beta 2 seed 3"


def test_a_plo_returning_zero_is_named():
    with pytest.raises(wattsim.PolicyError) as e:
        wattsim.simulate(seed=3, bso="zeus", plo=Zero(), **KW)
    assert str(e.value) == (SIM + ": plo py-zero (test_policy_objects.Zero): predict(bs 1024)"
                            " returned power limit 0 W; return None to profile the batch"
                            " size's power limits, or one of them in W")
    assert e.value.__cause__ is None


def test_errors_in_one_style():
    with pytest.raises(wattsim.PolicyError) as e:     # the host's check, restyled
        wattsim.simulate(seed=3, bso=Thousand(eta=0.5), plo="jit", **KW)
    assert str(e.value) == (SIM + ": bso py-thousand{eta=0.5} (test_policy_objects.Thousand):"
                            " predict returned batch size 1000, which is not one of the job's"
                            " 10 batch sizes (8..4096)")
    assert e.value.__cause__ is None
    with pytest.raises(wattsim.PolicyError) as e:     # the policy's exception
        wattsim.simulate(seed=3, bso=KeyErr, plo="jit", **KW)
    assert str(e.value) == (SIM + ": bso py-keyerr (test_policy_objects.KeyErr): predict:"
                            " KeyError: 'missing'")
    assert isinstance(e.value.__cause__, KeyError)


def test_wrong_types_are_named():
    with pytest.raises(TypeError, match=r"^bso test_policy_objects.Zero: the class has no"
                       r" register_job/predict/observe \(Zeus's BatchSizeOptimizer"):
        wattsim.simulate(seed=1, bso=Zero, plo="jit", **KW)
    with pytest.raises(TypeError, match=r"^bso 42 \(builtins.int\) is not a batch-size"
                       r" optimizer \(bso\): it has no register_job/predict/observe .* pass an"
                       r" instance, its class or a factory"):
        wattsim.simulate(seed=1, bso=42, plo="jit", **KW)
    with pytest.raises(TypeError, match=r"^plo <function .*>: the factory returned 7"
                       r" \(builtins.int\), not a power-limit optimizer"):
        wattsim.simulate(seed=1, bso="zeus", plo=lambda seed: 7, **KW)


class Wide(LogTS):
    """300 public attributes: more than provenance and a label hold."""

    def __init__(self):
        for i in range(300):
            setattr(self, "attribute_%03d" % i, i + 0.5)


def test_an_object_with_many_attributes_is_recorded_in_part():
    df = wattsim.simulate(seed=1, bso=Wide(), plo="jit", **KW)
    (p,) = df.attrs["provenance"]["policies"]
    assert p["bso_params"].startswith("attribute_000=0.5,attribute_001=1.5,")
    assert 800 < len(p["bso_params"]) <= 900 and len(p["policy"]) < 300


def test_plan_records_the_parameters_too():
    """plan runs policies as they are (no {...} in its labels), and its
    provenance records their parameters as simulate's and sweep's do (it
    recorded '' for every policy, C ones too)."""
    from wattsim.policies import EpsilonGreedy
    df = wattsim.plan(seeds=2, policies=[(EpsilonGreedy(epsilon=0.05), "jit"), ("zeus", "jit")],
                      **KW)
    got = {p["policy"]: p["bso_params"] for p in df.attrs["provenance"]["policies"]}
    assert got == {"py-epsilongreedy+jit": "epsilon=0.05,decay=true,penalty=2",
                   "zeus+jit": "rounds=2,window=0"}
