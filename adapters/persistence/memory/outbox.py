"""The in-memory outbox (docs/adr/0049-durable-outbox.md) over a unit's working copy."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports.outbox import OutboxStore
from domain.errors import Conflict
from domain.outbox import OutboxItem

_ERROR_MAX = 200


class MemoryOutboxStore(OutboxStore):
    """``OutboxStore`` over the working copy (items keyed by id). The storage's one lock
    serializes units, so a claim never races another."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, item: OutboxItem) -> None:
        """Store a new item. Raises ``Conflict`` if the id exists."""
        require_aware(item.created_at)
        require_aware(item.due_at)
        if item.id in self._s.view.outbox:
            raise Conflict("outbox item exists")
        self._s.write("outbox")[item.id] = item

    async def claim(
        self, now: datetime, lease_until: datetime, claim: str, limit: int
    ) -> list[OutboxItem]:
        """Claim up to ``limit`` claimable items, oldest ``due_at`` first."""
        require_aware(now)
        require_aware(lease_until)
        if limit < 1:
            raise ValueError("limit must be 1 or more")
        ready = sorted(
            (i for i in self._s.view.outbox.values() if i.claimable(now)),
            key=lambda i: (i.due_at, i.id),
        )[:limit]
        table = self._s.write("outbox") if ready else {}
        taken = [attrs.evolve(i, claimed_until=lease_until, claim=claim) for i in ready]
        for item in taken:
            table[item.id] = item
        return taken

    def _held(self, item_id: str, claim: str) -> OutboxItem | None:
        item = self._s.view.outbox.get(item_id)
        return item if item is not None and item.claim == claim else None

    async def finish(self, item_id: str, claim: str) -> bool:
        """Delete the item if ``claim`` holds it."""
        if self._held(item_id, claim) is None:
            return False
        del self._s.write("outbox")[item_id]
        return True

    async def retry(
        self, item_id: str, claim: str, due_at: datetime, attempts: int, last_error: str
    ) -> bool:
        """Free the item for a try at ``due_at`` if ``claim`` holds it."""
        require_aware(due_at)
        item = self._held(item_id, claim)
        if item is None:
            return False
        self._s.write("outbox")[item_id] = attrs.evolve(
            item, due_at=due_at, attempts=attempts, claimed_until=None, claim=None,
            last_error=last_error[:_ERROR_MAX],
        )  # fmt: skip
        return True

    async def get(self, item_id: str) -> OutboxItem | None:
        """The item with this id, or None."""
        return self._s.view.outbox.get(item_id)

    async def count(self) -> int:
        """How many items wait."""
        return len(self._s.view.outbox)
