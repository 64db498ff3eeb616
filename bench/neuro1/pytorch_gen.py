#!/usr/bin/python3
"""PyTorch 1.13's generation speed on the neuro-1 models, for bench/neuro1/compare.sh.

    /usr/bin/python3 bench/neuro1/pytorch_gen.py --runs lite-lima,standard-lima --tokens 256

For each run under models/train/runs/, loads model.pt into models/train/arch.py's
module and generates greedily, one token per step with the module's own step
function (its recurrent form: constant work per token, the fastest way to
generate with it in PyTorch), in float32 under torch.no_grad() with
torch.set_num_threads(--threads) (default 2): --tokens tokens for 1 sequence
and for 8 sequences at once, after a 32-token warm-up. The chat template's
stop tokens are masked, as the Go side's logit_bias does. Prints one JSON
line per run.

--quantize int8 runs PyTorch's own dynamic int8 quantisation of the
module's Linear layers (torch.ao.quantization.quantize_dynamic, the fbgemm
kernels: int8 weights per output channel, activations quantised on the
fly), the PyTorch counterpart of the Go side's int8 weights; the tied
readout stays float32 in both.
"""
import argparse
import json
import os
import sys
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "train"))
import arch  # noqa: E402



def stop_ids(tokenizer):
    """The ids of the chat template's stop tokens (<|end|>, <|endoftext|>)."""
    with open(os.path.join(ROOT, "models", "tokenizers", tokenizer + ".json")) as f:
        t = json.load(f)
    ids = {a["content"]: a["id"] for a in t["added_tokens"]}
    return [ids[s] for s in t["neuro_chat_template"]["stop"]]


def generate(model, batch, n, banned):
    st = model.init_state(batch)
    tok = torch.zeros(batch, dtype=torch.long)
    for _ in range(n):
        y, st = model.step(tok, st)
        y[:, banned] = -1e9
        tok = y.argmax(-1)
    return tok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", default="lite-lima")
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="runs of each batch size; the median rate is reported")
    p.add_argument("--quantize", default="none", choices=["none", "int8"], help="PyTorch's dynamic int8 quantisation of the Linear layers")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    for run in a.runs.split(","):
        d = os.path.join(ROOT, "models", "train", "runs", run)
        with open(os.path.join(d, "results.json")) as f:
            res = json.load(f)
        model = arch.build_run(res)
        model.load_state_dict(torch.load(os.path.join(d, "model.pt"), map_location="cpu"))
        model.eval()
        # The readout weight (head_scale x embedding, heavy) is computed once,
        # as an inference deployment would, not on every step as in training.
        with torch.no_grad():
            head = model.head_weight().clone()
        model.head_weight = lambda: head
        if a.quantize == "int8":
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        out = {"run": run, "torch": torch.__version__, "threads": torch.get_num_threads(), "quantize": a.quantize,
               "tokens_per_second": {}}
        banned = stop_ids("neuro-" + res["tokenizer"])
        with torch.no_grad():
            generate(model, 1, 32, banned)
            for batch in (1, 8):
                rates = []
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    generate(model, batch, a.tokens, banned)
                    rates.append(batch * a.tokens / (time.perf_counter() - t0))
                out["tokens_per_second"]["batch%d" % batch] = sorted(rates)[len(rates) // 2]
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
