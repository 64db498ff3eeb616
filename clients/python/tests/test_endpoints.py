"""Every endpoint of the API through the client, against a real server in
mock and real mode."""

from __future__ import annotations

import io
import os

import pytest

import neuro
from neuro import types
from conftest import ROOT, Server

BUILTINS = ["neuro-1-lite", "neuro-1-standard", "neuro-1-heavy"]
DIGITS_ONNX = os.path.join(ROOT, "compile", "testdata", "digits", "mlp.onnx")


def user(text: str):
    return [{"role": "user", "content": text}]


def test_health(server: Server, client: neuro.Client) -> None:
    h = client.health()
    assert isinstance(h, dict)
    assert h["status"] == "ok" and h["mock"] is server.mock
    assert {"neuro-1-lite-cpu", "neuro-1-lite-loihi"} <= {d["id"] for d in h["deployments"]}
    # /health is public: a client without a key may call it.
    assert server.client(key=None).health()["status"] == "ok"


def test_metrics(client: neuro.Client) -> None:
    client.models.list()
    text = client.metrics()
    assert "neuro_http_requests_total" in text


def test_models(server: Server, client: neuro.Client) -> None:
    models = client.models.list()
    assert isinstance(models, types.Page) and models.data is models
    ids = {m.id: m for m in models}
    for mid in BUILTINS:
        m = ids[mid]
        assert isinstance(m, types.Model) and m.object == "model"
        assert m.capabilities.chat and m.capabilities.streaming
        assert m.neuromorphic is not None and m.neuromorphic.neurons > 0
    assert "neuro-1" not in ids
    m = client.models.retrieve("neuro-1")
    assert m.id == "neuro-1-standard"
    assert m.card is not None and m.card.quality and m.card.architecture
    assert m.to_dict()["id"] == "neuro-1-standard"
    assert m == client.models.retrieve("neuro-1-standard")


def test_deployments_of_the_server(client: neuro.Client) -> None:
    deps = client.deployments.list()
    kinds = {d.device.kind for d in deps}
    assert {"cpu", "emulator"} <= kinds
    assert all(d.object == "deployment" and d.status == "ready" for d in deps)
    d = client.deployments.retrieve("neuro-1-lite-loihi")
    assert isinstance(d, types.Deployment)
    assert d.model == "neuro-1-lite" and d.device.name == "loihi" and d.owned_by == "system"
    assert d.load.active >= 0 and d.load.queued >= 0


def test_chat(server: Server, client: neuro.Client) -> None:
    r = client.chat.completions.create(model="neuro-1-lite", messages=user("Hi"), max_tokens=8, temperature=0)
    assert isinstance(r, types.ChatCompletion)
    assert r.id.startswith("chatcmpl-") and r.object == "chat.completion" and r.model == "neuro-1-lite"
    c = r.choices[0]
    assert c.message.role == "assistant" and c.message.content
    assert c.finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 0 and 0 < r.usage.completion_tokens <= 8
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert r.usage.neuromorphic.timesteps > 0


def test_chat_options(client: neuro.Client) -> None:
    r = client.chat.completions.create(
        model="neuro-1-lite",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        max_completion_tokens=4,
        n=2,
        seed=7,
        logprobs=True,
        top_logprobs=2,
        extra_headers={"X-Request-Id": "python-client-test"},
    )
    assert [c.index for c in r.choices] == [0, 1]
    lp = r.choices[0].logprobs.content
    assert lp and isinstance(lp[0], types.ChatCompletionTokenLogprob) and len(lp[0].top_logprobs) == 2


def test_chat_through_a_deployment(client: neuro.Client) -> None:
    r = client.chat.completions.create(deployment="neuro-1-lite-loihi", messages=user("Hi"), max_tokens=4)
    assert r.model == "neuro-1-lite" and r.choices[0].message.content
    t = client.telemetry.retrieve(deployment="neuro-1-lite-loihi")
    assert t.by_deployment["neuro-1-lite-loihi"].requests.by_endpoint["/v1/deployments/{deployment_id}/chat/completions"] >= 1


def test_completions(client: neuro.Client) -> None:
    r = client.completions.create(model="neuro-1-lite", prompt="Once upon a time", max_tokens=6, temperature=0)
    assert isinstance(r, types.Completion) and r.object == "text_completion" and r.id.startswith("cmpl-")
    assert r.choices[0].text and r.usage.completion_tokens <= 6
    two = client.completions.create(model="neuro-1-lite", prompt=["A", "B"], max_tokens=2, n=2)
    assert sorted(c.index for c in two.choices) == [0, 1, 2, 3]
    echo = client.completions.create(model="neuro-1-lite", prompt="The cat", max_tokens=0, echo=True, logprobs=1)
    assert echo.choices[0].text == "The cat"
    assert echo.choices[0].logprobs.token_logprobs[0] is None


def test_telemetry(client: neuro.Client) -> None:
    client.chat.completions.create(model="neuro-1-lite", messages=user("Hi"), max_tokens=2)
    t = client.telemetry.retrieve(window="5m", model="neuro-1-lite")
    assert isinstance(t, types.Telemetry) and t.object == "telemetry"
    assert t.requests.total >= 1 and t.tokens.completion >= 1 and t.latency_ms.p50 > 0
    assert isinstance(t.by_model["neuro-1-lite"], types.TelemetryGroup)
    assert t.window.end >= t.window.start
    with pytest.raises(neuro.BadRequestError) as e:
        client.telemetry.retrieve(window="yesterday")
    assert e.value.param == "window"


def test_network_lifecycle(server: Server, client: neuro.Client) -> None:
    """Compile (from a path, bytes and a file), deploy, run in every input
    form, and delete."""
    with open(DIGITS_ONNX, "rb") as f:
        blob = f.read()
    net = client.networks.compile(DIGITS_ONNX, options={"timesteps": 16}, name="digits-test")
    assert isinstance(net, types.CompiledNetwork)
    assert net.id.startswith("net-") and net.status == "succeeded" and net.name == "digits-test"
    assert net.source.format == "onnx" and net.source.bytes == len(blob)
    assert net.network.inputs == 64 and net.network.outputs == 10 and net.target.fits
    assert net.report["network"]["neurons"] == net.network.neurons
    assert client.networks.compile(blob, format="onnx").source.sha256 == net.source.sha256
    again = client.networks.compile(io.BytesIO(blob), format="onnx")
    client.models.delete(again.id)

    assert net.id in {m.id for m in client.models.list()}
    assert client.models.retrieve(net.id).owned_by == net.owned_by
    dep_id = "digits-%s" % server.mode
    dep = client.deployments.create(model=net.id, device="cpu", id=dep_id, max_batch_size=4, precision="bfloat16", wait=True)
    try:
        assert dep.id == dep_id and dep.status == "ready" and dep.device.model == "bfloat16 simulator"
        assert dep_id in {d.id for d in client.deployments.list()}
        x = [0.0] * 64
        x[10], x[20] = 1.0, 0.5
        out = client.deployments.run(
            dep_id,
            inputs=[x, [x] * 16, {"events": [[0, 3], [2, 9]], "timesteps": 8}],
            record=["spikes"],
        )
        assert isinstance(out, types.Run) and out.object == "network.run" and out.deployment == dep_id
        assert out.usage.samples == 3 and out.usage.timesteps == 16 + 16 + 8
        assert out.outputs[0].spike_counts == out.outputs[1].spike_counts
        assert out.outputs[0].prediction == max(range(10), key=lambda i: (out.outputs[0].spike_counts[i], -i))
        assert out.outputs[0].spikes is not None
        # Events in compact form run as the same events.
        packed = client.deployments.run(dep_id, inputs=[neuro.pack_events([[0, 3], [2, 9]], 8)], record=["spikes"])
        assert packed.outputs[0].spike_counts == out.outputs[2].spike_counts
        assert packed.outputs[0].spikes == out.outputs[2].spikes
        # And as a raster of bits.
        raster = client.deployments.run(dep_id, inputs=[neuro.pack_raster([[0, 3], [2, 9]], 8, 64)], record=["spikes"])
        assert raster.outputs[0].spike_counts == out.outputs[2].spike_counts
        assert raster.outputs[0].spikes == out.outputs[2].spikes
        assert raster.outputs[0].prediction == out.outputs[2].prediction
        # A generator of samples works as well as a list.
        gen = client.deployments.run(dep_id, inputs=(s for s in [x]))
        assert gen.outputs[0].spike_counts == out.outputs[0].spike_counts
    finally:
        assert client.deployments.delete(dep_id).deleted
    with pytest.raises(neuro.NotFoundError):
        client.deployments.retrieve(dep_id)
    gone = client.models.delete(net.id)
    assert gone.deleted and gone.id == net.id
    with pytest.raises(neuro.NotFoundError):
        client.models.retrieve(net.id)


def test_run_numpy_and_torch(client: neuro.Client) -> None:
    np = pytest.importorskip("numpy")
    x = np.zeros((2, 64), dtype=np.float32)
    x[:, 5] = 1.0
    x[1, 40] = 0.75
    out = client.deployments.run("neuro-1-digits-cpu", inputs=x)
    as_lists = client.deployments.run("neuro-1-digits-cpu", inputs=x.tolist())
    assert [o.spike_counts for o in out.outputs] == [o.spike_counts for o in as_lists.outputs]
    mixed = client.deployments.run("neuro-1-digits-cpu", inputs=[x[0], x[1].tolist()], timesteps=np.int64(32))
    assert mixed.usage.timesteps == 64
    torch = pytest.importorskip("torch")
    t = client.deployments.run("neuro-1-digits-cpu", inputs=torch.from_numpy(x).requires_grad_())
    assert [o.spike_counts for o in t.outputs] == [o.spike_counts for o in out.outputs]
    with pytest.raises(ValueError):
        client.deployments.run("neuro-1-digits-cpu", inputs=[[float("nan")] * 64])


def test_compile_torch_module(client: neuro.Client) -> None:
    """An nn.Module is sent as its state_dict, with torch.save."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    layers = [{"name": "0", "kind": "linear"}, {"name": "1", "kind": "relu"}, {"name": "2", "kind": "linear"}]
    net = client.networks.compile(model, options={"layers": layers, "timesteps": 16})
    try:
        assert net.network.inputs == 8 and net.network.outputs == 3
        from_dict = client.networks.compile(model.state_dict(), options={"layers": layers, "timesteps": 16})
        assert from_dict.source.sha256 == net.source.sha256
        client.models.delete(from_dict.id)
    finally:
        client.models.delete(net.id)
