"""Statements on ``oidc_pushed_requests`` (pushed authorization requests, RFC 9126;
docs/reference/oauth-and-oidc.md; migration 0022); see the package for the placeholders. Purging
reuses ``purge.EXPIRED``."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

PUSHED_COLUMNS = "uri_hash, client_id, params, created_at, expires_at"
"""The columns of ``oidc_pushed_requests`` in the order of ``PushedRequest``'s fields."""
INSERT_PUSHED = f"INSERT INTO oidc_pushed_requests ({PUSHED_COLUMNS}) VALUES ($1, $2, $3, $4, $5)"
TAKE_PUSHED = (
    "DELETE FROM oidc_pushed_requests WHERE uri_hash = $1 AND expires_at > $2"
    f" RETURNING {PUSHED_COLUMNS}"
)
"""Take pushed request ``$1`` if unexpired at ``$2``: one statement, so exactly one of
concurrent takes gets the row."""
