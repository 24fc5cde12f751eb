"""Python policies the CLI tests name as py:wstest_policies:CLASS."""
import time


class Boom:
    """b0 `after` times, then a KeyError."""

    def __init__(self, after=3):
        self.after, self.n = after, 0

    def register_job(self, job, batch_sizes):
        self.b = job.default_bs

    def predict(self, job):
        self.n += 1
        if self.n > self.after:
            return {}["missing"]
        print("hello from predict")
        return self.b

    def observe(self, job, batch_size, cost, converged):
        pass


class Hang(Boom):
    """Never returns from predict."""

    def predict(self, job):
        while True:
            time.sleep(0.05)


class WrongType(Boom):
    def predict(self, job):
        return 1.5


class Seeded:
    """A batch size drawn from numpy.random.default_rng(seed) at every
    predict; says its seed and the job's workload on stderr (what a policy
    prints goes there) at register_job. Its seed is the simulation's unless
    given ({seed=S}), as Zeus's run_single.py seeds its optimizer."""

    def __init__(self, seed):
        import numpy as np
        self.seed, self.rng = seed, np.random.default_rng(seed)

    def register_job(self, job, batch_sizes):
        self.bs = sorted(batch_sizes)
        print("seeded: seed %d dataset %s network %s optimizer %s target_metric %r"
              % (self.seed, job.dataset, job.network, job.optimizer, job.target_metric))

    def predict(self, job):
        return self.bs[int(self.rng.integers(len(self.bs)))]

    def observe(self, job, batch_size, cost, converged):
        pass


class InitBoom(Boom):
    """__init__ raises: the class cannot be built for a simulation."""

    def __init__(self, after=3):
        raise RuntimeError("cannot build with after=%d" % after)


class SmallDefault(Boom):
    """An int parameter n (after: the Boom's, far away)."""

    def __init__(self, n=3, after=10 ** 6):
        super().__init__(after)
        self.n_param = n


class BigDefault(SmallDefault):
    """A default no C long holds: ctypes would store it as 7."""

    def __init__(self, n=2 ** 64 + 7):
        super().__init__(n)


class NanDefault(Boom):
    def __init__(self, x=float("nan")):
        super().__init__(10 ** 6)


class InfDefault(Boom):
    def __init__(self, x=float("inf")):
        super().__init__(10 ** 6)


class NulDefault(Boom):
    def __init__(self, s="a\0b"):
        super().__init__(10 ** 6)
