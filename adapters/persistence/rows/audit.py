"""Rows of ``audit_events`` shared by the SQL audit logs (SQLite, PostgreSQL): reading a row."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from domain.audit import AuditEvent


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
