"""Write the NIR fixtures of compile/nir with the reference Python `nir` package.

Run from this directory with the `nir` package (github.com/neuromorphs/NIR) on
PYTHONPATH and Debian's python3-numpy and python3-h5py:

    PYTHONPATH=/tmp/nir /usr/bin/python3 gen_fixtures.py

Every file is written by nir.write (gzip-compressed arrays, variable-length
UTF-8 strings, as h5py makes them) and read back with nir.read, whose type
checks it must pass. expected.json records, per fixture, the node kinds and
the edges the Go reader must produce (nested graphs flattened with dotted
names), so that the Go test checks the structure against what Python wrote.
"""

import json
import os

import numpy as np
import nir

if not hasattr(nir, "version"):
    # An uninstalled checkout has no package metadata; nir.write needs it.
    nir.version = "1.0.7"

rng = np.random.default_rng(20240601)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def pos(*shape, lo=0.001, hi=0.05):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def chain(node, in_shape, out_shape=None):
    """Input -> node -> Output, the smallest graph holding one primitive."""
    out_shape = in_shape if out_shape is None else out_shape
    return nir.NIRGraph(
        nodes={
            "input": nir.Input(input_type=np.array(in_shape)),
            "node": node,
            "output": nir.Output(output_type=np.array(out_shape)),
        },
        edges=[("input", "node"), ("node", "output")],
    )


N = 5
fixtures = {}

fixtures["affine"] = chain(nir.Affine(weight=f32(3, N), bias=f32(3)), [N], [3])
fixtures["linear"] = chain(nir.Linear(weight=f32(3, N)), [N], [3])
fixtures["scale"] = chain(nir.Scale(scale=f32(N)), [N])
fixtures["conv1d"] = chain(
    nir.Conv1d(input_shape=10, weight=f32(4, 2, 3), stride=2, padding=1,
               dilation=1, groups=1, bias=f32(4)),
    [2, 10], [4, 5])
fixtures["conv1d_same"] = chain(
    nir.Conv1d(input_shape=9, weight=f32(2, 2, 3), stride=1, padding="same",
               dilation=2, groups=1, bias=f32(2)),
    [2, 9], [2, 9])
fixtures["conv2d"] = chain(
    nir.Conv2d(input_shape=(6, 7), weight=f32(4, 2, 3, 2), stride=(1, 2),
               padding=(1, 0), dilation=(2, 1), groups=1, bias=f32(4)),
    [2, 6, 7], [4, 4, 3])
fixtures["flatten"] = chain(
    nir.Flatten(input_type={"input": np.array([2, 3, 4])}, start_dim=1, end_dim=-1),
    [2, 3, 4], [2, 12])
# Pooling carries no shape in NIR; the Output gives it (type_check is off
# because nir cannot infer pooling shapes either).
fixtures["sumpool2d"] = nir.NIRGraph(
    nodes={
        "input": nir.Input(input_type=np.array([2, 4, 6])),
        "node": nir.SumPool2d(kernel_size=np.array([2, 2]), stride=np.array([2, 2]),
                              padding=np.array([0, 0])),
        "output": nir.Output(output_type=np.array([2, 2, 3])),
    },
    edges=[("input", "node"), ("node", "output")], type_check=False)
fixtures["avgpool2d"] = nir.NIRGraph(
    nodes={
        "input": nir.Input(input_type=np.array([1, 5, 5])),
        "node": nir.AvgPool2d(kernel_size=np.array([3, 3]), stride=np.array([2, 2]),
                              padding=np.array([1, 1])),
        "output": nir.Output(output_type=np.array([1, 3, 3])),
    },
    edges=[("input", "node"), ("node", "output")], type_check=False)
fixtures["delay"] = chain(nir.Delay(delay=pos(N, lo=0.0, hi=0.01)), [N])
fixtures["threshold"] = chain(nir.Threshold(threshold=f32(N)), [N])
fixtures["i"] = chain(nir.I(r=pos(N, lo=0.5, hi=2)), [N])
fixtures["if"] = chain(nir.IF(r=pos(N, lo=0.5, hi=2), v_threshold=pos(N, lo=0.5, hi=1.5),
                              v_reset=f32(N) * 0.1), [N])
fixtures["li"] = chain(nir.LI(tau=pos(N), r=pos(N, lo=0.5, hi=2), v_leak=f32(N) * 0.1), [N])
fixtures["lif"] = chain(
    nir.LIF(tau=pos(N), r=pos(N, lo=0.5, hi=2), v_leak=f32(N) * 0.1,
            v_threshold=pos(N, lo=0.5, hi=1.5), v_reset=f32(N) * 0.1,
            metadata={"source": "gen_fixtures.py"}),
    [N])
fixtures["cubali"] = chain(
    nir.CubaLI(tau_syn=pos(N), tau_mem=pos(N), r=pos(N, lo=0.5, hi=2),
               v_leak=f32(N) * 0.1, w_in=pos(N, lo=0.5, hi=2)), [N])
fixtures["cubalif"] = chain(
    nir.CubaLIF(tau_syn=pos(N), tau_mem=pos(N), r=pos(N, lo=0.5, hi=2),
                v_leak=f32(N) * 0.1, v_threshold=pos(N, lo=0.5, hi=1.5),
                v_reset=f32(N) * 0.1, w_in=pos(N, lo=0.5, hi=2)), [N])

# A recurrent layer nested as a NIRGraph, exactly as snnTorch's export_to_nir
# writes snn.RLeaky (snntorch/export_nir.py, _extract_snntorch_module): dt =
# 1e-4, tau = dt/(1-beta), r = tau/dt, v_leak = 0.
dt = 1e-4
beta = np.full(4, 0.9, dtype=np.float32)
tau = dt / (1 - beta)
rec = nir.NIRGraph(
    nodes={
        "input": nir.Input(input_type=[4]),
        "lif": nir.LIF(tau=tau, r=tau / dt, v_leak=np.zeros_like(beta),
                       v_threshold=np.ones(4, dtype=np.float32),
                       v_reset=np.zeros(4, dtype=np.float32)),
        "w_rec": nir.Linear(weight=f32(4, 4) * 0.5),
        "output": nir.Output(output_type=[4]),
    },
    edges=[("input", "lif"), ("lif", "w_rec"), ("w_rec", "lif"), ("lif", "output")],
)
beta2 = np.full(2, 0.8, dtype=np.float32)
tau2 = dt / (1 - beta2)
fixtures["recurrent"] = nir.NIRGraph(
    nodes={
        "input": nir.Input(input_type=np.array([3])),
        "fc1": nir.Affine(weight=f32(4, 3), bias=f32(4)),
        "lif1": rec,
        "fc2": nir.Linear(weight=f32(2, 4)),
        "lif2": nir.LIF(tau=tau2, r=tau2 / dt, v_leak=np.zeros_like(beta2),
                        v_threshold=np.ones(2, dtype=np.float32),
                        v_reset=np.zeros(2, dtype=np.float32)),
        "output": nir.Output(output_type=np.array([2])),
    },
    edges=[("input", "fc1"), ("fc1", "lif1"), ("lif1", "fc2"), ("fc2", "lif2"),
           ("lif2", "output")],
)

# A small convolutional network: conv -> LIF (per-neuron parameters of shape
# (C, H, W)) -> sum pooling -> flatten -> affine -> CubaLIF.
C, H, W = 4, 8, 8
fixtures["convnet"] = nir.NIRGraph(
    nodes={
        "input": nir.Input(input_type=np.array([2, H, W])),
        "conv": nir.Conv2d(input_shape=(H, W), weight=f32(C, 2, 3, 3) * 0.3,
                           stride=1, padding=1, dilation=1, groups=1, bias=f32(C) * 0.1),
        "lif": nir.LIF(tau=pos(C, H, W), r=np.ones((C, H, W), np.float32),
                       v_leak=np.zeros((C, H, W), np.float32),
                       v_threshold=np.ones((C, H, W), np.float32),
                       v_reset=np.zeros((C, H, W), np.float32)),
        "pool": nir.SumPool2d(kernel_size=np.array([2, 2]), stride=np.array([2, 2]),
                              padding=np.array([0, 0])),
        "flat": nir.Flatten(input_type={"input": np.array([C, H // 2, W // 2])},
                            start_dim=0, end_dim=-1),
        "fc": nir.Affine(weight=f32(3, C * H * W // 4) * 0.2, bias=f32(3) * 0.1),
        "out_lif": nir.CubaLIF(tau_syn=pos(3), tau_mem=pos(3), r=np.ones(3, np.float32),
                               v_leak=np.zeros(3, np.float32),
                               v_threshold=np.ones(3, np.float32),
                               v_reset=np.zeros(3, np.float32),
                               w_in=np.ones(3, np.float32)),
        "output": nir.Output(output_type=np.array([3])),
    },
    edges=[("input", "conv"), ("conv", "lif"), ("lif", "pool"), ("pool", "flat"),
           ("flat", "fc"), ("fc", "out_lif"), ("out_lif", "output")],
    type_check=False,
)


def flatten_structure(g, prefix=""):
    """Node kinds and edges after flattening nested graphs the way the Go
    reader does: a subgraph's Input and Output nodes disappear and the
    edges through them are joined."""
    kinds, edges = {}, []
    ins, outs = {}, {}
    for name, n in g.nodes.items():
        q = prefix + name
        if isinstance(n, nir.NIRGraph):
            k, e, i, o = flatten_structure(n, q + ".")
            kinds.update(k)
            edges.extend(e)
            ins[name], outs[name] = i, o
        else:
            kinds[q] = type(n).__name__
            ins[name], outs[name] = [q], [q]
    sub_in = [prefix + k for k, n in g.nodes.items() if isinstance(n, nir.Input)]
    sub_out = [prefix + k for k, n in g.nodes.items() if isinstance(n, nir.Output)]
    for a, b in g.edges:
        for s in outs[a]:
            for t in ins[b]:
                edges.append((s, t))
    return kinds, edges, sub_in, sub_out


def resolve(kinds, edges, nested_io):
    """Drop the Input/Output nodes of nested graphs, joining their edges."""
    for io in nested_io:
        preds = [a for a, b in edges if b == io]
        succs = [b for a, b in edges if a == io]
        edges = [(a, b) for a, b in edges if a != io and b != io]
        edges += [(p, s) for p in preds for s in succs]
        del kinds[io]
    return kinds, sorted(set(edges))


expected = {}
for name, g in fixtures.items():
    path = name + ".nir"
    nir.write(path, g)
    back = nir.read(path, type_check=name not in ("sumpool2d", "avgpool2d", "convnet"))
    assert set(back.nodes) == set(g.nodes), name
    kinds, edges, _, _ = flatten_structure(back)
    nested = [k for k in kinds if "." in k and kinds[k] in ("Input", "Output")]
    kinds, edges = resolve(kinds, edges, nested)
    expected[name] = {"kinds": kinds, "edges": [list(e) for e in edges]}

with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
print("wrote", len(fixtures), "fixtures")

# A hostile file for the reader's tests: a group that contains a hard link
# to itself (old-style groups, as h5py writes by default).
import h5py

with h5py.File("hostile_cycle.h5", "w") as f:
    f.create_dataset("version", data="1.0.7", dtype=h5py.string_dtype())
    g = f.create_group("node")
    g.create_dataset("type", data="NIRGraph", dtype=h5py.string_dtype())
    n = g.create_group("nodes")
    n["loop"] = g
print("wrote hostile_cycle.h5")
