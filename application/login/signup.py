"""Sign-up on the hosted pages (docs/guides/self-service.md; ADR 0042): an account made by the
JSON API's own ``AuthService.register`` (the same checks, answers and verification mail as
``POST /register``), then a hosted session (``HostedLogin.start`` through ``finish_login``, as
every other login of the pages).

With ``auth.require_verified_email`` the new user cannot sign in before the address is proven,
so the sign-up hands out a *sign-up proof* instead of a session: ``<user id>.<expiry>.<MAC>``
(the expiry in Unix seconds, ``auth.email_verification_ttl`` after the sign-up; the MAC is the
``SecretSealer``'s HMAC-SHA-256, the same on every instance). The page keeps it in a cookie of
the browser that signed up; when that browser spends the verification link, ``verify`` signs the
user in. A link opened anywhere else only confirms the address: the link alone never opens a
session (its holder could reset the password anyway, but without the proof nothing more comes of
a forwarded or leaked link than the confirmation).
"""

from __future__ import annotations

import base64
import hmac
from datetime import timedelta

import attrs

from application.login.auth import AuthService
from application.login.finish import finish_login
from application.login.hosted import HostedLogin
from application.ports import Clock, EventBus, SecretSealer, Storage
from application.recovery.email_links import EmailVerification
from application.shared.settings import AuthSettings, Live
from domain.errors import InvalidCredentials
from domain.model import User

__all__ = ["SignUp", "SignedUp"]

PROOF_MAX_LENGTH = 128
"""The longest sign-up proof looked at (characters); a real one is 32 + 1 + 10 + 1 + 43."""


@attrs.frozen
class SignedUp:
    """What a sign-up opened: ``user`` (as ``POST /register`` answers it) and exactly one of
    ``session`` (the hosted session's cookie value: signed in at once) or ``proof`` (the
    sign-up proof to keep in the browser until the verification link is opened)."""

    user: User
    session: str | None = None
    proof: str | None = None


@attrs.frozen
class SignUp:
    """``await sign_up.sign_up(email, password, address, user_agent, client_id, previous)`` →
    ``SignedUp``; ``await sign_up.verify(token, proof, address, ...)`` → the hosted session's
    cookie value, or None when only the address was confirmed.

    ``SignUp(storage, auth, hosted, verification, sealer, bus, clock, auth_settings)``.
    """

    _storage: Storage
    _auth: AuthService
    _hosted: HostedLogin
    _verification: EmailVerification
    _sealer: SecretSealer
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]

    async def sign_up(
        self,
        email: str,
        password: str,
        address: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None = None,
        *,
        locale: str = "",
    ) -> SignedUp:
        """Register ``email`` with ``password`` (``AuthService.register``: the verification mail
        is posted), then sign in at once — or, with ``auth.require_verified_email``, return the
        sign-up proof. ``address``: the client address; ``client_id``: the OAuth client the
        sign-up is for, if any (the ``login.succeeded`` row); ``previous``: the browser's
        hosted-session cookie, ended by this login; ``locale``: the verification mail's
        language (the page's; empty: ``ui.default_locale``).

        Raises what ``register`` raises (``RegistrationClosed`` 403, ``ValidationFailed`` 422,
        ``EmailTaken`` 409: nothing is written), and ``InvalidCredentials`` when the new user was
        deleted before the sign-in.
        """
        user = await self._auth.register(email, password, locale=locale)
        settings = self._settings.current
        if settings.require_verified_email:
            expires = self._clock.now() + timedelta(seconds=settings.email_verification_ttl)
            return SignedUp(user, proof=self._proof(user.id, int(expires.timestamp())))
        session = await self._sign_in(user.id, address, user_agent, client_id, previous)
        return SignedUp(user, session=session)

    async def verify(
        self,
        token: str,
        proof: str | None,
        address: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None = None,
    ) -> str | None:
        """Spend the verification link's ``token`` (``EmailVerification.verify``); when ``proof``
        is an unexpired sign-up proof of that very user, sign in and return the hosted
        session's cookie value, else None (the address is confirmed, nothing else).

        Raises ``InvalidVerificationToken`` (400: nothing changes), and what a login refuses
        with once the address is confirmed (``AccountDisabled``; ``MfaRequired`` for a user
        who turned MFA on since).
        """
        user = await self._verification.verify(token)
        if proof is None or not self._proof_holds(proof, user.id):
            return None
        return await self._sign_in(user.id, address, user_agent, client_id, previous)

    async def _sign_in(
        self,
        user_id: str,
        address: str,
        user_agent: str | None,
        client_id: str | None,
        previous: str | None,
    ) -> str:
        """The hosted session of the user who just chose its password on this browser: one
        factor, ``amr`` ``["pwd"]`` (``finish_login``: refusals and MFA as any login)."""
        start = self._hosted.start(user_agent, address, client_id, previous)
        now = self._clock.now()
        async with self._storage.begin() as uow:
            current = await uow.users.get(user_id)
            outcome = await finish_login(uow, current, start, "password", self._settings.current,
                                         now, second_step="password")  # fmt: skip
        if not outcome.held:  # deleted between the sign-up and now
            raise InvalidCredentials("this account cannot sign in now")
        return await outcome.conclude(self._storage, self._bus, address)

    def _mac(self, user_id: str, expires: int) -> str:
        mac = self._sealer.mac(f"authsvc sign-up {user_id} {expires}".encode())
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")

    def _proof(self, user_id: str, expires: int) -> str:
        return f"{user_id}.{expires}.{self._mac(user_id, expires)}"

    def _proof_holds(self, proof: str, user_id: str) -> bool:
        """``proof`` names ``user_id``, has not expired and carries our MAC (compared in
        constant time)."""
        if len(proof) > PROOF_MAX_LENGTH or not proof.isascii():
            return False
        named, _, rest = proof.partition(".")
        expires, _, _ = rest.partition(".")
        if named != user_id or not (expires.isdigit() and len(expires) < 12):
            return False
        if int(expires) <= self._clock.now().timestamp():
            return False
        return hmac.compare_digest(proof.encode(), self._proof(user_id, int(expires)).encode())
