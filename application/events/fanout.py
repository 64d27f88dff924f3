"""The webhooks' fan-out (docs/reference/webhooks.md; docs/adr/0052-webhooks-on-the-outbox.md):
each audit row of a type an enabled endpoint of its organization subscribes to becomes one
``webhook`` outbox item per such endpoint, in the unit of work that writes the row — both
commit or neither does.

Called by the audit writer (``application.events.audit``) for every row it writes: one query
per organization (or user, when the row names no organization) for its enabled endpoints; a
row whose organization has none costs that one query and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from application.ports import UnitOfWork
from domain.audit import AuditEvent
from domain.outbox import OutboxItem, OutboxKind, new_outbox_id
from domain.webhooks import Webhook

__all__ = ["event_data", "queue_webhooks", "rfc3339", "webhook_item"]


def rfc3339(at: datetime) -> str:
    """``at`` (timezone-aware UTC) as RFC 3339 with ``Z``, e.g. ``2026-01-01T00:00:00Z``."""
    return at.isoformat().replace("+00:00", "Z")


def event_data(event: AuditEvent, org_id: str) -> dict[str, Any]:
    """The ``data`` of a webhook message: the audit event as ``GET /audit-events`` renders it
    (docs/reference/operations.md: ``id, type, occurred_at, actor_id, user_id, org_id,
    client_address, user_agent, details``), with the endpoint's ``org_id`` when the row left
    it to the store."""
    return {
        "id": event.id, "type": event.type, "occurred_at": rfc3339(event.occurred_at),
        "actor_id": event.actor_id, "user_id": event.user_id, "org_id": event.org_id or org_id,
        "client_address": event.client_address, "user_agent": event.user_agent,
        "details": event.details_dict(),
    }  # fmt: skip


def webhook_item(hook: Webhook, event_type: str, data: dict[str, Any], now: datetime) -> OutboxItem:
    """A ``webhook`` outbox item due at ``now``: payload ``webhook_id``, ``type`` and
    ``event`` (``data`` as compact JSON: ids, reasons and addresses, never a secret)."""
    payload = {
        "webhook_id": hook.id,
        "type": event_type,
        "event": json.dumps(data, separators=(",", ":"), sort_keys=True),
    }
    return OutboxItem(new_outbox_id(), OutboxKind.WEBHOOK, payload, now, now)


async def queue_webhooks(uow: UnitOfWork, rows: Sequence[AuditEvent], now: datetime) -> None:
    """Add to ``uow.outbox`` one item per (row, enabled endpoint of the row's organization
    subscribed to its type). Raises what the stores raise (the unit then rolls back)."""
    endpoints: dict[tuple[str | None, str | None], list[Webhook]] = {}
    for row in rows:
        key = (row.org_id, None if row.org_id is not None else row.user_id)
        if key == (None, None):
            continue
        if key not in endpoints:
            endpoints[key] = await uow.webhooks.enabled_for(*key)
        for hook in endpoints[key]:
            if hook.subscribes(row.type):
                data = event_data(row, hook.org_id)
                await uow.outbox.add(webhook_item(hook, row.type, data, now))
