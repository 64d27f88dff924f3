"""Contract of the Storage / UnitOfWork ports: atomic commit, rollback, lifetime."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest

from application.ports import Storage
from domain.errors import Conflict, EmailTaken
from tests.factories import T0, Make


class Boom(Exception):
    """Raised inside a unit of work by the tests."""


async def test_leaving_without_commit_leaves_nothing(storage: Storage, make: Make) -> None:
    user, group = make.user(), make.group()
    token = make.token(user.id)
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.groups.add(group)
        await uow.groups.add_member(group.id, user.id, T0)
        await uow.tokens.add(token)
        await uow.tokens.remember_rotated(make.token(user.id, token_hash="r" * 64), T0)
        assert await uow.users.get(user.id) == user  # visible inside the unit
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) is None
        assert await uow.groups.get(group.id) is None
        assert await uow.groups.groups_of(user.id) == []
        assert await uow.tokens.find(token.token_hash) is None
        assert await uow.tokens.find_rotated("r" * 64) is None


async def test_an_exception_rolls_back_and_propagates(storage: Storage, make: Make) -> None:
    user = make.user()
    with pytest.raises(Boom):
        async with storage.begin() as uow:
            await uow.users.add(user)
            raise Boom
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) is None


async def test_commit_makes_every_change_visible_to_later_units(
    storage: Storage, make: Make
) -> None:
    user, group = make.user(), make.group()
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.groups.add(group)
        await uow.groups.add_member(group.id, user.id, T0)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) == user
        assert await uow.groups.groups_of(user.id) == [group.id]


async def test_changes_after_a_commit_need_another_commit(storage: Storage, make: Make) -> None:
    first, second = make.user(), make.user()
    async with storage.begin() as uow:
        await uow.users.add(first)
        await uow.commit()
        await uow.users.add(second)
    async with storage.begin() as uow:
        assert await uow.users.get(first.id) == first
        assert await uow.users.get(second.id) is None


async def test_rotation_is_atomic_take_and_add_roll_back_together(
    storage: Storage, make: Make
) -> None:
    user = make.user()
    old = make.token(user.id)
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.tokens.add(old)
        await uow.commit()
    new = make.token(user.id)
    with pytest.raises(Boom):
        async with storage.begin() as uow:
            assert await uow.tokens.take(old.token_hash) == old
            await uow.tokens.remember_rotated(old, T0)
            await uow.tokens.add(new)
            raise Boom
    async with storage.begin() as uow:
        assert await uow.tokens.find(old.token_hash) == old
        assert await uow.tokens.find(new.token_hash) is None
        assert await uow.tokens.find_rotated(old.token_hash) is None


async def test_a_domain_error_leaves_the_unit_usable(storage: Storage, make: Make) -> None:
    """After EmailTaken / Conflict is caught, the same unit can go on and commit."""
    taken, other = make.user(email="taken@example.com"), make.user()
    group_a, group_b = make.group(name="a"), make.group(name="b")
    async with storage.begin() as uow:
        await uow.users.add(taken)
        await uow.users.add(other)
        await uow.groups.add(group_a)
        await uow.groups.add(group_b)
        await uow.commit()
    later = make.user()
    async with storage.begin() as uow:
        with pytest.raises(EmailTaken):
            await uow.users.add(make.user(email="taken@example.com"))
        with pytest.raises(EmailTaken):
            await uow.users.update(attrs.evolve(other, email="TAKEN@example.com"))
        with pytest.raises(Conflict):
            await uow.groups.rename(group_b.id, "a")
        with pytest.raises(Conflict):
            await uow.groups.add(make.group(name="a"))
        await uow.users.add(later)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.get(later.id) == later


async def test_a_cancelled_unit_rolls_back_and_the_store_stays_usable(
    storage: Storage, make: Make
) -> None:
    user = make.user()
    entered = asyncio.Event()

    async def slow_unit() -> None:
        async with storage.begin() as uow:
            await uow.users.add(user)
            entered.set()
            await asyncio.sleep(30)
            await uow.commit()

    task = asyncio.create_task(slow_unit())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) is None
        await uow.users.add(make.user())
        await uow.commit()


async def test_units_of_work_do_not_lose_concurrent_updates(storage: Storage, make: Make) -> None:
    """Ten units each add their own user concurrently: all ten are there afterwards."""
    users = [make.user() for _ in range(10)]

    async def add(u: Any) -> None:
        async with storage.begin() as uow:
            await uow.users.add(u)
            await asyncio.sleep(0)
            await uow.commit()

    await asyncio.gather(*(add(u) for u in users))
    async with storage.begin() as uow:
        assert len(await uow.users.list_page(None, None, 100)) == 10


async def test_ping_succeeds_on_an_open_store(storage: Storage) -> None:
    await storage.ping()
