#!/usr/bin/python3
"""The MAB decisions test_serve.c (serve_decisions) expects, computed with
numpy as Zeus's server computes them (server/mab.py GaussianTS: _fit_arm,
predict, report; service.get_random_choices and get_normal on
default_rng(mab_seed)). The job: batch sizes 32..256, eta 0.5, max power
300, mab_seed 4; after pruning the arms are 64 (explorations: trials 2, 5)
and 128 (trials 1, 7); trial 6 is a concurrent trial at 64. Prints
[(trial_number, batch_size), ...] of the next eight predicts, each
reported with the (time, energy) below. Run: /usr/bin/python3 serve_mab.py
"""
import numpy as np

rng = np.random.default_rng(4)
eta, mp = 0.5, 300.0


def cost(e, t):
    return eta * e + (1 - eta) * mp * t


def fit(r, pm=0.0, pp=0.0):
    r = np.array(r)
    v = np.var(r)
    rp = np.inf if v == 0.0 else np.reciprocal(v)
    if rp == np.inf:
        return (r.mean(), np.inf, len(r))
    prec = pp + len(r) * rp
    return ((pp * pm + rp * r.sum()) / prec, prec, len(r))


arms = {64: fit([-cost(900, 8), -cost(950, 9)]), 128: fit([-cost(1000, 10), -cost(880, 8.5)])}
hist = {64: [(2, cost(900, 8)), (5, cost(950, 9)), (6, cost(800, 7))],
        128: [(1, cost(1000, 10)), (7, cost(880, 8.5))]}
out = []
tn = 8
for k in range(8):
    order = rng.choice(np.array([64, 128]), 2, replace=False)
    pick = None
    for a in order:
        if arms[a][2] < 2:
            pick = a
            break
    if pick is None:
        ex = {a: rng.normal(arms[a][0], np.sqrt(np.reciprocal(arms[a][1]))) for a in [64, 128]}
        pick = max(ex, key=ex.get)
    out.append((tn, int(pick)))
    t, e = (8 + k % 3, 900 + 40 * k) if pick == 64 else (7 + k % 2, 800 + 30 * k)
    c = cost(e, t)
    h = sorted(hist[pick], key=lambda x: -x[0])  # window_size 0: all, newest first
    arms[pick] = fit([-x[1] for x in h] + [-c])
    hist[pick].append((tn, c))
    tn += 1
print(out)
