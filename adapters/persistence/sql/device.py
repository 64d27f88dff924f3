"""Statements on ``oidc_device_grants`` (the device authorization grant, RFC 8628;
docs/reference/oauth-and-oidc.md; migration 0022); see the package for the placeholders. Purging
reuses ``purge.EXPIRED``."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols

_COUNT = len(cols.OIDC_DEVICE_GRANTS.split(","))

INSERT_DEVICE_GRANT = (
    f"INSERT INTO oidc_device_grants ({cols.OIDC_DEVICE_GRANTS})"
    f" VALUES ({', '.join(f'${n}' for n in range(1, _COUNT + 1))})"
)
"""A grant: the values of ``cols.OIDC_DEVICE_GRANTS`` (``rows.device.device_grant_params``)."""
DEVICE_GRANT = (
    f"SELECT {cols.OIDC_DEVICE_GRANTS} FROM oidc_device_grants WHERE device_code_hash = $1"
)
"""The grant of device code hash ``$1`` (a write unit appends ``Dialect.lock_rows``)."""
PENDING_BY_USER_CODE = (
    f"SELECT {cols.OIDC_DEVICE_GRANTS} FROM oidc_device_grants"
    " WHERE user_code_hash = $1 AND status = 'pending' AND expires_at > $2"
)
"""The grant of user code hash ``$1`` if pending and unexpired at ``$2``."""
RECORD_POLL = (
    "UPDATE oidc_device_grants SET last_polled_at = $2, poll_interval = $3"
    " WHERE device_code_hash = $1"
)
DECIDE = (
    "UPDATE oidc_device_grants SET status = $2, user_id = $3, session_id = $4, auth_time = $5,"
    " amr = $6, acr = $7, decided_at = $8"
    " WHERE device_code_hash = $1 AND status = 'pending' AND expires_at > $9"
)
"""Store a decision on grant ``$1`` only while it is pending and unexpired at ``$9``."""
TAKE = (
    "UPDATE oidc_device_grants SET status = 'used'"
    " WHERE device_code_hash = $1 AND status = 'approved'"
)
"""Mark grant ``$1`` used if it was approved (one update: exactly one concurrent take wins)."""
