"""Statements on ``sessions`` (``SessionStore``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols

_LIVE = (
    "expires_at > {now} AND EXISTS (SELECT 1 FROM refresh_tokens t"
    " WHERE t.family_id = sessions.id AND t.expires_at > {now})"
)
"""The condition a live session meets at ``{now}``."""

INSERT = f"INSERT INTO sessions ({cols.SESSIONS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
BY_ID = f"SELECT {cols.SESSIONS} FROM sessions WHERE id = $1"
LIVE = (
    f"SELECT {cols.SESSIONS} FROM sessions WHERE user_id = $1 AND "
    + _LIVE.format(now="$2")
    + " ORDER BY created_at DESC, id DESC"
)
"""User ``$1``'s sessions live at ``$2``, newest first."""
DEAD = "NOT (" + _LIVE.format(now="$1") + ")"
"""The purge condition: past ``expires_at`` or without a live token at ``$1``."""
DELETE = "DELETE FROM sessions WHERE id = $1"
DELETE_OF_USER = "DELETE FROM sessions WHERE user_id = $1 RETURNING id"
