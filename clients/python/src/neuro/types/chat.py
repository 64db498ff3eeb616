"""Chat and text completions: POST /v1/chat/completions, /v1/completions and
/v1/deployments/{id}/chat/completions, streamed or not."""

from __future__ import annotations

from typing import Dict, List, Optional

from .._models import BaseObject

__all__ = [
    "NeuromorphicUsage",
    "PromptTokensDetails",
    "CompletionUsage",
    "ChatCompletionMessage",
    "TopLogprob",
    "ChatCompletionTokenLogprob",
    "ChoiceLogprobs",
    "Choice",
    "ChatCompletion",
    "ChoiceDelta",
    "ChunkChoice",
    "LayerActivity",
    "NeuroActivity",
    "ChatCompletionChunk",
    "CompletionLogprobs",
    "CompletionChoice",
    "Completion",
]


class NeuromorphicUsage(BaseObject):
    """What an answer cost the device."""

    timesteps: int
    spikes: float
    synaptic_ops: float
    energy_uj: float


class PromptTokensDetails(BaseObject):
    cached_tokens: int


class CompletionUsage(BaseObject):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: Optional[PromptTokensDetails] = None
    neuromorphic: Optional[NeuromorphicUsage] = None


class ChatCompletionMessage(BaseObject):
    role: str
    content: Optional[str] = None


class TopLogprob(BaseObject):
    token: str
    logprob: float
    bytes: Optional[List[int]] = None


class ChatCompletionTokenLogprob(BaseObject):
    token: str
    logprob: float
    """-9999 stands for minus infinity (JSON has no infinity)."""
    bytes: Optional[List[int]] = None
    top_logprobs: Optional[List[TopLogprob]] = None


class ChoiceLogprobs(BaseObject):
    content: Optional[List[ChatCompletionTokenLogprob]] = None


class Choice(BaseObject):
    index: int
    message: ChatCompletionMessage
    logprobs: Optional[ChoiceLogprobs] = None
    finish_reason: Optional[str] = None
    """``stop`` (the model ended or a stop sequence matched) or ``length``."""


class ChatCompletion(BaseObject):
    id: str
    object: str
    created: int
    model: str
    choices: List[Choice]
    usage: Optional[CompletionUsage] = None


class ChoiceDelta(BaseObject):
    role: Optional[str] = None
    content: Optional[str] = None


class ChunkChoice(BaseObject):
    index: int
    delta: ChoiceDelta
    logprobs: Optional[ChoiceLogprobs] = None
    finish_reason: Optional[str] = None


class LayerActivity(BaseObject):
    layer: str
    neurons: int
    spikes: List[int]
    """The indices of the neurons that fired for the chunk's tokens."""


class NeuroActivity(BaseObject):
    activity: List[LayerActivity]


class ChatCompletionChunk(BaseObject):
    """One event of a streamed chat completion. The first chunk of a choice
    carries ``delta.role``; with ``stream_options={"include_usage": True}`` the
    last chunk has no choices and a ``usage``."""

    id: str
    object: str
    created: int
    model: str
    choices: List[ChunkChoice]
    usage: Optional[CompletionUsage] = None
    neuro: Optional[NeuroActivity] = None
    """With ``neuro={"activity": True}``: the spiking activity of the chunk."""


class CompletionLogprobs(BaseObject):
    tokens: List[str]
    token_logprobs: List[Optional[float]]
    top_logprobs: Optional[List[Optional[Dict[str, float]]]] = None
    text_offset: List[int]


class CompletionChoice(BaseObject):
    text: str
    index: int
    """With several prompts, prompt p's choices are p*n .. p*n+n-1."""
    logprobs: Optional[CompletionLogprobs] = None
    finish_reason: Optional[str] = None


class Completion(BaseObject):
    """A text completion, and also each chunk of a streamed one."""

    id: str
    object: str
    created: int
    model: str
    choices: List[CompletionChoice]
    usage: Optional[CompletionUsage] = None
    neuro: Optional[NeuroActivity] = None
