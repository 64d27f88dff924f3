"""The SQL outbox (docs/adr/0049-durable-outbox.md): table ``outbox`` (migration 0024)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.persistence.sql import outbox
from adapters.persistence.sql.queries import SqlStore
from application.ports import OutboxStore
from domain.errors import Conflict
from domain.outbox import OutboxItem, OutboxKind

_ERROR_MAX = 200


class SqlOutboxStore(SqlStore, OutboxStore):
    """``OutboxStore`` in the current transaction."""

    def _item(self, row: Sequence[Any]) -> OutboxItem:
        id_, kind, payload, created_at, due_at, attempts, claimed_until, claim, error = row
        if isinstance(payload, str):
            payload = json.loads(payload)
        return OutboxItem(
            id_, OutboxKind(kind), payload, self._d.from_db(created_at), self._d.from_db(due_at),
            int(attempts), self._d.from_db(claimed_until), claim, error,
        )  # fmt: skip

    async def add(self, item: OutboxItem) -> None:
        """Store a new item. Raises ``Conflict`` if the id exists."""
        at = None if item.claimed_until is None else self._d.to_db(item.claimed_until)
        try:
            await self._q.execute(
                outbox.INSERT,
                (
                    item.id, item.kind.value,
                    json.dumps(dict(item.payload), separators=(",", ":"), sort_keys=True),
                    self._d.to_db(item.created_at), self._d.to_db(item.due_at), item.attempts,
                    at, item.claim, item.last_error,
                ),
                guarded=True,
            )  # fmt: skip
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
            raise Conflict("outbox item exists") from None

    async def claim(
        self, now: datetime, lease_until: datetime, claim: str, limit: int
    ) -> list[OutboxItem]:
        """Claim up to ``limit`` claimable items, oldest ``due_at`` first (``FOR UPDATE SKIP
        LOCKED`` on PostgreSQL, then each claimed in the same transaction; SQLite's write lock
        serializes the claims)."""
        if limit < 1:
            raise ValueError("limit must be 1 or more")
        ids = await self._q.all(
            outbox.CLAIMABLE + self._d.skip_locked, (self._d.to_db(now), limit), write=True
        )
        until = self._d.to_db(lease_until)
        taken = []
        for (item_id,) in ids:
            row = await self._q.one(outbox.CLAIM, (item_id, until, claim), write=True)
            taken.append(self._item(row))
        return taken

    async def finish(self, item_id: str, claim: str) -> bool:
        """Delete the item if ``claim`` holds it."""
        return await self._q.execute(outbox.FINISH, (item_id, claim)) > 0

    async def retry(
        self, item_id: str, claim: str, due_at: datetime, attempts: int, last_error: str
    ) -> bool:
        """Free the item for a try at ``due_at`` if ``claim`` holds it."""
        params = (item_id, claim, self._d.to_db(due_at), attempts, last_error[:_ERROR_MAX])
        return await self._q.execute(outbox.RETRY, params) > 0

    async def get(self, item_id: str) -> OutboxItem | None:
        """The item with this id, or None."""
        row = await self._q.one(outbox.BY_ID, (item_id,))
        return None if row is None else self._item(row)

    async def count(self) -> int:
        """How many items wait."""
        row = await self._q.one(outbox.COUNT)
        return 0 if row is None else int(row[0])
