"""A scripted HTTP server on loopback, for what a real server does not do on
demand: a 429 or 503 followed by success, a connection that breaks after
the request was sent, a slow answer, an error in the middle of a stream."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

Action = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "Stub"  # type: ignore[assignment]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        stub = self.server
        with stub.lock:
            stub.requests.append((time.monotonic(), self.command, self.path, body))
            action = stub.actions.pop(0) if stub.actions else stub.default
        action(self)

    do_GET = do_POST = do_DELETE = _handle

    def send_json(self, status: int, body: Any, headers: Optional[Dict[str, str]] = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Request-Id", "req_stub")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def hang_up(self) -> None:
        """Closes the connection without an answer."""
        self.close_connection = True


class Stub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.actions: List[Action] = []
        self.default: Action = ok({"id": "m", "object": "model"})
        self.requests: List[Tuple[float, str, str, bytes]] = []
        self.url = "http://127.0.0.1:%d" % self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def script(self, *actions: Action) -> None:
        with self.lock:
            self.actions = list(actions)
            self.requests = []

    def close(self) -> None:
        self.shutdown()
        self.server_close()


def ok(body: Any) -> Action:
    return lambda h: h.send_json(200, body)


def error(status: int, type_: str, code: Optional[str], headers: Optional[Dict[str, str]] = None) -> Action:
    body = {"error": {"message": "stub %d" % status, "type": type_, "param": None, "code": code}}
    return lambda h: h.send_json(status, body, headers)


def hang_up(h: Handler) -> None:
    h.hang_up()


def slow(seconds: float, then: Action) -> Action:
    def act(h: Handler) -> None:
        time.sleep(seconds)
        try:
            then(h)
        except OSError:
            pass

    return act


def sse(*events: bytes, gate: Optional[threading.Event] = None, gate_after: int = 1) -> Action:
    """Streams the events (whole lines, chunked); with ``gate``, waits for it
    after the first ``gate_after`` of them."""

    def act(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("X-Request-Id", "req_stream")
        h.end_headers()
        for i, ev in enumerate(events):
            if gate is not None and i == gate_after:
                gate.wait(10)
            h.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
            h.wfile.flush()
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    return act
