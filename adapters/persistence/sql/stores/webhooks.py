"""The SQL webhook endpoints and delivery log (docs/reference/webhooks.md): tables ``webhooks``
and ``webhook_deliveries`` (migration 0026)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.persistence.sql import webhooks as sql
from adapters.persistence.sql.queries import SqlStore
from application.ports import WebhookRepo
from domain.errors import Conflict
from domain.webhooks import Webhook, WebhookDelivery

_ERROR_MAX = 200


class SqlWebhookRepo(SqlStore, WebhookRepo):
    """``WebhookRepo`` in the current transaction."""

    def _hook(self, row: Sequence[Any]) -> Webhook:
        id_, org, url, types, description, enabled, sealed, created, updated, failing, why = row
        if isinstance(types, str):
            types = json.loads(types)
        at = self._d.from_db
        return Webhook(
            id_, org, url, tuple(types), description, bool(enabled), bytes(sealed), at(created),
            at(updated), at(failing), why,
        )  # fmt: skip

    def _delivery(self, row: Sequence[Any]) -> WebhookDelivery:
        id_, hook, message, kind, attempt, at, status, error = row
        return WebhookDelivery(
            id_, hook, message, kind, int(attempt), self._d.from_db(at),
            None if status is None else int(status), error,
        )  # fmt: skip

    def _opt(self, at: datetime | None) -> Any:
        return None if at is None else self._d.to_db(at)

    async def add(self, webhook: Webhook) -> None:
        """Store a new endpoint. Raises ``Conflict`` if the id exists."""
        w = webhook
        params = (
            w.id, w.org_id, w.url, json.dumps(list(w.event_types)), w.description,
            self._d.bool_to_db(w.enabled), w.sealed_secret, self._d.to_db(w.created_at),
            self._d.to_db(w.updated_at), self._opt(w.failing_since), w.disabled_reason,
        )  # fmt: skip
        try:
            await self._q.execute(sql.INSERT, params, guarded=True)
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
            raise Conflict("webhook exists") from None

    async def get(self, webhook_id: str) -> Webhook | None:
        """The endpoint, or None."""
        row = await self._q.one(sql.BY_ID, (webhook_id,))
        return None if row is None else self._hook(row)

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Webhook]:
        """Up to ``limit`` endpoints after ``after`` of ``org_id`` (None: all), by id."""
        rows = await self._q.all(sql.PAGE, (org_id, after, limit))
        return [self._hook(r) for r in rows]

    async def update(self, webhook: Webhook) -> bool:
        """Replace the endpoint's changeable fields."""
        w = webhook
        params = (
            w.id, w.url, json.dumps(list(w.event_types)), w.description,
            self._d.bool_to_db(w.enabled), w.sealed_secret, self._d.to_db(w.updated_at),
            self._opt(w.failing_since), w.disabled_reason,
        )  # fmt: skip
        return await self._q.execute(sql.UPDATE, params) > 0

    async def delete(self, webhook_id: str) -> bool:
        """Delete the endpoint and its tries."""
        await self._q.execute(sql.DELETE_DELIVERIES, (webhook_id,))
        return await self._q.execute(sql.DELETE, (webhook_id,)) > 0

    async def enabled_for(self, org_id: str | None, user_id: str | None) -> list[Webhook]:
        """The enabled endpoints of ``org_id`` (None: the user's organization), one query."""
        if org_id is None and user_id is None:
            return []
        rows = await self._q.all(sql.ENABLED_FOR, (org_id, user_id, self._d.bool_to_db(True)))
        return [self._hook(r) for r in rows]

    async def set_failing(self, webhook_id: str, failing_since: datetime | None) -> None:
        """Set ``failing_since`` of the endpoint."""
        await self._q.execute(sql.SET_FAILING, (webhook_id, self._opt(failing_since)))

    async def disable(self, webhook_id: str, reason: str, now: datetime) -> bool:
        """Disable an enabled endpoint; whether it was enabled."""
        params = (
            webhook_id, reason, self._d.to_db(now), self._d.bool_to_db(False),
            self._d.bool_to_db(True),
        )  # fmt: skip
        return await self._q.execute(sql.DISABLE, params) > 0

    async def record_delivery(self, delivery: WebhookDelivery) -> None:
        """Append a try (nothing if the endpoint is gone)."""
        d = delivery
        error = None if d.error is None else d.error[:_ERROR_MAX]
        params = (
            d.id, d.webhook_id, d.message_id, d.event_type, d.attempt,
            self._d.to_db(d.attempted_at), d.status_code, error,
        )  # fmt: skip
        await self._q.execute(sql.INSERT_DELIVERY, params)

    async def deliveries(
        self, webhook_id: str, before: str | None, limit: int
    ) -> list[WebhookDelivery]:
        """Up to ``limit`` tries before ``before``, newest first."""
        rows = await self._q.all(sql.DELIVERIES, (webhook_id, before, limit))
        return [self._delivery(r) for r in rows]

    async def purge_deliveries_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete up to ``limit`` tries attempted before ``cutoff``, one bounded statement."""
        at = (self._d.to_db(cutoff),)
        return await self._q.purge("webhook_deliveries", sql.ATTEMPTED_BEFORE, at, limit)
