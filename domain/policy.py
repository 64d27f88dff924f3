"""Who may do what: role ranks, organization scope and escalation rules (contract section 3).

Pure functions over domain values: no I/O, nothing but the standard library, attrs and
``domain``. The use cases in ``application.admin`` ask this module; they never decide access
themselves.

The order of the checks is fixed by contract section 3 and is the same everywhere:

1. **Role** (``require``): a role that may never perform an operation gets ``Forbidden`` (403)
   whatever the target, even a target that does not exist.
2. **Scope** (``require_in_scope``): viewer, operator and org_admin see and act only inside their
   own ``org_id``; anything outside gets ``NotFound`` (404), exactly as a missing resource does,
   so existence never leaks. superadmin acts across organizations.
3. **Rules of the operation**: escalation (``check_role_change``), the last superadmin
   (``check_last_superadmin``), a member's organization (``check_member_org``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

import attrs

from domain.errors import FieldError, Forbidden, LastSuperadmin, NotFound, ValidationFailed
from domain.model import Group, Role, User

__all__ = [
    "ASSIGNABLE_BY_ORG_ADMIN",
    "REQUIRED_ROLE",
    "Operation",
    "Principal",
    "authorize",
    "can",
    "check_last_superadmin",
    "check_member_org",
    "check_role_change",
    "in_scope",
    "list_scope",
    "require",
    "require_in_scope",
    "target_org",
]


class Operation(enum.Enum):
    """The operations of contract section 3 that the policy rules on.

    ``LIST_USERS`` GET /users, ``VIEW_USER`` GET /users/{id}, ``SET_ROLE`` PUT /users/{id}/role,
    ``MOVE_USER`` PATCH /users/{id}, ``LIST_GROUPS`` GET /groups, ``VIEW_GROUP`` GET /groups/{id},
    ``CREATE_GROUP`` POST /groups, ``RENAME_GROUP`` PATCH /groups/{id}, ``DELETE_GROUP``
    DELETE /groups/{id}, ``ADD_MEMBER`` PUT /groups/{id}/members/{user_id}, ``REMOVE_MEMBER``
    DELETE /groups/{id}/members/{user_id}.
    """

    LIST_USERS = "list_users"
    VIEW_USER = "view_user"
    SET_ROLE = "set_role"
    MOVE_USER = "move_user"
    LIST_GROUPS = "list_groups"
    VIEW_GROUP = "view_group"
    CREATE_GROUP = "create_group"
    RENAME_GROUP = "rename_group"
    DELETE_GROUP = "delete_group"
    ADD_MEMBER = "add_member"
    REMOVE_MEMBER = "remove_member"


REQUIRED_ROLE: Mapping[Operation, Role] = MappingProxyType(
    {
        Operation.LIST_USERS: Role.ORG_ADMIN,
        Operation.VIEW_USER: Role.ORG_ADMIN,
        Operation.SET_ROLE: Role.ORG_ADMIN,
        Operation.MOVE_USER: Role.SUPERADMIN,
        Operation.LIST_GROUPS: Role.VIEWER,
        Operation.VIEW_GROUP: Role.VIEWER,
        Operation.CREATE_GROUP: Role.ORG_ADMIN,
        Operation.RENAME_GROUP: Role.ORG_ADMIN,
        Operation.DELETE_GROUP: Role.ORG_ADMIN,
        Operation.ADD_MEMBER: Role.ORG_ADMIN,
        Operation.REMOVE_MEMBER: Role.ORG_ADMIN,
    }
)
"""The lowest role allowed each operation (seed.md part 5 table; contract section 3 "Who").

Roles are ranked (``Role.rank``): a role may perform an operation when its rank is at least the
required role's rank.
"""

ASSIGNABLE_BY_ORG_ADMIN: frozenset[Role] = frozenset({Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN})
"""The roles an org_admin may set on users of its own organization (contract section 3)."""


@attrs.frozen
class Principal:
    """The authenticated caller: ``user_id``, ``role`` and ``org_id``.

    Built by the driver (the HTTP bearer middleware) from the caller's user record, so that a
    role change applies to the next request rather than to the next token.
    """

    user_id: str
    role: Role
    org_id: str

    @property
    def is_superadmin(self) -> bool:
        """True for a superadmin, who acts across organizations."""
        return self.role is Role.SUPERADMIN


def can(principal: Principal, operation: Operation) -> bool:
    """True when ``principal``'s role may ever perform ``operation`` (the role check alone)."""
    return principal.role.rank >= REQUIRED_ROLE[operation].rank


def require(principal: Principal, operation: Operation) -> None:
    """The role check of contract section 3, made first.

    Raises ``Forbidden`` (403) when the role may never perform ``operation``, whatever the target.
    """
    if not can(principal, operation):
        raise Forbidden(f"role {principal.role.value} may not {operation.value.replace('_', ' ')}")


def in_scope(principal: Principal, target_org_id: str) -> bool:
    """True when ``target_org_id`` lies inside what ``principal`` may see (contract section 3):
    its own organization, or any organization for a superadmin."""
    return principal.is_superadmin or principal.org_id == target_org_id


def require_in_scope(principal: Principal, target_org_id: str, what: str = "resource") -> None:
    """The organization-scope check of contract section 3, made after ``require``.

    Raises ``NotFound`` (404) when the target lies outside ``principal``'s organization; the
    message is the one a missing resource gets (``"{what} not found"``), so existence never leaks.
    """
    if not in_scope(principal, target_org_id):
        raise NotFound(f"{what} not found")


def authorize(
    principal: Principal, operation: Operation, target_org_id: str, what: str = "resource"
) -> None:
    """``require`` then ``require_in_scope``: may ``principal`` perform ``operation`` on a
    resource of ``target_org_id``?

    Raises ``Forbidden`` (role never allowed) before ``NotFound`` (outside the organization),
    contract section 3.
    """
    require(principal, operation)
    require_in_scope(principal, target_org_id, what)


def list_scope(
    principal: Principal, operation: Operation, requested_org_id: str | None
) -> str | None:
    """The organization filter a listing by ``principal`` runs with (contract section 3).

    ``operation`` is ``LIST_USERS`` or ``LIST_GROUPS``. A superadmin gets ``requested_org_id``
    (None: every organization). Anyone else gets its own ``org_id``; asking for another
    organization is a permitted operation on another organization's resources, so it raises
    ``NotFound`` (404) — the same answer for an organization that exists and one that does not.
    Raises ``Forbidden`` first when the role may not list at all.
    """
    require(principal, operation)
    if principal.is_superadmin:
        return requested_org_id
    if requested_org_id is not None:
        require_in_scope(principal, requested_org_id, "organization")
    return principal.org_id


def target_org(principal: Principal, operation: Operation, requested_org_id: str | None) -> str:
    """The organization a new resource (``CREATE_GROUP``) goes to (contract section 3).

    A superadmin may name any ``requested_org_id`` and defaults to its own. Anyone else gets its
    own organization; naming another raises ``NotFound`` (404). Raises ``Forbidden`` first when
    the role may not perform ``operation``.
    """
    require(principal, operation)
    if requested_org_id is None:
        return principal.org_id
    require_in_scope(principal, requested_org_id, "organization")
    return requested_org_id


def check_last_superadmin(target: User, new_role: Role, superadmin_count: int) -> None:
    """The last superadmin cannot be demoted (contract section 3).

    ``superadmin_count`` is the number of superadmins across organizations, read in the same unit
    of work as the change. Raises ``LastSuperadmin`` (409 ``last_superadmin``) when ``target`` is a
    superadmin, ``new_role`` is not, and no other superadmin would remain. Applies to every
    actor, the box operator's CLI included.
    """
    if target.role is Role.SUPERADMIN and new_role is not Role.SUPERADMIN and superadmin_count <= 1:
        raise LastSuperadmin("the last superadmin cannot be demoted")


def check_role_change(
    actor: Principal, target: User, new_role: Role, superadmin_count: int
) -> None:
    """May ``actor`` set ``new_role`` on ``target``? The escalation rules of contract section 3.

    In order:

    - ``Forbidden``: the actor's role may not set roles at all (viewer, operator);
    - ``NotFound``: ``target`` lies outside the actor's organization (not superadmin);
    - ``Forbidden``: an org_admin granting ``superadmin``, changing a superadmin, or changing its
      own role (even to the role it already holds);
    - ``LastSuperadmin``: demoting the last superadmin (``superadmin_count`` as in
      ``check_last_superadmin``).

    A superadmin may set any role on anyone, itself included, but for the last-superadmin rule.
    """
    authorize(actor, Operation.SET_ROLE, target.org_id, "user")
    if not actor.is_superadmin:
        if target.id == actor.user_id:
            raise Forbidden("an org_admin may not change its own role")
        if target.role is Role.SUPERADMIN:
            raise Forbidden("an org_admin may not change a superadmin's role")
        if new_role not in ASSIGNABLE_BY_ORG_ADMIN:
            raise Forbidden(f"an org_admin may not grant the role {new_role.value}")
    check_last_superadmin(target, new_role, superadmin_count)


def check_member_org(group: Group, user: User, field: str = "user_id") -> None:
    """A member added to a group must belong to the group's organization (contract section 3).

    Raises ``ValidationFailed`` (422) naming ``field`` otherwise. Call it after the scope checks
    of the group and of the user, so that a caller outside either still gets ``NotFound``.
    """
    if user.org_id != group.org_id:
        raise ValidationFailed(
            [FieldError(field, "the user does not belong to the group's organization")]
        )
