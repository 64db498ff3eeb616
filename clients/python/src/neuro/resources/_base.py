"""What every group of endpoints shares."""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, Any, Dict

if TYPE_CHECKING:
    from .._client import Client

__all__ = ["APIResource", "segment", "drop_none"]


class APIResource:
    def __init__(self, client: "Client") -> None:
        self._client = client


# The characters of the API's ids: no escaping needed.
_PLAIN_ID = re.compile(r"[A-Za-z0-9._-]+")


def segment(value: str) -> str:
    """``value`` escaped as one segment of a path."""
    if not isinstance(value, str) or not value:
        raise ValueError("neuro: an id must be a non-empty string, got %r" % (value,))
    if _PLAIN_ID.fullmatch(value):
        return value
    return urllib.parse.quote(value, safe="")


def drop_none(body: Dict[str, Any]) -> Dict[str, Any]:
    """The body without the fields left at None (the server's default)."""
    return {k: v for k, v in body.items() if v is not None}
