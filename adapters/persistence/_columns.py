"""SQL shared by the SQLite and PostgreSQL adapters: their schemas name the columns alike.

Imported as ``from adapters.persistence import _columns as cols`` (``cols.USERS`` ...). Only these
constants are interpolated into SQL; values are always bound as parameters.
"""

from __future__ import annotations

__all__ = [
    "EMAIL_TOKENS",
    "GROUP_SUMMARY",
    "LIVE_SESSION",
    "MEMBERS",
    "ROTATED",
    "ROTATED_UPSERT",
    "SESSIONS",
    "TOKENS",
    "USERS",
    "USER_READ",
    "USER_WITH_GROUPS",
]

_USER_COLUMNS = (
    "id",
    "email",
    "password_hash",
    "role",
    "org_id",
    "created_at",
    "disabled",
    "email_verified",
    "mfa_enabled",
)
_TOKEN_COLUMNS = (
    "token_hash",
    "user_id",
    "family_id",
    "expires_at",
    "session_expires_at",
    "created_at",
)

USERS = ", ".join(_USER_COLUMNS)
"""The stored columns of ``users`` in the order of ``User``'s fields (for writes)."""

_PASSKEY_COUNT = "(SELECT COUNT(*) FROM passkeys pk WHERE pk.user_id = {alias}.id)"

USER_READ = USERS + ", " + _PASSKEY_COUNT.format(alias="users")
"""``USERS`` and the user's passkey count (``User.passkeys``), for ``SELECT ... FROM users``."""

MEMBERS = ", ".join(f"u.{c}" for c in _USER_COLUMNS) + ", " + _PASSKEY_COUNT.format(alias="u")
"""``USER_READ`` of the alias ``u`` (``group_members m JOIN users u``)."""

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

ROTATED = TOKENS + ", rotated_at"
"""The columns an ``INSERT INTO rotated_refresh_tokens`` names: ``TOKENS`` and ``rotated_at``
(``reuse_count`` starts at 0)."""

ROTATED_UPSERT = " ON CONFLICT (token_hash) DO UPDATE SET reuse_count = 0, " + ", ".join(
    f"{c} = excluded.{c}" for c in (*_TOKEN_COLUMNS[1:], "rotated_at")
)
"""Appended to an ``INSERT INTO rotated_refresh_tokens``: a hash remembered again replaces the
earlier record (and its reuse count starts again)."""

SESSIONS = (
    "id, user_id, created_at, last_used_at, expires_at, user_agent, client_address, client_id"
)
"""The columns of ``sessions`` in the order of ``Session``'s fields."""

LIVE_SESSION = (
    "expires_at > {now} AND (EXISTS (SELECT 1 FROM refresh_tokens t"
    " WHERE t.family_id = sessions.id AND t.expires_at > {now})"
    " OR EXISTS (SELECT 1 FROM oidc_hosted_sessions h WHERE h.session_id = sessions.id"
    " AND h.idle_expires_at > {now} AND h.expires_at > {now}))"
)
"""The condition a live session meets (``SessionStore.list_live``): unexpired, with a live
refresh token or a live hosted session (contract section 15); ``{now}`` is the dialect's
placeholder for the time."""

GROUP_SUMMARY = (
    "SELECT g.id, g.name, g.org_id, g.created_at,"
    " (SELECT count(*) FROM group_members m WHERE m.group_id = g.id) FROM groups g"
)
"""Selects ``(id, name, org_id, created_at, member count)`` of ``groups g``; append a
``WHERE``."""

EMAIL_TOKENS = "token_hash, user_id, purpose, expires_at, created_at"
"""The columns of ``email_tokens`` in the order of ``EmailToken``'s fields."""

MFA_TOTP = "user_id, sealed_secret, confirmed, last_step, created_at"
"""The columns of ``mfa_totp`` in the order of ``TotpCredential``'s fields."""

MFA_CHALLENGES = "token_hash, user_id, expires_at, created_at, failures"
"""The columns of ``mfa_challenges`` in the order of ``MfaChallenge``'s fields."""

AUDIT_EVENTS = (
    "id, type, occurred_at, actor_id, user_id, org_id, client_address, user_agent, details"
)
"""The columns of ``audit_events`` in the order of ``AuditEvent``'s fields."""
