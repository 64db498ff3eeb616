"""Streams against a real server: the chunks add up to the unstreamed answer,
and closing or dropping a stream early closes the connection, so that the
server stops generating."""

from __future__ import annotations

import time
from typing import Callable, List, Optional

import pytest

import neuro
from neuro import types
from conftest import OTHER_KEY, Server

# Special tokens 0 (<|endoftext|>) and 4 (<|end|>) end a generation in every
# built-in model; biased away, the model goes on to max_tokens.
ENDLESS = {"0": -100, "4": -100}


def user(text: str):
    return [{"role": "user", "content": text}]


def collect(stream: neuro.Stream) -> tuple:
    text, finish, usage, roles = "", None, None, []
    for chunk in stream:
        assert isinstance(chunk, types.ChatCompletionChunk) and chunk.object == "chat.completion.chunk"
        if chunk.usage is not None:
            assert chunk.choices == []
            usage = chunk.usage
            continue
        for c in chunk.choices:
            if c.delta.role:
                roles.append(c.delta.role)
            text += c.delta.content or ""
            if c.finish_reason:
                finish = c.finish_reason
    assert roles == ["assistant"]
    return text, finish, usage


@pytest.mark.parametrize(
    "model,sampling",
    [
        ("neuro-1-lite", {"temperature": 0}),
        ("neuro-1-standard", {"temperature": 0}),
        ("neuro-1-heavy", {"temperature": 0.9, "seed": 1234}),
    ],
)
def test_stream_equals_unstreamed(client: neuro.Client, model: str, sampling: dict) -> None:
    msgs = user("Tell me about the sea.")
    whole = client.chat.completions.create(model=model, messages=msgs, max_tokens=40, **sampling)
    stream = client.chat.completions.create(
        model=model, messages=msgs, max_tokens=40, stream=True, stream_options={"include_usage": True}, **sampling
    )
    assert isinstance(stream, neuro.Stream) and stream.request_id
    text, finish, usage = collect(stream)
    assert text == whole.choices[0].message.content and text
    assert finish == whole.choices[0].finish_reason
    assert (usage.prompt_tokens, usage.completion_tokens) == (whole.usage.prompt_tokens, whole.usage.completion_tokens)


def test_stream_through_a_deployment(client: neuro.Client) -> None:
    msgs = user("Hi")
    whole = client.chat.completions.create(deployment="neuro-1-lite-loihi", messages=msgs, max_tokens=12, temperature=0)
    with client.chat.completions.create(
        deployment="neuro-1-lite-loihi", messages=msgs, max_tokens=12, temperature=0, stream=True
    ) as stream:
        text, _, _ = collect(stream)
    assert text == whole.choices[0].message.content


def test_activity(real_server: Server) -> None:
    c = real_server.client()
    seen = 0
    for chunk in c.chat.completions.create(
        model="neuro-1-lite", messages=user("Hi"), max_tokens=4, stream=True, neuro={"activity": True}
    ):
        if chunk.choices and chunk.choices[0].delta.content:
            assert isinstance(chunk.neuro, types.NeuroActivity)
            layer = chunk.neuro.activity[0]
            assert isinstance(layer, types.LayerActivity) and layer.neurons > 0
            assert all(0 <= i < layer.neurons for i in layer.spikes)
            seen += 1
    assert seen > 0


def test_text_completion_stream(real_server: Server, mock_server: Server) -> None:
    c = real_server.client()
    whole = c.completions.create(model="neuro-1-lite", prompt="Once upon a time", max_tokens=24, temperature=0)
    parts = [
        ch.choices[0].text
        for ch in c.completions.create(model="neuro-1-lite", prompt="Once upon a time", max_tokens=24, temperature=0, stream=True)
        if ch.choices
    ]
    assert all(isinstance(p, str) for p in parts)
    assert "".join(parts) == whole.choices[0].text
    # Mock mode refuses streamed text completions, before the stream starts.
    with pytest.raises(neuro.BadRequestError) as e:
        mock_server.client().completions.create(model="neuro-1-lite", prompt="x", stream=True)
    assert e.value.code == "stream_not_supported"


def load(c: neuro.Client) -> int:
    d = c.deployments.retrieve("neuro-1-heavy-cpu")
    return d.load.active + d.load.queued


def wait_for(cond: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def heavy_requests(c: neuro.Client) -> tuple:
    t = c.telemetry.retrieve(model="neuro-1-heavy")
    return t.requests.total, t.requests.errors


def close_by_method(s: neuro.Stream) -> Optional[neuro.Stream]:
    s.close()
    return None


def close_by_with(s: neuro.Stream) -> Optional[neuro.Stream]:
    with s:
        pass
    return None


def close_by_dropping(s: neuro.Stream) -> Optional[neuro.Stream]:
    return None  # the caller's last reference goes


ENDLESS_REQUEST = dict(model="neuro-1-heavy", messages=user("Go on forever"), max_tokens=4096, logit_bias=ENDLESS)


@pytest.fixture(scope="module")
def whole_generation_s(real_server: Server) -> float:
    """How long the server takes to generate the endless request to its end."""
    c = real_server.client(key=OTHER_KEY)
    t = time.monotonic()
    r = c.chat.completions.create(**ENDLESS_REQUEST)
    took = time.monotonic() - t
    assert r.choices[0].finish_reason == "length" and r.usage.completion_tokens > 1000
    return took


@pytest.mark.parametrize("close", [close_by_method, close_by_with, close_by_dropping], ids=["close", "with", "drop"])
def test_closing_early_stops_generation(
    real_server: Server, whole_generation_s: float, close: Callable[[neuro.Stream], Optional[neuro.Stream]]
) -> None:
    """A stream left after three chunks of a long generation: the server sees
    the connection close and frees the deployment's slot (its load returns to
    zero) long before the generation could have ended, and records the
    request as failed."""
    c = real_server.client(key=OTHER_KEY)
    assert wait_for(lambda: load(c) == 0)
    before = heavy_requests(c)
    stream: Optional[neuro.Stream] = c.chat.completions.create(stream=True, **ENDLESS_REQUEST)
    assert stream is not None
    chunks: List[types.ChatCompletionChunk] = [next(stream) for _ in range(3)]
    assert all(ch.choices[0].finish_reason is None for ch in chunks)
    assert load(c) >= 1, "the generation is not running"
    t = time.monotonic()
    stream = close(stream)
    del chunks
    assert wait_for(lambda: load(c) == 0), "the deployment is still busy 5 s after the client left"
    idle_after = time.monotonic() - t
    assert idle_after < whole_generation_s / 2, "busy %.3fs after the client left; the whole generation takes %.3fs" % (
        idle_after,
        whole_generation_s,
    )
    assert wait_for(lambda: heavy_requests(c)[0] == before[0] + 1), "the request was not recorded"
    assert heavy_requests(c)[1] == before[1] + 1, "the abandoned request counts as completed"
