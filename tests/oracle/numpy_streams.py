#!/usr/bin/python3
"""The oracle of tests/test_rng.c: numpy 1.24's Generator and reductions.

usage: numpy_streams.py SPEC DATA OUT [STRINGS]

Reads the operations in SPEC (one per line, below), runs them with numpy
(and pandas for the group mean) and writes their results to OUT, in
order, as little-endian binary: uint32 for seedseq, uint64 for raw,
u32 and integers, int64 for choice, perm and shuffle, float64 otherwise.
DATA holds the float64 arrays the reductions read, STRINGS the decimal
numbers pdfloat reads (one a line).

  seedseq SEED NWORDS [KEY...]  SeedSequence(SEED, spawn_key=KEYS).generate_state(NWORDS)
  gen SEED [KEY]                the current generator: default_rng(SEED), or
                                Generator(PCG64(SeedSequence(SEED, spawn_key=(KEY,))))
  raw N                         bit_generator.random_raw(N)
  u32 N                         integers(0, 2**32, N, dtype=uint64): next_uint32
  random N                      random(N)
  integers HIGH N               integers(0, HIGH, N, dtype=uint64)
  normal N                      standard_normal(N)
  normalls LOC SCALE N          normal(LOC, SCALE, N)   (LOC, SCALE as float.hex)
  lognormal MEAN SIGMA N        lognormal(MEAN, SIGMA, N)
  expinv N                      standard_exponential(N, method="inv")
  choice N K                    choice(N, K, replace=False)
  perm N                        permutation(N)
  shuffle N                     shuffle(arange(N, dtype=int64)), the array
  reduce OFF N                  of DATA[OFF:OFF+N]: np.add.reduce, .sum(), .mean(),
                                np.var, pandas Series.mean, groupby().mean()
  pdfloat N                     the next N lines of STRINGS as pd.read_csv reads a
                                float64 column

Exit status 3 (with a message) when numpy is not 1.24 or pandas not 1.5:
Generator streams are not promised stable across numpy versions.
"""
import io
import sys

import numpy as np

if not np.__version__.startswith("1.24."):
    sys.exit(f"numpy_streams.py: numpy {np.__version__}; the oracle is numpy 1.24 (Debian 12's"
             " python3-numpy)")
import pandas as pd

if not pd.__version__.startswith("1.5."):
    sys.exit(f"numpy_streams.py: pandas {pd.__version__}; the oracle is pandas 1.5")
pd.set_option("compute.use_bottleneck", False)


def main(spec_path, data_path, out_path, strings_path=None):
    data = np.fromfile(data_path, dtype="<f8")
    strings = open(strings_path).read().split("\n") if strings_path else []
    at = 0
    rng = None
    with open(spec_path) as spec, open(out_path, "wb") as out:
        for line in spec:
            w = line.split()
            if not w:
                continue
            op, a = w[0], w[1:]
            if op == "seedseq":
                keys = tuple(int(k) for k in a[2:])
                r = np.random.SeedSequence(int(a[0]), spawn_key=keys).generate_state(int(a[1]))
                out.write(r.astype("<u4").tobytes())
                continue
            if op == "gen":
                if len(a) == 1:
                    rng = np.random.default_rng(int(a[0]))
                else:
                    ss = np.random.SeedSequence(int(a[0]), spawn_key=(int(a[1]),))
                    rng = np.random.Generator(np.random.PCG64(ss))
                continue
            if op == "raw":
                r = rng.bit_generator.random_raw(int(a[0])).astype("<u8")
            elif op == "u32":
                r = rng.integers(0, 2**32, int(a[0]), dtype=np.uint64).astype("<u8")
            elif op == "random":
                r = rng.random(int(a[0]))
            elif op == "integers":
                r = rng.integers(0, int(a[0]), int(a[1]), dtype=np.uint64).astype("<u8")
            elif op == "normal":
                r = rng.standard_normal(int(a[0]))
            elif op == "normalls":
                r = rng.normal(float.fromhex(a[0]), float.fromhex(a[1]), int(a[2]))
            elif op == "lognormal":
                r = rng.lognormal(float.fromhex(a[0]), float.fromhex(a[1]), int(a[2]))
            elif op == "expinv":
                r = rng.standard_exponential(int(a[0]), method="inv")
            elif op == "choice":
                r = rng.choice(int(a[0]), int(a[1]), replace=False).astype("<i8")
            elif op == "perm":
                r = rng.permutation(int(a[0])).astype("<i8")
            elif op == "shuffle":
                x = np.arange(int(a[0]), dtype=np.int64)
                rng.shuffle(x)
                r = x.astype("<i8")
            elif op == "reduce":
                off, n = int(a[0]), int(a[1])
                x = data[off:off + n].copy()
                g = pd.DataFrame({"k": np.zeros(n, dtype=np.int64), "v": x})
                r = np.array([np.add.reduce(x), x.sum(), x.mean(), np.var(x),
                              pd.Series(x).mean(), g.groupby("k").mean()["v"].iloc[0]])
            elif op == "pdfloat":
                n = int(a[0])
                text = "x\n" + "\n".join(strings[at:at + n]) + "\n"
                at += n
                r = pd.read_csv(io.StringIO(text), dtype={"x": np.float64})["x"].values
            else:
                sys.exit(f"numpy_streams.py: {spec_path}: unknown operation '{op}'")
            out.write(np.ascontiguousarray(r, dtype=r.dtype.newbyteorder("<")).tobytes())


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(*sys.argv[1:])
