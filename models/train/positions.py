"""Loss by position in the held-out window, for runs side by side.

    /usr/bin/python3 models/train/positions.py --runs lite-gru-2x-lr10-wd5m,lite-lima-kd2xlr10wd5-lif-k32sh32-lr10-wd5

Every model reads 128-token windows of the held-out split from rest, as
train.py's evaluation does (up to --windows a source, spread evenly over
it). The table gives each run's mean cross-entropy (nats per token) at the
positions of each band, and each run after the first against the first:
where in the window a model gains or loses context.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import arch  # noqa: E402

BANDS = [(0, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32), (32, 64), (64, 128)]


def load(run):
    rdir = os.path.join(HERE, "runs", run)
    with open(os.path.join(rdir, "results.json")) as f:
        res = json.load(f)
    m = arch.build_run(res)
    m.load_state_dict(torch.load(os.path.join(rdir, "model.pt")))
    return m.eval(), res["tokenizer"]


def windows(tok, T, per_source):
    d = os.path.join(HERE, "data", tok)
    with open(os.path.join(d, "index.json")) as f:
        index = json.load(f)
    wins = []
    for s in index["sources"].values():
        a = np.fromfile(os.path.join(d, s["val"]["file"]), dtype="<u2").astype(np.int64)
        total = (len(a) - 1) // T
        for w in np.linspace(0, total - 1, min(total, per_source)).astype(int):
            wins.append(a[w * T : w * T + T + 1])
    return torch.from_numpy(np.stack(wins))


@torch.no_grad()
def by_position(m, x, T):
    ces = []
    for i in range(0, len(x), 64):
        logits, _ = m(x[i : i + 64, :-1])
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[i : i + 64, 1:].reshape(-1), reduction="none")
        ces.append(ce.reshape(-1, T))
    return torch.cat(ces).mean(0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", required=True, help="comma-separated runs; the first is the reference")
    p.add_argument("--windows", type=int, default=60, help="windows of 128 tokens a source")
    args = p.parse_args()
    torch.set_num_threads(1)
    T = 128
    runs = args.runs.split(",")
    loaded = [load(r) for r in runs]
    if len({tok for _, tok in loaded}) != 1:
        sys.exit("positions.py: the runs use different tokenizers")
    x = windows(loaded[0][1], T, args.windows)
    ce = [by_position(m, x, T) for m, _ in loaded]
    print(f"{len(x)} windows of {T} tokens; nats per token by position, and against {runs[0]}")
    print("| positions | " + " | ".join(runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for lo, hi in BANDS + [(0, T)]:
        ref = ce[0][lo:hi].mean().item()
        cells = [f"{ref:.3f}"] + [f"{c[lo:hi].mean().item():.3f} ({100 * (c[lo:hi].mean().item() / ref - 1):+.1f}%)" for c in ce[1:]]
        label = "all" if (lo, hi) == (0, T) else (f"{lo}" if hi == lo + 1 else f"{lo}-{hi - 1}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
