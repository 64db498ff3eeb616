"""Deployments: /v1/deployments, /v1/deployments/{id} and running a network,
POST /v1/deployments/{id}/run."""

from __future__ import annotations

import time
from typing import Any, Iterable, Mapping, Optional

from .._errors import APITimeoutError
from .._models import Page
from ..types.deployments import Deployment, DeploymentDeleted, Run
from ._base import APIResource, drop_none, segment

__all__ = ["Deployments"]

# Polling a loading deployment: the first wait, growing to the last.
_POLL_FIRST = 0.05
_POLL_MAX = 1.0


class Deployments(APIResource):
    def create(
        self,
        *,
        model: str,
        device: Optional[str] = None,
        id: Optional[str] = None,
        replicas: Optional[int] = None,
        max_batch_size: Optional[int] = None,
        precision: Optional[str] = None,
        node: Optional[str] = None,
        wait: bool = False,
        wait_timeout: float = 300.0,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Deployment:
        """Places a model on a device.

        ``model`` is a built-in model or a network the caller compiled;
        ``device`` a registered device (``cpu``, the default, ``loihi``,
        ``xylo``); ``id`` the deployment's id (default ``dep-`` and random
        characters; a taken one is 409 :class:`~neuro.ConflictError`).
        ``precision`` is the cpu simulator's weights: ``float32`` (exact, the
        default), ``bfloat16`` or ``int8``. ``node`` places it on a node of a
        cluster.

        The server waits a while for the load; a deployment that takes
        longer comes back with ``status`` ``loading``. With ``wait=True``
        this call then polls until the status is no longer ``loading`` (it
        is ``ready``, or ``failed`` with a ``failure``), for at most
        ``wait_timeout`` seconds (then :class:`~neuro.APITimeoutError`).
        """
        dep = self._client._request(
            "POST",
            "/v1/deployments",
            Deployment.construct,
            body=drop_none(
                {
                    "model": model,
                    "device": device,
                    "id": id,
                    "replicas": replicas,
                    "max_batch_size": max_batch_size,
                    "precision": precision,
                    "node": node,
                }
            ),
            timeout=timeout,
            extra_headers=extra_headers,
            extra_body=extra_body,
        )
        if wait:
            dep = self.wait(dep.id, timeout=wait_timeout, current=dep)
        return dep

    def wait(self, deployment: str, *, timeout: float = 300.0, current: Optional[Deployment] = None) -> Deployment:
        """Polls a deployment until its status is no longer ``loading``, for at
        most ``timeout`` seconds, and returns it."""
        deadline = time.monotonic() + timeout
        pause = _POLL_FIRST
        dep = current if current is not None else self.retrieve(deployment)
        while dep.status == "loading":
            left = deadline - time.monotonic()
            if left <= 0:
                raise APITimeoutError("deployment %s still loading after %gs" % (deployment, timeout))
            time.sleep(min(pause, left))
            pause = min(pause * 2, _POLL_MAX)
            dep = self.retrieve(deployment)
        return dep

    def list(
        self, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> Page[Deployment]:
        """The server's deployments and the caller's own."""
        return self._client._request(
            "GET", "/v1/deployments", _page_of_deployments, extra_headers=extra_headers, timeout=timeout
        )

    def retrieve(
        self, deployment: str, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> Deployment:
        """One deployment, with its status and current load."""
        return self._client._request(
            "GET",
            "/v1/deployments/" + segment(deployment),
            Deployment.construct,
            extra_headers=extra_headers,
            timeout=timeout,
        )

    def delete(
        self, deployment: str, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> DeploymentDeleted:
        """Deletes one of the caller's deployments; requests already running on
        it finish. The server's own are 403 (:class:`~neuro.PermissionDeniedError`)."""
        return self._client._request(
            "DELETE",
            "/v1/deployments/" + segment(deployment),
            DeploymentDeleted.construct,
            extra_headers=extra_headers,
            timeout=timeout,
        )

    def run(
        self,
        deployment: str,
        *,
        inputs: Iterable[Any],
        timesteps: Optional[int] = None,
        record: Optional[Iterable[str]] = None,
        model: Optional[str] = None,
        seed: Optional[int] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Run:
        """Runs samples through a network's deployment.

        ``inputs`` holds 1 to 256 samples, each one of:

        - a vector of the network's input size, presented at every step
          through the network's input encoding, for ``timesteps`` steps
          (default the network's own);
        - a matrix of one row per step (``timesteps`` then defaults to its
          rows);
        - ``{"events": [[t, i], ...], "timesteps": T}``: input i spikes at
          step t; :func:`neuro.pack_events` writes the same in compact form,
          a quarter of the size, for large batches, and
          :func:`neuro.pack_raster` as a raster of bits, smaller still for
          dense spike trains.

        A sample, or ``inputs`` whole, may be a list, a numpy array or a
        torch tensor (a 2-D array is a batch of vectors, a 3-D one a batch of
        matrices). ``record`` asks for ``"spikes"`` and/or ``"membrane"`` of
        the output layer; ``seed`` fixes the draws of a probability encoding.
        """
        if not hasattr(inputs, "__len__") and not hasattr(inputs, "tolist"):
            inputs = list(inputs)  # a generator
        body = drop_none(
            {
                "inputs": inputs,
                "timesteps": timesteps,
                "record": list(record) if record is not None else None,
                "model": model,
                "seed": seed,
            }
        )
        return self._client._request(
            "POST",
            "/v1/deployments/%s/run" % segment(deployment),
            Run.construct,
            body=body,
            timeout=timeout,
            extra_headers=extra_headers,
            extra_body=extra_body,
        )


def _page_of_deployments(data: Any) -> Page[Deployment]:
    return Page(Deployment.construct(d) for d in data["data"])
