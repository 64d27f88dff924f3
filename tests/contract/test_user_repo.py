"""Contract of the UserRepo port, over every storage adapter."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import attrs
import pytest

from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Role
from tests.contract.conftest import Make


async def test_add_then_get_round_trips_every_field(uow: Any, make: Make) -> None:
    user = make.user(role=Role.ORG_ADMIN, org_id="org-x")
    async with uow.begin() as tx:
        await tx.users.add(user)
        await tx.commit()
    async with uow.begin() as tx:
        by_id = await tx.users.get(user.id)
        by_email = await tx.users.get_by_email(user.email)
    assert by_id == user
    assert by_email == user
    assert by_id is not None
    assert by_id.created_at.utcoffset() is not None
    assert by_id.created_at.astimezone(UTC) == user.created_at  # to the microsecond
    assert by_id.password_hash == user.password_hash


async def test_unknown_id_and_email_give_none(uow: Any) -> None:
    async with uow.begin() as tx:
        assert await tx.users.get("nobody") is None
        assert await tx.users.get_by_email("nobody@example.com") is None


async def test_email_is_stored_lower_case(uow: Any, make: Make) -> None:
    user = make.user(email="Mixed.Case@Example.COM")
    async with uow.begin() as tx:
        await tx.users.add(user)
        await tx.commit()
    async with uow.begin() as tx:
        stored = await tx.users.get(user.id)
        found = await tx.users.get_by_email("mixed.case@example.com")
    assert stored is not None
    assert stored.email == "mixed.case@example.com"
    assert found == stored


async def test_email_uniqueness_is_case_insensitive(uow: Any, make: Make) -> None:
    async with uow.begin() as tx:
        await tx.users.add(make.user(email="ann@example.com"))
        await tx.commit()
    async with uow.begin() as tx:
        with pytest.raises(EmailTaken):
            await tx.users.add(make.user(email="ANN@Example.com"))


async def test_duplicate_id_is_a_conflict(uow: Any, make: Make) -> None:
    async with uow.begin() as tx:
        await tx.users.add(make.user(id="same"))
        with pytest.raises(Conflict):
            await tx.users.add(make.user(id="same"))


async def test_update_replaces_email_hash_role_and_org(uow: Any, make: Make) -> None:
    user = make.user()
    async with uow.begin() as tx:
        await tx.users.add(user)
        await tx.commit()
    changed = attrs.evolve(
        user, email="new@example.com", password_hash="h2", role=Role.OPERATOR, org_id="org-b"
    )
    async with uow.begin() as tx:
        await tx.users.update(changed)
        await tx.commit()
    async with uow.begin() as tx:
        assert await tx.users.get(user.id) == changed
        assert await tx.users.get_by_email(user.email) is None


async def test_update_of_unknown_user_is_not_found(uow: Any, make: Make) -> None:
    async with uow.begin() as tx:
        with pytest.raises(NotFound):
            await tx.users.update(make.user())


async def test_update_to_another_users_email_is_taken(uow: Any, make: Make) -> None:
    a, b = make.user(email="a@example.com"), make.user(email="b@example.com")
    async with uow.begin() as tx:
        await tx.users.add(a)
        await tx.users.add(b)
        await tx.commit()
    async with uow.begin() as tx:
        with pytest.raises(EmailTaken):
            await tx.users.update(attrs.evolve(b, email="A@example.com"))


async def test_list_page_walks_every_user_in_id_order_by_keyset(uow: Any, make: Make) -> None:
    ids = ["u05", "u01", "u04", "u02", "u03"]
    async with uow.begin() as tx:
        for i in ids:
            await tx.users.add(make.user(id=i))
        await tx.commit()
    seen: list[str] = []
    after: str | None = None
    async with uow.begin() as tx:
        while True:
            page = await tx.users.list_page(None, after, 2)
            assert len(page) <= 2
            if not page:
                break
            seen.extend(u.id for u in page)
            after = page[-1].id
    assert seen == sorted(ids)


async def test_list_page_is_stable_under_concurrent_inserts(uow: Any, make: Make) -> None:
    async with uow.begin() as tx:
        for i in ("b1", "b2", "b3", "b4"):
            await tx.users.add(make.user(id=i))
        await tx.commit()
    async with uow.begin() as tx:
        first = await tx.users.list_page(None, None, 2)
    async with uow.begin() as tx:  # inserted before the cursor: must not shift the next page
        await tx.users.add(make.user(id="a0"))
        await tx.commit()
    async with uow.begin() as tx:
        second = await tx.users.list_page(None, first[-1].id, 2)
    assert [u.id for u in first] == ["b1", "b2"]
    assert [u.id for u in second] == ["b3", "b4"]


async def test_list_page_filters_by_org(uow: Any, make: Make) -> None:
    async with uow.begin() as tx:
        await tx.users.add(make.user(id="x1", org_id="org-a"))
        await tx.users.add(make.user(id="x2", org_id="org-b"))
        await tx.users.add(make.user(id="x3", org_id="org-a"))
        await tx.commit()
    async with uow.begin() as tx:
        assert [u.id for u in await tx.users.list_page("org-a", None, 10)] == ["x1", "x3"]
        assert [u.id for u in await tx.users.list_page("org-a", "x1", 10)] == ["x3"]
        assert [u.id for u in await tx.users.list_page("org-c", None, 10)] == []
        assert [u.id for u in await tx.users.list_page(None, None, 10)] == ["x1", "x2", "x3"]


async def test_count_by_role_counts_across_orgs(uow: Any, make: Make) -> None:
    async with uow.begin() as tx:
        await tx.users.add(make.user(role=Role.SUPERADMIN, org_id="org-a"))
        await tx.users.add(make.user(role=Role.SUPERADMIN, org_id="org-b"))
        await tx.users.add(make.user(role=Role.VIEWER))
        await tx.commit()
    async with uow.begin() as tx:
        assert await tx.users.count_by_role(Role.SUPERADMIN) == 2
        assert await tx.users.count_by_role(Role.VIEWER) == 1
        assert await tx.users.count_by_role(Role.ORG_ADMIN) == 0
