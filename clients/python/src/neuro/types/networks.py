"""Compiled networks: POST /v1/compile."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .._models import BaseObject

__all__ = ["CompileSource", "NetworkReport", "TargetReport", "CompileEstimates", "CompiledNetwork"]


class CompileSource(BaseObject):
    format: str
    bytes: int
    sha256: str


class NetworkReport(BaseObject):
    inputs: int
    outputs: int
    layers: int
    neurons: int
    synapses: int
    parameters: int


class TargetReport(BaseObject):
    device: str
    cores_used: int
    utilisation: float
    fits: bool


class CompileEstimates(BaseObject):
    """Per timestep and sample, from the target's cost model."""

    energy_per_timestep_nj: float
    latency_per_timestep_us: float
    basis: Optional[str] = None
    neuron_updates: Optional[float] = None
    spikes: Optional[float] = None
    synaptic_ops: Optional[float] = None


class CompiledNetwork(BaseObject):
    """A compiled network, stored by the server and listed among the caller's
    models under ``id``."""

    id: str
    object: str
    created: int
    name: str
    status: str
    source: CompileSource
    network: NetworkReport
    target: TargetReport
    estimates: CompileEstimates
    warnings: Optional[List[str]] = None
    owned_by: Optional[str] = None

    @property
    def report(self) -> Dict[str, Any]:
        """The compile report: what the network holds (``network``), how it
        sits on its target (``target``), its cost ``estimates`` and
        ``warnings``, as JSON values."""
        return {
            "network": self.network.to_dict(),
            "target": self.target.to_dict(),
            "estimates": self.estimates.to_dict(),
            "warnings": list(self.warnings or []),
        }
