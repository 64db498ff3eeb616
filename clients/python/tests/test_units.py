"""The parts that need no server: the event-stream parser, configuration,
typed results and request encoding."""

from __future__ import annotations

import pytest

import neuro
from neuro import types
from neuro._encoding import encode_json, read_network
from neuro._streaming import MAX_EVENT_BYTES, SSEDecoder
from neuro._transport import parse_retry_after

STREAM = (
    b": keep-alive\r\n"
    b"data: {\"a\":1}\r\n\r\n"
    b"event: delta\n"
    b"id: 7\n"
    b"retry: 100\n"
    b"data: line one\n"
    b"data:line two\n\n"
    b"data\r\r"
    b"data: [DONE]\n\n"
)
EVENTS = [("message", b'{"a":1}'), ("delta", b"line one\nline two"), ("message", b""), ("message", b"[DONE]")]


def test_sse_whole() -> None:
    d = SSEDecoder()
    assert d.feed(STREAM) == EVENTS and not d.end()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16])
def test_sse_in_pieces(size: int) -> None:
    """Events come out the same however the bytes are split, CRLF and CR
    line ends included."""
    d = SSEDecoder()
    got = []
    for i in range(0, len(STREAM), size):
        got += d.feed(STREAM[i : i + size])
    assert got == EVENTS and not d.end()


def test_sse_cut_off() -> None:
    d = SSEDecoder()
    assert d.feed(b'data: {"a":') == []
    assert d.end()


def test_sse_limit() -> None:
    d = SSEDecoder()
    with pytest.raises(neuro.APIResponseValidationError):
        d.feed(b"data: " + b"x" * (MAX_EVENT_BYTES + 1))


def test_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEURO_BASE_URL", raising=False)
    monkeypatch.delenv("NEURO_API_KEY", raising=False)
    c = neuro.Client()
    assert c.base_url == "http://127.0.0.1:8080" and c.api_key is None
    for url in ["http://h:9/v1", "http://h:9/v1/", "http://h:9/", "http://h:9"]:
        assert neuro.Client(base_url=url).base_url == "http://h:9"
    assert neuro.Client(base_url="https://example.com/neuro/v1").base_url == "https://example.com/neuro"
    monkeypatch.setenv("NEURO_BASE_URL", "http://10.0.0.1:8000/v1")
    monkeypatch.setenv("NEURO_API_KEY", "sk-env")
    c = neuro.Client()
    assert c.base_url == "http://10.0.0.1:8000" and c.api_key == "sk-env"
    assert neuro.Client(api_key="sk-arg").api_key == "sk-arg"
    for bad in ["ftp://h", "h:8080", "http://h/?x=1", "http://user:pw@h"]:
        with pytest.raises(ValueError):
            neuro.Client(base_url=bad)
    with pytest.raises(ValueError):
        neuro.Client(timeout=0)


def test_with_options() -> None:
    c = neuro.Client(base_url="http://h:1", api_key="k", timeout=5, default_headers={"X-A": "1"})
    d = c.with_options(max_retries=7)
    assert (d.base_url, d.api_key, d.timeout, d.max_retries, d.default_headers) == ("http://h:1", "k", 5, 7, {"X-A": "1"})
    assert c.max_retries == neuro.DEFAULT_MAX_RETRIES


def test_environment_against_a_server(mock_server, monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import KEY

    monkeypatch.setenv("NEURO_BASE_URL", mock_server.url + "/v1")
    monkeypatch.setenv("NEURO_API_KEY", KEY)
    with neuro.Client() as c:
        assert "neuro-1-lite" in {m.id for m in c.models.list()}


def test_typed_results() -> None:
    data = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "neuro-1-lite",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, "neuromorphic": {"timesteps": 2, "spikes": 3, "synaptic_ops": 4, "energy_uj": 0.5}},
        "system_fingerprint": "added later",
    }
    r = types.ChatCompletion.construct(data)
    assert isinstance(r.choices[0], types.Choice) and isinstance(r.choices[0].message, types.ChatCompletionMessage)
    assert isinstance(r.usage.neuromorphic, types.NeuromorphicUsage) and r.usage.neuromorphic.spikes == 3
    assert r.choices[0].logprobs is None
    assert r.system_fingerprint == "added later"  # type: ignore[attr-defined]
    assert r.usage.prompt_tokens_details is None  # declared, not sent
    assert r.to_dict() == data
    assert types.ChatCompletion.construct(data) == r
    assert "ChatCompletion(id='chatcmpl-1'" in repr(r)
    t = types.Telemetry.construct({"by_model": {"m": {"requests": {"total": 1, "errors": 0, "by_endpoint": {}}}}})
    assert isinstance(t.by_model["m"], types.TelemetryGroup) and t.by_model["m"].requests.total == 1


def test_encode_json() -> None:
    assert encode_json({"a": [1, 2.5], "b": None}) == b'{"a":[1,2.5],"b":null}'
    with pytest.raises(ValueError):
        encode_json({"x": float("inf")})
    with pytest.raises(TypeError):
        encode_json({"x": object()})
    np = pytest.importorskip("numpy")
    x = np.array([[0.1, 2]], dtype=np.float32)
    assert encode_json({"x": x, "n": np.int64(3), "f": np.float32(0.5)}) == b'{"x":[[0.10000000149011612,2.0]],"n":3,"f":0.5}'


def test_read_network(tmp_path) -> None:
    p = tmp_path / "net.onnx"
    p.write_bytes(b"onnx bytes")
    assert read_network(str(p), None) == (b"onnx bytes", "onnx")
    assert read_network(p, "nir") == (b"onnx bytes", "nir")
    with open(p, "rb") as f:
        assert read_network(f, None) == (b"onnx bytes", "onnx")
    assert read_network(b"raw", None) == (b"raw", "pytorch")
    with open(p) as f, pytest.raises(TypeError, match="text mode"):
        read_network(f, None)
    with pytest.raises(TypeError):
        read_network(42, None)


@pytest.mark.parametrize(
    "value,want",
    [("1", 1.0), (" 2 ", 2.0), ("0.5", 0.5), ("-1", None), ("soon", None), ("", None), (None, None)],
)
def test_retry_after(value, want) -> None:
    assert parse_retry_after(value) == want


def test_retry_after_date() -> None:
    import email.utils
    import time

    v = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < parse_retry_after(v) <= 31


def test_pack_events() -> None:
    """Little-endian int32 pairs in base64, from a list or a numpy array."""
    import base64
    import struct

    p = neuro.pack_events([(0, 3), [2, 9], (-1, 2**31 - 1)], 8)
    assert p["timesteps"] == 8
    assert struct.unpack("<6i", base64.b64decode(p["events_packed"])) == (0, 3, 2, 9, -1, 2**31 - 1)
    assert neuro.pack_events([], 1)["events_packed"] == ""
    with pytest.raises(ValueError):
        neuro.pack_events([(0, 2**31)], 1)
    with pytest.raises(ValueError):
        neuro.pack_events([(0, 1, 2)], 1)
    np = pytest.importorskip("numpy")
    assert neuro.pack_events(np.array([[0, 3], [2, 9], [-1, 2**31 - 1]]), 8) == p
    with pytest.raises(ValueError):
        neuro.pack_events(np.zeros((2, 3)), 1)


def test_pack_raster() -> None:
    """A row of bits per step, least significant first, in base64; events
    outside the steps or inputs are refused."""
    import base64

    p = neuro.pack_raster([[0, 0], [0, 2], [1, 1], [2, 2], [2, 2]], 3, 3)
    # bits 0, 2, 4 and 8
    assert p == {"raster": "FQE=", "timesteps": 3}
    assert base64.b64decode(p["raster"]) == bytes([0x15, 0x01])
    assert neuro.pack_raster([], 2, 5) == {"raster": "AAA=", "timesteps": 2}
    for events, match in [
        ([(3, 0)], r"event 0, \[3, 0\], is outside 3 timesteps of 3 inputs"),
        ([(0, 0), (0, 3)], r"event 1, \[0, 3\], is outside 3 timesteps of 3 inputs"),
        ([(-1, 0)], "outside"),
        ([(0, -1)], "outside"),
        ([(0.5, 1)], "not a pair of whole numbers"),
        ([(0, 1, 2)], "not a pair of whole numbers"),
        ([None], "not a pair of whole numbers"),
    ]:
        with pytest.raises(ValueError, match=match):
            neuro.pack_raster(events, 3, 3)
    for t, n in [(0, 3), (3, 0)]:
        with pytest.raises(ValueError, match="a raster of"):
            neuro.pack_raster([], t, n)
    np = pytest.importorskip("numpy")
    # The same bits as numpy.packbits of the T×n array, from a list or an array of events.
    rng = np.random.default_rng(7)
    spikes = (rng.random((13, 7)) < 0.3).astype(np.uint8)
    events = np.argwhere(spikes)
    want = base64.b64encode(np.packbits(spikes, bitorder="little").tobytes()).decode("ascii")
    assert neuro.pack_raster(events, 13, 7) == {"raster": want, "timesteps": 13}
    assert neuro.pack_raster(events.tolist(), 13, 7)["raster"] == want
