"""Accepting an invitation (docs/reference/invitations.md) through the container's use cases over
memory storage: the account is the invitation's (email verified, role, organization, the groups
that still exist) and is signed in, in one unit of work with spending the link; every refusal —
the password policy, a bad or spent link, an email taken meanwhile, an identity that has an
account — changes nothing and leaves the invitation as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from application.accounts.invitations import CreateInvitation
from application.events.catalog import GroupMembershipChanged, LoginSucceeded, UserRegistered
from application.events.federation import IdentityLinked
from application.events.invitations import InvitationAccepted
from application.login.federated_invitation import accept_with_identity
from application.login.finish import LoginStart
from domain import errors
from domain.federation import FederatedIdentity, UpstreamIdentity
from domain.invitations import InvitationState
from domain.model import Group, Role
from domain.policy import Principal
from tests.unit.application.harness import ADDRESS, ORG, Harness, build_harness

INVITED = "invited@example.com"
NEW_PASSWORD = "a long enough passphrase"


async def _invite(harness: Harness, *groups: str) -> tuple[str, str]:
    """An org_admin's invitation of ``INVITED`` as operator into ``ORG`` with ``groups``:
    ``(invitation id, the link's token)`` (the token read from the mail hook)."""
    admin = await harness.add_user(f"admin{len(groups)}@example.com")
    async with harness.storage.begin() as uow:
        for group_id in groups:
            await uow.groups.add(Group(group_id, f"team {group_id}", ORG, harness.clock.now()))
        await uow.commit()
    sent: list[str] = []
    create = CreateInvitation(  # as the container wires it, with a mail that records the token
        harness.storage, harness.container.bus(), harness.clock,
        harness.container.auth_settings(), harness.container.email_normalizer(),
        lambda _, token: sent.append(token),
    )  # fmt: skip
    me = Principal(admin.id, Role.ORG_ADMIN, ORG)
    view = await create(me, INVITED, "operator", list(groups))
    return view.invitation.id, sent[0]


def _start(harness: Harness) -> LoginStart[str]:
    """The hosted login's start: a hosted session, its cookie the result."""
    return harness.container.hosted_login().start("ua", ADDRESS, None)


async def _state(harness: Harness, invitation_id: str) -> InvitationState:
    async with harness.storage.read() as uow:
        found = await uow.invitations.get(invitation_id)
    assert found is not None
    return found.state


async def test_a_password_acceptance_creates_the_account_and_signs_it_in(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    invitation_id, token = await _invite(harness, "g1", "g2")
    async with harness.storage.begin() as uow:  # a group deleted after the invitation
        assert await uow.groups.delete("g2")
        await uow.commit()
    harness.recorder.events.clear()
    acceptance = harness.container.invitation_acceptance()
    cookie = await acceptance.accept_with_password(token, NEW_PASSWORD, _start(harness))
    assert isinstance(cookie, str) and len(cookie) == 43
    async with harness.storage.read() as uow:
        user = await uow.users.get_by_email(INVITED)
        assert user is not None
        found = await uow.users.get_with_groups(user.id)
    assert (user.role, user.org_id, user.email_verified) == (Role.OPERATOR, ORG, True)
    assert found is not None and found[1] == ["g1"]
    assert await harness.container.hasher().verify(NEW_PASSWORD, user.password_hash)
    kinds = [type(e) for e in harness.recorder.events]
    assert kinds == [UserRegistered, GroupMembershipChanged, InvitationAccepted, LoginSucceeded]
    assert await _state(harness, invitation_id) is InvitationState.ACCEPTED
    with pytest.raises(errors.InvalidInvitation):
        await acceptance.accept_with_password(token, NEW_PASSWORD, _start(harness))


@pytest.mark.parametrize("token", ["", "x" * 129, "unknown-token"])
async def test_a_bad_link_is_one_refusal(tmp_path: Path, token: str) -> None:
    harness = build_harness(tmp_path)
    with pytest.raises(errors.InvalidInvitation):
        await harness.container.invitation_acceptance().open(token)


async def test_the_password_policy_is_checked_first_and_spends_nothing(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    invitation_id, token = await _invite(harness)
    acceptance = harness.container.invitation_acceptance()
    with pytest.raises(errors.ValidationFailed) as raised:
        await acceptance.accept_with_password(token, "short", _start(harness))
    assert [e.field for e in raised.value.errors] == ["password"]
    assert await _state(harness, invitation_id) is InvitationState.PENDING


async def test_an_email_taken_meanwhile_leaves_the_invitation_pending(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    invitation_id, token = await _invite(harness)
    await harness.add_user(INVITED)  # registered after the invitation was sent
    harness.recorder.events.clear()
    with pytest.raises(errors.EmailTaken):
        await harness.container.invitation_acceptance().accept_with_password(
            token, NEW_PASSWORD, _start(harness)
        )
    assert await _state(harness, invitation_id) is InvitationState.PENDING
    assert harness.recorder.events == []


async def test_an_identity_acceptance_creates_the_invited_account_with_the_identity(
    tmp_path: Path,
) -> None:
    harness = build_harness(tmp_path)
    acceptance = harness.container.invitation_acceptance()
    invitation_id, token = await _invite(harness, "g1")
    who = UpstreamIdentity("https://idp.example", "sub-1", "someone.else@example.org")
    await accept_with_identity(acceptance, "idp", who, "someone.else@example.org",
                               acceptance.hash_of(token), _start(harness))  # fmt: skip
    async with harness.storage.read() as uow:
        user = await uow.users.get_by_email(INVITED)
        assert user is not None and user.password_hash == ""
        identities = await uow.identities.list_for_user(user.id)
    assert (user.role, user.email_verified) == (Role.OPERATOR, True)
    assert [(i.subject, i.email, i.email_was_verified) for i in identities] == [
        ("sub-1", "someone.else@example.org", True)]  # fmt: skip
    assert any(isinstance(e, IdentityLinked) and e.how == "invitation"
               for e in harness.recorder.events)  # fmt: skip
    assert await _state(harness, invitation_id) is InvitationState.ACCEPTED


async def test_an_identity_that_has_an_account_cannot_accept(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    other = await harness.add_user("other@example.com")
    async with harness.storage.begin() as uow:
        await uow.identities.add(FederatedIdentity("https://idp.example", "sub-1", "idp",
                                                   other.id, None, harness.clock.now()))  # fmt: skip
        await uow.commit()
    acceptance = harness.container.invitation_acceptance()
    invitation_id, token = await _invite(harness)
    harness.recorder.events.clear()
    who = UpstreamIdentity("https://idp.example", "sub-1", None)
    with pytest.raises(errors.AccountExists):
        await accept_with_identity(acceptance, "idp", who, None, acceptance.hash_of(token),
                                   _start(harness))  # fmt: skip
    assert await _state(harness, invitation_id) is InvitationState.PENDING
    assert harness.recorder.events == []
    async with harness.storage.read() as uow:
        assert await uow.users.get_by_email(INVITED) is None
