"""The second step of a login for a user with MFA on (docs/reference/mfa-and-passkeys.md; ADR 0018).

``/login`` with the right password answers 401 ``mfa_required`` with an ``mfa_token``
(``application.login.finish.open_challenge``: opaque, stored only as a SHA-256 hash, single
use, ``auth.mfa_token_ttl`` seconds). ``/login/mfa`` with that token and a TOTP or recovery code
answers the ``TokenPair`` (``MfaLogin.complete``).

One-time use, also under concurrency: a TOTP code's step is claimed by a compare-and-set on the
user's ``last_step`` and the ``mfa_token`` is taken (deleted) in the same transaction as the new
session, so of two requests with one code exactly one gets tokens. Every code is counted
before it is checked (docs/reference/mfa-and-passkeys.md: count first, then check), against the
``mfa_token`` (``claim_code_attempt``: a compare-and-set, at most five evaluations; the fifth
wrong one voids it) *and* the login throttle of the user's email and the client address
(``LoginThrottle.attempt``), which only a completed second step resets: knowing the password
gives an attacker no more code guesses than ``auth.login_max_failures`` per window, however
many arrive at once.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import NoReturn, TypeVar

import attrs

from application.events.audit import publish_failure
from application.events.catalog import LoginFailed, MfaFailed
from application.login.finish import LoginStart, finish_login, token_start
from application.mfa.totp import recovery_code_hash, secret_context
from application.ports import (
    Clock,
    EventBus,
    SealedSecretError,
    SecretSealer,
    Storage,
    Totp,
)
from application.sessions.tokens import TokenIssuer, TokenPair
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token
from application.shared.throttle import LoginThrottle
from domain.errors import InvalidMfaCode, RateLimited
from domain.model import MFA_CHALLENGE_MAX_FAILURES, User

log = logging.getLogger("authsvc.mfa")

T = TypeVar("T")

_INVALID = "the code is wrong or used, or the mfa_token is unknown, expired or used"


FEDERATED_FIRST = "federated"
"""``MfaChallenge.first_factor`` after another provider's login
(``docs/reference/federation.md``)."""
_FEDERATED_PREFIX = "federated_"


def second_step_method(first_factor: str, method: str) -> str:
    """The login method a second step hands its start: ``method`` (``totp``,
    ``recovery_code``, ``passkey_second_step``) after a password, ``federated_<method>``
    after another provider's login (the hosted session's ``amr`` then says ``fed``)."""
    return _FEDERATED_PREFIX + method if first_factor == FEDERATED_FIRST else method


def audited_method(method: str) -> str:
    """``login.succeeded``'s ``details.method`` of a second step's ``method`` (the
    reference ``docs/reference/mfa-and-passkeys.md`` names ``totp``, ``recovery_code``,
    ``passkey``)."""
    return method.removeprefix(_FEDERATED_PREFIX)


async def claim_code_attempt(storage: Storage, token_hash: str, now: datetime) -> int | None:
    """Claim one evaluation of a code (or passkey) on the ``mfa_token`` of ``token_hash``
    before it is checked (docs/reference/mfa-and-passkeys.md, count first): its number, 1 ..
    ``MFA_CHALLENGE_MAX_FAILURES``, or None when the token is unknown, expired, used or has
    had all its tries — then nothing may be evaluated. Atomic in every backend
    (``MfaStore.claim_attempt``)."""
    async with storage.begin() as uow:
        number = await uow.mfa.claim_attempt(token_hash, MFA_CHALLENGE_MAX_FAILURES, now)
        await uow.commit()
    return number


async def void_if_spent(storage: Storage, token_hash: str, number: int) -> bool:
    """After the ``number``-th claimed evaluation turned out wrong: void (delete) the
    ``mfa_token`` if that was its last try; True if so."""
    if number < MFA_CHALLENGE_MAX_FAILURES:
        return False
    async with storage.begin() as uow:
        await uow.mfa.take_challenge(token_hash)
        await uow.commit()
    return True


def is_totp_code(code: str) -> bool:
    """True for six ASCII digits (a TOTP code); anything else is tried as a recovery code."""
    return len(code) == 6 and code.isascii() and code.isdigit()


@attrs.frozen
class MfaLogin:
    """POST /login/mfa: ``MfaLogin(storage, totp, sealer, issuer, bus, clock, settings,
    throttle)``."""

    _storage: Storage
    _totp: Totp
    _sealer: SecretSealer
    _issuer: TokenIssuer
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]
    _throttle: LoginThrottle

    async def complete(
        self, mfa_token: str, code: str, client: str, user_agent: str | None = None
    ) -> TokenPair:
        """``complete_with`` starting a session of the JSON API (a refresh-token family
        recording ``user_agent`` and ``client``); returns its ``TokenPair``."""

        start = token_start(self._issuer, client, user_agent, audited_method)
        return await self.complete_with(mfa_token, code, client, start)

    async def complete_with(
        self, mfa_token: str, code: str, client: str, start: LoginStart[T]
    ) -> T:
        """Finish the login with a TOTP code (six digits, ±1 step of 30 s, each step once) or a
        recovery code (each once); returns the ``TokenPair`` of a new session recording
        ``user_agent`` and ``client`` (the client address).

        Raises ``InvalidMfaCode`` (401) for an unknown, expired, used or voided ``mfa_token`` or
        a wrong or reused code (the fifth wrong one voids the token); ``RateLimited`` (429) while
        the user's email from ``client`` is throttled; ``AccountDisabled`` / ``EmailNotVerified``
        (403; ``domain.login.login_refusal``) if the account may not log in now (disabled
        since the password step, say), with a ``LoginFailed`` of method ``totp`` or
        ``recovery_code``. Events: ``LoginSucceeded`` and
        ``AccessTokenIssued`` on success; ``MfaFailed`` per failure; ``LoginFailed``
        (``rate_limited``) when throttled.
        """
        token_hash = hash_token(mfa_token)
        now = self._clock.now()
        async with self._storage.read() as uow:
            challenge = await uow.mfa.find_challenge(token_hash)
            user = None if challenge is None else await uow.users.get(challenge.user_id)
            credential = None if user is None else await uow.mfa.get_totp(user.id)
        if challenge is None or user is None or challenge.is_expired(now):
            failed = MfaFailed(None, client, "invalid_mfa_token")
            await publish_failure(self._storage, self._bus, now, failed)
            raise InvalidMfaCode(_INVALID)
        try:  # counted first (as a failure), then checked: see application.shared.throttle
            attempt = await self._throttle.attempt(user.email, client)
        except RateLimited:
            limited = LoginFailed(user_id=user.id, client=client, reason="rate_limited")
            await publish_failure(self._storage, self._bus, now, limited)
            raise
        number = await claim_code_attempt(self._storage, token_hash, now)
        if number is None:  # voided, used or expired since: no code is evaluated
            await self._throttle.release(attempt)
            failed = MfaFailed(user.id, client, "invalid_mfa_token")
            await publish_failure(self._storage, self._bus, now, failed)
            raise InvalidMfaCode(_INVALID)
        step = None
        code = code.strip()
        if is_totp_code(code) and credential is not None and credential.confirmed:
            try:
                secret = self._sealer.unseal(credential.sealed_secret, secret_context(user.id))
            except SealedSecretError as exc:  # the operator lost or changed the key
                log.error("user %s: %s; recovery codes still work", user.id, exc)
            else:
                step = self._totp.matching_step(secret.decode("ascii"), code, now)
        async with self._storage.begin() as uow:
            if await uow.mfa.take_challenge(token_hash) is None:
                # Voided or used by a concurrent request since the claim: this claimed try is
                # refused like a wrong code (and recorded as one).
                accepted = False
            elif step is not None:
                accepted = await uow.mfa.claim_step(user.id, step)
            elif is_totp_code(code):
                accepted = False
            else:
                accepted = await uow.mfa.use_recovery_code(user.id, recovery_code_hash(code))
            current = await uow.users.get(user.id) if accepted else None
            method = "totp" if step is not None else "recovery_code"
            outcome = await finish_login(
                uow, current if current is not None and current.mfa_enabled else None, start,
                second_step_method(challenge.first_factor, method), self._settings.current, now,
                audited=method,
            )  # fmt: skip
        if not outcome.held:  # a wrong code, or the user gone or without MFA since
            await self._failed(token_hash, number, user, client, now)
        if outcome.refusal is not None:  # a valid code is no failure
            await self._throttle.release(attempt)
        else:
            await self._throttle.succeeded(user.email, client)
        return await outcome.conclude(self._storage, self._bus, client)

    async def _failed(
        self, token_hash: str, number: int, user: User, client: str, now: datetime
    ) -> NoReturn:
        """A wrong code, the ``number``-th claimed on the ``mfa_token`` (its claim and the
        throttle's already count it): void the token at the last; raises ``InvalidMfaCode``."""
        voided = await void_if_spent(self._storage, token_hash, number)
        failed = MfaFailed(user.id, client, "voided" if voided else "wrong_code")
        await publish_failure(self._storage, self._bus, now, failed)
        raise InvalidMfaCode(_INVALID)
