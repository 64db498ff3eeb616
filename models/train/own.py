"""Train a spiking language model and its tokenizer on your own text.

    /usr/bin/python3 own.py --text mytext.txt --out mymodel/ [--vocab 2048] [--minutes 60]

Run from models/train (Go and Debian's python3-torch needed). The input is
plain text (one document) or chat JSONL, one conversation a line:
{"messages":[{"role":"user","content":"..."},{"role":"assistant","content":"..."}]},
rendered with the neuro chat template. Steps:

1. `go run ./tokenize -text` (package own): the end of the file is held out
   for validation (5% of it, at most 1 MiB, from a line start; --valid-bytes
   sets it), a byte-level BPE of --vocab ids with the project's special
   tokens and chat template is trained on the rest, and both parts are
   encoded as the built-in models' data is (into OUT/data).
2. train.py with neuro-1-lite's recipe (the `lima` architecture, width 112,
   2 blocks, LIF neurons, 32 shift channels, its learning rate, decay and
   surrogate slope; no distillation), for --minutes of wall clock or
   --steps, printing progress. Its run directory is OUT/run (log.jsonl, a
   checkpoint every two minutes: --resume continues an interrupted run).
3. The held-out evaluation: bits per byte over the whole validation part,
   in windows of 128 tokens from rest, as train.py evaluates every run.

It writes OUT/model.pt (the state_dict compile.Import("pytorch") reads,
with models/lima linked), OUT/tokenizer.json, OUT/valid.txt (valid.jsonl
for chat: the held-out text) and OUT/results.json (bpb and how it was made).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# neuro-1-lite's recipe (README.md, "The recipe"), without its teacher.
LITE = dict(d=112, k=32, h=373, lif=1, shift=32, layers=2)
RECIPE = ["--arch", "lima", "--size", "lite", "--slope", "2.5", "--lr", "1e-2", "--wd", "0.05",
          "--wd-skip", "mix_p,spk_p", "--ema", "0.998", "--eval-every", "500"]


def parse(argv=None):
    p = argparse.ArgumentParser(description="Train a spiking language model and its tokenizer on your own text.")
    p.add_argument("--text", required=True, help="a UTF-8 text file, or chat JSONL ({\"messages\":[...]} a line)")
    p.add_argument("--out", required=True, help="directory for model.pt, tokenizer.json, valid.txt, results.json")
    p.add_argument("--vocab", type=int, default=2048, help="the tokenizer's vocabulary size (default 2048)")
    p.add_argument("--format", default="auto", choices=["auto", "text", "chat"])
    p.add_argument("--valid-bytes", type=int, default=0,
                   help="bytes held out for validation at the end of the file (default 5%%, at most 1 MiB)")
    p.add_argument("--minutes", type=float, default=None,
                   help="training wall-clock budget (default 60, or none with --steps); --minutes 5 is a quick try")
    p.add_argument("--steps", type=int, default=0, help="training steps of 32 windows of 128 tokens (default: time only)")
    p.add_argument("--set", default="", metavar="KEY=N,...",
                   help="change the model's configuration, e.g. d=64,k=16,h=128,shift=16 for a smaller one "
                        "(default %s)" % ",".join("%s=%d" % kv for kv in LITE.items()))
    p.add_argument("--threads", type=int, default=min(os.cpu_count() or 1, 4))
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--resume", action="store_true", help="continue the interrupted run in --out")
    return p.parse_args(argv)


def config(override):
    """LITE with the --set entries over it, as train.py's --set."""
    cfg = dict(LITE)
    for kv in filter(None, override.split(",")):
        k, _, n = kv.partition("=")
        if not n.isdigit():
            sys.exit("own.py: --set %s: want KEY=N" % kv)
        cfg[k] = int(n)
    return ",".join("%s=%d" % kv for kv in cfg.items())


def main():
    args = parse()
    if args.minutes is None:
        args.minutes = 100000.0 if args.steps else 60.0
    if args.minutes <= 0 or args.steps < 0 or args.vocab < 261:
        sys.exit("own.py: want --minutes > 0, --steps >= 0 and --vocab >= 261 (the 256 bytes and 5 special tokens)")
    text = os.path.abspath(args.text)
    out = os.path.abspath(args.out)
    data, run = os.path.join(out, "data"), os.path.join(out, "run")
    if not os.path.isfile(text):
        sys.exit("own.py: --text %s: no such file" % args.text)
    if os.path.exists(os.path.join(run, "last.pt")) and not args.resume:
        sys.exit("own.py: %s holds an earlier run: pass --resume to continue it, or choose another --out" % args.out)
    if shutil.which("go") is None:
        sys.exit("own.py: the tokenizer is trained by Go's `go run ./tokenize`: install Go 1.26 or later")
    os.makedirs(out, exist_ok=True)

    print("== tokenizer (%d ids) and validation split" % args.vocab, flush=True)
    tok = ["go", "run", "./tokenize", "-text", text, "-format", args.format, "-vocab", str(args.vocab),
           "-valid-bytes", str(args.valid_bytes), "-out", data]
    if subprocess.run(tok, cwd=HERE).returncode != 0:
        sys.exit("own.py: tokenizing %s failed (above)" % args.text)
    with open(os.path.join(data, "index.json")) as f:
        index = json.load(f)
    (source, part), = index["sources"].items()
    valid_name = "valid.jsonl" if source == "chat" else "valid.txt"
    if part["train"]["tokens"] < 130 or part["val"]["tokens"] < 2:
        sys.exit("own.py: %s is too short: %d training and %d validation tokens, want at least 130 (a window of 128 "
                 "and its next token) and 2" % (args.text, part["train"]["tokens"], part["val"]["tokens"]))

    print("== training (%s)" % ("%d steps" % args.steps if args.steps else "%g minutes" % args.minutes), flush=True)
    cmd = [sys.executable, os.path.join(HERE, "train.py")] + RECIPE + [
        "--set", config(args.set), "--data", out, "--tok", "data", "--out", run, "--run", "own",
        "--minutes", str(args.minutes), "--steps", str(args.steps), "--threads", str(args.threads),
        "--seed", str(args.seed), "--progress"]
    if subprocess.run(cmd, cwd=HERE).returncode != 0:
        sys.exit("own.py: training failed (above)")
    with open(os.path.join(run, "results.json")) as f:
        res = json.load(f)

    # The weights to keep: the last ones or their moving average, whichever
    # is better on the validation part (the average lags in a short run).
    kept, ev, weights = "last", res["heldout"], os.path.join(run, "model.pt")
    for e in res.get("ema", []):
        if e["heldout"]["bpb"] < ev["bpb"]:
            kept, ev, weights = "average %g" % e["decay"], e["heldout"], os.path.join(run, "model-ema-%g.pt" % e["decay"])
    shutil.copyfile(weights, os.path.join(out, "model.pt"))
    for name in ("tokenizer.json", valid_name):
        shutil.copyfile(os.path.join(data, name), os.path.join(out, name))
    s = ev["sources"][source]
    train_args = {k: v for k, v in res["args"].items() if k not in ("data", "out", "run", "tok", "progress")}
    summary = dict(
        bpb=ev["bpb"],
        valid=valid_name,
        valid_bytes=s["bytes"],
        valid_tokens_predicted=s["tokens"],
        bits=s["bpb"] * s["bytes"],
        evaluation="bits per byte = the cross-entropy in bits of every token of the validation part after the first "
                   "(its text, or its conversations rendered with the chat template, each followed by <|endoftext|>, "
                   "encoded with tokenizer.json), in consecutive windows of %d tokens each starting from rest, "
                   "over its UTF-8 bytes (for chat, the messages' contents)" % res["args"]["eval_seq"],
        weights=kept,
        bpb_last=res["heldout"]["bpb"],
        bpb_average={str(e["decay"]): e["heldout"]["bpb"] for e in res.get("ema", [])},
        spike_rate_per_layer=ev.get("spike_rate_per_layer"),
        text=os.path.basename(text),
        format=source,
        train_bytes=part["train"]["text_bytes"],
        train_tokens_in_text=part["train"]["tokens"],
        vocab_size=index["vocab_size"],
        arch=res["arch"],
        cfg=res["cfg"],
        params=res["params"],
        steps=res["steps"],
        train_tokens=res["train_tokens"],
        train_seconds=res["train_seconds"],
        device_name=res["device_name"],
        train_args=train_args,
    )
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    print("== wrote %s: model.pt (%s weights), tokenizer.json (%d ids), %s, results.json: %.4f bits per byte on %d held-out bytes"
          % (args.out, kept, index["vocab_size"], valid_name, ev["bpb"], s["bytes"]), flush=True)


if __name__ == "__main__":
    main()
