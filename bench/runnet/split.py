#!/usr/bin/env python3
"""Splits CPU profiles of bench/runnet by where the time went: each
sample goes to the innermost frame of the program's own packages on its
stack (the standard library's work, such as encoding/json or memmove,
counts for the package that called it), or, with none, to the HTTP
transport or to Go's runtime (garbage collection, scheduling).

    go run ./bench/runnet -dir DIR -nets shd -activities 5 -seconds 3 -cpuprofile /tmp/p
    python3 bench/runnet/split.py /tmp/p.shd_5.*

Prints a Markdown table, one row per profile, in percent of its samples.
"""

import re
import subprocess
import sys

CATEGORIES = [
    ("simulation", re.compile(r"^github\.com/neuro-go/neuro/snn\.")),
    ("runtime: samples and slots", re.compile(r"^github\.com/neuro-go/neuro/runtime[./]")),
    ("client: request encoding", re.compile(r"^github\.com/neuro-go/neuro/httpapi/(wire|client)\.")),
    ("server: body reading and decoding", re.compile(r"^github\.com/neuro-go/neuro/httpapi\.")),
    ("bench harness", re.compile(r"^main\.")),
]
TRANSPORT = re.compile(r"^(net/http|net\.|internal/poll|bufio|syscall|crypto/)")
ORDER = [c for c, _ in CATEGORIES[:4]] + ["HTTP transport", "Go runtime (GC, scheduler)", "bench harness"]


def classify(frames):
    """frames: function names, innermost first."""
    for f in frames:
        for name, pat in CATEGORIES:
            if pat.search(f):
                return name
    if any(TRANSPORT.search(f) for f in frames):
        return "HTTP transport"
    return "Go runtime (GC, scheduler)"


def split(path):
    out = subprocess.run(["go", "tool", "pprof", "-traces", path], capture_output=True, text=True, check=True).stdout
    totals = {}
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.strip().splitlines() if l.strip()]
        if not lines:
            continue
        m = re.match(r"\s*([\d.]+)(ms|s|us|ns)?\s+(\S+)", lines[0])
        if not m:
            continue
        value = float(m.group(1)) * {"s": 1e3, "ms": 1, "us": 1e-3, "ns": 1e-6, None: 1}[m.group(2)]
        frames = [m.group(3)] + [l.split()[0] for l in lines[1:]]
        c = classify(frames)
        totals[c] = totals.get(c, 0) + value
    return totals


def main(paths):
    print("| profile | " + " | ".join(ORDER) + " |")
    print("|---|" + "---:|" * len(ORDER))
    for p in paths:
        t = split(p)
        s = sum(t.values()) or 1
        print(f"| {p.split('.', 1)[-1]} | " + " | ".join(f"{100 * t.get(c, 0) / s:.0f}" for c in ORDER) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
