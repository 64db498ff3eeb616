#!/usr/bin/python3
"""Writes dash.json, the Rockpool reference vectors that rockpool_test.go
compares the xylo conversion's time-constant rules with.

Usage: gen.py ROCKPOOL_CHECKOUT [OUTDIR]

ROCKPOOL_CHECKOUT is a checkout of github.com/synsense/rockpool (the
vectors here were made at commit 42cee1c96422f27257138a96618821e0e6bd5b41);
OUTDIR defaults to this script's directory. Needs numpy and torch.

What runs: the checkout's rockpool package, imported as it is (sys.path),
and two of its functions, unchanged:

  - rockpool.nn.modules.torch.lif_bitshift_torch.calc_bitshift_decay, the
    rule LIFBitshiftTorch uses to turn a time constant into a Xylo
    bit-shift decay (round(log2(tau/dt)), negative values set to 0);
  - rockpool.nn.modules.torch.lif_torch.bitshift_to_tau, the time constant
    of a bit-shift decay (-dt / ln(1 - 2^-dash)).

Both run on float64 tensors, so that the vectors hold the rule rather than
float32 rounding near the half-way points. Time constants are drawn
log-uniformly for tau/dt in (1, 2^17) over several dt, with extra cases at
powers of two and within 1e-9 of the half-way points 2^(k+1/2).

What does not run: the Xylo core itself. Every Rockpool simulator of the
Xylo SNN core (devices.xylo.syns61201.XyloSim and its siblings) calls
SynSense's xylosim, a closed binary; LIFBitshiftTorch is a float model of
the neuron (v - v/2^dash, not the chip's integer shift), so it cannot
check the integer core bit for bit.
"""

import json
import os
import sys

import numpy as np

SEED = 61201
CASES = 4000


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    sys.path.insert(0, sys.argv[1])
    import torch
    from rockpool.nn.modules.torch.lif_bitshift_torch import calc_bitshift_decay
    from rockpool.nn.modules.torch.lif_torch import bitshift_to_tau

    outdir = sys.argv[2] if len(sys.argv) == 3 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(SEED)
    dts = rng.choice([1e-3, 1e-4, 5e-4, 2e-3, 1.0 / 1024], CASES)
    ratio = np.exp2(rng.uniform(0, 17, CASES))
    k = rng.integers(0, 17, CASES)
    special = rng.integers(0, 4, CASES)
    ratio = np.where(special == 1, np.exp2(k.astype(float)), ratio)
    ratio = np.where(special == 2, np.exp2(k + 0.5) * (1 + rng.choice([-1e-9, 1e-9], CASES)), ratio)
    ratio = np.where(ratio <= 1, 1 + 1e-6, ratio)
    taus = ratio * dts
    cases = []
    for tau, dt in zip(taus, dts):
        d = calc_bitshift_decay(torch.tensor([tau], dtype=torch.float64), float(dt))
        cases.append({"tau": float(tau), "dt": float(dt), "dash": int(d[0])})
    dashes = []
    for dt in [1e-3, 1e-4, 1.0 / 1024]:
        for dash in range(1, 16):
            (tau,) = bitshift_to_tau(dt, torch.tensor([float(dash)], dtype=torch.float64))
            dashes.append({"dash": dash, "dt": dt, "tau": float(tau[0])})
    with open(os.path.join(outdir, "dash.json"), "w") as f:
        json.dump({"calc_bitshift_decay": cases, "bitshift_to_tau": dashes}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
