"""Writing a policy in Python: Zeus's legacy interface
(zeus._legacy.policy.interface), which any class may implement without
deriving from these bases, and wattsim's opt-in richer view (WithContext).
"""
import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class Job:
    """The recurring job a policy is asked about: hashable, with the
    attributes Zeus's policies read (dataset, network, optimizer,
    target_metric, max_epochs, default_bs) and wattsim's (workload, gpu,
    eta, beta, max_power, batch_sizes)."""
    dataset: str
    network: str = None
    optimizer: str = None
    target_metric: float = None
    max_epochs: int = None
    default_bs: int = None
    default_lr: float = None
    workdir: str = None
    command: tuple = None
    # wattsim's, left out of the repr (what Zeus's policies print)
    workload: str = dataclasses.field(default=None, repr=False)
    gpu: str = dataclasses.field(default=None, repr=False)
    eta: float = dataclasses.field(default=None, repr=False)
    beta: float = dataclasses.field(default=math.inf, repr=False)
    max_power: float = dataclasses.field(default=None, repr=False)
    batch_sizes: tuple = dataclasses.field(default=(), repr=False)

    def __hash__(self):
        # Zeus's policies key their state by the job, hashing it on every
        # call: computed once (the fields never change; equal jobs hash
        # alike, as the generated __hash__ would make them)
        try:
            return self._hash
        except AttributeError:
            h = hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)))
            object.__setattr__(self, "_hash", h)
            return h


@dataclasses.dataclass(frozen=True)
class Context:
    """What the host knows at a call (ws_ctx in wattsim/policy.h)."""
    recurrence: int
    recurrences: int
    attempt: int
    run_started: int
    run_epochs: int
    run_early_stopped: int
    run_epoch_budget: float
    run_time_s: float
    run_energy_j: float
    profile_time_s: float
    profile_power_w: float
    carbon_intensity: float
    price: float
    # 2.3, the schedule on the simulated clock (nan from an older host)
    now_s: float = math.nan
    due_s: float = math.nan
    every_s: float = math.nan
    defer_s: float = math.nan

    @classmethod
    def from_c(cls, c):
        size = type(c).defer_s.offset + type(c).defer_s.size
        return cls(*(getattr(c, f.name) for f in dataclasses.fields(cls)
                     if f.name not in _V23 or c.size >= size))


_V23 = ("now_s", "due_s", "every_s", "defer_s")


class WithContext:
    """Opt in to wattsim's richer view: before every call the adapter sets
    self.ctx (a Context: the recurrence, the run's epochs, time, energy,
    the carbon intensity, the simulated clock now_s, ...) and, at creation,
    self.host (the host's random stream, numpy's Generator draw for draw:
    random(), integers(n), normal(loc, scale), choice(n, k),
    permutation(n); and the series as a perfect forecast on the clock:
    forecast("carbon" or "price", t, dur=0), forecast_next(kind, t))."""
    ctx = None
    host = None

    def __deepcopy__(self, memo):
        import copy
        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            setattr(new, k, None if k in ("ctx", "host") else copy.deepcopy(v, memo))
        return new


class BatchSizeOptimizer:
    """Zeus's BatchSizeOptimizer."""

    def register_job(self, job, batch_sizes):
        raise NotImplementedError

    def predict(self, job):
        raise NotImplementedError

    def observe(self, job, batch_size, cost, converged=None):
        raise NotImplementedError


class PowerLimitOptimizer:
    """Zeus's PowerLimitOptimizer: predict returns None to have the power
    limits of batch_size profiled (each reported to observe)."""

    def predict(self, job, batch_size):
        raise NotImplementedError

    def observe(self, job, batch_size, power_limit, cost):
        raise NotImplementedError
