"""The in-memory webhook endpoints and delivery log (docs/reference/webhooks.md) over a unit's
working copy."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports.webhooks import WebhookRepo
from domain.errors import Conflict
from domain.webhooks import Webhook, WebhookDelivery


class MemoryWebhookRepo(WebhookRepo):
    """``WebhookRepo`` over the working copy (endpoints and tries keyed by id)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, webhook: Webhook) -> None:
        """Store a new endpoint. Raises ``Conflict`` if the id exists."""
        require_aware(webhook.created_at)
        if webhook.id in self._s.view.webhooks:
            raise Conflict("webhook exists")
        self._s.write("webhooks")[webhook.id] = webhook

    async def get(self, webhook_id: str) -> Webhook | None:
        """The endpoint, or None."""
        return self._s.view.webhooks.get(webhook_id)

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Webhook]:
        """Up to ``limit`` endpoints after ``after`` of ``org_id`` (None: all), by id."""
        rows = sorted(self._s.view.webhooks.values(), key=lambda w: w.id)
        return [
            w
            for w in rows
            if (org_id is None or w.org_id == org_id) and (after is None or w.id > after)
        ][:limit]

    async def update(self, webhook: Webhook) -> bool:
        """Replace the endpoint, keeping its organization and creation time."""
        old = self._s.view.webhooks.get(webhook.id)
        if old is None:
            return False
        self._s.write("webhooks")[webhook.id] = attrs.evolve(
            webhook, org_id=old.org_id, created_at=old.created_at
        )
        return True

    async def delete(self, webhook_id: str) -> bool:
        """Delete the endpoint and its tries."""
        if webhook_id not in self._s.view.webhooks:
            return False
        del self._s.write("webhooks")[webhook_id]
        log = self._s.write("webhook_deliveries")
        for key in [k for k, d in log.items() if d.webhook_id == webhook_id]:
            del log[key]
        return True

    async def enabled_for(self, org_id: str | None, user_id: str | None) -> list[Webhook]:
        """The enabled endpoints of ``org_id`` (None: the user's organization)."""
        if org_id is None and user_id is not None:
            user = self._s.view.users.get(user_id)
            org_id = None if user is None else user.org_id
        if org_id is None:
            return []
        return sorted(
            (w for w in self._s.view.webhooks.values() if w.org_id == org_id and w.enabled),
            key=lambda w: w.id,
        )

    async def set_failing(self, webhook_id: str, failing_since: datetime | None) -> None:
        """Set ``failing_since`` of the endpoint, if it exists."""
        hook = self._s.view.webhooks.get(webhook_id)
        if hook is not None and hook.failing_since != failing_since:
            self._s.write("webhooks")[webhook_id] = attrs.evolve(hook, failing_since=failing_since)

    async def disable(self, webhook_id: str, reason: str, now: datetime) -> bool:
        """Disable an enabled endpoint."""
        hook = self._s.view.webhooks.get(webhook_id)
        if hook is None or not hook.enabled:
            return False
        self._s.write("webhooks")[webhook_id] = attrs.evolve(
            hook, enabled=False, disabled_reason=reason, updated_at=now
        )
        return True

    async def record_delivery(self, delivery: WebhookDelivery) -> None:
        """Append a try (nothing if the endpoint is gone)."""
        require_aware(delivery.attempted_at)
        if delivery.webhook_id in self._s.view.webhooks:
            self._s.write("webhook_deliveries")[delivery.id] = delivery

    async def deliveries(
        self, webhook_id: str, before: str | None, limit: int
    ) -> list[WebhookDelivery]:
        """Up to ``limit`` tries before ``before``, newest first."""
        rows = sorted(self._s.view.webhook_deliveries.values(), key=lambda d: d.id, reverse=True)
        return [
            d for d in rows if d.webhook_id == webhook_id and (before is None or d.id < before)
        ][:limit]

    async def purge_deliveries_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) tries attempted before ``cutoff``; returns how many."""
        require_aware(cutoff)
        return self._s.purge("webhook_deliveries", lambda d: d.attempted_at < cutoff, limit)
