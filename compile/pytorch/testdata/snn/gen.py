#!/usr/bin/env python3
"""Writes the spiking-network fixtures of the "pytorch" importer's tests.

Each network is built with the real library (snnTorch or Norse), saved as a
state_dict (torch.save(model.state_dict())), and run for 100 steps on a fixed
input sequence; the spikes and membranes the library returns at every step
are written next to it as JSON. Nothing here is computed by our own code.

Needs Debian's python3-torch (1.13), numpy, and the snnTorch and Norse
snapshots pinned in snn/testdata/reference/README.md:

    PYTHONPATH=/tmp/neuro-ref/snntorch:/tmp/neuro-ref/norse:/tmp/neuro-ref/nir:/tmp/neuro-ref/nirtorch \
        /usr/bin/python3 compile/pytorch/testdata/snn/gen.py

Also writes digits_mlp_script.pt: the digits MLP of compile/testdata/digits
compiled with torch.jit.script, for the TorchScript path.

JSON layout (one file per network, <name>.json):
  name, library, library_commit, torch_version, steps, input [T][in]
  layers: {prefix: {kind, spikes [T][n], mem [T][n], syn [T][n] (Synaptic),
                    recorded: what mem is}}
Values are float32 widened exactly to float64.
"""

import json
import os
import subprocess

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
T = 100
N_IN = 8


def commit(mod):
    d = os.path.dirname(os.path.dirname(os.path.abspath(mod.__file__)))
    p = os.path.join(d, "COMMIT")
    if os.path.exists(p):
        return open(p).read().strip()
    try:
        return subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"


def inputs(seed, hi):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.uniform(0, hi, size=(T, 1, N_IN)), dtype=torch.float32)


def f64(t):
    return [[float(v) for v in row] for row in t.reshape(t.shape[0], -1).tolist()]


def write(name, model, library, lib_commit, x, layers, extra=None):
    torch.save(model.state_dict(), os.path.join(HERE, name + ".pt"))
    out = {
        "name": name,
        "library": library,
        "library_commit": lib_commit,
        "torch_version": torch.__version__,
        "steps": T,
        "input": f64(x[:, 0, :]),
        "state_dict_keys": list(model.state_dict().keys()),
        "layers": layers,
    }
    if extra:
        out.update(extra)
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


class Trace:
    """Collects what one layer returned at each step."""

    def __init__(self, kind, recorded):
        self.kind, self.recorded = kind, recorded
        self.spikes, self.mem, self.syn = [], [], []

    def json(self):
        d = {"kind": self.kind, "recorded": self.recorded,
             "spikes": [[float(v) for v in s] for s in self.spikes],
             "mem": [[float(v) for v in s] for s in self.mem]}
        if self.syn:
            d["syn"] = [[float(v) for v in s] for s in self.syn]
        return d


def run_snntorch(model, x):
    """Steps an nn.Sequential of Linear and snnTorch neurons, which keep their
    state in the module (snnTorch >= 0.7 holds mem even without init_hidden)."""
    import snntorch as snn
    traces = {}
    for i, m in enumerate(model):
        if isinstance(m, (snn.Synaptic, snn.RSynaptic)):
            traces[str(i)] = Trace(type(m).__name__, "returned mem (pre-reset with reset_delay=True), returned syn")
        elif isinstance(m, snn.SpikingNeuron):
            traces[str(i)] = Trace(type(m).__name__, "returned mem (pre-reset with reset_delay=True)")
    with torch.no_grad():
        for t in range(T):
            h = x[t]
            for i, m in enumerate(model):
                if str(i) in traces:
                    out = m(h)
                    tr = traces[str(i)]
                    tr.spikes.append(out[0][0].tolist())
                    tr.mem.append(out[-1][0].tolist())
                    if len(out) == 3:
                        tr.syn.append(out[1][0].tolist())
                    h = out[0]
                else:
                    h = m(h)
    return {k: v.json() for k, v in traces.items()}


def snntorch_nets():
    import snntorch as snn
    c = commit(snn)

    torch.manual_seed(1)
    leaky = nn.Sequential(
        nn.Linear(N_IN, 12),
        snn.Leaky(beta=0.9, graded_spikes_factor=1.5),
        nn.Linear(12, 4),
        snn.Leaky(beta=torch.tensor([0.6, 0.75, 0.85, 0.95]), threshold=0.7, reset_mechanism="zero"),
    )
    with torch.no_grad():
        leaky[2].weight.mul_(2.5)
    x = inputs(11, 0.6)
    write("snntorch_leaky", leaky, "snntorch", c, x, run_snntorch(leaky, x))

    torch.manual_seed(2)
    syn = nn.Sequential(
        nn.Linear(N_IN, 12),
        snn.Synaptic(alpha=0.8, beta=0.9),
        nn.Linear(12, 4, bias=False),
        snn.Synaptic(alpha=0.7, beta=0.85, threshold=1.2),
    )
    with torch.no_grad():
        syn[2].weight.mul_(2.0)
    x = inputs(12, 0.15)
    write("snntorch_synaptic", syn, "snntorch", c, x, run_snntorch(syn, x))

    torch.manual_seed(3)
    rleaky = nn.Sequential(
        nn.Linear(N_IN, 12),
        snn.RLeaky(beta=0.9, linear_features=12),
        nn.Linear(12, 4),
        snn.Leaky(beta=0.8),
    )
    with torch.no_grad():
        rleaky[2].weight.mul_(4.0)
    x = inputs(13, 1.0)
    write("snntorch_rleaky", rleaky, "snntorch", c, x, run_snntorch(rleaky, x))

    # One-to-one recurrence (all_to_all=False): a per-neuron weight V.
    torch.manual_seed(4)
    rsyn = nn.Sequential(
        nn.Linear(N_IN, 6),
        snn.RSynaptic(alpha=0.75, beta=0.85, all_to_all=False,
                      V=torch.tensor([-0.5, -0.2, 0.0, 0.1, 0.3, -1.0])),
    )
    x = inputs(14, 0.12)
    write("snntorch_rsynaptic_v", rsyn, "snntorch", c, x, run_snntorch(rsyn, x))


def norse_nets():
    import norse.torch as norse
    from norse.torch.functional.lif import LIFParameters
    from norse.torch.functional.leaky_integrator import LIParameters
    import norse as norse_pkg
    c = commit(norse_pkg)
    dt = 1e-3

    p1 = LIFParameters(tau_syn_inv=torch.tensor(200.0), tau_mem_inv=torch.tensor(100.0),
                       v_leak=torch.tensor(0.0), v_th=torch.tensor(1.0), v_reset=torch.tensor(0.0),
                       method="heaviside")
    p2 = LIFParameters(tau_syn_inv=torch.tensor(150.0), tau_mem_inv=torch.tensor(80.0),
                       v_leak=torch.tensor(0.1), v_th=torch.tensor(0.6), v_reset=torch.tensor(-0.1),
                       method="heaviside")
    pli = LIParameters(tau_syn_inv=torch.tensor(250.0), tau_mem_inv=torch.tensor(120.0),
                       v_leak=torch.tensor(0.05))
    torch.manual_seed(5)
    ff = nn.Sequential(
        nn.Linear(N_IN, 12), norse.LIFCell(p1, dt=dt),
        nn.Linear(12, 4), norse.LIFCell(p2, dt=dt),
        nn.Linear(4, 3), norse.LICell(pli, dt=dt),
    )
    with torch.no_grad():
        ff[0].weight.mul_(4.0)
        ff[2].weight.mul_(6.0)
        ff[4].weight.mul_(4.0)
    x = inputs(21, 1.0)
    tr = {"1": Trace("LIFCell", "state.v after the step (post-reset)"),
          "3": Trace("LIFCell", "state.v after the step (post-reset)"),
          "5": Trace("LICell", "returned v (no spikes); syn is state.i after the step")}
    states = {}
    with torch.no_grad():
        for t in range(T):
            h = x[t]
            for i, m in enumerate(ff):
                k = str(i)
                if k in tr:
                    h, s = m(h, states.get(k))
                    states[k] = s
                    if k == "5":
                        tr[k].spikes.append([0.0] * h.shape[-1])
                        tr[k].mem.append(h[0].tolist())
                        tr[k].syn.append(s.i[0].tolist())
                    else:
                        tr[k].spikes.append(h[0].tolist())
                        tr[k].mem.append(s.v[0].tolist())
                        tr[k].syn.append(s.i[0].tolist())
                else:
                    h = m(h)
    params = {"1": p_json(p1), "3": p_json(p2), "5": {"tau_syn_inv": 250.0, "tau_mem_inv": 120.0, "v_leak": 0.05}}
    write("norse_lif", ff, "norse", c, x, {k: v.json() for k, v in tr.items()},
          {"params": params, "dt": dt})

    torch.manual_seed(6)
    rec = nn.Sequential(
        norse.LIFRecurrentCell(N_IN, 10, p=p1, dt=dt),
        nn.Linear(10, 4), norse.LIFCell(p2, dt=dt),
    )
    with torch.no_grad():
        rec[0].input_weights.mul_(5.0)
        rec[0].recurrent_weights.mul_(2.0)
        rec[1].weight.mul_(15.0)
    x = inputs(22, 1.0)
    tr = {"0": Trace("LIFRecurrentCell", "state.v after the step (post-reset)"),
          "2": Trace("LIFCell", "state.v after the step (post-reset)")}
    states = {}
    with torch.no_grad():
        for t in range(T):
            h = x[t]
            for i, m in enumerate(rec):
                k = str(i)
                if k in tr:
                    h, s = m(h, states.get(k))
                    states[k] = s
                    tr[k].spikes.append(h[0].tolist())
                    tr[k].mem.append(s.v[0].tolist())
                    tr[k].syn.append(s.i[0].tolist())
                else:
                    h = m(h)
    write("norse_lifrecurrent", rec, "norse", c, x, {k: v.json() for k, v in tr.items()},
          {"params": {"0": p_json(p1), "2": p_json(p2)}, "dt": dt})


def p_json(p):
    return {"tau_syn_inv": float(p.tau_syn_inv), "tau_mem_inv": float(p.tau_mem_inv),
            "v_leak": float(p.v_leak), "v_th": float(p.v_th), "v_reset": float(p.v_reset)}


def digits_script():
    path = os.path.join(ROOT, "compile", "testdata", "digits", "mlp_module.pt")
    model = torch.load(path)
    model.eval()
    torch.jit.save(torch.jit.script(model), os.path.join(HERE, "digits_mlp_script.pt"))


def main():
    torch.set_num_threads(1)
    snntorch_nets()
    norse_nets()
    digits_script()


if __name__ == "__main__":
    main()
