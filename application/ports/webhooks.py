"""The port of the webhook endpoints (docs/reference/webhooks.md): ``WebhookRepo``, inside one
unit of work. See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from domain.webhooks import Webhook, WebhookDelivery


class WebhookRepo(Protocol):
    """Webhook endpoints keyed by id, and the log of their delivery attempts (deleted with
    the endpoint)."""

    async def add(self, webhook: Webhook) -> None:
        """Store a new endpoint. Raises ``Conflict`` when its id exists."""
        ...

    async def get(self, webhook_id: str) -> Webhook | None:
        """The endpoint ``webhook_id``, or None."""
        ...

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Webhook]:
        """Up to ``limit`` endpoints with ``id > after`` (all if None) of ``org_id`` (None:
        every organization), ordered by id."""
        ...

    async def update(self, webhook: Webhook) -> bool:
        """Replace the stored endpoint of ``webhook.id`` (every field but ``id``, ``org_id``
        and ``created_at``); whether it existed."""
        ...

    async def delete(self, webhook_id: str) -> bool:
        """Delete the endpoint and its delivery log; whether it existed."""
        ...

    async def enabled_for(self, org_id: str | None, user_id: str | None) -> list[Webhook]:
        """In one query: the enabled endpoints of ``org_id`` — when None, of the organization
        of user ``user_id`` (none when both are None or the user is unknown). The audit
        writer's fan-out (``application.integration.fanout``)."""
        ...

    async def set_failing(self, webhook_id: str, failing_since: datetime | None) -> None:
        """Set ``failing_since`` (None: delivering again) of the endpoint, if it exists."""
        ...

    async def disable(self, webhook_id: str, reason: str, now: datetime) -> bool:
        """Disable an enabled endpoint for ``reason`` at ``now``; whether it was enabled (False:
        gone or disabled already, so only one caller audits it)."""
        ...

    async def record_delivery(self, delivery: WebhookDelivery) -> None:
        """Append a try to the endpoint's log (nothing if the endpoint is gone)."""
        ...

    async def deliveries(
        self, webhook_id: str, before: str | None, limit: int
    ) -> list[WebhookDelivery]:
        """Up to ``limit`` tries of the endpoint with ``id < before`` (all if None), newest
        first (ids are time-ordered)."""
        ...

    async def purge_deliveries_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete up to ``limit`` (all with None) tries, of any endpoint, attempted before
        ``cutoff`` (timezone-aware); returns how many went. Housekeeping's retention of the
        delivery log (``webhooks.delivery_retention``, docs/reference/webhooks.md)."""
        ...


class WebhookSigner(Protocol):
    """Signs a webhook message (the Standard Webhooks specification: HMAC-SHA256 over
    ``{msg_id}.{timestamp}.{body}`` with the key of a ``whsec_`` secret)."""

    def sign(self, secret: str, message_id: str, timestamp: datetime, body: str) -> str:
        """The ``webhook-signature`` header's value (``v1,<base64>``) of ``body`` sent as
        ``message_id`` at ``timestamp`` (timezone-aware; Unix seconds are signed). Raises
        ``ValueError`` for a secret that is not ``whsec_`` + base64."""
        ...
