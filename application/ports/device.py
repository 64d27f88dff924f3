"""The port of the device authorization grant (RFC 8628; docs/reference/oauth-and-oidc.md),
reached through the unit of work as ``uow.device_grants``. See ``application.ports`` for the
conventions every port follows (aware UTC times, ``StorageFault``)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from domain.device import DeviceGrant, DeviceStatus


class DeviceGrantStore(Protocol):
    """Device grants, stored by the SHA-256 hex of the device code and found by the SHA-256 hex
    of the normalized user code (neither code is stored in clear)."""

    async def add(self, grant: DeviceGrant) -> None:
        """Store a new grant.

        Raises ``Conflict`` if either hash exists already (the caller draws new codes),
        ``NotFound`` if its client does not exist, ``ValueError`` if a time is naive.
        """
        ...

    async def get(self, device_code_hash: str) -> DeviceGrant | None:
        """The grant with this device code hash, or None. In a unit of work begun with
        ``Storage.begin`` the row is locked until the unit ends (PostgreSQL ``FOR UPDATE``;
        SQLite's and memory's units hold the write lock already), so a read-then-write of one
        grant (a poll) is not interleaved with another's."""
        ...

    async def find_by_user_code(self, user_code_hash: str, now: datetime) -> DeviceGrant | None:
        """The grant with this user code hash if it is still ``pending`` and unexpired at
        ``now``; None otherwise (unknown, decided, used or expired look the same)."""
        ...

    async def record_poll(self, device_code_hash: str, polled_at: datetime, interval: int) -> None:
        """Store a poll: ``last_polled_at`` = ``polled_at`` and ``interval`` (seconds);
        nothing if the grant is gone."""
        ...

    async def decide(self, decided: DeviceGrant, now: datetime) -> bool:
        """Store the user's decision carried by ``decided`` (its ``status``: approved or denied,
        ``user_id``, ``session_id``, ``auth_time``, ``amr``, ``acr``, ``decided_at``) on the
        grant with its ``device_code_hash``, only if that grant is still ``pending`` and
        unexpired at ``now``: one conditional update, so of two concurrent decisions exactly one
        is stored. True when it was stored."""
        ...

    async def take(self, device_code_hash: str) -> bool:
        """Mark an ``approved`` grant ``used`` in one conditional update (``WHERE status =
        'approved'``): of concurrent takes in any process exactly one gets True (RFC 8628
        §3.5: the tokens are issued once)."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete grants whose ``expires_at`` <= ``now`` (any status); returns how many. At
        most ``limit`` (all with None)."""
        ...


__all__ = ["DeviceGrantStore", "DeviceStatus"]
