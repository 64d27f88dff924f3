"""The SQL audit log (docs/reference/operations.md): table ``audit_events`` (migration 0007)."""

from __future__ import annotations

import json
from datetime import datetime

from adapters.persistence.rows.audit import audit_row
from adapters.persistence.sql import audit
from adapters.persistence.sql.queries import SqlStore
from application.ports import AuditLog
from domain.audit import AuditEvent, AuditQuery
from domain.errors import Conflict


class SqlAuditLog(SqlStore, AuditLog):
    """``AuditLog`` in the current transaction."""

    async def record(self, event: AuditEvent) -> None:
        """Store ``event``; a None ``org_id`` takes the user's (a subquery of the insert).
        Raises ``Conflict`` if the id exists."""
        try:
            await self._q.execute(
                audit.INSERT,
                (
                    event.id,
                    event.type,
                    self._d.to_db(event.occurred_at),
                    event.actor_id,
                    event.user_id,
                    event.org_id,
                    event.client_address,
                    event.user_agent,
                    json.dumps(event.details_dict(), separators=(",", ":")),
                ),
                guarded=True,
            )
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
            raise Conflict("audit event id exists") from None

    async def list_page(
        self, query: AuditQuery, before: str | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` matching rows with ``id < before``, ids descending."""
        rows = await self._q.all(*audit.page(query, before, limit, self._d.to_db))
        return [audit_row(r, self._d.from_db(r[2])) for r in rows]

    async def purge_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) rows that occurred before ``cutoff``; returns how many."""
        return await self._q.purge("audit_events", audit.BEFORE, (self._d.to_db(cutoff),), limit)
