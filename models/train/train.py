"""Train one neuro-1 candidate (or the GRU baseline) on the tokenized corpus.

    /usr/bin/python3 models/train/train.py --arch lima --size lite --minutes 15

Reads models/train/data/<tok>/ (written by `cd models/train && go run
./tokenize`), trains on random windows drawn from the training split of
every source with fixed mixing weights, checkpoints to
models/train/runs/<run>/last.pt (resumed automatically when present), logs
to runs/<run>/log.jsonl, and at the end evaluates bits per byte on the
whole held-out split of every source:

    bpb(source) = sum of cross-entropy (bits) over its held-out tokens
                  / text_bytes of that held-out text (index.json)

Windows of --seq tokens start at rest (all states zero), as the simulator's
do; each held-out token after the first is predicted once. Template and
separator tokens count in the numerator but add no bytes. Writes
runs/<run>/model.pt (state_dict) and runs/<run>/results.json.
"""
import argparse
import json
import math
import os
import random
import sys
import time

# torch.set_num_threads does not reach the BLAS library Debian's PyTorch
# links (OpenBLAS), which otherwise starts a thread per core: two runs
# side by side, each at --threads 1, would then fight over both cores.
_threads = next((sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == "--threads"), "2")
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_v, _threads)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Share of training windows drawn from each source (renormalised over those
# present). Data with none of these sources (own.py's) draws from each of
# its sources alike.
MIX = {
    "books": 0.34,
    "topical_chat": 0.15,
    "self_dialogue_corpus_subset": 0.14,
    "casino_negotiation_dialogues": 0.06,
    "taskmaster4_coffee_ordering": 0.06,
    "tinystories": 0.14,
    "tinyshakespeare": 0.11,
}


def parse(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="lima", choices=sorted(arch.ARCHS))
    p.add_argument("--size", default="lite")
    p.add_argument("--tok", default="bpe-1k")
    p.add_argument("--data", default=os.path.join(HERE, "data"))
    p.add_argument("--run", default="")
    p.add_argument("--out", default="", help="the run's directory (default runs/<run>)")
    p.add_argument("--progress", action="store_true",
                   help="print progress as readable lines (step, loss, tokens/s, time left) rather than the log's JSON")
    p.add_argument("--minutes", type=float, default=15.0, help="training wall-clock budget")
    p.add_argument("--steps", type=int, default=0, help="step budget (0: time only); the lr schedule follows whichever ends first")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=128, help="training sequence length")
    p.add_argument("--eval-seq", type=int, default=128,
                   help="held-out window in tokens, from rest (128, as bench/neuro1/heldout measures every model)")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--wd", type=float, default=0.01)
    p.add_argument("--wd-params", default="all", choices=["all", "matrices"],
                   help="which parameters weight decay shrinks: all of them, or only matrices (weights and the "
                        "embedding), leaving biases, thresholds and time constants (lima's mix_p, spk_p) alone")
    p.add_argument("--wd-skip", default="", metavar="NAME,...",
                   help="parameters that never decay, by the last part of their name (adapt_p: the time constants "
                        "of lima's spike integrators), on top of --wd-params")
    p.add_argument("--rate-target", type=float, default=0.10, help="per-layer spike rate above which the regulariser acts")
    p.add_argument("--rate-weight", type=float, default=2.0)
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--eval-tokens", type=int, default=20000, help="held-out tokens per source for the periodic evaluation")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--eval-only", action="store_true")
    p.add_argument("--ema", default="", metavar="DECAY,...",
                   help="also keep exponential moving averages of the weights at these decays (0.999, say); "
                        "the end evaluates each (results.json ema) and writes it to model-ema-DECAY.pt")
    p.add_argument("--fanin", action="store_true", help="lima: every weight at its fan-in scale (arch.Lima); heavy has it by default")
    p.add_argument("--set", default="", metavar="KEY=N,...",
                   help="override entries of the size's configuration (arch.CONFIGS), e.g. k=192,h=192")
    p.add_argument("--slope", type=float, default=5.0,
                   help="lima: k of the threshold neurons' surrogate gradient 1 / (1 + k |x|)^2 (training only)")
    p.add_argument("--distill", default="", help="run whose model.pt is a teacher: the loss mixes in its soft targets")
    p.add_argument("--distill-weight", type=float, default=0.5, help="share of the loss that is the teacher's KL divergence")
    p.add_argument("--distill-temp", type=float, default=1.0, help="softmax temperature of the distillation term")
    p.add_argument("--portable", action="store_true",
                   help="turn runs/<run>/last.pt into model.pt + resume.json (small enough to commit) and exit; "
                        "a later run on another machine resumes from them with fresh optimizer moments")
    return p.parse_args(argv)


def load(args):
    d = os.path.join(args.data, args.tok)
    with open(os.path.join(d, "index.json")) as f:
        index = json.load(f)
    train, val = {}, {}
    for name, s in sorted(index["sources"].items()):
        train[name] = np.fromfile(os.path.join(d, s["train"]["file"]), dtype="<u2").astype(np.int64)
        val[name] = np.fromfile(os.path.join(d, s["val"]["file"]), dtype="<u2").astype(np.int64)
    return index, train, val


def batch(train, names, probs, rng, B, T, device):
    xs = []
    for src in rng.choice(len(names), size=B, p=probs):
        a = train[names[src]]
        i = rng.integers(0, len(a) - T - 1)
        xs.append(a[i : i + T + 1])
    x = torch.from_numpy(np.stack(xs)).to(device)
    return x[:, :-1], x[:, 1:]


@torch.no_grad()
def evaluate(model, val, index, T, B, device, max_tokens=0):
    """Bits per byte per source and overall, and spike rate per layer."""
    model.eval()
    out, tot_bits, tot_bytes = {}, 0.0, 0
    rate_sum, rate_n = None, 0
    for name, a in val.items():
        if max_tokens:
            a = a[: max_tokens + 1]
        n = (len(a) - 1 + T - 1) // T
        bits, ntok = 0.0, 0
        wins = []
        for w in range(n):
            wins.append(a[w * T : w * T + T + 1])
        for i in range(0, len(wins), B):
            chunk = wins[i : i + B]
            L = max(len(c) for c in chunk)
            x = np.zeros((len(chunk), L), dtype=np.int64)
            m = np.zeros((len(chunk), L - 1), dtype=bool)
            for j, c in enumerate(chunk):
                x[j, : len(c)] = c
                m[j, : len(c) - 1] = True
            x = torch.from_numpy(x).to(device)
            m = torch.from_numpy(m).to(device)
            logits, rates = model(x[:, :-1])
            ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), x[:, 1:].reshape(-1), reduction="none")
            bits += (ce * m.reshape(-1)).sum().item() / math.log(2)
            ntok += int(m.sum().item())
            if rates:
                r = torch.stack([r.detach() for r in rates]).cpu().numpy() * m.sum().item()
                rate_sum = r if rate_sum is None else rate_sum + r
                rate_n += m.sum().item()
        nbytes = index["sources"][name]["val"]["text_bytes"]
        if max_tokens:
            nbytes = nbytes * ntok / max(1, index["sources"][name]["val"]["tokens"] - 1)
        out[name] = dict(bpb=bits / nbytes, bits_per_token=bits / ntok, tokens=ntok, bytes=nbytes)
        tot_bits += bits
        tot_bytes += nbytes
    model.train()
    res = dict(sources=out, bpb=tot_bits / tot_bytes)
    if rate_sum is not None:
        res["spike_rate_per_layer"] = [float(r) for r in rate_sum / rate_n]
    return res


def load_teacher(run, device):
    """The trained model of runs/<run>, frozen, for distillation."""
    rdir = os.path.join(HERE, "runs", run)
    with open(os.path.join(rdir, "results.json")) as f:
        res = json.load(f)
    t = arch.build_run(res)
    t.load_state_dict(torch.load(os.path.join(rdir, "model.pt"), map_location=device))
    t.to(device).eval()
    for p in t.parameters():
        p.requires_grad_(False)
    return t


def distill_loss(logits, teacher, x, temp):
    """KL(teacher || student) over every position, at temperature temp, scaled by temp^2 (Hinton et al.)."""
    with torch.no_grad():
        t_logits, _ = teacher(x)
    V = logits.shape[-1]
    s = F.log_softmax(logits.reshape(-1, V) / temp, dim=-1)
    t = F.log_softmax(t_logits.reshape(-1, V).float() / temp, dim=-1)
    return F.kl_div(s, t, log_target=True, reduction="batchmean") * temp * temp


def param_groups(model, wd, which, skip=()):
    """AdamW's parameter groups: with which == "matrices" only parameters of
    two or more dimensions decay, and none whose name ends in one of skip.
    AdamW's decay pulls every parameter toward 0, and for a decay logit p
    (a = sigmoid(p)) that is a = 0.5, a time constant of 1.4 tokens: at
    lite's 0.05 it shortens the long LIs' memory whatever the gradient
    wants."""
    decays, spared = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        keep = (which == "all" or p.dim() >= 2) and name.rsplit(".", 1)[-1] not in skip
        (decays if keep else spared).append(p)
    groups = [dict(params=decays, weight_decay=wd), dict(params=spared, weight_decay=0.0)]
    return [g for g in groups if g["params"]]


def device_name(device):
    """What the run trained on, by name: the GPU's, or the CPU's model name."""
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(device)
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return ""


def parse_decays(arg):
    """--ema's decays, each in (0, 1)."""
    out = []
    for w in filter(None, arg.split(",")):
        try:
            d = float(w)
        except ValueError:
            d = -1
        if not 0 < d < 1:
            sys.exit("train.py: --ema %s: want decays in (0, 1), such as 0.999" % w)
        out.append(d)
    return out


def clock(s):
    """Seconds as 1h02m, 3m05s or 12s."""
    s = int(round(s))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


def readable(kw):
    """A log entry as --progress prints it."""
    if "ce" in kw:
        return "step %6d  loss %.3f  %6.0f tokens/s  %s elapsed  %s left" % (
            kw["step"], kw["ce"], kw["tok_s"], clock(kw["elapsed_s"]), clock(kw["eta_s"]))
    if "eval_partial_bpb" in kw:
        return "step %6d  validation %.4f bits per byte (its first tokens)" % (kw["step"], kw["eval_partial_bpb"])
    ev = kw.get("event")
    if ev == "start":
        return "training %s parameters, %s" % (format(kw["params"], ","), " ".join("%s=%s" % i for i in kw["cfg"].items()))
    if ev == "done":
        return "done: %d steps in %s; validation %.4f bits per byte%s" % (
            kw["steps"], clock(kw["train_seconds"]), kw["bpb"],
            "".join("; average %s: %.4f" % i for i in kw["ema_bpb"].items()))
    if ev in ("resume", "resume-portable"):
        return "resuming at step %d, %s in" % (kw["step"], clock(kw["elapsed_s"]))
    return json.dumps(kw)


def main():
    args = parse()
    torch.set_num_threads(args.threads)
    run = args.run or f"{args.size}-{args.arch}"
    rdir = args.out or os.path.join(HERE, "runs", run)
    os.makedirs(rdir, exist_ok=True)
    logf = open(os.path.join(rdir, "log.jsonl"), "a")

    def log(**kw):
        kw["time"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        line = json.dumps(kw)
        if args.progress:
            print(readable(kw), flush=True)
        else:
            print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    index, train, val = load(args)
    V = index["vocab_size"]
    names = [n for n in sorted(train) if n in MIX] or sorted(train)
    probs = np.array([MIX.get(n, 1.0) for n in names])
    probs = probs / probs.sum()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    override = {"fanin": True} if args.fanin else {}
    for kv in filter(None, args.set.split(",")):
        entry, _, n = kv.partition("=")
        if entry not in arch.CONFIGS[(args.arch, args.size)] or not n.isdigit():
            sys.exit("train.py: --set %s: want KEY=N with KEY one of %s" % (kv, sorted(arch.CONFIGS[(args.arch, args.size)])))
        override[entry] = int(n)
    model = arch.build(args.arch, args.size, V, **override).to(args.device)
    for b in getattr(model, "blocks", []):
        b.slope = args.slope
    teacher = load_teacher(args.distill, args.device) if args.distill else None
    opt = torch.optim.AdamW(param_groups(model, args.wd, args.wd_params, args.wd_skip.split(",") if args.wd_skip else []),
                            lr=args.lr, betas=(0.9, 0.98))
    rng = np.random.default_rng(args.seed)
    step, elapsed = 0, 0.0
    ck = os.path.join(rdir, "last.pt")
    portable = os.path.join(rdir, "resume.json")
    rewarm = 0  # the step from which the learning rate warms up again
    params = list(model.parameters())
    ema = {d: [p.detach().clone() for p in params] for d in parse_decays(args.ema)}
    if args.portable:
        st = torch.load(ck, map_location="cpu")
        torch.save(st["model"], os.path.join(rdir, "model.pt"))
        with open(portable, "w") as f:
            json.dump(dict(step=st["step"], elapsed=st["elapsed"], rng=st["rng"],
                           torch_rng=st["torch_rng"].tolist()), f)
        log(event="portable", step=st["step"], elapsed_s=st["elapsed"])
        return
    if os.path.exists(ck):
        st = torch.load(ck, map_location=args.device)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        step, elapsed = st["step"], st["elapsed"]
        rng.bit_generator.state = st["rng"]
        torch.set_rng_state(st["torch_rng"])
        rewarm = st.get("rewarm", 0)
        for d, saved in st.get("ema", {}).items():
            for e, v in zip(ema.get(d, ()), saved):
                e.copy_(v)
        log(event="resume", step=step, elapsed_s=elapsed)
    elif os.path.exists(portable) and not args.eval_only:
        with open(portable) as f:
            st = json.load(f)
        model.load_state_dict(torch.load(os.path.join(rdir, "model.pt"), map_location=args.device))
        step, elapsed, rewarm = st["step"], st["elapsed"], st["step"]
        rng.bit_generator.state = st["rng"]
        torch.set_rng_state(torch.tensor(st["torch_rng"], dtype=torch.uint8))
        log(event="resume-portable", step=step, elapsed_s=elapsed, note="fresh AdamW moments; learning rate re-warms over 200 steps")
    elif args.eval_only:
        model.load_state_dict(torch.load(os.path.join(rdir, "model.pt"), map_location=args.device))
    else:
        log(event="start", args=vars(args), params=arch.n_params(model), counts=model.counts(), cfg=model.cfg, mix=dict(zip(names, probs.tolist())))

    budget = args.minutes * 60
    warm = 200

    def left(elapsed, step, tok_s):
        """Seconds of training left: the time budget's, or the step budget's at tok_s."""
        s = budget - elapsed
        if args.steps and tok_s > 0:
            s = min(s, (args.steps - step) * args.batch * args.seq / tok_s)
        return max(s, 0.0)

    def save():
        st = dict(model=model.state_dict(), opt=opt.state_dict(), step=step, elapsed=elapsed, rewarm=rewarm,
                  rng=rng.bit_generator.state, torch_rng=torch.get_rng_state())
        if ema:
            st["ema"] = ema
        torch.save(st, ck + ".tmp")
        os.replace(ck + ".tmp", ck)

    t0 = time.time() - elapsed
    last_save = time.time()
    tok_seen = 0
    rate_from = (time.time(), step)  # tokens/s since the last log line
    while not args.eval_only:
        elapsed = time.time() - t0
        prog = elapsed / budget
        if args.steps:
            prog = max(prog, step / args.steps)
        if prog >= 1:
            break
        lr = args.lr * min(1.0, (step - rewarm + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * prog)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batch(train, names, probs, rng, args.batch, args.seq, args.device)
        logits, rates = model(x)
        ce = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        reg = sum(F.relu(r - args.rate_target) for r in rates) * args.rate_weight if rates else torch.zeros((), device=x.device)
        loss = ce + reg
        if teacher is not None:
            kd = distill_loss(logits, teacher, x, args.distill_temp)
            loss = (1 - args.distill_weight) * ce + args.distill_weight * kd + reg
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            for d, e in ema.items():
                torch._foreach_mul_(e, d)
                torch._foreach_add_(e, [p.detach() for p in params], alpha=1 - d)
        step += 1
        tok_seen += x.numel()
        if step % 50 == 0:
            now = time.time()
            tok_s = (step - rate_from[1]) * args.batch * args.seq / max(now - rate_from[0], 1e-9)
            rate_from = (now, step)
            log(step=step, elapsed_s=round(now - t0, 1), lr=lr, ce=ce.item(), reg=float(reg),
                rates=[round(r.item(), 4) for r in rates], tok_s=round(tok_s), eta_s=round(left(now - t0, step, tok_s)))
        if step % args.eval_every == 0:
            ev = evaluate(model, val, index, args.eval_seq, 64, args.device, args.eval_tokens)
            log(step=step, eval_partial_bpb=ev["bpb"], spike_rate_per_layer=ev.get("spike_rate_per_layer"))
        if time.time() - last_save > 120:
            elapsed = time.time() - t0
            save()
            last_save = time.time()
    elapsed = time.time() - t0 if not args.eval_only else elapsed
    if not args.eval_only:
        save()
    te = time.time()
    ev = evaluate(model, val, index, args.eval_seq, 64, args.device)
    res = dict(run=run, arch=args.arch, size=args.size, tokenizer=args.tok, cfg=model.cfg,
               params=arch.n_params(model), counts=model.counts(), steps=step,
               train_tokens=step * args.batch * args.seq, train_seconds=round(elapsed, 1),
               eval_seconds=round(time.time() - te, 1), device=args.device, device_name=device_name(args.device),
               args=vars(args), heldout=ev)
    if ema and not args.eval_only:
        # each average's own evaluation; model.pt stays the last weights
        res["ema"] = []
        with torch.no_grad():
            last = [p.detach().clone() for p in params]
            for d, e in ema.items():
                for p, v in zip(params, e):
                    p.copy_(v)
                res["ema"].append(dict(decay=d, heldout=evaluate(model, val, index, args.eval_seq, 64, args.device)))
                torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, os.path.join(rdir, "model-ema-%g.pt" % d))
            for p, v in zip(params, last):
                p.copy_(v)
    if ev.get("spike_rate_per_layer"):
        c = model.counts()
        # neuron-weighted mean over the spiking layers (all layers are the same width)
        res["spike_rate_overall"] = float(np.mean(ev["spike_rate_per_layer"]))
    with open(os.path.join(rdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, os.path.join(rdir, "model.pt"))
    log(event="done", bpb=ev["bpb"], ema_bpb={str(e["decay"]): e["heldout"]["bpb"] for e in res.get("ema", [])}, per_source={k: round(v["bpb"], 4) for k, v in ev["sources"].items()},
        spike_rate_per_layer=ev.get("spike_rate_per_layer"), train_seconds=round(elapsed, 1), steps=step)


if __name__ == "__main__":
    main()
