"""Users through the accounts use cases over the in-memory adapters (docs/reference/accounts.md):
listing and pagination under concurrent inserts, moving a user to another organization, and the
operator's command-line use cases (``create-superadmin``, ``users set-role | set-org``)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

import application.shared.pagination as pagination
from application.events.catalog import (
    GroupMembershipChanged,
    RoleChanged,
    UserMoved,
    UserRegistered,
)
from application.shared.pagination import Page
from application.shared.steps import new_id
from domain.errors import (
    LastSuperadmin,
    NotFound,
    ValidationFailed,
)
from domain.model import Role, User
from domain.policy import OPERATOR_ACTOR_ID
from tests.fakes import FakeClock
from tests.unit.application.accounts.world import THIRD_ORG, World, as_principal, walk
from tests.unit.domain.test_policy import CALLER_ORG, OTHER_ORG

# --------------------------------------------------------------------------- pagination


class TestPagination:
    async def test_walk_to_the_end_under_concurrent_inserts(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        for _ in range(40):
            await world.add_user(new_id())
        before = {u.id for u in await walk(lambda c: world.list_users(root, limit=200, cursor=c))}
        assert len(before) == 41
        inserted: list[str] = []

        async def insert() -> None:
            for _ in range(60):
                uid = new_id()
                await world.add_user(uid)
                inserted.append(uid)
                await asyncio.sleep(0)

        progress: list[int] = []

        async def fetch(cursor: str | None) -> Page[User]:
            progress.append(len(inserted))
            await asyncio.sleep(0)
            return await world.list_users(root, limit=7, cursor=cursor)

        walked, _ = await asyncio.gather(walk(fetch), insert())
        ids = [u.id for u in walked]
        assert len(ids) == len(set(ids)), "a row appeared twice"
        assert ids == sorted(ids)
        assert before <= set(ids), "a row that existed before the walk was skipped"
        assert set(ids) <= before | set(inserted)
        assert any(0 < n < 60 for n in progress), "the inserts did not interleave with the walk"

    async def test_inserts_before_and_after_the_cursor(self, world: World) -> None:
        root = as_principal(await world.add_user("m-root", Role.SUPERADMIN))
        for i in range(10):
            await world.add_user(f"m-{i:02d}")
        page = await world.list_users(root, limit=5)
        assert [u.id for u in page.items] == ["m-00", "m-01", "m-02", "m-03", "m-04"]
        await world.add_user("a-early")  # sorts before the cursor: not seen by this walk
        await world.add_user("z-late")  # sorts after it: seen
        rest = await walk(lambda c: world.list_users(root, limit=5, cursor=c or page.next_cursor))
        assert [u.id for u in rest] == [
            "m-05", "m-06", "m-07", "m-08", "m-09", "m-root", "z-late",
        ]  # fmt: skip

    async def test_an_exact_last_page_has_no_next_cursor(self, world: World) -> None:
        root = as_principal(await world.add_user("u0", Role.SUPERADMIN))
        for i in range(1, 4):
            await world.add_user(f"u{i}")
        page = await world.list_users(root, limit=4)
        assert len(page.items) == 4
        assert page.next_cursor is None
        page = await world.list_users(root, limit=3)
        assert page.next_cursor is not None

    async def test_default_limit_is_50(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        for i in range(59):
            await world.add_user(f"u{i:03d}")
        page = await world.list_users(root)
        assert len(page.items) == pagination.DEFAULT_PAGE_LIMIT == 50
        assert len((await world.list_users(root, cursor=page.next_cursor)).items) == 10

    @pytest.mark.parametrize("limit", [0, -1, 201, True])
    async def test_bad_limit_names_limit(self, world: World, limit: int) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.list_users(root, limit=limit)
        assert [e.field for e in info.value.errors] == ["limit"]

    @pytest.mark.parametrize("limit", [1, 200])
    async def test_limit_bounds_are_accepted(self, world: World, limit: int) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        assert len((await world.list_users(root, limit=limit)).items) == 1

    @pytest.mark.parametrize(
        "cursor",
        [
            "",
            "not base64!",
            "bm90IGpzb24",  # "not json"
            "W10",  # []
            pagination.encode_cursor("groups", "x"),  # another listing's cursor
            pagination.encode_cursor("users", ""),
            "e30" * 400,
        ],
    )
    async def test_bad_cursor_names_cursor(self, world: World, cursor: str) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.list_users(root, cursor=cursor)
        assert [e.field for e in info.value.errors] == ["cursor"]

    def test_cursor_round_trip_is_url_safe(self) -> None:
        cursor = pagination.encode_cursor("users", "ü/+?=" * 3)
        assert set(cursor) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        )
        assert pagination.decode_cursor("users", cursor) == "ü/+?=" * 3

    async def test_org_admin_walk_sees_only_its_org(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        for i in range(12):
            await world.add_user(f"u{i:02d}", org=CALLER_ORG if i % 3 else OTHER_ORG)
        items = await walk(lambda c: world.list_users(admin_, limit=2, cursor=c))
        assert {u.org_id for u in items} == {CALLER_ORG}
        assert len(items) == 1 + 8
        own = await walk(lambda c: world.list_users(admin_, limit=2, cursor=c, org_id=CALLER_ORG))
        assert own == items

    async def test_superadmin_lists_every_org_or_one(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("a", org=OTHER_ORG)
        await world.add_user("b", org=THIRD_ORG)
        everyone = (await world.list_users(root)).items
        assert {u.id for u in everyone} == {"root", "a", "b"}
        assert [u.id for u in (await world.list_users(root, org_id=THIRD_ORG)).items] == ["b"]


# --------------------------------------------------------------------------- moving users


class TestMoveUser:
    async def test_move_removes_old_org_memberships_in_one_unit(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        await world.add_user("carol")
        await world.add_group("ga", members=("bob", "carol"))
        await world.add_group("gb", members=("bob",))
        await world.add_group("gc")
        commits = world.spy.commits
        moved = await world.move_user(root, "bob", OTHER_ORG)
        assert moved.org_id == OTHER_ORG
        assert world.spy.commits == commits + 1
        assert await world.groups_of("bob") == []
        assert await world.groups_of("carol") == ["ga"]
        assert world.events[0] == UserMoved("bob", "root", CALLER_ORG, OTHER_ORG)
        assert sorted(world.events[1:], key=lambda e: e.group_id) == [  # type: ignore[attr-defined]
            GroupMembershipChanged("ga", "bob", "root", False, CALLER_ORG),
            GroupMembershipChanged("gb", "bob", "root", False, CALLER_ORG),
        ]
        assert world.published_inside_unit == []
        # the moved user is now in the other org's scope only
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        with pytest.raises(NotFound):
            await world.get_user(admin_, "bob")

    async def test_moving_to_the_same_org_changes_nothing(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_group("ga", members=("root",))
        assert (await world.move_user(root, "root", CALLER_ORG)).org_id == CALLER_ORG
        assert await world.groups_of("root") == ["ga"]
        assert world.events == []

    async def test_failed_commit_keeps_memberships_and_publishes_nothing(
        self, world: World
    ) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        await world.add_group("ga", members=("bob",))
        world.spy.fail_commit = True
        with pytest.raises(RuntimeError):
            await world.move_user(root, "bob", OTHER_ORG)
        assert (await world.user("bob")).org_id == CALLER_ORG  # type: ignore[union-attr]
        assert await world.groups_of("bob") == ["ga"]
        assert world.events == []

    @pytest.mark.parametrize("org", ["", " padded", "x" * 129, "tab\there"])
    async def test_bad_org_id_names_org_id(self, world: World, org: str) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.move_user(root, "root", org)
        assert [e.field for e in info.value.errors] == ["org_id"]

    async def test_missing_user_is_not_found(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(NotFound):
            await world.move_user(root, "ghost", OTHER_ORG)


# --------------------------------------------------------------------------- operator CLI


class TestCreateSuperadmin:
    async def test_creates_a_superadmin_with_a_hashed_password(self, world: World) -> None:
        result = await world.create_superadmin("  Root@Example.COM ", "correct horse")
        assert result.created is True
        user = result.user
        assert (user.email, user.role, user.org_id) == (
            "root@example.com",
            Role.SUPERADMIN,
            "default",
        )
        assert user.password_hash.startswith("$2b$04$")
        assert await world.hasher.verify("correct horse", user.password_hash)
        assert await world.user(user.id) == user
        assert world.events == [UserRegistered(user.id, "default")]

    async def test_creates_in_a_named_org(self, world: World) -> None:
        result = await world.create_superadmin("r@example.com", "correct horse", org_id="ops")
        assert result.user.org_id == "ops"

    async def test_promotes_an_existing_user_keeping_its_password(self, world: World) -> None:
        bob = await world.add_user("bob", Role.OPERATOR, OTHER_ORG)
        result = await world.create_superadmin("BOB@example.com", None)
        assert result.created is False
        assert result.user == User(
            "bob", bob.email, "hash", Role.SUPERADMIN, OTHER_ORG, bob.created_at
        )
        assert world.events == [RoleChanged("bob", OPERATOR_ACTOR_ID, "operator", "superadmin")]

    async def test_existing_superadmin_is_left_alone(self, world: World) -> None:
        await world.add_user("root", Role.SUPERADMIN)
        result = await world.create_superadmin("root@example.com", "whatever1")
        assert (result.created, result.user.role) == (False, Role.SUPERADMIN)
        assert world.events == []

    @pytest.mark.parametrize("password", [None, "short", "é" * 40])
    async def test_new_user_needs_a_password_within_policy(
        self, world: World, password: str | None
    ) -> None:
        with pytest.raises(ValidationFailed) as info:
            await world.create_superadmin("new@example.com", password)
        assert [e.field for e in info.value.errors] == ["password"]
        assert world.events == []

    async def test_bad_email_is_refused_by_the_normalizer(self, world: World) -> None:
        with pytest.raises(ValidationFailed) as info:
            await world.create_superadmin("not-an-email", "correct horse")
        assert [e.field for e in info.value.errors] == ["email"]


class TestOperatorCommands:
    async def test_set_role_by_email(self, world: World) -> None:
        await world.add_user("bob")
        user = await world.set_role_by_operator("Bob@Example.com", "org_admin")
        assert user.role is Role.ORG_ADMIN
        assert world.events == [RoleChanged("bob", "cli", "viewer", "org_admin")]

    async def test_operator_cannot_demote_the_last_superadmin(self, world: World) -> None:
        await world.add_user("root", Role.SUPERADMIN)
        with pytest.raises(LastSuperadmin):
            await world.set_role_by_operator("root@example.com", "viewer")
        await world.add_user("root2", Role.SUPERADMIN)
        assert (await world.set_role_by_operator("root@example.com", "viewer")).role is Role.VIEWER

    async def test_unknown_email_or_role(self, world: World) -> None:
        with pytest.raises(NotFound):
            await world.set_role_by_operator("ghost@example.com", "viewer")
        await world.add_user("bob")
        with pytest.raises(ValidationFailed):
            await world.set_role_by_operator("bob@example.com", "root")

    async def test_set_org_moves_and_drops_old_memberships(self, world: World) -> None:
        await world.add_user("bob")
        await world.add_group("g", members=("bob",))
        user = await world.set_org_by_operator("bob@example.com", OTHER_ORG)
        assert user.org_id == OTHER_ORG
        assert await world.groups_of("bob") == []
        assert world.events == [
            UserMoved("bob", "cli", CALLER_ORG, OTHER_ORG),
            GroupMembershipChanged("g", "bob", "cli", False, CALLER_ORG),
        ]
        with pytest.raises(NotFound):
            await world.set_org_by_operator("ghost@example.com", OTHER_ORG)


def test_new_id_is_32_hex() -> None:
    ids = {new_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_created_at_is_aware() -> None:
    assert FakeClock().now().tzinfo is not None
    assert isinstance(FakeClock().now(), datetime)
