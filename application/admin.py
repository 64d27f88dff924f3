"""Use cases of users, roles, groups and members (contract section 3), and the operator's CLI.

Each use case is one small class: its ports are injected in ``__init__`` and it runs on
``await use_case(...)``. Access is decided by ``domain.policy`` only, in its fixed order: role
(``Forbidden``), then organization scope (``NotFound``), then the operation's own rules. Every
change runs in one unit of work; events are published after the commit, never before and never
when the unit fails.

Listings are keyset-paginated by id: ``limit`` 1..200 (default 50) and an opaque ``cursor``
(URL-safe base64 of a small JSON object naming the listing and the last id of the previous page).
A page holds rows with ``id > last id``, so rows inserted meanwhile never cause a duplicate or a
gap among the rows that existed when the walk began.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import attrs

from application.events import Event, GroupMembershipChanged, RoleChanged, UserRegistered
from application.ports import Clock, EventBus, Hasher, Transaction, UnitOfWork
from application.settings import AuthSettings, Live
from application.users import new_user
from domain import policy
from domain.errors import FieldError, NotFound, ValidationFailed
from domain.model import Group, GroupSummary, Role, User, check_password_policy
from domain.policy import Operation, Principal

__all__ = [
    "DEFAULT_PAGE_LIMIT",
    "MAX_PAGE_LIMIT",
    "OPERATOR_ACTOR_ID",
    "AddMember",
    "CreateGroup",
    "CreateSuperadmin",
    "DeleteGroup",
    "EmailNormalizer",
    "GetGroup",
    "GetUser",
    "GroupDetail",
    "IdFactory",
    "ListGroups",
    "ListUsers",
    "Member",
    "MoveUser",
    "Page",
    "RemoveMember",
    "RenameGroup",
    "SetOrgByOperator",
    "SetRole",
    "SetRoleByOperator",
    "SuperadminResult",
    "decode_cursor",
    "encode_cursor",
    "new_id",
    "parse_role",
]

T = TypeVar("T")

DEFAULT_PAGE_LIMIT = 50
"""``limit`` when none is given (contract section 3)."""
MAX_PAGE_LIMIT = 200
"""The largest ``limit`` accepted (contract section 3)."""
MAX_NAME_LENGTH = 100
"""The longest group name accepted, in characters."""
MAX_ORG_ID_LENGTH = 128
"""The longest organization id accepted, in characters."""
_MAX_CURSOR_LENGTH = 1024

OPERATOR_ACTOR_ID = "cli"
"""The ``actor_id`` of events caused by the box operator through the ``authsvc`` CLI."""

IdFactory = Callable[[], str]
"""Makes a new unique id (users, groups)."""
EmailNormalizer = Callable[[str], str]
"""Checks an email's syntax and returns its normalized, lower-case form; raises
``ValidationFailed`` naming ``email`` when it is not an email (an adapter wraps the validator)."""


def new_id() -> str:
    """A new random id: 32 lower-case hex characters (UUID4)."""
    return uuid.uuid4().hex


# --------------------------------------------------------------------------- results


@attrs.frozen
class Page(Generic[T]):
    """One page of a keyset listing: ``items`` in id order and ``next_cursor`` (None on the last
    page). Rendered as ``{"items": [...], "next_cursor": str | null}`` (contract section 3)."""

    items: tuple[T, ...]
    next_cursor: str | None


@attrs.frozen
class Member:
    """A group member as shown in a group: ``{"id", "email"}`` (contract section 3)."""

    id: str
    email: str


@attrs.frozen
class GroupDetail:
    """A group with its member count and its members ordered by id (GET /groups/{id}).

    Rendered as ``Group`` + ``"members": [{"id", "email"}, ...]``.
    """

    summary: GroupSummary
    members: tuple[Member, ...]

    @property
    def group(self) -> Group:
        """The group itself."""
        return self.summary.group


@attrs.frozen
class SuperadminResult:
    """The outcome of ``CreateSuperadmin``: the superadmin ``user``; ``created`` is True when the
    user was new, False when an existing user was promoted (or already superadmin)."""

    user: User
    created: bool


# --------------------------------------------------------------------------- input checks


def _invalid(field: str, message: str) -> ValidationFailed:
    return ValidationFailed([FieldError(field, message)])


def parse_role(value: Role | str, field: str = "role") -> Role:
    """The ``Role`` named by ``value`` (``viewer``, ``operator``, ``org_admin``, ``superadmin``).

    Raises ``ValidationFailed`` (422) naming ``field`` for anything else.
    """
    if isinstance(value, Role):
        return value
    try:
        return Role(value)
    except ValueError:
        allowed = ", ".join(r.value for r in Role)
        raise _invalid(field, f"must be one of {allowed}") from None


def _check_limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_PAGE_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise _invalid("limit", "must be an integer")
    if not 1 <= limit <= MAX_PAGE_LIMIT:
        raise _invalid("limit", f"must be between 1 and {MAX_PAGE_LIMIT}")
    return limit


def _is_clean(text: str) -> bool:
    return text == text.strip() and all(ch.isprintable() for ch in text)


def _check_name(name: str, field: str = "name") -> str:
    if not isinstance(name, str) or not name.strip():
        raise _invalid(field, "must not be empty")
    name = name.strip()
    if len(name) > MAX_NAME_LENGTH:
        raise _invalid(field, f"must be at most {MAX_NAME_LENGTH} characters")
    if not all(ch.isprintable() for ch in name):
        raise _invalid(field, "must not contain control characters")
    return name


def _check_org_id(org_id: str, field: str = "org_id") -> str:
    if not isinstance(org_id, str) or not org_id:
        raise _invalid(field, "must not be empty")
    if len(org_id) > MAX_ORG_ID_LENGTH:
        raise _invalid(field, f"must be at most {MAX_ORG_ID_LENGTH} characters")
    if not _is_clean(org_id):
        raise _invalid(field, "must not contain spaces at either end or control characters")
    return org_id


def encode_cursor(listing: str, after: str) -> str:
    """The opaque cursor resuming ``listing`` (``users`` or ``groups``) after id ``after``."""
    raw = json.dumps({"l": listing, "after": after}, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(listing: str, cursor: str, field: str = "cursor") -> str:
    """The last id carried by a cursor of ``listing`` made by ``encode_cursor``.

    Raises ``ValidationFailed`` (422) naming ``field`` for anything that is not such a cursor
    (bad base64 or JSON, another listing's cursor, too long).
    """
    error = _invalid(field, "is not a valid cursor")
    if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR_LENGTH:
        raise error
    try:
        padded = cursor.encode("ascii") + b"=" * (-len(cursor) % 4)
        data = json.loads(base64.b64decode(padded, altchars=b"-_", validate=True))
    except (ValueError, binascii.Error):
        raise error from None
    if not isinstance(data, dict) or data.get("l") != listing:
        raise error
    after = data.get("after")
    if not isinstance(after, str) or not after:
        raise error
    return after


def _paginate(rows: Sequence[T], limit: int, listing: str, key: Callable[[T], str]) -> Page[T]:
    """Rows were fetched with ``limit + 1``: one more than a page tells whether more follow."""
    if len(rows) > limit:
        items = tuple(rows[:limit])
        return Page(items, encode_cursor(listing, key(items[-1])))
    return Page(tuple(rows), None)


# --------------------------------------------------------------------------- shared steps


async def _publish(bus: EventBus, events: Sequence[Event]) -> None:
    for event in events:
        await bus.publish(event)


async def _user_in_scope(tx: Transaction, principal: Principal, user_id: str) -> User:
    """The user ``user_id``; ``NotFound`` when missing or outside ``principal``'s scope."""
    user = await tx.users.get(user_id)
    if user is None:
        raise NotFound("user not found")
    policy.require_in_scope(principal, user.org_id, "user")
    return user


async def _group_in_scope(tx: Transaction, principal: Principal, group_id: str) -> GroupSummary:
    """The group ``group_id``; ``NotFound`` when missing or outside ``principal``'s scope."""
    summary = await tx.groups.get(group_id)
    if summary is None:
        raise NotFound("group not found")
    policy.require_in_scope(principal, summary.group.org_id, "group")
    return summary


async def _change_role(
    tx: Transaction, target: User, new_role: Role, actor_id: str
) -> tuple[User, list[Event]]:
    """Store ``new_role`` on ``target`` (checks already made); no write when unchanged."""
    if target.role is new_role:
        return target, []
    updated = attrs.evolve(target, role=new_role)
    await tx.users.update(updated)
    return updated, [RoleChanged(target.id, actor_id, target.role.value, new_role.value)]


async def _move(
    tx: Transaction, target: User, org_id: str, actor_id: str
) -> tuple[User, list[Event]]:
    """Move ``target`` to ``org_id`` and drop its memberships of its old organization's groups."""
    if target.org_id == org_id:
        return target, []
    old_groups: list[str] = []
    for group_id in await tx.groups.groups_of(target.id):
        summary = await tx.groups.get(group_id)
        if summary is not None and summary.group.org_id == target.org_id:
            old_groups.append(group_id)
    await tx.groups.remove_user_from_org_groups(target.id, target.org_id)
    updated = attrs.evolve(target, org_id=org_id)
    await tx.users.update(updated)
    events: list[Event] = [
        GroupMembershipChanged(group_id, target.id, actor_id, added=False)
        for group_id in old_groups
    ]
    return updated, events


# --------------------------------------------------------------------------- users


class ListUsers:
    """GET /users (contract section 3): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``. An org_admin lists its own organization; an
    ``org_id`` naming another organization → ``NotFound`` (its own is accepted). A superadmin
    lists every organization, or only ``org_id``. ``limit`` 1..200 (default 50) and ``cursor``
    invalid → ``ValidationFailed`` naming the field. Returns ``Page[User]`` ordered by id.
    """

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def __call__(
        self,
        principal: Principal,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        org_id: str | None = None,
    ) -> Page[User]:
        """One page of users visible to ``principal``."""
        scope = policy.list_scope(principal, Operation.LIST_USERS, org_id)
        size = _check_limit(limit)
        after = None if cursor is None else decode_cursor("users", cursor)
        async with self._uow.begin() as tx:
            rows = await tx.users.list_page(scope, after, size + 1)
        return _paginate(rows, size, "users", lambda u: u.id)


class GetUser:
    """GET /users/{id} (contract section 3): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden`` (whatever the id); missing, or outside an org_admin's
    organization → ``NotFound``. Returns the ``User``.
    """

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def __call__(self, principal: Principal, user_id: str) -> User:
        """The user ``user_id``."""
        policy.require(principal, Operation.VIEW_USER)
        async with self._uow.begin() as tx:
            return await _user_in_scope(tx, principal, user_id)


class SetRole:
    """PUT /users/{id}/role (contract section 3): org_admin and superadmin.

    Rules (``domain.policy.check_role_change``): viewer/operator → ``Forbidden``; target missing or
    outside an org_admin's organization → ``NotFound``; an org_admin granting superadmin,
    changing a superadmin or changing its own role → ``Forbidden``; demoting the last superadmin
    → ``LastSuperadmin``; an unknown role → ``ValidationFailed`` naming ``role``. The count of
    superadmins and the change share one unit of work. Setting the role a user already has
    changes nothing and publishes nothing. ``RoleChanged`` is published after the commit.
    Returns the updated ``User``.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus) -> None:
        self._uow = uow
        self._bus = bus

    async def __call__(self, principal: Principal, user_id: str, role: Role | str) -> User:
        """Set ``role`` on the user ``user_id``."""
        policy.require(principal, Operation.SET_ROLE)
        new_role = parse_role(role)
        async with self._uow.begin() as tx:
            target = await tx.users.get(user_id)
            if target is None:
                raise NotFound("user not found")
            superadmins = await tx.users.count_by_role(Role.SUPERADMIN)
            policy.check_role_change(principal, target, new_role, superadmins)
            updated, events = await _change_role(tx, target, new_role, principal.user_id)
            await tx.commit()
        await _publish(self._bus, events)
        return updated


class MoveUser:
    """PATCH /users/{id} ``{"org_id"}`` (contract section 3): superadmin only.

    Rules: any other role → ``Forbidden``; user missing → ``NotFound``; ``org_id`` empty, longer
    than 128 characters, padded with spaces or with control characters → ``ValidationFailed``.
    The move and the removal of the user's memberships of its old organization's groups share one
    unit of work; one ``GroupMembershipChanged(added=False)`` per removed membership is published
    after the commit. Moving to the current organization changes nothing. Returns the ``User``.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus) -> None:
        self._uow = uow
        self._bus = bus

    async def __call__(self, principal: Principal, user_id: str, org_id: str) -> User:
        """Move the user ``user_id`` to ``org_id``."""
        policy.require(principal, Operation.MOVE_USER)
        org_id = _check_org_id(org_id)
        async with self._uow.begin() as tx:
            target = await _user_in_scope(tx, principal, user_id)
            updated, events = await _move(tx, target, org_id, principal.user_id)
            await tx.commit()
        await _publish(self._bus, events)
        return updated


# --------------------------------------------------------------------------- groups


class ListGroups:
    """GET /groups (contract section 3): every role.

    Rules: viewer, operator and org_admin list their own organization (an ``org_id`` naming
    another → ``NotFound``); a superadmin lists every organization or only ``org_id``. ``limit``
    and ``cursor`` as for users. Returns ``Page[GroupSummary]`` ordered by group id.
    """

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def __call__(
        self,
        principal: Principal,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        org_id: str | None = None,
    ) -> Page[GroupSummary]:
        """One page of groups visible to ``principal``."""
        scope = policy.list_scope(principal, Operation.LIST_GROUPS, org_id)
        size = _check_limit(limit)
        after = None if cursor is None else decode_cursor("groups", cursor)
        async with self._uow.begin() as tx:
            rows = await tx.groups.list_page(scope, after, size + 1)
        return _paginate(rows, size, "groups", lambda s: s.group.id)


class GetGroup:
    """GET /groups/{id} (contract section 3): every role.

    Rules: group missing or outside the caller's organization (not superadmin) → ``NotFound``.
    Returns ``GroupDetail`` with the members ordered by id.
    """

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def __call__(self, principal: Principal, group_id: str) -> GroupDetail:
        """The group ``group_id`` with its members."""
        policy.require(principal, Operation.VIEW_GROUP)
        async with self._uow.begin() as tx:
            summary = await _group_in_scope(tx, principal, group_id)
            members = await tx.groups.members(group_id)
        return GroupDetail(summary, tuple(Member(u.id, u.email) for u in members))


class CreateGroup:
    """POST /groups ``{"name"}`` (+ ``"org_id"`` for superadmin) (contract section 3).

    Rules: viewer/operator → ``Forbidden``; an org_admin creates in its own organization (an
    ``org_id`` naming another → ``NotFound``); a superadmin may name any ``org_id`` and defaults
    to its own. ``name`` is stripped; empty, longer than 100 characters or with control characters
    → ``ValidationFailed`` naming ``name``; a duplicate name in the organization → ``Conflict``.
    Returns the new ``GroupSummary`` (member count 0).
    """

    def __init__(self, uow: UnitOfWork, clock: Clock, ids: IdFactory = new_id) -> None:
        self._uow = uow
        self._clock = clock
        self._ids = ids

    async def __call__(
        self, principal: Principal, name: str, org_id: str | None = None
    ) -> GroupSummary:
        """Create the group ``name``."""
        org = policy.target_org(principal, Operation.CREATE_GROUP, org_id)
        name = _check_name(name)
        org = _check_org_id(org)
        group = Group(id=self._ids(), name=name, org_id=org, created_at=self._clock.now())
        async with self._uow.begin() as tx:
            await tx.groups.add(group)
            await tx.commit()
        return GroupSummary(group, 0)


class RenameGroup:
    """PATCH /groups/{id} ``{"name"}`` (contract section 3): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``; group missing or outside an org_admin's organization
    → ``NotFound``; ``name`` as for ``CreateGroup``; a duplicate name → ``Conflict``. Returns the
    renamed ``GroupSummary``.
    """

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def __call__(self, principal: Principal, group_id: str, name: str) -> GroupSummary:
        """Rename the group ``group_id`` to ``name``."""
        policy.require(principal, Operation.RENAME_GROUP)
        name = _check_name(name)
        async with self._uow.begin() as tx:
            summary = await _group_in_scope(tx, principal, group_id)
            if summary.group.name != name:
                await tx.groups.rename(group_id, name)
                await tx.commit()
        return attrs.evolve(summary, group=attrs.evolve(summary.group, name=name))


class DeleteGroup:
    """DELETE /groups/{id} (contract section 3): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``; group missing or outside an org_admin's organization
    → ``NotFound``. The group and its memberships go in one unit of work; one
    ``GroupMembershipChanged(added=False)`` per former member is published after the commit.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus) -> None:
        self._uow = uow
        self._bus = bus

    async def __call__(self, principal: Principal, group_id: str) -> None:
        """Delete the group ``group_id``."""
        policy.require(principal, Operation.DELETE_GROUP)
        async with self._uow.begin() as tx:
            await _group_in_scope(tx, principal, group_id)
            members = await tx.groups.members(group_id)
            if not await tx.groups.delete(group_id):
                raise NotFound("group not found")
            await tx.commit()
        await _publish(
            self._bus,
            [GroupMembershipChanged(group_id, m.id, principal.user_id, False) for m in members],
        )


class AddMember:
    """PUT /groups/{id}/members/{user_id} (contract section 3): org_admin and superadmin.

    Rules, in order: viewer/operator → ``Forbidden``; group missing or outside an org_admin's
    organization → ``NotFound``; user missing or outside an org_admin's organization →
    ``NotFound``; user of another organization than the group's (a superadmin's request) →
    ``ValidationFailed`` naming ``user_id``. Idempotent: returns True when the membership is new,
    and only then publishes ``GroupMembershipChanged(added=True)`` after the commit.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus, clock: Clock) -> None:
        self._uow = uow
        self._bus = bus
        self._clock = clock

    async def __call__(self, principal: Principal, group_id: str, user_id: str) -> bool:
        """Make ``user_id`` a member of ``group_id``."""
        policy.require(principal, Operation.ADD_MEMBER)
        async with self._uow.begin() as tx:
            summary = await _group_in_scope(tx, principal, group_id)
            user = await _user_in_scope(tx, principal, user_id)
            policy.check_member_org(summary.group, user)
            added = await tx.groups.add_member(group_id, user_id, self._clock.now())
            if added:
                await tx.commit()
        if added:
            await self._bus.publish(
                GroupMembershipChanged(group_id, user_id, principal.user_id, True)
            )
        return added


class RemoveMember:
    """DELETE /groups/{id}/members/{user_id} (contract section 3): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``; group or user missing, or outside an org_admin's
    organization → ``NotFound``. Removing a user who is not a member succeeds and changes nothing.
    Returns True when a membership was removed, and only then publishes
    ``GroupMembershipChanged(added=False)`` after the commit.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus) -> None:
        self._uow = uow
        self._bus = bus

    async def __call__(self, principal: Principal, group_id: str, user_id: str) -> bool:
        """End the membership of ``user_id`` in ``group_id``."""
        policy.require(principal, Operation.REMOVE_MEMBER)
        async with self._uow.begin() as tx:
            await _group_in_scope(tx, principal, group_id)
            await _user_in_scope(tx, principal, user_id)
            removed = await tx.groups.remove_member(group_id, user_id)
            if removed:
                await tx.commit()
        if removed:
            await self._bus.publish(
                GroupMembershipChanged(group_id, user_id, principal.user_id, False)
            )
        return removed


# --------------------------------------------------------------------------- operator (CLI)


class CreateSuperadmin:
    """``authsvc create-superadmin --email E`` (contract section 3), run by the box operator.

    ``email`` is normalized by the injected ``EmailNormalizer`` (``ValidationFailed`` naming
    ``email``). An existing user is promoted to superadmin (its password and organization are
    kept; ``password`` is ignored) and ``RoleChanged`` (actor ``"cli"``) is published; an existing
    superadmin is left as it is. Otherwise a user is created with role superadmin in ``org_id``
    (default ``auth.default_org_id``): ``password`` is then required and must pass the password
    policy (``ValidationFailed`` naming ``password``), and ``UserRegistered`` is published.
    Hashing runs outside the unit of work. Returns ``SuperadminResult``.
    """

    def __init__(
        self,
        uow: UnitOfWork,
        bus: EventBus,
        hasher: Hasher,
        clock: Clock,
        settings: Live[AuthSettings],
        normalize_email: EmailNormalizer,
        ids: IdFactory = new_id,
    ) -> None:
        self._uow = uow
        self._bus = bus
        self._hasher = hasher
        self._clock = clock
        self._settings = settings
        self._normalize_email = normalize_email
        self._ids = ids

    async def __call__(
        self, email: str, password: str | None, org_id: str | None = None
    ) -> SuperadminResult:
        """Create or promote the superadmin ``email``."""
        email = self._normalize_email(email)
        org = _check_org_id(org_id) if org_id is not None else None
        promoted = await self._promote(email)
        if promoted is not None:
            return promoted
        settings = self._settings.current
        if password is None:
            raise _invalid("password", "is required to create a user")
        check_password_policy(password, settings.password_min_length)
        user = await new_user(
            user_id=self._ids(),
            email=email,
            password=password,
            role=Role.SUPERADMIN,
            org_id=org or settings.default_org_id,
            hasher=self._hasher,
            clock=self._clock,
        )
        async with self._uow.begin() as tx:
            if await tx.users.get_by_email(email) is None:
                await tx.users.add(user)
                await tx.commit()
                created = True
            else:
                created = False
        if not created:
            # Someone registered this email while the password was being hashed: promote it.
            promoted = await self._promote(email)
            if promoted is None:  # pragma: no cover - would need a user deletion meanwhile
                raise NotFound("user not found")
            return promoted
        await self._bus.publish(UserRegistered(user.id, user.org_id))
        return SuperadminResult(user, True)

    async def _promote(self, email: str) -> SuperadminResult | None:
        async with self._uow.begin() as tx:
            existing = await tx.users.get_by_email(email)
            if existing is None:
                return None
            updated, events = await _change_role(tx, existing, Role.SUPERADMIN, OPERATOR_ACTOR_ID)
            await tx.commit()
        await _publish(self._bus, events)
        return SuperadminResult(updated, False)


class SetRoleByOperator:
    """``authsvc users set-role EMAIL ROLE``, run by the box operator (trusted: no
    principal, no escalation rules).

    Rules: unknown email → ``NotFound``; unknown role → ``ValidationFailed`` naming ``role``;
    demoting the last superadmin → ``LastSuperadmin`` (the count and the change share one unit
    of work). ``RoleChanged`` (actor ``"cli"``) is published after the commit, only on a change.
    Returns the ``User``.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus, normalize_email: EmailNormalizer) -> None:
        self._uow = uow
        self._bus = bus
        self._normalize_email = normalize_email

    async def __call__(self, email: str, role: Role | str) -> User:
        """Set ``role`` on the user ``email``."""
        email = self._normalize_email(email)
        new_role = parse_role(role)
        async with self._uow.begin() as tx:
            target = await tx.users.get_by_email(email)
            if target is None:
                raise NotFound("user not found")
            superadmins = await tx.users.count_by_role(Role.SUPERADMIN)
            policy.check_last_superadmin(target, new_role, superadmins)
            updated, events = await _change_role(tx, target, new_role, OPERATOR_ACTOR_ID)
            await tx.commit()
        await _publish(self._bus, events)
        return updated


class SetOrgByOperator:
    """``authsvc users set-org EMAIL ORG``, run by the box operator (trusted).

    Rules: unknown email → ``NotFound``; a bad ``org_id`` → ``ValidationFailed``. As ``MoveUser``:
    the memberships of the old organization's groups go in the same unit of work, and one
    ``GroupMembershipChanged(added=False)`` (actor ``"cli"``) per removed membership is published
    after the commit. Returns the ``User``.
    """

    def __init__(self, uow: UnitOfWork, bus: EventBus, normalize_email: EmailNormalizer) -> None:
        self._uow = uow
        self._bus = bus
        self._normalize_email = normalize_email

    async def __call__(self, email: str, org_id: str) -> User:
        """Move the user ``email`` to ``org_id``."""
        email = self._normalize_email(email)
        org_id = _check_org_id(org_id)
        async with self._uow.begin() as tx:
            target = await tx.users.get_by_email(email)
            if target is None:
                raise NotFound("user not found")
            updated, events = await _move(tx, target, org_id, OPERATOR_ACTOR_ID)
            await tx.commit()
        await _publish(self._bus, events)
        return updated
