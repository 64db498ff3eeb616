#!/usr/bin/python3
"""Writes the Lava reference vectors that lava_test.go compares the loihi
kernel with, by running Lava's own bit-accurate process models.

Usage: gen.py LAVA_CHECKOUT [OUTDIR]

LAVA_CHECKOUT is a checkout of github.com/lava-nc/lava (the vectors here
were made at commit b6822fbc0e85730fc0da6979451f42fef038fb71); OUTDIR
defaults to this script's directory. Needs numpy and scipy (weightutils
imports scipy.sparse).

What runs. Lava's process models cannot be imported whole on a Python
newer than Lava supports (lava.magma.compiler's dataclasses fail on 3.11)
and need Lava's runtime to be driven, so this script puts small stand-ins
for the lava.magma modules that src/lava/proc/lif/models.py and
src/lava/proc/dense/models.py import (decorators that return the class
unchanged, LavaPyType and the port types as inert placeholders, a
PyLoihiProcessModel base that stores proc_params) into sys.modules and then
imports those two files, and src/lava/utils/weightutils.py, unchanged from
the checkout. Every number below comes out of Lava's own methods:

  - PyLifModelBitAcc.__init__ and AbstractPyLifModelFixed.run_spk, which
    call scale_bias, scale_threshold, subthr_dynamics, spiking_activation
    and reset_voltage, one call per time step; the in-port's recv returns
    the step's activation as an int32 array (the dtype of Dense's a_out),
    the out-port's send records the spikes;
  - AbstractPyDenseModelBitAcc.run_spk (through PyDenseModelBitAcc), which
    calls weightutils.determine_sign_mode, clip_weights and
    truncate_weights on its first step and applies weight_exp to the
    dendritic sum, for binary (num_message_bits 0) and graded (8) spikes;
  - the two chained as Lava's runtime chains them: Dense's a_out of step t
    is the LIF's a_in of step t (the sum of the spikes of step t - 1).

What is stand-in: only the scheduling (this script calls run_spk in step
order, as the LoihiProtocol's spk phase does) and the ports (a list in, a
list out). No Lava arithmetic is copied or rewritten here.

Fixtures:

  lif.json     processes of 4 neurons sharing du, dv and vth (Lava's LIF
               has scalar ones), per-neuron bias_mant and bias_exp, initial
               u and v anywhere in 24 bits, and 8 steps of activation:
               u, v and spikes after each step. Regimes: full-range
               states and inputs (|a| <= 2^18, so that a*2^6 is at most
               2^24 and the 24-bit wrap of u is exact), states near
               +-2^23 (wraps and clips), inputs up to 2^22 with
               du = 4095 (u forgotten, so the single subtraction of 2^24
               leaves u outside 24 bits, as in Lava), u landing exactly
               on +-2^23 and v on the clip with thresholds up to
               2^17 - 1, and small states that spike. Past |a| = 2^22
               with u kept, Lava's int32 arithmetic could overflow; no
               case goes there.
  dense.json   weight matrices drawn from [-400, 400] and narrower (so
               clip_weights clips), each sign mode given or determined,
               num_weight_bits 1..8, weight_exp -8..7: the quantised
               weights and a_buff after each of 2 steps of spikes.
  network.json Dense (num_weight_bits 8) into a LIF: the LIF's u, v and
               spikes for 12 steps of graded input.
"""

import importlib.util
import json
import os
import sys
import types

import numpy as np

SEED = 20250728
LIF_PROCS = 800
LIF_N = 4
LIF_STEPS = 8
DENSE_CASES = 1024
DENSE_STEPS = 2
NET_CASES = 160
NET_IN, NET_N, NET_STEPS = 3, 4, 12


def _stub(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def _placeholder(name):
    return type(name, (), {})


def load_lava(root):
    """Imports Lava's LIF and Dense process models and weightutils from the
    checkout at root, with stand-ins for the lava.magma runtime."""
    src = os.path.join(root, "src")
    sys.path.insert(0, src)

    def decorator(*_a, **_k):
        return lambda cls: cls

    class LavaPyType:
        def __init__(self, *a, **k):
            pass

    class Port:
        VEC_DENSE = "VEC_DENSE"
        VEC_SPARSE = "VEC_SPARSE"
        SCALAR_DENSE = "SCALAR_DENSE"
        SCALAR_SPARSE = "SCALAR_SPARSE"

    class PyLoihiProcessModel:
        def __init__(self, proc_params=None):
            self.proc_params = proc_params if proc_params is not None else {}

        def run_spk(self):
            pass

    for pkg in ["lava", "lava.magma", "lava.magma.core", "lava.magma.core.model",
                "lava.magma.core.model.py", "lava.magma.core.sync",
                "lava.magma.core.sync.protocols", "lava.proc", "lava.proc.lif",
                "lava.proc.dense", "lava.utils"]:
        m = _stub(pkg)
        m.__path__ = [os.path.join(src, *pkg.split("."))]
    _stub("lava.magma.core.decorator", implements=decorator, requires=decorator, tag=decorator)
    _stub("lava.magma.core.model.py.type", LavaPyType=LavaPyType)
    _stub("lava.magma.core.model.py.ports", PyInPort=Port, PyOutPort=Port)
    _stub("lava.magma.core.model.py.model", PyLoihiProcessModel=PyLoihiProcessModel)
    _stub("lava.magma.core.resources", CPU=_placeholder("CPU"))
    _stub("lava.magma.core.sync.protocols.loihi_protocol", LoihiProtocol=_placeholder("LoihiProtocol"))
    _stub("lava.magma.core.model.py.neuron",
          LearningNeuronModelFloat=_placeholder("LearningNeuronModelFloat"),
          LearningNeuronModelFixed=_placeholder("LearningNeuronModelFixed"))
    _stub("lava.magma.core.model.py.connection",
          LearningConnectionModelFloat=_placeholder("LearningConnectionModelFloat"),
          LearningConnectionModelBitApproximate=_placeholder("LearningConnectionModelBitApproximate"))
    _stub("lava.proc.lif.process", **{n: _placeholder(n) for n in
                                      ["LIF", "LIFReset", "TernaryLIF", "LearningLIF", "LIFRefractory"]})
    _stub("lava.proc.dense.process", **{n: _placeholder(n) for n in
                                        ["Dense", "LearningDense", "DelayDense"]})

    def real(name, rel):
        path = os.path.join(src, rel)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    wu = real("lava.utils.weightutils", "lava/utils/weightutils.py")
    lif = real("lava.proc.lif.models", "lava/proc/lif/models.py")
    dense = real("lava.proc.dense.models", "lava/proc/dense/models.py")
    return lif, dense, wu


class InPort:
    def __init__(self):
        self.queue = []

    def recv(self):
        return self.queue.pop(0)


class OutPort:
    def __init__(self):
        self.sent = []

    def send(self, x):
        self.sent.append(np.array(x, copy=True))


def make_lif(lif, n, du, dv, vth, bias_mant, bias_exp, u0, v0):
    m = lif.PyLifModelBitAcc({})
    m.u = np.array(u0, dtype=np.int32)
    m.v = np.array(v0, dtype=np.int32)
    m.du, m.dv, m.vth = int(du), int(dv), int(vth)
    m.bias_mant = np.array(bias_mant, dtype=np.int16)
    m.bias_exp = np.array(bias_exp, dtype=np.int16)
    m.a_in, m.s_out = InPort(), OutPort()
    return m


def make_dense(dense, weights, sign_mode, nbits, exp, graded):
    params = {"weight_exp": int(exp), "num_weight_bits": int(nbits)}
    if sign_mode is not None:
        params["sign_mode"] = sign_mode
    m = dense.PyDenseModelBitAcc(params)
    m.weights = np.array(weights, dtype=np.int32)
    m.a_buff = np.zeros(m.weights.shape[0], dtype=np.int32)
    m.num_message_bits = np.array(8 if graded else 0)
    m.s_in, m.a_out = InPort(), OutPort()
    return m


def ints(a):
    return [int(x) for x in np.asarray(a).ravel()]


def lif_cases(lif, rng):
    out = []
    for p in range(LIF_PROCS):
        regime = p % 5
        n = LIF_N
        du, dv = int(rng.integers(0, 4096)), int(rng.integers(0, 4096))
        vth = int(rng.choice([rng.integers(0, 2000), rng.integers(0, 131072), 131071]))
        mant = rng.integers(-4096, 4096, n)
        bexp = rng.integers(-3, 8, n)
        lim = 1 << 23
        if regime == 0:  # anywhere
            u0, v0 = rng.integers(-lim + 1, lim + 1, n), rng.integers(-lim + 1, lim, n)
            a = rng.integers(-(1 << 18), (1 << 18) + 1, (LIF_STEPS, n))
        elif regime == 1:  # at the edges of 24 bits
            u0 = rng.choice([-1, 1], n) * (lim - rng.integers(0, 3000, n))
            v0 = rng.choice([-1, 1], n) * (lim - 1 - rng.integers(0, 3000, n))
            du, dv = int(rng.choice([0, 1, du])), int(rng.choice([0, 1, dv]))
            a = rng.integers(-(1 << 12), (1 << 12) + 1, (LIF_STEPS, n))
            a[rng.random((LIF_STEPS, n)) < 0.2] = rng.choice([-(1 << 17), 1 << 17])
        elif regime == 2:  # inputs past the 24-bit wrap, u forgotten each step
            du = 4095
            u0, v0 = rng.integers(-lim + 1, lim + 1, n), rng.integers(-lim + 1, lim, n)
            a = rng.integers(-(1 << 22), (1 << 22) + 1, (LIF_STEPS, n))
        elif regime == 3:  # exactly at the wrap and the clip
            du, dv = 4095, int(rng.choice([0, 4095, dv]))
            vth = int(rng.choice([131071, 131072 - 2, vth]))
            u0, v0 = np.zeros(n, dtype=np.int64), rng.integers(-lim + 1, lim, n)
            edge = np.array([1 << 17, (1 << 17) - 1, (1 << 17) + 1, 1 << 18, (1 << 18) - 1])
            a = rng.choice([-1, 1], (LIF_STEPS, n)) * rng.choice(edge, (LIF_STEPS, n))
            mant, bexp = rng.choice([0, 1, -1, 4095, -4096], n), rng.integers(0, 8, n)
        else:  # small states that cross the threshold
            vth = int(rng.integers(0, 400))
            u0, v0 = rng.integers(-5000, 5000, n), rng.integers(-5000, 30000, n)
            a = rng.integers(-100, 400, (LIF_STEPS, n))
            mant = rng.integers(-200, 200, n)
            bexp = rng.integers(0, 4, n)
        m = make_lif(lif, n, du, dv, vth, mant, bexp, u0, v0)
        us, vs, ss = [], [], []
        for t in range(LIF_STEPS):
            m.a_in.queue.append(np.array(a[t], dtype=np.int32))
            m.run_spk()
            us.append(ints(m.u))
            vs.append(ints(m.v))
            ss.append([int(bool(x)) for x in m.s_out.sent[-1]])
        out.append({"du": du, "dv": dv, "vth": vth, "bias_mant": ints(mant), "bias_exp": ints(bexp),
                    "u0": ints(u0), "v0": ints(v0), "a": [ints(x) for x in a],
                    "u": us, "v": vs, "s": ss})
    return out


def dense_cases(dense, wu, rng):
    modes = [None, wu.SignMode.MIXED, wu.SignMode.EXCITATORY, wu.SignMode.INHIBITORY, wu.SignMode.NULL]
    out = []
    for c in range(DENSE_CASES):
        rows, cols = 3, 5
        span = int(rng.choice([400, 256, 128, 40]))
        kind = c % 3
        lo, hi = (-span, span) if kind == 0 else ((0, span) if kind == 1 else (-span, 0))
        w = rng.integers(lo, hi + 1, (rows, cols))
        mode = modes[int(rng.integers(0, len(modes)))]
        nbits = int(rng.integers(1, 9))
        exp = int(rng.integers(-8, 8))
        graded = bool(rng.integers(0, 2))
        m = make_dense(dense, w, mode, nbits, exp, graded)
        xs, outs = [], []
        for _ in range(DENSE_STEPS):
            if graded:
                x = rng.integers(-255, 256, cols).astype(np.int32)
            else:
                x = (rng.random(cols) < 0.6).astype(np.int32)
            m.s_in.queue.append(x)
            m.run_spk()
            xs.append(ints(x))
            outs.append(ints(m.a_buff))
        # The sign mode run_spk used, as weightutils names it.
        used = mode if mode is not None else wu.determine_sign_mode(w)
        out.append({"weights": [ints(r) for r in w], "sign_mode": None if mode is None else mode.name.lower(),
                    "used_sign_mode": used.name.lower(), "num_weight_bits": nbits, "weight_exp": exp,
                    "graded": graded, "s_in": xs, "quantised": [ints(r) for r in m.weights], "a_buff": outs})
    return out


def network_cases(lif, dense, rng):
    out = []
    for _ in range(NET_CASES):
        w = rng.integers(-300, 301, (NET_N, NET_IN))
        exp = int(rng.integers(-4, 5))
        du, dv = int(rng.integers(0, 4096)), int(rng.integers(0, 4096))
        vth = int(rng.integers(1, 2000))
        mant = rng.integers(-300, 300, NET_N)
        bexp = rng.integers(0, 4, NET_N)
        d = make_dense(dense, w, None, 8, exp, True)
        n = make_lif(lif, NET_N, du, dv, vth, mant, bexp, np.zeros(NET_N), np.zeros(NET_N))
        xs, us, vs, ss = [], [], [], []
        for _ in range(NET_STEPS):
            x = rng.integers(-128, 128, NET_IN).astype(np.int32)
            d.s_in.queue.append(x)
            d.run_spk()  # sends the sum of the previous step's spikes
            n.a_in.queue.append(d.a_out.sent[-1].astype(np.int32))
            n.run_spk()
            xs.append(ints(x))
            us.append(ints(n.u))
            vs.append(ints(n.v))
            ss.append([int(bool(s)) for s in n.s_out.sent[-1]])
        out.append({"weights": [ints(r) for r in w], "quantised": [ints(r) for r in d.weights],
                    "weight_exp": exp, "du": du, "dv": dv, "vth": vth,
                    "bias_mant": ints(mant), "bias_exp": ints(bexp),
                    "s_in": xs, "u": us, "v": vs, "s": ss})
    return out


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    lif, dense, wu = load_lava(sys.argv[1])
    outdir = sys.argv[2] if len(sys.argv) == 3 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(SEED)
    write(os.path.join(outdir, "lif.json"), lif_cases(lif, rng))
    write(os.path.join(outdir, "dense.json"), dense_cases(dense, wu, rng))
    write(os.path.join(outdir, "network.json"), network_cases(lif, dense, rng))


if __name__ == "__main__":
    main()
