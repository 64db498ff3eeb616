#!/usr/bin/python3
"""Writes the reference fixtures of package compile/pytorch.

Run from this directory with Debian's PyTorch 1.13 and snnTorch on the path:

    PYTHONPATH=/path/to/snntorch /usr/bin/python3 gen_fixtures.py

Each NAME.pt gets a NAME.json beside it holding what the Go reader must find:
the file kind, the tensors in order (name, dtype, shape, strides, offset and the
full data, small enough to keep), the module tree where there is one, and for the
hostile files the class that must be refused.
"""

import builtins
import datetime
import json
import os
import zipfile

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.int8: "int8", torch.uint8: "uint8",
    torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.bool: "bool",
}


def tensor_json(name, t):
    return {
        "name": name,
        "dtype": DTYPES[t.dtype],
        "shape": list(t.shape),
        "strides": list(t.stride()),
        "offset": t.storage_offset(),
        # The values as float32 sees them, flattened in row-major order.
        "data": [float(v) for v in t.detach().to(torch.float32).reshape(-1).tolist()],
    }


def plain(v):
    """Hyperparameters as JSON values, the way the Go reader reports them."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (tuple, list)):
        return [plain(x) for x in v]
    raise TypeError(type(v))


def module_json(model):
    out = []
    for path, m in model.named_modules():
        hyper = {}
        for k, v in vars(m).items():
            if k.startswith("_") or k == "training":
                continue
            try:
                hyper[k] = plain(v)
            except TypeError:
                continue
        out.append({
            "path": path,
            "class": type(m).__module__ + "." + type(m).__qualname__,
            "hyper": hyper,
            "params": [n for n, _ in m.named_parameters(recurse=False)],
            "buffers": [n for n, _ in m.named_buffers(recurse=False)],
        })
    return out


def entries(path):
    with zipfile.ZipFile(path) as z:
        return z.namelist()


def write(name, expect):
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")


def save(name, obj, expect):
    path = os.path.join(HERE, name + ".pt")
    torch.save(obj, path)
    expect["entries"] = entries(path)
    write(name, expect)


def state_dict_fixture(name, model):
    sd = model.state_dict()
    save(name, sd, {
        "kind": "state_dict",
        "tensors": [tensor_json(k, v) for k, v in sd.items()],
    })


def main():
    torch.manual_seed(0)

    # 1. state_dict of an MLP.
    mlp = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    state_dict_fixture("mlp_state_dict", mlp)

    # 2. full-module pickle of a small CNN.
    cnn = nn.Sequential(
        nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(8, 3))
    with torch.no_grad():
        cnn[1].running_mean.copy_(torch.tensor([0.5, -0.25]))
        cnn[1].running_var.copy_(torch.tensor([2.0, 0.5]))
        cnn[1].num_batches_tracked.fill_(7)
    cnn.eval()
    save("cnn_module", cnn, {
        "kind": "module",
        "tensors": [tensor_json(k, v) for k, v in cnn.state_dict().items()],
        "modules": module_json(cnn),
    })

    # 3. TorchScript of an MLP.
    smlp = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    scripted = torch.jit.script(smlp)
    path = os.path.join(HERE, "mlp_script.pt")
    torch.jit.save(scripted, path)
    names = entries(path)
    write("mlp_script", {
        "kind": "torchscript",
        "entries": names,
        "tensors": [tensor_json(k, v) for k, v in smlp.state_dict().items()],
        "modules": [{"path": p, "class": c} for p, c in [
            ("", "__torch__.torch.nn.modules.container.Sequential"),
            ("0", "__torch__.torch.nn.modules.linear.Linear"),
            ("1", "__torch__.torch.nn.modules.activation.ReLU"),
            ("2", "__torch__.torch.nn.modules.linear.___torch_mangle_0.Linear"),
        ]],
        "code_files": sorted(n.split("/", 1)[1] for n in names if "/code/" in n),
    })

    # 4. snnTorch state_dicts.
    try:
        import snntorch as snn
    except ImportError:
        snn = None
    if snn is not None:
        leaky = nn.Sequential(
            nn.Linear(4, 3), snn.Leaky(beta=0.9, init_hidden=True),
            nn.Linear(3, 2), snn.Leaky(beta=0.8, threshold=0.5, init_hidden=True,
                                       reset_mechanism="zero", output=True))
        state_dict_fixture("snntorch_leaky", leaky)
        syn = nn.Sequential(
            nn.Linear(4, 3), snn.Synaptic(alpha=0.7, beta=0.9, init_hidden=True),
            nn.Linear(3, 2), snn.Synaptic(alpha=0.6, beta=0.85, learn_beta=True,
                                          init_hidden=True, output=True))
        state_dict_fixture("snntorch_synaptic", syn)

    # 5. dtypes, views and shared storage.
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4 - 1
    dt = {
        "f64": torch.tensor([[1.5, -2.25], [1e-300, 3.0]], dtype=torch.float64),
        "f16": torch.tensor([0.5, -1.0, 65504.0, 6e-8], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -3.5, 1e30], dtype=torch.bfloat16),
        "i8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 200, 255], dtype=torch.uint8),
        "i16": torch.tensor([-30000, 5], dtype=torch.int16),
        "i32": torch.tensor([-7, 1 << 20], dtype=torch.int32),
        "i64": torch.tensor([-9, 1 << 40], dtype=torch.int64),
        "b": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
    }
    # A dict from names to tensors is a state_dict as far as the reader cares.
    save("dtypes", dt, {
        "kind": "state_dict",
        "tensors": [tensor_json(k, v) for k, v in dt.items()],
    })
    views = {
        "base": base,
        "transposed": base.t(),
        "sliced": base[1:, ::2],
        "row": base[2],
    }
    save("views", views, {
        "kind": "state_dict",
        "tensors": [tensor_json(k, v) for k, v in views.items()],
        "shared": ["base", "transposed", "sliced", "row"],
    })

    # 6. hostile pickles: torch.save writes them, the Go reader must refuse them.
    class Shell:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    class Eval:
        def __reduce__(self):
            return (builtins.eval, ("1+1",))

    save("evil_os_system", {"w": torch.zeros(2), "x": Shell()},
         {"kind": "error", "forbidden": [os.system.__module__, "system"]})
    # Protocol 2 spells builtins the Python 2 way (pickle's fix_imports).
    save("evil_eval", {"x": Eval()},
         {"kind": "error", "forbidden": ["__builtin__", "eval"]})
    save("evil_offlist", {"when": datetime.date(2020, 1, 2)},
         {"kind": "error", "forbidden": ["datetime", "date"]})


if __name__ == "__main__":
    main()
