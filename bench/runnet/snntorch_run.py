#!/usr/bin/env python3
"""snnTorch's side of bench/runnet: builds three snnTorch networks, saves
each state_dict for the Go side to compile over REST, writes fixed inputs
at three input activities, and times snnTorch itself running them: T
steps per sample, at batch 1 (one sample at a time) and at the full
batch.

The networks (nn.Sequential, as snnTorch's tutorials build them):
  shd:  Linear 700->256, Leaky, Linear 256->20, Leaky (keyword spotting
        on the Spiking Heidelberg Digits);
  conv: Conv2d 2->8 (3x3, stride 2, padding 1) over 2x32x32, Leaky,
        Flatten, Linear 2048->10, Leaky (an event camera's two polarities);
  rec:  Linear 700->256, RLeaky (all-to-all recurrence), Linear 256->20,
        Leaky.

    PYTHONPATH=/tmp/neuro-ref/snntorch /usr/bin/python3 bench/runnet/snntorch_run.py OUTDIR

Writes OUTDIR/NET.pt, OUTDIR/NET_PCT.bin (the input spikes as
little-endian int32 triples sample, step, input, in that order) and
OUTDIR/snntorch.json (the output spike counts of every sample, and the
timings). Torch runs on $THREADS threads (default 2, the machine's
cores); $REPS scales how many times each case is timed (default 1).
"""

import json
import os
import sys
import time

import torch
import torch.nn as nn
import snntorch as snn

T, BATCH, SAMPLES = 100, 64, 64
ACTIVITIES = (1, 5, 20)  # percent of inputs spiking at each step


def networks():
    """Returns {name: (net, input shape per step)}, seeded."""
    torch.manual_seed(0)
    shd = nn.Sequential(
        nn.Linear(700, 256), snn.Leaky(beta=0.95),
        nn.Linear(256, 20), snn.Leaky(beta=0.9),
    )
    torch.manual_seed(1)
    conv = nn.Sequential(
        nn.Conv2d(2, 8, 3, stride=2, padding=1), snn.Leaky(beta=0.9),
        nn.Flatten(), nn.Linear(8 * 16 * 16, 10), snn.Leaky(beta=0.9),
    )
    torch.manual_seed(2)
    rec = nn.Sequential(
        nn.Linear(700, 256), snn.RLeaky(beta=0.95, linear_features=256),
        nn.Linear(256, 20), snn.Leaky(beta=0.9),
    )
    with torch.no_grad():
        shd[0].weight.mul_(4.0)
        shd[2].weight.mul_(3.0)
        conv[0].weight.mul_(3.0)
        conv[3].weight.mul_(4.0)
        rec[0].weight.mul_(4.0)
        rec[1].recurrent.weight.mul_(0.5)
        rec[2].weight.mul_(3.0)
    return {"shd": (shd, (700,)), "conv": (conv, (2, 32, 32)), "rec": (rec, (700,))}


def run(net, x):
    """Runs x ([batch, T, ...]) through net; returns output spike counts."""
    for m in net:
        if isinstance(m, snn.SpikingNeuron):
            m.reset_mem()
    counts = None
    with torch.no_grad():
        for t in range(T):
            h = x[:, t]
            for m in net:
                h = m(h)
                if isinstance(h, tuple):
                    h = h[0]
            counts = h.clone() if counts is None else counts + h
    return counts


def timeit(fn, reps):
    fn()  # warm up
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def main(out):
    torch.set_num_threads(int(os.environ.get("THREADS", "2")))
    reps = int(os.environ.get("REPS", "1"))
    res = {"library": "snntorch " + snn.__version__, "torch": torch.__version__,
           "threads": torch.get_num_threads(), "timesteps": T, "batch": BATCH, "nets": {}}
    for name, (net, shape) in networks().items():
        torch.save(net.state_dict(), os.path.join(out, name + ".pt"))
        g = torch.Generator().manual_seed(10)
        entry = {"shape": list(shape), "activities": {}}
        for pct in ACTIVITIES:
            x = (torch.rand(SAMPLES, T, *shape, generator=g) < pct / 100).float()
            idx = x.reshape(SAMPLES, T, -1).nonzero().to(torch.int32)
            with open(os.path.join(out, f"{name}_{pct}.bin"), "wb") as f:
                f.write(idx.numpy().astype("<i4").tobytes())
            counts = run(net, x)
            for k in range(2):  # a sample alone gives what it gives in the batch
                assert torch.equal(counts[k:k + 1], run(net, x[k:k + 1])), f"{name}: batched and single runs differ"
            one = timeit(lambda: run(net, x[:1]), 10 * reps)
            full = timeit(lambda: run(net, x[:BATCH]), 2 * reps)
            entry["activities"][str(pct)] = {
                "samples_per_second_batch1": 1 / one, "samples_per_second_full_batch": BATCH / full,
                "counts": counts.int().tolist(),
            }
            print(json.dumps({"net": name, "activity_percent": pct, "batch1": 1 / one, "full_batch": BATCH / full}),
                  file=sys.stderr)
        res["nets"][name] = entry
    with open(os.path.join(out, "snntorch.json"), "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1])
