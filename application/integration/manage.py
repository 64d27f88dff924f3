"""Webhook endpoints, the administrators' side (docs/reference/webhooks.md): create, list,
show, change, delete, rotate the signing secret, list the delivery attempts, send a test.

Access is decided by ``domain.policy`` (org_admin: its organization; superadmin: any; others
``Forbidden``; another organization's endpoint ``NotFound``). Every change runs in one unit of
work with its audit row. The signing secret (``whsec_`` + 32 random bytes, base64) is returned
once, by create and rotate; it is stored sealed (``SecretSealer``, the endpoint id as context)
and never logged, audited or rendered again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from application.events.audit import record
from application.events.catalog import Event
from application.events.fanout import rfc3339, webhook_item
from application.events.webhooks import (
    WebhookCreated,
    WebhookDeleted,
    WebhookSecretRotated,
    WebhookUpdated,
)
from application.integration.settings import WebhooksSettings
from application.ports import Clock, EventBus, SecretSealer, Storage, UnitOfWork
from application.shared.checks import check_org_id, invalid
from application.shared.pagination import Listing, Page, check_limit, decode_cursor, page_of
from application.shared.settings import Live
from application.shared.steps import IdFactory, new_id, publish_all
from domain import policy
from domain.errors import NotFound
from domain.policy import Actor, Operation
from domain.webhooks import (
    MAX_DESCRIPTION_LENGTH,
    TEST_EVENT_TYPE,
    Webhook,
    WebhookDelivery,
    check_event_types,
    check_webhook_url,
    new_webhook_secret,
)

__all__ = [
    "CreateWebhook",
    "DeleteWebhook",
    "GetWebhook",
    "ListWebhookDeliveries",
    "ListWebhooks",
    "RotateWebhookSecret",
    "TestWebhook",
    "UpdateWebhook",
    "WithSecret",
]

_NOT_FOUND = "webhook not found"
PATCHABLE = ("url", "event_types", "description", "enabled")
"""The fields ``PATCH /webhooks/{id}`` may change."""


@attrs.frozen
class WithSecret:
    """An endpoint with its signing secret in clear: the answer of create and rotate, once."""

    webhook: Webhook
    secret: str = attrs.field(repr=False)


def _description(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_DESCRIPTION_LENGTH:
        raise invalid("description", f"must be text of at most {MAX_DESCRIPTION_LENGTH} characters")
    return value


def _enabled(value: object) -> bool:
    if not isinstance(value, bool):
        raise invalid("enabled", "must be true or false")
    return value


def _seal(sealer: SecretSealer, webhook_id: str, secret: str) -> bytes:
    return sealer.seal(secret.encode("ascii"), webhook_id.encode())


async def _in_scope(uow: UnitOfWork, actor: Actor, webhook_id: str, op: Operation) -> Webhook:
    """The endpoint after ``policy.check_webhook_access``; ``NotFound`` when missing."""
    found = await uow.webhooks.get(webhook_id)
    if found is None:
        raise NotFound(_NOT_FOUND)
    policy.check_webhook_access(actor, found, op)
    return found


@attrs.frozen
class CreateWebhook:
    """POST /webhooks ``{"url", "event_types", "description"?, "enabled"?, "org_id"?}``.

    In order: below org_admin → ``Forbidden``; a bad value → ``ValidationFailed`` naming it
    (``url``: https and not on a private network unless ``webhooks.allow_private_targets``;
    ``event_types``: audit types); an org_admin naming another organization → ``NotFound``.
    Records ``webhook.created``; returns the endpoint with its new secret (``WithSecret``)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _sealer: SecretSealer
    _settings: Live[WebhooksSettings]
    _ids: IdFactory = new_id

    async def __call__(
        self, actor: Actor, url: object, event_types: object, description: object = None,
        enabled: object = True, org_id: str | None = None,
    ) -> WithSecret:  # fmt: skip
        """Add an endpoint to ``org_id`` (default: the actor's)."""
        policy.require(actor, Operation.CREATE_WEBHOOK)
        allow = self._settings.current.allow_private_targets
        checked_url = check_webhook_url(url, allow_private=allow)
        types = check_event_types(event_types)
        text, on = _description(description), _enabled(enabled)
        org = policy.webhook_org(actor, None if org_id is None else check_org_id(org_id))
        now = self._clock.now()
        hook_id, secret = self._ids(), new_webhook_secret()
        hook = Webhook(hook_id, org, checked_url, types, text, on,
                       _seal(self._sealer, hook_id, secret), now, now)  # fmt: skip
        created = WebhookCreated(hook_id, org, actor.actor_id)
        async with self._storage.begin() as uow:
            await uow.webhooks.add(hook)
            await record(uow, [created], now)
            await uow.commit()
        await self._bus.publish(created)
        return WithSecret(hook, secret)


class _WebhookListing(Listing[Webhook]):
    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, "webhooks", Operation.LIST_WEBHOOKS, lambda uow: uow.webhooks,
                         lambda w: w.id)  # fmt: skip


@attrs.frozen
class ListWebhooks:
    """GET /webhooks ``?limit&cursor&org_id``: org_admin (its organization; another →
    ``NotFound``), superadmin (every organization, or ``org_id``); keyset pages by id."""

    _storage: Storage

    async def __call__(
        self, actor: Actor, *, limit: int | None = None, cursor: str | None = None,
        org_id: str | None = None,
    ) -> Page[Webhook]:  # fmt: skip
        """One page of the endpoints ``actor`` may see."""
        listing = _WebhookListing(self._storage)
        return await listing(actor, limit=limit, cursor=cursor, org_id=org_id)


@attrs.frozen
class GetWebhook:
    """GET /webhooks/{id}: ``Forbidden`` below org_admin, ``NotFound`` when missing or of
    another organization (org_admin)."""

    _storage: Storage

    async def __call__(self, actor: Actor, webhook_id: str) -> Webhook:
        """The endpoint."""
        policy.require(actor, Operation.VIEW_WEBHOOK)
        async with self._storage.read() as uow:
            return await _in_scope(uow, actor, webhook_id, Operation.VIEW_WEBHOOK)


@attrs.frozen
class UpdateWebhook:
    """PATCH /webhooks/{id} with any of ``url``, ``event_types``, ``description``,
    ``enabled`` (checked as at create; other members ignored; none of them → ``ValidationFailed``
    after the access checks). Enabling an endpoint clears its failing state. Access
    as ``GetWebhook``; records ``webhook.updated`` with the changed fields' names."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _settings: Live[WebhooksSettings]

    async def __call__(self, actor: Actor, webhook_id: str, changes: Mapping[str, Any]) -> Webhook:
        """Apply ``changes`` (a subset of ``PATCHABLE``)."""
        policy.require(actor, Operation.UPDATE_WEBHOOK)
        allow = self._settings.current.allow_private_targets
        values: dict[str, Any] = {}
        if "url" in changes:
            values["url"] = check_webhook_url(changes["url"], allow_private=allow)
        if "event_types" in changes:
            values["event_types"] = check_event_types(changes["event_types"])
        if "description" in changes:
            values["description"] = _description(changes["description"])
        if "enabled" in changes:
            values["enabled"] = _enabled(changes["enabled"])
        now = self._clock.now()
        events: list[Event] = []
        async with self._storage.begin() as uow:
            found = await _in_scope(uow, actor, webhook_id, Operation.UPDATE_WEBHOOK)
            if not any(k in changes for k in PATCHABLE):
                raise invalid("body", f"must change one of {', '.join(PATCHABLE)}")
            changed = sorted(k for k, v in values.items() if getattr(found, k) != v)
            if not changed:
                return found
            if values.get("enabled") is True:
                values |= {"failing_since": None, "disabled_reason": None}
            updated = attrs.evolve(found, updated_at=now, **values)
            await uow.webhooks.update(updated)
            events.append(WebhookUpdated(found.id, found.org_id, actor.actor_id, ",".join(changed)))
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return updated


@attrs.frozen
class DeleteWebhook:
    """DELETE /webhooks/{id}: the endpoint and its deliveries go; messages still queued for it
    are dropped at their next try. Access as ``GetWebhook``; records ``webhook.deleted``."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, webhook_id: str) -> None:
        """Delete ``webhook_id``."""
        policy.require(actor, Operation.DELETE_WEBHOOK)
        now = self._clock.now()
        async with self._storage.begin() as uow:
            found = await _in_scope(uow, actor, webhook_id, Operation.DELETE_WEBHOOK)
            await uow.webhooks.delete(found.id)
            deleted = WebhookDeleted(found.id, found.org_id, actor.actor_id)
            await record(uow, [deleted], now)
            await uow.commit()
        await self._bus.publish(deleted)


@attrs.frozen
class RotateWebhookSecret:
    """POST /webhooks/{id}/secret: a new signing secret, returned once; the old one signs no
    more (messages still queued are signed with the new one at their next try). Access as
    ``GetWebhook``; records ``webhook.secret_rotated`` (without either secret)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _sealer: SecretSealer

    async def __call__(self, actor: Actor, webhook_id: str) -> WithSecret:
        """Rotate the secret of ``webhook_id``."""
        policy.require(actor, Operation.ROTATE_WEBHOOK_SECRET)
        now, secret = self._clock.now(), new_webhook_secret()
        async with self._storage.begin() as uow:
            found = await _in_scope(uow, actor, webhook_id, Operation.ROTATE_WEBHOOK_SECRET)
            sealed = _seal(self._sealer, found.id, secret)
            rotated = attrs.evolve(found, sealed_secret=sealed, updated_at=now)
            await uow.webhooks.update(rotated)
            event = WebhookSecretRotated(found.id, found.org_id, actor.actor_id)
            await record(uow, [event], now)
            await uow.commit()
        await self._bus.publish(event)
        return WithSecret(rotated, secret)


@attrs.frozen
class ListWebhookDeliveries:
    """GET /webhooks/{id}/deliveries ``?limit&cursor``: the endpoint's tries, newest first
    (status code, time, error). Access as ``GetWebhook``."""

    _storage: Storage

    async def __call__(
        self, actor: Actor, webhook_id: str, *, limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[WebhookDelivery]:  # fmt: skip
        """One page of the tries."""
        policy.require(actor, Operation.VIEW_WEBHOOK)
        size = check_limit(limit)
        before = None if cursor is None else decode_cursor("webhook_deliveries", cursor)
        async with self._storage.read() as uow:
            found = await _in_scope(uow, actor, webhook_id, Operation.VIEW_WEBHOOK)
            rows = await uow.webhooks.deliveries(found.id, before, size + 1)
        return page_of(rows, size, "webhook_deliveries", lambda d: d.id)


@attrs.frozen
class TestWebhook:
    """POST /webhooks/{id}/test: queue a ``webhook.test`` message to the endpoint (through the
    outbox, signed and retried as any other, sent to a disabled endpoint too); returns its
    ``webhook-id``. Access as ``GetWebhook``."""

    _storage: Storage
    _clock: Clock

    async def __call__(self, actor: Actor, webhook_id: str) -> str:
        """Queue the test message."""
        policy.require(actor, Operation.TEST_WEBHOOK)
        now = self._clock.now()
        async with self._storage.begin() as uow:
            found = await _in_scope(uow, actor, webhook_id, Operation.TEST_WEBHOOK)
            data = {"webhook_id": found.id, "org_id": found.org_id, "sent_at": rfc3339(now)}
            item = webhook_item(found, TEST_EVENT_TYPE, data, now)
            await uow.outbox.add(item)
            await uow.commit()
        return item.id
