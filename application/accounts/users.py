"""Users: the use cases on users of docs/reference/accounts.md (list, show, set the role) and the
steps they share with ``application.accounts.lifecycle.UpdateUser`` (change the role, move to
another organization); finding a user is ``application.shared.users``.

Each use case is one small class: its ports are injected in ``__init__`` and it runs on
``await use_case(...)``. Access is decided by ``domain.policy`` only, in its fixed order: role
(``Forbidden``), then organization scope (``NotFound``), then the operation's own rules. Every
change runs in one unit of work; events are published after the commit, never before and never
when the unit fails.

``ListUsers`` and ``SetRole`` (and ``application.accounts.lifecycle.UpdateUser``) serve two
actors: a ``Principal`` (over HTTP, naming users by id) and ``domain.policy.CLI_OPERATOR`` (the
command line, naming users ``ByEmail``).
"""

from __future__ import annotations

import attrs

from application.events.audit import record
from application.events.catalog import Event, GroupMembershipChanged, RoleChanged, UserMoved
from application.ports import Clock, EventBus, Storage, UnitOfWork
from application.shared.checks import parse_role
from application.shared.pagination import Listing
from application.shared.steps import publish_all
from application.shared.users import UserRef, load_user, user_in_scope
from domain import policy
from domain.federation import FederatedIdentity
from domain.model import GroupSummary, Role, User
from domain.policy import Actor, Operation, Principal

__all__ = ["GetUser", "ListUsers", "SetRole", "UserDetail", "change_role", "move_to_org"]


async def change_role(
    uow: UnitOfWork, target: User, new_role: Role, actor_id: str
) -> tuple[User, list[Event]]:
    """Store ``new_role`` on ``target`` (checks already made); no write when unchanged.

    Returns the user and the events to publish after the commit (``RoleChanged`` or none).
    """
    if target.role is new_role:
        return target, []
    updated = attrs.evolve(target, role=new_role)
    await uow.users.update(updated)
    return updated, [RoleChanged(target.id, actor_id, target.role.value, new_role.value)]


async def move_to_org(
    uow: UnitOfWork, target: User, org_id: str, actor_id: str
) -> tuple[User, list[Event]]:
    """Move ``target`` to ``org_id`` (checks already made) and drop its memberships of its old
    organization's groups. Returns the user and the events to record and publish (``UserMoved``,
    then a ``GroupMembershipChanged`` per group left)
    after the commit; no write when it is there already."""
    if target.org_id == org_id:
        return target, []
    old_groups: list[str] = []
    for group_id in await uow.groups.groups_of(target.id):
        summary = await uow.groups.get(group_id)
        if summary is not None and summary.group.org_id == target.org_id:
            old_groups.append(group_id)
    await uow.groups.remove_user_from_org_groups(target.id, target.org_id)
    updated = attrs.evolve(target, org_id=org_id)
    await uow.users.update(updated)
    events: list[Event] = [UserMoved(target.id, actor_id, target.org_id, org_id)]
    events += [
        GroupMembershipChanged(group_id, target.id, actor_id, added=False, org_id=target.org_id)
        for group_id in old_groups
    ]
    return updated, events


class ListUsers(Listing[User]):
    """GET /users (docs/reference/accounts.md): org_admin and superadmin; ``authsvc users list``.

    Rules: viewer/operator → ``Forbidden``. An org_admin lists its own organization; an
    ``org_id`` naming another organization → ``NotFound`` (its own is accepted). A superadmin
    (and the command-line operator) lists every organization, or only ``org_id``. ``limit``
    1..200 (default 50) and ``cursor`` invalid → ``ValidationFailed`` naming the field. Returns
    ``Page[User]`` ordered by id (see ``application.shared.pagination.Listing``).
    """

    def __init__(self, storage: Storage) -> None:
        super().__init__(
            storage, "users", Operation.LIST_USERS, lambda uow: uow.users, lambda u: u.id
        )


@attrs.frozen
class UserDetail:
    """One user as the admin console shows it: the ``User``, its ``groups`` (sorted by name)
    and its ``identities`` at other providers (docs/reference/federation.md and
    docs/reference/console.md)."""

    user: User
    groups: list[GroupSummary]
    identities: list[FederatedIdentity]


@attrs.frozen
class GetUser:
    """GET /users/{id} (docs/reference/accounts.md): org_admin and superadmin.

    Rules: viewer/operator → ``Forbidden`` (whatever the id); missing, or outside an org_admin's
    organization → ``NotFound``. Returns the ``User``.
    """

    _storage: Storage

    async def __call__(self, principal: Principal, user_id: str) -> User:
        """The user ``user_id``."""
        policy.require(principal, Operation.VIEW_USER)
        async with self._storage.begin() as uow:
            return await user_in_scope(uow, principal, user_id)

    async def detail(self, principal: Principal, user_id: str) -> UserDetail:
        """The user ``user_id``, the groups it belongs to (by name) and its identities at other
        providers (oldest link first), under the same rules, read in one unit of work (the admin
        console's user page, docs/reference/console.md)."""
        policy.require(principal, Operation.VIEW_USER)
        async with self._storage.begin() as uow:
            user = await user_in_scope(uow, principal, user_id)
            found = [await uow.groups.get(g) for g in await uow.groups.groups_of(user.id)]
            identities = await uow.identities.list_for_user(user.id)
        groups = [g for g in found if g is not None]
        return UserDetail(user, sorted(groups, key=lambda g: g.group.name), identities)


@attrs.frozen
class SetRole:
    """PUT /users/{id}/role (docs/reference/accounts.md): org_admin and superadmin; and the command
    line's ``authsvc users set-role EMAIL ROLE`` (``CLI_OPERATOR``, naming the user ``ByEmail``).

    Rules (``domain.policy.check_role_change``): viewer/operator → ``Forbidden``; target missing or
    outside an org_admin's organization → ``NotFound``; an org_admin granting superadmin,
    changing a superadmin or changing its own role → ``Forbidden`` (no such rule binds a superadmin
    or the command-line operator); demoting the last superadmin → ``LastSuperadmin`` (whoever
    acts); an unknown role → ``ValidationFailed`` naming ``role``. The count of superadmins and
    the change share one unit of work. Setting the role a user already has changes nothing and
    publishes nothing. ``RoleChanged`` (actor: the actor's ``actor_id``) is recorded in the
    audit log with the change (docs/reference/operations.md) and published after the commit. Returns
    the updated ``User``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, user: UserRef, role: Role | str) -> User:
        """Set ``role`` on the user ``user`` (an id, or ``ByEmail``)."""
        policy.require(actor, Operation.SET_ROLE)
        new_role = parse_role(role)
        async with self._storage.begin() as uow:
            target = await load_user(uow, user)
            superadmins = await uow.users.count_by_role(Role.SUPERADMIN)
            policy.check_role_change(actor, target, new_role, superadmins)
            updated, events = await change_role(uow, target, new_role, actor.actor_id)
            await record(uow, events, self._clock.now())
            await uow.commit()
        await publish_all(self._bus, events)
        return updated
