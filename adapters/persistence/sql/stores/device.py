"""The SQL device grant store (RFC 8628; docs/reference/oauth-and-oidc.md): table
``oidc_device_grants`` (migration 0022; statements in ``sql.device``, rows in ``rows.device``)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.rows.device import (
    decision_params,
    device_grant_params,
    device_grant_row,
)
from adapters.persistence.sql import device
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SqlStore
from application.ports.device import DeviceGrantStore
from domain.device import DeviceGrant
from domain.errors import Conflict, NotFound


class SqlDeviceGrantStore(SqlStore, DeviceGrantStore):
    """``DeviceGrantStore`` in the current transaction: ``decide`` and ``take`` are single
    conditional ``UPDATE``s (of concurrent ones exactly one changes the row: SQLite's write lock
    or PostgreSQL's row lock orders them); ``get`` locks the row for the unit's update."""

    async def add(self, grant: DeviceGrant) -> None:
        """Store a grant. Raises ``Conflict`` (a hash exists) or ``NotFound`` (no client)."""
        try:
            await self._q.execute(
                device.INSERT_DEVICE_GRANT, device_grant_params(grant, self._d.to_db),
                guarded=True,
            )  # fmt: skip
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"client {grant.client_id} not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("device grant hash exists") from None
            raise

    async def get(self, device_code_hash: str) -> DeviceGrant | None:
        """The grant, or None (locked for this unit's update)."""
        row = await self._q.one(
            device.DEVICE_GRANT + self._d.lock_rows, (device_code_hash,), write=True
        )
        return None if row is None else device_grant_row(row, self._d.from_db)

    async def find_by_user_code(self, user_code_hash: str, now: datetime) -> DeviceGrant | None:
        """The pending, unexpired grant of this user code hash, or None."""
        row = await self._q.one(device.PENDING_BY_USER_CODE, (user_code_hash, self._d.to_db(now)))
        return None if row is None else device_grant_row(row, self._d.from_db)

    async def record_poll(self, device_code_hash: str, polled_at: datetime, interval: int) -> None:
        """Store the poll's time and the interval."""
        await self._q.execute(
            device.RECORD_POLL, (device_code_hash, self._d.to_db(polled_at), interval)
        )

    async def decide(self, decided: DeviceGrant, now: datetime) -> bool:
        """Store the decision if the grant is still pending and unexpired."""
        params = decision_params(decided, self._d.to_db, now)
        return bool(await self._q.execute(device.DECIDE, params))

    async def take(self, device_code_hash: str) -> bool:
        """Mark an approved grant used; False for any other."""
        return bool(await self._q.execute(device.TAKE, (device_code_hash,)))

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) grants with ``expires_at <= now``."""
        return await self._q.purge("oidc_device_grants", EXPIRED, (self._d.to_db(now),), limit)
