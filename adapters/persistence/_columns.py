"""SQL shared by the SQLite and PostgreSQL adapters: their schemas name the columns alike.

Imported as ``from adapters.persistence import _columns as cols`` (``cols.USERS`` ...). Only these
constants are interpolated into SQL; values are always bound as parameters.
"""

from __future__ import annotations

__all__ = [
    "GROUP_SUMMARY",
    "MEMBERS",
    "ROTATED_UPSERT",
    "TOKENS",
    "USERS",
    "USER_WITH_GROUPS",
]

_USER_COLUMNS = ("id", "email", "password_hash", "role", "org_id", "created_at")
_TOKEN_COLUMNS = (
    "token_hash",
    "user_id",
    "family_id",
    "expires_at",
    "session_expires_at",
    "created_at",
)

USERS = ", ".join(_USER_COLUMNS)
"""The columns of ``users`` in the order of ``User``'s fields."""

MEMBERS = ", ".join(f"u.{c}" for c in _USER_COLUMNS)
"""``USERS`` of the alias ``u`` (``group_members m JOIN users u``)."""

USER_WITH_GROUPS = (
    f"SELECT {MEMBERS}, m.group_id FROM users u"  # noqa: S608 - column names, no values
    " LEFT JOIN group_members m ON m.user_id = u.id WHERE u.id = {param}"
)
"""One statement reading a user and its memberships: a row per group (``group_id`` last; one
row with NULL when it has none), no row when there is no such user. ``{param}`` is the
dialect's placeholder (``?`` or ``$1``)."""

TOKENS = ", ".join(_TOKEN_COLUMNS)
"""The columns of ``refresh_tokens`` and ``rotated_refresh_tokens``, in the order of
``RefreshToken``'s fields."""

ROTATED_UPSERT = " ON CONFLICT (token_hash) DO UPDATE SET " + ", ".join(
    f"{c} = excluded.{c}" for c in _TOKEN_COLUMNS[1:]
)
"""Appended to an ``INSERT INTO rotated_refresh_tokens``: a hash remembered again replaces the
earlier record."""

GROUP_SUMMARY = (
    "SELECT g.id, g.name, g.org_id, g.created_at,"
    " (SELECT count(*) FROM group_members m WHERE m.group_id = g.id) FROM groups g"
)
"""Selects ``(id, name, org_id, created_at, member count)`` of ``groups g``; append a
``WHERE``."""
