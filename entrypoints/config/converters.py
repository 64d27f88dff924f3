"""The private cattrs converters that turn untrusted mappings (request bodies, configuration)
into attrs/dataclass objects, with strict JSON-like types and errors that name the field."""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from typing import Any, NewType, TypeVar

import attrs
import cattrs
from cattrs.cols import is_mapping, is_sequence
from cattrs.errors import BaseValidationError

from domain.errors import FieldError, ValidationFailed

T = TypeVar("T")

UncheckedText = NewType("UncheckedText", str)
"""A body string exempt from the U+0000 rule of the converters: for fields whose use case
treats an unstorable value as one that matches nothing (the email and password of /login answer
401 ``invalid_credentials`` for it, like for any unknown email), never passing it to storage."""

_PATH = re.compile(r"^(?P<msg>.*?) @ \$(?P<path>.*)$")
_EXTRA = re.compile(r"^extra fields found \((?P<names>[^)]*)\)")
_QUOTED_FIELD = re.compile(r"'(?P<name>[A-Za-z_][A-Za-z0-9_]*)'")


_PLURAL = {"string": "strings", "integer": "integers", "number": "numbers",
           "boolean": "booleans", "object": "objects", "null": "nulls"}  # fmt: skip


def _non_null(type_: Any) -> tuple[Any, ...]:
    """The members of a union other than ``None`` (``(type_,)`` for a type that is no union)."""
    if typing.get_origin(type_) in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(type_) if a is not type(None))
    return (type_,)


def json_type(type_: Any) -> str:
    """The JSON type a field of Python type ``type_`` takes, as messages name it (
    docs/reference/operations.md): ``string``, ``integer``, ``number``, ``boolean``, ``object``,
    ``list of strings`` ..., members of a union joined by ``or``; never a Python class name.
    ``None`` in a union is left out: a request body may omit an optional member but not send it as
    null."""
    members = _non_null(type_)
    if len(members) != 1:
        return " or ".join(json_type(m) for m in members)
    type_ = members[0]
    supertype = getattr(type_, "__supertype__", None)  # a NewType
    if supertype is not None:
        return json_type(supertype)
    if type_ is bool:
        return "boolean"
    if type_ is int:
        return "integer"
    if type_ is float:
        return "number"
    if type_ is str:
        return "string"
    if _is_list_like(type_):
        args = typing.get_args(type_)
        item = json_type(args[0]) if args else "value"
        return f"list of {_PLURAL.get(item, item)}"
    if is_mapping(type_) or attrs.has(type_) or type_ is dict:
        return "object"
    return "value"


def _expected(type_: Any) -> str:
    """``must be a string``, ``must be an integer``, ``must be a list of strings`` ..."""
    name = json_type(type_)
    article = "an" if name[0] in "aeiou" else "a"
    return f"must be {article} {name}"


def _describe(exc: BaseException, type_: Any) -> str:
    """The message of one bad field: the validator's own for value errors, else the JSON type
    expected (docs/reference/operations.md: never an internal class name)."""
    if isinstance(exc, ValueError) and not isinstance(exc, BaseValidationError):
        return str(exc.args[0]) if exc.args else "invalid value"
    if isinstance(exc, TypeError) and type_ is not None:
        return _expected(type_)
    if isinstance(exc, AttributeError) and type_ is not None:  # cattrs: not a mapping
        return _expected(type_)
    return cattrs.v.format_exception(exc, type_)


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _storable_str(value: Any, _: type) -> str:
    text = _strict_str(value, str)
    if "\x00" in text:
        raise ValueError("must not contain the character U+0000")
    return text


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {type(value).__name__}")
    return value


def _strict_sequence(converter: cattrs.Converter) -> tuple[Callable[[Any], bool], Any]:
    """The (predicate, hook factory) pair for every list-like type (``list[X]``,
    ``tuple[X, ...]``, ``Sequence[X]``, sets): the value must be a JSON array (a Python list or
    tuple), never a string or an object, which cattrs would otherwise iterate (``"read"``
    becoming ``["r", "e", "a", "d"]``); its items are then structured by cattrs' own hook for
    the type (found while this factory steps aside, so item errors keep their ``[index]``)."""
    building: list[Any] = []

    def applies(type_: Any) -> bool:
        return _is_list_like(type_) and type_ not in building

    def factory(type_: Any) -> Callable[[Any, Any], Any]:
        building.append(type_)
        try:
            inner = converter.get_structure_hook(type_, cache_result=False)
        finally:
            building.remove(type_)

        def hook(value: Any, cl: Any) -> Any:
            if not isinstance(value, list | tuple):
                raise TypeError(f"{_expected(cl)}, not {type(value).__name__}")
            return inner(value, cl)

        return hook

    return applies, factory


def _refuse_null(converter: cattrs.Converter) -> Callable[[Any], Any]:
    """The hook factory for ``X | None`` fields: absent, they keep their default (cattrs never
    calls a hook for a missing key); present, they must hold an ``X``: a JSON ``null`` is
    refused like any other wrong type (the OpenAPI schemas declare no nullable member)."""

    def factory(type_: Any) -> Callable[[Any, Any], Any]:
        members = _non_null(type_)
        rest: Any = members[0] if len(members) == 1 else typing.Union[members]  # noqa: UP007

        def hook(value: Any, cl: Any) -> Any:
            if value is None:
                raise TypeError(f"{_expected(cl)}, not null")
            return converter.structure(value, rest)

        return hook

    return factory


def _is_optional(type_: Any) -> bool:
    return (
        typing.get_origin(type_) in (typing.Union, types.UnionType)
        and type(None) in typing.get_args(type_)
        and len(_non_null(type_)) >= 1
    )


def _is_list_like(type_: Any) -> bool:
    return is_sequence(type_) or typing.get_origin(type_) in (set, frozenset)


def make_converter(*, forbid_extra_keys: bool, refuse_null: bool = False) -> cattrs.Converter:
    """A new private converter with strict hooks: a string field takes only a JSON string without
    U+0000 (which PostgreSQL ``text`` cannot store; ``UncheckedText`` fields excepted), an
    integer field only an integer (not a bool), a list-like field only a JSON array (a string
    is never split into characters), etc. ``forbid_extra_keys`` rejects unknown keys;
    ``refuse_null``: an optional (``X | None``) field that is present must not be null.
    Every refusal names the JSON type expected (``json_type``)."""
    converter = cattrs.Converter(forbid_extra_keys=forbid_extra_keys)
    converter.register_structure_hook(str, _storable_str)
    converter.register_structure_hook(UncheckedText, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook_factory(*_strict_sequence(converter))
    if refuse_null:
        converter.register_structure_hook_factory(_is_optional, _refuse_null(converter))
    return converter


def _keyed(exc: BaseException) -> list[FieldError]:
    """Errors raised by a settings class's own validation that name their dotted key (e.g.
    ``service_actuator.InvalidSetting``: ``key`` and ``message``), wherever cattrs nested them."""
    if isinstance(exc, BaseExceptionGroup):
        return [error for inner in exc.exceptions for error in _keyed(inner)]
    key, message = getattr(exc, "key", None), getattr(exc, "message", None)
    return [FieldError(key, message)] if isinstance(key, str) and isinstance(message, str) else []


def field_errors(exc: BaseException) -> list[FieldError]:
    """The (dotted field path, message) pairs of a cattrs structuring error."""
    if not isinstance(exc, BaseValidationError):
        return [FieldError("", str(exc))]
    keyed = _keyed(exc)
    if keyed:
        return keyed
    errors = []
    for line in cattrs.transform_error(exc, path="$", format_exception=_describe):
        match = _PATH.match(line)
        if match is None:
            errors.append(FieldError("", line))
            continue
        path, message = match["path"].lstrip("."), match["msg"]
        # attrs validators run in __init__, so cattrs places them on the class; their messages
        # quote the attribute ('algorithm' must be in ...): put the error on that field.
        named = _QUOTED_FIELD.search(message)
        extra = _EXTRA.match(message)
        if extra:
            for name in extra["names"].split(", "):
                errors.append(FieldError(f"{path}.{name}" if path else name, "unknown key"))
            continue
        if named and "must" in message:
            path = f"{path}.{named['name']}" if path else named["name"]
        errors.append(FieldError(path, message))
    return errors


def structure(converter: cattrs.Converter, data: Any, cls: type[T]) -> T:
    """Structure ``data`` into ``cls``; raises ``ValidationFailed`` listing every bad field."""
    try:
        return converter.structure(data, cls)
    except (BaseValidationError, ValueError, TypeError) as exc:
        raise ValidationFailed(field_errors(exc)) from None
