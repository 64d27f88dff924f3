"""Passkey registration and management (docs/reference/mfa-and-passkeys.md): the ceremony that
registers a passkey for the caller, and the caller's and an admin's view of the passkeys.

A registration ceremony is a random 32-byte challenge stored with the user it belongs to,
single use and 300 s. Finishing takes the ceremony in a unit of work of its own first, so a
ceremony is used up whatever the response is; then the response is checked (``WebAuthn``
port) and the passkey stored with its audit row. Errors: ``InvalidCeremony`` (400),
``InvalidPasskey`` (400 here), ``PasskeyExists`` (409).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import attrs

from application.events.audit import record
from application.events.passkeys import PasskeyRegistered, PasskeyRemoved
from application.passkeys.assertions import take_ceremony
from application.passkeys.settings import WebAuthnSettings, relying_party
from application.ports import Clock, EventBus, RelyingParty, Storage, WebAuthn
from application.shared.checks import check_name
from application.shared.reauth import FreshProof, Reauthentication
from application.shared.settings import AuthSettings, Live
from application.shared.steps import IdFactory, new_id
from application.shared.users import token_user, user_in_scope
from domain import policy
from domain.errors import (
    Conflict,
    InvalidCeremony,
    InvalidPasskey,
    NotFound,
    PasskeyExists,
)
from domain.passkeys import (
    CEREMONY_TTL,
    USER_HANDLE_BYTES,
    Ceremony,
    CeremonyKind,
    Passkey,
)
from domain.policy import Actor, Operation

__all__ = [
    "CHALLENGE_BYTES",
    "CREDENTIAL_ID_MAX_BYTES",
    "OwnPasskeys",
    "PasskeyAdmin",
    "PasskeyRegistration",
    "RegistrationStarted",
]

CHALLENGE_BYTES = 32
"""Bytes of randomness in a ceremony's challenge (docs/reference/mfa-and-passkeys.md)."""
CREDENTIAL_ID_MAX_BYTES = 1023
"""The longest credential id registered (WebAuthn L3 §7.1 step 23;
docs/reference/mfa-and-passkeys.md)."""
_NOT_FOUND = "passkey not found"


@attrs.frozen
class RegistrationStarted:
    """The answer to ``/me/passkeys/registration/options``: ``ceremony_id`` and the
    ``PublicKeyCredentialCreationOptionsJSON`` for the browser."""

    ceremony_id: str
    options: dict[str, Any]


@attrs.frozen
class PasskeyRegistration:
    """``start(user_id, proof, client)`` and ``finish(user_id, ceremony_id, credential,
    name)``: register a passkey for the caller (docs/reference/mfa-and-passkeys.md)."""

    _storage: Storage
    _webauthn: WebAuthn
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _settings: Live[WebAuthnSettings]
    _reauth: Reauthentication
    _ids: IdFactory = new_id

    def _rp(self) -> RelyingParty:
        return relying_party(self._auth.current.issuer, self._settings.current)

    async def start(self, user_id: str, proof: FreshProof, client: str) -> RegistrationStarted:
        """A registration ceremony for ``user_id``: creation options with the user's opaque
        handle (made on first use) and its passkeys excluded — after a fresh ``proof`` of the
        user sent from ``client`` (the client address; ``Reauthentication.require``: 401
        ``ReauthenticationRequired``, 429 ``RateLimited``, 422 ``ValidationFailed``). Raises
        ``InvalidToken`` if the user is gone or disabled."""
        async with self._storage.read() as uow:
            user = await token_user(uow, user_id)
        await self._reauth.require(user, proof, client)  # bcrypt: no connection held meanwhile
        now = self._clock.now()
        challenge = os.urandom(CHALLENGE_BYTES)
        ceremony = Ceremony(self._ids(), CeremonyKind.REGISTRATION, challenge, user_id, None,
                            now, now + timedelta(seconds=CEREMONY_TTL))  # fmt: skip
        async with self._storage.begin() as uow:
            user = await token_user(uow, user_id)
            handle = await uow.passkeys.user_handle(user.id, os.urandom(USER_HANDLE_BYTES))
            exclude = [p.credential_id for p in await uow.passkeys.list_for_user(user.id)]
            await uow.passkeys.put_ceremony(ceremony)
            await uow.commit()
        options = self._webauthn.registration_options(
            self._rp(), handle, user.email, challenge, exclude
        )
        return RegistrationStarted(ceremony.id, options)

    async def finish(
        self,
        user_id: str,
        ceremony_id: str,
        credential: Mapping[str, Any],
        name: str | None = None,
    ) -> Passkey:
        """Check ``credential`` against the ceremony and store the passkey (named ``name``,
        else after its creation). Raises ``InvalidCeremony``, ``InvalidPasskey`` (a failed
        check, or a credential id over ``CREDENTIAL_ID_MAX_BYTES``),
        ``PasskeyExists``, ``ValidationFailed`` naming ``name``."""
        label = None if name is None else check_name(name)
        now = self._clock.now()
        ceremony = await take_ceremony(self._storage, ceremony_id)  # used up, whatever follows
        if (
            ceremony is None
            or ceremony.kind is not CeremonyKind.REGISTRATION
            or ceremony.user_id != user_id
            or ceremony.is_expired(now)
        ):
            raise InvalidCeremony("unknown, used, expired or another user's ceremony")
        new = self._webauthn.verify_registration(self._rp(), credential, ceremony.challenge)
        if len(new.credential_id) > CREDENTIAL_ID_MAX_BYTES:
            raise InvalidPasskey("credential_id")
        transports = credential.get("response", {}).get("transports", [])
        passkey = Passkey(
            id=self._ids(), user_id=user_id, credential_id=new.credential_id,
            public_key=new.public_key, sign_count=new.sign_count, aaguid=new.aaguid,
            backup_eligible=new.backup_eligible, backed_up=new.backed_up,
            transports=_transports(transports),
            name=label or f"Passkey {now:%Y-%m-%d %H:%M}", created_at=now,
        )  # fmt: skip
        registered = PasskeyRegistered(user_id, passkey.id)
        async with self._storage.begin() as uow:
            await token_user(uow, user_id)
            try:
                await uow.passkeys.add(passkey)
            except Conflict:
                raise PasskeyExists("this passkey is registered already") from None
            await record(uow, [registered], now)
            await uow.commit()
        await self._bus.publish(registered)
        return passkey


def _transports(value: Any) -> tuple[str, ...]:
    """The transports hint of a response: short printable words, at most 8 (others dropped)."""
    if not isinstance(value, list):
        return ()
    words = [t for t in value if isinstance(t, str) and t.isascii() and t.isalnum()]
    return tuple(dict.fromkeys(t[:32] for t in words))[:8]


@attrs.frozen
class OwnPasskeys:
    """The caller's passkeys: ``list``, ``rename``, ``delete`` (with the password)."""

    _storage: Storage
    _bus: EventBus
    _reauth: Reauthentication
    _clock: Clock

    async def list(self, user_id: str) -> list[Passkey]:
        """The caller's passkeys, newest first."""
        async with self._storage.read() as uow:
            await token_user(uow, user_id)
            return await uow.passkeys.list_for_user(user_id)

    async def rename(self, user_id: str, passkey_id: str, name: str) -> Passkey:
        """Rename one of the caller's passkeys; ``NotFound`` for anyone else's."""
        label = check_name(name)
        async with self._storage.begin() as uow:
            passkey = await uow.passkeys.get(passkey_id)
            if passkey is None or passkey.user_id != user_id:
                raise NotFound(_NOT_FOUND)
            renamed = attrs.evolve(passkey, name=label)
            await uow.passkeys.update(renamed)
            await uow.commit()
        return renamed

    async def delete(self, user_id: str, passkey_id: str, password: str, client: str) -> None:
        """Delete one of the caller's passkeys, with its password sent from ``client`` (the
        client address): ``InvalidOldPassword`` (403) when wrong, counted by the login
        throttle (``RateLimited``, 429, past it); ``NotFound`` for anyone else's."""
        async with self._storage.read() as uow:
            user = await token_user(uow, user_id)
        await self._reauth.confirm_password(user, password, client)
        await _remove(self._storage, self._bus, self._clock, user_id, passkey_id, user_id)


async def _remove(
    storage: Storage, bus: EventBus, clock: Clock, user_id: str, passkey_id: str, actor: str
) -> None:
    removed = PasskeyRemoved(user_id, passkey_id, actor)
    async with storage.begin() as uow:
        passkey = await uow.passkeys.get(passkey_id)
        if passkey is None or passkey.user_id != user_id:
            raise NotFound(_NOT_FOUND)
        await uow.passkeys.delete(passkey_id)
        await record(uow, [removed], clock.now())
        await uow.commit()
    await bus.publish(removed)


@attrs.frozen
class PasskeyAdmin:
    """GET and DELETE /users/{id}/passkeys[/{pid}]: org_admin (its organization) and
    superadmin; viewer/operator → ``Forbidden``; a user outside the organization →
    ``NotFound``; an org_admin on a superadmin or on itself → ``Forbidden``
    (``domain.policy.check_user_management``, docs/reference/mfa-and-passkeys.md). Deleting is for a
    lost device (``passkey.removed``, actor the admin)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def list(self, actor: Actor, user_id: str) -> list[Passkey]:
        """The user's passkeys, newest first."""
        policy.require(actor, Operation.LIST_USER_PASSKEYS)
        async with self._storage.read() as uow:
            target = await user_in_scope(uow, actor, user_id)
            policy.check_user_management(actor, target, Operation.LIST_USER_PASSKEYS)
            return await uow.passkeys.list_for_user(user_id)

    async def delete(self, actor: Actor, user_id: str, passkey_id: str) -> None:
        """Delete the user's passkey ``passkey_id``."""
        policy.require(actor, Operation.DELETE_USER_PASSKEY)
        async with self._storage.read() as uow:
            target = await user_in_scope(uow, actor, user_id)
            policy.check_user_management(actor, target, Operation.DELETE_USER_PASSKEY)
        await _remove(self._storage, self._bus, self._clock, user_id, passkey_id, actor.actor_id)
