"""Small Python policies: a worked example (EpsilonGreedy) and ports of
wattsim's C `gts` and `jit` written against Zeus's interface, which the
test suite checks against the C policies seed for seed (the same stream:
a BSO's is np.random.default_rng(seed), as the host seeds the C one)."""

from .policy import BatchSizeOptimizer, PowerLimitOptimizer, WithContext


def _rng(seed):
    import numpy as np
    return np.random.default_rng(seed)


class EpsilonGreedy(BatchSizeOptimizer):
    """Each batch size once (in order), then the one of least mean cost,
    or with probability epsilon a uniformly drawn one."""

    def __init__(self, epsilon=0.1, seed=1):
        import random
        self.epsilon = epsilon
        self.rng = random.Random(seed)
        self.costs = {}

    def register_job(self, job, batch_sizes):
        self.costs[job] = {b: [] for b in sorted(batch_sizes)}

    def predict(self, job):
        costs = self.costs[job]
        for b, c in costs.items():
            if not c:
                return b
        if self.rng.random() < self.epsilon:
            return self.rng.choice(list(costs))
        return min(costs, key=lambda b: sum(costs[b]) / len(costs[b]))

    def observe(self, job, batch_size, cost, converged=None):
        self.costs[job][batch_size].append(cost)


class GaussianTS(WithContext, BatchSizeOptimizer):
    """wattsim's C `gts` (Zeus's GTSBatchSizeOptimizer without pruning):
    Gaussian Thompson sampling over every batch size, each explored
    `explore` times first in an order drawn anew at every prediction.
    seed=None draws from the host's stream (self.host, seeded by each
    simulation's seed, as the C policy's), else from
    np.random.default_rng(seed) as Zeus's policies do."""

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
