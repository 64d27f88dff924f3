"""Contract of ``ScimRecordStore`` (docs/reference/scim.md) over every storage adapter: a user's
record round trips its external id and JSON attributes, a group's its external id only; a put
replaces; records are listed per organization; a record needs its user or group and goes with it;
a rolled-back put leaves nothing."""

from __future__ import annotations

import pytest

from application.ports import Storage
from domain.errors import NotFound
from domain.scim import ScimRecord
from tests.factories import Make

ATTRIBUTES = {
    "name": {"givenName": "Jö", "familyName": "Doe"},
    "displayName": "Jö Doe",
    "emails": [{"value": "jo@example.com", "type": "work", "primary": True}],
    "active": None,
}


async def test_records_round_trip_and_a_put_replaces(storage: Storage, make: Make) -> None:
    user, group = make.user(), make.group()
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.groups.add(group)
        await uow.scim.put("User", ScimRecord(user.id, "ext-1", ATTRIBUTES))
        await uow.scim.put("Group", ScimRecord(group.id, "g-ext", {"ignored": True}))
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.scim.get("User", user.id) == ScimRecord(user.id, "ext-1", ATTRIBUTES)
        assert await uow.scim.get("Group", group.id) == ScimRecord(group.id, "g-ext", {})
        assert await uow.scim.get("User", group.id) is None
        assert await uow.scim.get("Group", "nope") is None
    async with storage.begin() as uow:
        await uow.scim.put("User", ScimRecord(user.id, None, {"displayName": "J"}))
        await uow.scim.put("Group", ScimRecord(group.id, None))
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.scim.get("User", user.id) == ScimRecord(
            user.id, None, {"displayName": "J"}
        )
        assert await uow.scim.get("Group", group.id) == ScimRecord(group.id, None, {})


async def test_records_are_listed_per_organization(storage: Storage, make: Make) -> None:
    a, b = make.user(org_id="org-a"), make.user(org_id="org-b")
    ga, gb = make.group(org_id="org-a"), make.group(org_id="org-b")
    async with storage.begin() as uow:
        for user in (a, b):
            await uow.users.add(user)
            await uow.scim.put("User", ScimRecord(user.id, f"x-{user.id}", {"displayName": "d"}))
        for group in (ga, gb):
            await uow.groups.add(group)
            await uow.scim.put("Group", ScimRecord(group.id, f"x-{group.id}"))
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.scim.of_org("User", "org-a") == {
            a.id: ScimRecord(a.id, f"x-{a.id}", {"displayName": "d"})
        }
        assert await uow.scim.of_org("Group", "org-b") == {gb.id: ScimRecord(gb.id, f"x-{gb.id}")}
        assert await uow.scim.of_org("User", "org-c") == {}


async def test_a_record_needs_its_resource_and_goes_with_it(storage: Storage, make: Make) -> None:
    user, group = make.user(), make.group()
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.scim.put("User", ScimRecord(user.id, "x"))
        with pytest.raises(NotFound):
            await uow.scim.put("Group", ScimRecord(group.id, "x"))
        await uow.users.add(user)
        await uow.groups.add(group)
        await uow.scim.put("User", ScimRecord(user.id, "x", ATTRIBUTES))
        await uow.scim.put("Group", ScimRecord(group.id, "y"))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.users.delete(user.id)
        assert await uow.groups.delete(group.id)
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.scim.get("User", user.id) is None
        assert await uow.scim.get("Group", group.id) is None


async def test_a_put_rolled_back_leaves_nothing(storage: Storage, make: Make) -> None:
    user = make.user()
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.commit()
    with pytest.raises(RuntimeError):
        async with storage.begin() as uow:
            await uow.scim.put("User", ScimRecord(user.id, "x", ATTRIBUTES))
            raise RuntimeError("abandoned")
    async with storage.read() as uow:
        assert await uow.scim.get("User", user.id) is None
