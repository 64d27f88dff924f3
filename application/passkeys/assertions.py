"""Reading a WebAuthn ``AuthenticationResponseJSON`` (WebAuthn L3 §5.1,
docs/reference/mfa-and-passkeys.md): its credential id and ``userHandle``, and the §7.2 step 6 rule
that ties the handle to the passkey's owner; and taking a ceremony. Shared by passkey registration,
login and re-authentication."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from application.ports import Storage
from domain.passkeys import Ceremony, CeremonyKind, Passkey

__all__ = [
    "credential_id_of",
    "handle_refused",
    "take_ceremony",
    "take_login_ceremony",
    "user_handle_of",
]

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
