"""Groups through the accounts use cases over the in-memory adapters (docs/reference/accounts.md):
creating, renaming, deleting and listing groups, and their members (same organization only),
with their events (published after the commit only)."""

from __future__ import annotations

import pytest

import application.shared.pagination as pagination
from application.events.catalog import (
    GroupDeleted,
    GroupMembershipChanged,
)
from domain.errors import (
    Conflict,
    NotFound,
    ValidationFailed,
)
from domain.model import Group, Role
from tests.unit.application.accounts.world import THIRD_ORG, World, as_principal, walk
from tests.unit.domain.test_policy import CALLER_ORG, OTHER_ORG

# --------------------------------------------------------------------------- groups


class TestGroups:
    async def test_org_admin_creates_in_own_org_by_default(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        created = await world.create_group(admin_, "  ops  ")
        assert created.group == Group("id0001", "ops", CALLER_ORG, world.clock.now())
        assert created.member_count == 0
        assert await world.group_exists("id0001")

    async def test_superadmin_creates_in_named_org_or_own(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        assert (await world.create_group(root, "a", org_id=THIRD_ORG)).group.org_id == THIRD_ORG
        assert (await world.create_group(root, "a")).group.org_id == CALLER_ORG

    async def test_duplicate_name_in_org_is_a_conflict(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.create_group(admin_, "ops")
        with pytest.raises(Conflict):
            await world.create_group(admin_, "ops")
        dev = await world.create_group(admin_, "dev")
        with pytest.raises(Conflict):
            await world.rename_group(admin_, dev.group.id, "ops")

    @pytest.mark.parametrize("name", ["", "   ", "x" * 101, "bell\a"])
    async def test_bad_name_names_name(self, world: World, name: str) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.create_group(admin_, name)
        assert [e.field for e in info.value.errors] == ["name"]

    async def test_get_group_lists_members_by_id_with_email(self, world: World) -> None:
        viewer = as_principal(await world.add_user("v"))
        await world.add_user("b")
        await world.add_group("g", members=("v", "b"))
        detail = await world.get_group(viewer, "g")
        assert [(m.id, m.email) for m in detail.members] == [
            ("b", "b@example.com"),
            ("v", "v@example.com"),
        ]
        assert detail.summary.member_count == 2
        assert detail.group.id == "g"

    async def test_delete_removes_memberships_and_announces_them(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("b")
        await world.add_group("g", members=("admin", "b"))
        await world.delete_group(admin_, "g")
        assert not await world.group_exists("g")
        assert await world.groups_of("b") == []
        assert world.events == [
            GroupDeleted("g", CALLER_ORG, "admin"),
            GroupMembershipChanged("g", "admin", "admin", False, CALLER_ORG),
            GroupMembershipChanged("g", "b", "admin", False, CALLER_ORG),
        ]
        with pytest.raises(NotFound):
            await world.delete_group(admin_, "g")

    async def test_groups_paginate_with_member_counts(self, world: World) -> None:
        viewer = as_principal(await world.add_user("v"))
        for i in range(5):
            await world.add_group(f"g{i}", members=("v",) if i % 2 else ())
        await world.add_group("foreign", OTHER_ORG)
        items = await walk(lambda c: world.list_groups(viewer, limit=2, cursor=c))
        assert [s.group.id for s in items] == ["g0", "g1", "g2", "g3", "g4"]
        assert [s.member_count for s in items] == [0, 1, 0, 1, 0]
        users_cursor = pagination.encode_cursor("users", "g1")
        with pytest.raises(ValidationFailed):
            await world.list_groups(viewer, cursor=users_cursor)


class TestMembers:
    async def test_add_is_idempotent_and_announced_once(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob")
        await world.add_group("g")
        assert await world.add_member(admin_, "g", "bob") is True
        assert await world.add_member(admin_, "g", "bob") is False
        assert await world.groups_of("bob") == ["g"]
        assert world.events == [GroupMembershipChanged("g", "bob", "admin", True, CALLER_ORG)]
        assert world.published_inside_unit == []

    async def test_superadmin_adding_a_user_of_another_org_gets_422(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob", org=OTHER_ORG)
        await world.add_group("g", CALLER_ORG)
        with pytest.raises(ValidationFailed) as info:
            await world.add_member(root, "g", "bob")
        assert [e.field for e in info.value.errors] == ["user_id"]
        assert await world.groups_of("bob") == []

    async def test_org_admin_adding_a_user_of_another_org_gets_404(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob", org=OTHER_ORG)
        await world.add_group("g")
        with pytest.raises(NotFound):
            await world.add_member(admin_, "g", "bob")

    async def test_missing_user_or_group_is_404(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g")
        with pytest.raises(NotFound):
            await world.add_member(admin_, "g", "ghost")
        with pytest.raises(NotFound):
            await world.add_member(admin_, "ghost", "admin")
        with pytest.raises(NotFound):
            await world.remove_member(admin_, "g", "ghost")

    async def test_remove_non_member_succeeds_quietly(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g")
        assert await world.remove_member(admin_, "g", "admin") is False
        assert world.events == []

    async def test_remove_member_is_announced_after_commit(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g", members=("admin",))
        assert await world.remove_member(admin_, "g", "admin") is True
        assert await world.groups_of("admin") == []
        assert world.events == [GroupMembershipChanged("g", "admin", "admin", False, CALLER_ORG)]
        assert world.published_inside_unit == []

    async def test_failed_commit_adds_nothing_and_publishes_nothing(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g")
        world.spy.fail_commit = True
        with pytest.raises(RuntimeError):
            await world.add_member(admin_, "g", "admin")
        assert await world.groups_of("admin") == []
        assert world.events == []
