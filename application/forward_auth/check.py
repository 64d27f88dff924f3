"""Forward auth (docs/reference/forward-auth.md): the answer to a reverse proxy asking whether the
browser or bearer behind a request may pass, and the browser session for protected hosts.

The protected hosts' browser session is a cookie of its own (``forward_auth.cookie_domain``), not
the hosted session's: every app behind the proxy receives it with each request, so it must not
be worth more than passing forward auth. It is stored as one more hosted-session row on the
same ``sessions`` row as the login that made it (it ends with that login: logout, password
change, disable, delete, an administrator), under the SHA-256 of ``forward-auth:`` + the cookie
(``forward_auth_hash``): presented as the hosted session's cookie it finds nothing, and the
hosted session's cookie presented here finds nothing either."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

import attrs

from application.forward_auth.settings import ForwardAuthSettings
from application.login.auth import AuthService
from application.oauth.settings import OidcSettings
from application.ports import Clock, Storage, UnitOfWork
from application.sessions.hosted import MAX_COOKIE_LENGTH, live_hosted
from application.shared.settings import Live
from application.shared.steps import hash_token
from domain.errors import Forbidden, InvalidToken
from domain.forward_auth import ForwardedRequest
from domain.login import still_active
from domain.model import User
from domain.oidc import HostedSession
from domain.policy import forward_auth_admits

__all__ = ["ForwardAuth", "Passed", "forward_auth_hash"]

COOKIE_BYTES = 32
"""Random bytes of a forward-auth cookie (43 URL-safe characters)."""


def forward_auth_hash(cookie: str) -> str:
    """The stored form of a forward-auth cookie: SHA-256 hex of ``forward-auth:`` + ``cookie``
    (domain-separated from ``hosted_session_hash``)."""
    return hash_token("forward-auth:" + cookie)


@attrs.frozen
class Passed:
    """Who passed: the values of the ``X-Auth-*`` headers. ``groups``: the names of the user's
    groups in its organization, sorted."""

    user_id: str
    email: str
    role: str
    org_id: str
    groups: tuple[str, ...]


@attrs.frozen
class ForwardAuth:
    """``ForwardAuth(storage, auth, clock, settings, oidc)``: ``check`` answers a proxy,
    ``start`` opens the protected hosts' browser session from a hosted login."""

    _storage: Storage
    _auth: AuthService
    _clock: Clock
    _settings: Live[ForwardAuthSettings]
    _oidc: Live[OidcSettings]

    async def check(
        self, cookie: str | None, bearer: str | None, target: ForwardedRequest | None
    ) -> Passed:
        """The user behind the forward-auth ``cookie`` (first) or the ``bearer`` access token,
        admitted to ``target`` by ``[[forward_auth.rules]]``.

        Raises ``InvalidToken`` (401: neither is a live session of an active user or a valid
        token), ``Forbidden`` (403: a rule refuses)."""
        found = await self._by_cookie(cookie) if cookie else None
        if found is None and bearer:
            profile = await self._auth.profile(bearer)
            async with self._storage.read() as uow:
                found = profile.user, await _group_names(uow, profile.user, profile.groups)
        if found is None:
            raise InvalidToken("no signed-in browser or bearer token")
        user, groups = found
        if not forward_auth_admits(self._settings.current.domain_rules, target, user.role, groups):
            raise Forbidden("a forward_auth rule refuses this user")
        return Passed(user.id, user.email, user.role.value, user.org_id, groups)

    async def _by_cookie(self, cookie: str) -> tuple[User, tuple[str, ...]] | None:
        if len(cookie) > MAX_COOKIE_LENGTH:
            return None
        now = self._clock.now()
        async with self._storage.read() as uow:
            hosted = await uow.hosted_sessions.find(forward_auth_hash(cookie), now)
            found = None if hosted is None else await uow.users.get_with_groups(hosted.user_id)
            if hosted is None or found is None or not still_active(found[0]):
                return None
            groups = await _group_names(uow, found[0], found[1])
        await self._keep_alive(hosted, now)
        return found[0], groups

    async def _keep_alive(self, hosted: HostedSession, now: datetime) -> None:
        """Move the idle end on once less than half of ``oidc.session_idle_ttl`` is left: one
        write per half idle period, not one per proxied request."""
        idle_ttl = self._oidc.current.session_idle_ttl
        if hosted.idle_expires_at - now >= timedelta(seconds=idle_ttl / 2):
            return
        idle = min(hosted.expires_at, now + timedelta(seconds=idle_ttl))
        async with self._storage.begin() as uow:
            await uow.hosted_sessions.touch(hosted.id_hash, idle)
            await uow.commit()

    async def start(self, hosted_cookie: str | None) -> str | None:
        """A new forward-auth cookie (43 characters) for the live hosted session of
        ``hosted_cookie``, riding on the same ``sessions`` row with the same ends; None when the
        browser is not signed in (then nothing is written)."""
        if not hosted_cookie or len(hosted_cookie) > MAX_COOKIE_LENGTH:
            return None
        clear = secrets.token_urlsafe(COOKIE_BYTES)
        async with self._storage.begin() as uow:
            found = await live_hosted(uow, hosted_cookie, self._clock.now())
            if found is None:
                return None
            await uow.hosted_sessions.add(attrs.evolve(found[0], id_hash=forward_auth_hash(clear)))
            await uow.commit()
        return clear


async def _group_names(uow: UnitOfWork, user: User, group_ids: list[str]) -> tuple[str, ...]:
    """The names of the groups ``group_ids`` that belong to ``user``'s organization, sorted."""
    names = []
    for group_id in group_ids:
        found = await uow.groups.get(group_id)
        if found is not None and found.group.org_id == user.org_id:
            names.append(found.group.name)
    return tuple(sorted(names))
