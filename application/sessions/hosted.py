"""The browser's hosted session (docs/reference/oauth-and-oidc.md), looked up once for everyone
who needs "the signed-in user of this cookie": the authorization endpoint, the federated link
pages, the account pages (``HostedPageCaller``) and the admin console.

A cookie is stored only as its SHA-256 (``hosted_session_hash``). A hosted session counts when
it is live (``HostedSessionStore.find``: not ended, before its idle and absolute ends) and its
user exists and may still log in (``domain.login.still_active``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeGuard

import attrs

from application.ports import Clock, Storage, UnitOfWork
from application.shared.steps import hash_token
from domain.login import still_active
from domain.model import User
from domain.oidc import HostedSession

__all__ = [
    "MAX_COOKIE_LENGTH",
    "HostedPageCaller",
    "hosted_session_hash",
    "live_hosted",
    "move_idle_end",
    "plausible_cookie",
    "signed_in",
]

MAX_COOKIE_LENGTH = 128
"""Longer cookie values are no hosted session's (ours are 43 characters): not even looked up."""


def hosted_session_hash(cookie: str) -> str:
    """The stored form of a hosted session's cookie value (SHA-256 hex)."""
    return hash_token(cookie)


def plausible_cookie(cookie: str | None) -> TypeGuard[str]:
    """Whether ``cookie`` is worth a lookup: present and at most ``MAX_COOKIE_LENGTH`` long."""
    return bool(cookie) and len(cookie or "") <= MAX_COOKIE_LENGTH


async def live_hosted(
    uow: UnitOfWork, cookie: str, now: datetime
) -> tuple[HostedSession, User] | None:
    """The live hosted session of ``cookie`` and its user, read in ``uow``; None for an
    unknown, ended or expired session, or a user gone or disabled."""
    hosted = await uow.hosted_sessions.find(hosted_session_hash(cookie), now)
    user = None if hosted is None else await uow.users.get(hosted.user_id)
    if hosted is None or not still_active(user):
        return None
    return hosted, user


async def signed_in(
    storage: Storage, cookie: str | None, now: datetime
) -> tuple[HostedSession, User] | None:
    """``live_hosted`` in a read-only unit of work of its own; None without a plausible
    cookie (then nothing is read)."""
    if not plausible_cookie(cookie):
        return None
    async with storage.read() as uow:
        return await live_hosted(uow, cookie, now)


async def move_idle_end(
    uow: UnitOfWork, hosted: HostedSession, now: datetime, idle_ttl: int
) -> None:
    """A use of ``hosted`` at ``now``: its idle end moves to now + ``idle_ttl`` seconds
    (``oidc.session_idle_ttl``), never past its absolute end, and its sessions row's
    ``last_used_at`` (the "last used" of the sessions lists) to ``now``."""
    idle = now + timedelta(seconds=idle_ttl)
    await uow.hosted_sessions.touch(hosted.id_hash, min(idle, hosted.expires_at))
    await uow.sessions.touch(hosted.session_id, now)


@attrs.frozen
class HostedPageCaller:
    """``await caller(cookie)`` → the live hosted session of ``cookie`` and its user, for a
    page of the signed-in user (the account pages, docs/reference/accounts.md), the view
    counted as a use (``move_idle_end``: its idle end and its "last used" move on); None
    without a plausible cookie, for an unknown, ended or expired session, a user gone or
    disabled (the page asks for a login)."""

    _storage: Storage
    _clock: Clock
    _idle_ttl: Callable[[], int]
    """The hosted sessions' idle lifetime in force (``oidc.session_idle_ttl``, s), read at each
    page view."""

    async def __call__(self, cookie: str | None) -> tuple[HostedSession, User] | None:
        """The hosted session and its user, the use recorded; or None."""
        if not plausible_cookie(cookie):
            return None
        now = self._clock.now()
        async with self._storage.begin() as uow:
            found = await live_hosted(uow, cookie, now)
            if found is None:
                return None
            await move_idle_end(uow, found[0], now, self._idle_ttl())
            await uow.commit()
        return found
