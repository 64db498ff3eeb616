#!/usr/bin/python3
"""Replays every fixture in this folder with the update equations written in
README.md (plain float32 numpy, no snnTorch/Norse needed) and checks that they
reproduce the recorded spikes exactly and mem/syn to float32 rounding.

This keeps README.md honest: if a library changes its update order, the
regenerated fixtures stop matching these equations and this script fails.

    /usr/bin/python3 snn/testdata/reference/check_equations.py
"""

import glob
import json
import os
import sys

import numpy as np

f32 = np.float32


def leaky(d):
    p = d["params"]
    beta = np.clip(np.asarray(p["beta"], dtype=f32), 0, 1)
    th = f32(p["threshold"])
    mem = np.zeros(d["neurons"], dtype=f32)
    out = []
    for x in np.asarray(d["input"], dtype=f32):
        reset = (mem - th > 0).astype(f32)  # from the previous step's mem
        if p["reset_mechanism"] == "subtract":
            mem = beta * mem + x - reset * th
        else:  # zero: the decayed old mem is dropped, this step's input kept
            mem = beta * ((1 - reset) * mem) + x
        spk = (mem - th > 0).astype(f32)
        if not p["reset_delay"]:
            do_reset = spk - reset
            mem = mem - do_reset * th if p["reset_mechanism"] == "subtract" else mem - do_reset * mem
        out.append((spk, mem.copy(), None))
    return out


def synaptic(d):
    p = d["params"]
    a = np.clip(f32(p["alpha"]), 0, 1)
    beta = np.clip(np.asarray(p["beta"], dtype=f32), 0, 1)
    th = f32(p["threshold"])
    mem = np.zeros(d["neurons"], dtype=f32)
    syn = np.zeros(d["neurons"], dtype=f32)
    out = []
    for x in np.asarray(d["input"], dtype=f32):
        reset = (mem - th > 0).astype(f32)
        syn = a * syn + x
        mem = beta * mem + syn
        if p["reset_mechanism"] == "subtract":
            mem = mem - reset * th
        else:  # zero: the whole new mem (input included) is zeroed; syn is kept
            mem = mem - mem * reset
        spk = (mem - th > 0).astype(f32)
        out.append((spk, mem.copy(), syn.copy()))
    return out


def norse_lif(d):
    p = {k: (f32(v) if isinstance(v, float) else v) for k, v in d["params"].items()}
    v = np.full(d["neurons"], p["v_leak"], dtype=f32)
    i = np.zeros(d["neurons"], dtype=f32)
    dt = p["dt"]
    out = []
    for x in np.asarray(d["input"], dtype=f32):
        i_new = i + x
        v_dec = v + dt * p["tau_mem_inv"] * ((p["v_leak"] - v) + i_new)
        i = i_new + (-dt * p["tau_syn_inv"] * i_new)
        z = (v_dec - p["v_th"] > 0).astype(f32)
        v = (1 - z) * v_dec + z * p["v_reset"]
        out.append((z, v.astype(f32), i.astype(f32)))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    bad = 0
    for path in sorted(glob.glob(os.path.join(here, "*.json"))):
        d = json.load(open(path))
        fn = {"Leaky": leaky, "Synaptic": synaptic, "LIFCell": norse_lif}[d["neuron"]]
        got = fn(d)
        spk = np.array([g[0] for g in got])
        mem = np.array([g[1] for g in got])
        ok = np.array_equal(spk, np.array(d["spikes"], dtype=f32))
        err = float(np.max(np.abs(mem - np.array(d["mem"]))))
        if "syn" in d:
            err = max(err, float(np.max(np.abs(np.array([g[2] for g in got]) - np.array(d["syn"])))))
        ok = ok and err < 1e-5
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {d['case']}: spikes equal={np.array_equal(spk, np.array(d['spikes'], dtype=f32))} max|diff|={err:.3g}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
