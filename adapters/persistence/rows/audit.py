"""Rows of ``audit_events`` shared by the SQL audit logs (SQLite, PostgreSQL): reading a row,
and the ``WHERE`` clause of a ``GET /audit-events`` query."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from domain.audit import AuditEvent, AuditQuery


def audit_row(row: Iterable[Any], occurred_at: Any = None) -> AuditEvent:
    """An ``AuditEvent`` from a row of ``cols.AUDIT_EVENTS`` (``details`` JSON text or a
    decoded mapping); ``occurred_at`` already converted when given."""
    id_, type_, at, actor_id, user_id, org_id, client, agent, details = row
    if isinstance(details, str):
        details = json.loads(details)
    return AuditEvent(
        id_, type_, at if occurred_at is None else occurred_at,
        actor_id, user_id, org_id, client, agent, details,
    )  # fmt: skip


def filters(query: AuditQuery, before: str | None, mark: Any) -> tuple[str, list[Any]]:
    """``(WHERE clause, parameters)`` for ``query`` and the keyset bound ``before``; ``mark(n)``
    is the placeholder of the n-th parameter (``?`` or ``$n``)."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("id <", before),
        ("org_id =", query.org_id),
        ("user_id =", query.user_id),
        ("type =", query.type),
        ("occurred_at >=", query.since),
    ):
        if value is not None:
            params.append(value)
            clauses.append(f"{column} {mark(len(params))}")
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params
