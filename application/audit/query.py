"""The audit log's reading side (docs/reference/operations.md): ``GET /audit-events``.

Newest first, keyset-paginated by id (ids are time-ordered, ``domain.audit.new_audit_id``): a page
holds the rows with ``id < cursor's id``. Rows written while a walk goes on are newer than the
walk's first page, so they never appear on a later page: the walk sees each row that existed
when it began exactly once.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from application.ports import Storage
from application.shared.checks import invalid
from application.shared.pagination import Page, check_limit, decode_cursor, page_of
from domain import policy
from domain.audit import AUDIT_EVENT_TYPES, AuditEvent, AuditQuery
from domain.policy import Actor, Operation

__all__ = ["LISTING", "ListAuditEvents", "parse_since"]

LISTING = "audit-events"
"""The name inside this listing's cursors (a cursor of ``/users`` is refused here)."""

_MAX_ID_LENGTH = 64


def parse_since(value: str | None) -> datetime | None:
    """The ``since`` filter: an RFC 3339 date-time with a time zone (``2026-01-01T00:00:00Z``).
    Raises ``ValidationFailed`` naming ``since`` for anything else."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value) if len(value) <= 64 else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or parsed.utcoffset() is None:
        raise invalid("since", "must be an RFC 3339 date-time with a time zone")
    return parsed


def _check_filter(field: str, value: str | None) -> str | None:
    if value is not None and not (0 < len(value) <= _MAX_ID_LENGTH):
        raise invalid(field, f"must be 1 to {_MAX_ID_LENGTH} characters")
    return value


@attrs.frozen
class ListAuditEvents:
    """GET /audit-events (docs/reference/operations.md): org_admin (its organization) and
    superadmin.

    Rules (``domain.policy.list_scope`` with ``LIST_AUDIT_EVENTS``): viewer/operator →
    ``Forbidden``; an org_admin sees its own organization's rows, and naming another ``org_id``
    → ``NotFound``; a superadmin sees every row, or those of ``org_id``.

    Filters: ``user_id`` (whom the event concerns), ``event_type`` (the query's ``type``: one
    of ``AUDIT_EVENT_TYPES``), ``since`` (an RFC 3339 date-time with a zone: rows at or after
    it). ``limit`` 1..200 (default 50); ``cursor``: the ``next_cursor`` of the previous page.
    A bad value → ``ValidationFailed`` naming the field. Returns ``Page[AuditEvent]``, newest
    first.
    """

    _storage: Storage

    async def __call__(
        self,
        actor: Actor,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        org_id: str | None = None,
        user_id: str | None = None,
        event_type: str | None = None,
        since: str | None = None,
    ) -> Page[AuditEvent]:
        """One page of the audit rows visible to ``actor`` that match the filters."""
        scope = policy.list_scope(actor, Operation.LIST_AUDIT_EVENTS, org_id)
        size = check_limit(limit)
        before = None if cursor is None else decode_cursor(LISTING, cursor)
        if event_type is not None and event_type not in AUDIT_EVENT_TYPES:
            raise invalid("type", "is not an audit event type")
        query = AuditQuery(
            org_id=scope,
            user_id=_check_filter("user_id", user_id),
            type=event_type,
            since=parse_since(since),
        )
        async with self._storage.begin() as uow:
            rows = await uow.audit.list_page(query, before, size + 1)
        return page_of(rows, size, LISTING, lambda event: event.id)
