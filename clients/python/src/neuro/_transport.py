"""HTTP over the standard library: a pool of kept-alive connections, timeouts
and retries.

# Retries

A call is tried again, up to ``max_retries`` times, when

- the connection could not be made, or broke while the request was being
  written (the server cannot have acted on a request it did not receive
  whole);
- the server answered 429 (``rate_limit_exceeded``) or 503, waiting for the
  ``Retry-After`` it sent, else backing off exponentially with jitter;
- the connection broke or timed out after the request was sent, but only
  for GET and DELETE, or for every method when ``retry_non_idempotent`` is
  set: a POST that reached the server may have run.

It is never tried again on another 4xx, on a 429 ``insufficient_quota``
(waiting does not lift a quota), on a 503 ``timeout`` (the server already
spent its whole request time on it), nor when ``Retry-After`` asks for more
than ``MAX_RETRY_WAIT`` seconds.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import select
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Any, List, Mapping, Optional, Tuple

from ._errors import (
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    make_status_error,
)

__all__ = ["Transport", "RawResponse", "MAX_RETRY_WAIT"]

# The longest Retry-After the client waits for; a server that asks for more
# gets its error raised at once.
MAX_RETRY_WAIT = 60.0
# Backoff without Retry-After: INITIAL_BACKOFF * 2**attempt, at most
# MAX_BACKOFF, less up to a quarter of jitter.
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
# An error body or an unexpected response is read up to this size.
MAX_ERROR_BODY = 1 << 20
# Idle connections kept per client.
POOL_SIZE = 8

_IDEMPOTENT = frozenset(("GET", "HEAD", "DELETE", "OPTIONS", "PUT"))


class RawResponse:
    """A response whose status is 2xx, with its body still to read (streams)
    or read and decoded (``data``)."""

    __slots__ = ("status", "headers", "data", "http", "conn", "transport")

    def __init__(
        self,
        status: int,
        headers: http.client.HTTPMessage,
        data: Any,
        resp: Optional[http.client.HTTPResponse],
        conn: Optional[http.client.HTTPConnection],
        transport: "Transport",
    ) -> None:
        self.status = status
        self.headers = headers
        self.data = data
        self.http = resp
        self.conn = conn
        self.transport = transport


class _Failure(Exception):
    """An attempt that got no response; ``sent`` when the request was written
    whole (the server may have acted on it)."""

    def __init__(self, error: Exception, sent: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.sent = sent


class Transport:
    """Sends requests to one server; safe for use from several threads."""

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        timeout: float,
        max_retries: int,
        default_headers: Optional[Mapping[str, str]],
        retry_non_idempotent: bool,
        user_agent: str,
    ) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("neuro: base URL %r: want http(s)://host[:port][/prefix]" % base_url)
        if u.query or u.fragment or u.username or u.password:
            raise ValueError("neuro: base URL %r: no query, fragment or user info" % base_url)
        path = u.path.rstrip("/")
        if path.endswith("/v1"):
            path = path[:-3]
        self.scheme = u.scheme
        self.host = u.hostname
        self.port = u.port
        self.prefix = path
        self.base_url = "%s://%s%s" % (u.scheme, u.netloc, path)
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_non_idempotent = retry_non_idempotent
        headers = {"User-Agent": user_agent, "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = "Bearer " + api_key
        if default_headers:
            headers.update(default_headers)
        self.headers = headers
        self._json_headers = dict(headers, **{"Content-Type": "application/json"})
        self._stream_headers = dict(self._json_headers, Accept="text/event-stream")
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._ssl: Optional[ssl.SSLContext] = None

    def _new_conn(self, timeout: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self._ssl)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _get_conn(self, timeout: float) -> Tuple[http.client.HTTPConnection, bool]:
        """An idle connection that the server has not closed, or a new one
        (not yet connected); the flag says which."""
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._new_conn(timeout), False
            sock = conn.sock
            # An idle connection that is readable has been closed by the
            # server (or holds bytes nobody asked for): it cannot be used.
            if sock is None or select.select([sock], [], [], 0)[0]:
                conn.close()
                continue
            sock.settimeout(timeout)
            conn.timeout = timeout
            return conn, True

    def release(self, conn: http.client.HTTPConnection) -> None:
        """Gives back a connection whose last response has been read whole."""
        if conn.sock is None:
            return
        with self._lock:
            if len(self._idle) < POOL_SIZE:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Closes the idle connections; those of open streams close with them."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        url = self.prefix + path
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        return url

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Optional[bytes] = None,
        query: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        stream: bool = False,
        max_retries: Optional[int] = None,
        retry_statuses: bool = True,
    ) -> RawResponse:
        """Sends the request, retrying as the module's doc says, and returns
        the 2xx response; any other status is raised as its APIError.

        With ``stream`` the body is left to read (``RawResponse.http``), else
        it is read and decoded as JSON into ``data``. ``retry_statuses`` False
        makes 429 and 503 final (for /health, which answers 503 by design).
        """
        url = self.url(path, query)
        if body is None:
            hdrs = self.headers
        else:
            hdrs = self._stream_headers if stream else self._json_headers
        if headers:
            hdrs = dict(hdrs)
            hdrs.update(headers)
        tmo = self.timeout if timeout is None else timeout
        retries = self.max_retries if max_retries is None else max_retries
        replayable = method in _IDEMPOTENT or self.retry_non_idempotent
        attempt = 0
        while True:
            try:
                resp, conn = self._attempt(method, url, body, hdrs, tmo)
            except _Failure as f:
                if attempt < retries and (not f.sent or replayable):
                    time.sleep(_backoff(attempt))
                    attempt += 1
                    continue
                raise f.error from None
            status = resp.status
            if 200 <= status < 300:
                if stream:
                    return RawResponse(status, resp.msg, None, resp, conn, self)
                return RawResponse(status, resp.msg, self._read_json(resp, conn, tmo), None, None, self)
            err = self._read_error(resp, conn)
            if retry_statuses and attempt < retries and _retryable(status, err.code):
                wait = err.retry_after
                if wait is None:
                    wait = _backoff(attempt)
                if wait <= MAX_RETRY_WAIT:
                    time.sleep(wait)
                    attempt += 1
                    continue
            raise err

    def _attempt(
        self, method: str, url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: float
    ) -> Tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
        conn, reused = self._get_conn(timeout)
        if not reused:
            try:
                conn.connect()
            except socket.timeout:
                conn.close()
                raise _Failure(APITimeoutError("connecting to %s timed out after %gs" % (self.base_url, timeout)), False)
            except OSError as e:
                conn.close()
                raise _Failure(APIConnectionError("cannot connect to %s: %s" % (self.base_url, e)), False)
            # Headers and body go in two writes: without this the body can
            # wait for the acknowledgement of the headers (Nagle).
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            conn.putrequest(method, url, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
        except OSError as e:
            # The request was not written whole. The server may still have
            # answered before it stopped reading (a 401 does not wait for
            # the body): that answer is the one to report.
            try:
                return conn.getresponse(), conn
            except Exception:
                conn.close()
            raise _Failure(APIConnectionError("sending %s %s: %s" % (method, url, e)), False)
        try:
            return conn.getresponse(), conn
        except socket.timeout:
            conn.close()
            raise _Failure(APITimeoutError("%s %s: no response within %gs" % (method, url, timeout)), True)
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise _Failure(APIConnectionError("%s %s: connection lost before the response: %s" % (method, url, _describe(e))), True)

    def _read_json(self, resp: http.client.HTTPResponse, conn: http.client.HTTPConnection, timeout: float) -> Any:
        try:
            raw = resp.read()
        except socket.timeout:
            conn.close()
            raise APITimeoutError("reading the response timed out after %gs" % timeout) from None
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise APIConnectionError("reading the response: %s" % _describe(e)) from None
        self.release(conn)
        try:
            return json.loads(raw)
        except ValueError:
            raise APIResponseValidationError(
                "HTTP %d: the body is not JSON (%s): %r" % (resp.status, resp.getheader("Content-Type"), raw[:512]),
                status_code=resp.status,
                request_id=resp.getheader("X-Request-Id"),
            ) from None

    def _read_error(self, resp: http.client.HTTPResponse, conn: http.client.HTTPConnection) -> APIStatusError:
        try:
            raw = resp.read(MAX_ERROR_BODY)
            if resp.isclosed():
                self.release(conn)
            else:
                conn.close()
        except (OSError, http.client.HTTPException):
            conn.close()
            raw = b""
        body: Any = None
        try:
            body = json.loads(raw)
        except ValueError:
            pass
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        return make_status_error(
            resp.status, body, raw.decode("utf-8", "replace"), hdrs, parse_retry_after(hdrs.get("retry-after"))
        )


def _retryable(status: int, code: Optional[str]) -> bool:
    if status == 429:
        return code != "insufficient_quota"
    if status == 503:
        return code != "timeout"
    return False


def _backoff(attempt: int) -> float:
    d: float = min(INITIAL_BACKOFF * 2.0**attempt, MAX_BACKOFF)
    return d * (1 - 0.25 * random.random())


def parse_retry_after(v: Optional[str]) -> Optional[float]:
    """Retry-After as seconds (delay-seconds or an HTTP date), or None."""
    if not v:
        return None
    v = v.strip()
    try:
        s = float(v)
    except ValueError:
        try:
            t = email.utils.parsedate_to_datetime(v)
        except (TypeError, ValueError, IndexError):
            return None
        if t is None:
            return None
        return max(0.0, t.timestamp() - time.time())
    if s != s or s < 0:
        return None
    return s


def _describe(e: BaseException) -> str:
    return str(e) or type(e).__name__
