"""Webhook delivery (docs/reference/webhooks.md; the Standard Webhooks specification): the
``OutboxHandler`` of ``webhook`` items. The items are queued by the audit writer's fan-out
(``application.events.fanout``) and by ``TestWebhook``; ``application.shared.outbox
.DeliverOutbox`` claims them and calls ``WebhookDeliveryHandler``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime

import attrs

from application.events.catalog import Event
from application.events.webhooks import WebhookDisabled
from application.integration.settings import WebhooksSettings
from application.ports import (
    Clock,
    DeliveryFailed,
    HttpSender,
    SealedSecretError,
    SecretSealer,
    Storage,
    WebhookSigner,
)
from application.shared.outbox import Outcome
from application.shared.settings import Live
from domain.audit import new_audit_id
from domain.outbox import OutboxItem, next_try_at, schedule_delay
from domain.webhooks import RETRY_WINDOW, TEST_EVENT_TYPE, Webhook, WebhookDelivery, should_disable

__all__ = ["WebhookDeliveryHandler", "message_body"]

_log = logging.getLogger("authsvc.webhooks")


def message_body(item: OutboxItem) -> str:
    """The JSON body of ``item``'s message: ``{"type", "timestamp", "data"}`` — ``timestamp``
    the time of the event (RFC 3339), ``data`` the audit event (or the test's data)."""
    return json.dumps(
        {
            "type": item.payload["type"],
            "timestamp": item.created_at.isoformat().replace("+00:00", "Z"),
            "data": json.loads(item.payload["event"]),
        },
        separators=(",", ":"),
    )


@attrs.frozen
class WebhookDeliveryHandler:
    """Delivers ``webhook`` items (payload ``webhook_id``, ``type``, ``event``).

    A try unseals the endpoint's secret, signs the body with ``webhook-id`` = the item id (the
    same across retries), ``webhook-timestamp`` = now (Unix seconds) and ``webhook-signature``
    (``v1,...``), and POSTs it — through the sender with the server-side request forgery guard
    unless ``webhooks.allow_private_targets``. A 2xx answer is delivered; any other answer or
    no answer is logged in the endpoint's deliveries and retried by
    ``webhooks.retry_schedule`` within 24 h of the event. An endpoint whose tries have all
    failed for ``webhooks.disable_after`` seconds is disabled (``WebhookDisabled``). An
    endpoint deleted or disabled by then is given up at once (a test message goes to a
    disabled endpoint too)."""

    _storage: Storage
    _sealer: SecretSealer
    _signer: WebhookSigner
    _public_sender: HttpSender
    _private_sender: HttpSender
    _clock: Clock
    _settings: Live[WebhooksSettings]

    async def deliver(self, item: OutboxItem) -> Outcome:
        """One try of ``item``."""
        kind = item.payload["type"]
        async with self._storage.read() as uow:
            hook = await uow.webhooks.get(item.payload["webhook_id"])
        if hook is None or not (hook.enabled or kind == TEST_EVENT_TYPE):
            return Outcome(False, "webhook_gone", final=True)
        try:
            secret = self._sealer.unseal(hook.sealed_secret, hook.id.encode()).decode()
        except SealedSecretError:
            _log.error("webhook %s: its secret does not open (the sealing key changed)", hook.id)
            return Outcome(False, "secret_unavailable")
        settings = self._settings.current
        now = self._clock.now()
        body = message_body(item)
        headers = {
            "Content-Type": "application/json",
            "webhook-id": item.id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": self._signer.sign(secret, item.id, now, body),
        }
        sender = self._private_sender if settings.allow_private_targets else self._public_sender
        status: int | None = None
        try:
            status = await sender.post(hook.url, body.encode(), headers)
            error = None if 200 <= status < 300 else f"status {status}"
        except DeliveryFailed as exc:
            error = str(exc)
        disabled = await self._log_try(hook, item, now, status, error, settings)
        if error is None:
            return Outcome(True)
        if disabled:
            return Outcome(False, error, final=True,
                           events=(WebhookDisabled(hook.id, hook.org_id, "failing"),))  # fmt: skip
        return Outcome(False, error)

    async def _log_try(
        self, hook: Webhook, item: OutboxItem, now: datetime, status: int | None,
        error: str | None, settings: WebhooksSettings,
    ) -> bool:  # fmt: skip
        """Write the try to the endpoint's log and its failing state; True when this try
        disabled it."""
        attempt = WebhookDelivery(new_audit_id(now), hook.id, item.id, item.payload["type"],
                                  item.attempts + 1, now, status, error)  # fmt: skip
        async with self._storage.begin() as uow:
            await uow.webhooks.record_delivery(attempt)
            disabled = False
            if error is None:
                if hook.failing_since is not None:
                    await uow.webhooks.set_failing(hook.id, None)
            else:
                if hook.failing_since is None:
                    await uow.webhooks.set_failing(hook.id, now)
                elif should_disable(hook.failing_since, now, settings.disable_after):
                    disabled = await uow.webhooks.disable(hook.id, "failing", now)
            await uow.commit()
        return disabled

    def retry_at(self, item: OutboxItem, failed_at: datetime, attempts: int) -> datetime | None:
        """``failed_at`` + the ``attempts``-th wait of ``webhooks.retry_schedule``, unless past
        24 h after the event."""
        delay = schedule_delay(self._settings.current.retry_schedule, attempts)
        return next_try_at(item.created_at, failed_at, delay, RETRY_WINDOW)

    def given_up(self, item: OutboxItem, reason: str) -> Sequence[Event]:
        """Nothing more to record: each try is in the endpoint's deliveries, and disabling an
        endpoint is recorded when it happens."""
        return ()
