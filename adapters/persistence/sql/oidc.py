"""Statements on ``oidc_codes``, ``oidc_consents`` and ``oidc_hosted_sessions`` (the OpenID
Connect provider's stores, docs/reference/oauth-and-oidc.md; migration 0015); see the package for
the placeholders. Ending a hosted session's ``sessions`` row reuses ``tokens.END_FAMILY`` and
``sessions.DELETE``; purging codes reuses ``purge.EXPIRED``."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols


def _marks(count: int) -> str:
    return ", ".join(f"${n}" for n in range(1, count + 1))


_HOSTED_H = ", ".join(f"h.{c.strip()}" for c in cols.OIDC_HOSTED.split(","))

INSERT_CODE = (
    f"INSERT INTO oidc_codes ({cols.OIDC_CODES}) VALUES ({_marks(len(cols.OIDC_CODES.split(',')))})"
)
"""A code: the values of ``cols.OIDC_CODES`` (``rows.oidc.code_params``)."""
CODE = f"SELECT {cols.OIDC_CODES} FROM oidc_codes WHERE code_hash = $1"
TAKE_CODE = (
    "UPDATE oidc_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL"
    f" RETURNING {cols.OIDC_CODES}"
)
"""Mark code ``$1`` used at ``$2`` if it was unused (no row otherwise: read it with ``CODE``)."""
SET_CODE_FAMILY = "UPDATE oidc_codes SET family_id = $2 WHERE code_hash = $1"

CONSENT = f"SELECT {cols.OIDC_CONSENTS} FROM oidc_consents WHERE user_id = $1 AND client_id = $2"
"""User ``$1``'s consent to client ``$2`` (PostgreSQL appends ``FOR UPDATE`` to lock it)."""
INSERT_CONSENT = (
    f"INSERT INTO oidc_consents ({cols.OIDC_CONSENTS}) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (user_id, client_id) DO NOTHING"
)
"""A first consent (values of ``cols.OIDC_CONSENTS``); no row inserted when there is one."""
UPDATE_CONSENT = (
    "UPDATE oidc_consents SET scopes = $3, granted_at = $4 WHERE user_id = $1 AND client_id = $2"
)
CONSENTS_OF_USER = (
    f"SELECT {cols.OIDC_CONSENTS} FROM oidc_consents WHERE user_id = $1"
    " ORDER BY granted_at DESC, client_id"
)
"""User ``$1``'s consents, newest grant first."""
DELETE_CONSENT = "DELETE FROM oidc_consents WHERE user_id = $1 AND client_id = $2"

INSERT_HOSTED = (
    f"INSERT INTO oidc_hosted_sessions ({cols.OIDC_HOSTED})"
    f" VALUES ({_marks(len(cols.OIDC_HOSTED.split(',')))})"
)
"""A hosted session: the values of ``cols.OIDC_HOSTED`` (``rows.oidc.hosted_params``)."""
LIVE_HOSTED = (
    f"SELECT {_HOSTED_H} FROM oidc_hosted_sessions h JOIN sessions s ON s.id = h.session_id"
    " WHERE h.id_hash = $1 AND h.idle_expires_at > $2 AND h.expires_at > $2"
    " AND s.expires_at > $2"
)
"""Hosted session ``$1`` if live at ``$2``: before its idle and absolute ends, its
``sessions`` row there and unexpired."""
TOUCH_HOSTED = (
    "UPDATE oidc_hosted_sessions SET idle_expires_at ="
    " CASE WHEN $2 < expires_at THEN $2 ELSE expires_at END WHERE id_hash = $1"
)
"""Move hosted session ``$1``'s idle end to ``$2``, capped at its absolute end."""
REAUTHENTICATED = "UPDATE oidc_hosted_sessions SET auth_time = $2 WHERE id_hash = $1"
"""Hosted session ``$1``'s user proved itself again at ``$2``."""
DELETE_HOSTED = "DELETE FROM oidc_hosted_sessions WHERE id_hash = $1 RETURNING session_id"
HOSTED_EXPIRED = "idle_expires_at <= $1 OR expires_at <= $1"
"""The purge condition of ``oidc_hosted_sessions``: past the idle or absolute end at ``$1``."""
