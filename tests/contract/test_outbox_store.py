"""Contract of the OutboxStore port (docs/adr/0049-durable-outbox.md) over every storage adapter:
items commit with their unit or not at all; a claim takes due, free items for a lease; two
claimers (one store, or two connected to one database) never get the same item; a lapsed lease
frees the item; ``retry`` schedules the next try and ``finish`` deletes, both only for the
claim's holder."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from application.ports import Storage
from domain.errors import Conflict
from domain.outbox import OutboxItem, OutboxKind
from tests.factories import T0, StorageFactory

LEASE = timedelta(seconds=30)


def _item(n: int, due: int = 0, kind: OutboxKind = OutboxKind.BACKCHANNEL_LOGOUT) -> OutboxItem:
    return OutboxItem(
        f"item-{n:03d}", kind, {"client_id": f"c{n}", "sid": "s"}, T0, T0 + timedelta(seconds=due)
    )


async def _add(storage: Storage, *items: OutboxItem) -> None:
    async with storage.begin() as uow:
        for item in items:
            await uow.outbox.add(item)
        await uow.commit()


async def _claim(storage: Storage, claim: str, at: int = 0, limit: int = 10) -> list[OutboxItem]:
    now = T0 + timedelta(seconds=at)
    async with storage.begin() as uow:
        taken = await uow.outbox.claim(now, now + LEASE, claim, limit)
        await uow.commit()
    return taken


async def test_add_round_trips_and_refuses_a_duplicate_id(storage: Storage) -> None:
    item = _item(1, kind=OutboxKind.WEBHOOK)
    await _add(storage, item)
    async with storage.read() as uow:
        assert await uow.outbox.get(item.id) == item
        assert await uow.outbox.count() == 1
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.outbox.add(item)


async def test_an_item_of_a_unit_left_without_commit_is_not_stored(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.outbox.add(_item(1))
    async with storage.read() as uow:
        assert await uow.outbox.count() == 0


async def test_claim_takes_due_items_oldest_first_up_to_the_limit(storage: Storage) -> None:
    await _add(storage, _item(1, due=5), _item(2, due=0), _item(3, due=60), _item(4, due=1))
    taken = await _claim(storage, "w1", at=10, limit=2)
    assert [i.id for i in taken] == ["item-002", "item-004"]
    assert all(i.claim == "w1" and i.claimed_until == T0 + timedelta(seconds=10) + LEASE
               for i in taken)  # fmt: skip
    rest = await _claim(storage, "w2", at=10)
    assert [i.id for i in rest] == ["item-001"]  # item-003 is not due yet
    with pytest.raises(ValueError, match="limit"):
        await _claim(storage, "w3", limit=0)


async def test_a_claimed_item_is_not_claimed_again_until_its_lease_lapses(
    storage: Storage,
) -> None:
    await _add(storage, _item(1))
    assert [i.id for i in await _claim(storage, "w1")] == ["item-001"]
    assert await _claim(storage, "w2", at=29) == []
    again = await _claim(storage, "w2", at=30)  # the lease of w1 ended at T0 + 30 s
    assert [(i.id, i.claim) for i in again] == [("item-001", "w2")]
    async with storage.begin() as uow:  # w1 came back late: its claim no longer holds
        assert await uow.outbox.finish("item-001", "w1") is False
        assert await uow.outbox.retry("item-001", "w1", T0, 1, "late") is False
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.outbox.get("item-001")
    assert found is not None and found.claim == "w2"


async def test_retry_frees_the_item_for_its_next_try_and_finish_deletes_it(
    storage: Storage,
) -> None:
    await _add(storage, _item(1))
    [item] = await _claim(storage, "w1")
    next_try = T0 + timedelta(seconds=4)
    async with storage.begin() as uow:
        assert await uow.outbox.retry(item.id, "w1", next_try, 1, "status 503" * 40) is True
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.outbox.get(item.id)
    assert found is not None
    assert (found.due_at, found.attempts, found.claim, found.claimed_until) == (
        next_try, 1, None, None,
    )  # fmt: skip
    assert found.last_error is not None and len(found.last_error) == 200
    assert await _claim(storage, "w2", at=3) == []
    [again] = await _claim(storage, "w2", at=4)
    assert again.attempts == 1
    async with storage.begin() as uow:
        assert await uow.outbox.finish(item.id, "w2") is True
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.outbox.get(item.id) is None
        assert await uow.outbox.count() == 0


async def test_concurrent_claimers_never_get_the_same_item(
    storage: Storage, open_peer: StorageFactory
) -> None:
    await _add(storage, *(_item(n) for n in range(40)))
    peer = await open_peer()

    async def worker(s: Storage, name: str) -> list[str]:
        got: list[str] = []
        for _ in range(20):
            got += [i.id for i in await _claim(s, name, limit=3)]
            await asyncio.sleep(0)
        return got

    results = await asyncio.gather(
        worker(storage, "a"), worker(peer, "b"), worker(storage, "c"), worker(peer, "d")
    )
    every = [i for r in results for i in r]
    assert len(every) == len(set(every)) == 40
