#!/usr/bin/env python3
"""Measures what the client adds to a call: the time per call of a small run
request (one 64-value sample on the digits network) made with
``client.deployments.run`` against the same request made with a bare
``http.client`` connection, interleaved in one run so that both see the same
server and machine.

Both keep their connection alive and both encode the request and decode the
answer with json; the client adds building the request, its retry and error
handling and the typed result.

The server allows a key 600 requests a minute, so the calls are made in
blocks of PER_KEY pairs, one key per block: a server the script starts
itself gets 16 keys; against another, give as many keys as it accepts.

    python3 bench_overhead.py --server /path/to/server [--mock]   # starts one
    python3 bench_overhead.py --base-url http://127.0.0.1:8080 --api-key k1,k2,k3

It exits 1 when the client's median is more than --target (10%) above the
bare call's.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

import neuro  # noqa: E402

# Pairs of calls made with one key: with the warm-up pairs, under the
# server's 600 requests a minute.
PER_KEY = 280
WARMUP = 5


def start_server(binary: str, mock: bool, keys: "list[str]") -> "tuple[subprocess.Popen, str]":
    args = [binary, "-addr", "127.0.0.1:0", "-console=false"] + (["-mock"] if mock else [])
    proc = subprocess.Popen(
        args, env=dict(os.environ, NEURO_API_KEYS=",".join(keys)), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.match(rb"Serving on (http://\S+?) ", line)
        if m:
            return proc, m.group(1).decode()
    raise SystemExit("the server did not start")


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", default=os.environ.get("NEURO_BASE_URL"))
    ap.add_argument("--api-key", default=os.environ.get("NEURO_API_KEY"), help="one key, or several comma-separated")
    ap.add_argument("--server", help="a server binary to start (go build -o server ./examples/server)")
    ap.add_argument("--mock", action="store_true", help="start the server in mock mode")
    ap.add_argument("--deployment", default="neuro-1-digits-cpu")
    ap.add_argument("--keys", type=int, default=16, help="keys to give a server the script starts")
    ap.add_argument("--target", type=float, default=0.10, help="the overhead allowed, as a fraction")
    a = ap.parse_args()

    proc = None
    if a.server:
        a.api_key = ",".join("sk-bench-%d" % i for i in range(a.keys))
        proc, a.base_url = start_server(a.server, a.mock, a.api_key.split(","))
    if not a.base_url or not a.api_key:
        raise SystemExit("give --base-url and --api-key (or NEURO_BASE_URL, NEURO_API_KEY), or --server")
    try:
        return bench(a)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()


def bench(a: argparse.Namespace) -> int:
    sample = [((i * 37) % 17) / 16.0 for i in range(64)]
    body = {"inputs": [sample]}
    base = neuro.Client(base_url=a.base_url).base_url
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port)
    path = u.path + "/v1/deployments/%s/run" % a.deployment
    t_raw: "list[int]" = []
    t_client: "list[int]" = []
    cpu_raw: "list[int]" = []
    cpu_client: "list[int]" = []
    clock, cpu = time.perf_counter_ns, time.process_time_ns
    for key in a.api_key.split(","):
        client = neuro.Client(base_url=base, api_key=key)
        headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}

        def raw() -> list:
            conn.request("POST", path, json.dumps(body), headers)
            resp = conn.getresponse()
            data = json.loads(resp.read())
            if resp.status != 200:
                raise SystemExit("raw call: %d %s" % (resp.status, data))
            return data["outputs"][0]["spike_counts"]

        def typed() -> list:
            return client.deployments.run(a.deployment, inputs=[sample]).outputs[0].spike_counts

        if raw() != typed():
            raise SystemExit("the two calls disagree")
        for i in range(WARMUP + PER_KEY):
            # Alternate which goes first, so that neither always follows the other.
            pair = (raw, typed) if i % 2 == 0 else (typed, raw)
            for f in pair:
                c, t = cpu(), clock()
                f()
                t, c = clock() - t, cpu() - c
                if i >= WARMUP:
                    (t_raw if f is raw else t_client).append(t)
                    (cpu_raw if f is raw else cpu_client).append(c)
        client.close()

    def us(ns: float) -> float:
        return ns / 1000.0

    med_raw, med_client = statistics.median(t_raw), statistics.median(t_client)
    mean_raw, mean_client = statistics.mean(t_raw), statistics.mean(t_client)
    cpu_r, cpu_c = statistics.mean(cpu_raw), statistics.mean(cpu_client)
    over = med_client / med_raw - 1
    print("CPU: %s; Python %s; server %s; deployment %s" % (cpu_name(), platform.python_version(), a.base_url, a.deployment))
    print("%d calls each, interleaved, in blocks of %d per key" % (len(t_raw), PER_KEY))
    print("%-12s %10s %10s %14s" % ("per call", "median", "mean", "client CPU"))
    print("%-12s %7.1f us %7.1f us %11.1f us" % ("http.client", us(med_raw), us(mean_raw), us(cpu_r)))
    print("%-12s %7.1f us %7.1f us %11.1f us" % ("neuro", us(med_client), us(mean_client), us(cpu_c)))
    print(
        "overhead: %+.1f us (%+.1f%%) median, %+.1f us (%+.1f%%) mean, %+.1f us of CPU; target within %.0f%%: %s"
        % (
            us(med_client - med_raw),
            100 * over,
            us(mean_client - mean_raw),
            100 * (mean_client / mean_raw - 1),
            us(cpu_c - cpu_r),
            100 * a.target,
            "met" if over <= a.target else "NOT met",
        )
    )
    return 0 if over <= a.target else 1


if __name__ == "__main__":
    sys.exit(main())
