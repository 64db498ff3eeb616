#!/usr/bin/python3
"""Writes the ONNX fixtures of package compile/onnx and their expected outputs.

Run from anywhere with Debian's PyTorch 1.13 and python3-onnx:

    /usr/bin/python3 compile/onnx/testdata/gen_fixtures.py

Valid fixtures (exported by torch.onnx.export at opsets 9, 11, 13 and 17):

  mlp_opsetN.onnx        Linear(8,16)-ReLU-Linear(16,4), dynamic batch axis "batch".
  cnn_opsetN_fold1.onnx  Conv-BN-ReLU-AvgPool-Conv-ReLU-MaxPool-Flatten-Linear exported
                         in eval mode with do_constant_folding=True (torch fuses BN into
                         the first Conv).
  cnn_opsetN_fold0.onnx  the same network with do_constant_folding=False and
                         training=TrainingMode.PRESERVE: torch 1.13 fuses Conv+BN in its
                         eval-mode peephole pass whatever do_constant_folding says, so
                         PRESERVE (with the module in eval mode) is what keeps an
                         inference-form BatchNormalization node in the file.
  misc_opsetN_foldF.onnx Conv-ReLU-Dropout-GlobalAveragePool-Reshape-Linear on a 3-D
                         tensor (MatMul+Add). The reshape target is a Constant node as
                         torch writes it when folding is off; with folding on (fold1)
                         the script moves Constant nodes into initializers, the form
                         other exporters write (torch 1.13 keeps the Constant either
                         way). Torch drops Dropout from inference exports, so the
                         script inserts a Dropout
                         node after the ReLU in the opset's own form (ratio attribute up
                         to opset 11, ratio input from opset 12) plus an Identity node.

expected.json maps each valid fixture to a fixed input and torch's output for it.

Hostile fixtures (onnx.helper, deliberately invalid):

  bad_unsupported_op.onnx  Gemm followed by Softmax.
  bad_cycle.onnx           two Relu nodes that feed each other through an Add.
  bad_huge_dim.onnx        an initializer declaring 1e12 elements with no data behind it.
  bad_huge_input.onnx      a graph input declared [1000000, 1000000].
  bad_truncated.onnx       mlp_opset13.onnx cut in half.
  bad_opset8.onnx          an MLP stamped with opset 8.
  bad_opset18.onnx         an MLP stamped with opset 18.
  bad_dangling.onnx        an Add whose second input is produced by nothing.
"""

import io
import json
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSETS = [9, 11, 13, 17]


def export(model, x, opset, fold, training=torch.onnx.TrainingMode.EVAL, dynamic=None):
    f = io.BytesIO()
    torch.onnx.export(
        model, x, f,
        input_names=["input"], output_names=["output"],
        opset_version=opset, do_constant_folding=fold, training=training,
        dynamic_axes=dynamic,
    )
    return onnx.load_from_string(f.getvalue())


def save(m, name):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(m.SerializeToString())


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AvgPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(8 * 2 * 2, 5),
        )

    def forward(self, x):
        return self.net(x)


class Misc(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(2, 3)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        y = nn.functional.adaptive_avg_pool2d(y, 1)  # exported as GlobalAveragePool
        y = y.reshape(1, 2, 2)
        return self.fc(y)  # 3-D input: exported as MatMul + Add


def insert_dropout(m, opset):
    """Inserts Dropout then Identity after the first Relu, in the opset's form."""
    g = m.graph
    idx = next(i for i, n in enumerate(g.node) if n.op_type == "Relu")
    relu = g.node[idx]
    old = relu.output[0]
    relu.output[0] = old + "_pre_dropout"
    if opset < 12:
        drop = helper.make_node("Dropout", [relu.output[0]], [old + "_dropped"],
                                name="inserted_dropout", ratio=0.3)
    else:
        ratio = numpy_helper.from_array(np.array(0.3, dtype=np.float32), "dropout_ratio")
        g.initializer.append(ratio)
        drop = helper.make_node("Dropout", [relu.output[0], "dropout_ratio"],
                                [old + "_dropped"], name="inserted_dropout")
    ident = helper.make_node("Identity", [old + "_dropped"], [old], name="inserted_identity")
    g.node.insert(idx + 1, drop)
    g.node.insert(idx + 2, ident)
    return m


def constants_to_initializers(m):
    """Turns Constant nodes into initializers, as most other exporters write them."""
    g = m.graph
    for n in [n for n in g.node if n.op_type == "Constant"]:
        t = onnx.TensorProto()
        t.CopyFrom(n.attribute[0].t)
        t.name = n.output[0]
        g.initializer.append(t)
        g.node.remove(n)


def tensor_json(t):
    t = t.detach().numpy().astype(np.float32)
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1)]}


def main():
    torch.manual_seed(0)
    expected = {}

    mlp = MLP().eval()
    x = torch.randn(3, 8)
    for op in OPSETS:
        name = f"mlp_opset{op}.onnx"
        save(export(mlp, x[:1], op, True, dynamic={"input": {0: "batch"}, "output": {0: "batch"}}), name)
        expected[name] = {"inputs": {"input": tensor_json(x)}, "outputs": {"output": tensor_json(mlp(x))}}

    cnn = CNN()
    bn = cnn.net[1]
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(4) * 0.1)
        bn.running_var.copy_(torch.rand(4) + 0.5)
        bn.weight.copy_(torch.rand(4) + 0.5)
        bn.bias.copy_(torch.randn(4) * 0.1)
    cnn.eval()
    x = torch.randn(1, 1, 8, 8)
    for op in OPSETS:
        for fold in (1, 0):
            name = f"cnn_opset{op}_fold{fold}.onnx"
            tr = torch.onnx.TrainingMode.EVAL if fold else torch.onnx.TrainingMode.PRESERVE
            m = export(cnn, x, op, bool(fold), training=tr)
            ops = [n.op_type for n in m.graph.node]
            assert ("BatchNormalization" in ops) == (not fold), (name, ops)
            save(m, name)
            expected[name] = {"inputs": {"input": tensor_json(x)}, "outputs": {"output": tensor_json(cnn(x))}}

    misc = Misc().eval()
    x = torch.randn(1, 1, 6, 6)
    for op in OPSETS:
        for fold in (1, 0):
            name = f"misc_opset{op}_fold{fold}.onnx"
            m = insert_dropout(export(misc, x, op, bool(fold)), op)
            if fold:
                constants_to_initializers(m)
            ops = [n.op_type for n in m.graph.node]
            assert "Reshape" in ops and "GlobalAveragePool" in ops, (name, ops)
            assert ("Constant" in ops) == (not fold), (name, ops)
            onnx.checker.check_model(m)
            save(m, name)
            expected[name] = {"inputs": {"input": tensor_json(x)}, "outputs": {"output": tensor_json(misc(x))}}

    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")

    hostile()


def mlp_graph(opset, extra_nodes=(), out="y", out_shape=(1, 4)):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc", transB=1),
             helper.make_node("Relu", ["h"], ["y" if not extra_nodes else "r"], name="relu")]
    nodes += list(extra_nodes)
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, list(out_shape))],
        [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def hostile():
    save(mlp_graph(13, [helper.make_node("Softmax", ["r"], ["y"], name="probs", axis=1)]),
         "bad_unsupported_op.onnx")

    # r1 = Relu(a); a = Add(x', r2); r2 = Relu(r1): a loop with no entry.
    g = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["r1"], name="relu_a"),
         helper.make_node("Relu", ["r1"], ["r2"], name="relu_b"),
         helper.make_node("Add", ["x", "r2"], ["a"], name="add_loop"),
         helper.make_node("Identity", ["r1"], ["y"], name="out")],
        "cycle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "bad_cycle.onnx")

    m = mlp_graph(13)
    huge = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1000000, 1000000], raw_data=b"\0" * 16)
    m.graph.initializer[0].CopyFrom(huge)
    save(m, "bad_huge_dim.onnx")

    m = mlp_graph(13)
    m.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000000, 1000000]))
    save(m, "bad_huge_input.onnx")

    with open(os.path.join(HERE, "mlp_opset13.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(HERE, "bad_truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])

    save(mlp_graph(8), "bad_opset8.onnx")
    save(mlp_graph(18), "bad_opset18.onnx")

    save(mlp_graph(13, [helper.make_node("Add", ["r", "nowhere"], ["y"], name="add_dangling")]),
         "bad_dangling.onnx")


if __name__ == "__main__":
    main()
