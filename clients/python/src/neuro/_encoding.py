"""Turning what callers hand over into request bytes: JSON bodies (with numpy
arrays and torch tensors wherever they appear) and network files.

numpy and torch are never imported here: a value is recognised as theirs
only when the caller's program has imported them already (it could not have
made the value otherwise).
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any, Optional, Tuple

__all__ = ["encode_json", "read_network", "FileInput"]

FileInput = Any
"""A network file: a path (str or os.PathLike), bytes, a binary file object,
or, with torch, an ``nn.Module`` or a state_dict."""

_SUFFIX_FORMATS = {
    ".pt": "pytorch",
    ".pth": "pytorch",
    ".bin": "pytorch",
    ".onnx": "onnx",
    ".nir": "nir",
}


def _default(o: Any) -> Any:
    # numpy arrays and scalars and torch tensors all have tolist(); a
    # float32 scalar or array becomes Python floats, exactly.
    tolist = getattr(o, "tolist", None)
    if tolist is not None and callable(tolist):
        return tolist()
    raise TypeError("neuro: cannot send a %s as JSON" % type(o).__name__)


# NaN and infinity are refused here: JSON has neither, and the server
# would answer 400.
_ENCODER = json.JSONEncoder(default=_default, allow_nan=False, separators=(",", ":"))


def encode_json(body: Any) -> bytes:
    """The JSON bytes of a request body; numpy arrays, numpy scalars and torch
    tensors anywhere in it are sent as (nested) lists of numbers."""
    return _ENCODER.encode(body).encode("ascii")


def read_network(file: FileInput, format: Optional[str]) -> Tuple[bytes, str]:
    """The bytes of a network file and its format (``format`` if given, else
    the path's suffix, else ``pytorch``)."""
    guess = "pytorch"
    if isinstance(file, (bytes, bytearray, memoryview)):
        data = bytes(file)
    elif isinstance(file, (str, os.PathLike)):
        path = os.fspath(file)
        guess = _SUFFIX_FORMATS.get(os.path.splitext(path)[1].lower(), guess)
        with open(path, "rb") as f:
            data = f.read()
    elif hasattr(file, "read"):
        data = file.read()
        if isinstance(data, str):
            raise TypeError("neuro: the network file is open in text mode; open it with 'rb'")
        name = getattr(file, "name", None)
        if isinstance(name, str):
            guess = _SUFFIX_FORMATS.get(os.path.splitext(name)[1].lower(), guess)
        data = bytes(data)
    else:
        data = _torch_save(file)
    return data, format or guess


def _torch_save(obj: Any) -> bytes:
    """Serialises an nn.Module (its state_dict; a TorchScript module whole) or
    a state_dict with torch.save."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise TypeError(
            "neuro: a network is a path, bytes or a binary file; an nn.Module or a state_dict "
            "needs torch (got %s)" % type(obj).__name__
        )
    buf = io.BytesIO()
    if isinstance(obj, torch.jit.ScriptModule):
        torch.jit.save(obj, buf)
    elif isinstance(obj, torch.nn.Module):
        torch.save(obj.state_dict(), buf)
    elif isinstance(obj, dict):
        torch.save(obj, buf)
    else:
        raise TypeError("neuro: cannot compile a %s: give a path, bytes, a binary file, an nn.Module or a state_dict" % type(obj).__name__)
    return buf.getvalue()
