"""The hosted login page's use cases (docs/reference/oauth-and-oidc.md): a password (then the MFA
step) opens a hosted session — the browser's login at the provider — instead of a token pair.

A hosted session is a ``sessions`` row (one of the user's sessions of section 7, without
refresh tokens; it ends with them: logout, password change, disable, delete) and a
``HostedSession`` keyed by the SHA-256 of the cookie's opaque value (256 bits), with the
login's ``auth_time``, ``amr`` (RFC 8176) and ``acr``, an idle end (``oidc.session_idle_ttl``)
and an absolute end (``oidc.session_ttl``). A login in a browser that holds a hosted session
ends the old one (with its pending authorization codes). The password and MFA steps are the
JSON API's own (``AuthService.login_with``, ``MfaLogin.complete_with``): same throttle, same
answers for an unknown email and a wrong password, same audit (``login.succeeded`` with
``details.method`` and ``details.client_id``). A passkey (alone, or as the second step) goes
through ``PasskeyLogin``'s ``finish_with`` / ``answer_mfa_with`` alike (ADR 0033).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import attrs

from application.events.audit import record
from application.events.catalog import Event, LoginSucceeded, SessionEnded
from application.events.oidc import OidcLogout
from application.login.auth import AuthService
from application.login.finish import LoginStart
from application.login.mfa_step import MfaLogin
from application.login.passkey_step import (
    PASSKEY,
    PASSKEY_PRESENCE,
    PASSKEY_SECOND_STEP,
    PasskeyLogin,
)
from application.oauth.settings import OidcSettings
from application.ports import Clock, EventBus, Storage, UnitOfWork
from application.sessions.hosted import hosted_session_hash, plausible_cookie
from application.shared.backchannel import queue_logout_notices
from application.shared.settings import Live
from application.shared.steps import new_id, publish_all
from domain.login import hint_ends_session
from domain.model import USER_AGENT_MAX_LENGTH, Session, SessionEndReason, User
from domain.oidc import HostedSession

__all__ = ["AMR", "AUDIT_METHOD", "HostedLogin"]

COOKIE_BYTES = 32
"""Entropy of a hosted session's cookie value: 256 bits, base64url (43 characters)."""
AMR: dict[str, tuple[tuple[str, ...], str]] = {
    "password": (("pwd",), "1"),
    "totp": (("pwd", "otp", "mfa"), "2"),
    "recovery_code": (("pwd", "otp", "mfa"), "2"),
    PASSKEY: (("hwk", "user"), "2"),
    PASSKEY_PRESENCE: (("hwk",), "1"),
    PASSKEY_SECOND_STEP: (("pwd", "hwk", "mfa"), "2"),
    "federated": (("fed",), "1"),
    "federated_totp": (("fed", "otp", "mfa"), "2"),
    "federated_recovery_code": (("fed", "otp", "mfa"), "2"),
    "federated_" + PASSKEY_SECOND_STEP: (("fed", "hwk", "mfa"), "2"),
}
"""Login method → (``amr`` values of RFC 8176, ``acr``: ``"1"`` one factor, ``"2"`` two).
A passkey with user verification is two factors (docs/reference/mfa-and-passkeys.md and
docs/reference/oauth-and-oidc.md: possession and the authenticator's PIN or biometric); without it,
possession only. A second step after another provider's login (``federated_…``,
``application.login.mfa_step.second_step_method``) says ``fed`` where a password's says ``pwd``
(``docs/reference/federation.md``)."""
AUDIT_METHOD = {
    PASSKEY_PRESENCE: "passkey",
    PASSKEY_SECOND_STEP: "passkey",
    "federated_totp": "totp",
    "federated_recovery_code": "recovery_code",
    "federated_" + PASSKEY_SECOND_STEP: "passkey",
}
"""Login method → ``login.succeeded``'s ``details.method`` where they differ (
docs/reference/mfa-and-passkeys.md names ``password``, ``passkey``, ``totp``, ``recovery_code``)."""


@attrs.frozen
class HostedLogin:
    """``await hosted.password(email, password, client, user_agent, client_id)``,
    ``await hosted.mfa(mfa_token, code, ...)``, ``await hosted.passkey(ceremony_id, credential,
    ...)`` and ``await hosted.passkey_mfa(mfa_token, ceremony_id, credential, ...)`` → the new
    hosted session's cookie value (raising what ``AuthService.login`` / ``MfaLogin.complete`` /
    ``PasskeyLogin.finish`` / ``.answer_mfa`` raise: ``InvalidCredentials``,
    ``PasskeyLoginFailed``, ``RateLimited``, ``MfaRequired``, ``AccountDisabled``...);
    ``await hosted.logout(cookie, client_id)`` ends it (``oidc.logout``)."""

    _storage: Storage
    _auth: AuthService
    _mfa: MfaLogin
    _passkeys: PasskeyLogin
    _bus: EventBus
    _clock: Clock
    _oidc: Live[OidcSettings]

    def start(
        self,
        user_agent: str | None,
        address: str,
        client_id: str | None,
        previous: str | None = None,
    ) -> LoginStart[str]:
        """The ``LoginStart`` that opens a hosted session (for every login of the hosted pages,
        and for the federated login of ``application.login.federated``, which finds its user
        itself); ``previous``: the browser's current hosted-session cookie, ended by this
        login."""

        async def start(uow: UnitOfWork, user: User, method: str) -> tuple[str, list[Event]]:
            settings = self._oidc.current
            clear = secrets.token_urlsafe(COOKIE_BYTES)
            now = self._clock.now()
            events = await _end_previous(uow, previous, now)
            expires_at = now + timedelta(seconds=settings.session_ttl)
            session = Session(
                id=new_id(), user_id=user.id, created_at=now, last_used_at=now,
                expires_at=expires_at,
                user_agent=None if user_agent is None else user_agent[:USER_AGENT_MAX_LENGTH],
                client_address=address,
            )  # fmt: skip
            await uow.sessions.add(session)
            amr, acr = AMR.get(method, (("pwd",), "1"))
            idle = min(expires_at, now + timedelta(seconds=settings.session_idle_ttl))
            hosted = HostedSession(
                hosted_session_hash(clear), session.id, user.id, now, amr, acr, idle, expires_at
            )
            await uow.hosted_sessions.add(hosted)
            audited = AUDIT_METHOD.get(method, method)
            return clear, [LoginSucceeded(user.id, session.id, audited, client_id), *events]

        return start

    async def password(
        self,
        email: str,
        password: str,
        client: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None = None,
    ) -> str:
        """A hosted session for the right ``email`` and ``password`` (``client``: the client
        address; ``client_id``: the OAuth client the login is for, if any; ``previous``: the
        browser's hosted-session cookie, which this login ends)."""
        start = self.start(user_agent, client, client_id, previous)
        return await self._auth.login_with(email, password, client, start)

    async def mfa(
        self,
        mfa_token: str,
        code: str,
        client: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None = None,
    ) -> str:
        """A hosted session after the second step (a TOTP or recovery ``code``)."""
        start = self.start(user_agent, client, client_id, previous)
        return await self._mfa.complete_with(mfa_token, code, client, start)

    async def passkey(
        self,
        ceremony_id: str,
        credential: Mapping[str, Any],
        client: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None = None,
    ) -> str:
        """A hosted session for a passkey assertion (``credential``, AuthenticationResponseJSON)
        answering the ceremony ``ceremony_id`` of ``/login/passkey/options``; raises what
        ``PasskeyLogin.finish`` raises."""
        start = self.start(user_agent, client, client_id, previous)
        return await self._passkeys.finish_with(ceremony_id, credential, client, start)

    async def passkey_mfa(
        self,
        mfa_token: str,
        ceremony_id: str,
        credential: Mapping[str, Any],
        client: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None = None,
    ) -> str:
        """A hosted session after the second step answered with a passkey (a ceremony bound to
        ``mfa_token``); raises what ``PasskeyLogin.answer_mfa`` raises."""
        start = self.start(user_agent, client, client_id, previous)
        return await self._passkeys.answer_mfa_with(
            mfa_token, ceremony_id, credential, client, start
        )

    async def logout(self, cookie: str | None, client_id: str | None) -> bool:
        """End the hosted session of ``cookie`` and its ``sessions`` row (``oidc.logout`` and
        ``session.ended``); False when there is none."""
        return await self._end(cookie, client_id, None) is True

    async def logout_with_hint(
        self, cookie: str | None, client_id: str, hint_sub: object, hint_sid: object
    ) -> bool:
        """RP-initiated logout with a valid ``id_token_hint`` of ``client_id`` (its ``sub`` and
        ``sid`` claims): end the hosted session of ``cookie`` only when the hint names it
        (``domain.login.hint_ends_session``) → True; True too when there is no hosted session
        (nothing to end); False when the hint names another user or session: the caller asks
        the user first (RP-Initiated Logout 1.0 §2)."""
        return await self._end(cookie, client_id, (hint_sub, hint_sid)) is not False

    async def _end(
        self, cookie: str | None, client_id: str | None, hint: tuple[object, object] | None
    ) -> bool | None:
        """True: ended; None: no hosted session; False: the hint does not name it."""
        if not plausible_cookie(cookie):
            return None
        now = self._clock.now()
        async with self._storage.begin() as uow:
            hosted = await uow.hosted_sessions.find(hosted_session_hash(cookie), now)
            if hosted is None:
                return None
            if hint is not None and not hint_ends_session(*hint, hosted.user_id, hosted.session_id):
                return False
            await queue_logout_notices(uow, hosted.user_id, now, [hosted.session_id])
            await uow.hosted_sessions.end(hosted.id_hash)
            events: list[Event] = [
                OidcLogout(hosted.user_id, hosted.session_id, client_id),
                SessionEnded(hosted.user_id, hosted.session_id, SessionEndReason.LOGOUT),
            ]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return True


async def _end_previous(uow: UnitOfWork, previous: str | None, now: datetime) -> list[Event]:
    """End the hosted session of the cookie ``previous`` (the browser's, when it signs in
    again) with its ``sessions`` row, so the codes issued under it die with it (OIDC Core
    §3.1.2.1; ADR 0032: a login in a browser that already holds a hosted session ends the
    old one). ``SessionEnded`` (reason ``replaced``) when it was live; nothing for a
    missing or unknown cookie."""
    if not plausible_cookie(previous):
        return []
    id_hash = hosted_session_hash(previous)
    old = await uow.hosted_sessions.find(id_hash, now)
    if old is not None:
        await queue_logout_notices(uow, old.user_id, now, [old.session_id])
    ended = await uow.hosted_sessions.end(id_hash)
    if old is None or ended is None:
        return []
    return [SessionEnded(old.user_id, ended, SessionEndReason.REPLACED)]
