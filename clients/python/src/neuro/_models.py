"""Typed results with attribute access, built from decoded JSON.

A result class declares its fields as annotations; :meth:`BaseObject.construct`
turns a JSON object into an instance, nested objects into their declared
classes. Fields the server sends that a class does not declare are kept as
attributes too (the server may add fields), and declared fields it leaves
out read as their class default (None). Nothing is validated: a result is
what the server sent, with names.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Callable, ClassVar, Dict, List, Optional, Type, TypeVar

__all__ = ["BaseObject", "Page"]

T = TypeVar("T", bound="BaseObject")
_Convert = Callable[[Any], Any]


def _identity(v: Any) -> Any:
    return v


class BaseObject:
    """A JSON object with its fields as attributes.

    ``to_dict()`` gives the JSON again, ``to_json()`` its text; two objects are
    equal when their JSON is.
    """

    _converters: ClassVar[Optional[Dict[str, _Convert]]] = None

    @classmethod
    def construct(cls: Type[T], data: Dict[str, Any]) -> T:
        """Builds an instance from a decoded JSON object (which it does not
        change)."""
        conv = cls.__dict__.get("_converters")
        if conv is None:
            conv = _converters_of(cls)
        d = dict(data)
        for k, c in conv.items():
            v = d.get(k)
            if v is not None:
                d[k] = c(v)
        obj = cls.__new__(cls)
        obj.__dict__ = d
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """The object as JSON values (dicts, lists, strings, numbers)."""
        return {k: _plain(v) for k, v in self.__dict__.items()}

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The object as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BaseObject):
            return NotImplemented
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dict

    def __repr__(self) -> str:
        fields = ", ".join("%s=%r" % kv for kv in self.__dict__.items())
        return "%s(%s)" % (type(self).__name__, fields)


class Page(List[T]):
    """A list result (``{"object": "list", "data": [...]}``): a Python list of
    its items, also readable as ``.data`` as in the OpenAI SDK."""

    object: str = "list"

    @property
    def data(self) -> List[T]:
        return self


def _plain(v: Any) -> Any:
    if isinstance(v, BaseObject):
        return v.to_dict()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _converters_of(cls: type) -> Dict[str, _Convert]:
    """The converter of each declared field whose value needs one (a nested
    object, or a container of them); computed once per class."""
    # An empty local namespace: a field's default (a class attribute) must
    # not shadow a name its annotation uses.
    hints = typing.get_type_hints(cls, None, {})
    conv: Dict[str, _Convert] = {}
    for name, tp in hints.items():
        if name.startswith("_"):
            continue
        c = _converter(tp)
        if c is not _identity:
            conv[name] = c
    cls._converters = conv  # type: ignore[attr-defined]
    return conv


def _converter(tp: Any) -> _Convert:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union:
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _converter(inner[0])
        return _identity
    if origin in (list, List):
        item = _converter(args[0]) if args else _identity
        if item is _identity:
            return _identity
        return lambda v: [item(x) if x is not None else None for x in v] if isinstance(v, list) else v
    if origin in (dict, Dict):
        val = _converter(args[1]) if len(args) == 2 else _identity
        if val is _identity:
            return _identity
        return lambda v: {k: val(x) if x is not None else None for k, x in v.items()} if isinstance(v, dict) else v
    if isinstance(tp, type) and issubclass(tp, BaseObject):
        construct = tp.construct
        return lambda v: construct(v) if isinstance(v, dict) else v
    return _identity
