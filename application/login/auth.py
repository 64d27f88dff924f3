"""Authentication use cases: register, login, authenticate (bearer), profile, refresh, logout,
change password (docs/reference/tokens-and-sessions.md, docs/reference/accounts.md)."""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

from application.events.audit import publish_failure, record
from application.events.catalog import (
    Event,
    LoginFailed,
    PasswordChanged,
    SessionEnded,
    UserRegistered,
)
from application.login.finish import LoginStart, account_of, finish_login, token_start
from application.ports import (
    Clock,
    EmailNormalizer,
    EventBus,
    Hasher,
    Signer,
    Storage,
)
from application.recovery.email_links import EmailVerification
from application.sessions.tokens import SessionRotation, TokenIssuer, TokenPair
from application.shared.backchannel import queue_logout_notices
from application.shared.reauth import password_matches
from application.shared.settings import AuthSettings, Live
from application.shared.steps import new_id, publish_all
from application.shared.throttle import LoginThrottle
from application.shared.users import USER_GONE, active_user, new_user, token_user
from application.shared.voiding import void_outstanding_proofs
from domain.errors import (
    EmailTaken,
    InvalidCredentials,
    InvalidOldPassword,
    InvalidToken,
    RateLimited,
    RegistrationClosed,
    ValidationFailed,
)
from domain.model import (
    BCRYPT_MAX_PASSWORD_BYTES,
    Role,
    SessionEndReason,
    User,
    check_password_policy,
)

T = TypeVar("T")


@attrs.frozen
class Profile:
    """A user with the ids of its groups (the /me answer)."""

    user: User
    groups: list[str]


@attrs.frozen
class Authenticated:
    """The caller behind a verified bearer token: its current user record and the token's claims."""

    user: User
    claims: dict[str, Any]


@attrs.frozen
class AuthService:
    """The authentication use cases, their ports injected (one instance per process):
    ``AuthService(storage, hasher, signer, bus, clock, settings, normalize_email, throttle,
    issuer, rotation)``; the token issuer and the session rotation come from the container."""

    _storage: Storage
    _hasher: Hasher
    _signer: Signer
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]
    _normalize_email: EmailNormalizer
    _throttle: LoginThrottle
    _issuer: TokenIssuer
    _rotation: SessionRotation
    _verification: EmailVerification | None = None
    """Sends the verification message at registration (docs/reference/accounts.md); None: no
    mail."""

    async def register(self, email: str, password: str, *, locale: str = "") -> User:
        """Create a user with role ``viewer`` in ``auth.default_org_id``.

        The email is syntax-checked and stored lower-case; the password must satisfy the policy
        (min length, at most 72 UTF-8 bytes) and is stored only as a bcrypt hash. The
        verification message is posted after the commit (docs/reference/accounts.md), in
        ``locale`` (the request's; empty: ``ui.default_locale``).
        Raises ``RegistrationClosed`` (403) when ``auth.allow_registration`` is false (checked
        first: nothing is read or written), ``ValidationFailed`` (422) or ``EmailTaken`` (409);
        on any of them nothing is written.
        """
        cfg = self._settings.current
        if not cfg.allow_registration:
            raise RegistrationClosed("sign-up is closed on this service")
        canonical = self._normalize_email(email)
        check_password_policy(password, cfg.password_min_length)
        async with self._storage.begin() as uow:
            if await uow.users.get_by_email(canonical) is not None:
                raise EmailTaken("a user with this email already exists")
        user = await new_user(
            user_id=new_id(),
            email=canonical,
            password=password,
            role=Role.VIEWER,
            org_id=cfg.default_org_id,
            hasher=self._hasher,
            clock=self._clock,
        )
        registered = UserRegistered(user_id=user.id, org_id=user.org_id)
        async with self._storage.begin() as uow:
            await uow.users.add(user)  # raises EmailTaken on a concurrent duplicate
            await record(uow, [registered], user.created_at)
            await uow.commit()
        await self._bus.publish(registered)
        if self._verification is not None:
            await self._verification.send_for(user, locale=locale)
        return user

    def _login_email(self, email: str) -> str:
        """The canonical email to look up; for one that fails the syntax check (and so cannot
        exist), the empty string, which no stored user has: the lookup still happens (same
        round trip as an unknown email) but nothing unstorable (U+0000 ...) reaches storage."""
        try:
            return self._normalize_email(email)
        except ValidationFailed:
            return ""

    async def login(
        self, email: str, password: str, client: str, user_agent: str | None = None
    ) -> TokenPair:
        """``login_with`` starting a session of the JSON API: a new refresh-token family
        recording ``user_agent`` and ``client``; returns its ``TokenPair``."""

        start = token_start(self._issuer, client, user_agent)
        return await self.login_with(email, password, client, start)

    async def login_with(self, email: str, password: str, client: str, start: LoginStart[T]) -> T:
        """Verify credentials and start a session with ``start(uow, user, "password")`` in the
        login's unit of work (``login``: a refresh-token family,
        docs/reference/tokens-and-sessions.md; the hosted login page: a hosted session, section 15);
        returns what it returns, and records and publishes the events it returns (its
        ``LoginSucceeded`` first) after the commit.

        An unknown email, and a user without a password (created by a federated login) or
        with a hash that cannot be read, spends one bcrypt check against a dummy hash (the
        ``Hasher``), so the answer and its timing are the same as for a wrong password.
        Raises ``RateLimited`` (429) when this email from this ``client`` address is
        throttled, else ``InvalidCredentials`` (401); with the
        right password to a disabled account, ``AccountDisabled`` (403) — only after the
        password check, so nothing is learned without the password (docs/reference/accounts.md);
        with ``auth.require_verified_email`` on and the email unverified, ``EmailNotVerified``
        (403), likewise after the password check (section 9); for a user with MFA on,
        ``MfaRequired`` (401 ``mfa_required`` with an ``mfa_token``; section 10) — the session
        starts at ``/login/mfa`` (``application.login.mfa_step``), and the throttle is not reset
        yet.

        Events, after the commit: ``LoginSucceeded`` and ``AccessTokenIssued`` (grant ``login``)
        on success; ``LoginFailed`` with reason ``wrong_password``, ``unknown_email`` or
        ``rate_limited`` on failure (naming the account of ``email`` when it exists, looked up
        once the answer is decided), ``account_disabled`` for a disabled account,
        ``email_not_verified`` for an unverified one (``domain.login.login_refusal``);
        ``MfaChallenged`` for a second step.
        """
        canonical = self._login_email(email)
        throttle_key = canonical or email  # hashed by the throttle; never stored in clear
        try:  # counted first (as a failure), then checked: see application.shared.throttle
            attempt = await self._throttle.attempt(throttle_key, client)
        except RateLimited:
            account = await account_of(self._storage, canonical)  # the answer is decided
            limited = LoginFailed(user_id=account, client=client, reason="rate_limited")
            await publish_failure(self._storage, self._bus, self._clock.now(), limited)
            raise
        async with self._storage.begin() as uow:
            user = await uow.users.get_by_email(canonical)
        if len(password.encode("utf-8")) > BCRYPT_MAX_PASSWORD_BYTES:
            await self._hasher.verify("", None)  # no stored password can match; same cost
            ok = False
        else:
            ok = await self._hasher.verify(password, user.password_hash if user else None)
        if not ok or user is None:  # the attempt counted above stands as the failure
            failed = LoginFailed(
                user_id=user.id if user else None,
                client=client,
                reason="wrong_password" if user else "unknown_email",
            )
            await publish_failure(self._storage, self._bus, self._clock.now(), failed)
            raise InvalidCredentials("email or password is wrong")
        if not user.mfa_enabled:  # with MFA on, only a completed second step resets it
            await self._throttle.succeeded(throttle_key, client)
        else:  # a right password is no failure: uncount it, keep the others
            await self._throttle.release(attempt)
        now = self._clock.now()
        async with self._storage.begin() as uow:
            current = await uow.users.get(user.id)
            outcome = await finish_login(uow, current, start, "password", self._settings.current,
                                         now, second_step="password")  # fmt: skip
        if not outcome.held:  # deleted between the check and now
            raise InvalidCredentials("email or password is wrong")
        return await outcome.conclude(self._storage, self._bus, client)

    async def _verified_subject(self, token: str) -> tuple[str, dict[str, Any]]:
        cfg = self._settings.current
        claims = await self._signer.verify(
            token, issuer=cfg.issuer, audience=cfg.audience, leeway=cfg.leeway
        )
        sub = claims.get("sub")
        if not isinstance(sub, str):
            raise InvalidToken("token has no subject")
        return sub, claims

    async def verify_token(self, token: str) -> dict[str, Any]:
        """The claims of a valid bearer access token, without loading its user (no storage
        access; the role claim may be up to ``auth.access_token_ttl`` seconds old).

        For decisions that must still work while the storage is down (e.g. showing health
        details); everything else uses ``authenticate``. Raises ``InvalidToken``.
        """
        _, claims = await self._verified_subject(token)
        return claims

    async def authenticate(self, token: str) -> Authenticated:
        """Verify a bearer access token (RFC 6750) and load its user afresh.

        Raises ``InvalidToken`` for a bad token (see ``Signer.verify``) or a user that is gone.
        """
        sub, claims = await self._verified_subject(token)
        async with self._storage.begin() as uow:
            user = await token_user(uow, sub)
        return Authenticated(user=user, claims=claims)

    async def profile(self, token: str) -> Profile:
        """The /me answer for a bearer access token: the user afresh with its group ids, read by
        one statement (one snapshot, one round trip). Raises ``InvalidToken`` like
        ``authenticate``."""
        sub, _ = await self._verified_subject(token)
        async with self._storage.read() as uow:
            found = await uow.users.get_with_groups(sub)
        if found is None:
            raise InvalidToken(USER_GONE)
        return Profile(user=active_user(found[0]), groups=found[1])

    async def refresh(self, refresh_token: str) -> TokenPair:
        """One-time rotation; see ``SessionRotation.rotate``. Raises ``InvalidRefreshToken``."""
        return await self._rotation.rotate(refresh_token)

    async def logout(self, refresh_token: str) -> None:
        """Revoke the session (family) of a refresh token; an unknown token is no error."""
        await self._rotation.revoke_session(refresh_token)

    async def change_password(
        self,
        user_id: str,
        old_password: str,
        new_password: str,
        client: str,
        keep_session: str | None = None,
    ) -> None:
        """Verify the old password, then store the new bcrypt hash, void the user's reset tokens
        and ``mfa_token``s (docs/reference/accounts.md) and end every session of the user (its
        refresh tokens) but ``keep_session`` (the hosted session of the account page that
        changed it; None from the JSON API: every one) — all but the first in one transaction.
        Publishes ``PasswordChanged`` and a ``SessionEnded`` (reason ``password``) per session.

        Raises ``ValidationFailed`` (new password breaks the policy; checked first, nothing
        changes), ``RateLimited`` (429: too many wrong passwords for this user from ``client``,
        the client address — a wrong one counts against the login throttle,
        docs/reference/mfa-and-passkeys.md), ``InvalidOldPassword`` (403), ``InvalidToken`` if the
        user is gone.
        """
        check_password_policy(
            new_password, self._settings.current.password_min_length, "new_password"
        )
        async with self._storage.begin() as uow:
            user = await token_user(uow, user_id)
        if not await password_matches(self._hasher, self._throttle, user, old_password, client):
            raise InvalidOldPassword("the old password is wrong")
        new_hash = await self._hasher.hash(new_password)
        async with self._storage.begin() as uow:
            current = await token_user(uow, user_id)
            await uow.users.update(attrs.evolve(current, password_hash=new_hash))
            await void_outstanding_proofs(uow, user_id)
            now = self._clock.now()
            others = [s.id for s in await uow.sessions.of_user(user_id) if s.id != keep_session]
            await queue_logout_notices(uow, user_id, now, others)
            ended = await uow.sessions.end_all(user_id, keep=keep_session)
            events: list[Event] = [PasswordChanged(user_id=user_id, revoked=len(ended))]
            events += [SessionEnded(user_id, s, SessionEndReason.PASSWORD, user_id) for s in ended]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
