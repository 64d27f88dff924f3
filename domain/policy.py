"""Who may do what: role ranks, organization scope and escalation rules
(docs/reference/accounts.md), and access to the actuator (docs/reference/operations.md). Whether
a user who proved who it is may log in, and what a federated identity becomes, are the login
rules of ``domain.login``.

Pure functions over domain values: no I/O, nothing but the standard library, attrs and
``domain``. The use cases in ``application`` (users, groups, operator) and the actuator's
authorizer (``entrypoints.http.actuator_routes``) ask this module; they never decide access
themselves.

The acting party (``Actor``) is a ``Principal`` (an authenticated caller, over HTTP) or
``CLI_OPERATOR``, the box operator at the command line: trusted, it passes the role and scope
checks and no escalation rule binds it, but the last superadmin stays (``check_last_superadmin``).

The order of the checks is fixed (docs/reference/accounts.md) and the same everywhere:

1. **Role** (``require``): a role that may never perform an operation gets ``Forbidden`` (403)
   whatever the target, even a target that does not exist.
2. **Scope** (``require_in_scope``): viewer, operator and org_admin see and act only inside their
   own ``org_id``; anything outside gets ``NotFound`` (404), exactly as a missing resource does,
   so existence never leaks. superadmin acts across organizations.
3. **Rules of the operation**: escalation (``check_role_change``), the last superadmin
   (``check_last_superadmin``), a member's organization (``check_member_org``), a client's
   audiences and scopes (``check_client_resources``), its first-party fields
   (``check_first_party_fields``).

Rules of sign-in through a code-flow client (OpenID Connect Core 1.0 §3.1.2.4): whom it admits
(``client_admits_user``) and when its consent page is skipped (``consent_skippable``).

Actuator operations (``ActuatorOperation``) act on the service, not on an organization's
resources: only the role check applies (``can`` / ``require``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeAlias

import attrs

from domain.clients import Client, Resource, check_resources_of_org
from domain.errors import (
    FieldError,
    Forbidden,
    LastSuperadmin,
    NotFound,
    ValidationFailed,
)
from domain.model import Group, Role, User

__all__ = [
    "ACTUATOR_REQUIRED_ROLE",
    "ASSIGNABLE_BY_ORG_ADMIN",
    "CLI_OPERATOR",
    "FIRST_PARTY_FIELDS",
    "OPERATOR_ACTOR_ID",
    "REQUIRED_ROLE",
    "Actor",
    "ActuatorOperation",
    "AnyOperation",
    "CliOperator",
    "Operation",
    "Principal",
    "authorize",
    "can",
    "check_client_resources",
    "check_first_party_fields",
    "check_keeps_a_superadmin",
    "check_last_superadmin",
    "check_member_org",
    "check_role_change",
    "check_user_management",
    "client_admits_user",
    "consent_skippable",
    "in_scope",
    "list_scope",
    "may_set_first_party_fields",
    "require",
    "require_in_scope",
    "required_role",
    "target_org",
]


class Operation(enum.Enum):
    """The operations of docs/reference/accounts.md that the policy rules on.

    ``LIST_USERS`` GET /users, ``VIEW_USER`` GET /users/{id}, ``SET_ROLE`` PUT /users/{id}/role,
    ``MOVE_USER`` PATCH /users/{id} ``{"org_id"}``, ``DISABLE_USER`` PATCH /users/{id}
    ``{"disabled"}``, ``DELETE_USER`` DELETE /users/{id}, ``LIST_USER_SESSIONS`` GET
    /users/{id}/sessions, ``END_USER_SESSIONS`` DELETE /users/{id}/sessions, ``RESET_USER_MFA``
    DELETE /users/{id}/mfa (docs/reference/mfa-and-passkeys.md), ``LIST_GROUPS``
    GET /groups, ``VIEW_GROUP`` GET /groups/{id},
    ``CREATE_GROUP`` POST /groups, ``RENAME_GROUP`` PATCH /groups/{id}, ``DELETE_GROUP``
    DELETE /groups/{id}, ``ADD_MEMBER`` PUT /groups/{id}/members/{user_id}, ``REMOVE_MEMBER``
    DELETE /groups/{id}/members/{user_id}, ``LIST_AUDIT_EVENTS`` GET /audit-events (
    docs/reference/operations.md); OAuth clients (docs/reference/oauth-and-oidc.md):
    ``LIST_CLIENTS`` GET /oauth/clients, ``VIEW_CLIENT`` GET /oauth/clients/{id}, ``CREATE_CLIENT``
    POST /oauth/clients, ``UPDATE_CLIENT`` PATCH, ``DELETE_CLIENT`` DELETE /oauth/clients/{id},
    ``ROTATE_CLIENT_SECRET`` POST /oauth/clients/{id}/secret; passkeys
    (docs/reference/mfa-and-passkeys.md): ``LIST_USER_PASSKEYS`` GET /users/{id}/passkeys,
    ``DELETE_USER_PASSKEY`` DELETE /users/{id}/passkeys/{pid}; the admin console
    (docs/reference/console.md): ``USE_ADMIN_CONSOLE`` any page of /ui/admin, ``VIEW_DASHBOARD`` its
    dashboard's counts, ``VIEW_SIGNING_KEYS`` the dashboard's signing keys and their algorithms.
    """

    LIST_USERS = "list_users"
    VIEW_USER = "view_user"
    SET_ROLE = "set_role"
    MOVE_USER = "move_user"
    DISABLE_USER = "disable_user"
    DELETE_USER = "delete_user"
    LIST_USER_SESSIONS = "list_user_sessions"
    END_USER_SESSIONS = "end_user_sessions"
    RESET_USER_MFA = "reset_user_mfa"
    LIST_GROUPS = "list_groups"
    VIEW_GROUP = "view_group"
    CREATE_GROUP = "create_group"
    RENAME_GROUP = "rename_group"
    DELETE_GROUP = "delete_group"
    ADD_MEMBER = "add_member"
    REMOVE_MEMBER = "remove_member"
    LIST_AUDIT_EVENTS = "list_audit_events"
    LIST_CLIENTS = "list_clients"
    VIEW_CLIENT = "view_client"
    CREATE_CLIENT = "create_client"
    UPDATE_CLIENT = "update_client"
    DELETE_CLIENT = "delete_client"
    ROTATE_CLIENT_SECRET = "rotate_client_secret"  # noqa: S105 - an operation name
    LIST_USER_PASSKEYS = "list_user_passkeys"
    DELETE_USER_PASSKEY = "delete_user_passkey"
    USE_ADMIN_CONSOLE = "use_admin_console"
    VIEW_DASHBOARD = "view_dashboard"
    VIEW_SIGNING_KEYS = "view_signing_keys"


REQUIRED_ROLE: Mapping[Operation, Role] = MappingProxyType(
    {
        Operation.LIST_USERS: Role.ORG_ADMIN,
        Operation.VIEW_USER: Role.ORG_ADMIN,
        Operation.SET_ROLE: Role.ORG_ADMIN,
        Operation.MOVE_USER: Role.SUPERADMIN,
        Operation.DISABLE_USER: Role.ORG_ADMIN,
        Operation.DELETE_USER: Role.ORG_ADMIN,
        Operation.LIST_USER_SESSIONS: Role.ORG_ADMIN,
        Operation.END_USER_SESSIONS: Role.ORG_ADMIN,
        Operation.RESET_USER_MFA: Role.ORG_ADMIN,
        Operation.LIST_GROUPS: Role.VIEWER,
        Operation.VIEW_GROUP: Role.VIEWER,
        Operation.CREATE_GROUP: Role.ORG_ADMIN,
        Operation.RENAME_GROUP: Role.ORG_ADMIN,
        Operation.DELETE_GROUP: Role.ORG_ADMIN,
        Operation.ADD_MEMBER: Role.ORG_ADMIN,
        Operation.REMOVE_MEMBER: Role.ORG_ADMIN,
        Operation.LIST_AUDIT_EVENTS: Role.ORG_ADMIN,
        Operation.LIST_CLIENTS: Role.ORG_ADMIN,
        Operation.VIEW_CLIENT: Role.ORG_ADMIN,
        Operation.CREATE_CLIENT: Role.ORG_ADMIN,
        Operation.UPDATE_CLIENT: Role.ORG_ADMIN,
        Operation.DELETE_CLIENT: Role.ORG_ADMIN,
        Operation.ROTATE_CLIENT_SECRET: Role.ORG_ADMIN,
        Operation.LIST_USER_PASSKEYS: Role.ORG_ADMIN,
        Operation.DELETE_USER_PASSKEY: Role.ORG_ADMIN,
        Operation.USE_ADMIN_CONSOLE: Role.ORG_ADMIN,
        Operation.VIEW_DASHBOARD: Role.ORG_ADMIN,
        Operation.VIEW_SIGNING_KEYS: Role.SUPERADMIN,
    }
)
"""The lowest role allowed each operation (docs/reference/accounts.md "Who").

Roles are ranked (``Role.rank``): a role may perform an operation when its rank is at least the
required role's rank.
"""


class ActuatorOperation(enum.Enum):
    """The actuator's protected operations (docs/reference/operations.md), ruled on by role alone.

    ``SEE_HEALTH_DETAILS`` components and details of GET /actuator/health (and /health/ready)
    under ``actuator.show_details = "when_authorized"``; ``READ_METRICS`` GET /actuator/metrics
    when ``actuator.metrics_require_auth``; ``REFRESH_CONFIGURATION`` POST /actuator/refresh.
    """

    SEE_HEALTH_DETAILS = "see_health_details"
    READ_METRICS = "read_metrics"
    REFRESH_CONFIGURATION = "refresh_configuration"


ACTUATOR_REQUIRED_ROLE: Mapping[ActuatorOperation, Role] = MappingProxyType(
    {
        ActuatorOperation.SEE_HEALTH_DETAILS: Role.ORG_ADMIN,
        ActuatorOperation.READ_METRICS: Role.VIEWER,
        ActuatorOperation.REFRESH_CONFIGURATION: Role.SUPERADMIN,
    }
)
"""The lowest role allowed each actuator operation (docs/reference/operations.md: details for
org_admin and superadmin, refresh for superadmin, metrics — when protected — for any authenticated
user).
"""

ASSIGNABLE_BY_ORG_ADMIN: frozenset[Role] = frozenset({Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN})
"""The roles an org_admin may set on users of its own organization (docs/reference/accounts.md)."""


@attrs.frozen
class Principal:
    """The authenticated caller: ``user_id``, ``role`` and ``org_id``.

    Built by the driver (``entrypoints.http.caller``) from the caller's user record
    (``Principal.of``), so that a role change applies to the next request rather than to the
    next token.
    """

    user_id: str
    role: Role
    org_id: str

    @classmethod
    def of(cls, user: User) -> Principal:
        """The principal acting as ``user`` (its id, role and organization as stored now)."""
        return cls(user_id=user.id, role=user.role, org_id=user.org_id)

    @property
    def is_superadmin(self) -> bool:
        """True for a superadmin, who acts across organizations."""
        return self.role is Role.SUPERADMIN

    @property
    def actor_id(self) -> str:
        """The ``actor_id`` of the events this caller causes: its ``user_id``."""
        return self.user_id


OPERATOR_ACTOR_ID = "cli"
"""The ``actor_id`` of events caused by the box operator through the ``authsvc`` command line."""


@attrs.frozen
class CliOperator:
    """The box operator acting through the ``authsvc`` command line (``CLI_OPERATOR``).

    Trusted: it may perform every operation on every organization and no escalation rule binds it;
    the last-superadmin rule still does. It has no user record, role or organization.
    """

    @property
    def actor_id(self) -> str:
        """The ``actor_id`` of the events the operator causes: ``OPERATOR_ACTOR_ID``."""
        return OPERATOR_ACTOR_ID


CLI_OPERATOR = CliOperator()
"""The command-line operator."""

Actor: TypeAlias = Principal | CliOperator
"""Who acts: an authenticated ``Principal`` or the command-line ``CLI_OPERATOR``."""


AnyOperation: TypeAlias = Operation | ActuatorOperation
"""An operation the policy rules on: on an organization's resources, or on the actuator."""


def required_role(operation: AnyOperation) -> Role:
    """The lowest role allowed ``operation`` (``REQUIRED_ROLE`` or ``ACTUATOR_REQUIRED_ROLE``)."""
    if isinstance(operation, ActuatorOperation):
        return ACTUATOR_REQUIRED_ROLE[operation]
    return REQUIRED_ROLE[operation]


def can(actor: Actor, operation: AnyOperation) -> bool:
    """True when ``actor`` may ever perform ``operation`` (the role check alone): a principal
    whose role ranks high enough, or the operator. For an ``ActuatorOperation`` this is the
    whole decision."""
    return isinstance(actor, CliOperator) or actor.role.rank >= required_role(operation).rank


def require(actor: Actor, operation: AnyOperation) -> None:
    """The role check of docs/reference/accounts.md, made first (and the only check of an
    ``ActuatorOperation``, docs/reference/operations.md).

    Raises ``Forbidden`` (403) when the role may never perform ``operation``, whatever the target.
    The operator always passes.
    """
    if isinstance(actor, Principal) and not can(actor, operation):
        raise Forbidden(f"role {actor.role.value} may not {operation.value.replace('_', ' ')}")


def in_scope(actor: Actor, target_org_id: str) -> bool:
    """True when ``target_org_id`` lies inside what ``actor`` may see (docs/reference/accounts.md):
    its own organization, or any organization for a superadmin and for the operator."""
    return isinstance(actor, CliOperator) or actor.is_superadmin or actor.org_id == target_org_id


def require_in_scope(actor: Actor, target_org_id: str, what: str = "resource") -> None:
    """The organization-scope check of docs/reference/accounts.md, made after ``require``.

    Raises ``NotFound`` (404) when the target lies outside ``actor``'s organization; the
    message is the one a missing resource gets (``"{what} not found"``), so existence never leaks.
    """
    if not in_scope(actor, target_org_id):
        raise NotFound(f"{what} not found")


def authorize(
    actor: Actor, operation: Operation, target_org_id: str, what: str = "resource"
) -> None:
    """``require`` then ``require_in_scope``: may ``actor`` perform ``operation`` on a
    resource of ``target_org_id``?

    Raises ``Forbidden`` (role never allowed) before ``NotFound`` (outside the organization),
    docs/reference/accounts.md.
    """
    require(actor, operation)
    require_in_scope(actor, target_org_id, what)


def list_scope(actor: Actor, operation: Operation, requested_org_id: str | None) -> str | None:
    """The organization filter a listing by ``actor`` runs with (docs/reference/accounts.md).

    ``operation`` is one of the ``LIST_*`` operations. A superadmin or
    the operator gets ``requested_org_id`` (None: every organization). Anyone else gets its own
    ``org_id``; asking for another organization is a permitted operation on another
    organization's resources, so it raises ``NotFound`` (404) — the same answer for an
    organization that exists and one that does not. Raises ``Forbidden`` first when the role
    may not list at all.
    """
    require(actor, operation)
    if isinstance(actor, CliOperator) or actor.is_superadmin:
        return requested_org_id
    if requested_org_id is not None:
        require_in_scope(actor, requested_org_id, "organization")
    return actor.org_id


def target_org(actor: Actor, operation: Operation, requested_org_id: str | None) -> str:
    """The organization a new resource (``CREATE_GROUP``, ``CREATE_CLIENT``) goes to (
    docs/reference/accounts.md).

    A superadmin may name any ``requested_org_id`` and defaults to its own; the command-line
    operator must name one (``ValidationFailed`` naming ``org_id`` otherwise). Anyone else gets
    its own organization; naming another raises ``NotFound`` (404). Raises ``Forbidden`` first
    when the role may not perform ``operation``.
    """
    require(actor, operation)
    if isinstance(actor, CliOperator):
        if requested_org_id is None:
            raise ValidationFailed([FieldError("org_id", "must be given on the command line")])
        return requested_org_id
    if requested_org_id is None:
        return actor.org_id
    require_in_scope(actor, requested_org_id, "organization")
    return requested_org_id


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
    }
)
"""Operations an org_admin may not perform on itself (docs/reference/accounts.md: "not itself";
section 13: its own sign-in factors only through the /me routes, which ask for the password)."""


def check_user_management(actor: Actor, target: User, operation: Operation) -> None:
    """May ``actor`` perform ``operation`` on the account ``target``?
    (docs/reference/tokens-and-sessions.md and docs/reference/accounts.md)

    ``operation`` is ``DISABLE_USER``, ``DELETE_USER``, ``LIST_USER_SESSIONS``,
    ``END_USER_SESSIONS``, ``RESET_USER_MFA``, ``LIST_USER_PASSKEYS`` or
    ``DELETE_USER_PASSKEY``. In order:

    - ``Forbidden``: the role may not perform it at all (viewer, operator);
    - ``NotFound``: ``target`` lies outside an org_admin's organization;
    - ``Forbidden``: an org_admin disabling, deleting, ending the sessions of, turning off the
      MFA of, or listing or deleting the passkeys of a superadmin (docs/reference/accounts.md and
      docs/reference/mfa-and-passkeys.md), or disabling, deleting, turning off the MFA of or listing
      or deleting the passkeys of itself (it ends its own sessions at /me/sessions, and manages its
      own factors at /me/mfa and /me/passkeys, with its password).

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


def check_client_resources(
    actor: Actor,
    org_id: str,
    audience: tuple[str, ...],
    scopes: tuple[str, ...],
    resources: tuple[Resource, ...],
    shared_audience: str,
    shared_scopes: tuple[str, ...] = (),
) -> None:
    """May ``actor`` give a client of ``org_id`` these ``audience`` and ``scopes``? (tenants'
    audiences, docs/adr/0026 and docs/adr/0036). Call it after the role and scope checks.

    A superadmin and the command-line operator may name any audience and scope. Anyone else
    (an org_admin) only ``shared_audience`` (``auth.audience``, then with ``shared_scopes``,
    ``oauth.shared_scopes``, alone) and the ``resources`` (``oauth.resources``) of ``org_id``
    or shared by every organization, with scopes among theirs
    (``domain.clients.check_resources_of_org``), so it can never mint tokens for another
    tenant's API, nor tokens of the shared audience with scopes of its choosing. Raises
    ``ValidationFailed`` (422) naming ``audience`` or ``scopes``.
    """
    if isinstance(actor, CliOperator) or actor.is_superadmin:
        return
    check_resources_of_org(org_id, audience, scopes, resources, shared_audience, shared_scopes)


FIRST_PARTY_FIELDS = ("skip_consent", "all_organizations")
"""The client fields only a superadmin or the command line may set: they make a client trusted
beyond its organization's own say (no consent page; users of every organization)."""


def may_set_first_party_fields(actor: Actor) -> bool:
    """Whether ``actor`` may set ``FIRST_PARTY_FIELDS``: a superadmin or the operator."""
    return isinstance(actor, CliOperator) or actor.is_superadmin


def check_first_party_fields(actor: Actor, fields: Mapping[str, object]) -> None:
    """A registration or change by ``actor`` carrying any of ``FIRST_PARTY_FIELDS`` (a key of
    ``fields`` whose value is not None, true or false alike) is refused unless the actor is a
    superadmin or the operator: ``Forbidden`` (403). An org_admin's app is not first-party for
    the other tenants (RFC 9700 §4.15; OpenID Connect Core 1.0 §3.1.2.4). Call it right after
    the role check (``require``), before the target's organization and the values are checked.
    """
    carried = [f for f in FIRST_PARTY_FIELDS if fields.get(f) is not None]
    if carried and not may_set_first_party_fields(actor):
        raise Forbidden(f"only a superadmin or the command line may set {', '.join(carried)}")


def client_admits_user(client: Client, user: User) -> bool:
    """Whether the code-flow ``client`` may sign ``user`` in (issue a code for it): a user of
    the client's own organization, or anyone when the client has ``all_organizations``. A
    tenant's app never learns who the other tenants' users are, superadmins included (OpenID
    Connect Core 1.0 §3.1.2.4; the refusal is ``access_denied``, RFC 6749 §4.1.2.1)."""
    return client.all_organizations or user.org_id == client.org_id


def consent_skippable(client: Client, user: User) -> bool:
    """Whether ``client``'s ``skip_consent`` spares ``user`` the consent page: only for users of
    the client's own organization, for whom it is first-party; everyone else is asked
    (OpenID Connect Core 1.0 §3.1.2.4)."""
    return client.skip_consent and user.org_id == client.org_id
