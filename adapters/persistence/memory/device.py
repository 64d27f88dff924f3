"""The in-memory device grant store over a unit's working copy (RFC 8628;
docs/reference/oauth-and-oidc.md)."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports.device import DeviceGrantStore
from domain.device import DeviceGrant, DeviceStatus
from domain.errors import Conflict, NotFound


class MemoryDeviceGrantStore(DeviceGrantStore):
    """``DeviceGrantStore`` over the working copy (grants keyed by the device code's hash).
    Units run one at a time, so each check-and-write is atomic."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, grant: DeviceGrant) -> None:
        """Store a grant. Raises ``Conflict`` (a hash exists) or ``NotFound`` (no client)."""
        for at in (grant.created_at, grant.expires_at):
            require_aware(at)
        if grant.client_id not in self._s.view.clients:
            raise NotFound(f"client {grant.client_id} not found")
        grants = self._s.view.device_grants
        if grant.device_code_hash in grants or any(
            g.user_code_hash == grant.user_code_hash for g in grants.values()
        ):
            raise Conflict("device grant hash exists")
        self._s.write("device_grants")[grant.device_code_hash] = grant

    async def get(self, device_code_hash: str) -> DeviceGrant | None:
        """The grant, or None."""
        return self._s.view.device_grants.get(device_code_hash)

    async def find_by_user_code(self, user_code_hash: str, now: datetime) -> DeviceGrant | None:
        """The pending, unexpired grant of this user code hash, or None."""
        require_aware(now)
        for grant in self._s.view.device_grants.values():
            if grant.user_code_hash == user_code_hash:
                live = grant.status is DeviceStatus.PENDING and not grant.is_expired(now)
                return grant if live else None
        return None

    async def record_poll(self, device_code_hash: str, polled_at: datetime, interval: int) -> None:
        """Store the poll's time and the interval."""
        require_aware(polled_at)
        grant = self._s.view.device_grants.get(device_code_hash)
        if grant is not None:
            polled = attrs.evolve(grant, last_polled_at=polled_at, interval=interval)
            self._s.write("device_grants")[device_code_hash] = polled

    async def decide(self, decided: DeviceGrant, now: datetime) -> bool:
        """Store the decision if the grant is still pending and unexpired."""
        require_aware(now)
        grant = self._s.view.device_grants.get(decided.device_code_hash)
        if grant is None or grant.status is not DeviceStatus.PENDING or grant.is_expired(now):
            return False
        stored = attrs.evolve(
            grant, status=decided.status, user_id=decided.user_id,
            session_id=decided.session_id, auth_time=decided.auth_time, amr=decided.amr,
            acr=decided.acr, decided_at=decided.decided_at,
        )  # fmt: skip
        self._s.write("device_grants")[grant.device_code_hash] = stored
        return True

    async def take(self, device_code_hash: str) -> bool:
        """Mark an approved grant used; False for any other."""
        grant = self._s.view.device_grants.get(device_code_hash)
        if grant is None or grant.status is not DeviceStatus.APPROVED:
            return False
        used = attrs.evolve(grant, status=DeviceStatus.USED)
        self._s.write("device_grants")[device_code_hash] = used
        return True

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) grants with ``expires_at <= now``."""
        require_aware(now)
        return self._s.purge("device_grants", lambda g: g.is_expired(now), limit)
