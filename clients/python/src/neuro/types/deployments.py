"""Deployments and runs: /v1/deployments and /v1/deployments/{id}/run."""

from __future__ import annotations

from typing import List, Optional

from .._models import BaseObject

__all__ = ["DeploymentDevice", "DeploymentLoad", "Deployment", "DeploymentDeleted", "RunOutput", "RunUsage", "Run"]


class DeploymentDevice(BaseObject):
    name: str
    kind: str
    """``cpu``, ``emulator`` or ``hardware``."""
    vendor: Optional[str] = None
    model: Optional[str] = None


class DeploymentLoad(BaseObject):
    active: int
    """The sequences (generations, streams, run samples) being stepped now."""
    queued: int


class Deployment(BaseObject):
    """A model placed on a device."""

    id: str
    object: str
    model: str
    device: DeploymentDevice
    status: str
    """``ready``, ``loading`` or ``failed`` (then ``failure`` says why)."""
    created: int
    replicas: int
    max_batch_size: int
    load: DeploymentLoad
    failure: Optional[str] = None
    owned_by: str
    """The caller that created it, or ``system`` for the server's own."""
    node: Optional[str] = None
    """In a cluster, the node that runs it."""


class DeploymentDeleted(BaseObject):
    id: str
    object: str
    deleted: bool


class RunOutput(BaseObject):
    index: int
    spike_counts: List[float]
    """The output layer's spikes summed over the run; for a graded output
    (a leaky-integrator readout), its final values."""
    prediction: int
    """The argmax of ``spike_counts`` (the lowest index on ties)."""
    final_state: List[float]
    spikes: Optional[List[List[int]]] = None
    """With ``record=["spikes"]``: ``[t, i]`` for each output spike."""
    membrane: Optional[List[List[float]]] = None
    """With ``record=["membrane"]``: the output membrane at each step."""


class RunUsage(BaseObject):
    samples: int
    timesteps: int
    spikes: float
    synaptic_ops: float
    energy_uj: float
    device_ms: float


class Run(BaseObject):
    id: str
    object: str
    created: int
    model: str
    deployment: str
    outputs: List[RunOutput]
    usage: RunUsage
    warnings: Optional[List[str]] = None
    """On a chip emulator: the quantisation of the run."""
