"""Text completions: POST /v1/completions."""

from __future__ import annotations

from typing import Any, List, Literal, Mapping, Optional, Union, overload

from .._streaming import Stream
from ..types.chat import Completion
from ._base import APIResource, drop_none

__all__ = ["Completions"]


class Completions(APIResource):
    @overload
    def create(
        self,
        *,
        model: str,
        prompt: Union[str, List[str]],
        stream: Literal[False] = False,
        max_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        n: Optional[int] = None,
        stop: Union[str, List[str], None] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        logit_bias: Optional[Mapping[str, float]] = None,
        logprobs: Optional[int] = None,
        echo: Optional[bool] = None,
        stream_options: Optional[Mapping[str, Any]] = None,
        user: Optional[str] = None,
        neuro: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Completion: ...

    @overload
    def create(
        self,
        *,
        model: str,
        prompt: Union[str, List[str]],
        stream: Literal[True],
        max_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        n: Optional[int] = None,
        stop: Union[str, List[str], None] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        logit_bias: Optional[Mapping[str, float]] = None,
        logprobs: Optional[int] = None,
        echo: Optional[bool] = None,
        stream_options: Optional[Mapping[str, Any]] = None,
        user: Optional[str] = None,
        neuro: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Stream[Completion]: ...

    def create(
        self,
        *,
        model: str,
        prompt: Union[str, List[str]],
        stream: bool = False,
        max_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        top_p: Optional[float] = None,
        n: Optional[int] = None,
        stop: Union[str, List[str], None] = None,
        seed: Optional[int] = None,
        presence_penalty: Optional[float] = None,
        frequency_penalty: Optional[float] = None,
        logit_bias: Optional[Mapping[str, float]] = None,
        logprobs: Optional[int] = None,
        echo: Optional[bool] = None,
        stream_options: Optional[Mapping[str, Any]] = None,
        user: Optional[str] = None,
        neuro: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Union[Completion, Stream[Completion]]:
        """Asks for a text completion of ``prompt`` (a string, or up to 16
        strings: one set of ``n`` choices each).

        ``max_tokens`` may be 0 (with ``echo`` and ``logprobs``, to score the
        prompt); ``logprobs`` is the number of alternatives per position
        (0..5). With ``stream=True`` the result is a :class:`~neuro.Stream`
        of :class:`~neuro.types.Completion` chunks; a server in mock mode
        answers that with 400 ``stream_not_supported``.
        """
        body = drop_none(
            {
                "model": model,
                "prompt": prompt,
                "max_tokens": max_tokens,
                "temperature": temperature,
                "top_p": top_p,
                "n": n,
                "stop": stop,
                "seed": seed,
                "presence_penalty": presence_penalty,
                "frequency_penalty": frequency_penalty,
                "logit_bias": logit_bias,
                "logprobs": logprobs,
                "echo": echo,
                "stream_options": stream_options,
                "user": user,
                "neuro": neuro,
            }
        )
        if stream:
            body["stream"] = True
            return self._client._stream(
                "/v1/completions",
                Completion.construct,
                body=body,
                timeout=timeout,
                extra_headers=extra_headers,
                extra_body=extra_body,
            )
        return self._client._request(
            "POST",
            "/v1/completions",
            Completion.construct,
            body=body,
            timeout=timeout,
            extra_headers=extra_headers,
            extra_body=extra_body,
        )
