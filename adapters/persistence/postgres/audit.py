"""The PostgreSQL audit log (docs/reference/operations.md): table ``audit_events`` (migration
0007)."""

from __future__ import annotations

import json
from datetime import datetime

import asyncpg

from adapters.persistence.postgres.session import SqlQueries
from adapters.persistence.rows.audit import audit_row
from adapters.persistence.sql import audit
from adapters.persistence.times import require_aware
from application.ports import AuditLog
from domain.audit import AuditEvent, AuditQuery
from domain.errors import Conflict


class PostgresAuditLog(SqlQueries, AuditLog):
    """``AuditLog`` in the current transaction (``details`` as JSONB)."""

    async def record(self, event: AuditEvent) -> None:
        """Store ``event``; a None ``org_id`` takes the user's (a subquery of the insert).
        Raises ``Conflict`` if the id exists."""
        try:
            await self._run_guarded(
                audit.INSERT,
                event.id,
                event.type,
                require_aware(event.occurred_at),
                event.actor_id,
                event.user_id,
                event.org_id,
                event.client_address,
                event.user_agent,
                json.dumps(event.details_dict(), separators=(",", ":")),
            )
        except asyncpg.UniqueViolationError:
            raise Conflict("audit event id exists") from None

    async def list_page(
        self, query: AuditQuery, before: str | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` matching rows with ``id < before``, ids descending."""
        statement, params = audit.page(query, before, limit)
        rows = await self._all(statement, *params)
        return [audit_row(r) for r in rows]

    async def purge_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) rows that occurred before ``cutoff``; returns how many."""
        return await self._purge_where("audit_events", audit.BEFORE, limit, require_aware(cutoff))
