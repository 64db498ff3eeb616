"""Responses: POST /v1/responses, GET and DELETE /v1/responses/{id}."""

from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping, Optional, Union, overload

from .._streaming import Stream
from ..types.responses import RESPONSE_STREAM_END, Response, ResponseDeleted, ResponseStreamEvent, response_stream_event
from ._base import APIResource, drop_none, segment

__all__ = ["Responses"]

InputItem = Mapping[str, Any]
"""``{"role": "user" | "system" | "developer" | "assistant", "content": str}``
(``"type": "message"`` may be given); content may also be a list of
``{"type": "input_text", "text": ...}`` parts."""


class Responses(APIResource):
    @overload
    def create(
        self,
        *,
        model: str,
        input: Union[str, Iterable[InputItem]],
        stream: Literal[False] = False,
        instructions: Optional[str] = None,
        previous_response_id: Optional[str] = None,
        store: Optional[bool] = None,
        max_output_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        metadata: Optional[Mapping[str, str]] = None,
        user: Optional[str] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Response: ...

    @overload
    def create(
        self,
        *,
        model: str,
        input: Union[str, Iterable[InputItem]],
        stream: Literal[True],
        instructions: Optional[str] = None,
        previous_response_id: Optional[str] = None,
        store: Optional[bool] = None,
        max_output_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        metadata: Optional[Mapping[str, str]] = None,
        user: Optional[str] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Stream[ResponseStreamEvent]: ...

    def create(
        self,
        *,
        model: str,
        input: Union[str, Iterable[InputItem]],
        stream: bool = False,
        instructions: Optional[str] = None,
        previous_response_id: Optional[str] = None,
        store: Optional[bool] = None,
        max_output_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        metadata: Optional[Mapping[str, str]] = None,
        user: Optional[str] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Union[Response, Stream[ResponseStreamEvent]]:
        """Makes a response: one turn of a conversation.

        ``input`` is a string (one user message) or a list of message items.
        ``previous_response_id`` continues the conversation that response
        ended (with the same ``model``); ``instructions`` is a system message
        for this turn only. ``store=False`` keeps the response from being
        stored (it cannot then be retrieved or continued).

        With ``stream=True`` the result is a :class:`~neuro.Stream` of
        :class:`~neuro.types.ResponseStreamEvent` (one subclass per event
        type), which ends after ``response.completed``,
        ``response.incomplete`` or ``response.failed``; otherwise a
        :class:`~neuro.types.Response`.
        """
        body = drop_none(
            {
                "model": model,
                "input": input if isinstance(input, str) else list(input),
                "instructions": instructions,
                "previous_response_id": previous_response_id,
                "store": store,
                "max_output_tokens": max_output_tokens,
                "temperature": temperature,
                "top_p": top_p,
                "metadata": dict(metadata) if metadata is not None else None,
                "user": user,
            }
        )
        if stream:
            body["stream"] = True
            return self._client._stream(
                "/v1/responses",
                response_stream_event,
                body=body,
                timeout=timeout,
                extra_headers=extra_headers,
                extra_body=extra_body,
                end_events=RESPONSE_STREAM_END,
            )
        return self._client._request(
            "POST",
            "/v1/responses",
            Response.construct,
            body=body,
            timeout=timeout,
            extra_headers=extra_headers,
            extra_body=extra_body,
        )

    def retrieve(
        self, response_id: str, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> Response:
        """A stored response. An unknown, expired, unstored or another key's
        response is :class:`~neuro.NotFoundError` (``response_not_found``)."""
        return self._client._request(
            "GET",
            "/v1/responses/" + segment(response_id),
            Response.construct,
            extra_headers=extra_headers,
            timeout=timeout,
        )

    def delete(
        self, response_id: str, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> ResponseDeleted:
        """Deletes a stored response; it can no longer be retrieved or
        continued."""
        return self._client._request(
            "DELETE",
            "/v1/responses/" + segment(response_id),
            ResponseDeleted.construct,
            extra_headers=extra_headers,
            timeout=timeout,
        )
