"""Small Python policies: a worked example (EpsilonGreedy) and ports of
wattsim's C `gts` and `jit` written against Zeus's interface, which the
test suite checks against the C policies seed for seed (the same stream:
a BSO's is np.random.default_rng(seed), as the host seeds the C one)."""

import math

from .policy import BatchSizeOptimizer, PowerLimitOptimizer, WithContext


def _rng(seed):
    import numpy as np
    return np.random.default_rng(seed)


class EpsilonGreedy(WithContext, BatchSizeOptimizer):
    """The C worked example policies/example/egreedy.c in Python: each
    batch size once (b0 first), then with probability epsilon (divided by
    the square root of the recurrence when `decay`) a uniformly drawn size,
    else the one of least mean cost; a run that did not reach the target
    counts `penalty` times its cost. Draws from the host's stream."""

    def __init__(self, epsilon=0.1, decay=True, penalty=2.0):
        self.epsilon, self.decay, self.penalty = epsilon, decay, penalty
        self.n, self.mean, self.stopped = {}, {}, 0

    def register_job(self, job, batch_sizes):
        self.bs = sorted(batch_sizes)
        self.n = {b: 0 for b in self.bs}
        self.mean = {b: 0.0 for b in self.bs}

    def predict(self, job):
        if self.n[job.default_bs] == 0:
            return job.default_bs
        for b in self.bs:
            if self.n[b] == 0:
                return b
        eps = self.epsilon
        if self.decay and self.ctx.recurrence > 0:
            eps /= math.sqrt(self.ctx.recurrence)
        if self.host.random() < eps:
            return self.bs[self.host.integers(len(self.bs))]
        best = job.default_bs
        for b in self.bs:
            if self.mean[b] < self.mean[best]:
                best = b
        return best

    def observe(self, job, batch_size, cost, converged=None):
        if self.ctx.run_early_stopped:
            self.stopped += 1
        c = cost if converged else self.penalty * cost
        self.n[batch_size] += 1
        self.mean[batch_size] += (c - self.mean[batch_size]) / self.n[batch_size]


class GaussianTS(WithContext, BatchSizeOptimizer):
    """wattsim's C `gts` (Zeus's GTSBatchSizeOptimizer without pruning):
    Gaussian Thompson sampling over every batch size, each explored
    `explore` times first in an order drawn anew at every prediction.
    seed=None draws from the host's stream (self.host, seeded by each
    simulation's seed, as the C policy's), else from
    np.random.default_rng(seed) as Zeus's policies do. As `py:` on the
    command line its seed is the simulation's unless {seed=S} gives one:
    the same draws as the host's stream (a BSO's is default_rng(seed))."""

    def __init__(self, seed=None, explore=1):
        self.rng = None if seed is None else _rng(seed)
        self.explore = explore
        self.rewards = {}

    def register_job(self, job, batch_sizes):
        self.bs = sorted(batch_sizes)
        self.rewards = {b: [] for b in self.bs}

    def predict(self, job):
        import numpy as np
        n = len(self.bs)
        rng = self.rng or self.host
        order = rng.choice(n, n, replace=False) if self.rng else rng.choice(n, n)
        for k in order:
            if len(self.rewards[self.bs[k]]) < self.explore:
                return self.bs[k]
        best, best_theta = None, None
        for b in self.bs:
            r = np.array(self.rewards[b])
            with np.errstate(divide="ignore"):
                rp = np.reciprocal(np.var(r))
            if np.isinf(rp):
                mean, prec = np.mean(r), np.inf
            else:
                prec = len(r) * rp
                mean = rp * np.sum(r) / prec
            theta = rng.normal(mean, np.sqrt(np.reciprocal(prec)))
            if best is None or theta > best_theta:
                best, best_theta = b, theta
        return best

    def observe(self, job, batch_size, cost, converged=None):
        self.rewards[batch_size].append(-cost)


class JIT(PowerLimitOptimizer):
    """wattsim's C `jit` (Zeus's JITPowerLimitOptimizer): a batch size's
    limit is unknown (None: profile it) until profiled, then the profiled
    limit of least epoch cost, the first reported on ties."""

    def __init__(self):
        self.best = {}

    def predict(self, job, batch_size):
        b = self.best.get((job, batch_size))
        return None if b is None else b[0]

    def observe(self, job, batch_size, power_limit, cost):
        b = self.best.get((job, batch_size))
        if b is None or b[1] > cost:
            self.best[(job, batch_size)] = (power_limit, cost)


__all__ = ["EpsilonGreedy", "GaussianTS", "JIT"]
