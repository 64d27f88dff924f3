"""Reading a WebAuthn ``AuthenticationResponseJSON`` (WebAuthn L3 §5.1,
docs/reference/mfa-and-passkeys.md): its credential id and ``userHandle``, and the §7.2 step 6 rule
that ties the handle to the passkey's owner; taking a ceremony; and flagging a passkey whose
counter went backwards. Shared by passkey registration, login and re-authentication."""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from application.events.audit import record
from application.events.passkeys import PasskeyCloneSuspected
from application.ports import EventBus, Storage
from domain.passkeys import Ceremony, CeremonyKind, Passkey

__all__ = [
    "credential_id_of",
    "flag_clone",
    "handle_refused",
    "take_ceremony",
    "take_login_ceremony",
    "user_handle_of",
]

log = logging.getLogger(__name__)

_MAX_ID_CHARS = 1366
"""base64url characters of 1023 bytes (the longest credential id,
docs/reference/mfa-and-passkeys.md), with room to spare; anything longer is no credential of
ours."""


def credential_id_of(credential: Mapping[str, Any]) -> bytes | None:
    """The raw credential id of an ``AuthenticationResponseJSON`` (``rawId``, else ``id``,
    base64url of at most 1023 bytes: docs/reference/mfa-and-passkeys.md), or None when absent or
    malformed."""
    value = credential.get("rawId", credential.get("id"))
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_ID_CHARS:
        return None
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except ValueError:
        return None


def user_handle_of(credential: Mapping[str, Any]) -> bytes | None:
    """The ``response.userHandle`` of an assertion: None when absent or null, its bytes when
    it is base64url, else ``b""`` (given but no handle: matches no user)."""
    response = credential.get("response")
    value = response.get("userHandle") if isinstance(response, Mapping) else None
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_ID_CHARS:
        return b""
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except ValueError:
        return b""


def handle_refused(handle: bytes | None, owner: str | None, passkey: Passkey, needed: bool) -> bool:
    """WebAuthn L3 §7.2 step 6: refuse an assertion without a ``userHandle`` when ``needed``
    (a discoverable login, where nothing else names the user), and one whose ``userHandle``
    (of user ``owner``, None for an unknown handle) is not ``passkey``'s owner's."""
    if handle is None:
        return needed
    return owner != passkey.user_id


async def take_ceremony(storage: Storage, ceremony_id: str) -> Ceremony | None:
    """Take (delete and return) the ceremony ``ceremony_id`` in a committed unit of its own, so
    it is used up whatever the check that follows decides (docs/reference/mfa-and-passkeys.md:
    single use); None when unknown or already taken. Raises what the storage raises."""
    async with storage.begin() as uow:
        ceremony = await uow.passkeys.take_ceremony(ceremony_id)
        await uow.commit()
    return ceremony


async def take_login_ceremony(storage: Storage, ceremony_id: str, now: datetime) -> Ceremony | None:
    """``take_ceremony``, then the ceremony only if it can answer a passwordless login or a
    re-authentication: an ``AUTHENTICATION`` ceremony, not bound to an ``mfa_token`` (those
    answer ``/login/mfa`` only), not expired at ``now``; else None (used up all the same)."""
    ceremony = await take_ceremony(storage, ceremony_id)
    if (
        ceremony is None
        or ceremony.kind is not CeremonyKind.AUTHENTICATION
        or ceremony.mfa_token_hash is not None
        or ceremony.is_expired(now)
    ):
        return None
    return ceremony


async def flag_clone(storage: Storage, bus: EventBus, now: datetime, passkey: Passkey) -> None:
    """Mark ``passkey`` ``suspected_clone`` (its counter went backwards under a valid signature;
    kept, refused until deleted), record ``passkey.clone_suspected`` at ``now`` and publish
    ``PasskeyCloneSuspected`` after the commit."""
    flagged = PasskeyCloneSuspected(passkey.user_id, passkey.id)
    async with storage.begin() as uow:
        current = await uow.passkeys.get(passkey.id)
        if current is not None:
            await uow.passkeys.update(attrs.evolve(current, suspected_clone=True))
            await record(uow, [flagged], now)
        await uow.commit()
    log.warning("passkey %s of user %s: its counter went backwards", passkey.id, passkey.user_id)
    await bus.publish(flagged)
