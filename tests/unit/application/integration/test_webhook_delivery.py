"""Webhook delivery through the outbox worker, over memory storage and a fake clock
(docs/reference/webhooks.md): the audit writer queues one item per subscribed enabled endpoint
in the change's unit; a try is signed (verified with ``standardwebhooks``) with the item's id as
``webhook-id`` on every try; retries follow ``webhooks.retry_schedule`` within 24 h; an
endpoint failing for ``webhooks.disable_after`` is disabled and audited once; the guarded
sender is used unless private targets are allowed; the secret never reaches the audit rows."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from standardwebhooks.webhooks import Webhook as Verifier

from adapters.crypto.sealer import AesGcmSealer
from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from adapters.webhook_signer import StandardWebhookSigner
from application.events.audit import record
from application.events.catalog import GroupCreated
from application.integration.delivery import WebhookDeliveryHandler
from application.integration.manage import CreateWebhook
from application.integration.settings import WebhooksSettings
from application.shared.outbox import DeliverOutbox
from application.shared.settings import Live
from domain.audit import AuditQuery
from domain.model import Role
from domain.outbox import OutboxKind
from domain.policy import Principal
from tests.fakes import FakeClock

ADMIN = Principal("admin", Role.ORG_ADMIN, "org-a")


@attrs.define
class FakeSender:
    """Answers ``statuses`` in turn, then 200; records each POST."""

    statuses: list[int] = attrs.Factory(list)
    posts: list[tuple[str, bytes, dict[str, str]]] = attrs.Factory(list)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        self.posts.append((url, body, dict(headers)))
        return self.statuses.pop(0) if self.statuses else 200


@attrs.define
class World:
    storage: MemoryStorage
    clock: FakeClock
    public: FakeSender
    private: FakeSender
    settings: Live[WebhooksSettings]
    deliver: DeliverOutbox
    create: CreateWebhook

    async def event(self, org: str = "org-a") -> None:
        async with self.storage.begin() as uow:
            await record(uow, [GroupCreated("g1", org, "admin")], self.clock.now())
            await uow.commit()

    async def pending(self) -> int:
        async with self.storage.read() as uow:
            return await uow.outbox.count()

    async def audit(self, kind: str) -> list[Any]:
        async with self.storage.read() as uow:
            return await uow.audit.list_page(AuditQuery(type=kind), None, 10)


@pytest.fixture
def world() -> World:
    storage, clock, bus = MemoryStorage(), FakeClock(datetime.now(UTC)), InProcessEventBus()
    sealer = AesGcmSealer(os.urandom(32))
    settings = Live(WebhooksSettings(retry_schedule=(5, 60), disable_after=3600))
    public, private = FakeSender(), FakeSender()
    handler = WebhookDeliveryHandler(storage, sealer, StandardWebhookSigner(), public, private,
                                     clock, settings)  # fmt: skip
    deliver = DeliverOutbox(storage, bus, clock, {OutboxKind.WEBHOOK: handler})
    create = CreateWebhook(storage, bus, clock, sealer, settings)
    return World(storage, clock, public, private, settings, deliver, create)


async def test_an_event_is_queued_with_its_change_and_delivered_signed(world: World) -> None:
    await world.event()  # no endpoint yet: nothing queued
    assert await world.pending() == 0
    made = await world.create(ADMIN, "https://hooks.example.com/h", ["group.created"])
    other = await world.create(ADMIN, "https://hooks.example.com/other", ["user.deleted"])
    assert other.webhook.id != made.webhook.id
    await world.event("org-b")  # another organization: not queued
    async with world.storage.begin() as uow:  # a unit rolled back queues nothing
        await record(uow, [GroupCreated("g9", "org-a", "admin")], world.clock.now())
    assert await world.pending() == 0
    await world.event()
    assert await world.pending() == 1
    assert await world.deliver() == 1
    [(url, body, headers)] = world.public.posts
    assert url == "https://hooks.example.com/h" and world.private.posts == []
    message = Verifier(made.secret).verify(body, headers)
    assert message["type"] == "group.created"
    assert message["data"]["details"] == {"group_id": "g1"}
    assert await world.pending() == 0
    for row in await world.audit("webhook.created"):
        assert made.secret not in repr(row)


async def test_retries_follow_the_schedule_with_one_id_then_stop_after_a_day(
    world: World,
) -> None:
    made = await world.create(ADMIN, "https://hooks.example.com/h", ["group.created"])
    world.settings.replace(attrs.evolve(world.settings.current, disable_after=30 * 86_400))
    world.public.statuses = [503] * 1000
    await world.event()
    start = world.clock.now()
    assert await world.deliver() == 1
    world.clock.advance(4)
    assert await world.deliver() == 0  # not before the first wait (5 s)
    world.clock.advance(1)
    assert await world.deliver() == 1
    for _ in range(40):  # then every 60 s until 24 h after the event
        world.clock.advance(60)
        await world.deliver()
    ids = {h["webhook-id"] for _, _, h in world.public.posts}
    assert len(ids) == 1 and len(world.public.posts) == 42
    world.clock.advance(86_400)
    await world.deliver()
    assert await world.pending() == 0  # given up after the 24 h window
    assert world.clock.now() - start > timedelta(days=1)
    async with world.storage.read() as uow:
        log = await uow.webhooks.deliveries(made.webhook.id, None, 100)
    assert len(log) == 43 and {d.status_code for d in log} == {503}


async def test_a_failing_endpoint_is_disabled_and_audited_once(world: World) -> None:
    made = await world.create(ADMIN, "https://hooks.example.com/h", ["group.created"])
    world.public.statuses = [500] * 1000
    await world.event()
    await world.event()
    await world.deliver()
    for _ in range(70):
        world.clock.advance(60)
        await world.deliver()
    [row] = await world.audit("webhook.disabled")
    assert row.details_dict() == {"webhook_id": made.webhook.id, "reason": "failing"}
    async with world.storage.read() as uow:
        hook = await uow.webhooks.get(made.webhook.id)
    assert hook is not None and not hook.enabled and hook.disabled_reason == "failing"
    assert await world.pending() == 0
    await world.event()  # a disabled endpoint gets nothing new
    assert await world.pending() == 0


async def test_private_targets_go_through_the_unguarded_sender_only_when_allowed(
    world: World,
) -> None:
    world.settings.replace(attrs.evolve(world.settings.current, allow_private_targets=True))
    await world.create(ADMIN, "http://127.0.0.1:9/h", ["group.created"])
    await world.event()
    await world.deliver()
    assert len(world.private.posts) == 1 and world.public.posts == []
    world.settings.replace(attrs.evolve(world.settings.current, allow_private_targets=False))
    await world.event()
    await world.deliver()
    assert len(world.public.posts) == 1  # the guard of the public sender decides
