"""The client: configuration, and one attribute per group of endpoints."""

from __future__ import annotations

import os
from typing import AbstractSet, Any, Callable, Dict, Mapping, Optional, TypeVar

from ._encoding import encode_json
from ._errors import APIResponseValidationError, APIStatusError
from ._streaming import Stream
from ._transport import Transport
from ._version import __version__
from .resources.chat import Chat
from .resources.completions import Completions
from .resources.deployments import Deployments
from .resources.models import Models
from .resources.networks import Networks
from .resources.responses import Responses
from .resources.telemetry import TelemetryResource

__all__ = ["Client", "DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "DEFAULT_MAX_RETRIES"]

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_RETRIES = 2

T = TypeVar("T")
_NOT_GIVEN: Any = object()


class Client:
    """A client of one Neuro server. Safe to share between threads; it keeps
    connections alive between calls (``close()``, or a ``with`` block, closes
    them).

    Args:
        api_key: sent as ``Authorization: Bearer <api_key>``; default the
            ``NEURO_API_KEY`` environment variable. Only ``health()`` and
            ``metrics()`` work without one.
        base_url: the server's root (``http://127.0.0.1:8080``) or, as the
            OpenAI SDKs take it, its ``/v1``; a server mounted under a
            prefix is reached through it (``https://example.com/neuro``).
            Default ``NEURO_BASE_URL``, else ``http://127.0.0.1:8080``.
        timeout: seconds to wait for the server: to connect, and then for
            each read (the next bytes of an answer, the next event of a
            stream). Default 600.
        max_retries: how many times a failed call is tried again (see
            "Retries" in the README). Default 2; 0 turns retries off.
        retry_non_idempotent: also retry a POST whose connection broke
            after the request was sent, although the server may have run
            it. Default False.
        default_headers: headers sent with every request.
    """

    models: Models
    chat: Chat
    completions: Completions
    responses: Responses
    networks: Networks
    deployments: Deployments
    telemetry: TelemetryResource

    def __init__(
        self,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_non_idempotent: bool = False,
        default_headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        if api_key is None:
            api_key = os.environ.get("NEURO_API_KEY") or None
        if base_url is None:
            base_url = os.environ.get("NEURO_BASE_URL") or DEFAULT_BASE_URL
        if timeout <= 0:
            raise ValueError("neuro: timeout must be positive, got %r" % (timeout,))
        if max_retries < 0:
            raise ValueError("neuro: max_retries must be 0 or more, got %r" % (max_retries,))
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_non_idempotent = retry_non_idempotent
        self.default_headers: Dict[str, str] = dict(default_headers or {})
        self._transport = Transport(
            base_url,
            api_key,
            timeout,
            max_retries,
            self.default_headers,
            retry_non_idempotent,
            "neuro-client-python/" + __version__,
        )
        self.base_url: str = self._transport.base_url
        self.models = Models(self)
        self.chat = Chat(self)
        self.completions = Completions(self)
        self.responses = Responses(self)
        self.networks = Networks(self)
        self.deployments = Deployments(self)
        self.telemetry = TelemetryResource(self)

    def with_options(
        self,
        *,
        api_key: Optional[str] = _NOT_GIVEN,
        base_url: Optional[str] = _NOT_GIVEN,
        timeout: float = _NOT_GIVEN,
        max_retries: int = _NOT_GIVEN,
        retry_non_idempotent: bool = _NOT_GIVEN,
        default_headers: Optional[Mapping[str, str]] = _NOT_GIVEN,
    ) -> "Client":
        """A new client with the same configuration but for the options given
        (``client.with_options(max_retries=5).deployments.run(...)``)."""

        def pick(v: Any, default: Any) -> Any:
            return default if v is _NOT_GIVEN else v

        return Client(
            api_key=pick(api_key, self.api_key),
            base_url=pick(base_url, self.base_url),
            timeout=pick(timeout, self.timeout),
            max_retries=pick(max_retries, self.max_retries),
            retry_non_idempotent=pick(retry_non_idempotent, self.retry_non_idempotent),
            default_headers=pick(default_headers, self.default_headers),
        )

    def health(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """``GET /health``: whether the server can serve.

        Returns the server's report as a dict, ``{"status": "ok", "mock": ...,
        "deployments": [...]}`` when it can serve, and also when it cannot
        (503: ``"status": "unavailable"`` with a ``"reason"``), so that a
        health check reads both the same way. A 503 is not retried.
        """
        try:
            report = self._transport.request("GET", "/health", timeout=timeout, retry_statuses=False).data
        except APIStatusError as e:
            if e.status_code == 503 and isinstance(e.body, dict) and "status" in e.body:
                return e.body
            raise
        if not isinstance(report, dict):
            raise APIResponseValidationError("/health: not a JSON object: %r" % (report,), status_code=200)
        return report

    def metrics(self, *, timeout: Optional[float] = None) -> str:
        """``GET /metrics``: the server's Prometheus metrics, as text."""
        raw = self._transport.request("GET", "/metrics", timeout=timeout, stream=True)
        try:
            assert raw.http is not None and raw.conn is not None
            text = raw.http.read().decode("utf-8", "replace")
            self._transport.release(raw.conn)
            return text
        except BaseException:
            if raw.conn is not None:
                raw.conn.close()
            raise

    def close(self) -> None:
        """Closes the connections kept alive for the next call."""
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "neuro.Client(base_url=%r)" % self.base_url

    def _request(
        self,
        method: str,
        path: str,
        cast: Callable[[Any], T],
        *,
        body: Optional[Dict[str, Any]] = None,
        query: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
    ) -> T:
        data = None
        if body is not None:
            if extra_body:
                body = dict(body)
                body.update(extra_body)
            data = encode_json(body)
        raw = self._transport.request(method, path, body=data, query=query, headers=extra_headers, timeout=timeout)
        return cast(raw.data)

    def _stream(
        self,
        path: str,
        cast: Callable[[Any], T],
        *,
        body: Dict[str, Any],
        timeout: Optional[float] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        end_events: Optional[AbstractSet[str]] = None,
    ) -> Stream[T]:
        if extra_body:
            body = dict(body)
            body.update(extra_body)
        raw = self._transport.request(
            "POST", path, body=encode_json(body), headers=extra_headers, timeout=timeout, stream=True
        )
        ctype = (raw.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype != "text/event-stream":
            assert raw.http is not None and raw.conn is not None
            start = raw.http.read(512)
            raw.conn.close()
            raise APIResponseValidationError(
                "asked for a stream, got %s: %r" % (ctype or "no Content-Type", start),
                status_code=raw.status,
                request_id=raw.headers.get("X-Request-Id"),
            )
        return Stream(raw, cast, end_events=end_events)
