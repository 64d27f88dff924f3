"""Contract of the WebhookRepo port (docs/reference/webhooks.md) over every storage adapter:
round trip (the sealed secret's bytes included), paging by organization, the fan-out's query
(enabled endpoints of an organization or of a user's), the failing state and disabling once,
the delivery log (newest first, dropped with its endpoint), its retention purge (bounded,
oldest tries only, of every endpoint; on SQLite its batch seeks the ``attempted_at`` index of
migration 0028), and a unit left without commit storing nothing."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import attrs
import pytest

from adapters.persistence.migrate import apply_sqlite_migrations
from adapters.persistence.sql import webhooks as webhook_sql
from adapters.persistence.sql.purge import bounded_delete
from application.ports import Storage
from domain.errors import Conflict
from domain.webhooks import Webhook, WebhookDelivery
from tests.factories import T0, Make


def _hook(id_: str, org_id: str = "org-a", enabled: bool = True) -> Webhook:
    return Webhook(id_, org_id, f"https://hooks.example.com/{id_}", ("group.created",),
                   "desc", enabled, b"\x00sealed\xff" + id_.encode(), T0, T0)  # fmt: skip


def _try(n: int, hook: str, status: int | None = 200) -> WebhookDelivery:
    error = None if status == 200 else "status 503"
    return WebhookDelivery(f"d{n:03d}", hook, f"msg-{n}", "group.created", 1,
                           T0 + timedelta(seconds=n), status, error)  # fmt: skip


async def _add(storage: Storage, *hooks: Webhook) -> None:
    async with storage.begin() as uow:
        for hook in hooks:
            await uow.webhooks.add(hook)
        await uow.commit()


async def test_add_get_round_trip_and_a_duplicate_id_conflicts(storage: Storage) -> None:
    hook = attrs.evolve(_hook("w1"), event_types=("user.deleted", "group.created"))
    await _add(storage, hook)
    async with storage.read() as uow:
        assert await uow.webhooks.get("w1") == hook
        assert await uow.webhooks.get("missing") is None
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.webhooks.add(hook)


async def test_a_unit_left_without_commit_stores_nothing(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.webhooks.add(_hook("w1"))
    async with storage.read() as uow:
        assert await uow.webhooks.get("w1") is None


async def test_list_page_by_organization_and_keyset(storage: Storage) -> None:
    await _add(storage, _hook("w1"), _hook("w2", "org-b"), _hook("w3"), _hook("w4"))
    async with storage.read() as uow:
        assert [w.id for w in await uow.webhooks.list_page("org-a", None, 2)] == ["w1", "w3"]
        assert [w.id for w in await uow.webhooks.list_page("org-a", "w3", 5)] == ["w4"]
        assert [w.id for w in await uow.webhooks.list_page(None, None, 10)] == [
            "w1", "w2", "w3", "w4",
        ]  # fmt: skip


async def test_update_keeps_org_and_creation_and_delete_drops_the_log(storage: Storage) -> None:
    await _add(storage, _hook("w1"))
    later = T0 + timedelta(hours=1)
    changed = attrs.evolve(_hook("w1"), url="https://x.example.com/", enabled=False,
                           sealed_secret=b"new", updated_at=later, disabled_reason="failing",
                           failing_since=later)  # fmt: skip
    async with storage.begin() as uow:
        assert await uow.webhooks.update(changed)
        assert not await uow.webhooks.update(_hook("missing"))
        await uow.webhooks.record_delivery(_try(1, "w1"))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.webhooks.get("w1") == changed
        assert await uow.webhooks.delete("w1")
        assert not await uow.webhooks.delete("w1")
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.webhooks.deliveries("w1", None, 10) == []


async def test_enabled_for_an_organization_or_a_users(storage: Storage, make: Make) -> None:
    user = make.user(org_id="org-b")
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    await _add(storage, _hook("w1"), _hook("w2", "org-b"), _hook("w3", "org-b", enabled=False))
    async with storage.read() as uow:
        assert [w.id for w in await uow.webhooks.enabled_for("org-a", None)] == ["w1"]
        assert [w.id for w in await uow.webhooks.enabled_for(None, user.id)] == ["w2"]
        assert [w.id for w in await uow.webhooks.enabled_for("org-b", "ignored")] == ["w2"]
        assert await uow.webhooks.enabled_for(None, "no-such-user") == []
        assert await uow.webhooks.enabled_for(None, None) == []


async def test_failing_state_and_disable_happen_once(storage: Storage) -> None:
    await _add(storage, _hook("w1"))
    at = T0 + timedelta(minutes=5)
    async with storage.begin() as uow:
        await uow.webhooks.set_failing("w1", at)
        await uow.commit()
    async with storage.begin() as uow:
        assert (await uow.webhooks.get("w1")).failing_since == at  # type: ignore[union-attr]
        assert await uow.webhooks.disable("w1", "failing", at)
        assert not await uow.webhooks.disable("w1", "failing", at)
        assert not await uow.webhooks.disable("missing", "failing", at)
        await uow.commit()
    async with storage.read() as uow:
        hook = await uow.webhooks.get("w1")
        assert hook is not None
        assert (hook.enabled, hook.disabled_reason, hook.updated_at) == (False, "failing", at)
        assert await uow.webhooks.enabled_for("org-a", None) == []


async def test_the_delivery_log_pages_newest_first(storage: Storage) -> None:
    await _add(storage, _hook("w1"), _hook("w2"))
    async with storage.begin() as uow:
        for n in range(1, 5):
            await uow.webhooks.record_delivery(_try(n, "w1", 200 if n % 2 else 503))
        await uow.webhooks.record_delivery(_try(9, "w2", None))
        await uow.webhooks.record_delivery(_try(10, "gone"))  # no endpoint: not logged
        await uow.commit()
    async with storage.read() as uow:
        first = await uow.webhooks.deliveries("w1", None, 3)
        assert [d.id for d in first] == ["d004", "d003", "d002"]
        assert first[0] == _try(4, "w1", 503)
        assert [d.id for d in await uow.webhooks.deliveries("w1", "d002", 3)] == ["d001"]
        assert await uow.webhooks.deliveries("w2", None, 3) == [_try(9, "w2", None)]
        assert await uow.webhooks.deliveries("gone", None, 3) == []


async def test_the_delivery_purge_takes_older_tries_of_every_endpoint_in_bounded_batches(
    storage: Storage,
) -> None:
    await _add(storage, _hook("w1"), _hook("w2", "org-b"))
    async with storage.begin() as uow:
        for n in range(1, 7):  # tries at T0 + 1 s ... T0 + 6 s, alternating endpoints
            await uow.webhooks.record_delivery(_try(n, "w1" if n % 2 else "w2"))
        await uow.commit()
    cutoff = T0 + timedelta(seconds=5)  # tries 1..4 are older; 5 (at the cutoff) and 6 stay
    counts = []
    for _ in range(3):
        async with storage.begin() as uow:
            counts.append(await uow.webhooks.purge_deliveries_before(cutoff, 3))
            await uow.commit()
    assert counts == [3, 1, 0]
    async with storage.read() as uow:
        assert [d.id for d in await uow.webhooks.deliveries("w1", None, 10)] == ["d005"]
        assert [d.id for d in await uow.webhooks.deliveries("w2", None, 10)] == ["d006"]
        assert await uow.webhooks.get("w1") is not None  # the endpoints stay
        assert await uow.webhooks.get("w2") is not None


async def test_the_delivery_purge_without_a_limit_takes_all_older_tries(storage: Storage) -> None:
    await _add(storage, _hook("w1"))
    async with storage.begin() as uow:
        for n in range(1, 5):
            await uow.webhooks.record_delivery(_try(n, "w1"))
        assert await uow.webhooks.purge_deliveries_before(T0 + timedelta(seconds=4)) == 3
        await uow.commit()
    async with storage.read() as uow:
        assert [d.id for d in await uow.webhooks.deliveries("w1", None, 10)] == ["d004"]


def test_the_delivery_purge_seeks_the_attempted_at_index_on_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "plan.db"
    apply_sqlite_migrations(str(db))
    statement = bounded_delete("sqlite", "webhook_deliveries", webhook_sql.ATTEMPTED_BEFORE, 5000)
    with sqlite3.connect(db) as conn:
        plan = " ".join(str(row[-1]) for row in conn.execute(
            "EXPLAIN QUERY PLAN " + statement.replace("$1", "?"), (0,)))  # fmt: skip
    assert "webhook_deliveries_attempted_idx" in plan, plan
