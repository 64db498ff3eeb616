"""Train several runs side by side on one GPU, each its own train.py process.

    python3 models/train/sweep.py SWEEP [--deadline SECONDS] [--pack DIR]

SWEEP holds one run a line, `NAME ARG...`: the run's name and train.py's
arguments without --run ('#' starts a comment). Every process gets one CPU
thread and the same device; a small model's step is bound by launching
kernels, so a dozen of them keep one GPU busy where one alone would leave it
idle. Before they start, gpu.check() compares the Triton LIF scan with
arch's.

At the deadline, runs still going are stopped; each resumes from its
last.pt (saved every two minutes) with the same command. --pack writes each
run's model.pt, model-ema-*.pt, results.json and log.jsonl into tar files of
at most 15 MB in DIR, for a machine that returns only a few files.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse_sweep(path):
    """The runs of a sweep file, (name, train.py arguments, step budget),
    each line's arguments checked by train.py's own parser before any
    run starts."""
    import train

    runs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = shlex.split(line, comments=True)
            if not words:
                continue
            if words[0].startswith("-") or "--run" in words:
                sys.exit("%s:%d: want NAME ARG... with no --run" % (path, n))
            try:
                a = train.parse(["--run"] + words)
                train.parse_decays(a.ema)
            except SystemExit:  # train.py has printed what it refuses
                sys.exit("%s:%d: run %s: train.py refuses its arguments" % (path, n, words[0]))
            runs.append((words[0], words[1:], a.steps))
    names = [r[0] for r in runs]
    if len(set(names)) != len(names):
        sys.exit("%s: a run name repeats" % path)
    return runs


def last_step(name):
    """The last step a run logged, and its final held-out bits per byte once done."""
    step, bpb = 0, None
    try:
        with open(os.path.join(HERE, "runs", name, "log.jsonl")) as f:
            for line in f:
                e = json.loads(line)
                step = e.get("step", e.get("steps", step))
                if e.get("event") == "done":
                    bpb = e["bpb"]
    except (OSError, ValueError):
        pass
    return step, bpb


def pack(names, out, limit=15 << 20):
    files = []
    for name in names:
        rdir = os.path.join(HERE, "runs", name)
        for f in sorted(os.listdir(rdir)):
            if f in ("model.pt", "results.json", "log.jsonl", "stdout.txt") or f.startswith("model-ema-"):
                files.append(os.path.join(rdir, f))
    os.makedirs(out, exist_ok=True)
    part, size, tar = 0, 0, None
    for p in files:
        n = os.path.getsize(p)
        if tar is None or size + n > limit:
            if tar:
                tar.close()
            part += 1
            tar, size = tarfile.open(os.path.join(out, "runs-%d.tar" % part), "w"), 0
        tar.add(p, arcname=os.path.relpath(p, HERE))
        size += n
    if tar:
        tar.close()


def trim(procs, target, steps, seen, now, left):
    """Stop runs from the end of the sweep while the slowest of the rest would
    not reach its steps in the time left, were the GPU shared among fewer."""
    rate = {n: (steps[n] - seen[n][1]) / (now - seen[n][0]) for n in procs
            if procs[n].poll() is None and target[n] and n in seen and steps[n] > seen[n][1]}
    going = [n for n in procs if n in rate]
    n0 = len(going)
    while len(going) > 1:
        need = max((target[n] - steps[n]) / (rate[n] * n0 / len(going)) for n in going)
        if need <= left:
            return
        name = going.pop()
        print("budget: stopping %s (the slowest of the rest needs %.0fs, %.0fs are left)" % (name, need, left), flush=True)
        procs[name].terminate()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sweep")
    p.add_argument("--deadline", type=float, default=0, help="seconds after which runs still going are stopped (0: none)")
    p.add_argument("--pack", default="")
    p.add_argument("--every", type=float, default=30, help="seconds between progress lines")
    p.add_argument("--budget", type=float, default=0,
                   help="seconds by which training should end (0: none): from a minute in, while the slowest run "
                        "would miss it, the last run of SWEEP still going is stopped, its share of the GPU going to the rest")
    args = p.parse_args()
    runs = parse_sweep(args.sweep)

    import torch
    if torch.cuda.is_available():
        import gpu
        print("gpu.check:", gpu.check(), flush=True)

    t0 = shown = time.time()
    target = {name: steps for name, _, steps in runs}
    seen = {}  # name -> (time, step) at the last progress line
    procs = {}
    for name, rest, _ in runs:
        os.makedirs(os.path.join(HERE, "runs", name), exist_ok=True)
        out = open(os.path.join(HERE, "runs", name, "stdout.txt"), "a")
        cmd = [sys.executable, os.path.join(HERE, "train.py"), "--run", name, "--threads", "1"] + rest
        procs[name] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    while any(q.poll() is None for q in procs.values()):
        if args.deadline and time.time() - t0 > args.deadline:
            for name, q in procs.items():
                if q.poll() is None:
                    print("deadline: stopping", name, flush=True)
                    q.terminate()
            for q in procs.values():
                q.wait()
            break
        time.sleep(5)
        if time.time() - shown >= args.every:
            shown = time.time()
            steps = {n: last_step(n)[0] for n in procs}
            print("%5.0fs " % (shown - t0) + " ".join("%s:%s" % (n, steps[n]) for n in procs), flush=True)
            if args.budget and shown - t0 > 60:
                trim(procs, target, steps, seen, shown, args.budget - (shown - t0))
            seen = {n: (shown, steps[n]) for n in procs}
    for name, q in procs.items():
        step, bpb = last_step(name)
        print("%-60s rc=%s step=%d bpb=%s" % (name, q.returncode, step, bpb), flush=True)
    if args.pack:
        pack(list(procs), args.pack)


if __name__ == "__main__":
    main()
