#!/usr/bin/python3
"""Writes neuron reference traces from snnTorch and Norse into this folder.

Each case runs one real library neuron module for T steps on N independent
neurons (one batch row, N features) with fixed inputs, and records, per step,
the input, the output spikes, the membrane the library returns/holds after the
step, and the synaptic current where the neuron has one. See README.md for how
to fetch the libraries and what each recorded value means.

Usage (after fetch_libs.sh):
    PYTHONPATH=/tmp/neuro-ref/snntorch:/tmp/neuro-ref/norse:/tmp/neuro-ref/nir:/tmp/neuro-ref/nirtorch \
        /usr/bin/python3 snn/testdata/reference/gen_reference.py [--libs /tmp/neuro-ref] [--out DIR]
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

T = 100  # steps per case
N = 6  # neurons per case
SEED = 20240611  # base seed for the two random-input neurons of each case


def lib_commit(libs, name):
    try:
        with open(os.path.join(libs, name, "COMMIT")) as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def make_inputs(consts, rand_hi, seed):
    """T x N float32 inputs: four constant neurons, then two seeded random ones
    drawn uniformly from [0, rand_hi) at every step."""
    rng = np.random.default_rng(seed)
    x = np.zeros((T, N), dtype=np.float32)
    for j, c in enumerate(consts):
        x[:, j] = c
    x[:, len(consts):] = rng.uniform(0.0, rand_hi, size=(T, N - len(consts)))
    return torch.from_numpy(x)


def f32list(t):
    # float32 values widened to float64 exactly, so the JSON holds the very
    # values the library computed (e.g. 0.15 appears as 0.15000000596046448).
    return [[float(v) for v in row] for row in t.tolist()]


def run_snntorch_leaky(neuron, x):
    spk_out, mem_out = [], []
    mem = neuron.reset_mem()  # zeros(0); first forward sizes it to the input
    with torch.no_grad():
        for t in range(T):
            spk, mem = neuron(x[t : t + 1], mem)
            spk_out.append(spk[0].clone())
            mem_out.append(mem[0].clone())
    return torch.stack(spk_out), torch.stack(mem_out), None


def run_snntorch_synaptic(neuron, x):
    spk_out, mem_out, syn_out = [], [], []
    syn, mem = neuron.reset_mem()
    with torch.no_grad():
        for t in range(T):
            spk, syn, mem = neuron(x[t : t + 1], syn, mem)
            spk_out.append(spk[0].clone())
            syn_out.append(syn[0].clone())
            mem_out.append(mem[0].clone())
    return torch.stack(spk_out), torch.stack(mem_out), torch.stack(syn_out)


def run_norse_lifcell(cell, x):
    spk_out, mem_out, syn_out = [], [], []
    state = None  # Norse's own initial state: v = v_leak, i = 0
    with torch.no_grad():
        for t in range(T):
            z, state = cell(x[t : t + 1], state)
            spk_out.append(z[0].detach().clone())
            # v may broadcast from a 0-d initial tensor on the first step
            mem_out.append(torch.broadcast_to(state.v, z.shape)[0].detach().clone())
            syn_out.append(state.i[0].detach().clone())
    return torch.stack(spk_out), torch.stack(mem_out), torch.stack(syn_out)


SNNTORCH_LEAKY_MEM = (
    "snntorch Leaky.forward's returned mem after the step (== its held state "
    "self.mem). With reset_delay=True (the default) this is the value BEFORE "
    "reset: a neuron whose mem crosses the threshold at step t returns that "
    "supra-threshold mem, and the reset is applied inside step t+1's update."
)
SNNTORCH_LEAKY_MEM_NODELAY = (
    "snntorch Leaky.forward's returned mem after the step with reset_delay=False: "
    "the reset is applied in the same step the spike fires, so this is the value "
    "AFTER reset (subtract: mem - threshold)."
)
SNNTORCH_SYN_MEM = (
    "snntorch Synaptic.forward's returned mem after the step (== self.mem). With "
    "reset_delay=True (the default) this is the value BEFORE reset; the reset is "
    "applied inside the next step's update."
)
SNNTORCH_SYN_SYN = "snntorch Synaptic.forward's returned syn after the step (== self.syn); never reset."
NORSE_MEM = (
    "state.v of the LIFFeedForwardState returned by LIFCell.forward after the "
    "step: the value AFTER reset (v_reset where the neuron spiked this step)."
)
NORSE_SYN = (
    "state.i of the returned LIFFeedForwardState after the step: the current "
    "after this step's input jump AND this step's decay (i_decayed), i.e. the "
    "value the next step starts from."
)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libs", default="/tmp/neuro-ref", help="folder written by fetch_libs.sh")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_default_dtype(torch.float32)

    import snntorch
    import norse
    from norse.torch import LIFCell, LIFParameters

    for mod, name in ((snntorch, "snntorch"), (norse, "norse")):
        path = os.path.abspath(mod.__file__)
        if not path.startswith(os.path.abspath(args.libs)):
            print(f"gen_reference: warning: {name} imported from {path}, not {args.libs}", file=sys.stderr)

    snt_commit = lib_commit(args.libs, "snntorch")
    norse_commit = lib_commit(args.libs, "norse")
    common = {"torch_version": torch.__version__, "dtype": "float32", "batch": 1}

    cases = []

    def snt_case(name, cls, params, consts, rand_hi, seed_off, recorded):
        cases.append(
            dict(
                case=name,
                framework="snntorch",
                neuron=cls,
                library_version=snntorch.__version__,
                library_commit=snt_commit,
                params=params,
                recorded=recorded,
                consts=consts,
                rand_hi=rand_hi,
                seed=SEED + seed_off,
            )
        )

    snt_case(
        "snntorch_leaky_subtract", "Leaky",
        {"beta": 0.9, "threshold": 1.0, "reset_mechanism": "subtract", "reset_delay": True},
        [0.05, 0.15, 0.3, 0.6], 0.5, 1, {"mem": SNNTORCH_LEAKY_MEM},
    )
    snt_case(
        "snntorch_leaky_zero", "Leaky",
        {"beta": 0.8, "threshold": 1.0, "reset_mechanism": "zero", "reset_delay": True},
        [0.05, 0.15, 0.3, 0.6], 0.5, 2, {"mem": SNNTORCH_LEAKY_MEM},
    )
    snt_case(
        "snntorch_leaky_subtract_perneuron", "Leaky",
        {"beta": [0.5, 0.7, 0.8, 0.9, 0.95, 0.99], "threshold": 0.7,
         "reset_mechanism": "subtract", "reset_delay": True},
        [0.05, 0.15, 0.3, 0.6], 0.5, 3, {"mem": SNNTORCH_LEAKY_MEM},
    )
    snt_case(
        "snntorch_synaptic_subtract", "Synaptic",
        {"alpha": 0.8, "beta": 0.9, "threshold": 1.0, "reset_mechanism": "subtract", "reset_delay": True},
        [0.01, 0.03, 0.1, 0.3], 0.1, 4, {"mem": SNNTORCH_SYN_MEM, "syn": SNNTORCH_SYN_SYN},
    )
    snt_case(
        "snntorch_synaptic_zero", "Synaptic",
        {"alpha": 0.7, "beta": 0.85, "threshold": 1.0, "reset_mechanism": "zero", "reset_delay": True},
        [0.02, 0.06, 0.15, 0.5], 0.15, 5, {"mem": SNNTORCH_SYN_MEM, "syn": SNNTORCH_SYN_SYN},
    )
    # Not in the original brief, kept because it pins the other reset timing.
    snt_case(
        "snntorch_leaky_subtract_nodelay", "Leaky",
        {"beta": 0.9, "threshold": 1.0, "reset_mechanism": "subtract", "reset_delay": False},
        [0.05, 0.15, 0.3, 0.6], 0.5, 1, {"mem": SNNTORCH_LEAKY_MEM_NODELAY},
    )

    # method: Norse's default is "super" (SuperSpike surrogate), whose forward is
    # exactly heaviside(x) = (x > 0). This snapshot writes SuperSpike as a
    # torch>=2.0 autograd.Function (forward without ctx + setup_context), which
    # torch 1.13 cannot call, so the fixtures use method="heaviside": the same
    # forward values, only the (unused) surrogate gradient differs.
    def norse_case(name, params, consts, rand_hi, seed_off):
        cases.append(
            dict(
                case=name,
                framework="norse",
                neuron="LIFCell",
                library_version=getattr(norse, "__version__", "unknown (not installed; see library_commit)"),
                library_commit=norse_commit,
                params=params,
                recorded={"mem": NORSE_MEM, "syn": NORSE_SYN},
                consts=consts,
                rand_hi=rand_hi,
                seed=SEED + seed_off,
            )
        )

    norse_case(
        "norse_lifcell",
        {"tau_syn_inv": 200.0, "tau_mem_inv": 100.0, "v_leak": 0.0, "v_th": 1.0, "v_reset": 0.0,
         "method": "heaviside", "alpha": 100.0, "dt": 0.001},
        [0.1, 0.25, 0.5, 2.0], 1.0, 6,
    )
    norse_case(
        "norse_lifcell_leak",
        {"tau_syn_inv": 150.0, "tau_mem_inv": 80.0, "v_leak": 0.2, "v_th": 0.8, "v_reset": -0.1,
         "method": "heaviside", "alpha": 100.0, "dt": 0.001},
        [0.05, 0.1, 0.3, 1.0], 0.6, 7,
    )

    for c in cases:
        x = make_inputs(c["consts"], c["rand_hi"], c["seed"])
        p = c["params"]
        if c["framework"] == "snntorch":
            beta = p["beta"]
            beta_arg = torch.tensor(beta, dtype=torch.float32) if isinstance(beta, list) else beta
            if c["neuron"] == "Leaky":
                nrn = snntorch.Leaky(beta=beta_arg, threshold=p["threshold"],
                                     reset_mechanism=p["reset_mechanism"], reset_delay=p["reset_delay"])
                spk, mem, syn = run_snntorch_leaky(nrn, x)
            else:
                nrn = snntorch.Synaptic(alpha=p["alpha"], beta=beta_arg, threshold=p["threshold"],
                                        reset_mechanism=p["reset_mechanism"], reset_delay=p["reset_delay"])
                spk, mem, syn = run_snntorch_synaptic(nrn, x)
        else:
            lp = LIFParameters(
                tau_syn_inv=torch.as_tensor(p["tau_syn_inv"]),
                tau_mem_inv=torch.as_tensor(p["tau_mem_inv"]),
                v_leak=torch.as_tensor(p["v_leak"]),
                v_th=torch.as_tensor(p["v_th"]),
                v_reset=torch.as_tensor(p["v_reset"]),
                method=p["method"],
                alpha=torch.as_tensor(p["alpha"]),
            )
            cell = LIFCell(lp, dt=p["dt"])
            spk, mem, syn = run_norse_lifcell(cell, x)

        doc = {
            "case": c["case"],
            "framework": c["framework"],
            "neuron": c["neuron"],
            "library_version": c["library_version"],
            "library_commit": c["library_commit"],
            **common,
            "params": p,
            "recorded": c["recorded"],
            "input_desc": {
                "constant": c["consts"],
                "constant_neurons": list(range(len(c["consts"]))),
                "random_neurons": list(range(len(c["consts"]), N)),
                "random": f"numpy default_rng({c['seed']}).uniform(0, {c['rand_hi']}, size=({T}, {N - len(c['consts'])})) cast to float32",
                "note": "input[t] is the value passed to the module's forward at step t (snnTorch: input_; Norse: input_tensor, added to i before integration)",
            },
            "initial_state": (
                {"mem": 0.0, "syn": 0.0} if c["framework"] == "snntorch"
                else {"v": p["v_leak"], "i": 0.0, "note": "Norse LIFCell.initial_state: v = v_leak, i = 0"}
            ),
            "steps": T,
            "neurons": N,
            "input": f32list(x),
            "spikes": [[int(v) for v in row] for row in spk.tolist()],
            "mem": f32list(mem),
        }
        if syn is not None:
            doc["syn"] = f32list(syn)
        path = os.path.join(args.out, c["case"] + ".json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")
        counts = spk.sum(0).int().tolist()
        print(f"{c['case']}: spikes per neuron {counts}")


if __name__ == "__main__":
    main()
