"""The account pages' fresh-login rule (docs/reference/accounts.md; ASVS 5.0 V7.5.1): adding a
sign-in factor, changing the password or the email and deleting the account from the hosted
pages need a login of at most ``ui.reauthentication_window`` seconds ago in that hosted session
(``domain.policy.login_is_recent``), else the page asks for the password first.

``HostedAccount.visit`` reads the hosted session of a cookie once and says whether its login is
recent (a ``RecentLogin``, the proof ``Reauthentication.require`` takes for the hosted pages);
``HostedAccount.reauthenticate`` checks the password (or a passkey assertion) with the JSON
API's ``Reauthentication`` — the login throttle counts each wrong one — and on success moves the
session's ``auth_time`` to now.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from application.ports import Clock, Storage
from application.sessions.hosted import signed_in
from application.shared.reauth import FreshProof, Reauthentication, RecentLogin
from domain import policy
from domain.errors import ReauthenticationRequired
from domain.model import User
from domain.oidc import HostedSession

__all__ = ["AccountVisit", "HostedAccount"]


@attrs.frozen
class AccountVisit:
    """The signed-in user of a hosted session (``user``, ``hosted``) and, when its login is
    recent enough for a sensitive action, ``recent`` (else None: re-authenticate first)."""

    user: User
    hosted: HostedSession
    recent: RecentLogin | None


@attrs.frozen
class HostedAccount:
    """``await account.visit(cookie)`` → ``AccountVisit`` or None (no live hosted session);
    ``await account.reauthenticate(cookie, proof, client)`` → True once the session's login is
    fresh again (False: no live hosted session)."""

    _storage: Storage
    _reauth: Reauthentication
    _clock: Clock
    _window: Callable[[], int]
    """``ui.reauthentication_window`` in force (s), read at each call."""

    async def visit(self, cookie: str | None) -> AccountVisit | None:
        """The hosted session of ``cookie`` with its user; None without a live one (no cookie,
        unknown, ended, expired, user gone or disabled)."""
        now = self._clock.now()
        found = await signed_in(self._storage, cookie, now)
        if found is None:
            return None
        hosted, user = found
        recent = None
        if policy.login_is_recent(hosted.auth_time, now, self._window()):
            recent = RecentLogin(user.id, hosted.session_id, hosted.id_hash)
        return AccountVisit(user, hosted, recent)

    async def reauthenticate(self, cookie: str | None, proof: FreshProof, client: str) -> bool:
        """Prove the user of ``cookie``'s hosted session again with ``proof`` (a ``password``,
        or a passkey's ``ceremony_id`` and ``credential``; a ``recent_login`` is not taken),
        sent from ``client`` (the client address); on success the session's ``auth_time`` is
        now. False without a live hosted session. Raises ``ReauthenticationRequired`` (401:
        wrong password, refused assertion, no proof — each counted by the login throttle),
        ``RateLimited`` (429, asked first), ``ValidationFailed`` (422, two proofs at once)."""
        if proof.recent_login is not None:
            raise ReauthenticationRequired("a password or a passkey is needed here")
        found = await signed_in(self._storage, cookie, self._clock.now())
        if found is None:
            return False
        hosted, user = found
        await self._reauth.require(user, proof, client)
        async with self._storage.begin() as uow:
            await uow.hosted_sessions.reauthenticated(hosted.id_hash, self._clock.now())
            await uow.commit()
        return True
