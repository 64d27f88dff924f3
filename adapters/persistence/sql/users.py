"""Statements on ``users`` (``UserRepo``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols
from adapters.persistence.sql.paging import keyset

INSERT = f"INSERT INTO users ({cols.USERS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
"""A new user: the values of ``cols.USERS``."""
BY_ID = f"SELECT {cols.USER_READ} FROM users WHERE id = $1"
BY_EMAIL = f"SELECT {cols.USER_READ} FROM users WHERE email = $1"
"""By the lower-cased email."""
EMAIL_EXISTS = "SELECT 1 FROM users WHERE email = $1"
EXISTS = "SELECT 1 FROM users WHERE id = $1"
WITH_GROUPS = (
    f"SELECT {cols.MEMBERS}, m.group_id FROM users u"
    " LEFT JOIN group_members m ON m.user_id = u.id WHERE u.id = $1"
)
"""A user and its memberships in one statement: a row per group (``group_id`` last; one row
with NULL when it has none), no row when there is no such user."""
UPDATE = (
    "UPDATE users SET email = $1, password_hash = $2, role = $3, org_id = $4,"
    " disabled = $5, email_verified = $6, mfa_enabled = $7 WHERE id = $8"
)


def page(*, by_org: bool, after: bool, by_prefix: bool = False) -> str:
    """A page of users, of one org when ``by_org``, whose (lower-cased) email starts with a
    prefix when ``by_prefix``, after a cursor id when ``after`` (``paging.keyset``; arguments
    from ``paging.keyset_args``)."""
    return keyset(f"SELECT {cols.USER_READ} FROM users", "org_id", "id", by_org=by_org,
                  after=after, prefix_column="email" if by_prefix else None)  # fmt: skip


COUNT = "SELECT count(*) FROM users WHERE ($1::text IS NULL OR org_id = $1)"
"""How many users org ``$1`` (NULL: every org) holds."""
COUNT_ENABLED_WITH_ROLE = "SELECT count(*) FROM users WHERE role = $1 AND NOT disabled"
DELETE = "DELETE FROM users WHERE id = $1"
