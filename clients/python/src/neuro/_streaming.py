"""Server-sent events, parsed as they arrive, as an iterator of typed chunks."""

from __future__ import annotations

import http.client
import json
import socket
from collections import deque
from typing import AbstractSet, Any, Callable, Deque, Generic, Iterator, List, Optional, Tuple, TypeVar

from ._errors import APIConnectionError, APIResponseValidationError, APITimeoutError, make_stream_error
from ._transport import RawResponse

__all__ = ["Stream", "SSEDecoder", "MAX_EVENT_BYTES"]

T = TypeVar("T")

# One event may hold at most this much data: a chunk with many
# log-probabilities is a few kilobytes, and a broken server must not make
# the client buffer without limit.
MAX_EVENT_BYTES = 8 << 20
_READ_SIZE = 64 << 10


class SSEDecoder:
    """An incremental parser of the text/event-stream format (WHATWG HTML,
    "server-sent events"): feed it bytes as they come, take out the events
    they complete. Lines end with CRLF, LF or CR; ``data`` lines of one event
    are joined with LF; comments and the ``id`` and ``retry`` fields are
    skipped."""

    def __init__(self) -> None:
        self._buf = b""
        self._data: List[bytes] = []
        self._size = 0
        self._event = ""

    def feed(self, chunk: bytes) -> List[Tuple[str, bytes]]:
        """Adds bytes; returns the events (name, data) that they complete."""
        buf = self._buf + chunk if self._buf else chunk
        events: List[Tuple[str, bytes]] = []
        start = 0
        n = len(buf)
        while start < n:
            lf = buf.find(b"\n", start)
            cr = buf.find(b"\r", start, lf if lf >= 0 else n)
            if cr >= 0:
                if cr == n - 1:
                    break  # a CR at the end may be the first half of CRLF
                end, nxt = cr, cr + 2 if buf[cr + 1 : cr + 2] == b"\n" else cr + 1
            elif lf >= 0:
                end, nxt = lf, lf + 1
            else:
                break
            self._line(buf[start:end], events)
            start = nxt
        rest = buf[start:]
        if len(rest) > MAX_EVENT_BYTES:
            raise APIResponseValidationError("stream: a line longer than %d bytes" % MAX_EVENT_BYTES)
        self._buf = rest
        return events

    def end(self) -> bool:
        """Says whether the input ended in the middle of an event."""
        return bool(self._buf.strip(b"\r") or self._data)

    def _line(self, line: bytes, events: List[Tuple[str, bytes]]) -> None:
        if not line:
            if self._data:
                events.append((self._event or "message", b"\n".join(self._data)))
            self._data, self._size, self._event = [], 0, ""
            return
        if line[0] == 0x3A:  # ":" a comment
            return
        field, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if field == b"data":
            self._size += len(value) + 1
            if self._size > MAX_EVENT_BYTES:
                raise APIResponseValidationError("stream: an event larger than %d bytes" % MAX_EVENT_BYTES)
            self._data.append(value)
        elif field == b"event":
            self._event = value.decode("utf-8", "replace")


class Stream(Generic[T]):
    """The chunks of a streamed response, decoded as they arrive.

    Iterate over it; it ends after the server's ``data: [DONE]`` or, for a
    stream of a response, after its last event (``response.completed``,
    ``response.incomplete`` or ``response.failed``; the Responses API sends
    no ``[DONE]``). An error the server sends in the middle of a chunk
    stream is raised as its :class:`~neuro.APIError` (a response's stream
    carries it as an ``error`` event instead); a connection that ends before
    the stream's end as :class:`~neuro.APIConnectionError`.

    Closing it (``close()``, leaving a ``with`` block, or dropping the last
    reference to it) closes the connection, and the server stops generating.
    """

    def __init__(
        self, raw: RawResponse, cast: Callable[[Any], T], *, end_events: Optional[AbstractSet[str]] = None
    ) -> None:
        self._raw = raw
        self._cast = cast
        # The event types after which the stream ends (None: it ends with
        # data: [DONE]); _ended says one came.
        self._end_events = end_events
        self._ended = False
        self._decoder = SSEDecoder()
        self._pending: Deque[Tuple[str, bytes]] = deque()
        self._closed = False
        # The response's x-request-id, to quote in a report.
        self.request_id: Optional[str] = raw.headers.get("X-Request-Id")

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        while True:
            if self._ended:
                self._finish()
                raise StopIteration
            if self._pending:
                name, data = self._pending.popleft()
                return self._decode(name, data)
            if self._closed:
                raise StopIteration
            chunk = self._read()
            if not chunk:
                truncated = self._decoder.end()
                self.close()
                raise APIConnectionError(
                    "the stream ended before %s%s"
                    % (
                        "data: [DONE]" if self._end_events is None else "its last event",
                        ", in the middle of an event" if truncated else "",
                    ),
                    request_id=self.request_id,
                )
            self._pending.extend(self._decoder.feed(chunk))

    def _decode(self, name: str, data: bytes) -> T:
        if data == b"[DONE]":
            self._finish()
            raise StopIteration
        try:
            obj = json.loads(data)
        except ValueError:
            self.close()
            raise APIResponseValidationError(
                "stream: an event that is not JSON: %r" % data[:512], request_id=self.request_id
            ) from None
        if (
            isinstance(obj, dict)
            and "error" in obj
            and isinstance(obj["error"], dict)
            and (self._end_events is None or name == "message")
        ):
            # A chunk never has an "error" key: this is the server's last word.
            # (A response's events are named, and a failed response carries
            # an "error" object of its own.)
            self.close()
            raise make_stream_error(obj["error"], self.request_id)
        if self._end_events is not None and isinstance(obj, dict):
            if name in self._end_events or obj.get("type") in self._end_events:
                self._ended = True
        return self._cast(obj)

    def _read(self) -> bytes:
        resp = self._raw.http
        assert resp is not None
        try:
            return resp.read1(_READ_SIZE)
        except socket.timeout:
            self.close()
            raise APITimeoutError("stream: timed out waiting for the next event", request_id=self.request_id) from None
        except (OSError, http.client.HTTPException, ValueError) as e:
            # ValueError: the response was closed under the reader.
            self.close()
            if isinstance(e, http.client.IncompleteRead):
                return b""
            raise APIConnectionError("stream: %s" % (str(e) or type(e).__name__), request_id=self.request_id) from None

    def _finish(self) -> None:
        """After [DONE]: reads the end of the response, so that the connection
        can serve the next request."""
        if self._closed:
            return
        resp, conn = self._raw.http, self._raw.conn
        try:
            if resp is not None and conn is not None and not self._pending and not self._decoder.end():
                resp.read()
                if resp.isclosed():
                    self._closed = True
                    self._raw.transport.release(conn)
                    return
        except (OSError, http.client.HTTPException, ValueError):
            pass
        self.close()

    def close(self) -> None:
        """Closes the connection; the iterator ends."""
        if self._closed:
            return
        self._closed = True
        self._pending.clear()
        resp, conn = self._raw.http, self._raw.conn
        if conn is not None:
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            conn.close()
        if resp is not None:
            resp.close()

    def __enter__(self) -> "Stream[T]":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
