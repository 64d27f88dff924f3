"""Statements on ``sessions`` (``SessionStore``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols

_LIVE = (
    "expires_at > {now} AND COALESCE("
    "(SELECT TRUE FROM refresh_tokens t"
    " WHERE t.family_id = sessions.id AND t.expires_at > {now} LIMIT 1),"
    " (SELECT TRUE FROM oidc_hosted_sessions h WHERE h.session_id = sessions.id"
    " AND h.idle_expires_at > {now} AND h.expires_at > {now} LIMIT 1), FALSE)"
)
"""The condition a live session meets at ``{now}``: unexpired, with a live refresh token or a
live hosted session (docs/reference/oauth-and-oidc.md). Written as correlated scalar subqueries,
each a probe of its table's index per session: two ``EXISTS`` under an ``OR`` let PostgreSQL hash a
whole table's live rows instead (a scan of every refresh token; issue 35)."""

INSERT = f"INSERT INTO sessions ({cols.SESSIONS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
BY_ID = f"SELECT {cols.SESSIONS} FROM sessions WHERE id = $1"
LIVE = (
    f"SELECT {cols.SESSIONS} FROM sessions WHERE user_id = $1 AND "
    + _LIVE.format(now="$2")
    + " ORDER BY created_at DESC, id DESC"
)
"""User ``$1``'s sessions live at ``$2``, newest first."""
COUNT_LIVE = (
    "SELECT count(*) FROM sessions JOIN users u ON u.id = sessions.user_id"
    " WHERE ($1::text IS NULL OR u.org_id = $1) AND " + _LIVE.format(now="$2")
)
"""How many sessions of org ``$1``'s users (NULL: every org) are live at ``$2``."""
DEAD = "NOT (" + _LIVE.format(now="$1") + ")"
"""The purge condition: past ``expires_at``, or without a live token or hosted session at
``$1``."""
TOUCH = "UPDATE sessions SET last_used_at = $2 WHERE id = $1 AND last_used_at < $2"
"""Session ``$1`` was used at ``$2``: ``last_used_at`` moves on, never back."""
OF_USER = f"SELECT {cols.SESSIONS} FROM sessions WHERE user_id = $1 ORDER BY created_at, id"
"""Every record of user ``$1``, live or not, oldest first."""
DELETE = "DELETE FROM sessions WHERE id = $1"
DELETE_OF_USER = "DELETE FROM sessions WHERE user_id = $1 RETURNING id"
DELETE_OTHERS_OF_USER = "DELETE FROM sessions WHERE user_id = $1 AND id <> $2 RETURNING id"
"""End user ``$1``'s sessions but ``$2``."""
TOKENS_OF_CLIENT = (
    "DELETE FROM refresh_tokens WHERE family_id IN"
    " (SELECT id FROM sessions WHERE user_id = $1 AND client_id = $2)"
)
"""Delete the refresh tokens of user ``$1``'s sessions started by client ``$2``."""
DELETE_OF_CLIENT = "DELETE FROM sessions WHERE user_id = $1 AND client_id = $2 RETURNING id"
"""End user ``$1``'s sessions started by client ``$2`` (hosted sessions go by cascade)."""
