"""/v1/responses against a real server, in mock and real mode: a stored
conversation made, read back, continued, streamed and deleted."""

from __future__ import annotations

import pytest

import neuro
from neuro import types


def test_responses_conversation(client: neuro.Client) -> None:
    first = client.responses.create(model="neuro-1-lite", input="Tell me about the sea.", max_output_tokens=16, temperature=0)
    assert isinstance(first, types.Response) and first.id.startswith("resp_") and first.object == "response"
    assert first.status in ("completed", "incomplete") and first.output_text
    assert first.output[0].content[0].text == first.output_text
    assert first.usage.total_tokens == first.usage.input_tokens + first.usage.output_tokens
    assert 0 <= first.usage.input_tokens_details.cached_tokens <= first.usage.input_tokens

    got = client.responses.retrieve(first.id)
    assert got.id == first.id and got.output_text == first.output_text

    second = client.responses.create(
        model="neuro-1-lite", input="And the mountains?", previous_response_id=first.id, max_output_tokens=16, temperature=0
    )
    assert second.previous_response_id == first.id and second.id != first.id
    # The second turn's context holds the first's.
    assert second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens

    text, kinds, last = "", [], None
    for ev in client.responses.create(
        model="neuro-1-lite", input="And the sky?", previous_response_id=second.id, max_output_tokens=16, temperature=0, stream=True
    ):
        assert isinstance(ev, types.ResponseStreamEvent)
        kinds.append(ev.type)
        if isinstance(ev, types.ResponseTextDeltaEvent):
            text += ev.delta
        last = ev
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] in ("response.completed", "response.incomplete")
    assert isinstance(last, (types.ResponseCompletedEvent, types.ResponseIncompleteEvent))
    assert text == last.response.output_text and last.response.previous_response_id == second.id

    for r in (first, second, last.response):
        d = client.responses.delete(r.id)
        assert d.deleted and d.id == r.id
    with pytest.raises(neuro.NotFoundError) as e:
        client.responses.retrieve(first.id)
    assert e.value.code == "response_not_found"
