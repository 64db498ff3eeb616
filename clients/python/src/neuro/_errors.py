"""The errors the client raises.

Every failure of a call is a :class:`NeuroError`. Those that come from the
API are :class:`APIError`: the server's ``{"error": {...}}`` body as
attributes (``status_code``, ``type``, ``code``, ``param``, ``message``),
with one subclass per HTTP status, so that callers catch the condition they
can handle::

    try:
        client.models.retrieve("gpt-4")
    except neuro.NotFoundError as e:
        print(e.code)          # "model_not_found"

Connection failures and timeouts are :class:`APIConnectionError` and
:class:`APITimeoutError`: also :class:`APIError`, with ``status_code`` None.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "NeuroError",
    "APIError",
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "UnprocessableEntityError",
    "RateLimitError",
    "InternalServerError",
    "APIConnectionError",
    "APITimeoutError",
    "APIResponseValidationError",
]


class NeuroError(Exception):
    """The base of every error this package raises."""


class APIError(NeuroError):
    """An error of a call to the API.

    Attributes:
        message: what went wrong, in words.
        status_code: the HTTP status of the response; None when there was no
            response (a connection error or a timeout) or when the error
            arrived as an event in the middle of a stream.
        type: the error body's ``type`` (``invalid_request_error``,
            ``not_found_error``, ...), or None.
        code: the error body's ``code`` (``model_not_found``, ...), or None.
        param: the request field at fault (``messages[1].role``), or None.
        request_id: the response's ``x-request-id``, to quote in a report.
        retry_after: the wait the server asked for (``Retry-After``) in
            seconds, or None.
        body: the decoded error body, or None.
    """

    status_code: Optional[int]
    type: Optional[str]
    code: Optional[str]
    param: Optional[str]
    message: str
    request_id: Optional[str]
    retry_after: Optional[float]
    body: Optional[Any]

    def __init__(
        self,
        message: str,
        *,
        status_code: Optional[int] = None,
        type: Optional[str] = None,
        code: Optional[str] = None,
        param: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        body: Optional[Any] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.type = type
        self.code = code
        self.param = param
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body

    def __str__(self) -> str:
        parts = []
        if self.status_code is not None:
            parts.append(str(self.status_code))
        if self.code:
            parts.append(self.code)
        elif self.type:
            parts.append(self.type)
        head = " ".join(parts)
        if self.param:
            head += " (param %s)" % self.param
        text = "%s: %s" % (head, self.message) if head else self.message
        if self.request_id:
            text += " [request %s]" % self.request_id
        return text


class APIStatusError(APIError):
    """The server answered with an error status (4xx or 5xx). A status without
    a subclass of its own (405, 408, 413, 415) is raised as this class."""


class BadRequestError(APIStatusError):
    """400: a malformed request, a missing or invalid field (``param`` names it)."""


class AuthenticationError(APIStatusError):
    """401: a missing or wrong API key."""


class PermissionDeniedError(APIStatusError):
    """403: the caller may not do this (delete the server's own deployment)."""


class NotFoundError(APIStatusError):
    """404: an unknown (or another caller's) model, deployment or route."""


class ConflictError(APIStatusError):
    """409: a deployment id that is taken, a network still in use."""


class UnprocessableEntityError(APIStatusError):
    """422: a network that parses but is unsupported or does not fit the device."""


class RateLimitError(APIStatusError):
    """429: the key's rate or concurrency limit (``rate_limit_exceeded``, with
    ``retry_after``), or its quota of networks or deployments
    (``insufficient_quota``, which waiting does not lift)."""


class InternalServerError(APIStatusError):
    """5xx: a bug on the server (500) or an overloaded or unavailable one (503)."""


class APIConnectionError(APIError):
    """No answer: the connection could not be made or broke before the response
    was read."""

    def __init__(self, message: str = "connection error", **kw: Any) -> None:
        super().__init__(message, **kw)


class APITimeoutError(APIConnectionError):
    """The server did not answer within the timeout."""

    def __init__(self, message: str = "request timed out", **kw: Any) -> None:
        super().__init__(message, **kw)


class APIResponseValidationError(APIError):
    """A response that is not what the API sends: a proxy's HTML page, a body
    that is not JSON, a stream cut off before its end."""


_BY_STATUS: Dict[int, Type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}

# An error event in the middle of a stream has no status of its own (the
# stream's is 200); its type picks the kind.
_BY_TYPE: Dict[str, Type[APIStatusError]] = {
    "invalid_request_error": BadRequestError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "not_found_error": NotFoundError,
    "rate_limit_error": RateLimitError,
    "server_error": InternalServerError,
}


def error_class(status: int) -> Type[APIStatusError]:
    """The kind of error for an HTTP status."""
    if status >= 500:
        return InternalServerError
    return _BY_STATUS.get(status, APIStatusError)


def make_status_error(
    status: int,
    body: Any,
    text: str,
    headers: Mapping[str, str],
    retry_after: Optional[float],
) -> APIStatusError:
    """Builds the error of a response with status ``status``; ``body`` is its
    decoded JSON (or None) and ``text`` its start, for a body that is not the
    API's error shape."""
    err = body.get("error") if isinstance(body, dict) else None
    rid = headers.get("x-request-id")
    cls = error_class(status)
    if isinstance(err, dict):
        return cls(
            _str(err.get("message")) or "HTTP %d" % status,
            status_code=status,
            type=_str(err.get("type")),
            code=_str(err.get("code")),
            param=_str(err.get("param")),
            request_id=rid,
            retry_after=retry_after,
            body=body,
        )
    msg = "HTTP %d" % status
    if text:
        msg += ": " + text[:512]
    return cls(msg, status_code=status, request_id=rid, retry_after=retry_after, body=body)


def make_stream_error(err: Mapping[str, Any], request_id: Optional[str]) -> APIError:
    """Builds the error of a ``data: {"error": ...}`` event that ended a stream."""
    cls: Type[APIError] = _BY_TYPE.get(_str(err.get("type")) or "", APIError)
    return cls(
        _str(err.get("message")) or "stream error",
        type=_str(err.get("type")),
        code=_str(err.get("code")),
        param=_str(err.get("param")),
        request_id=request_id,
        body={"error": dict(err)},
    )


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None
