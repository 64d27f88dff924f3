"""Checks of the plain values the use cases on users and groups receive (contract section 3).

Each returns the value to use (stripped, parsed) or raises ``ValidationFailed`` (422) naming the
field, as the HTTP routes and the command line both report it.
"""

from __future__ import annotations

from domain.errors import FieldError, ValidationFailed
from domain.model import Role

__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_ORG_ID_LENGTH",
    "check_name",
    "check_org_id",
    "invalid",
    "parse_role",
]

MAX_NAME_LENGTH = 100
"""The longest group name accepted, in characters."""
MAX_ORG_ID_LENGTH = 128
"""The longest organization id accepted, in characters."""


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
    """A group name, stripped. Raises ``ValidationFailed`` naming ``field`` when it is empty,
    longer than ``MAX_NAME_LENGTH`` characters or holds control characters."""
    if not isinstance(name, str) or not name.strip():
        raise invalid(field, "must not be empty")
    name = name.strip()
    if len(name) > MAX_NAME_LENGTH:
        raise invalid(field, f"must be at most {MAX_NAME_LENGTH} characters")
    if not all(ch.isprintable() for ch in name):
        raise invalid(field, "must not contain control characters")
    return name


def check_org_id(org_id: str, field: str = "org_id") -> str:
    """An organization id, unchanged. Raises ``ValidationFailed`` naming ``field`` when it is
    empty, longer than ``MAX_ORG_ID_LENGTH`` characters, padded with spaces or holds control
    characters."""
    if not isinstance(org_id, str) or not org_id:
        raise invalid(field, "must not be empty")
    if len(org_id) > MAX_ORG_ID_LENGTH:
        raise invalid(field, f"must be at most {MAX_ORG_ID_LENGTH} characters")
    if org_id != org_id.strip() or not all(ch.isprintable() for ch in org_id):
        raise invalid(field, "must not contain spaces at either end or control characters")
    return org_id
