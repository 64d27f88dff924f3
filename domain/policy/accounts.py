"""The rules of the operations on accounts and groups (docs/reference/accounts.md), checked
after the role and the scope: the last superadmin (``check_keeps_a_superadmin``,
``check_last_superadmin``), managing another user (``check_user_management``), escalation
(``check_role_change``) and a member's organization (``check_member_org``).
"""

from __future__ import annotations

from domain.errors import FieldError, Forbidden, LastSuperadmin, ValidationFailed
from domain.model import Group, Role, User
from domain.policy.access import authorize
from domain.policy.actors import Actor, CliOperator, Principal
from domain.policy.operations import Operation

__all__ = [
    "ASSIGNABLE_BY_ORG_ADMIN",
    "check_keeps_a_superadmin",
    "check_last_superadmin",
    "check_member_org",
    "check_role_change",
    "check_user_management",
]

ASSIGNABLE_BY_ORG_ADMIN: frozenset[Role] = frozenset({Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN})
"""The roles an org_admin may set on users of its own organization (docs/reference/accounts.md)."""


def check_keeps_a_superadmin(target: User, superadmin_count: int, change: str) -> None:
    """The last enabled superadmin cannot be demoted, disabled or deleted
    (docs/reference/accounts.md): someone must be able to act across organizations.

    ``superadmin_count`` is the number of enabled superadmins across organizations
    (``UserRepo.count_by_role``), read in the same unit of work as the change; ``change`` names
    it for the message (``"demoted"``, ``"disabled"``, ``"deleted"``). Raises ``LastSuperadmin``
    (409 ``last_superadmin``) when ``target`` is an enabled superadmin and no other would remain.
    Applies to every actor, the box operator's CLI included.
    """
    if target.role is Role.SUPERADMIN and not target.disabled and superadmin_count <= 1:
        raise LastSuperadmin(f"the last superadmin cannot be {change}")


def check_last_superadmin(target: User, new_role: Role, superadmin_count: int) -> None:
    """The last superadmin cannot be demoted (docs/reference/accounts.md):
    ``check_keeps_a_superadmin`` when ``new_role`` is not superadmin. Raises ``LastSuperadmin``."""
    if new_role is not Role.SUPERADMIN:
        check_keeps_a_superadmin(target, superadmin_count, "demoted")


_ON_ANOTHER_USER = frozenset(
    {
        Operation.DISABLE_USER,
        Operation.DELETE_USER,
        Operation.RESET_USER_MFA,
        Operation.LIST_USER_PASSKEYS,
        Operation.DELETE_USER_PASSKEY,
        Operation.UPDATE_PROVISIONED_USER,
    }
)
"""Operations an org_admin may not perform on itself (docs/reference/accounts.md: "not itself";
section 13: its own sign-in factors only through the /me routes, which ask for the password)."""


def check_user_management(actor: Actor, target: User, operation: Operation) -> None:
    """May ``actor`` perform ``operation`` on the account ``target``?
    (docs/reference/tokens-and-sessions.md and docs/reference/accounts.md)

    ``operation`` is ``DISABLE_USER``, ``DELETE_USER``, ``LIST_USER_SESSIONS``,
    ``END_USER_SESSIONS``, ``RESET_USER_MFA``, ``LIST_USER_PASSKEYS``,
    ``DELETE_USER_PASSKEY``, ``SEND_PASSWORD_RESET`` or ``UPDATE_PROVISIONED_USER`` (a SCIM
    client changing a user's email or SCIM attributes, docs/reference/scim.md). In order:

    - ``Forbidden``: the role may not perform it at all (viewer, operator);
    - ``NotFound``: ``target`` lies outside an org_admin's organization;
    - ``Forbidden``: an org_admin disabling, deleting, ending the sessions of, turning off the
      MFA of, listing or deleting the passkeys of, sending a password-reset link to, or
      changing the email of a superadmin (docs/reference/accounts.md and
      docs/reference/mfa-and-passkeys.md), or disabling, deleting, turning off the MFA of or listing
      or deleting the passkeys of itself (it ends its own sessions at /me/sessions, and manages its
      own factors at /me/mfa and /me/passkeys, with its password). A reset link to itself is
      allowed: it goes to its own mailbox.

    A superadmin may act on anyone and so may the command-line operator; the last-superadmin
    rule (``check_keeps_a_superadmin``) is checked by the caller, with the count.
    """
    authorize(actor, operation, target.org_id, "user")
    if isinstance(actor, CliOperator) or actor.is_superadmin:
        return
    if operation in _ON_ANOTHER_USER and target.id == actor.user_id:
        raise Forbidden("an org_admin manages its own account and sign-in factors only through /me")
    if operation is not Operation.LIST_USER_SESSIONS and target.role is Role.SUPERADMIN:
        raise Forbidden(
            "an org_admin may not manage a superadmin's account, sessions or sign-in factors"
        )


def check_role_change(actor: Actor, target: User, new_role: Role, superadmin_count: int) -> None:
    """May ``actor`` set ``new_role`` on ``target``? The escalation rules of
    docs/reference/accounts.md.

    In order:

    - ``Forbidden``: the actor's role may not set roles at all (viewer, operator);
    - ``NotFound``: ``target`` lies outside the actor's organization (not superadmin);
    - ``Forbidden``: an org_admin granting ``superadmin``, changing a superadmin, or changing its
      own role (even to the role it already holds);
    - ``LastSuperadmin``: demoting the last superadmin (``superadmin_count`` as in
      ``check_last_superadmin``).

    A superadmin may set any role on anyone, itself included, and so may the command-line
    operator (``CLI_OPERATOR``); the last-superadmin rule binds both.
    """
    authorize(actor, Operation.SET_ROLE, target.org_id, "user")
    if isinstance(actor, Principal) and not actor.is_superadmin:
        if target.id == actor.user_id:
            raise Forbidden("an org_admin may not change its own role")
        if target.role is Role.SUPERADMIN:
            raise Forbidden("an org_admin may not change a superadmin's role")
        if new_role not in ASSIGNABLE_BY_ORG_ADMIN:
            raise Forbidden(f"an org_admin may not grant the role {new_role.value}")
    check_last_superadmin(target, new_role, superadmin_count)


def check_member_org(group: Group, user: User, field: str = "user_id") -> None:
    """A member added to a group must belong to the group's organization
    (docs/reference/accounts.md).

    Raises ``ValidationFailed`` (422) naming ``field`` otherwise. Call it after the scope checks
    of the group and of the user, so that a caller outside either still gets ``NotFound``.
    """
    if user.org_id != group.org_id:
        raise ValidationFailed(
            [FieldError(field, "the user does not belong to the group's organization")]
        )
