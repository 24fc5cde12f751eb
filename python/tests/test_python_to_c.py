"""Values crossing from Python to C (docs/safety.md, "Integers and strings
from Python"): ctypes keeps the low bits of an int that does not fit its
C type and C reads a string up to its first NUL, without a word. Every
such value is checked before it crosses: out of range or cut short is an
error naming the call, the value and the range, never a masked number."""
import math

import numpy as np
import pytest

import wattsim

INT_RANGE = r"outside the C int range \[-2147483648, 2147483647\]"


class Answer(wattsim.BatchSizeOptimizer):
    """predict answers `value` (b0 at register_job, for reference)."""

    def __init__(self, value):
        self.value = value

    def register_job(self, job, batch_sizes):
        pass

    def predict(self, job):
        return self.value

    def observe(self, job, batch_size, cost, converged):
        pass


class PowerAnswer(wattsim.PowerLimitOptimizer):
    def __init__(self, value):
        self.value = value

    def predict(self, job, batch_size):
        return self.value

    def observe(self, job, batch_size, power_limit, cost):
        pass


def simulate(**kw):
    return wattsim.simulate(gpu="v100", workload="cifar100", seed=1, recurrences=2, **kw)


# 1024 is cifar100's b0 and 175 W a V100 power limit: masked to 32 bits,
# each of these would run as them.
@pytest.mark.parametrize("value, shown", [
    (1024 + 2 ** 32, "4294968320"),
    (-2 ** 32 + 1024, "-4294966272"),
    (2 ** 64 + 1024, "18446744073709552640"),
    (np.int64(2 ** 40 + 1024), "1099511628800"),
    (np.uint64(2 ** 64 - 2 ** 32 + 1024), "18446744069414585344"),
])
def test_a_bso_answer_beyond_a_c_int_is_refused(value, shown):
    assert simulate(bso=Answer(1024), plo="jit").attrs["final_bs"] == 1024  # the reference
    with pytest.raises(wattsim.PolicyError, match=r"^v100/cifar100 eta 0.5 beta 2 seed 1: bso"
                       r" py-answer(\{value=%s\})? \(test_python_to_c.Answer\): predict returned"
                       r" %s, %s$" % (shown, shown, INT_RANGE)):
        simulate(bso=Answer(value), plo="jit")


def test_a_plo_answer_beyond_a_c_int_is_refused():
    with pytest.raises(wattsim.PolicyError, match=r"^v100/cifar100 eta 0.5 beta 2 seed 1: plo"
                       r" py-poweranswer\{value=4294967471\} \(test_python_to_c"
                       r".PowerAnswer\): predict returned 4294967471, %s$"
                       % INT_RANGE):
        simulate(bso="zeus", plo=PowerAnswer(175 + 2 ** 32))


def test_the_c_int_range_itself_still_reaches_the_host():
    """INT_MAX is a C int: the host, not the package, says it is no batch
    size of the job."""
    with pytest.raises(wattsim.PolicyError, match="2147483647") as e:
        simulate(bso=Answer(2 ** 31 - 1), plo="jit")
    assert "outside the C int range" not in str(e.value)


class Draws(wattsim.WithContext, wattsim.BatchSizeOptimizer):
    """Calls host.NAME(*ARGS) at its first predict."""

    def __init__(self, name, *args):
        self.name, self.args = name, args

    def register_job(self, job, batch_sizes):
        pass

    def predict(self, job):
        getattr(self.host, self.name)(*self.args)
        return job.default_bs

    def observe(self, job, batch_size, cost, converged):
        pass


@pytest.mark.parametrize("call, message", [
    # numpy's Generator: rng.integers(-1), rng.normal(0, -1), ... raise so
    (("integers", -1), "high <= 0"),
    (("integers", 0), "high <= 0"),
    (("integers", 2 ** 64 + 5), "high is out of bounds for int64"),
    (("normal", 0, -1), "scale < 0"),
    (("choice", 3, -1), "negative dimensions are not allowed"),
    (("choice", -1, 2), "a must be a positive integer unless no samples are taken"),
    (("choice", 3, 5), "Cannot take a larger sample than population when replace is False"),
    (("choice", 2 ** 64 + 5, 1), r"choice\(18446744073709551621, 1\): a is out of bounds"),
    (("permutation", 2 ** 64 + 2), r"permutation\(18446744073709551618\): n must be in"),
])
def test_host_draws_refuse_what_numpy_refuses(call, message):
    with pytest.raises(wattsim.PolicyError, match=r"predict: ValueError: %s" % message):
        simulate(bso=Draws(*call), plo="jit")


def test_host_draws_in_range_match_numpy():
    """The checks leave the streams alone: integers(n) and normal(loc, 0)
    as numpy's Generator on the same stream (normal with scale 0 is loc)."""
    got = []

    class Probe(Draws):
        def predict(self, job):
            got.append((self.host.integers(1), self.host.normal(3.5, 0.0),
                        self.host.integers(np.int64(7)) in range(7)))
            return job.default_bs

    simulate(bso=Probe("random"), plo="jit")
    assert got and all(g == (0, 3.5, True) for g in got)


def test_a_nul_in_a_string_option_is_refused_not_cut():
    with pytest.raises(ValueError, match=r"^simulate: the value of gpu 'v100\\x00junk' holds a"
                       r" NUL character"):
        wattsim.simulate(gpu="v100\x00junk", workload="cifar100", seed=1, recurrences=2)
    with pytest.raises(ValueError, match="NUL"):
        wattsim.simulate(**{"gpu\x00x": "v100"}, workload="cifar100", seed=1, recurrences=2)


def test_integer_options_beyond_their_range_are_refused_by_the_library():
    """Options cross as text and the library parses them with their range:
    never masked either."""
    with pytest.raises(wattsim.InputError, match=r"--seed .* got \"18446744073709551617\""):
        wattsim.simulate(workload="cifar100", seed=2 ** 64 + 1, recurrences=2)
    with pytest.raises(wattsim.InputError, match="4294967298"):
        wattsim.simulate(workload="cifar100", seed=1, recurrences=2 ** 32 + 2)
    with pytest.raises(wattsim.InputError, match="4294967298"):
        wattsim.sweep(workload="cifar100", seed=[1], recurrences=2, threads=2 ** 32 + 2,
                      policies=[("zeus", "jit")])


# py:MODULE:CLASS: the class's __init__ defaults become the parameters the
# host declares, checks and records.
@pytest.mark.parametrize("cls, message", [
    ("BigDefault", r"wstest_policies.BigDefault: __init__'s default n=18446744073709551623 is"
                   r" outside the range of an int parameter \[-2\^53, 2\^53\]"),
    ("NanDefault", r"wstest_policies.NanDefault: __init__'s default x=nan is NaN"),
    ("InfDefault", r"wstest_policies.InfDefault: __init__'s default x=inf is infinite"),
    ("NulDefault", r"wstest_policies.NulDefault: __init__'s default s='a\\x00b' holds a NUL"),
])
def test_a_py_class_default_the_host_cannot_take_is_refused(cls, message):
    with pytest.raises(wattsim.InputError, match=r"py:wstest_policies:%s: %s" % (cls, message)):
        wattsim.simulate(workload="cifar100", seed=1, recurrences=2,
                         bso="py:wstest_policies:" + cls, plo="jit")


def test_a_py_class_parameter_beyond_its_range_is_refused():
    """{n=...} crosses as text: the host's parser refuses what the range
    refuses, and the recorded value is the one given."""
    with pytest.raises(wattsim.InputError, match="18446744073709551623"):
        wattsim.simulate(workload="cifar100", seed=1, recurrences=2,
                         bso="py:wstest_policies:SmallDefault", plo="jit",
                         bso_param={"n": 2 ** 64 + 7})
    r = wattsim.simulate(workload="cifar100", seed=1, recurrences=2,
                         bso="py:wstest_policies:SmallDefault", plo="jit", bso_param={"n": 9})
    assert r.attrs["provenance"]["policies"][0]["bso_params"] == "n=9,after=1000000"
    assert not math.isnan(r.attrs["energy_j"])
