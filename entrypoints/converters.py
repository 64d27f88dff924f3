"""The private cattrs converters that turn untrusted mappings (request bodies, configuration)
into attrs/dataclass objects, with strict JSON-like types and errors that name the field."""

from __future__ import annotations

import re
from typing import Any, NewType, TypeVar

import cattrs
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


def _describe(exc: BaseException, type_: Any) -> str:
    """cattrs' message for type errors; the validator's own message for value errors."""
    if isinstance(exc, ValueError) and not isinstance(exc, BaseValidationError):
        return str(exc.args[0]) if exc.args else "invalid value"
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


def _str_tuple(value: Any, _: type) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise TypeError(f"expected a list of strings, got {type(value).__name__}")
    return tuple(_storable_str(item, str) for item in value)


def make_converter(*, forbid_extra_keys: bool) -> cattrs.Converter:
    """A new private converter with strict hooks: a string field takes only a JSON string without
    U+0000 (which PostgreSQL ``text`` cannot store; ``UncheckedText`` fields excepted), an
    integer field only an integer (not a bool), etc. ``forbid_extra_keys`` rejects unknown keys."""
    converter = cattrs.Converter(forbid_extra_keys=forbid_extra_keys)
    converter.register_structure_hook(str, _storable_str)
    converter.register_structure_hook(UncheckedText, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook_func(lambda t: t == tuple[str, ...], _str_tuple)
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
