"""Multi-factor authentication: TOTP enrolment, recovery codes, turning MFA off (
docs/reference/mfa-and-passkeys.md; ADR 0018). The login's second step is
``application.login.mfa_step``.

A user has at most one TOTP secret, sealed (AES-GCM, ``SecretSealer``) with its user id as
associated data. ``POST /me/mfa/totp`` stores a pending one (replacing an earlier pending one);
``/me/mfa/totp/confirm`` with a valid code switches MFA on, remembers the code's step (so that
code cannot log in afterwards) and hands out ten recovery codes, stored only as SHA-256 hashes.
"""

from __future__ import annotations

import secrets

import attrs

from application.events.audit import record
from application.events.catalog import MfaDisabled, MfaEnabled, RecoveryCodesRegenerated
from application.ports import (
    Clock,
    EventBus,
    SealedSecretError,
    SecretSealer,
    Storage,
    Totp,
    UnitOfWork,
)
from application.shared.reauth import FreshProof, Reauthentication
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token
from application.shared.users import token_user, user_in_scope
from domain import policy
from domain.errors import Conflict, FieldError, ValidationFailed
from domain.model import User
from domain.policy import Actor, Operation

RECOVERY_CODE_COUNT = 10
"""Recovery codes handed out when MFA is switched on (docs/reference/mfa-and-passkeys.md)."""
_RECOVERY_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # 32 symbols, no l/o/0/1 look-alikes
_RECOVERY_GROUPS = 5
_RECOVERY_GROUP_LENGTH = 5
"""A recovery code is 5 groups of 5 symbols of 32 (``xxxxx-xxxxx-xxxxx-xxxxx-xxxxx``): 125
bits, at least the 112 that ASVS 5.0 6.5.2 asks of a secret stored as an unsalted hash
(docs/reference/mfa-and-passkeys.md). It is never six digits, so ``is_totp_code`` tells it from a
TOTP code."""


def new_recovery_code() -> str:
    """A new random recovery code, ``xxxxx-xxxxx-xxxxx-xxxxx-xxxxx`` (from ``secrets``; 125
    bits)."""
    return "-".join(
        "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(_RECOVERY_GROUP_LENGTH))
        for _ in range(_RECOVERY_GROUPS)
    )


def recovery_code_hash(code: str) -> str:
    """The stored form of a recovery code: SHA-256 hex of it lower-cased, without spaces or
    hyphens (so ``ABCD EFGH ...`` typed by hand matches ``abcd-efgh-...``)."""
    return hash_token("".join(c for c in code.lower() if c not in " -\t"))


def secret_context(user_id: str) -> bytes:
    """The associated data a user's TOTP secret is sealed with: its user id (a sealed secret
    copied to another user's row does not open)."""
    return b"totp:" + user_id.encode("utf-8")


@attrs.frozen
class TotpEnrolment:
    """A pending enrolment, shown once (POST /me/mfa/totp): ``secret`` (base32),
    ``otpauth_uri`` (what the QR code holds), ``qr_svg`` (an SVG document)."""

    secret: str = attrs.field(repr=False)
    otpauth_uri: str = attrs.field(repr=False)
    qr_svg: str = attrs.field(repr=False)


async def switch_off(uow: UnitOfWork, user: User) -> bool:
    """Delete the user's second factors and mark MFA off, in ``uow``; True if MFA was on."""
    was_on = await uow.mfa.remove(user.id)
    if user.mfa_enabled:
        await uow.users.update(attrs.evolve(user, mfa_enabled=False))
    return was_on or user.mfa_enabled


@attrs.frozen
class MfaEnrolment:
    """The user's own MFA routes: ``start`` (POST /me/mfa/totp), ``confirm``
    (POST /me/mfa/totp/confirm), ``regenerate_recovery_codes`` (the account page), ``disable``
    (DELETE /me/mfa)."""

    _storage: Storage
    _totp: Totp
    _sealer: SecretSealer
    _reauth: Reauthentication
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]

    async def start(self, user_id: str, proof: FreshProof, client: str) -> TotpEnrolment:
        """Create a pending TOTP secret for the user (replacing an earlier pending one) and
        return it with its ``otpauth://`` URI (issuer ``auth.mfa_issuer``, account = email) and
        QR code — after a fresh ``proof`` of the user sent from ``client`` (the client address;
        docs/reference/mfa-and-passkeys.md: ``Reauthentication.require`` raises
        ``ReauthenticationRequired`` (401), ``RateLimited`` (429), ``ValidationFailed`` (422)).
        Raises ``Conflict`` (409) when MFA is already on (turn it off first), ``InvalidToken`` if
        the user is gone or disabled."""
        async with self._storage.read() as uow:
            user = await token_user(uow, user_id)
        await self._reauth.require(user, proof, client)  # bcrypt: no connection held meanwhile
        secret = self._totp.new_secret()
        async with self._storage.begin() as uow:
            user = await token_user(uow, user_id)
            if user.mfa_enabled:
                raise Conflict("MFA is already on: turn it off first (DELETE /me/mfa)")
            sealed = self._sealer.seal(secret.encode("ascii"), secret_context(user.id))
            await uow.mfa.put_pending(user.id, sealed, self._clock.now())
            await uow.commit()
        uri = self._totp.provisioning_uri(secret, user.email, self._settings.current.mfa_issuer)
        return TotpEnrolment(secret=secret, otpauth_uri=uri, qr_svg=self._totp.qr_svg(uri))

    async def confirm(self, user_id: str, code: str) -> list[str]:
        """Switch MFA on with a valid code of the pending secret; returns the ten recovery codes
        (shown once; stored as hashes). The code's step counts as used.

        Raises ``Conflict`` (409) when there is no pending enrolment (none, or MFA already on),
        ``ValidationFailed`` (422, field ``code``) for a code that does not match,
        ``InvalidToken`` if the user is gone or disabled. Publishes ``MfaEnabled``.
        """
        codes = [new_recovery_code() for _ in range(RECOVERY_CODE_COUNT)]
        async with self._storage.begin() as uow:
            user = await token_user(uow, user_id)
            credential = await uow.mfa.get_totp(user.id)
            if credential is None or credential.confirmed:
                raise Conflict("no pending MFA enrolment: start one with POST /me/mfa/totp")
            try:
                secret = self._sealer.unseal(credential.sealed_secret, secret_context(user.id))
            except SealedSecretError:  # the key changed since the enrolment started
                raise Conflict("the pending enrolment is unreadable: start a new one") from None
            step = self._totp.matching_step(secret.decode("ascii"), code, self._clock.now())
            if step is None:
                raise ValidationFailed(
                    [FieldError("code", "does not match the authenticator's current code")]
                )
            if not await uow.mfa.confirm(user.id, step, [recovery_code_hash(c) for c in codes]):
                raise Conflict("no pending MFA enrolment: start one with POST /me/mfa/totp")
            await uow.users.update(attrs.evolve(user, mfa_enabled=True))
            enabled = MfaEnabled(user_id=user.id)
            await record(uow, [enabled], self._clock.now())
            await uow.commit()
        await self._bus.publish(enabled)
        return codes

    async def regenerate_recovery_codes(
        self, user_id: str, proof: FreshProof, client: str
    ) -> list[str]:
        """Replace the user's recovery codes with ten new ones (shown once; stored as hashes)
        after a fresh ``proof`` of the user sent from ``client`` (as ``start``: 401
        ``ReauthenticationRequired``, 429 ``RateLimited``, 422 ``ValidationFailed``); the old
        codes stop working. Raises ``Conflict`` (409) when MFA is off, ``InvalidToken`` if the
        user is gone or disabled. Publishes ``RecoveryCodesRegenerated``."""
        async with self._storage.read() as uow:
            user = await token_user(uow, user_id)
        await self._reauth.require(user, proof, client)
        codes = [new_recovery_code() for _ in range(RECOVERY_CODE_COUNT)]
        regenerated = RecoveryCodesRegenerated(user_id=user_id)
        async with self._storage.begin() as uow:
            user = await token_user(uow, user_id)
            hashes = [recovery_code_hash(c) for c in codes]
            if not user.mfa_enabled or not await uow.mfa.replace_recovery_codes(user.id, hashes):
                raise Conflict("MFA is off: there are no recovery codes to replace")
            await record(uow, [regenerated], self._clock.now())
            await uow.commit()
        await self._bus.publish(regenerated)
        return codes

    async def disable(self, user_id: str, password: str, client: str) -> None:
        """Turn MFA off with the user's password (DELETE /me/mfa) sent from ``client`` (the
        client address): the secret, the recovery codes and pending second steps go. No error
        when MFA was off.

        Raises ``InvalidOldPassword`` (403) for a wrong password — counted by the login
        throttle, ``RateLimited`` (429) past it — and ``InvalidToken`` if the user is gone or
        disabled. Publishes ``MfaDisabled`` (actor = the user) when MFA was on.
        """
        async with self._storage.read() as uow:
            user = await token_user(uow, user_id)
        await self._reauth.confirm_password(user, password, client)
        disabled = MfaDisabled(user_id=user_id, actor_id=user_id)
        async with self._storage.begin() as uow:
            was_on = await switch_off(uow, await token_user(uow, user_id))
            if was_on:
                await record(uow, [disabled], self._clock.now())
            await uow.commit()
        if was_on:
            await self._bus.publish(disabled)


@attrs.frozen
class ResetUserMfa:
    """DELETE /users/{id}/mfa: an administrator turns a user's MFA off (a lost device).

    Rules (``domain.policy.check_user_management`` with ``RESET_USER_MFA``): viewer/operator →
    ``Forbidden``; missing or outside an org_admin's organization → ``NotFound``; an org_admin
    on a superadmin or on itself → ``Forbidden``. No error when MFA was off; ``MfaDisabled``
    (actor = the administrator) when it was on.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, user_id: str) -> None:
        """Turn MFA off for ``user_id``."""
        policy.require(actor, Operation.RESET_USER_MFA)
        async with self._storage.begin() as uow:
            target = await user_in_scope(uow, actor, user_id)
            policy.check_user_management(actor, target, Operation.RESET_USER_MFA)
            was_on = await switch_off(uow, target)
            disabled = MfaDisabled(user_id=target.id, actor_id=actor.actor_id)
            if was_on:
                await record(uow, [disabled], self._clock.now())
            await uow.commit()
        if was_on:
            await self._bus.publish(disabled)
