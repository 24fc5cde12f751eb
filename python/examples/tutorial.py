#!/usr/bin/env python3
"""wattsim from Python, a tour: the energy/time frontier of a job, three
batch-size policies compared over seeds (one of them Python), and a plan
under a carbon-intensity series. Figures go into OUT (default
./tutorial-out), drawn with matplotlib when it is installed.

    PYTHONPATH=python /usr/bin/python3 python/examples/tutorial.py [OUT]
"""
import os
import sys

import wattsim
from wattsim.policies import EpsilonGreedy, GaussianTS, JIT

out = sys.argv[1] if len(sys.argv) > 1 else "tutorial-out"
os.makedirs(out, exist_ok=True)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("no matplotlib: tables only (Debian: apt-get install python3-matplotlib)")

# 1. The frontier: every (batch size, power limit) knob of DeepSpeech2 on a
#    V100, the ones no other beats on both time and energy flagged.
knobs = wattsim.pareto(gpu="v100", workload="librispeech", eta=0.5)
front = knobs[knobs.frontier == 1].sort_values("tta_s")
print("frontier of librispeech on v100: %d of %d knobs" % (len(front), len(knobs)))
print(front[["bs", "pl", "tta_s", "eta_j"]].to_string(index=False))
if plt:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ok = knobs.dropna(subset=["tta_s"])
    ax.scatter(ok.tta_s / 3600, ok.eta_j / 1e6, s=10, color="0.6", label="knobs")
    ax.plot(front.tta_s / 3600, front.eta_j / 1e6, "o-", color="C3", label="frontier")
    ax.set_xscale("log")          # the frontier sits in a corner: log axes
    ax.set_yscale("log")
    from matplotlib.ticker import NullFormatter, ScalarFormatter
    ax.set_xticks([10, 20, 50, 100])
    ax.set_yticks([5, 10, 20, 50])
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("time to accuracy (h)")
    ax.set_ylabel("energy to accuracy (MJ)")
    ax.set_title("DeepSpeech2 on V100")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "frontier.png"), dpi=150)

# 2. Policies compared over seeds: Zeus (C), a Python Gaussian Thompson
#    sampler drawing from wattsim's stream, and a Python epsilon-greedy.
jit = JIT()   # one object in two pairs: one policy (each simulation copies it)
res = wattsim.sweep(gpu="v100", workload="cifar100", eta=0.5, seed=range(1, 6), threads=2,
                    policies=[("zeus", "jit"), (GaussianTS(), jit), (EpsilonGreedy(), jit)])
cells = res.cells.set_index("policy")
print("\ncifar100 on v100, 5 seeds: total energy (MJ), mean [95 % CI]")
for p, c in cells.iterrows():
    print("  %-26s %7.2f [%.2f, %.2f]" % (p, c["energy_j"] / 1e6,
                                          c["energy_j_lo"] / 1e6,
                                          c["energy_j_hi"] / 1e6))
if plt:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    mean = cells["energy_j"] / 1e6
    err = [mean - cells["energy_j_lo"] / 1e6, cells["energy_j_hi"] / 1e6 - mean]
    ax.bar(range(len(cells)), mean, yerr=err, capsize=4, color="C0")
    ax.set_xticks(range(len(cells)))
    ax.set_xticklabels(cells.index, rotation=20, ha="right")
    ax.set_ylabel("total energy, 140 recurrences (MJ)")
    ax.set_title("cifar100 on V100, 5 seeds, 95 % CI")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "policies.png"), dpi=150)

# 3. A plan under a carbon series, one recurrence a day (a varying series needs a
#    schedule, so every policy runs on the same clock): what to set, when learning pays off.
carbon = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "traces",
                      "fetched", "carbon", "miso_mason_city_2022-10.csv")
plan = wattsim.plan(gpu="v100", workload="librispeech", recurrences=40, seed=range(1, 6),
                    carbon=carbon, every="24h", policies="zeus:jit,default:carbon")
rec = plan.attrs["recommended"]
print("\nplan: set bs %d at %d W (cost %.4g per run against %.4g by default)"
      % (rec["bs"], rec["pl"], rec["cost"], plan.attrs["default"]["cost"]))
print(plan[["policy", "break_even", "seeds_never"]].to_string(index=False))
if plt:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for _, p in plan.iterrows():
        saving = p["cumulative_cost_saving"]
        ax.plot(range(1, len(saving) + 1), [s / 1e6 for s in saving], label=p["policy"])
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel("recurrence")
    ax.set_ylabel("cumulative cost saving vs default (1e6)")
    ax.set_title("librispeech on V100, carbon series")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "plan.png"), dpi=150)
print("\nprovenance: wattsim %s, traces %s" % (plan.attrs["provenance"]["wattsim"],
                                               ", ".join(sorted(plan.attrs["provenance"]
                                                                ["traces"]["files"]))))
