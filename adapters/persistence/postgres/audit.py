"""The PostgreSQL audit log (contract section 11): table ``audit_events`` (migration 0007)."""

# Only module constants (column lists) and fixed filter clauses are interpolated into SQL;
# values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import json
from datetime import datetime

import asyncpg

from adapters.persistence.postgres.session import SqlQueries
from adapters.persistence.rows.audit import audit_row, filters
from adapters.persistence.sql import columns as cols
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
                f"INSERT INTO audit_events ({cols.AUDIT_EVENTS}) VALUES ($1, $2, $3, $4, $5,"
                " COALESCE($6, (SELECT org_id FROM users WHERE id = $5)), $7, $8, $9::jsonb)",
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
        where, params = filters(query, before, lambda n: f"${n}")
        rows = await self._all(
            f"SELECT {cols.AUDIT_EVENTS} FROM audit_events{where}"
            f" ORDER BY id DESC LIMIT ${len(params) + 1}",
            *params,
            limit,
        )
        return [audit_row(r) for r in rows]

    async def purge_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) rows that occurred before ``cutoff``; returns how many."""
        return await self._purge_where(
            "audit_events", "occurred_at < $1", limit, require_aware(cutoff)
        )
