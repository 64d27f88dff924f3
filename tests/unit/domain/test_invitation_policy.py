"""domain.policy's invitation rules (docs/reference/invitations.md): no escalation through an
invitation (an org_admin grants only what a role change lets it grant), its own organization
only, groups of the invitation's organization; and an invitation's status derived from time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from domain import policy
from domain.errors import Forbidden, NotFound, ValidationFailed
from domain.invitations import Invitation, InvitationState, InvitationStatus
from domain.model import Group, Role
from domain.policy import CLI_OPERATOR, Operation, Principal

NOW = datetime(2026, 1, 1, tzinfo=UTC)
ADMIN = Principal("admin", Role.ORG_ADMIN, "acme")
ROOT = Principal("root", Role.SUPERADMIN, "default")


def _invitation(role: Role = Role.VIEWER, org: str = "acme") -> Invitation:
    return Invitation("i", org, "new@example.com", role, (), "admin", NOW,
                      NOW + timedelta(days=7), "0" * 64)  # fmt: skip


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
def test_an_org_admin_invites_into_its_org_with_the_roles_it_may_grant(role: Role) -> None:
    assert policy.invitation_org(ADMIN, None, role) == "acme"
    assert policy.invitation_org(ADMIN, "acme", role) == "acme"
    assert role in policy.ASSIGNABLE_BY_ORG_ADMIN  # the same rule as a role change


def test_an_org_admin_may_not_invite_a_superadmin() -> None:
    with pytest.raises(Forbidden):
        policy.invitation_org(ADMIN, None, Role.SUPERADMIN)


def test_an_org_admin_gets_not_found_for_another_org_before_the_role_rule() -> None:
    for role in Role:
        with pytest.raises(NotFound):
            policy.invitation_org(ADMIN, "globex", role)


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
def test_viewer_and_operator_may_not_invite_at_all(role: Role) -> None:
    for org in (None, "acme", "globex"):
        with pytest.raises(Forbidden):
            policy.invitation_org(Principal("x", role, "acme"), org, Role.VIEWER)


def test_a_superadmin_and_the_operator_invite_anyone_anywhere() -> None:
    assert policy.invitation_org(ROOT, "globex", Role.SUPERADMIN) == "globex"
    assert policy.invitation_org(ROOT, None, Role.SUPERADMIN) == "default"
    assert policy.invitation_org(CLI_OPERATOR, "globex", Role.SUPERADMIN) == "globex"
    with pytest.raises(ValidationFailed):
        policy.invitation_org(CLI_OPERATOR, None, Role.VIEWER)


def test_groups_must_exist_in_the_invitations_org_with_one_message() -> None:
    ours = Group("g1", "team", "acme", NOW)
    theirs = Group("g2", "team", "globex", NOW)
    policy.check_invitation_groups("acme", ["g1"], [ours])
    messages = []
    for group_id, found in (("g2", theirs), ("g3", None)):
        with pytest.raises(ValidationFailed) as raised:
            policy.check_invitation_groups("acme", ["g1", group_id], [ours, found])
        assert [e.field for e in raised.value.errors] == ["group_ids"]
        messages.append(raised.value.errors[0].message.replace(group_id, "?"))
    assert messages[0] == messages[1]  # a foreign group reads like a missing one


@pytest.mark.parametrize("op", [Operation.RESEND_INVITATION, Operation.REVOKE_INVITATION])
def test_an_org_admin_manages_its_orgs_invitations_but_not_a_superadmins(op: Operation) -> None:
    policy.check_invitation_change(ADMIN, _invitation(Role.ORG_ADMIN), op)
    with pytest.raises(Forbidden):
        policy.check_invitation_change(ADMIN, _invitation(Role.SUPERADMIN), op)
    with pytest.raises(NotFound):
        policy.check_invitation_change(ADMIN, _invitation(org="globex"), op)
    with pytest.raises(Forbidden):
        policy.check_invitation_change(Principal("v", Role.OPERATOR, "acme"), _invitation(), op)
    policy.check_invitation_change(ROOT, _invitation(Role.SUPERADMIN, "globex"), op)


def test_status_derives_expired_from_the_time_only_for_a_pending_invitation() -> None:
    made = _invitation()
    end = made.expires_at
    assert made.status(end - timedelta(microseconds=1)) is InvitationStatus.PENDING
    assert made.is_open(end - timedelta(microseconds=1))
    assert made.status(end) is InvitationStatus.EXPIRED and not made.is_open(end)
    for state in (InvitationState.ACCEPTED, InvitationState.REVOKED):
        done = attrs.evolve(made, state=state)
        assert done.status(NOW).value == state.value == done.status(end).value
        assert not done.is_open(NOW)


def test_the_token_hash_is_not_in_the_repr() -> None:
    assert "0" * 64 not in repr(_invitation())
