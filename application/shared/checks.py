"""Checks of the plain values the use cases on users and groups receive
(docs/reference/accounts.md).

Each returns the value to use (stripped, parsed) or raises ``ValidationFailed`` (422) naming the
field, as the HTTP routes and the command line both report it.
"""

from __future__ import annotations

import re

from domain.errors import FieldError, ValidationFailed
from domain.model import Role

__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_ORG_ID_LENGTH",
    "NAME_PATTERN",
    "ORG_ID_PATTERN",
    "check_name",
    "check_org_id",
    "invalid",
    "parse_role",
]

MAX_NAME_LENGTH = 100
"""The longest group name accepted, in characters."""
MAX_ORG_ID_LENGTH = 128
"""The longest organization id accepted, in characters."""

_CONTROL = (
    r"\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    r"\u2060-\u206f\ufeff\ufff9-\ufffb"
)
"""Control characters (C0, DEL, C1) and the invisible formatting ones (soft hyphen, zero-width
and direction marks, line and paragraph separators, BOM): what a name may not hold. Written
once for Python's ``re`` and the OpenAPI document's ECMA-262 ``pattern`` alike."""

NAME_PATTERN = rf"^[^{_CONTROL}]*[^{_CONTROL}\s][^{_CONTROL}]*$"
"""A name (group, client, passkey): no control character, at least one that is not a space."""
ORG_ID_PATTERN = rf"^[^{_CONTROL}\s]([^{_CONTROL}]*[^{_CONTROL}\s])?$"
"""An organization id: no control character, no space at either end."""

_NAME = re.compile(NAME_PATTERN[1:-1])
_ORG_ID = re.compile(ORG_ID_PATTERN[1:-1])


def invalid(field: str, message: str) -> ValidationFailed:
    """The ``ValidationFailed`` naming ``field`` with ``message`` (to raise)."""
    return ValidationFailed([FieldError(field, message)])


def parse_role(value: Role | str, field: str = "role") -> Role:
    """The ``Role`` named by ``value`` (``viewer``, ``operator``, ``org_admin``, ``superadmin``).

    Raises ``ValidationFailed`` (422) naming ``field`` for anything else.
    """
    if isinstance(value, Role):
        return value
    try:
        return Role(value)
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise invalid(field, f"must be one of {allowed}") from None


def check_name(name: str, field: str = "name") -> str:
    """A name, stripped. Raises ``ValidationFailed`` naming ``field`` when it is empty (or only
    spaces), longer than ``MAX_NAME_LENGTH`` characters as sent, or holds a control character
    (``NAME_PATTERN``, which the OpenAPI document states)."""
    if not isinstance(name, str) or not name.strip():
        raise invalid(field, "must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise invalid(field, f"must be at most {MAX_NAME_LENGTH} characters")
    if not _NAME.fullmatch(name):
        raise invalid(field, "must not contain control characters")
    return name.strip()


def check_org_id(org_id: str, field: str = "org_id") -> str:
    """An organization id, unchanged. Raises ``ValidationFailed`` naming ``field`` when it is
    empty, longer than ``MAX_ORG_ID_LENGTH`` characters, padded with spaces or holds control
    characters (``ORG_ID_PATTERN``)."""
    if not isinstance(org_id, str) or not org_id:
        raise invalid(field, "must not be empty")
    if len(org_id) > MAX_ORG_ID_LENGTH:
        raise invalid(field, f"must be at most {MAX_ORG_ID_LENGTH} characters")
    if not _ORG_ID.fullmatch(org_id):
        raise invalid(field, "must not contain spaces at either end or control characters")
    return org_id
