"""Telemetry: GET /v1/telemetry."""

from __future__ import annotations

from typing import Dict, List, Optional

from .._models import BaseObject

__all__ = [
    "TelemetryWindow",
    "RequestCounts",
    "Percentiles",
    "TokenCounts",
    "NeuromorphicCounts",
    "TelemetryGroup",
    "NodeStatus",
    "Telemetry",
]


class TelemetryWindow(BaseObject):
    start: int
    """Unix seconds."""
    end: int


class RequestCounts(BaseObject):
    total: int
    errors: int
    by_endpoint: Dict[str, int]
    """By route template (``/v1/deployments/{deployment_id}/run``)."""


class Percentiles(BaseObject):
    p50: float
    p95: float
    p99: float
    mean: Optional[float] = None


class TokenCounts(BaseObject):
    prompt: int
    completion: int
    per_second: float
    """Completion tokens per second spent generating them."""


class NeuromorphicCounts(BaseObject):
    timesteps: int
    spikes: float
    synaptic_ops: float
    spike_rate: float
    energy_estimate_uj: float


class TelemetryGroup(BaseObject):
    requests: RequestCounts
    latency_ms: Percentiles
    tokens: TokenCounts
    neuromorphic: NeuromorphicCounts


class NodeStatus(BaseObject):
    name: str
    up: bool
    self: Optional[bool] = None


class Telemetry(BaseObject):
    """The caller's own requests over a window."""

    object: str
    window: TelemetryWindow
    requests: RequestCounts
    latency_ms: Percentiles
    time_to_first_token_ms: Percentiles
    tokens: TokenCounts
    neuromorphic: NeuromorphicCounts
    by_model: Dict[str, TelemetryGroup]
    by_deployment: Dict[str, TelemetryGroup]
    truncated: Optional[bool] = None
    """Set when the window reaches past the oldest record the server keeps."""
    nodes: Optional[List[NodeStatus]] = None
    """In a cluster: each node, and whether it answered."""
