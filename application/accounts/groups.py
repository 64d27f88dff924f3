"""Groups and their members: the use cases of docs/reference/accounts.md on groups.

Each use case is one small class: its ports are injected in ``__init__`` and it runs on
``await use_case(principal, ...)``. Access is decided by ``domain.policy`` only, in its fixed
order: role (``Forbidden``), then organization scope (``NotFound``), then the operation's own
rules. Every change runs in one unit of work with its audit rows (docs/reference/operations.md);
events are published after the commit, never before and never when the unit fails.
"""

from __future__ import annotations

import attrs

from application.events.audit import record
from application.events.catalog import (
    Event,
    GroupCreated,
    GroupDeleted,
    GroupMembershipChanged,
    GroupRenamed,
)
from application.ports import Clock, EventBus, Storage, UnitOfWork
from application.shared.checks import check_name, check_org_id
from application.shared.pagination import Listing
from application.shared.steps import IdFactory, new_id, publish_all
from application.shared.users import user_in_scope
from domain import policy
from domain.errors import NotFound
from domain.model import Group, GroupSummary
from domain.policy import Operation, Principal

__all__ = [
    "AddMember",
    "CreateGroup",
    "DeleteGroup",
    "GetGroup",
    "GroupDetail",
    "ListGroups",
    "Member",
    "RemoveMember",
    "RenameGroup",
]

_GROUP_NOT_FOUND = "group not found"


@attrs.frozen
class Member:
    """A group member as shown in a group: ``{"id", "email"}`` (docs/reference/accounts.md)."""

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


async def _group_in_scope(uow: UnitOfWork, principal: Principal, group_id: str) -> GroupSummary:
    """The group ``group_id``; ``NotFound`` when missing or outside ``principal``'s scope."""
    summary = await uow.groups.get(group_id)
    if summary is None:
        raise NotFound(_GROUP_NOT_FOUND)
    policy.require_in_scope(principal, summary.group.org_id, "group")
    return summary


class ListGroups(Listing[GroupSummary]):
    """GET /groups (docs/reference/accounts.md): every role.

    Rules: viewer, operator and org_admin list their own organization (an ``org_id`` naming
    another → ``NotFound``); a superadmin lists every organization or only ``org_id``. ``limit``
    and ``cursor`` as for users. Returns ``Page[GroupSummary]`` ordered by group id (see
    ``application.shared.pagination.Listing``).
    """

    def __init__(self, storage: Storage) -> None:
        super().__init__(
            storage, "groups", Operation.LIST_GROUPS, lambda uow: uow.groups, lambda s: s.group.id
        )


@attrs.frozen
class GetGroup:
    """GET /groups/{id} (docs/reference/accounts.md): every role.

    Rules: group missing or outside the caller's organization (not superadmin) → ``NotFound``.
    Returns ``GroupDetail`` with the members ordered by id.
    """

    _storage: Storage

    async def __call__(self, principal: Principal, group_id: str) -> GroupDetail:
        """The group ``group_id`` with its members."""
        policy.require(principal, Operation.VIEW_GROUP)
        async with self._storage.begin() as uow:
            summary = await _group_in_scope(uow, principal, group_id)
            members = await uow.groups.members(group_id)
        return GroupDetail(summary, tuple(Member(u.id, u.email) for u in members))


@attrs.frozen
class CreateGroup:
    """POST /groups ``{"name"}`` (+ ``"org_id"`` for superadmin) (docs/reference/accounts.md).

    Rules: viewer/operator → ``Forbidden``; an org_admin creates in its own organization (an
    ``org_id`` naming another → ``NotFound``); a superadmin may name any ``org_id`` and defaults
    to its own. ``name`` is stripped; empty, longer than 100 characters or with control characters
    → ``ValidationFailed`` naming ``name``; a duplicate name in the organization → ``Conflict``.
    Records and publishes ``GroupCreated``. Returns the new ``GroupSummary`` (member count 0).
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _ids: IdFactory = new_id

    async def __call__(
        self, principal: Principal, name: str, org_id: str | None = None
    ) -> GroupSummary:
        """Create the group ``name``."""
        org = policy.target_org(principal, Operation.CREATE_GROUP, org_id)
        name = check_name(name)
        org = check_org_id(org)
        now = self._clock.now()
        group = Group(id=self._ids(), name=name, org_id=org, created_at=now)
        created = GroupCreated(group.id, org, principal.user_id)
        async with self._storage.begin() as uow:
            await uow.groups.add(group)
            await record(uow, [created], now)
            await uow.commit()
        await self._bus.publish(created)
        return GroupSummary(group, 0)


@attrs.frozen
class RenameGroup:
    """PATCH /groups/{id} ``{"name"}`` (docs/reference/accounts.md): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``; group missing or outside an org_admin's organization
    → ``NotFound``; ``name`` as for ``CreateGroup``; a duplicate name → ``Conflict``. A new name
    records and publishes ``GroupRenamed``. Returns the renamed ``GroupSummary``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, group_id: str, name: str) -> GroupSummary:
        """Rename the group ``group_id`` to ``name``."""
        policy.require(principal, Operation.RENAME_GROUP)
        name = check_name(name)
        renamed: list[Event] = []
        async with self._storage.begin() as uow:
            summary = await _group_in_scope(uow, principal, group_id)
            if summary.group.name != name:
                await uow.groups.rename(group_id, name)
                renamed.append(GroupRenamed(group_id, summary.group.org_id, principal.user_id))
                await record(uow, renamed, self._clock.now())
                await uow.commit()
        await publish_all(self._bus, renamed)
        return attrs.evolve(summary, group=attrs.evolve(summary.group, name=name))


@attrs.frozen
class DeleteGroup:
    """DELETE /groups/{id} (docs/reference/accounts.md): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``; group missing or outside an org_admin's organization
    → ``NotFound``. The group and its memberships go in one unit of work; ``GroupDeleted`` and one
    ``GroupMembershipChanged(added=False)`` per former member are recorded with it and published
    after the commit.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, group_id: str) -> None:
        """Delete the group ``group_id``."""
        policy.require(principal, Operation.DELETE_GROUP)
        async with self._storage.begin() as uow:
            summary = await _group_in_scope(uow, principal, group_id)
            org = summary.group.org_id
            members = await uow.groups.members(group_id)
            if not await uow.groups.delete(group_id):
                raise NotFound(_GROUP_NOT_FOUND)
            events: list[Event] = [GroupDeleted(group_id, org, principal.user_id)]
            events += [
                GroupMembershipChanged(group_id, m.id, principal.user_id, False, org)
                for m in members
            ]
            await record(uow, events, self._clock.now())
            await uow.commit()
        await publish_all(self._bus, events)


@attrs.frozen
class AddMember:
    """PUT /groups/{id}/members/{user_id} (docs/reference/accounts.md): org_admin and superadmin.

    Rules, in order: viewer/operator → ``Forbidden``; group missing or outside an org_admin's
    organization → ``NotFound``; user missing or outside an org_admin's organization →
    ``NotFound``; user of another organization than the group's (a superadmin's request) →
    ``ValidationFailed`` naming ``user_id``. Idempotent: returns True when the membership is new,
    and only then publishes ``GroupMembershipChanged(added=True)`` after the commit.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, group_id: str, user_id: str) -> bool:
        """Make ``user_id`` a member of ``group_id``."""
        policy.require(principal, Operation.ADD_MEMBER)
        async with self._storage.begin() as uow:
            summary = await _group_in_scope(uow, principal, group_id)
            user = await user_in_scope(uow, principal, user_id)
            policy.check_member_org(summary.group, user)
            now = self._clock.now()
            added = await uow.groups.add_member(group_id, user_id, now)
            change = GroupMembershipChanged(
                group_id, user_id, principal.user_id, True, summary.group.org_id
            )
            if added:
                await record(uow, [change], now)
                await uow.commit()
        if added:
            await self._bus.publish(change)
        return added


@attrs.frozen
class RemoveMember:
    """DELETE /groups/{id}/members/{user_id} (docs/reference/accounts.md): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden``; group or user missing, or outside an org_admin's
    organization → ``NotFound``. Removing a user who is not a member succeeds and changes nothing.
    Returns True when a membership was removed, and only then publishes
    ``GroupMembershipChanged(added=False)`` after the commit.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, group_id: str, user_id: str) -> bool:
        """End the membership of ``user_id`` in ``group_id``."""
        policy.require(principal, Operation.REMOVE_MEMBER)
        async with self._storage.begin() as uow:
            summary = await _group_in_scope(uow, principal, group_id)
            await user_in_scope(uow, principal, user_id)
            removed = await uow.groups.remove_member(group_id, user_id)
            change = GroupMembershipChanged(
                group_id, user_id, principal.user_id, False, summary.group.org_id
            )
            if removed:
                await record(uow, [change], self._clock.now())
                await uow.commit()
        if removed:
            await self._bus.publish(change)
        return removed
