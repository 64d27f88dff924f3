"""Who is at the admin console (docs/reference/console.md): the hosted session's cookie (section 15)
turned into the ``Principal`` the use cases ask ``domain.policy`` about.

The console signs in through the hosted login page, so its caller is the user of a live hosted
session (not disabled), loaded afresh on each request like a bearer caller (a role change
applies to the next page). Each page view moves the session's idle end on, as the authorization
endpoint does. Whether that principal may open the console at all is
``policy.require(principal, Operation.USE_ADMIN_CONSOLE)``: org_admin and superadmin.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from application.ports import Clock, Storage
from application.sessions.hosted import live_hosted, move_idle_end, plausible_cookie
from domain import policy
from domain.policy import Operation, Principal

__all__ = ["ConsoleCaller"]


@attrs.frozen
class ConsoleCaller:
    """``await caller(cookie)`` → the ``Principal`` of the hosted session ``cookie`` (None: no
    cookie, an unknown, ended or expired session, a deleted or disabled user: the page sends the
    browser to the login page). ``caller.admit(principal)`` raises ``Forbidden`` (403 page)
    for a role below org_admin."""

    _storage: Storage
    _clock: Clock
    _idle_ttl: Callable[[], int]
    """The hosted sessions' idle lifetime in force (``oidc.session_idle_ttl``, s), read at each
    page view."""

    async def __call__(self, cookie: str | None) -> Principal | None:
        """The principal behind ``cookie``, its session's idle end moved on; or None."""
        if not plausible_cookie(cookie):
            return None
        now = self._clock.now()
        async with self._storage.begin() as uow:
            found = await live_hosted(uow, cookie, now)
            if found is None:
                return None
            hosted, user = found
            await move_idle_end(uow, hosted, now, self._idle_ttl())
            await uow.commit()
        return Principal.of(user)

    @staticmethod
    def admit(principal: Principal) -> None:
        """May ``principal`` use the console? ``Forbidden`` below org_admin (the policy's
        ``USE_ADMIN_CONSOLE``)."""
        policy.require(principal, Operation.USE_ADMIN_CONSOLE)
