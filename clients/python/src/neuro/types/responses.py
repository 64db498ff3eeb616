"""Responses: POST /v1/responses (streamed or not), GET and DELETE
/v1/responses/{id}. A response is one turn of a conversation that the server
stores; the next turn names it as ``previous_response_id``."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .._models import BaseObject
from .chat import NeuromorphicUsage

__all__ = [
    "ResponseOutputText",
    "ResponseOutputMessage",
    "InputTokensDetails",
    "OutputTokensDetails",
    "ResponseUsage",
    "IncompleteDetails",
    "ResponseError",
    "Response",
    "ResponseDeleted",
    "ResponseStreamEvent",
    "ResponseCreatedEvent",
    "ResponseInProgressEvent",
    "ResponseOutputItemAddedEvent",
    "ResponseContentPartAddedEvent",
    "ResponseTextDeltaEvent",
    "ResponseTextDoneEvent",
    "ResponseContentPartDoneEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseCompletedEvent",
    "ResponseIncompleteEvent",
    "ResponseFailedEvent",
    "ResponseErrorEvent",
    "response_stream_event",
    "RESPONSE_STREAM_END",
]


class ResponseOutputText(BaseObject):
    type: str
    """``output_text``."""
    text: str
    annotations: Optional[List[Any]] = None


class ResponseOutputMessage(BaseObject):
    type: str
    """``message``."""
    id: str
    status: str
    role: str
    content: List[ResponseOutputText]


class InputTokensDetails(BaseObject):
    cached_tokens: int
    """The part of ``input_tokens`` resumed from a stored state instead of
    recomputed."""


class OutputTokensDetails(BaseObject):
    reasoning_tokens: int


class ResponseUsage(BaseObject):
    input_tokens: int
    """The whole context the model saw this turn, earlier turns included."""
    input_tokens_details: Optional[InputTokensDetails] = None
    output_tokens: int
    output_tokens_details: Optional[OutputTokensDetails] = None
    total_tokens: int


class IncompleteDetails(BaseObject):
    reason: str
    """``max_output_tokens``."""


class ResponseError(BaseObject):
    code: Optional[str] = None
    message: str


class Response(BaseObject):
    """One turn of a conversation. ``output_text`` is the text of all its
    ``output_text`` parts together."""

    id: str
    object: str
    created_at: int
    status: str
    """``completed``, ``incomplete`` (see ``incomplete_details``) or ``failed``."""
    model: str
    previous_response_id: Optional[str] = None
    instructions: Optional[str] = None
    output: List[ResponseOutputMessage]
    incomplete_details: Optional[IncompleteDetails] = None
    error: Optional[ResponseError] = None
    store: Optional[bool] = None
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    max_output_tokens: Optional[int] = None
    """As the request gave it; None where it did not."""
    metadata: Optional[Dict[str, str]] = None
    user: Optional[str] = None
    usage: Optional[ResponseUsage] = None
    """None until the response is done (in ``response.created`` and
    ``response.in_progress`` events) and on a failed response."""
    neuro: Optional[NeuromorphicUsage] = None
    """What the turn cost the device (``timesteps``, ``spikes``,
    ``synaptic_ops``, ``energy_uj``)."""

    @property
    def output_text(self) -> str:
        given = self.__dict__.get("output_text")
        if isinstance(given, str):
            return given
        return "".join(
            part.text
            for item in (self.__dict__.get("output") or [])
            if getattr(item, "type", None) == "message"
            for part in (getattr(item, "content", None) or [])
            if getattr(part, "type", None) == "output_text" and isinstance(getattr(part, "text", None), str)
        )


class ResponseDeleted(BaseObject):
    id: str
    object: str
    deleted: bool


class ResponseStreamEvent(BaseObject):
    """One event of a streamed response; ``type`` names it, and each type has
    a class of its own (an unknown type is this class)."""

    type: str
    sequence_number: int


class ResponseCreatedEvent(ResponseStreamEvent):
    response: Response


class ResponseInProgressEvent(ResponseStreamEvent):
    response: Response


class ResponseOutputItemAddedEvent(ResponseStreamEvent):
    output_index: int
    item: ResponseOutputMessage


class ResponseContentPartAddedEvent(ResponseStreamEvent):
    item_id: str
    output_index: int
    content_index: int
    part: ResponseOutputText


class ResponseTextDeltaEvent(ResponseStreamEvent):
    """``response.output_text.delta``: the next piece of text."""

    item_id: str
    output_index: int
    content_index: int
    delta: str
    logprobs: Optional[List[Any]] = None


class ResponseTextDoneEvent(ResponseStreamEvent):
    item_id: str
    output_index: int
    content_index: int
    text: str


class ResponseContentPartDoneEvent(ResponseStreamEvent):
    item_id: str
    output_index: int
    content_index: int
    part: ResponseOutputText


class ResponseOutputItemDoneEvent(ResponseStreamEvent):
    output_index: int
    item: ResponseOutputMessage


class ResponseCompletedEvent(ResponseStreamEvent):
    response: Response


class ResponseIncompleteEvent(ResponseStreamEvent):
    response: Response


class ResponseFailedEvent(ResponseStreamEvent):
    response: Response


class ResponseErrorEvent(ResponseStreamEvent):
    """``error``: the generation failed after the stream started; a
    ``response.failed`` event follows."""

    code: Optional[str] = None
    message: Optional[str] = None
    param: Optional[str] = None


_EVENTS = {
    "response.created": ResponseCreatedEvent,
    "response.in_progress": ResponseInProgressEvent,
    "response.output_item.added": ResponseOutputItemAddedEvent,
    "response.content_part.added": ResponseContentPartAddedEvent,
    "response.output_text.delta": ResponseTextDeltaEvent,
    "response.output_text.done": ResponseTextDoneEvent,
    "response.content_part.done": ResponseContentPartDoneEvent,
    "response.output_item.done": ResponseOutputItemDoneEvent,
    "response.completed": ResponseCompletedEvent,
    "response.incomplete": ResponseIncompleteEvent,
    "response.failed": ResponseFailedEvent,
    "error": ResponseErrorEvent,
}

RESPONSE_STREAM_END = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The events after which a stream of a response ends."""


def response_stream_event(data: Dict[str, Any]) -> ResponseStreamEvent:
    """The typed event of a decoded ``data`` object, by its ``type``."""
    kind = data.get("type") if isinstance(data, dict) else None
    cls = _EVENTS.get(kind, ResponseStreamEvent) if isinstance(kind, str) else ResponseStreamEvent
    return cls.construct(data)
