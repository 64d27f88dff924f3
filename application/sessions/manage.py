"""Sessions a user can see and end, and an administrator's view of a user's sessions
(docs/reference/tokens-and-sessions.md). A session is one refresh-token family
(``domain.model.Session``).

Each use case is one small class run by ``await use_case(...)``. The caller's own sessions need
no role; another user's go through ``domain.policy.check_user_management`` (role, then
organization scope, then "not a superadmin's"). Ending sessions runs in one unit of work with
its audit rows (docs/reference/operations.md) and publishes one ``SessionEnded`` per session after
the commit.
"""

from __future__ import annotations

import attrs

from application.events.audit import record
from application.events.catalog import SessionEnded
from application.ports import Clock, EventBus, Storage
from application.shared.backchannel import queue_logout_notices
from application.shared.clients import client_names
from application.shared.steps import publish_all
from application.shared.users import user_in_scope
from domain import policy
from domain.errors import NotFound
from domain.model import Session, SessionEndReason
from domain.policy import Actor, Operation, Principal

__all__ = [
    "EndOtherSessions",
    "EndOwnSession",
    "EndOwnSessions",
    "EndUserSession",
    "EndUserSessions",
    "ListSessions",
    "ListedSession",
]


@attrs.frozen
class ListedSession:
    """A session as the sessions lists show it: the record and, for one an OpenID Connect
    client started (``Session.client_id``), that client's ``name`` (None for a JSON-API
    session, or a client deleted while the list was read)."""

    session: Session
    client_name: str | None = None


@attrs.frozen
class ListSessions:
    """GET /me/sessions (``user_id`` None: the caller's own, any role) and GET
    /users/{id}/sessions (org_admin of the user's organization, superadmin).

    Returns the live sessions, newest first (``SessionStore.list_live``), each with its
    client's name. Raises ``Forbidden`` (viewer, operator asking for another user),
    ``NotFound`` (no such user, or outside an org_admin's organization).
    """

    _storage: Storage
    _clock: Clock

    async def __call__(
        self, principal: Principal, user_id: str | None = None
    ) -> list[ListedSession]:
        """The live sessions of ``user_id`` (None: of the caller)."""
        async with self._storage.read() as uow:
            if user_id is not None:
                policy.require(principal, Operation.LIST_USER_SESSIONS)
                target = await user_in_scope(uow, principal, user_id)
                policy.check_user_management(principal, target, Operation.LIST_USER_SESSIONS)
                user_id = target.id
            now = self._clock.now()
            sessions = await uow.sessions.list_live(user_id or principal.user_id, now)
            names = await client_names(uow, (s.client_id for s in sessions))
        return [
            ListedSession(s, None if s.client_id is None else names.get(s.client_id))
            for s in sessions
        ]


@attrs.frozen
class EndOwnSession:
    """DELETE /me/sessions/{id}: end one of the caller's own sessions (``SessionEnded``, reason
    ``user``). Raises ``NotFound`` for an unknown or ended session and for another user's (its
    existence never shows)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, session_id: str) -> None:
        """End the caller's session ``session_id``."""
        async with self._storage.begin() as uow:
            session = await uow.sessions.get(session_id)
            if session is None or session.user_id != principal.user_id:
                raise NotFound("session not found")
            now = self._clock.now()
            await queue_logout_notices(uow, principal.user_id, now, [session_id])
            await uow.sessions.end(session_id)
            ended = SessionEnded(
                principal.user_id, session_id, SessionEndReason.USER, principal.user_id
            )
            await record(uow, [ended], now)
            await uow.commit()
        await self._bus.publish(ended)


@attrs.frozen
class EndOwnSessions:
    """DELETE /me/sessions: end every session of the caller (``SessionEnded``, reason ``user``,
    per session). Returns the ids of the sessions ended."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal) -> list[str]:
        """End every session of the caller."""
        me = principal.user_id
        async with self._storage.begin() as uow:
            now = self._clock.now()
            await queue_logout_notices(uow, me, now)
            ended = await uow.sessions.end_all(me)
            events = [SessionEnded(me, s, SessionEndReason.USER, me) for s in ended]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return ended


@attrs.frozen
class EndOtherSessions:
    """The account page's "End all other sessions" (docs/reference/tokens-and-sessions.md): end
    every live session of the caller but ``keep`` (the page's own session, which goes on);
    ``SessionEnded`` (reason ``user``) per session, as DELETE /me/sessions. Returns the ids of
    the sessions ended, sorted (none when ``keep`` is the only one). A ``keep`` that is not one
    of the caller's sessions keeps nothing: every session of the caller ends."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, keep: str) -> list[str]:
        """End the caller's live sessions other than ``keep``."""
        me = principal.user_id
        async with self._storage.begin() as uow:
            now = self._clock.now()
            live = await uow.sessions.list_live(me, now)
            ended = sorted(s.id for s in live if s.id != keep)
            await queue_logout_notices(uow, me, now, ended)  # before the store ends them
            for session_id in ended:
                await uow.sessions.end(session_id)
            events = [SessionEnded(me, s, SessionEndReason.USER, me) for s in ended]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return ended


@attrs.frozen
class EndUserSessions:
    """DELETE /users/{id}/sessions: an administrator ends every session of a user ("sign this
    user out everywhere"); ``SessionEnded`` (reason ``admin``) per session.

    Rules (``domain.policy.check_user_management``): viewer/operator → ``Forbidden``; missing or
    outside an org_admin's organization → ``NotFound``; an org_admin on a superadmin →
    ``Forbidden``. Returns the ids of the sessions ended.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, user_id: str) -> list[str]:
        """End every session of ``user_id``."""
        policy.require(actor, Operation.END_USER_SESSIONS)
        async with self._storage.begin() as uow:
            target = await user_in_scope(uow, actor, user_id)
            policy.check_user_management(actor, target, Operation.END_USER_SESSIONS)
            now = self._clock.now()
            await queue_logout_notices(uow, target.id, now)
            ended = await uow.sessions.end_all(target.id)
            events = [
                SessionEnded(target.id, s, SessionEndReason.ADMIN, actor.actor_id) for s in ended
            ]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return ended


@attrs.frozen
class EndUserSession:
    """DELETE /users/{id}/sessions/{sid}: an administrator ends one session of a user
    (``SessionEnded``, reason ``admin``).

    Rules (``domain.policy.check_user_management`` with ``END_USER_SESSIONS``, as
    ``EndUserSessions``): viewer/operator → ``Forbidden``; a user missing or outside an
    org_admin's organization → ``NotFound``; an org_admin on a superadmin → ``Forbidden``; a
    session that is not that user's (or is gone) → ``NotFound``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, user_id: str, session_id: str) -> None:
        """End the session ``session_id`` of ``user_id``."""
        policy.require(actor, Operation.END_USER_SESSIONS)
        async with self._storage.begin() as uow:
            target = await user_in_scope(uow, actor, user_id)
            policy.check_user_management(actor, target, Operation.END_USER_SESSIONS)
            session = await uow.sessions.get(session_id)
            if session is None or session.user_id != target.id:
                raise NotFound("session not found")
            now = self._clock.now()
            await queue_logout_notices(uow, target.id, now, [session_id])
            await uow.sessions.end(session_id)
            ended = SessionEnded(target.id, session_id, SessionEndReason.ADMIN, actor.actor_id)
            await record(uow, [ended], now)
            await uow.commit()
        await self._bus.publish(ended)
