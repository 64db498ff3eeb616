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
(tern=1); tiny_lm.pt, tiny_lm.json: as tiny_shift with a vocabulary of
261, that of a byte-level tokenizer with the five neuro special tokens, for
the tests that compile a language model with a tokenizer.

Run from the repository root with Debian's PyTorch 1.13, naming the
fixtures to write (all of them without names):

    /usr/bin/python3 models/lima/testdata/gen.py [name ...]
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "train"))
import arch  # noqa: E402


FIXTURES = {
    "tiny": dict(fanin=False),
    "tiny_gain": dict(fanin=True),
    "tiny_lif": dict(fanin=False, lif=1),
    "tiny_shift": dict(fanin=False, lif=1, shift=3),
    "tiny_shift2": dict(fanin=False, lif=1, shift=3, shift2=2),
    "tiny_rec": dict(fanin=False, lif=1, shift=3, rec=2),
    "tiny_adapt": dict(fanin=False, lif=1, shift=3, adapt=1),
    "tiny_tern": dict(fanin=False, lif=1, shift=3, tern=1),
    "tiny_lm": dict(fanin=False, lif=1, shift=3, vocab=261),
}


def main():
    for name in sys.argv[1:] or FIXTURES:
        write(name, **FIXTURES[name])


def write(name, fanin, lif=0, shift=0, shift2=0, rec=0, adapt=0, tern=0, vocab=16):
    torch.manual_seed(7)
    m = arch.Lima(vocab=vocab, d=8, k=4, h=6, layers=2, fanin=fanin, lif=lif, shift=shift, shift2=shift2, rec=rec, adapt=adapt, tern=tern)
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
    tokens = torch.randint(0, vocab, (1, 24), generator=torch.Generator().manual_seed(8))
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
