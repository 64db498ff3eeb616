"""Chat completions: POST /v1/chat/completions, and through a deployment
POST /v1/deployments/{id}/chat/completions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, List, Literal, Mapping, Optional, Union, overload

from .._streaming import Stream
from ..types.chat import ChatCompletion, ChatCompletionChunk
from ._base import APIResource, drop_none, segment

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["Chat", "ChatCompletions"]

Message = Mapping[str, Any]
"""``{"role": "system" | "developer" | "user" | "assistant", "content": str}``;
content may also be a list of ``{"type": "text", "text": ...}`` parts."""


class ChatCompletions(APIResource):
    @overload
    def create(
        self,
        *,
        messages: Iterable[Message],
        model: Optional[str] = None,
        deployment: Optional[str] = None,
        stream: Literal[False] = False,
        max_tokens: Optional[int] = None,
        max_completion_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        n: Optional[int] = None,
        stop: Union[str, List[str], None] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        logit_bias: Optional[Mapping[str, float]] = None,
        logprobs: Optional[bool] = None,
        top_logprobs: Optional[int] = None,
        stream_options: Optional[Mapping[str, Any]] = None,
        user: Optional[str] = None,
        neuro: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> ChatCompletion: ...

    @overload
    def create(
        self,
        *,
        messages: Iterable[Message],
        model: Optional[str] = None,
        deployment: Optional[str] = None,
        stream: Literal[True],
        max_tokens: Optional[int] = None,
        max_completion_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        n: Optional[int] = None,
        stop: Union[str, List[str], None] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        logit_bias: Optional[Mapping[str, float]] = None,
        logprobs: Optional[bool] = None,
        top_logprobs: Optional[int] = None,
        stream_options: Optional[Mapping[str, Any]] = None,
        user: Optional[str] = None,
        neuro: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Stream[ChatCompletionChunk]: ...

    def create(
        self,
        *,
        messages: Iterable[Message],
        model: Optional[str] = None,
        deployment: Optional[str] = None,
        stream: bool = False,
        max_tokens: Optional[int] = None,
        max_completion_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        n: Optional[int] = None,
        stop: Union[str, List[str], None] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        logit_bias: Optional[Mapping[str, float]] = None,
        logprobs: Optional[bool] = None,
        top_logprobs: Optional[int] = None,
        stream_options: Optional[Mapping[str, Any]] = None,
        user: Optional[str] = None,
        neuro: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Union[ChatCompletion, Stream[ChatCompletionChunk]]:
        """Asks for a chat completion.

        ``model`` names one of the built-in models (``neuro-1-lite``,
        ``neuro-1-standard``, ``neuro-1-heavy``; ``neuro-1`` is an alias).
        With ``deployment`` the request goes through that deployment, and
        ``model`` may be left out. The sampling fields are OpenAI's, with the
        server's bounds (docs/API.md); a field left at None takes the
        server's default. ``neuro={"activity": True}`` (streams only) adds
        each chunk's spiking activity.

        With ``stream=True`` the result is a :class:`~neuro.Stream` of
        :class:`~neuro.types.ChatCompletionChunk`; otherwise a
        :class:`~neuro.types.ChatCompletion`. ``extra_body`` adds fields to
        the request, ``extra_headers`` headers; ``timeout`` overrides the
        client's for this call.
        """
        path = "/v1/chat/completions"
        if deployment is not None:
            path = "/v1/deployments/%s/chat/completions" % segment(deployment)
        body = drop_none(
            {
                "model": model,
                "messages": list(messages),
                "max_tokens": max_tokens,
                "max_completion_tokens": max_completion_tokens,
                "temperature": temperature,
                "top_p": top_p,
                "n": n,
                "stop": stop,
                "seed": seed,
                "presence_penalty": presence_penalty,
                "frequency_penalty": frequency_penalty,
                "logit_bias": logit_bias,
                "logprobs": logprobs,
                "top_logprobs": top_logprobs,
                "stream_options": stream_options,
                "user": user,
                "neuro": neuro,
            }
        )
        if stream:
            body["stream"] = True
            return self._client._stream(
                path,
                ChatCompletionChunk.construct,
                body=body,
                timeout=timeout,
                extra_headers=extra_headers,
                extra_body=extra_body,
            )
        return self._client._request(
            "POST",
            path,
            ChatCompletion.construct,
            body=body,
            timeout=timeout,
            extra_headers=extra_headers,
            extra_body=extra_body,
        )


class Chat(APIResource):
    completions: ChatCompletions

    def __init__(self, client: "Client") -> None:
        super().__init__(client)
        self.completions = ChatCompletions(client)
