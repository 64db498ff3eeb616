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

    text, kinds, seqs, last = "", [], [], None
    for ev in client.responses.create(
        model="neuro-1-lite", input="And the sky?", previous_response_id=second.id, max_output_tokens=16, temperature=0, stream=True
    ):
        assert isinstance(ev, types.ResponseStreamEvent)
        kinds.append(ev.type)
        seqs.append(ev.sequence_number)
        if isinstance(ev, types.ResponseCreatedEvent):
            assert ev.response.status == "in_progress" and ev.response.usage is None
        if isinstance(ev, types.ResponseTextDeltaEvent):
            text += ev.delta
        last = ev
    deltas = kinds.count("response.output_text.delta")
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * deltas,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        kinds[-1],
    ]
    assert kinds[-1] in ("response.completed", "response.incomplete")
    assert isinstance(last, (types.ResponseCompletedEvent, types.ResponseIncompleteEvent))
    assert text == last.response.output_text and last.response.previous_response_id == second.id
    assert seqs == list(range(len(seqs)))
    assert client.responses.retrieve(last.response.id).output_text == text

    for r in (first, second, last.response):
        d = client.responses.delete(r.id)
        assert d.deleted and d.id == r.id
    with pytest.raises(neuro.NotFoundError) as e:
        client.responses.retrieve(first.id)
    assert e.value.code == "response_not_found" and e.value.param == "response_id"
    with pytest.raises(neuro.NotFoundError) as e:
        client.responses.create(model="neuro-1-lite", input="Again?", previous_response_id=second.id)
    assert e.value.code == "response_not_found" and e.value.param == "previous_response_id"


def test_responses_fields_echoed_and_unstored(client: neuro.Client) -> None:
    r = client.responses.create(
        model="neuro-1-lite",
        input=[
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Name a sea."}]},
        ],
        instructions="Be brief.",
        store=False,
        max_output_tokens=4,
        temperature=0,
        top_p=1,
        metadata={"topic": "seas"},
        user="u-1",
    )
    assert (r.instructions, r.store, r.metadata, r.max_output_tokens) == ("Be brief.", False, {"topic": "seas"}, 4)
    assert r.output[0].type == "message" and r.output[0].role == "assistant" and r.output[0].id.startswith("msg_")
    assert r.output[0].content[0].type == "output_text" and r.output[0].content[0].annotations == []
    assert r.usage.output_tokens <= 4 and r.usage.output_tokens_details.reasoning_tokens == 0
    if r.status == "incomplete":
        assert r.incomplete_details.reason == "max_output_tokens"
    else:
        assert r.status == "completed" and r.incomplete_details is None
    assert r.error is None and r.neuro is not None and r.neuro.timesteps > 0
    with pytest.raises(neuro.NotFoundError) as e:
        client.responses.retrieve(r.id)
    assert e.value.code == "response_not_found"


def test_responses_errors_before_a_stream_and_unsupported_fields(client: neuro.Client) -> None:
    with pytest.raises(neuro.NotFoundError) as e:
        client.responses.create(model="neuro-1-lite", input="Hi", previous_response_id="resp_unknown", stream=True)
    assert (e.value.code, e.value.param) == ("response_not_found", "previous_response_id")
    with pytest.raises(neuro.BadRequestError) as e:
        client.responses.create(model="neuro-1-lite", input="Hi", extra_body={"tools": [{"type": "web_search"}]})
    assert (e.value.code, e.value.param) == ("unsupported_parameter", "tools")
