"""Who may invite whom (docs/reference/invitations.md), checked like every decision: the role
(``Forbidden``), the organization scope (``NotFound``), then the invitation's own rules — the
escalation rule of a role change (an org_admin grants only ``ASSIGNABLE_BY_ORG_ADMIN``) and
groups of the invitation's organization.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.errors import FieldError, Forbidden, ValidationFailed
from domain.invitations import Invitation
from domain.model import Group, Role
from domain.policy.access import authorize, target_org
from domain.policy.accounts import ASSIGNABLE_BY_ORG_ADMIN
from domain.policy.actors import Actor, CliOperator
from domain.policy.operations import Operation

__all__ = ["check_invitation_change", "check_invitation_groups", "invitation_org"]


def _may_grant(actor: Actor, role: Role) -> bool:
    """The escalation rule of docs/reference/accounts.md: an org_admin grants only
    ``ASSIGNABLE_BY_ORG_ADMIN``; a superadmin and the operator grant any role."""
    return isinstance(actor, CliOperator) or actor.is_superadmin or role in ASSIGNABLE_BY_ORG_ADMIN


def invitation_org(actor: Actor, requested_org_id: str | None, role: Role) -> str:
    """The organization an invitation by ``actor`` goes to (POST /invitations), after the
    checks, in order:

    - ``Forbidden``: the role may not invite (viewer, operator);
    - ``NotFound``: an org_admin naming another organization than its own;
    - ``Forbidden``: an org_admin inviting with a role it may not grant (``superadmin``).

    A superadmin may name any organization and defaults to its own; the operator must name one.
    """
    org = target_org(actor, Operation.CREATE_INVITATION, requested_org_id)
    if not _may_grant(actor, role):
        raise Forbidden(f"an org_admin may not invite with the role {role.value}")
    return org


def check_invitation_groups(
    org_id: str, group_ids: Sequence[str], found: Sequence[Group | None]
) -> None:
    """Every group of an invitation must exist and belong to its organization ``org_id``
    (docs/reference/accounts.md: a member belongs to the group's organization). ``found`` holds
    the group read for each id of ``group_ids`` (None: missing). Raises ``ValidationFailed``
    (422) naming ``group_ids`` for a missing group or one of another organization — the same
    message for both, so that an org_admin learns nothing of other organizations' groups."""
    for group_id, group in zip(group_ids, found, strict=True):
        if group is None or group.org_id != org_id:
            raise ValidationFailed(
                [FieldError("group_ids", f"no group {group_id!r} in the organization")]
            )


def check_invitation_change(actor: Actor, invitation: Invitation, operation: Operation) -> None:
    """May ``actor`` resend or revoke ``invitation`` (``RESEND_INVITATION``,
    ``REVOKE_INVITATION``)? In order: ``Forbidden`` for a role that may not; ``NotFound`` for
    an invitation outside an org_admin's organization; ``Forbidden`` for an org_admin and an
    invitation with a role it may not grant (a superadmin's invitation stays the
    superadmins')."""
    authorize(actor, operation, invitation.org_id, "invitation")
    if not _may_grant(actor, invitation.role):
        raise Forbidden("an org_admin may not manage an invitation with the role superadmin")
