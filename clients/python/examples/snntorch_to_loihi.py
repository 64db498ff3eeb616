#!/usr/bin/env python3
"""From snnTorch to the Loihi emulator: trains a small spiking network with
snnTorch for a few seconds, compiles it with Neuro, deploys it on the Loihi
emulator (device "loihi") and on the float CPU simulator, runs the test
samples on both and compares their output spike counts with snnTorch's own.

The CPU simulator gives snnTorch's counts exactly; Loihi runs in fixed
point (8-bit weights), so its counts may differ by a spike here and there,
and its predictions should still agree.

Needs torch and snntorch (pip install snntorch) and a running server:

    NEURO_API_KEYS=sk-local go run ./examples/server &
    export NEURO_BASE_URL=http://127.0.0.1:8080 NEURO_API_KEY=sk-local
    python3 clients/python/examples/snntorch_to_loihi.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import snntorch as snn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import neuro  # noqa: E402

T = 25  # timesteps per sample
N_IN, N_HIDDEN, N_OUT = 16, 32, 4


def make_data(n: int, gen: torch.Generator) -> "tuple[torch.Tensor, torch.Tensor]":
    """Four classes: each drives its own quarter of the inputs harder than
    the background. A sample is a constant input current, one vector."""
    labels = torch.randint(0, N_OUT, (n,), generator=gen)
    x = 0.15 * torch.rand(n, N_IN, generator=gen)
    for i, c in enumerate(labels.tolist()):
        x[i, c * 4 : c * 4 + 4] += 0.25 + 0.2 * torch.rand(4, generator=gen)
    return x, labels


def build() -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(N_IN, N_HIDDEN),
        snn.Leaky(beta=0.9),
        nn.Linear(N_HIDDEN, N_OUT),
        snn.Leaky(beta=0.8),
    )


def output_counts(model: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """Steps the network T times on x (batch, inputs) and sums the output
    layer's spikes: what snnTorch computes."""
    for m in model:
        if isinstance(m, snn.SpikingNeuron):
            m.reset_mem()
    counts = torch.zeros(x.shape[0], N_OUT)
    for _ in range(T):
        h = x
        for m in model:
            h = m(h)[0] if isinstance(m, snn.SpikingNeuron) else m(h)
        counts = counts + h
    return counts


def train(model: nn.Sequential, seconds: float, gen: torch.Generator) -> int:
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    loss_fn = nn.CrossEntropyLoss()
    steps, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        x, y = make_data(64, gen)
        loss = loss_fn(output_counts(model, x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    return steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="training time")
    ap.add_argument("--samples", type=int, default=64, help="test samples (at most 256)")
    ap.add_argument("--batch", type=int, default=16, help="the deployments' batch size; they queue 4 batches")
    a = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = build()
    steps = train(model, a.seconds, gen)
    x_test, y_test = make_data(a.samples, gen)
    with torch.no_grad():
        ref = output_counts(model, x_test)
    acc = (ref.argmax(1) == y_test).float().mean().item()
    print("snnTorch: trained %d steps in %.0f s; test accuracy %.1f%%" % (steps, a.seconds, 100 * acc))

    client = neuro.Client()
    net = client.networks.compile(model, name="snntorch-example")  # its state_dict, via torch.save
    print("compiled %s: %d neurons, %d synapses" % (net.id, net.network.neurons, net.network.synapses))
    # Each sample as a matrix of one row per step: the input snnTorch saw.
    inputs = x_test.unsqueeze(1).expand(-1, T, -1)
    counts = {}
    deployments = []
    try:
        for device in ("cpu", "loihi"):
            dep = client.deployments.create(model=net.id, device=device, max_batch_size=a.batch, wait=True)
            deployments.append(dep.id)
            if dep.status != "ready":
                raise SystemExit("%s: %s" % (device, dep.failure))
            run = client.deployments.run(dep.id, inputs=inputs)
            counts[device] = torch.tensor([o.spike_counts for o in run.outputs])
            print(
                "%-6s %s (%s): %.1f us of device time per sample, %.3g uJ"
                % (device, dep.id, dep.device.model, 1000 * run.usage.device_ms / len(run.outputs), run.usage.energy_uj)
            )
            for w in run.warnings or []:
                print("       " + w)
    finally:
        for d in deployments:
            client.deployments.delete(d)
        client.models.delete(net.id)

    cpu, loihi = counts["cpu"], counts["loihi"]
    print("cpu   : counts equal to snnTorch's for %d of %d samples" % (int((cpu == ref).all(1).sum()), len(ref)))
    diff = (loihi - ref).abs()
    agree = (loihi.argmax(1) == ref.argmax(1)).float().mean().item()
    print(
        "loihi : counts equal for %d of %d samples; %.0f spikes apart in all (%.2f per output neuron); "
        "predictions agree on %.1f%%; accuracy %.1f%%"
        % (
            int((diff == 0).all(1).sum()),
            len(ref),
            diff.sum().item(),
            diff.mean().item(),
            100 * agree,
            100 * (loihi.argmax(1) == y_test).float().mean().item(),
        )
    )
    for i in range(min(5, len(ref))):
        print("  sample %d (class %d): snnTorch %s, loihi %s" % (i, y_test[i], ref[i].int().tolist(), loihi[i].int().tolist()))


if __name__ == "__main__":
    main()
