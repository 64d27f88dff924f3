"""The SQLite audit log (docs/reference/operations.md): table ``audit_events`` (migration 0007)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from adapters.persistence.rows.audit import audit_row
from adapters.persistence.sql import audit
from adapters.persistence.sqlite.unit import SqlQueries
from adapters.persistence.times import from_micros, to_micros
from application.ports import AuditLog
from domain.audit import AuditEvent, AuditQuery
from domain.errors import Conflict


class SqliteAuditLog(SqlQueries, AuditLog):
    """``AuditLog`` in the current transaction."""

    async def record(self, event: AuditEvent) -> None:
        """Store ``event``; a None ``org_id`` takes the user's (a subquery of the insert).
        Raises ``Conflict`` if the id exists."""
        try:
            await self._count(
                audit.INSERT,
                (
                    event.id,
                    event.type,
                    to_micros(event.occurred_at),
                    event.actor_id,
                    event.user_id,
                    event.org_id,
                    event.client_address,
                    event.user_agent,
                    json.dumps(event.details_dict(), separators=(",", ":")),
                ),
            )
        except sqlite3.IntegrityError:
            raise Conflict("audit event id exists") from None

    async def list_page(
        self, query: AuditQuery, before: str | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` matching rows with ``id < before``, ids descending."""
        rows = await self._all(*audit.page(query, before, limit, to_micros))
        return [audit_row(r, from_micros(r[2])) for r in rows]

    async def purge_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) rows that occurred before ``cutoff``; returns how many."""
        return await self._purge_where("audit_events", audit.BEFORE, (to_micros(cutoff),), limit)
