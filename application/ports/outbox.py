"""Ports of the durable outbox (docs/adr/0049-durable-outbox.md): its store, and the HTTP
sender that delivers its items. See ``application.ports`` for the conventions every port
follows."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from domain.outbox import OutboxItem


class OutboxStore(Protocol):
    """Outbox items (``domain.outbox.OutboxItem``) in the unit of work: ``add`` in the same
    transaction as the change an item announces; the delivery worker ``claim``s due items in
    a short unit of its own, then ``finish``es or ``retry``s each (another unit), so no
    transaction stays open while a message is in flight."""

    async def add(self, item: OutboxItem) -> None:
        """Store a new item (free, ``attempts`` as given). Raises ``Conflict`` if the id exists."""
        ...

    async def claim(
        self, now: datetime, lease_until: datetime, claim: str, limit: int
    ) -> list[OutboxItem]:
        """Claim at most ``limit`` items claimable at ``now`` (due, and free or with a lapsed
        lease), oldest ``due_at`` first: each gets ``claimed_until = lease_until`` and ``claim``
        (the caller's random token) and is returned so. Two concurrent claims, in any process or
        instance sharing the store, never return the same item (``FOR UPDATE SKIP LOCKED`` on
        PostgreSQL, the write lock on SQLite, no await in between in memory). Raises
        ``ValueError`` if ``limit`` is below 1."""
        ...

    async def finish(self, item_id: str, claim: str) -> bool:
        """Delete the item (delivered, or given up) if ``claim`` still holds it; returns whether
        it did (False: the lease lapsed and another worker holds or finished it)."""
        ...

    async def retry(
        self, item_id: str, claim: str, due_at: datetime, attempts: int, last_error: str
    ) -> bool:
        """Free the item for another try at ``due_at`` with ``attempts`` and ``last_error``
        (at most 200 characters kept) if ``claim`` still holds it; returns whether it did."""
        ...

    async def get(self, item_id: str) -> OutboxItem | None:
        """The item with this id, or None (delivered, given up, or never)."""
        ...

    async def count(self) -> int:
        """How many items wait (claimed or not): the backlog, for metrics and tests."""
        ...


class DeliveryFailed(Exception):
    """An HTTP delivery did not reach its receiver: the connection failed or timed out, a
    redirect was answered (never followed), or the target was refused before connecting
    (``refused`` True: a private address, docs/adr/0049-durable-outbox.md). The message is a short
    reason without the body."""

    def __init__(self, reason: str, *, refused: bool = False) -> None:
        super().__init__(reason)
        self.refused = refused


class HttpSender(Protocol):
    """POSTs one message to a receiver's URL and tells the status it answered."""

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """POST ``body`` to ``url`` with ``headers``; returns the status code (any: the caller
        decides what counts as delivered). Redirects are not followed (a 3xx is returned as
        is). Raises ``DeliveryFailed`` when no answer came (connection, timeout) or the target
        was refused."""
        ...
