"""Compiling networks: POST /v1/compile."""

from __future__ import annotations

import base64
from typing import Any, Mapping, Optional

from .._encoding import FileInput, read_network
from ..types.networks import CompiledNetwork
from ._base import APIResource, drop_none

__all__ = ["Networks"]


class Networks(APIResource):
    def compile(
        self,
        file: FileInput,
        *,
        format: Optional[str] = None,
        name: Optional[str] = None,
        target: Optional[str] = None,
        options: Optional[Mapping[str, Any]] = None,
        extra_headers: Optional[Mapping[str, str]] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> CompiledNetwork:
        """Compiles a spiking network (or an ANN, converted) and stores it
        under the id of the result, which the caller then deploys.

        ``file`` is a path, bytes, a binary file, or, when torch is
        installed, an ``nn.Module`` (its state_dict is sent; a TorchScript
        module is sent whole) or a state_dict, serialised with
        ``torch.save``. ``format`` is ``pytorch`` (also ``torchscript``),
        ``onnx`` or ``nir``; default: from the path's suffix, else
        ``pytorch``. ``target`` is a device name (default the CPU
        simulator); ``options`` the compiler's (``timesteps``,
        ``weight_bits``, ``calibration``, ``ranges``, ``dt``, ``layers``: see
        docs/API.md).

        A file that cannot be read is 400 (:class:`~neuro.BadRequestError`);
        one that parses but is unsupported or does not fit the target, 422
        (:class:`~neuro.UnprocessableEntityError`); over the caller's quota,
        429 ``insufficient_quota``.
        """
        data, fmt = read_network(file, format)
        body = drop_none(
            {
                "model_format": fmt,
                "model_file": base64.b64encode(data).decode("ascii"),
                "name": name,
                "target": target,
                "options": options,
            }
        )
        return self._client._request(
            "POST",
            "/v1/compile",
            CompiledNetwork.construct,
            body=body,
            timeout=timeout,
            extra_headers=extra_headers,
            extra_body=extra_body,
        )
