"""Column lists shared by the SQL statements of both dialects: their schemas name the columns
alike.

Imported as ``from adapters.persistence.sql import columns as cols`` (``cols.USERS`` ...). Only
these constants are interpolated into SQL; values are always bound as parameters.
"""

from __future__ import annotations

__all__ = [
    "EMAIL_TOKENS",
    "GROUP_SUMMARY",
    "MEMBERS",
    "OIDC_CODES",
    "OIDC_CONSENTS",
    "OIDC_HOSTED",
    "ROTATED",
    "ROTATED_UPSERT",
    "SESSIONS",
    "TOKENS",
    "USERS",
    "USER_READ",
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
    "id, user_id, created_at, last_used_at, expires_at, user_agent, client_address, client_id, sid"
)
"""The columns of ``sessions`` in the order of ``Session``'s fields."""

GROUP_SUMMARY = (
    "SELECT g.id, g.name, g.org_id, g.created_at,"
    " (SELECT count(*) FROM group_members m WHERE m.group_id = g.id) FROM groups g"
)
"""Selects ``(id, name, org_id, created_at, member count)`` of ``groups g``; append a
``WHERE``."""

EMAIL_TOKENS = "token_hash, user_id, purpose, expires_at, created_at, new_email"
"""The columns of ``email_tokens`` in the order of ``EmailToken``'s fields."""

MFA_TOTP = "user_id, sealed_secret, confirmed, last_step, created_at"
"""The columns of ``mfa_totp`` in the order of ``TotpCredential``'s fields."""

MFA_CHALLENGES = "token_hash, user_id, expires_at, created_at, failures, first_factor"
"""The columns of ``mfa_challenges`` in the order of ``MfaChallenge``'s fields."""

AUDIT_EVENTS = (
    "id, type, occurred_at, actor_id, user_id, org_id, client_address, user_agent, details"
)
"""The columns of ``audit_events`` in the order of ``AuditEvent``'s fields."""

OIDC_CODES = (
    "code_hash, client_id, user_id, redirect_uri, code_challenge, nonce, scopes, session_id,"
    " auth_time, amr, acr, created_at, expires_at, used_at, family_id"
)
"""The columns of ``oidc_codes`` in the order of ``AuthorizationCode``'s fields."""

OIDC_CONSENTS = "user_id, client_id, scopes, granted_at"
"""The columns of ``oidc_consents`` in the order of ``Consent``'s fields."""

OIDC_HOSTED = "id_hash, session_id, user_id, auth_time, amr, acr, idle_expires_at, expires_at"
"""The columns of ``oidc_hosted_sessions`` in the order of ``HostedSession``'s fields."""

OIDC_DEVICE_GRANTS = (
    "device_code_hash, user_code_hash, client_id, scopes, created_at, expires_at, poll_interval,"
    " last_polled_at, status, user_id, session_id, auth_time, amr, acr, decided_at"
)
"""The columns of ``oidc_device_grants`` in the order of ``DeviceGrant``'s fields."""
