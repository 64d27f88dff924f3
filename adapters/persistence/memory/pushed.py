"""The in-memory pushed authorization request store over a unit's working copy (RFC 9126;
docs/reference/oauth-and-oidc.md)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports.pushed import PushedRequestStore
from domain.errors import Conflict, NotFound
from domain.pushed import PushedRequest


class MemoryPushedRequestStore(PushedRequestStore):
    """``PushedRequestStore`` over the working copy (keyed by the request_uri's hash)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, pushed: PushedRequest) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such client)."""
        for at in (pushed.created_at, pushed.expires_at):
            require_aware(at)
        if pushed.client_id not in self._s.view.clients:
            raise NotFound(f"client {pushed.client_id} not found")
        if pushed.uri_hash in self._s.view.pushed_requests:
            raise Conflict("pushed request hash exists")
        self._s.write("pushed_requests")[pushed.uri_hash] = pushed

    async def take(self, uri_hash: str, now: datetime) -> PushedRequest | None:
        """Delete and return it if unexpired; None otherwise."""
        require_aware(now)
        pushed = self._s.view.pushed_requests.get(uri_hash)
        if pushed is None or pushed.expires_at <= now:
            return None
        del self._s.write("pushed_requests")[uri_hash]
        return pushed

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) expired pushed requests."""
        require_aware(now)
        return self._s.purge("pushed_requests", lambda p: p.expires_at <= now, limit)
