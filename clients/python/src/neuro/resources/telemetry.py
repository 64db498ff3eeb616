"""Telemetry: GET /v1/telemetry."""

from __future__ import annotations

from typing import Mapping, Optional

from ..types.telemetry import Telemetry
from ._base import APIResource

__all__ = ["TelemetryResource"]


class TelemetryResource(APIResource):
    def retrieve(
        self,
        *,
        window: Optional[str] = None,
        model: Optional[str] = None,
        deployment: Optional[str] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Telemetry:
        """The caller's own requests: counts, latency, tokens, spikes and
        energy, in total and by model and deployment.

        ``window`` is a duration such as ``"90s"``, ``"5m"`` or ``"1h"``
        (default: since the server started); ``model`` and ``deployment``
        keep only their requests.
        """
        return self._client._request(
            "GET",
            "/v1/telemetry",
            Telemetry.construct,
            query={"window": window, "model": model, "deployment": deployment},
            extra_headers=extra_headers,
            timeout=timeout,
        )
