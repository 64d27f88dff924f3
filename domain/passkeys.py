"""Passkeys (WebAuthn Level 3; docs/reference/mfa-and-passkeys.md): public-key credentials a user
registers to log in without a password, or to answer ``mfa_required``.

A ``Passkey`` holds what verification needs (credential id, COSE public key, signature
counter) and what the user sees (name, times, AAGUID, backup state, transports,
``suspected_clone``); the public key and counter never leave the service. A ``Ceremony`` is one
registration or authentication in progress: a random challenge, single use, 300 s.
"""

from __future__ import annotations

import enum
from datetime import datetime

import attrs

CEREMONY_TTL = 300
"""Seconds a ceremony (its challenge) lives (docs/reference/mfa-and-passkeys.md)."""
USER_HANDLE_BYTES = 32
"""Length of a user's WebAuthn user handle: random, opaque, never the email or the user id."""


@attrs.frozen
class Passkey:
    """A registered credential of ``user_id`` (docs/reference/mfa-and-passkeys.md ``Passkey`` plus
    its secrets).

    ``id``: ours (32 hex). ``credential_id``: the authenticator's (bytes, unique).
    ``public_key``: COSE_Key bytes. ``sign_count``: the last signature counter seen.
    ``aaguid``: the authenticator model (UUID text). ``backup_eligible``/``backed_up``: the BE
    and BS flags. ``transports``: hints such as ``internal``, ``hybrid``, ``usb``.
    ``suspected_clone``: its counter went backwards once; refused for login until deleted.
    """

    id: str
    user_id: str
    credential_id: bytes = attrs.field(repr=False)
    public_key: bytes = attrs.field(repr=False)
    sign_count: int
    aaguid: str
    backup_eligible: bool
    backed_up: bool
    transports: tuple[str, ...]
    name: str
    created_at: datetime
    last_used_at: datetime | None = None
    suspected_clone: bool = False


class CeremonyKind(enum.StrEnum):
    """What a ceremony is for."""

    REGISTRATION = "registration"
    AUTHENTICATION = "authentication"


@attrs.frozen
class Ceremony:
    """One WebAuthn ceremony in progress (docs/reference/mfa-and-passkeys.md): ``challenge`` (32
    random bytes), ``kind``, ``user_id`` (the user who asked, for a registration or a login with an
    email or an ``mfa_token``; None for a discoverable login), ``mfa_token_hash`` (a login answering
    ``mfa_required``: only that ``mfa_token`` may complete it), ``expires_at``."""

    id: str
    kind: CeremonyKind
    challenge: bytes = attrs.field(repr=False)
    user_id: str | None
    mfa_token_hash: str | None
    created_at: datetime
    expires_at: datetime

    def is_expired(self, now: datetime) -> bool:
        """True at or after ``expires_at``."""
        return now >= self.expires_at


def counter_regressed(stored: int, presented: int) -> bool:
    """WebAuthn L3 §7.2 step 22: the signature counter ``presented`` by an authenticator did
    not grow past the ``stored`` one although either is non-zero (an equal non-zero counter is
    a regression: docs/reference/mfa-and-passkeys.md). Both 0: the authenticator keeps no counter.

    Ask it only of an assertion whose signature verified (§7.2 checks the signature first), so
    that nobody without the private key can make a passkey look cloned.
    """
    return (stored != 0 or presented != 0) and presented <= stored
