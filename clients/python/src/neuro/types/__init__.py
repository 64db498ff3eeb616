"""The results of the API, as typed objects with attribute access.

Each class names the fields the server sends (docs/API.md in the
repository); a field the server adds later is still readable as an
attribute, and ``to_dict()`` gives any result back as JSON values.
"""

from .._models import BaseObject, Page
from .chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
    ChatCompletionTokenLogprob,
    Choice,
    ChoiceDelta,
    ChoiceLogprobs,
    ChunkChoice,
    Completion,
    CompletionChoice,
    CompletionLogprobs,
    CompletionUsage,
    LayerActivity,
    NeuroActivity,
    NeuromorphicUsage,
    PromptTokensDetails,
    TopLogprob,
)
from .deployments import Deployment, DeploymentDeleted, DeploymentDevice, DeploymentLoad, Run, RunOutput, RunUsage
from .models import Model, ModelCapabilities, ModelCard, ModelContext, ModelDeleted, ModelNeuromorphic
from .networks import CompiledNetwork, CompileEstimates, CompileSource, NetworkReport, TargetReport
from .telemetry import (
    NeuromorphicCounts,
    NodeStatus,
    Percentiles,
    RequestCounts,
    Telemetry,
    TelemetryGroup,
    TelemetryWindow,
    TokenCounts,
)

__all__ = [
    "BaseObject",
    "Page",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatCompletionMessage",
    "ChatCompletionTokenLogprob",
    "Choice",
    "ChoiceDelta",
    "ChoiceLogprobs",
    "ChunkChoice",
    "Completion",
    "CompletionChoice",
    "CompletionLogprobs",
    "CompletionUsage",
    "LayerActivity",
    "NeuroActivity",
    "NeuromorphicUsage",
    "PromptTokensDetails",
    "TopLogprob",
    "Deployment",
    "DeploymentDeleted",
    "DeploymentDevice",
    "DeploymentLoad",
    "Run",
    "RunOutput",
    "RunUsage",
    "Model",
    "ModelCapabilities",
    "ModelCard",
    "ModelContext",
    "ModelDeleted",
    "ModelNeuromorphic",
    "CompiledNetwork",
    "CompileEstimates",
    "CompileSource",
    "NetworkReport",
    "TargetReport",
    "NeuromorphicCounts",
    "NodeStatus",
    "Percentiles",
    "RequestCounts",
    "Telemetry",
    "TelemetryGroup",
    "TelemetryWindow",
    "TokenCounts",
]
