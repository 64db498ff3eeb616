"""The groups of endpoints, one attribute of the client each."""

from .chat import Chat, ChatCompletions
from .completions import Completions
from .deployments import Deployments
from .models import Models
from .networks import Networks
from .responses import Responses
from .telemetry import TelemetryResource

__all__ = [
    "Chat",
    "ChatCompletions",
    "Completions",
    "Deployments",
    "Models",
    "Networks",
    "Responses",
    "TelemetryResource",
]
