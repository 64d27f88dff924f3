"""Rows of ``oidc_device_grants`` shared by the SQL stores (SQLite, PostgreSQL): reading a row of
``cols.OIDC_DEVICE_GRANTS`` and the parameters of a write, with the driver's time conversion
passed in. Scopes and ``amr`` are stored space-separated."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.persistence.rows.oidc import ReadTime, WriteTime
from domain.device import DeviceGrant, DeviceStatus


def device_grant_row(row: Sequence[Any], when: ReadTime) -> DeviceGrant:
    """A ``DeviceGrant`` from a row of ``cols.OIDC_DEVICE_GRANTS``."""
    (device_hash, user_hash, client_id, scopes, created_at, expires_at, interval, polled,
     status, user_id, session_id, auth_time, amr, acr, decided_at) = row  # fmt: skip
    return DeviceGrant(
        device_hash, user_hash, client_id, tuple(scopes.split()), when(created_at),
        when(expires_at), int(interval), None if polled is None else when(polled),
        DeviceStatus(status), user_id, session_id,
        None if auth_time is None else when(auth_time), tuple(amr.split()), acr,
        None if decided_at is None else when(decided_at),
    )  # fmt: skip


def _maybe(at: datetime | None, when: WriteTime) -> Any:
    return None if at is None else when(at)


def device_grant_params(grant: DeviceGrant, when: WriteTime) -> tuple[Any, ...]:
    """The values of ``cols.OIDC_DEVICE_GRANTS`` for ``grant``."""
    return (
        grant.device_code_hash, grant.user_code_hash, grant.client_id, " ".join(grant.scopes),
        when(grant.created_at), when(grant.expires_at), grant.interval,
        _maybe(grant.last_polled_at, when), grant.status.value, grant.user_id, grant.session_id,
        _maybe(grant.auth_time, when), " ".join(grant.amr), grant.acr,
        _maybe(grant.decided_at, when),
    )  # fmt: skip


def decision_params(grant: DeviceGrant, when: WriteTime, now: datetime) -> tuple[Any, ...]:
    """The values of ``sql.device.DECIDE`` for the decision ``grant`` carries, at ``now``."""
    return (
        grant.device_code_hash, grant.status.value, grant.user_id, grant.session_id,
        _maybe(grant.auth_time, when), " ".join(grant.amr), grant.acr,
        _maybe(grant.decided_at, when), when(now),
    )  # fmt: skip
