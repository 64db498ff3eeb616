#!/usr/bin/env python3
"""snnTorch's side of bench/runnet: builds a keyword-spotting-sized
network (Linear 700->256, Leaky, Linear 256->20, Leaky, as for the
Spiking Heidelberg Digits), saves its state_dict for the Go side to
compile over REST, writes fixed inputs, and times snnTorch itself running
them: T steps per sample, at batch 1 (one sample at a time) and at the
full batch.

    PYTHONPATH=/tmp/neuro-ref/snntorch /usr/bin/python3 bench/runnet/snntorch_run.py OUTDIR

Writes OUTDIR/net.pt, OUTDIR/inputs.json ([sample][t][i], Bernoulli spikes)
and OUTDIR/snntorch.json (counts per sample and the timings). Torch runs
on $THREADS threads (default 2, the machine's cores).
"""

import json
import os
import sys
import time

import torch
import torch.nn as nn
import snntorch as snn

N_IN, HIDDEN, N_OUT, T, BATCH, SAMPLES = 700, 256, 20, 100, 64, 64


def main(out):
    torch.set_num_threads(int(os.environ.get("THREADS", "2")))
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Linear(N_IN, HIDDEN), snn.Leaky(beta=0.95),
        nn.Linear(HIDDEN, N_OUT), snn.Leaky(beta=0.9),
    )
    with torch.no_grad():
        net[0].weight.mul_(4.0)
        net[2].weight.mul_(3.0)
    torch.save(net.state_dict(), os.path.join(out, "net.pt"))
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(SAMPLES, T, N_IN, generator=g) < 0.05).float()
    with open(os.path.join(out, "inputs.json"), "w") as f:
        json.dump(x.int().tolist(), f, separators=(",", ":"))

    def run(batch):
        """Runs x[batch] through the network; returns output spike counts."""
        for m in net:
            if isinstance(m, snn.SpikingNeuron):
                m.reset_mem()
        counts = torch.zeros(batch.shape[0], N_OUT)
        with torch.no_grad():
            for t in range(T):
                h = batch[:, t, :]
                for m in net:
                    h = m(h)
                    if isinstance(h, tuple):
                        h = h[0]
                counts += h
        return counts

    counts = torch.cat([run(x[k:k + 1]) for k in range(SAMPLES)])
    assert torch.equal(counts, run(x)), "batched and single runs differ"

    def timeit(fn, reps):
        fn()  # warm up
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t0) / reps

    one = timeit(lambda: run(x[:1]), 20)
    full = timeit(lambda: run(x[:BATCH]), 5)
    res = {
        "library": "snntorch " + snn.__version__, "torch": torch.__version__, "threads": torch.get_num_threads(),
        "timesteps": T, "batch": BATCH,
        "samples_per_second_batch1": 1 / one, "samples_per_second_full_batch": BATCH / full,
        "counts": counts.int().tolist(),
    }
    with open(os.path.join(out, "snntorch.json"), "w") as f:
        json.dump(res, f)
    print(json.dumps({k: v for k, v in res.items() if k != "counts"}))


if __name__ == "__main__":
    main(sys.argv[1])
