"""Events of the webhook endpoints (docs/reference/webhooks.md). Ids, URLs' absence and
reasons only: never the signing secret."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = [
    "WebhookCreated",
    "WebhookDeleted",
    "WebhookDisabled",
    "WebhookSecretRotated",
    "WebhookUpdated",
]


@attrs.frozen
class WebhookCreated(Event):
    """``actor_id`` added endpoint ``webhook_id`` to ``org_id`` (``webhook.created``)."""

    webhook_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class WebhookUpdated(Event):
    """``actor_id`` changed ``fields`` (comma-separated names) of the endpoint
    (``webhook.updated``)."""

    webhook_id: str
    org_id: str
    actor_id: str
    fields: str


@attrs.frozen
class WebhookDeleted(Event):
    """``actor_id`` deleted the endpoint (``webhook.deleted``)."""

    webhook_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class WebhookSecretRotated(Event):
    """``actor_id`` gave the endpoint a new signing secret; the old one signs no more
    (``webhook.secret_rotated``)."""

    webhook_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class WebhookDisabled(Event):
    """The endpoint was disabled by the server for ``reason`` (``failing``: its deliveries
    failed for ``webhooks.disable_after`` seconds) (``webhook.disabled``)."""

    webhook_id: str
    org_id: str
    reason: str
