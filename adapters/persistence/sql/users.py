"""Statements on ``users`` (``UserRepo``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols

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
PAGE = (
    f"SELECT {cols.USER_READ} FROM users WHERE ($1::text IS NULL OR org_id = $1)"
    " AND ($2::text IS NULL OR id > $2)"
    " AND ($4::text IS NULL OR substr(email, 1, length($4)) = $4) ORDER BY id LIMIT $3"
)
"""Up to ``$3`` users of org ``$1`` (NULL: all) after id ``$2`` (NULL: from the start) whose
(lower-cased) email starts with ``$4`` (NULL: any); a prefix compared with ``substr``, so no
``LIKE`` wildcard or escape applies."""
COUNT = "SELECT count(*) FROM users WHERE ($1::text IS NULL OR org_id = $1)"
"""How many users org ``$1`` (NULL: every org) holds."""
COUNT_ENABLED_WITH_ROLE = "SELECT count(*) FROM users WHERE role = $1 AND NOT disabled"
DELETE = "DELETE FROM users WHERE id = $1"
