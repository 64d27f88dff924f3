"""The in-memory audit log (docs/reference/operations.md) over a unit's working copy."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import AuditLog
from domain.audit import AuditEvent, AuditQuery
from domain.errors import Conflict


def matches(event: AuditEvent, query: AuditQuery) -> bool:
    """True when ``event`` passes every filter of ``query``."""
    return (
        (query.org_id is None or event.org_id == query.org_id)
        and (query.user_id is None or event.user_id == query.user_id)
        and (query.type is None or event.type == query.type)
        and (query.since is None or event.occurred_at >= query.since)
    )


class MemoryAuditLog(AuditLog):
    """``AuditLog`` over the working copy (rows keyed by id)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def record(self, event: AuditEvent) -> None:
        """Store ``event`` (``org_id`` None: the user's current organization, if any). Raises
        ``Conflict`` if the id exists."""
        require_aware(event.occurred_at)
        if event.id in self._s.view.audit:
            raise Conflict("audit event id exists")
        if event.org_id is None and event.user_id is not None:
            user = self._s.view.users.get(event.user_id)
            if user is not None:
                event = attrs.evolve(event, org_id=user.org_id)
        self._s.write("audit")[event.id] = event

    async def list_page(
        self, query: AuditQuery, before: str | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` matching rows with ``id < before``, ids descending."""
        rows = sorted(
            (e for e in self._s.view.audit.values() if before is None or e.id < before),
            key=lambda e: e.id,
            reverse=True,
        )
        return [e for e in rows if matches(e, query)][:limit]

    async def purge_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) rows that occurred before ``cutoff``; returns how many."""
        require_aware(cutoff)
        return self._s.purge("audit", lambda e: e.occurred_at < cutoff, limit)
