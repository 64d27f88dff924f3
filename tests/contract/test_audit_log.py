"""Contract of the AuditLog port (docs/reference/operations.md) over every storage adapter: rows
round trip with their details, the user's organization is filled in, filters and keyset pages walk
newest first, rollback drops rows, purge keeps recent ones, and rows outlive their user."""

from __future__ import annotations

from datetime import timedelta

import pytest

from application.ports import Storage
from domain.audit import AuditEvent, AuditQuery, new_audit_id
from domain.errors import Conflict
from tests.factories import T0, Make


def _event(
    type_: str = "login.succeeded",
    user_id: str | None = "alice",
    at: int = 0,
    org_id: str | None = None,
    **details: str | int | bool | None,
) -> AuditEvent:
    when = T0 + timedelta(seconds=at)
    return AuditEvent(
        new_audit_id(when), type_, when, user_id, user_id, org_id,
        "203.0.113.7", "curl/8.5", details,
    )  # fmt: skip


async def _record(storage: Storage, *events: AuditEvent) -> None:
    async with storage.begin() as uow:
        for event in events:
            await uow.audit.record(event)
        await uow.commit()


async def _all(storage: Storage, query: AuditQuery | None = None) -> list[AuditEvent]:
    async with storage.begin() as uow:
        return await uow.audit.list_page(query or AuditQuery(), None, 1000)


async def test_a_row_round_trips_with_its_details(storage: Storage) -> None:
    event = _event(
        "user.role_changed", org_id="org-a", old_role="viewer", new_role="operator", n=3, ok=True
    )
    await _record(storage, event)
    [stored] = await _all(storage)
    assert stored == event
    assert stored.details_dict() == {
        "old_role": "viewer",
        "new_role": "operator",
        "n": 3,
        "ok": True,
    }


async def test_a_row_without_org_takes_the_users_current_org(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice", org_id="org-b"))
        await uow.commit()
    await _record(storage, _event(user_id="alice"), _event(user_id="ghost", at=1))
    rows = await _all(storage)
    assert [(r.user_id, r.org_id) for r in rows] == [("ghost", None), ("alice", "org-b")]


async def test_a_duplicate_id_is_refused(storage: Storage) -> None:
    event = _event()
    await _record(storage, event)
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.audit.record(event)


async def test_rows_not_committed_are_rolled_back(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.audit.record(_event())
    assert await _all(storage) == []


async def test_filters_select_by_org_user_type_and_since(storage: Storage) -> None:
    a1 = _event("login.succeeded", "alice", 0, "org-a")
    a2 = _event("login.failed", "alice", 10, "org-a", reason="invalid_credentials")
    b1 = _event("login.succeeded", "bob", 20, "org-b")
    g1 = _event("group.created", None, 30, "org-a", group_id="g1")
    await _record(storage, a1, a2, b1, g1)
    assert await _all(storage) == [g1, b1, a2, a1]
    assert await _all(storage, AuditQuery(org_id="org-a")) == [g1, a2, a1]
    assert await _all(storage, AuditQuery(user_id="alice")) == [a2, a1]
    assert await _all(storage, AuditQuery(type="login.succeeded")) == [b1, a1]
    assert await _all(storage, AuditQuery(since=T0 + timedelta(seconds=10))) == [g1, b1, a2]
    assert await _all(
        storage, AuditQuery(org_id="org-a", user_id="alice", type="login.failed", since=T0)
    ) == [a2]
    assert await _all(storage, AuditQuery(org_id="org-c")) == []


async def test_keyset_pages_walk_every_row_once_newest_first(storage: Storage) -> None:
    events = [_event(at=i) for i in range(7)]
    await _record(storage, *events)
    seen: list[AuditEvent] = []
    before: str | None = None
    while True:
        async with storage.begin() as uow:
            page = await uow.audit.list_page(AuditQuery(user_id="alice"), before, 3)
        seen += page
        if len(page) < 3:
            break
        before = page[-1].id
    assert seen == events[::-1]


async def test_rows_inserted_during_a_walk_do_not_disturb_it(storage: Storage) -> None:
    events = [_event(at=i) for i in range(4)]
    await _record(storage, *events)
    async with storage.begin() as uow:
        first = await uow.audit.list_page(AuditQuery(), None, 2)
    await _record(storage, _event(at=100))  # newer: ahead of the walk
    async with storage.begin() as uow:
        second = await uow.audit.list_page(AuditQuery(), first[-1].id, 10)
    assert first + second == events[::-1]


async def test_purge_before_deletes_only_older_rows(storage: Storage) -> None:
    old, edge, new = _event(at=0), _event(at=60), _event(at=120)
    await _record(storage, old, edge, new)
    async with storage.begin() as uow:
        assert await uow.audit.purge_before(T0 + timedelta(seconds=60)) == 1
        await uow.commit()
    assert await _all(storage) == [new, edge]


async def test_rows_outlive_their_user(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice", org_id="org-a"))
        await uow.commit()
    await _record(storage, _event(user_id="alice"))
    async with storage.begin() as uow:
        assert await uow.users.delete("alice")
        await uow.commit()
    [row] = await _all(storage)
    assert row.user_id == "alice" and row.org_id == "org-a"
