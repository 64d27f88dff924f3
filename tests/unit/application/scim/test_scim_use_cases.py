"""The SCIM use cases over the in-memory adapters (docs/reference/scim.md): a provisioned user
has no password and an unverified email and keeps its SCIM record, a refused group change changes
nothing, a new ``userName`` is a new unverified email (voiding the pending email links; never
taken from another user, never a superadmin's), and the events name the SCIM client as actor."""

from __future__ import annotations

import attrs
import pytest

from application.events.catalog import GroupCreated, GroupMembershipChanged, UserDisabled
from application.events.scim import ProvisionedEmailChanged, UserProvisioned
from application.scim.groups import GroupChange, ListScimGroups, WriteScimGroup
from application.scim.users import ListScimUsers, ProvisionUser, UpdateScimUser
from domain.clients import Client
from domain.errors import EmailTaken, Forbidden, NotFound, ValidationFailed
from domain.model import Role
from domain.policy import Principal, scim_principal
from domain.scim import ScimRecord
from tests.unit.application.accounts.world import World, normalize_email
from tests.unit.domain.test_policy import CALLER_ORG, OTHER_ORG
from tests.unit.domain.test_scim_policy import CLIENT, NOW


@pytest.fixture
def world() -> World:
    return World()


def caller(org: str = CALLER_ORG) -> Principal:
    client = Client("c" * 32, "idp", org, ("scim",), ("authsvc",), False, False, NOW, "h")
    return scim_principal(client, ["scim"])


async def test_a_provisioned_user_is_a_viewer_with_no_password_and_an_unverified_email(
    world: World,
) -> None:
    provision = ProvisionUser(world.spy, world.bus, world.clock, normalize_email, world.next_id)
    made = await provision(
        caller(), " Ann@Example.com ", active=False, external_id="e-1",
        attributes={"displayName": "Ann"},
    )  # fmt: skip
    user = made.user
    assert made.record == ScimRecord(user.id, "e-1", {"displayName": "Ann"})
    stored = await world.user(user.id)
    assert stored is not None
    assert (stored.email, stored.role, stored.org_id) == (
        "ann@example.com",
        Role.VIEWER,
        CALLER_ORG,
    )
    assert stored.password_hash == "" and not stored.email_verified and stored.disabled
    actor = "scim:" + CLIENT.id
    assert world.events == [
        UserProvisioned(user.id, CALLER_ORG, actor),
        UserDisabled(user.id, actor),
    ]
    with pytest.raises(EmailTaken):
        await provision(caller(OTHER_ORG), "ann@example.com")
    with pytest.raises(ValidationFailed) as info:
        await provision(caller(), "not an email")
    assert [e.field for e in info.value.errors] == ["userName"]


async def test_a_new_user_name_is_a_new_unverified_email_and_active_goes_through_the_lifecycle(
    world: World,
) -> None:
    verified = attrs.evolve(await world.add_user("u1"), email_verified=True)
    async with world.spy.inner.begin() as uow:
        await uow.users.update(verified)
        await uow.commit()
    await world.add_user("u2")
    await world.add_user("root", Role.SUPERADMIN)
    update = UpdateScimUser(world.spy, world.bus, world.clock, normalize_email, world.update_user)
    with pytest.raises(EmailTaken):
        await update(caller(), "u1", user_name="u2@example.com", active=False)
    assert not (await world.user("u1")).disabled  # type: ignore[union-attr]  # nothing changed
    with pytest.raises(ValidationFailed):
        await update(caller(), "u1", user_name="not an email")
    with pytest.raises(Forbidden):
        await update(caller(), "root", user_name="mine@example.com")
    with pytest.raises(Forbidden):
        await update(caller(), "root", record=ScimRecord("root", "x"))
    changed = await update(caller(), "u1", user_name="New@Example.com", active=False,
                           record=ScimRecord("ignored", "e-9", {"displayName": "N"}))  # fmt: skip
    assert changed.user.email == "new@example.com" and changed.user.disabled
    assert not changed.user.email_verified
    assert changed.record == ScimRecord("u1", "e-9", {"displayName": "N"})
    with pytest.raises(NotFound):
        await update(caller(OTHER_ORG), "u1", active=True)
    stored = await world.user("u1")
    assert stored is not None and stored.disabled and stored.email == "new@example.com"
    actor = "scim:" + CLIENT.id
    assert ProvisionedEmailChanged("u1", actor) in world.events


async def test_a_refused_group_change_changes_nothing(world: World) -> None:
    await world.add_user("u1")
    await world.add_user("x1", org=OTHER_ORG)
    write = WriteScimGroup(world.spy, world.bus, world.clock, world.next_id)
    with pytest.raises(ValidationFailed):
        await write(caller(), None, GroupChange(name="eng", members=("u1", "x1")))
    assert await ListScimGroups(world.spy)(caller()) == [] and world.events == []
    made = await write(caller(), None, GroupChange(name="eng", members=("u1",)))
    gid = made.detail.group.id
    with pytest.raises(ValidationFailed):
        await write(caller(), gid, GroupChange(name="ops", add=("x1",)))
    with pytest.raises(NotFound):
        await write(caller(OTHER_ORG), gid, GroupChange(remove=("u1",)))
    [listed] = await ListScimGroups(world.spy)(caller())
    assert listed.detail.group.name == "eng" and [m.id for m in listed.detail.members] == ["u1"]
    actor = "scim:" + CLIENT.id
    assert world.events == [
        GroupCreated(gid, CALLER_ORG, actor),
        GroupMembershipChanged(gid, "u1", actor, True, CALLER_ORG),
    ]


async def test_lists_hold_the_callers_organization_only(world: World) -> None:
    await world.add_user("u1")
    await world.add_user("x1", org=OTHER_ORG)
    assert [u.user.id for u in await ListScimUsers(world.spy)(caller())] == ["u1"]
    assert [u.user.id for u in await ListScimUsers(world.spy)(caller(OTHER_ORG))] == ["x1"]
