#!/usr/bin/env python3
"""Writes snntorch_lm.pt and snntorch_lm.json: a small recurrent spiking
language model built and run with the real snnTorch.

The model is written the way snnTorch language models usually are: an
nn.Embedding, then a Leaky and an RLeaky each fed by an nn.Linear, then a
linear readout of the last layer's spikes that gives the logits at every
step. It is trained for a few hundred steps on a fixed token sequence, so
that its greedy continuation is not one repeated token, and saved as a
state_dict (torch.save(model.state_dict())).

Both neurons reset to zero, the RLeaky with reset_delay=False: NIR has no
subtractive reset and no refractory period (which RLeaky's delayed zero
reset amounts to), so this model can also be written to NIR unchanged
(compile/nir's language-model fixture is this state_dict written so).

Nothing in the JSON is computed by our own code: the logits of every step
of a 64-token prompt, and the 32 tokens snnTorch's own greedy decoding
(argmax of the logits fed back as the next input) continues it with.

    PYTHONPATH=/tmp/neuro-ref/snntorch /usr/bin/python3 compile/pytorch/testdata/snn/gen_lm.py

JSON layout: name, library, library_version, library_commit, torch_version,
vocab, prompt [64] (token ids), logits [64][vocab] (float32 widened exactly
to float64), continuation [32] (token ids), margins {threshold, argmax}:
the smallest distance of any membrane from its threshold and of the chosen
token's logit from the runner-up, which say how far float rounding is from
changing a spike or a choice.
"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import HERE, commit  # noqa: E402

V, E, H = 64, 32, 32
PROMPT, CONTINUE = 64, 32


class LM(nn.Module):
    def __init__(self):
        import snntorch as snn
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.fc1 = nn.Linear(E, H)
        self.lif1 = snn.Leaky(beta=0.9, reset_mechanism="zero")
        self.fc2 = nn.Linear(H, H)
        self.lif2 = snn.RLeaky(beta=0.85, linear_features=H, reset_mechanism="zero", reset_delay=False)
        self.fc_out = nn.Linear(H, V)

    def reset(self):
        self.lif1.reset_mem()
        self.lif2.reset_mem()

    def step(self, tok):
        """One token per step: tok [B] → logits [B, V]; state stays in the neurons."""
        x = self.embed(tok)
        spk1, mem1 = self.lif1(self.fc1(x))
        spk2, mem2 = self.lif2(self.fc2(spk1))
        self.mems = (mem1, mem2)
        return self.fc_out(spk2)

    def forward(self, toks):
        self.reset()
        return torch.stack([self.step(toks[t]) for t in range(toks.shape[0])])


def corpus(rng, n):
    """A token stream with structure to learn: runs of counting by a
    stride, the stride changing now and then."""
    out, t, stride = [], int(rng.integers(V)), 1
    for _ in range(n):
        out.append(t)
        if rng.random() < 0.05:
            stride = int(rng.integers(1, 4))
        t = (t + stride) % V
    return out


def main():
    import snntorch as snn
    torch.set_num_threads(1)
    torch.manual_seed(7)
    rng = np.random.default_rng(7)
    model = LM()
    with torch.no_grad():
        model.fc1.weight.mul_(3.0)
        model.fc2.weight.mul_(3.0)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    data = torch.tensor(corpus(rng, 4096), dtype=torch.long)
    for it in range(300):
        starts = rng.integers(0, len(data) - 65, size=16)
        batch = torch.stack([data[s:s + 65] for s in starts], dim=1)  # [65, B]
        logits = model(batch[:-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, V), batch[1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it % 50 == 0:
            print(f"step {it}: loss {loss.item():.3f}")

    prompt = corpus(np.random.default_rng(8), PROMPT)
    ths = (model.lif1.threshold, model.lif2.threshold)
    margin_th, margin_arg = float("inf"), float("inf")
    logits_out, cont = [], []
    model.eval()
    with torch.no_grad():
        model.reset()

        def step(tok):
            nonlocal margin_th
            out = model.step(torch.tensor([tok]))[0]
            # The pre-reset membrane decides the spike: lif1 returns it
            # (reset_delay=True), lif2 has already zeroed a spiking one.
            for m, th in zip(model.mems, ths):
                m = m[0]
                live = m != 0
                if live.any():
                    margin_th = min(margin_th, float((m[live] - th).abs().min()))
            return out

        for tok in prompt:
            out = step(tok)
            logits_out.append([float(v) for v in out.tolist()])
        for _ in range(CONTINUE):
            top = torch.topk(out, 2).values
            margin_arg = min(margin_arg, float(top[0] - top[1]))
            nxt = int(out.argmax())
            cont.append(nxt)
            out = step(nxt)
    print("continuation", cont, "margins", margin_th, margin_arg)
    torch.save(model.state_dict(), os.path.join(HERE, "snntorch_lm.pt"))
    out = {
        "name": "snntorch_lm",
        "library": "snntorch",
        "library_version": snn.__version__,
        "library_commit": commit(snn),
        "torch_version": torch.__version__,
        "vocab": V,
        "state_dict_keys": list(model.state_dict().keys()),
        "prompt": prompt,
        "logits": logits_out,
        "continuation": cont,
        "margins": {"threshold": margin_th, "argmax": margin_arg},
    }
    with open(os.path.join(HERE, "snntorch_lm.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
