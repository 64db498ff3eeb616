"""Models: GET /v1/models, GET and DELETE /v1/models/{id}."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .._models import BaseObject

__all__ = ["Model", "ModelCapabilities", "ModelNeuromorphic", "ModelContext", "ModelCard", "ModelDeleted"]


class ModelCapabilities(BaseObject):
    chat: bool
    completions: bool
    streaming: bool
    logprobs: bool


class ModelContext(BaseObject):
    handling: str
    length: int
    """0: unbounded (the recurrent state does not grow)."""


class ModelNeuromorphic(BaseObject):
    neurons: int
    synapses: int
    layers: int
    parameters: int
    timesteps_per_token: Optional[int] = None
    """Language models: the timesteps the network steps for each token."""
    timesteps_per_sample: Optional[int] = None
    """Other networks: the timesteps of a run's sample by default."""
    context: ModelContext
    devices: List[str]
    """The devices it is deployed on and those it fits."""


class ModelCard(BaseObject):
    description: Optional[str] = None
    architecture: Optional[str] = None
    parameters: Optional[int] = None
    neurons: Optional[int] = None
    synapses: Optional[int] = None
    training: Optional[str] = None
    license: Optional[str] = None
    quality: Optional[Dict[str, float]] = None
    """Measured figures by name (held-out bits per byte, ``spiking_cost``...)."""
    extra: Optional[Dict[str, Any]] = None
    """Numbers, lists and prose that say how a figure was measured."""


class Model(BaseObject):
    """A built-in language model, or a network the caller compiled."""

    id: str
    object: str
    created: int
    owned_by: str
    capabilities: ModelCapabilities
    neuromorphic: Optional[ModelNeuromorphic] = None
    description: Optional[str] = None
    card: Optional[ModelCard] = None


class ModelDeleted(BaseObject):
    id: str
    object: str
    deleted: bool
