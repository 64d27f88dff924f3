"""Logging in with a passkey (docs/reference/mfa-and-passkeys.md): ``/login/passkey/options`` and
``/login/passkey``.

Options are discoverable (no ``allowCredentials``) or, with an email, carry that user's
credential ids; an unknown email (or a user without passkeys) gets one credential id derived
from the email and a server secret, the same on every request (no enumeration). A passkey
login is two factors: no ``mfa_required`` after it.

Finishing takes the ceremony first (used up whatever follows), counts the attempt on the
throttle (per credential id and client address; atomically, before the check: see
``application.shared.throttle``), checks the assertion in WebAuthn L3 §7.2's order — the credential
and its user (a discoverable login's ``userHandle`` must be there and be the passkey owner's;
any ``userHandle`` must be), then the signature (``WebAuthn`` port), and only then the counter —
asks ``domain.login.login_refusal`` whether the user may log in, stores the new counter by
compare-and-set (``PasskeyRepo.record_use``) and issues a ``TokenPair``. Every failed check is
one answer, 401 ``invalid_passkey``; a counter that did not grow under a valid signature flags
the passkey ``suspected_clone`` (kept, refused until deleted; ``passkey.clone_suspected``), so
nobody without the private key can flag one. A login whose compare-and-set lost (another login
stored a counter since this one was read) is refused alike and flags nothing (ADR 0024).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, NoReturn, TypeVar

import attrs

from application.events.audit import publish_failure
from application.events.catalog import LoginFailed, MfaFailed
from application.login.finish import LoginStart, finish_login, token_start
from application.login.mfa_step import (
    claim_code_attempt,
    second_step_method,
    void_if_spent,
)
from application.login.passkey_decoy import DecoyIds
from application.passkeys.assertions import (
    credential_id_of,
    flag_clone,
    handle_refused,
    take_ceremony,
    take_login_ceremony,
    user_handle_of,
)
from application.passkeys.registration import CHALLENGE_BYTES, RegistrationStarted
from application.passkeys.settings import WebAuthnSettings, relying_party
from application.ports import (
    Clock,
    EmailNormalizer,
    EventBus,
    SecretSealer,
    Storage,
    VerifiedAssertion,
    WebAuthn,
)
from application.sessions.tokens import TokenIssuer, TokenPair
from application.shared.settings import AuthSettings, Live
from application.shared.steps import IdFactory, hash_token, new_id
from application.shared.throttle import Attempt, LoginThrottle
from domain.errors import (
    FieldError,
    Forbidden,
    InvalidCeremony,
    InvalidMfaCode,
    InvalidPasskey,
    PasskeyLoginFailed,
    RateLimited,
    ValidationFailed,
)
from domain.model import User
from domain.passkeys import CEREMONY_TTL, Ceremony, CeremonyKind, Passkey

__all__ = ["PASSKEY", "PASSKEY_PRESENCE", "PASSKEY_SECOND_STEP", "PasskeyLogin"]

T = TypeVar("T")
PASSKEY = "passkey"
"""The ``method`` a login's start gets for a passkey alone, with user verification (UV)."""
PASSKEY_PRESENCE = "passkey_presence"
"""… for a passkey alone without UV (``webauthn.user_verification = "preferred"``): one
factor, possession (docs/reference/oauth-and-oidc.md's ``acr`` ``"1"``)."""
PASSKEY_SECOND_STEP = "passkey_second_step"
"""… for a passkey answering ``mfa_required`` after the password."""

_MFA_INVALID = "the passkey was refused, or the mfa_token is unknown, expired or used"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@attrs.frozen
class PasskeyLogin:
    """``start(email=None)`` → ceremony and request options; ``finish(ceremony_id,
    credential, client, user_agent)`` → ``TokenPair``."""

    _storage: Storage
    _webauthn: WebAuthn
    _issuer: TokenIssuer
    _sealer: SecretSealer
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _settings: Live[WebAuthnSettings]
    _throttle: LoginThrottle
    _normalize_email: EmailNormalizer
    _ids: IdFactory = new_id
    _decoys: DecoyIds = attrs.field(
        init=False,
        default=attrs.Factory(lambda self: DecoyIds(self._storage, self._sealer), takes_self=True),
    )

    async def start(
        self, email: str | None = None, mfa_token: str | None = None
    ) -> RegistrationStarted:
        """Request options: discoverable without ``email``; else that user's credential ids,
        or a decoy id for an unknown email. With an ``mfa_token``
        (docs/reference/mfa-and-passkeys.md) the options carry that token's user's credentials and
        the ceremony is bound to it (only ``/login/mfa`` with that token completes it). Raises
        ``Forbidden`` with ``webauthn.passwordless`` off and no ``mfa_token``, ``InvalidMfaCode``
        for an unknown or expired ``mfa_token``, ``ValidationFailed`` for a malformed email or both
        given."""
        if mfa_token is not None:
            if email is not None:
                raise ValidationFailed([FieldError("email", "give an email or an mfa_token")])
            return await self._start_for_mfa(mfa_token)
        if not self._settings.current.passwordless:
            raise Forbidden("passkeys only answer mfa_required here (webauthn.passwordless)")
        now = self._clock.now()
        user_id = None
        allow: list[bytes] = []
        if email is not None:
            canonical = self._normalize_email(email)
            async with self._storage.read() as uow:
                user = await uow.users.get_by_email(canonical)
                if user is not None:
                    user_id = user.id
                    allow = [p.credential_id for p in await uow.passkeys.list_for_user(user.id)]
            if not allow:  # unknown email, or no passkey: the same shape, stable per email
                allow = [await self._decoys.for_email(canonical)]
        challenge = os.urandom(CHALLENGE_BYTES)
        ceremony = Ceremony(self._ids(), CeremonyKind.AUTHENTICATION, challenge, user_id, None,
                            now, now + timedelta(seconds=CEREMONY_TTL))  # fmt: skip
        async with self._storage.begin() as uow:
            await uow.passkeys.put_ceremony(ceremony)
            await uow.commit()
        rp = relying_party(self._auth.current.issuer, self._settings.current)
        options = self._webauthn.authentication_options(rp, challenge, allow)
        return RegistrationStarted(ceremony.id, options)

    async def _start_for_mfa(self, mfa_token: str) -> RegistrationStarted:
        token_hash = hash_token(mfa_token)
        now = self._clock.now()
        async with self._storage.read() as uow:
            challenge = await uow.mfa.find_challenge(token_hash)
            if challenge is None or challenge.is_expired(now):
                raise InvalidMfaCode(_MFA_INVALID)
            allow = [p.credential_id for p in await uow.passkeys.list_for_user(challenge.user_id)]
        challenge_bytes = os.urandom(CHALLENGE_BYTES)
        ceremony = Ceremony(self._ids(), CeremonyKind.AUTHENTICATION, challenge_bytes,
                            challenge.user_id, token_hash, now,
                            now + timedelta(seconds=CEREMONY_TTL))  # fmt: skip
        async with self._storage.begin() as uow:
            await uow.passkeys.put_ceremony(ceremony)
            await uow.commit()
        rp = relying_party(self._auth.current.issuer, self._settings.current)
        return RegistrationStarted(
            ceremony.id, self._webauthn.authentication_options(rp, challenge_bytes, allow)
        )

    def _token_start(self, client: str, user_agent: str | None) -> LoginStart[TokenPair]:
        """A session of the JSON API (``token_start``); its ``login.succeeded`` says
        ``passkey``."""
        return token_start(self._issuer, client, user_agent, lambda _: PASSKEY)

    async def answer_mfa(
        self,
        mfa_token: str,
        ceremony_id: str,
        credential: Mapping[str, Any],
        client: str,
        user_agent: str | None = None,
    ) -> TokenPair:
        """``answer_mfa_with`` starting a session of the JSON API; returns its ``TokenPair``."""
        start = self._token_start(client, user_agent)
        return await self.answer_mfa_with(mfa_token, ceremony_id, credential, client, start)

    async def answer_mfa_with(
        self,
        mfa_token: str,
        ceremony_id: str,
        credential: Mapping[str, Any],
        client: str,
        start: LoginStart[T],
    ) -> T:
        """``/login/mfa`` answered with a passkey instead of a code: the ceremony must be
        bound to ``mfa_token`` (``InvalidCeremony`` otherwise); a failed check counts against
        the ``mfa_token`` and the throttle like a wrong code (401 ``invalid_mfa_code``); the
        ``mfa_token`` is taken in the transaction that runs ``start(uow, user,
        PASSKEY_SECOND_STEP)``, whose result is returned."""
        token_hash = hash_token(mfa_token)
        now = self._clock.now()
        ceremony = await take_ceremony(self._storage, ceremony_id)  # used up, whatever follows
        if ceremony is None or ceremony.mfa_token_hash != token_hash or ceremony.is_expired(now):
            raise InvalidCeremony("unknown, used or expired ceremony, or another mfa_token's")
        handle = user_handle_of(credential)
        async with self._storage.read() as uow:
            challenge = await uow.mfa.find_challenge(token_hash)
            user = None if challenge is None else await uow.users.get(challenge.user_id)
            raw = credential_id_of(credential)
            passkey = None if raw is None else await uow.passkeys.by_credential_id(raw)
            owner = None if handle is None else await uow.passkeys.user_for_handle(handle)
        if challenge is None or user is None or challenge.is_expired(now):
            failed = MfaFailed(None, client, "invalid_mfa_token")
            await publish_failure(self._storage, self._bus, now, failed)
            raise InvalidMfaCode(_MFA_INVALID)
        try:  # counted first, on the throttle and the mfa_token, then checked
            attempt = await self._throttle.attempt(user.email, client)
        except RateLimited:
            limited = LoginFailed(user.id, client, "rate_limited", "passkey")
            await publish_failure(self._storage, self._bus, now, limited)
            raise
        number = await claim_code_attempt(self._storage, token_hash, now)
        if number is None:  # voided, used or expired since: nothing is evaluated
            await self._throttle.release(attempt)
            failed = MfaFailed(user.id, client, "invalid_mfa_token")
            await publish_failure(self._storage, self._bus, now, failed)
            raise InvalidMfaCode(_MFA_INVALID)
        if (
            passkey is None
            or passkey.suspected_clone
            or passkey.user_id != user.id
            or handle_refused(handle, owner, passkey, needed=False)
        ):
            await self._mfa_failed(token_hash, number, user.id, client)
        seen = await self._verified(passkey, credential, ceremony.challenge)
        if seen is None:
            await self._mfa_failed(token_hash, number, user.id, client)
        method = second_step_method(challenge.first_factor, PASSKEY_SECOND_STEP)
        done = await self._log_in(
            passkey, seen, user.email, attempt, client, start, method, token_hash
        )
        if done is None:
            await self._mfa_failed(token_hash, number, user.id, client)
        return done[0]

    async def _mfa_failed(
        self, token_hash: str, number: int, user_id: str, client: str
    ) -> NoReturn:
        """A refused passkey, the ``number``-th claimed try on the ``mfa_token`` (its claim and
        the throttle's already count it): void the token at the last; raise alike."""
        voided = await void_if_spent(self._storage, token_hash, number)
        failed = MfaFailed(user_id, client, "voided" if voided else "wrong_passkey")
        await publish_failure(self._storage, self._bus, self._clock.now(), failed)
        raise InvalidMfaCode(_MFA_INVALID)

    async def finish(
        self,
        ceremony_id: str,
        credential: Mapping[str, Any],
        client: str,
        user_agent: str | None = None,
    ) -> TokenPair:
        """``finish_with`` starting a session of the JSON API; returns its ``TokenPair``."""
        start = self._token_start(client, user_agent)
        return await self.finish_with(ceremony_id, credential, client, start)

    async def finish_with(
        self,
        ceremony_id: str,
        credential: Mapping[str, Any],
        client: str,
        start: LoginStart[T],
    ) -> T:
        """Check the assertion and log its user in with ``start(uow, user, method)`` (``method``
        ``PASSKEY``, or ``PASSKEY_PRESENCE`` when the authenticator did not verify the user),
        returning what it started. Raises ``InvalidCeremony`` (400),
        ``PasskeyLoginFailed`` (401, one answer for every failed check: an unknown or flagged
        credential, another user's, a discoverable login without ``userHandle``, a
        ``userHandle`` that is not the owner's, a refused assertion, a lost compare-and-set),
        ``RateLimited`` (429), ``AccountDisabled`` / ``EmailNotVerified`` (403, with a
        ``login.failed`` row of method ``passkey``)."""
        now = self._clock.now()
        ceremony = await take_login_ceremony(self._storage, ceremony_id, now)  # used up
        if ceremony is None:
            raise InvalidCeremony("unknown, used or expired ceremony")
        raw = credential_id_of(credential)
        key = "passkey:" + ("" if raw is None else _b64url(raw))
        try:  # counted first (as a failure), then checked: see application.shared.throttle
            attempt = await self._throttle.attempt(key, client)
        except RateLimited:
            owner_id = await self._owner_of(raw)  # the answer is decided
            limited = LoginFailed(owner_id, client, "rate_limited", "passkey")
            await publish_failure(self._storage, self._bus, now, limited)
            raise
        handle = user_handle_of(credential)
        async with self._storage.read() as uow:
            passkey = None if raw is None else await uow.passkeys.by_credential_id(raw)
            owner = None if handle is None else await uow.passkeys.user_for_handle(handle)
        if (
            passkey is None
            or passkey.suspected_clone
            or (ceremony.user_id is not None and passkey.user_id != ceremony.user_id)
        ):
            await self._failed(key, client, None if passkey is None else passkey.user_id)
        if handle_refused(handle, owner, passkey, needed=ceremony.user_id is None):
            await self._failed(key, client, passkey.user_id)
        seen = await self._verified(passkey, credential, ceremony.challenge)
        if seen is None:
            await self._failed(key, client, passkey.user_id)
        method = PASSKEY if seen.user_verified else PASSKEY_PRESENCE
        done = await self._log_in(passkey, seen, key, attempt, client, start, method)
        if done is None:
            await self._failed(key, client, passkey.user_id)
        return done[0]

    async def _owner_of(self, raw: bytes | None) -> str | None:
        """The user id of the passkey with credential id ``raw``, or None (for audit rows)."""
        async with self._storage.read() as uow:
            passkey = None if raw is None else await uow.passkeys.by_credential_id(raw)
        return None if passkey is None else passkey.user_id

    async def _verified(
        self, passkey: Passkey, credential: Mapping[str, Any], challenge: bytes
    ) -> VerifiedAssertion | None:
        """The assertion checked against ``passkey`` (``WebAuthn.verify_authentication``: the
        signature first, then the counter), or None if refused — after flagging ``passkey``
        when its signature verified but its counter did not grow."""
        rp = relying_party(self._auth.current.issuer, self._settings.current)
        try:
            return self._webauthn.verify_authentication(
                rp, credential, challenge, passkey.public_key, passkey.sign_count
            )
        except InvalidPasskey as exc:
            if exc.reason == "counter":  # only ever after a valid signature
                await flag_clone(self._storage, self._bus, self._clock.now(), passkey)
            return None

    async def _log_in(
        self,
        passkey: Passkey,
        seen: VerifiedAssertion,
        key: str,
        attempt: Attempt,
        client: str,
        start: LoginStart[T],
        method: str,
        mfa_token_hash: str | None = None,
    ) -> tuple[T] | None:
        """Run ``start(uow, user, method)`` for ``passkey``'s user (taking the ``mfa_token``
        of ``mfa_token_hash`` in the same transaction, when given), storing ``seen``'s counter
        by compare-and-set against the one it was checked with; reset the throttle of ``key``
        and ``client``; ``(started,)``. None (nothing changed) when the user is gone or the
        compare-and-set lost, or the ``mfa_token`` was voided or used by a concurrent request
        since the claim: the caller refuses it as a failed check (recorded, as the MFA step
        records a code tried on a token taken meanwhile). Raises ``login_refusal``'s refusal
        (recorded as ``login.failed``, method ``passkey``; the throttle's ``attempt`` is
        released first: a valid proof is no failure)."""
        now = self._clock.now()
        used = attrs.evolve(passkey, sign_count=seen.sign_count, backed_up=seen.backed_up,
                            last_used_at=now)  # fmt: skip
        async with self._storage.begin() as uow:
            if mfa_token_hash is not None and await uow.mfa.take_challenge(mfa_token_hash) is None:
                return None  # voided or used by a concurrent request: nothing changes

            async def counted(_: User) -> bool:  # the counter's compare-and-set
                return await uow.passkeys.record_use(used, passkey.sign_count)

            user = await uow.users.get(passkey.user_id)
            outcome = await finish_login(uow, user, start, method, self._auth.current, now,
                                         audited=PASSKEY, last_check=counted)  # fmt: skip
        if not outcome.held:
            return None
        if outcome.refusal is not None:  # a valid proof is no failure
            await self._throttle.release(attempt)
        else:
            await self._throttle.succeeded(key, client)
        return (await outcome.conclude(self._storage, self._bus, client),)

    async def _failed(self, key: str, client: str, user_id: str | None) -> NoReturn:
        """Record the failure (the throttle's attempt for ``key`` already counts it), refuse
        alike."""
        failed = LoginFailed(user_id, client, "invalid_passkey", "passkey")
        await publish_failure(self._storage, self._bus, self._clock.now(), failed)
        raise PasskeyLoginFailed("the passkey was refused")
