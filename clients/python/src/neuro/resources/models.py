"""Models: GET /v1/models, GET and DELETE /v1/models/{id}."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .._models import Page
from ..types.models import Model, ModelDeleted
from ._base import APIResource, segment

__all__ = ["Models"]


class Models(APIResource):
    def list(
        self, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> Page[Model]:
        """The models the caller can use: the built-in language models and the
        networks the caller compiled (``neuro-1``, an alias, is not listed)."""
        return self._client._request(
            "GET", "/v1/models", _page_of_models, extra_headers=extra_headers, timeout=timeout
        )

    def retrieve(
        self, model: str, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> Model:
        """One model, with its neuromorphic description and model card."""
        return self._client._request(
            "GET", "/v1/models/" + segment(model), Model.construct, extra_headers=extra_headers, timeout=timeout
        )

    def delete(
        self, model: str, *, extra_headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None
    ) -> ModelDeleted:
        """Deletes a network the caller compiled. A built-in model is 403
        (:class:`~neuro.PermissionDeniedError`); a network that a deployment
        still uses, 409 (:class:`~neuro.ConflictError`, ``model_in_use``)."""
        return self._client._request(
            "DELETE",
            "/v1/models/" + segment(model),
            ModelDeleted.construct,
            extra_headers=extra_headers,
            timeout=timeout,
        )


def _page_of_models(data: Any) -> Page[Model]:
    return Page(Model.construct(m) for m in data["data"])
