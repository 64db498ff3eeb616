"""The test harness: a real Neuro server (examples/server), built once and
started on a free loopback port, in mock mode and in real mode.

NEURO_TEST_SERVER names a server binary already built; otherwise the
harness builds one with ``go build`` from the repository that holds this
package.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, Iterator, List, Optional

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

import neuro  # noqa: E402

# The keys the test servers accept. Each test that counts something a key
# is limited by (requests per minute, deployments) has a key of its own.
KEY = "sk-test-main"
OTHER_KEY = "sk-test-other"
RATE_KEY = "sk-test-rate"
QUOTA_KEY = "sk-test-quota"
KEYS = [KEY, OTHER_KEY, RATE_KEY, QUOTA_KEY]

SNN_FIXTURES = os.path.join(ROOT, "compile", "pytorch", "testdata", "snn")


class Server:
    """A running examples/server."""

    def __init__(self, binary: str, mock: bool, workdir: str) -> None:
        self.mock = mock
        self.mode = "mock" if mock else "real"
        args = [binary, "-addr", "127.0.0.1:0", "-console=false"]
        if mock:
            args.append("-mock")
        env = dict(os.environ, NEURO_API_KEYS=",".join(KEYS))
        self.log_path = os.path.join(workdir, "server-%s.log" % self.mode)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=self._log)
        self.url = self._wait_for_address()

    def _wait_for_address(self) -> str:
        found: List[str] = []
        ready = threading.Event()

        def pump() -> None:
            # Reads the server's stdout to its end, so that it never blocks
            # on a full pipe, and picks out the address it serves on.
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self._log.write(line)
                self._log.flush()
                m = re.match(rb"Serving on (http://\S+?) ", line)
                if m and not found:
                    found.append(m.group(1).decode())
                    ready.set()
            ready.set()

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        if not ready.wait(60) or not found:
            self.close()
            raise RuntimeError("the %s server did not start; its log:\n%s" % (self.mode, self.log()))
        return found[0]

    def client(self, key: Optional[str] = KEY, **kw: object) -> neuro.Client:
        return neuro.Client(base_url=self.url, api_key=key, **kw)  # type: ignore[arg-type]

    def log(self) -> str:
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._pump.join(5)
        self._log.close()


@pytest.fixture(scope="session")
def workdir() -> Iterator[str]:
    d = tempfile.mkdtemp(prefix="neuro-client-python-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def server_binary(workdir: str) -> str:
    given = os.environ.get("NEURO_TEST_SERVER")
    if given:
        return given
    out = os.path.join(workdir, "server")
    env = dict(os.environ)
    env["PATH"] = env.get("PATH", "") + os.pathsep + "/usr/local/go/bin"
    t = time.monotonic()
    res = subprocess.run(
        ["go", "build", "-o", out, "./examples/server"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if res.returncode != 0:
        pytest.fail("go build ./examples/server failed:\n" + res.stdout + res.stderr)
    sys.stderr.write("built the server in %.1fs\n" % (time.monotonic() - t))
    return out


_servers: Dict[bool, Server] = {}


@pytest.fixture(scope="session")
def servers(server_binary: str, workdir: str) -> Iterator[Dict[bool, Server]]:
    yield _servers
    for s in _servers.values():
        s.close()


def _server(servers: Dict[bool, Server], binary: str, workdir: str, mock: bool) -> Server:
    s = servers.get(mock)
    if s is None:
        s = servers[mock] = Server(binary, mock, workdir)
    return s


@pytest.fixture(scope="session")
def real_server(servers: Dict[bool, Server], server_binary: str, workdir: str) -> Server:
    return _server(servers, server_binary, workdir, False)


@pytest.fixture(scope="session")
def mock_server(servers: Dict[bool, Server], server_binary: str, workdir: str) -> Server:
    return _server(servers, server_binary, workdir, True)


@pytest.fixture(params=["mock", "real"])
def server(request: pytest.FixtureRequest, servers: Dict[bool, Server], server_binary: str, workdir: str) -> Server:
    """The test runs once against each mode."""
    return _server(servers, server_binary, workdir, request.param == "mock")


@pytest.fixture
def client(server: Server) -> Iterator[neuro.Client]:
    c = server.client()
    yield c
    c.close()
