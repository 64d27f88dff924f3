"""The groups a SCIM client provisions (RFC 7643 §4.2, RFC 7644 §3; docs/reference/scim.md): the
organization's groups (``docs/reference/accounts.md``) with their members, listed whole and
changed in one unit of work per request, so that a refused request changes nothing.

The rules are those of the JSON API's group routes (``application.accounts.groups``), asked of
``domain.policy`` in the same order: role, organization scope (``NotFound``), a member's
organization; the audit rows are the same (``group.created``, ``group.updated``,
``group.member_added``, ``group.member_removed``), with the SCIM client as actor.
"""

from __future__ import annotations

import attrs

from application.accounts.groups import GroupDetail, Member
from application.events.audit import record
from application.events.catalog import Event, GroupCreated, GroupMembershipChanged, GroupRenamed
from application.ports import Clock, EventBus, Storage, UnitOfWork
from application.shared.checks import check_name
from application.shared.steps import IdFactory, new_id, publish_all
from application.shared.users import user_in_scope
from domain import policy
from domain.errors import FieldError, NotFound, ValidationFailed
from domain.model import Group, GroupSummary
from domain.policy import Operation, Principal
from domain.scim import ScimRecord

__all__ = ["GetScimGroup", "GroupChange", "ListScimGroups", "ScimGroup", "WriteScimGroup"]

_PAGE = 200
_NO_SUCH_MEMBER = "names a user that is not in the organization"


@attrs.frozen
class ScimGroup:
    """A group as SCIM sees it: the group with its members, and the ``externalId`` its SCIM
    client gave it (None: none given)."""

    detail: GroupDetail
    external_id: str | None = None


async def _detail(uow: UnitOfWork, summary: GroupSummary) -> GroupDetail:
    members = await uow.groups.members(summary.group.id)
    return GroupDetail(summary, tuple(Member(u.id, u.email) for u in members))


@attrs.frozen
class ListScimGroups:
    """``await listing(principal)`` → every group of the principal's organization with its
    members, ordered by id (RFC 7644 §3.4.2: the SCIM driver filters and pages them).
    ``Forbidden`` below org_admin."""

    _storage: Storage

    async def __call__(self, principal: Principal) -> list[ScimGroup]:
        """The organization's groups."""
        org = policy.list_scope(principal, Operation.LIST_GROUPS, None)
        found: list[GroupDetail] = []
        after: str | None = None
        async with self._storage.read() as uow:
            records = {} if org is None else await uow.scim.of_org("Group", org)
            while True:
                page = await uow.groups.list_page(org, after, _PAGE)
                found += [await _detail(uow, s) for s in page]
                if len(page) < _PAGE:
                    break
                after = page[-1].group.id
        return [ScimGroup(d, _external_id(records.get(d.group.id))) for d in found]


def _external_id(found: ScimRecord | None) -> str | None:
    return None if found is None else found.external_id


@attrs.frozen
class GetScimGroup:
    """GET /scim/v2/Groups/{id}: ``await get(principal, group_id)`` → ``ScimGroup``.
    ``Forbidden`` below org_admin; ``NotFound`` when missing or of another organization."""

    _storage: Storage

    async def __call__(self, principal: Principal, group_id: str) -> ScimGroup:
        """The group, its members and external id."""
        policy.require(principal, Operation.VIEW_GROUP)
        async with self._storage.read() as uow:
            summary = await uow.groups.get(group_id)
            if summary is None:
                raise NotFound("group not found")
            policy.require_in_scope(principal, summary.group.org_id, "group")
            found = await uow.scim.get("Group", group_id)
            return ScimGroup(await _detail(uow, summary), _external_id(found))


@attrs.frozen
class GroupChange:
    """What one SCIM request changes in a group: a new ``name`` (None: kept); ``members`` (the
    whole new member list, user ids; None: kept), then ``add`` and ``remove`` (user ids);
    ``external_id`` the client's id for it (RFC 7643 §3.1), set as given."""

    name: str | None = None
    members: tuple[str, ...] | None = None
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    external_id: str | None = None


@attrs.frozen
class WriteScimGroup:
    """POST, PUT and PATCH /scim/v2/Groups (RFC 7644 §3.3, §3.5.1, §3.5.2).

    ``await write(principal, None, change)`` creates a group (``change.name`` required) in the
    principal's organization; ``await write(principal, group_id, change)`` changes one. Rules,
    all checked before anything is written: below org_admin → ``Forbidden``; the group, or a
    user named as a member, missing or of another organization → ``NotFound``; a bad name →
    ``ValidationFailed``; a name taken in the organization → ``Conflict``. The group's
    ``externalId`` is set to ``change.external_id``. Returns the ``ScimGroup`` as stored after
    the change.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _ids: IdFactory = new_id

    async def __call__(
        self, principal: Principal, group_id: str | None, change: GroupChange
    ) -> ScimGroup:
        """Create or change the group."""
        name = None if change.name is None else check_name(change.name, "displayName")
        now = self._clock.now()
        events: list[Event] = []
        actor = principal.actor_id
        async with self._storage.begin() as uow:
            if group_id is None:
                org = policy.target_org(principal, Operation.CREATE_GROUP, None)
                if name is None:
                    raise ValidationFailed([FieldError("displayName", "is required")])
                group = Group(id=self._ids(), name=name, org_id=org, created_at=now)
                await uow.groups.add(group)
                events.append(GroupCreated(group.id, org, actor))
                current: set[str] = set()
            else:
                policy.require(principal, Operation.RENAME_GROUP)
                summary = await uow.groups.get(group_id)
                if summary is None:
                    raise NotFound("group not found")
                policy.require_in_scope(principal, summary.group.org_id, "group")
                group = summary.group
                current = {u.id for u in await uow.groups.members(group.id)}
                if name is not None and name != group.name:
                    await uow.groups.rename(group.id, name)
                    events.append(GroupRenamed(group.id, group.org_id, actor))
            wanted = set(current if change.members is None else change.members)
            wanted = (wanted | set(change.add)) - set(change.remove)
            for user_id in sorted(wanted - current):
                try:
                    user = await user_in_scope(uow, principal, user_id)
                except NotFound:
                    raise ValidationFailed([FieldError("members", _NO_SUCH_MEMBER)]) from None
                policy.check_member_org(group, user, "members")
            for user_id in sorted(wanted - current):
                await uow.groups.add_member(group.id, user_id, now)
                events.append(GroupMembershipChanged(group.id, user_id, actor, True, group.org_id))
            for user_id in sorted(current - wanted):
                await uow.groups.remove_member(group.id, user_id)
                events.append(GroupMembershipChanged(group.id, user_id, actor, False, group.org_id))
            await uow.scim.put("Group", ScimRecord(group.id, change.external_id))
            await record(uow, events, now)
            detail = await _detail(uow, (await uow.groups.get(group.id)) or GroupSummary(group, 0))
            await uow.commit()
        await publish_all(self._bus, events)
        return ScimGroup(detail, change.external_id)
