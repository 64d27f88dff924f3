"""Contract of the UnitOfWork / Transaction ports: atomic commit, rollback, lifetime."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest

from domain.errors import Conflict, EmailTaken
from tests.contract.conftest import T0, Make


class Boom(Exception):
    """Raised inside a unit of work by the tests."""


async def test_leaving_without_commit_leaves_nothing(uow: Any, make: Make) -> None:
    user, group = make.user(), make.group()
    token = make.token(user.id)
    async with uow.begin() as tx:
        await tx.users.add(user)
        await tx.groups.add(group)
        await tx.groups.add_member(group.id, user.id, T0)
        await tx.tokens.add(token)
        await tx.tokens.remember_rotated(make.token(user.id, token_hash="r" * 64))
        assert await tx.users.get(user.id) == user  # visible inside the unit
    async with uow.begin() as tx:
        assert await tx.users.get(user.id) is None
        assert await tx.groups.get(group.id) is None
        assert await tx.groups.groups_of(user.id) == []
        assert await tx.tokens.find(token.token_hash) is None
        assert await tx.tokens.find_rotated("r" * 64) is None


async def test_an_exception_rolls_back_and_propagates(uow: Any, make: Make) -> None:
    user = make.user()
    with pytest.raises(Boom):
        async with uow.begin() as tx:
            await tx.users.add(user)
            raise Boom
    async with uow.begin() as tx:
        assert await tx.users.get(user.id) is None


async def test_commit_makes_every_change_visible_to_later_units(uow: Any, make: Make) -> None:
    user, group = make.user(), make.group()
    async with uow.begin() as tx:
        await tx.users.add(user)
        await tx.groups.add(group)
        await tx.groups.add_member(group.id, user.id, T0)
        await tx.commit()
    async with uow.begin() as tx:
        assert await tx.users.get(user.id) == user
        assert await tx.groups.groups_of(user.id) == [group.id]


async def test_changes_after_a_commit_need_another_commit(uow: Any, make: Make) -> None:
    first, second = make.user(), make.user()
    async with uow.begin() as tx:
        await tx.users.add(first)
        await tx.commit()
        await tx.users.add(second)
    async with uow.begin() as tx:
        assert await tx.users.get(first.id) == first
        assert await tx.users.get(second.id) is None


async def test_rotation_is_atomic_take_and_add_roll_back_together(uow: Any, make: Make) -> None:
    user = make.user()
    old = make.token(user.id)
    async with uow.begin() as tx:
        await tx.users.add(user)
        await tx.tokens.add(old)
        await tx.commit()
    new = make.token(user.id)
    with pytest.raises(Boom):
        async with uow.begin() as tx:
            assert await tx.tokens.take(old.token_hash) == old
            await tx.tokens.remember_rotated(old)
            await tx.tokens.add(new)
            raise Boom
    async with uow.begin() as tx:
        assert await tx.tokens.find(old.token_hash) == old
        assert await tx.tokens.find(new.token_hash) is None
        assert await tx.tokens.find_rotated(old.token_hash) is None


async def test_a_domain_error_leaves_the_unit_usable(uow: Any, make: Make) -> None:
    """After EmailTaken / Conflict is caught, the same unit can go on and commit."""
    taken, other = make.user(email="taken@example.com"), make.user()
    group_a, group_b = make.group(name="a"), make.group(name="b")
    async with uow.begin() as tx:
        await tx.users.add(taken)
        await tx.users.add(other)
        await tx.groups.add(group_a)
        await tx.groups.add(group_b)
        await tx.commit()
    later = make.user()
    async with uow.begin() as tx:
        with pytest.raises(EmailTaken):
            await tx.users.add(make.user(email="taken@example.com"))
        with pytest.raises(EmailTaken):
            await tx.users.update(attrs.evolve(other, email="TAKEN@example.com"))
        with pytest.raises(Conflict):
            await tx.groups.rename(group_b.id, "a")
        with pytest.raises(Conflict):
            await tx.groups.add(make.group(name="a"))
        await tx.users.add(later)
        await tx.commit()
    async with uow.begin() as tx:
        assert await tx.users.get(later.id) == later


async def test_a_cancelled_unit_rolls_back_and_the_store_stays_usable(uow: Any, make: Make) -> None:
    user = make.user()
    entered = asyncio.Event()

    async def slow_unit() -> None:
        async with uow.begin() as tx:
            await tx.users.add(user)
            entered.set()
            await asyncio.sleep(30)
            await tx.commit()

    task = asyncio.create_task(slow_unit())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with uow.begin() as tx:
        assert await tx.users.get(user.id) is None
        await tx.users.add(make.user())
        await tx.commit()


async def test_units_of_work_do_not_lose_concurrent_updates(uow: Any, make: Make) -> None:
    """Ten units each add their own user concurrently: all ten are there afterwards."""
    users = [make.user() for _ in range(10)]

    async def add(u: Any) -> None:
        async with uow.begin() as tx:
            await tx.users.add(u)
            await asyncio.sleep(0)
            await tx.commit()

    await asyncio.gather(*(add(u) for u in users))
    async with uow.begin() as tx:
        assert len(await tx.users.list_page(None, None, 100)) == 10


async def test_ping_succeeds_on_an_open_store(uow: Any) -> None:
    await uow.ping()
