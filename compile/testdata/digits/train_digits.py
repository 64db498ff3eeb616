#!/usr/bin/python3
"""Trains the two digits models shared by compile/pytorch and compile/onnx tests.

    /usr/bin/python3 compile/testdata/digits/train_digits.py

Needs Debian's python3-torch (1.13), python3-onnx and python3-sklearn; no network
(sklearn ships the 8x8 digits data set). Runs in well under a minute on one CPU
core and is deterministic for a given torch build (fixed seeds, one thread).

Writes next to itself:
  mlp_state_dict.pt, mlp_module.pt, mlp.onnx   nn.Sequential 64-128-64-10, ReLU
  cnn_state_dict.pt, cnn_module.pt, cnn.onnx   nn.Sequential Conv(1->16,3,p1)-ReLU-
                                               AvgPool2-Conv(16->32,3,p1)-ReLU-
                                               AvgPool2-Flatten-Linear(128->10)
  digits_test.json   the test split and a 200-sample calibration subset of the
                     training split (inputs flat 64-float vectors scaled to [0,1])
  results.json       ANN test accuracy of each model, predictions, and reference
                     logits for the first test samples
"""

import io
import json
import os
import re

import numpy as np
import onnx
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0
EPOCHS = 60
BATCH = 32
NCALIB = 200
NREF = 16  # test samples whose logits are stored in results.json


def mlp():
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(),
        nn.Linear(128, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10),
    )


def train(model, xtr, ytr, shape):
    torch.manual_seed(SEED)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    lossf = nn.CrossEntropyLoss()
    n = xtr.shape[0]
    g = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(EPOCHS):
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = lossf(model(xtr[idx].reshape(shape)), ytr[idx])
            loss.backward()
            opt.step()
    model.eval()
    return model


def accuracy(model, x, y, shape):
    with torch.no_grad():
        logits = model(x.reshape(shape))
    pred = logits.argmax(1)
    return int((pred == y).sum()) / len(y), pred.tolist(), logits


def export(model, shape, path):
    f = io.BytesIO()
    torch.onnx.export(model, torch.zeros(shape), f, input_names=["input"], output_names=["logits"],
                      opset_version=13, dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    m = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(m)
    with open(path, "wb") as out:
        out.write(f.getvalue())


def main():
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=SEED)
    rng = np.random.default_rng(SEED)
    calib = np.sort(rng.choice(len(xtr), NCALIB, replace=False))

    txr, tyr = torch.from_numpy(xtr), torch.from_numpy(ytr)
    txe, tye = torch.from_numpy(xte), torch.from_numpy(yte)

    results = {"seed": SEED, "epochs": EPOCHS, "torch": torch.__version__,
               "n_train": len(xtr), "n_test": len(xte), "models": {}}
    for name, build, shape in (("mlp", mlp, (-1, 64)), ("cnn", cnn, (-1, 1, 8, 8))):
        torch.manual_seed(SEED)
        model = train(build(), txr, tyr, shape)
        acc, pred, logits = accuracy(model, txe, tye, shape)
        torch.save(model.state_dict(), os.path.join(HERE, f"{name}_state_dict.pt"))
        torch.save(model, os.path.join(HERE, f"{name}_module.pt"))
        export(model, (1,) + tuple(shape[1:]), os.path.join(HERE, f"{name}.onnx"))
        results["models"][name] = {
            "architecture": str(model),
            "input_shape": list(shape),
            "test_accuracy": acc,
            "test_predictions": pred,
            "reference_logits": [[round(float(v), 6) for v in row] for row in logits[:NREF]],
        }
        print(f"{name}: test accuracy {acc:.4f}")

    def rows(a):
        return [[float(v) for v in r] for r in a]

    with open(os.path.join(HERE, "digits_test.json"), "w") as f:
        json.dump({
            "split": "sklearn load_digits, pixel/16, train_test_split(test_size=0.25, random_state=0)",
            "test": {"inputs": rows(xte), "labels": yte.tolist()},
            "calibration": {"indices_in_train": calib.tolist(), "inputs": rows(xtr[calib]),
                            "labels": ytr[calib].tolist()},
        }, f, separators=(",", ":"))
        f.write("\n")
    text = json.dumps(results, indent=1)
    # One line per list of numbers keeps the file short and diffable.
    text = re.sub(r"\[\s+([-0-9.e,\s]+?)\s+\]",
                  lambda m: "[" + ",".join(v.strip() for v in m.group(1).split(",")) + "]", text)
    with open(os.path.join(HERE, "results.json"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
