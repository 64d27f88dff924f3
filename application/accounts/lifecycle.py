"""The user lifecycle of docs/reference/accounts.md: disable and enable, move to another
organization, delete — by an administrator (or the operator's command line) — and delete one's own
account.

Access is decided by ``domain.policy`` (``check_user_management``, ``check_keeps_a_superadmin``);
every change runs in one unit of work, checks first, so a refused request changes nothing;
its audit rows (docs/reference/operations.md) commit with it; events are published after the commit.
"""

from __future__ import annotations

import attrs

from application.accounts.users import move_to_org
from application.events.audit import record
from application.events.catalog import Event, SessionEnded, UserDeleted, UserDisabled, UserEnabled
from application.ports import Clock, EventBus, Storage, UnitOfWork
from application.shared.backchannel import queue_logout_notices
from application.shared.checks import check_org_id
from application.shared.reauth import Reauthentication
from application.shared.steps import publish_all
from application.shared.users import UserRef, user_in_scope
from application.shared.voiding import void_outstanding_proofs
from domain import policy
from domain.errors import FieldError, InvalidToken, ValidationFailed
from domain.model import Role, SessionEndReason, User
from domain.policy import Actor, Operation

__all__ = ["DeleteOwnAccount", "DeleteUser", "UpdateUser"]


async def _superadmins(uow: UnitOfWork) -> int:
    return await uow.users.count_by_role(Role.SUPERADMIN)


@attrs.frozen
class UpdateUser:
    """PATCH /users/{id} ``{"disabled": bool}`` and/or ``{"org_id"}`` (docs/reference/accounts.md);
    the command line's ``users disable|enable|set-org EMAIL`` (``CLI_OPERATOR``).

    Rules, all checked before anything changes: neither field → ``ValidationFailed``;
    ``org_id`` needs superadmin (``Forbidden``) and a valid id (``ValidationFailed``);
    ``disabled`` needs org_admin or superadmin (``Forbidden``); a user missing or outside an
    org_admin's organization → ``NotFound``; an org_admin disabling a superadmin or itself →
    ``Forbidden``; disabling the last enabled superadmin → ``LastSuperadmin``.

    Disabling ends every session of the user at once (``UserDisabled``, and ``SessionEnded``
    reason ``disabled`` per session) and voids its reset tokens and ``mfa_token``s (
    docs/reference/accounts.md); enabling publishes ``UserEnabled``; a move drops the
    user's memberships of its old organization's groups (``GroupMembershipChanged``). Setting
    what is already set changes nothing. Returns the ``User``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(
        self,
        actor: Actor,
        user: UserRef,
        *,
        disabled: bool | None = None,
        org_id: str | None = None,
    ) -> User:
        """Disable or enable ``user`` and/or move it to ``org_id``."""
        if disabled is None and org_id is None:
            raise ValidationFailed(
                [
                    FieldError("disabled", "is required unless org_id is given"),
                    FieldError("org_id", "is required unless disabled is given"),
                ]
            )
        if org_id is not None:
            policy.require(actor, Operation.MOVE_USER)
            org_id = check_org_id(org_id)
        if disabled is not None:
            policy.require(actor, Operation.DISABLE_USER)
        events: list[Event] = []
        async with self._storage.begin() as uow:
            target = await user_in_scope(uow, actor, user)
            if disabled is not None:
                policy.check_user_management(actor, target, Operation.DISABLE_USER)
                if disabled and not target.disabled:
                    policy.check_keeps_a_superadmin(target, await _superadmins(uow), "disabled")
            if org_id is not None:
                target, moved = await move_to_org(uow, target, org_id, actor.actor_id)
                events += moved
            if disabled is not None and disabled != target.disabled:
                target = attrs.evolve(target, disabled=disabled)
                await uow.users.update(target)
                if disabled:
                    await void_outstanding_proofs(uow, target.id)
                    await queue_logout_notices(uow, target.id, self._clock.now())
                    events.append(UserDisabled(target.id, actor.actor_id))
                    events += [
                        SessionEnded(target.id, s, SessionEndReason.DISABLED, actor.actor_id)
                        for s in await uow.sessions.end_all(target.id)
                    ]
                else:
                    events.append(UserEnabled(target.id, actor.actor_id))
            await record(uow, events, self._clock.now())
            await uow.commit()
        await publish_all(self._bus, events)
        return target

    async def move(self, actor: Actor, user: UserRef, org_id: str) -> User:
        """``self(actor, user, org_id=org_id)``: the command line's ``users set-org``."""
        return await self(actor, user, org_id=org_id)

    async def set_disabled(self, actor: Actor, user: UserRef, disabled: bool) -> User:
        """``self(actor, user, disabled=disabled)``: ``users disable|enable``."""
        return await self(actor, user, disabled=disabled)


@attrs.frozen
class DeleteUser:
    """DELETE /users/{id} (docs/reference/accounts.md); the command line's ``users delete EMAIL``.

    Rules: viewer/operator → ``Forbidden``; missing or outside an org_admin's organization →
    ``NotFound``; an org_admin deleting a superadmin or itself → ``Forbidden``; the last enabled
    superadmin → ``LastSuperadmin``. Deletes the user with its sessions, refresh tokens and
    memberships (``UserRepo.delete``); its email may register again. Publishes ``UserDeleted``;
    its ``user.deleted`` audit row names the user's organization, so that organization's
    webhooks receive it (docs/reference/webhooks.md). SCIM's ``DELETE /scim/v2/Users/{id}``
    and the console delete through this use case too.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, user: UserRef) -> None:
        """Delete ``user``."""
        policy.require(actor, Operation.DELETE_USER)
        async with self._storage.begin() as uow:
            target = await user_in_scope(uow, actor, user)
            policy.check_user_management(actor, target, Operation.DELETE_USER)
            policy.check_keeps_a_superadmin(target, await _superadmins(uow), "deleted")
            deleted = UserDeleted(target.id, actor.actor_id, target.org_id)
            now = self._clock.now()
            await record(uow, [deleted], now)
            await queue_logout_notices(uow, target.id, now)  # before its sessions go with it
            await uow.users.delete(target.id)
            await uow.commit()
        await self._bus.publish(deleted)


@attrs.frozen
class DeleteOwnAccount:
    """DELETE /me ``{"password"}`` (docs/reference/accounts.md): a user deletes its own account.

    Raises ``RateLimited`` (429) or ``InvalidOldPassword`` (403) for a wrong password
    (``Reauthentication.confirm_password``: a wrong one counts against the login throttle of
    the user and the client address), ``LastSuperadmin`` (409) for the last enabled
    superadmin, ``InvalidToken`` if the user is gone meanwhile. Publishes ``UserDeleted``,
    audited with the user's organization as ``DeleteUser`` does (the account page's deletion
    goes through this use case too).
    """

    _storage: Storage
    _bus: EventBus
    _reauth: Reauthentication
    _clock: Clock

    async def __call__(self, user: User, password: str, client: str) -> None:
        """Delete ``user`` (the caller, as loaded for this request) after checking
        ``password``, sent from ``client`` (the client address)."""
        await self._reauth.confirm_password(user, password, client)
        async with self._storage.begin() as uow:
            current = await uow.users.get(user.id)
            if current is None:
                raise InvalidToken("the token's user no longer exists or is disabled")
            policy.check_keeps_a_superadmin(current, await _superadmins(uow), "deleted")
            deleted = UserDeleted(current.id, current.id, current.org_id)
            now = self._clock.now()
            await record(uow, [deleted], now)
            await queue_logout_notices(uow, current.id, now)  # before its sessions go with it
            await uow.users.delete(current.id)
            await uow.commit()
        await self._bus.publish(deleted)
