"""Who is at the admin console (docs/reference/console.md): the hosted session's cookie (section 15)
turned into the ``Principal`` the use cases ask ``domain.policy`` about.

The console signs in through the hosted login page, so its caller is the user of a live hosted
session (not disabled), loaded afresh on each request like a bearer caller (a role change
applies to the next page). Each page view moves the session's idle end on, as the authorization
endpoint does. Whether that principal may open the console at all is
``policy.require(principal, Operation.USE_ADMIN_CONSOLE)``: org_admin and superadmin.
"""

from __future__ import annotations

from datetime import timedelta

import attrs

from application.oauth.interaction import hosted_session_hash
from application.oauth.settings import OidcSettings
from application.ports import Clock, Storage
from application.shared.settings import Live
from domain import policy
from domain.policy import Operation, Principal

__all__ = ["ConsoleCaller"]

_MAX_COOKIE = 128


@attrs.frozen
class ConsoleCaller:
    """``await caller(cookie)`` → the ``Principal`` of the hosted session ``cookie`` (None: no
    cookie, an unknown, ended or expired session, a deleted or disabled user: the page sends the
    browser to the login page). ``caller.admit(principal)`` raises ``Forbidden`` (403 page)
    for a role below org_admin."""

    _storage: Storage
    _clock: Clock
    _oidc: Live[OidcSettings]

    async def __call__(self, cookie: str | None) -> Principal | None:
        """The principal behind ``cookie``, its session's idle end moved on; or None."""
        if not cookie or len(cookie) > _MAX_COOKIE:
            return None
        now = self._clock.now()
        async with self._storage.begin() as uow:
            hosted = await uow.hosted_sessions.find(hosted_session_hash(cookie), now)
            user = None if hosted is None else await uow.users.get(hosted.user_id)
            if hosted is None or user is None or user.disabled:
                return None
            idle = now + timedelta(seconds=self._oidc.current.session_idle_ttl)
            await uow.hosted_sessions.touch(hosted.id_hash, min(idle, hosted.expires_at))
            await uow.commit()
        return Principal.of(user)

    @staticmethod
    def admit(principal: Principal) -> None:
        """May ``principal`` use the console? ``Forbidden`` below org_admin (the policy's
        ``USE_ADMIN_CONSOLE``)."""
        policy.require(principal, Operation.USE_ADMIN_CONSOLE)
