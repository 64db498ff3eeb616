"""Retries, timeouts and stream errors, against a scripted loopback server."""

from __future__ import annotations

import socket
import threading
import time
from typing import Iterator, Type

import pytest

import neuro
from stub import Stub, error, hang_up, ok, slow, sse

RUN = {
    "id": "run-1",
    "object": "network.run",
    "created": 1,
    "model": "net-1",
    "deployment": "d",
    "outputs": [{"index": 0, "spike_counts": [1, 2], "prediction": 1, "final_state": [0, 0]}],
    "usage": {"samples": 1, "timesteps": 4, "spikes": 3, "synaptic_ops": 9, "energy_uj": 0.1, "device_ms": 0.01},
}


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    s = Stub()
    yield s
    s.close()


def client(stub: Stub, **kw) -> neuro.Client:
    return neuro.Client(base_url=stub.url, api_key="sk-stub", **kw)


def run(c: neuro.Client) -> neuro.types.Run:
    return c.deployments.run("d", inputs=[[1.0, 0.0]])


def test_429_retry_after(stub: Stub) -> None:
    """A 429 with Retry-After: 1 is tried again about a second later."""
    stub.script(error(429, "rate_limit_error", "rate_limit_exceeded", {"Retry-After": "1"}), ok(RUN))
    out = run(client(stub))
    assert out.outputs[0].prediction == 1
    assert len(stub.requests) == 2
    waited = stub.requests[1][0] - stub.requests[0][0]
    assert 0.95 <= waited < 2.0, waited


def test_503_backs_off_without_retry_after(stub: Stub) -> None:
    stub.script(error(503, "server_error", "overloaded"), error(503, "server_error", "overloaded"), ok(RUN))
    t = time.monotonic()
    run(client(stub))
    # 0.5 s then 1 s, each less up to a quarter of jitter.
    assert len(stub.requests) == 3 and time.monotonic() - t >= 0.375 + 0.75


def test_gives_up_after_max_retries(stub: Stub) -> None:
    stub.script(*[error(429, "rate_limit_error", "rate_limit_exceeded", {"Retry-After": "0"})] * 5)
    with pytest.raises(neuro.RateLimitError) as e:
        run(client(stub, max_retries=2))
    assert len(stub.requests) == 3 and e.value.retry_after == 0


@pytest.mark.parametrize(
    "status,type_,code,cls",
    [
        (400, "invalid_request_error", "invalid_value", neuro.BadRequestError),
        (404, "not_found_error", "model_not_found", neuro.NotFoundError),
        (409, "invalid_request_error", "deployment_exists", neuro.ConflictError),
        (422, "invalid_request_error", "unsupported_model", neuro.UnprocessableEntityError),
        (429, "rate_limit_error", "insufficient_quota", neuro.RateLimitError),
        (500, "server_error", "internal_error", neuro.InternalServerError),
        (503, "server_error", "timeout", neuro.InternalServerError),
        (413, "invalid_request_error", "request_too_large", neuro.APIStatusError),
    ],
)
def test_not_retried(stub: Stub, status: int, type_: str, code: str, cls: Type[neuro.APIStatusError]) -> None:
    """Other 4xx, a quota, a 500, and a 503 that already spent the server's
    request time are raised at once."""
    stub.script(error(status, type_, code), ok(RUN))
    with pytest.raises(cls) as e:
        run(client(stub))
    assert type(e.value) is cls and (e.value.status_code, e.value.type, e.value.code) == (status, type_, code)
    assert e.value.request_id == "req_stub"
    assert len(stub.requests) == 1


def test_retry_after_too_long_is_not_waited_for(stub: Stub) -> None:
    stub.script(error(429, "rate_limit_error", "rate_limit_exceeded", {"Retry-After": "3600"}), ok(RUN))
    t = time.monotonic()
    with pytest.raises(neuro.RateLimitError) as e:
        run(client(stub))
    assert e.value.retry_after == 3600 and time.monotonic() - t < 1 and len(stub.requests) == 1


def test_post_broken_after_sending_is_not_retried(stub: Stub) -> None:
    """The server read the whole request and closed the connection without
    answering: it may have run it, so a POST is not sent again..."""
    stub.script(hang_up, ok(RUN), ok(RUN))
    with pytest.raises(neuro.APIConnectionError) as e:
        run(client(stub))
    assert type(e.value) is neuro.APIConnectionError and e.value.status_code is None
    assert len(stub.requests) == 1
    # ...unless the caller asks for it,
    stub.script(hang_up, hang_up, ok(RUN))
    assert run(client(stub, retry_non_idempotent=True)).id == "run-1"
    assert len(stub.requests) == 3
    # while a GET is.
    stub.script(hang_up, ok({"id": "m", "object": "model"}))
    assert client(stub).models.retrieve("m").id == "m"
    assert len(stub.requests) == 2


def test_connection_refused_is_retried() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = neuro.Client(base_url="http://127.0.0.1:%d" % port, api_key="k", max_retries=2)
    t = time.monotonic()
    with pytest.raises(neuro.APIConnectionError):
        c.deployments.run("d", inputs=[[1.0]])
    assert time.monotonic() - t >= 0.375 + 0.75  # two backoffs: it was tried three times


def test_timeout(stub: Stub) -> None:
    """No answer within the timeout: APITimeoutError; a POST is not sent
    again, a GET is."""
    stub.script(slow(0.5, ok(RUN)), ok(RUN))
    with pytest.raises(neuro.APITimeoutError):
        run(client(stub, timeout=0.1))
    assert len(stub.requests) == 1
    stub.script(slow(0.5, ok({})), ok({"id": "m", "object": "model"}))
    assert client(stub, timeout=0.1).models.retrieve("m").id == "m"
    assert len(stub.requests) == 2
    # The timeout of one call.
    stub.script(slow(0.3, ok(RUN)))
    with pytest.raises(neuro.APITimeoutError):
        client(stub).deployments.run("d", inputs=[[1.0]], timeout=0.1)


CHUNK = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}\n\n'


def test_stream_is_parsed_as_it_arrives(stub: Stub) -> None:
    """The first chunk is yielded while the server holds back the rest."""
    gate = threading.Event()
    stub.script(sse(CHUNK % b"Hel", b": a comment\r\n\r\n", CHUNK % b"lo", b"data: [DONE]\n\n", gate=gate))
    c = client(stub)
    stream = c.chat.completions.create(model="m", messages=[], stream=True)
    first = next(stream)
    assert first.choices[0].delta.content == "Hel" and stream.request_id == "req_stream"
    gate.set()
    assert [ch.choices[0].delta.content for ch in stream] == ["lo"]
    # The stream was read to its end: its connection serves the next call.
    assert len(c._transport._idle) == 1


def test_error_in_the_middle_of_a_stream(stub: Stub) -> None:
    err = b'data: {"error":{"message":"device lost","type":"server_error","param":null,"code":"device_error"}}\n\n'
    stub.script(sse(CHUNK % b"a", err))
    stream = client(stub).chat.completions.create(model="m", messages=[], stream=True)
    assert next(stream).choices[0].delta.content == "a"
    with pytest.raises(neuro.InternalServerError) as e:
        next(stream)
    assert (e.value.status_code, e.value.type, e.value.code, e.value.message) == (
        None,
        "server_error",
        "device_error",
        "device lost",
    )
    with pytest.raises(StopIteration):
        next(stream)


def test_stream_cut_off(stub: Stub) -> None:
    stub.script(sse(CHUNK % b"a"))
    stream = client(stub).chat.completions.create(model="m", messages=[], stream=True)
    next(stream)
    with pytest.raises(neuro.APIConnectionError, match=r"before data: \[DONE\]"):
        next(stream)


def test_stream_retried_before_it_starts(stub: Stub) -> None:
    stub.script(error(429, "rate_limit_error", "rate_limit_exceeded", {"Retry-After": "0"}), sse(CHUNK % b"x", b"data: [DONE]\n\n"))
    texts = [ch.choices[0].delta.content for ch in client(stub).chat.completions.create(model="m", messages=[], stream=True)]
    assert texts == ["x"] and len(stub.requests) == 2


def test_not_a_stream(stub: Stub) -> None:
    stub.script(ok({"not": "a stream"}))
    with pytest.raises(neuro.APIResponseValidationError):
        client(stub).chat.completions.create(model="m", messages=[], stream=True)


def test_error_body_that_is_not_json(stub: Stub) -> None:
    def proxy_page(h) -> None:
        data = b"<html>Bad Gateway</html>"
        h.send_response(502)
        h.send_header("Content-Type", "text/html")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    stub.script(proxy_page)
    with pytest.raises(neuro.InternalServerError) as e:
        client(stub).models.list()
    assert e.value.status_code == 502 and e.value.code is None and "Bad Gateway" in e.value.message
