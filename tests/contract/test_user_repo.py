"""Contract of the UserRepo port, over every storage adapter."""

from __future__ import annotations

from datetime import UTC

import attrs
import pytest

from application.ports import Storage
from domain.errors import Conflict, EmailTaken, NotFound, ValidationFailed
from domain.model import Role
from tests.factories import Make


async def test_add_then_get_round_trips_every_field(storage: Storage, make: Make) -> None:
    user = make.user(role=Role.ORG_ADMIN, org_id="org-x")
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    async with storage.begin() as uow:
        by_id = await uow.users.get(user.id)
        by_email = await uow.users.get_by_email(user.email)
    assert by_id == user
    assert by_email == user
    assert by_id is not None
    assert by_id.created_at.utcoffset() is not None
    assert by_id.created_at.astimezone(UTC) == user.created_at  # to the microsecond
    assert by_id.password_hash == user.password_hash


async def test_unknown_id_and_email_give_none(storage: Storage) -> None:
    async with storage.begin() as uow:
        assert await uow.users.get("nobody") is None
        assert await uow.users.get_by_email("nobody@example.com") is None


async def test_email_is_stored_lower_case(storage: Storage, make: Make) -> None:
    user = make.user(email="Mixed.Case@Example.COM")
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    async with storage.begin() as uow:
        stored = await uow.users.get(user.id)
        found = await uow.users.get_by_email("mixed.case@example.com")
    assert stored is not None
    assert stored.email == "mixed.case@example.com"
    assert found == stored


async def test_email_uniqueness_is_case_insensitive(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(email="ann@example.com"))
        await uow.commit()
    async with storage.begin() as uow:
        with pytest.raises(EmailTaken):
            await uow.users.add(make.user(email="ANN@Example.com"))


async def test_duplicate_id_is_a_conflict(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="same"))
        with pytest.raises(Conflict):
            await uow.users.add(make.user(id="same"))


async def test_update_replaces_email_hash_role_and_org(storage: Storage, make: Make) -> None:
    user = make.user()
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    changed = attrs.evolve(
        user, email="new@example.com", password_hash="h2", role=Role.OPERATOR, org_id="org-b"
    )
    async with storage.begin() as uow:
        await uow.users.update(changed)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) == changed
        assert await uow.users.get_by_email(user.email) is None


async def test_update_of_unknown_user_is_not_found(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.users.update(make.user())


async def test_update_to_another_users_email_is_taken(storage: Storage, make: Make) -> None:
    a, b = make.user(email="a@example.com"), make.user(email="b@example.com")
    async with storage.begin() as uow:
        await uow.users.add(a)
        await uow.users.add(b)
        await uow.commit()
    async with storage.begin() as uow:
        with pytest.raises(EmailTaken):
            await uow.users.update(attrs.evolve(b, email="A@example.com"))


async def test_list_page_walks_every_user_in_id_order_by_keyset(
    storage: Storage, make: Make
) -> None:
    ids = ["u05", "u01", "u04", "u02", "u03"]
    async with storage.begin() as uow:
        for i in ids:
            await uow.users.add(make.user(id=i))
        await uow.commit()
    seen: list[str] = []
    after: str | None = None
    async with storage.begin() as uow:
        while True:
            page = await uow.users.list_page(None, after, 2)
            assert len(page) <= 2
            if not page:
                break
            seen.extend(u.id for u in page)
            after = page[-1].id
    assert seen == sorted(ids)


async def test_list_page_is_stable_under_concurrent_inserts(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        for i in ("b1", "b2", "b3", "b4"):
            await uow.users.add(make.user(id=i))
        await uow.commit()
    async with storage.begin() as uow:
        first = await uow.users.list_page(None, None, 2)
    async with storage.begin() as uow:  # inserted before the cursor: must not shift the next page
        await uow.users.add(make.user(id="a0"))
        await uow.commit()
    async with storage.begin() as uow:
        second = await uow.users.list_page(None, first[-1].id, 2)
    assert [u.id for u in first] == ["b1", "b2"]
    assert [u.id for u in second] == ["b3", "b4"]


async def test_list_page_filters_by_org(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="x1", org_id="org-a"))
        await uow.users.add(make.user(id="x2", org_id="org-b"))
        await uow.users.add(make.user(id="x3", org_id="org-a"))
        await uow.commit()
    async with storage.begin() as uow:
        assert [u.id for u in await uow.users.list_page("org-a", None, 10)] == ["x1", "x3"]
        assert [u.id for u in await uow.users.list_page("org-a", "x1", 10)] == ["x3"]
        assert [u.id for u in await uow.users.list_page("org-c", None, 10)] == []
        assert [u.id for u in await uow.users.list_page(None, None, 10)] == ["x1", "x2", "x3"]


async def test_count_by_role_counts_across_orgs(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(role=Role.SUPERADMIN, org_id="org-a"))
        await uow.users.add(make.user(role=Role.SUPERADMIN, org_id="org-b"))
        await uow.users.add(make.user(role=Role.VIEWER))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.count_by_role(Role.SUPERADMIN) == 2
        assert await uow.users.count_by_role(Role.VIEWER) == 1
        assert await uow.users.count_by_role(Role.ORG_ADMIN) == 0


async def test_values_the_backend_cannot_hold_raise_the_ports_error(
    storage: Storage, make: Make
) -> None:
    """U+0000 (PostgreSQL ``text`` cannot hold it): a lookup either finds nothing or raises
    ``ValidationFailed``, and an insert either stores the user or raises ``ValidationFailed`` —
    never a driver error, and a refused insert leaves nothing behind."""
    user = make.user(email="nul\x00byte@example.com")
    try:
        async with storage.begin() as uow:
            assert await uow.users.get_by_email(user.email) is None
            assert await uow.users.get(user.id + "\x00") is None
    except ValidationFailed:
        pass
    try:
        async with storage.begin() as uow:
            await uow.users.add(user)
            await uow.commit()
    except ValidationFailed:
        async with storage.begin() as uow:
            assert await uow.users.get(user.id) is None
    else:
        async with storage.begin() as uow:
            assert await uow.users.get(user.id) == user


async def test_get_with_groups_reads_the_user_and_its_sorted_groups(
    storage: Storage, make: Make
) -> None:
    """One read-only unit, one statement: the user and the sorted ids of its groups."""
    alone, member = make.user(email="alone@example.com"), make.user(email="member@example.com")
    groups = [make.group(name=f"g{i}", org_id=member.org_id) for i in range(3)]
    async with storage.begin() as uow:
        await uow.users.add(alone)
        await uow.users.add(member)
        for group in groups:
            await uow.groups.add(group)
            await uow.groups.add_member(group.id, member.id, group.created_at)
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.users.get_with_groups(alone.id) == (alone, [])
        assert await uow.users.get_with_groups(member.id) == (member, sorted(g.id for g in groups))
        assert await uow.users.get_with_groups("nobody") is None


async def test_list_page_by_email_prefix_is_exact_lower_case_and_keyset(
    storage: Storage, make: Make
) -> None:
    """The admin console's search (docs/reference/console.md): a prefix of the lower-cased email,
    no wildcard (``%`` and ``_`` are characters), inside the organization, paged by id."""
    emails = ["ann@example.com", "anna@example.com", "Annie@Example.com", "bob@example.com",
              "a_n@example.com", "a%n@example.com"]  # fmt: skip
    async with storage.begin() as uow:
        for i, email in enumerate(emails):
            await uow.users.add(make.user(id=f"u{i}", email=email))
        await uow.users.add(make.user(id="u9", email="ann@other.example", org_id="org-b"))
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.users.list_page("org-a", None, 10, "ann")
        assert [u.email for u in found] == ["ann@example.com", "anna@example.com",
                                            "annie@example.com"]  # fmt: skip
        assert [u.id for u in await uow.users.list_page(None, None, 10, "ann")] == [
            "u0", "u1", "u2", "u9"
        ]  # fmt: skip
        assert [u.id for u in await uow.users.list_page("org-a", "u0", 1, "ann")] == ["u1"]
        assert [u.id for u in await uow.users.list_page("org-a", None, 10, "a_")] == ["u4"]
        assert [u.id for u in await uow.users.list_page("org-a", None, 10, "a%")] == ["u5"]
        assert await uow.users.list_page("org-a", None, 10, "%") == []
        assert len(await uow.users.list_page("org-a", None, 10, None)) == 6


async def test_count_is_per_organization_or_total(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(org_id="org-a"))
        await uow.users.add(make.user(org_id="org-a"))
        await uow.users.add(make.user(org_id="org-b"))
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.users.count("org-a") == 2
        assert await uow.users.count("org-b") == 1
        assert await uow.users.count("nowhere") == 0
        assert await uow.users.count(None) == 3
