"""wattsim from Python: the simulator's commands as functions returning
pandas DataFrames (plain lists of dicts without pandas), bound to
libwattsim with ctypes (wattsim/api.h). See docs/python.md.

    import wattsim
    df = wattsim.simulate(gpu="v100", workload="cifar100", eta=0.5, seed=1)
    df[["recurrence", "bs", "pl", "energy_j", "time_s", "reached"]]

Options are the CLI's (`wattsim COMMAND --help`) as keyword arguments,
dashes as underscores: eta=0.5, power_cap=200, keep_history=True. A list,
range or numpy array gives a sweep's axis several values
(seed=range(1, 21)); simulate, pareto and plan take one of each. A policy
(bso=, plo=, policies=) is a name as on the command line or a live
Python object with Zeus's interface (wattsim.policy).
"""
from ._lib import API_VERSION  # noqa: F401
from ._run import (InputError, PolicyError, SimulationError, CancelledError,  # noqa: F401
                   WattsimError, WattsimWarning, simulate, pareto, plan, sweep, run, workloads, gpus,
                   policies_list, version)
from . import trace  # noqa: F401
from .policy import Job, BatchSizeOptimizer, PowerLimitOptimizer, WithContext  # noqa: F401

__version__ = "0.4.0"
