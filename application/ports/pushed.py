"""The port of pushed authorization requests (RFC 9126; docs/reference/oauth-and-oidc.md), reached
through the unit of work as ``uow.pushed_requests``. See ``application.ports`` for the conventions
every port follows (aware UTC times, ``StorageFault``)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from domain.pushed import PushedRequest


class PushedRequestStore(Protocol):
    """Pushed requests, stored by the SHA-256 hex of their ``request_uri`` only."""

    async def add(self, pushed: PushedRequest) -> None:
        """Store a new pushed request. Raises ``Conflict`` if the hash exists, ``NotFound`` if
        its client does not, ``ValueError`` if a time is naive."""
        ...

    async def take(self, uri_hash: str, now: datetime) -> PushedRequest | None:
        """The pushed request with this hash if unexpired at ``now``, deleted in the same
        atomic step (single use: of concurrent takes in any process exactly one gets it);
        None when unknown, used or expired."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete pushed requests whose ``expires_at`` <= ``now``; returns how many (at most
        ``limit``, all with None)."""
        ...


__all__ = ["PushedRequestStore"]
