#!/usr/bin/python3
"""Writes tiny.pt and tiny.json: a small neuro lima language model
(models/train/arch.py) with random weights, and PyTorch's logits after each of
24 tokens, computed step by step in float64 by arch.forward_steps; and
tiny_gain.pt, tiny_gain.json: the same with the fan-in parametrisation and
its readout gain (head_scale), set to 2.5; tiny_lif.pt, tiny_lif.json: with
LIF hidden neurons (lif=1), their time constants spread from under a step to
several; tiny_shift.pt, tiny_shift.json: LIF hidden neurons and three shift
channels a block (shift=3), the previous token's residual current;
tiny_shift2.pt, tiny_shift2.json: as tiny_shift, with two more channels a
block (shift2=2) that carry the residual current of two tokens back;
tiny_rec.pt, tiny_rec.json: as tiny_shift, with two rec channels a block
(rec=2) that feed the block's spikes of the previous token back into its
residual current; tiny_adapt.pt, tiny_adapt.json: as tiny_shift, with each
hidden neuron's spikes fed back to itself through a leaky integrator
(adapt=1), the weights of both signs; tiny_tern.pt, tiny_tern.json: as
tiny_shift, with each hidden neuron mirrored on the negated current
(tern=1).

Run from the repository root with Debian's PyTorch 1.13:

    /usr/bin/python3 models/lima/testdata/gen.py
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "train"))
import arch  # noqa: E402


def main():
    write("tiny", fanin=False)
    write("tiny_gain", fanin=True)
    write("tiny_lif", fanin=False, lif=1)
    write("tiny_shift", fanin=False, lif=1, shift=3)
    write("tiny_shift2", fanin=False, lif=1, shift=3, shift2=2)
    write("tiny_rec", fanin=False, lif=1, shift=3, rec=2)
    write("tiny_adapt", fanin=False, lif=1, shift=3, adapt=1)
    write("tiny_tern", fanin=False, lif=1, shift=3, tern=1)


def write(name, fanin, lif=0, shift=0, shift2=0, rec=0, adapt=0, tern=0):
    torch.manual_seed(7)
    m = arch.Lima(vocab=16, d=8, k=4, h=6, layers=2, fanin=fanin, lif=lif, shift=shift, shift2=shift2, rec=rec, adapt=adapt, tern=tern)
    with torch.no_grad():
        for b in m.blocks:  # spread the thresholds so that some neurons fire
            b.fc1.bias.uniform_(-1.0, 1.0)
            if lif:
                b.fc1.bias.add_(1.0)
                b.spk_p.copy_(arch.decay_logit(torch.linspace(0.3, 6.0, b.spk_p.numel())))
            if adapt:
                b.adapt_w.copy_(torch.linspace(-1.5, 1.5, b.adapt_w.numel()))
        m.head_bias.normal_()
        if fanin:
            m.head_scale.fill_(2.5)
    torch.save(m.state_dict(), os.path.join(HERE, name + ".pt"))
    tokens = torch.randint(0, 16, (1, 24), generator=torch.Generator().manual_seed(8))
    m64 = m.double()
    logits = arch.forward_steps(m64, tokens)[0]
    spikes = []
    st = m64.init_state(1)
    for t in tokens[0]:
        u = m64.embed(t.view(1))
        for i, b in enumerate(m64.blocks):
            u, spk, st[i] = b.step(u, st[i])
            spikes.append(int(spk.sum()))
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump({"tokens": tokens[0].tolist(), "logits": logits.tolist(), "spikes": sum(spikes)}, f)


if __name__ == "__main__":
    main()
