"""Responses against a scripted loopback server: the typed events of a
stream (named SSE events, no [DONE]), the typed response, and the errors
and retries of /v1/responses."""

from __future__ import annotations

import json
import threading
from typing import Iterator

import pytest

import neuro
from neuro import types
from stub import Stub, error, ok, sse

USAGE = {
    "input_tokens": 12,
    "input_tokens_details": {"cached_tokens": 8},
    "output_tokens": 2,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 14,
}


def response(status: str = "completed", text: str = "Hello", **kw) -> dict:
    r = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "neuro-1-lite",
        "previous_response_id": None,
        "instructions": None,
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "output_text": text,
        "incomplete_details": None,
        "error": None,
        "store": True,
        "metadata": {},
        "usage": USAGE,
    }
    r.update(kw)
    return r


def event(type_: str, seq: int, **fields) -> bytes:
    data = dict(type=type_, sequence_number=seq, **fields)
    return b"event: %s\ndata: %s\n\n" % (type_.encode(), json.dumps(data).encode())


def events(text_pieces=("Hel", "lo"), last: str = "response.completed") -> list:
    r = response(text="".join(text_pieces))
    part = {"type": "output_text", "text": "", "annotations": []}
    item = dict(r["output"][0], status="in_progress", content=[])
    out = [
        # As the server sends them: no output and no usage yet.
        event("response.created", 0, response=dict(r, status="in_progress", output=[], output_text="", usage=None)),
        event("response.in_progress", 1, response=dict(r, status="in_progress", output=[], output_text="", usage=None)),
        event("response.output_item.added", 2, output_index=0, item=item),
        event("response.content_part.added", 3, item_id="msg_1", output_index=0, content_index=0, part=part),
    ]
    ids = dict(item_id="msg_1", output_index=0, content_index=0)
    for p in text_pieces:
        out.append(event("response.output_text.delta", len(out), delta=p, logprobs=[], **ids))
    whole = "".join(text_pieces)
    out += [
        event("response.output_text.done", len(out), text=whole, **ids),
        event("response.content_part.done", len(out) + 1, part=dict(part, text=whole), **ids),
        event("response.output_item.done", len(out) + 2, output_index=0, item=r["output"][0]),
        event(last, len(out) + 3, response=dict(r, status=last.split(".")[1])),
    ]
    return out


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    s = Stub()
    yield s
    s.close()


def client(stub: Stub, **kw) -> neuro.Client:
    return neuro.Client(base_url=stub.url, api_key="sk-stub", **kw)


def test_create_sends_the_fields_and_types_the_result(stub: Stub) -> None:
    stub.script(ok(response(previous_response_id="resp_0")))
    r = client(stub).responses.create(
        model="neuro-1-lite",
        input=[{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        instructions="Be brief.",
        previous_response_id="resp_0",
        store=False,
        max_output_tokens=16,
        temperature=0,
        top_p=0.5,
        metadata={"k": "v"},
        user="u",
    )
    method, path, body = stub.requests[0][1:]
    assert (method, path) == ("POST", "/v1/responses")
    assert json.loads(body) == {
        "model": "neuro-1-lite",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        "instructions": "Be brief.",
        "previous_response_id": "resp_0",
        "store": False,
        "max_output_tokens": 16,
        "temperature": 0,
        "top_p": 0.5,
        "metadata": {"k": "v"},
        "user": "u",
    }
    assert isinstance(r, types.Response) and r.output_text == "Hello" and r.previous_response_id == "resp_0"
    assert isinstance(r.output[0], types.ResponseOutputMessage)
    assert isinstance(r.output[0].content[0], types.ResponseOutputText)
    assert r.usage.input_tokens_details.cached_tokens == 8 and r.usage.total_tokens == 14
    assert r.incomplete_details is None


def test_string_input_and_fields_left_out(stub: Stub) -> None:
    stub.script(ok(response()))
    client(stub).responses.create(model="m", input="Hi")
    assert json.loads(stub.requests[0][3]) == {"model": "m", "input": "Hi"}


def test_output_text_without_the_field() -> None:
    r = dict(response(status="incomplete", incomplete_details={"reason": "max_output_tokens"}))
    del r["output_text"]
    r["output"][0]["content"].append({"type": "output_text", "text": " there", "annotations": []})
    got = types.Response.construct(r)
    assert got.output_text == "Hello there" and got.incomplete_details.reason == "max_output_tokens"


def test_retrieve_and_delete(stub: Stub) -> None:
    stub.script(ok(response()), ok({"id": "resp_1", "object": "response", "deleted": True}))
    c = client(stub)
    assert c.responses.retrieve("resp_1").id == "resp_1"
    d = c.responses.delete("resp_1")
    assert isinstance(d, types.ResponseDeleted) and d.deleted
    assert [(m, p) for _, m, p, _ in stub.requests] == [("GET", "/v1/responses/resp_1"), ("DELETE", "/v1/responses/resp_1")]


def test_stream_of_typed_events(stub: Stub) -> None:
    """Named events, parsed as they arrive; the stream ends after
    response.completed without a [DONE], and its connection is reused."""
    gate = threading.Event()
    stub.script(sse(*events(), gate=gate, gate_after=5))
    c = client(stub)
    stream = c.responses.create(model="m", input="Hi", stream=True)
    first = next(stream)
    assert isinstance(first, types.ResponseCreatedEvent) and first.response.status == "in_progress"
    assert first.response.usage is None and first.response.output == [] and first.response.output_text == ""
    gate.set()
    rest = list(stream)
    want = [
        types.ResponseInProgressEvent,
        types.ResponseOutputItemAddedEvent,
        types.ResponseContentPartAddedEvent,
        types.ResponseTextDeltaEvent,
        types.ResponseTextDeltaEvent,
        types.ResponseTextDoneEvent,
        types.ResponseContentPartDoneEvent,
        types.ResponseOutputItemDoneEvent,
        types.ResponseCompletedEvent,
    ]
    assert [type(e) for e in rest] == want
    assert "".join(e.delta for e in rest if e.type == "response.output_text.delta") == "Hello"
    assert [e.sequence_number for e in [first] + rest] == list(range(10))
    assert rest[-1].response.output_text == "Hello" and rest[-1].response.usage.input_tokens_details.cached_tokens == 8
    assert len(c._transport._idle) == 1


def test_stream_incomplete(stub: Stub) -> None:
    stub.script(sse(*events(last="response.incomplete")))
    got = list(client(stub).responses.create(model="m", input="Hi", stream=True))
    assert isinstance(got[-1], types.ResponseIncompleteEvent) and got[-1].response.status == "incomplete"


def test_stream_error_then_failed(stub: Stub) -> None:
    """An error after the stream started is an error event, then
    response.failed, which ends the stream."""
    failed = dict(
        response(status="failed"), output=[], output_text="", usage=None, error={"code": "device_error", "message": "device lost"}
    )
    stub.script(
        sse(
            *events()[:5],
            event("error", 5, code="device_error", message="device lost", param=None),
            event("response.failed", 6, response=failed),
        )
    )
    got = list(client(stub).responses.create(model="m", input="Hi", stream=True))
    err, last = got[-2], got[-1]
    assert isinstance(err, types.ResponseErrorEvent) and (err.code, err.message) == ("device_error", "device lost")
    assert isinstance(last, types.ResponseFailedEvent) and last.response.error.code == "device_error"
    assert last.response.status == "failed" and last.response.usage is None


def test_message_items_with_type_and_the_server_echoes(stub: Stub) -> None:
    """Input items may carry type "message"; the response echoes the
    request's sampling, max_output_tokens, user and the device's usage."""
    neuro_usage = {"timesteps": 40, "spikes": 1200, "synaptic_ops": 5000, "energy_uj": 0.25}
    stub.script(
        ok(response(temperature=0.0, top_p=1.0, max_output_tokens=16, user="u", metadata={"k": "v"}, neuro=neuro_usage))
    )
    items = [
        {"type": "message", "role": "developer", "content": "Be brief."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
    ]
    r = client(stub).responses.create(model="m", input=iter(items), max_output_tokens=16, temperature=0, user="u")
    assert json.loads(stub.requests[0][3])["input"] == items
    assert (r.temperature, r.top_p, r.max_output_tokens, r.user, r.metadata) == (0.0, 1.0, 16, "u", {"k": "v"})
    assert isinstance(r.neuro, types.NeuromorphicUsage) and r.neuro.energy_uj == 0.25
    assert r.usage.output_tokens_details.reasoning_tokens == 0


def test_stream_cut_off_before_its_last_event(stub: Stub) -> None:
    stub.script(sse(*events()[:4]))
    stream = client(stub).responses.create(model="m", input="Hi", stream=True)
    for _ in range(4):
        next(stream)
    with pytest.raises(neuro.APIConnectionError, match="before its last event"):
        next(stream)


def test_stream_unknown_event_is_kept(stub: Stub) -> None:
    stub.script(sse(event("response.queued", 0, response=response()), *events()[1:]))
    got = list(client(stub).responses.create(model="m", input="Hi", stream=True))
    assert type(got[0]) is types.ResponseStreamEvent and got[0].type == "response.queued"


@pytest.mark.parametrize(
    "status,type_,code,param,cls",
    [
        (404, "not_found_error", "response_not_found", "response_id", neuro.NotFoundError),
        (400, "invalid_request_error", "unsupported_parameter", "tools", neuro.BadRequestError),
        (429, "rate_limit_error", "insufficient_quota", None, neuro.RateLimitError),
    ],
)
def test_errors_are_typed_and_not_retried(stub: Stub, status, type_, code, param, cls) -> None:
    body = {"error": {"message": "stub", "type": type_, "param": param, "code": code}}
    stub.script(lambda h: h.send_json(status, body), ok(response()))
    with pytest.raises(cls) as e:
        client(stub).responses.retrieve("resp_x") if status == 404 else client(stub).responses.create(
            model="m", input="Hi"
        )
    assert (e.value.status_code, e.value.type, e.value.code, e.value.param) == (status, type_, code, param)
    assert len(stub.requests) == 1


def test_rate_limit_and_overload_are_retried(stub: Stub) -> None:
    stub.script(
        error(429, "rate_limit_error", "rate_limit_exceeded", {"Retry-After": "0"}),
        error(503, "server_error", "overloaded", {"Retry-After": "0"}),
        sse(*events()),
    )
    got = list(client(stub).responses.create(model="m", input="Hi", stream=True))
    assert isinstance(got[-1], types.ResponseCompletedEvent) and len(stub.requests) == 3
