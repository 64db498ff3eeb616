"""The snnTorch workflow through the client: networks that snnTorch and Norse
built, saved and ran themselves (compile/pytorch/testdata/snn, written by
gen.py there) are compiled, deployed and run on the input the library ran,
and the output layer's spike counts must be the library's.

Each fixture's JSON holds the input sequence (``input``, one row per step,
``steps`` rows) and what every spiking layer emitted at each step
(``layers[prefix].spikes``, ``.mem``). The output layer is the last prefix;
its counts are its spikes summed over the steps, or, for Norse's
leaky-integrator readout (``LICell``), its final membrane, which is what
the server's ``spike_counts`` holds for a graded output.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any, Dict, List, Optional

import pytest

import neuro
from conftest import SNN_FIXTURES, Server

# State_dicts that describe themselves (snnTorch keeps its neurons'
# parameters as buffers) need no options; Norse's hold only weights, so the
# layers are described in options.layers, with the parameters gen.py used.
NORSE_LAYERS = {
    "norse_lif": [("0", "linear"), ("1", "norse.lif"), ("2", "linear"), ("3", "norse.lif"), ("4", "linear"), ("5", "norse.li")],
    "norse_lifrecurrent": [("0", "norse.lifrecurrent"), ("1", "linear"), ("2", "norse.lif")],
}
FIXTURES = [
    "snntorch_leaky",
    "snntorch_synaptic",
    "snntorch_rleaky",
    "snntorch_rsynaptic_v",
    "norse_lif",
    "norse_lifrecurrent",
]


def load(name: str) -> Dict[str, Any]:
    with open(os.path.join(SNN_FIXTURES, name + ".json")) as f:
        return json.load(f)


def reference_counts(ref: Dict[str, Any]) -> List[float]:
    out = ref["layers"][max(ref["layers"], key=int)]
    steps = ref["steps"]
    if out["kind"] == "LICell":
        return out["mem"][steps - 1]
    return [sum(row[i] for row in out["spikes"][:steps]) for i in range(len(out["spikes"][0]))]


def options(name: str, ref: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    if name not in NORSE_LAYERS:
        return None
    layers = [{"name": n, "kind": k, "params": ref["params"].get(n)} for n, k in NORSE_LAYERS[name]]
    return {"layers": layers, "dt": ref["dt"]}


def f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


@pytest.mark.parametrize("name", FIXTURES)
def test_framework_network(server: Server, client: neuro.Client, name: str) -> None:
    ref = load(name)
    want = reference_counts(ref)
    net = client.networks.compile(os.path.join(SNN_FIXTURES, name + ".pt"), options=options(name, ref))
    assert net.source.format == "pytorch" and net.network.outputs == len(want)
    rows = ref["input"][: ref["steps"]]
    counts: Dict[str, List[float]] = {}
    try:
        for device in ("cpu", "loihi"):
            dep = client.deployments.create(model=net.id, device=device, wait=True)
            try:
                assert dep.status == "ready", dep.failure
                run = client.deployments.run(dep.id, inputs=[rows])
                assert run.usage.timesteps == ref["steps"]
                counts[device] = run.outputs[0].spike_counts
                if device == "loihi":
                    assert run.warnings, "the loihi run states no quantisation"
            finally:
                client.deployments.delete(dep.id)
    finally:
        client.models.delete(net.id)
    # The float simulator reproduces the library exactly (float32 values).
    assert [f32(v) for v in counts["cpu"]] == [f32(v) for v in want], "%s: cpu %s, %s %s" % (
        name,
        counts["cpu"],
        ref["library"],
        want,
    )
    # The Loihi emulator runs in fixed point: a few spikes apart at most.
    if ref["layers"][max(ref["layers"], key=int)]["kind"] != "LICell":
        diff = sum(abs(a - b) for a, b in zip(counts["loihi"], want))
        assert diff <= 3 * len(want), "%s: loihi %s, %s %s" % (name, counts["loihi"], ref["library"], want)


def test_state_dict_through_torch(client: neuro.Client) -> None:
    """The same fixture loaded with torch and handed over as a state_dict."""
    torch = pytest.importorskip("torch")
    name = "snntorch_leaky"
    ref = load(name)
    state = torch.load(os.path.join(SNN_FIXTURES, name + ".pt"))
    net = client.networks.compile(state)
    try:
        dep = client.deployments.create(model=net.id, wait=True)
        try:
            x = torch.tensor(ref["input"][: ref["steps"]], dtype=torch.float32)
            run = client.deployments.run(dep.id, inputs=x.unsqueeze(0))
            assert run.outputs[0].spike_counts == reference_counts(ref)
        finally:
            client.deployments.delete(dep.id)
    finally:
        client.models.delete(net.id)
