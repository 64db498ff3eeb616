"""Each kind of error, produced by a real server's response and caught as its
type, with the error body's fields as attributes."""

from __future__ import annotations

import os
import socket
import time

import pytest

import neuro
from conftest import OTHER_KEY, QUOTA_KEY, RATE_KEY, ROOT, Server

PLAIN_STATE_DICT = os.path.join(ROOT, "compile", "testdata", "digits", "mlp_state_dict.pt")
DIGITS_ONNX = os.path.join(ROOT, "compile", "testdata", "digits", "mlp.onnx")


def user(text: str):
    return [{"role": "user", "content": text}]


def check(e: neuro.APIError, cls: type, status: int, type_: str, code: str, param=None) -> None:
    assert type(e) is cls, "%s: want %s" % (type(e).__name__, cls.__name__)
    assert isinstance(e, neuro.APIStatusError) and isinstance(e, neuro.APIError)
    assert (e.status_code, e.type, e.code, e.param) == (status, type_, code, param), str(e)
    assert e.message and e.request_id and e.request_id.startswith("req_")
    assert code in str(e) and e.request_id in str(e)


def test_401_bad_key(server: Server) -> None:
    bad = server.client(key="sk-wrong")
    with pytest.raises(neuro.AuthenticationError) as e:
        bad.models.list()
    check(e.value, neuro.AuthenticationError, 401, "authentication_error", "invalid_api_key")
    # The server answers 401 before reading a body, and closes the connection
    # without draining it: the client still reports the 401.
    with pytest.raises(neuro.AuthenticationError):
        bad.networks.compile(os.urandom(8 << 20))
    with pytest.raises(neuro.AuthenticationError):
        server.client(key=None).models.list()


def test_403_permission_denied(client: neuro.Client) -> None:
    with pytest.raises(neuro.PermissionDeniedError) as e:
        client.deployments.delete("neuro-1-lite-cpu")
    check(e.value, neuro.PermissionDeniedError, 403, "invalid_request_error", "permission_denied")
    with pytest.raises(neuro.PermissionDeniedError):
        client.models.delete("neuro-1-lite")


def test_404_not_found(server: Server, client: neuro.Client) -> None:
    with pytest.raises(neuro.NotFoundError) as e:
        client.chat.completions.create(model="gpt-4", messages=user("Hi"))
    check(e.value, neuro.NotFoundError, 404, "not_found_error", "model_not_found")
    with pytest.raises(neuro.NotFoundError) as e:
        client.models.retrieve("gpt-4")
    check(e.value, neuro.NotFoundError, 404, "not_found_error", "model_not_found")
    with pytest.raises(neuro.NotFoundError) as e:
        client.deployments.run("no-such-deployment", inputs=[[0.0]])
    assert e.value.code == "deployment_not_found"
    # Another caller's network is not found either.
    net = client.networks.compile(DIGITS_ONNX)
    try:
        with pytest.raises(neuro.NotFoundError) as e:
            server.client(key=OTHER_KEY).models.retrieve(net.id)
        assert e.value.code == "model_not_found"
    finally:
        client.models.delete(net.id)


def test_409_conflict(server: Server, client: neuro.Client) -> None:
    net = client.networks.compile(DIGITS_ONNX)
    dep_id = "conflict-%s" % server.mode
    try:
        client.deployments.create(model=net.id, id=dep_id, wait=True)
        try:
            with pytest.raises(neuro.ConflictError) as e:
                client.deployments.create(model=net.id, id=dep_id)
            check(e.value, neuro.ConflictError, 409, "invalid_request_error", "deployment_exists", "id")
            with pytest.raises(neuro.ConflictError) as e:
                client.models.delete(net.id)
            assert e.value.code == "model_in_use" and dep_id in e.value.message
        finally:
            client.deployments.delete(dep_id)
    finally:
        client.models.delete(net.id)


def test_422_unsupported_model(client: neuro.Client) -> None:
    # A plain nn.Sequential state_dict holds no layer kinds: the server asks
    # for options.layers.
    with pytest.raises(neuro.UnprocessableEntityError) as e:
        client.networks.compile(PLAIN_STATE_DICT)
    check(e.value, neuro.UnprocessableEntityError, 422, "invalid_request_error", "unsupported_model")
    assert "options.layers" in e.value.message


def test_400_bad_input(client: neuro.Client) -> None:
    with pytest.raises(neuro.BadRequestError) as e:
        client.chat.completions.create(model="neuro-1-lite", messages=user("Hi"), temperature=5)
    check(e.value, neuro.BadRequestError, 400, "invalid_request_error", "invalid_value", "temperature")
    with pytest.raises(neuro.BadRequestError) as e:
        client.chat.completions.create(model="neuro-1-lite", messages=[{"role": "robot", "content": "Hi"}])
    assert e.value.param == "messages[0].role"
    with pytest.raises(neuro.BadRequestError) as e:
        client.deployments.run("neuro-1-digits-cpu", inputs=[[1.0, 2.0]])
    assert e.value.param == "inputs[0]"
    with pytest.raises(neuro.BadRequestError) as e:
        client.networks.compile(b"not a network")
    assert e.value.code == "invalid_model_file"
    with pytest.raises(neuro.BadRequestError) as e:
        client.deployments.create(model="neuro-1-lite", device="gpu")
    assert e.value.param == "device"


def test_429_quota(mock_server: Server) -> None:
    """Deployments per key are limited (16 by default): the next is 429
    insufficient_quota, without Retry-After, and the client does not retry it
    (waiting does not lift a quota)."""
    c = mock_server.client(key=QUOTA_KEY)
    net = c.networks.compile(DIGITS_ONNX)
    made = []
    try:
        with pytest.raises(neuro.RateLimitError) as e:
            for i in range(64):
                made.append(c.deployments.create(model=net.id, id="quota-%d" % i).id)
        check(e.value, neuro.RateLimitError, 429, "rate_limit_error", "insufficient_quota")
        assert e.value.retry_after is None
        tel = c.telemetry.retrieve()
        assert tel.requests.by_endpoint["/v1/deployments"] == len(made) + 1, "the 429 was retried"
    finally:
        for d in made:
            c.deployments.delete(d)
        c.models.delete(net.id)


def test_429_rate_limit(mock_server: Server) -> None:
    """A key's requests per minute (600 by default): past them, 429 with
    Retry-After; a client that retries waits for it and gets through."""
    c = mock_server.client(key=RATE_KEY, max_retries=0)
    with pytest.raises(neuro.RateLimitError) as e:
        for _ in range(2000):
            c.deployments.retrieve("neuro-1-lite-cpu")
    check(e.value, neuro.RateLimitError, 429, "rate_limit_error", "rate_limit_exceeded")
    assert e.value.retry_after is not None and e.value.retry_after >= 1
    # The bucket refills (10 a second), so a patient client's request may
    # find a token at once; it keeps the bucket empty until one of its
    # requests is refused, waits the Retry-After and gets through.
    patient = mock_server.client(key=RATE_KEY, max_retries=3)
    waited = False
    for _ in range(2000):
        t = time.monotonic()
        assert patient.deployments.retrieve("neuro-1-lite-cpu").id == "neuro-1-lite-cpu"
        if time.monotonic() - t >= 0.5:
            waited = True
            break
    assert waited, "no request of the patient client was refused and retried"


def test_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = neuro.Client(base_url="http://127.0.0.1:%d" % port, api_key="k", max_retries=0)
    with pytest.raises(neuro.APIConnectionError) as e:
        c.models.list()
    assert type(e.value) is neuro.APIConnectionError and e.value.status_code is None
    assert isinstance(e.value, neuro.APIError)


def test_timeout(real_server: Server) -> None:
    """A generation longer than the timeout: APITimeoutError, and the POST is
    not sent again."""
    c = real_server.client(key=OTHER_KEY, timeout=0.05)
    with pytest.raises(neuro.APITimeoutError) as e:
        c.chat.completions.create(
            model="neuro-1-heavy",
            messages=user("Go on"),
            max_tokens=4096,
            logit_bias={"0": -100, "4": -100},
        )
    assert isinstance(e.value, neuro.APIConnectionError) and e.value.status_code is None
