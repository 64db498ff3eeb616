#!/usr/bin/python3
"""The CUBA benchmark (Brette et al. 2007, benchmark 2) in Brian2, for comparison
with `go run ./bench/cuba`.

The network is Brian2's examples/CUBA.py unchanged: 4000 LIF neurons (3200
excitatory, 800 inhibitory), random connectivity p = 0.02, current-based
exponential synapses, dt = 0.1 ms, exact (linear) integration. It runs in
cpp_standalone mode on one thread (no OpenMP), and the wall time reported is
Brian2's own measurement of the simulation run (device._last_run_time, the
value it also writes to results/last_run_info.txt), so code generation and C++
compilation are excluded.

Prints one JSON line:
  {"tool":"brian2","neurons":4000,"synapses":N,"spikes":K,"rate_hz":R,
   "sim_seconds":S,"wall_seconds":W}
rate_hz = spikes / neurons / sim_seconds, as in the Go program.

    /usr/bin/python3 bench/cuba/brian2_cuba.py --seconds 10
"""

import argparse
import json
import os
import shutil
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="biological time to simulate (s)")
    ap.add_argument("--seed", type=int, default=4321, help="seed for connectivity and initial v")
    ap.add_argument("--directory", default="", help="standalone project folder to build in and keep "
                    "(default: a temporary folder, removed afterwards)")
    ap.add_argument("--verbose", action="store_true", help="show Brian2's build output on stderr")
    args = ap.parse_args()

    # Brian2 logs and prints build chatter; keep stdout to the one JSON line.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    import brian2 as b2
    from brian2 import ms, mV, second

    workdir = args.directory or tempfile.mkdtemp(prefix="brian2_cuba_")
    b2.set_device("cpp_standalone", directory=workdir, build_on_run=True)
    b2.prefs.devices.cpp_standalone.openmp_threads = 0  # single thread, no OpenMP
    if not args.verbose:
        b2.prefs.logging.console_log_level = "WARNING"
    b2.seed(args.seed)
    b2.defaultclock.dt = 0.1 * ms

    taum = 20 * ms
    taue = 5 * ms
    taui = 10 * ms
    Vt = -50 * mV
    Vr = -60 * mV
    El = -49 * mV

    eqs = """
    dv/dt  = (ge+gi-(v-El))/taum : volt (unless refractory)
    dge/dt = -ge/taue : volt
    dgi/dt = -gi/taui : volt
    """

    P = b2.NeuronGroup(4000, eqs, threshold="v>Vt", reset="v = Vr", refractory=5 * ms,
                       method="exact")
    P.v = "Vr + rand() * (Vt - Vr)"
    P.ge = 0 * mV
    P.gi = 0 * mV

    we = (60 * 0.27 / 10) * mV  # excitatory synaptic weight (voltage)
    wi = (-20 * 4.5 / 10) * mV  # inhibitory synaptic weight
    Ce = b2.Synapses(P, P, on_pre="ge += we")
    Ci = b2.Synapses(P, P, on_pre="gi += wi")
    Ce.connect("i<3200", p=0.02)
    Ci.connect("i>=3200", p=0.02)

    # Counts only (record=False): recording every spike time would add work
    # that the Go program does not do.
    s_mon = b2.SpikeMonitor(P, record=False)

    try:
        b2.run(args.seconds * second, namespace=locals())
        wall = float(b2.device._last_run_time)
        info = os.path.join(workdir, "results", "last_run_info.txt")
        if os.path.exists(info):
            with open(info) as f:
                wall = float(f.read().split()[0])
        spikes = int(s_mon.num_spikes)
        synapses = int(len(Ce) + len(Ci))
    finally:
        if not args.directory:
            shutil.rmtree(workdir, ignore_errors=True)

    out = {
        "tool": "brian2",
        "neurons": 4000,
        "synapses": synapses,
        "spikes": spikes,
        "rate_hz": spikes / 4000 / args.seconds,
        "sim_seconds": args.seconds,
        "wall_seconds": wall,
    }
    sys.stdout = real_stdout
    print(json.dumps(out, separators=(",", ":")))


if __name__ == "__main__":
    main()
