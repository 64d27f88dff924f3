"""Contract of the GroupRepo port, over every storage adapter."""

from __future__ import annotations

import pytest

from application.ports import Storage
from domain.errors import Conflict, NotFound
from domain.model import Group, GroupSummary, User
from tests.factories import T0, Make


async def _setup(storage: Storage, users: list[User], groups: list[Group]) -> None:
    async with storage.begin() as uow:
        for u in users:
            await uow.users.add(u)
        for g in groups:
            await uow.groups.add(g)
        await uow.commit()


async def test_add_then_get_round_trips_with_zero_members(storage: Storage, make: Make) -> None:
    group = make.group()
    await _setup(storage, [], [group])
    async with storage.begin() as uow:
        got = await uow.groups.get(group.id)
    assert got == GroupSummary(group, 0)
    assert got is not None
    assert got.group.created_at == group.created_at  # to the microsecond, tz-aware


async def test_get_of_unknown_group_is_none(storage: Storage) -> None:
    async with storage.begin() as uow:
        assert await uow.groups.get("nope") is None


async def test_group_name_is_unique_per_org(storage: Storage, make: Make) -> None:
    await _setup(storage, [], [make.group(name="ops", org_id="org-a")])
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.groups.add(make.group(name="ops", org_id="org-a"))
    async with storage.begin() as uow:  # the same name in another org is fine
        await uow.groups.add(make.group(name="ops", org_id="org-b"))
        await uow.commit()


async def test_duplicate_group_id_is_a_conflict(storage: Storage, make: Make) -> None:
    await _setup(storage, [], [make.group(id="g1")])
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.groups.add(make.group(id="g1"))


async def test_rename_changes_the_name(storage: Storage, make: Make) -> None:
    group = make.group(name="old")
    await _setup(storage, [], [group])
    async with storage.begin() as uow:
        await uow.groups.rename(group.id, "new")
        await uow.groups.rename(group.id, "new")  # to its own name: no conflict
        await uow.commit()
    async with storage.begin() as uow:
        got = await uow.groups.get(group.id)
    assert got is not None
    assert got.group.name == "new"


async def test_rename_of_unknown_group_is_not_found(storage: Storage) -> None:
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.groups.rename("nope", "x")


async def test_rename_to_a_taken_name_in_the_org_is_a_conflict(
    storage: Storage, make: Make
) -> None:
    a = make.group(name="a", org_id="org-a")
    b = make.group(name="b", org_id="org-a")
    other = make.group(name="c", org_id="org-b")
    await _setup(storage, [], [a, b, other])
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.groups.rename(b.id, "a")
        await uow.groups.rename(b.id, "c")  # "c" exists only in another org
        await uow.commit()


async def test_delete_removes_the_group_and_its_memberships(storage: Storage, make: Make) -> None:
    user, group, keep = make.user(), make.group(), make.group()
    await _setup(storage, [user], [group, keep])
    async with storage.begin() as uow:
        await uow.groups.add_member(group.id, user.id, T0)
        await uow.groups.add_member(keep.id, user.id, T0)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.groups.delete(group.id) is True
        assert await uow.groups.delete(group.id) is False
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.groups.get(group.id) is None
        assert await uow.groups.groups_of(user.id) == [keep.id]
        assert await uow.groups.members(group.id) == []


async def test_add_member_is_idempotent(storage: Storage, make: Make) -> None:
    user, group = make.user(), make.group()
    await _setup(storage, [user], [group])
    async with storage.begin() as uow:
        assert await uow.groups.add_member(group.id, user.id, T0) is True
        assert await uow.groups.add_member(group.id, user.id, T0) is False
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.groups.add_member(group.id, user.id, T0) is False
        got = await uow.groups.get(group.id)
        assert got is not None
        assert got.member_count == 1
        assert await uow.groups.members(group.id) == [user]


async def test_add_member_to_unknown_group_or_user_is_not_found(
    storage: Storage, make: Make
) -> None:
    user, group = make.user(), make.group()
    await _setup(storage, [user], [group])
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.groups.add_member("nope", user.id, T0)
        with pytest.raises(NotFound):
            await uow.groups.add_member(group.id, "ghost", T0)


async def test_remove_member_reports_whether_it_existed(storage: Storage, make: Make) -> None:
    user, group = make.user(), make.group()
    await _setup(storage, [user], [group])
    async with storage.begin() as uow:
        await uow.groups.add_member(group.id, user.id, T0)
        assert await uow.groups.remove_member(group.id, user.id) is True
        assert await uow.groups.remove_member(group.id, user.id) is False
        assert await uow.groups.members(group.id) == []


async def test_members_and_groups_of_are_sorted_by_id(storage: Storage, make: Make) -> None:
    users = [make.user(id=i) for i in ("u3", "u1", "u2")]
    groups = [make.group(id=i) for i in ("g2", "g3", "g1")]
    await _setup(storage, users, groups)
    async with storage.begin() as uow:
        for g in groups:
            for u in users:
                await uow.groups.add_member(g.id, u.id, T0)
        await uow.commit()
    async with storage.begin() as uow:
        assert [u.id for u in await uow.groups.members("g2")] == ["u1", "u2", "u3"]
        assert await uow.groups.groups_of("u2") == ["g1", "g2", "g3"]
        assert await uow.groups.groups_of("nobody") == []


async def test_list_page_walks_groups_by_keyset_with_member_counts(
    storage: Storage, make: Make
) -> None:
    user = make.user()
    groups = [make.group(id=f"g{i}", org_id="org-a" if i % 2 else "org-b") for i in range(6)]
    await _setup(storage, [user], groups)
    async with storage.begin() as uow:
        await uow.groups.add_member("g3", user.id, T0)
        await uow.commit()
    async with storage.begin() as uow:
        first = await uow.groups.list_page(None, None, 4)
        rest = await uow.groups.list_page(None, first[-1].group.id, 4)
        org_a = await uow.groups.list_page("org-a", None, 10)
        org_a_after = await uow.groups.list_page("org-a", "g1", 1)
    assert [s.group.id for s in first] == ["g0", "g1", "g2", "g3"]
    assert [s.group.id for s in rest] == ["g4", "g5"]
    assert [s.group.id for s in org_a] == ["g1", "g3", "g5"]
    assert [s.group.id for s in org_a_after] == ["g3"]
    counts = {s.group.id: s.member_count for s in first + rest}
    assert counts == {"g0": 0, "g1": 0, "g2": 0, "g3": 1, "g4": 0, "g5": 0}


async def test_remove_user_from_org_groups_leaves_other_orgs(storage: Storage, make: Make) -> None:
    user, other_user = make.user(id="u1"), make.user(id="u2")
    a1, a2 = make.group(id="a1", org_id="org-a"), make.group(id="a2", org_id="org-a")
    b1 = make.group(id="b1", org_id="org-b")
    await _setup(storage, [user, other_user], [a1, a2, b1])
    async with storage.begin() as uow:
        for g in (a1, a2, b1):
            await uow.groups.add_member(g.id, user.id, T0)
        await uow.groups.add_member(a1.id, other_user.id, T0)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.groups.remove_user_from_org_groups(user.id, "org-a") == 2
        assert await uow.groups.remove_user_from_org_groups(user.id, "org-a") == 0
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.groups.groups_of(user.id) == ["b1"]
        assert await uow.groups.groups_of(other_user.id) == ["a1"]
