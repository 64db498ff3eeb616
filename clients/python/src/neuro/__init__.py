"""The Python client of Neuro, a neuromorphic inference server.

It covers the whole REST API: the OpenAI half (chat and text completions,
models) in the shape of the OpenAI Python SDK, and the neuromorphic half
(compiling networks, deployments, runs, telemetry)::

    import neuro

    client = neuro.Client()  # NEURO_BASE_URL and NEURO_API_KEY
    r = client.chat.completions.create(
        model="neuro-1-lite", messages=[{"role": "user", "content": "Hi"}], max_tokens=32
    )
    print(r.choices[0].message.content)

    net = client.networks.compile("net.pt")
    dep = client.deployments.create(model=net.id, device="loihi", wait=True)
    out = client.deployments.run(dep.id, inputs=[x])
    print(out.outputs[0].spike_counts)

Results are typed objects (:mod:`neuro.types`); errors are :class:`APIError`
and its kinds; streams are :class:`Stream` iterators. Only the standard
library is needed; numpy arrays and torch tensors and modules are accepted
where given.
"""

from . import types
from ._client import DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, Client
from ._errors import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NeuroError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    UnprocessableEntityError,
)
from ._events import pack_events, pack_raster
from ._streaming import Stream
from ._version import __version__

__all__ = [
    "__version__",
    "Client",
    "Stream",
    "pack_events",
    "pack_raster",
    "types",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
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
