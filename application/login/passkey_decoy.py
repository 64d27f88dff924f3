"""Decoy credential ids for ``/login/passkey/options`` with an email that has no passkey
(``docs/reference/mfa-and-passkeys.md``: no user enumeration): options of the same shape and size as
a real user's, with one credential id derived from the email and a server secret — the same from one
request to the next — whose length is drawn from the lengths of the stored credential ids.

Authenticators make ids of different lengths (16 bytes for many security keys, 32 for
Chromium's and many platform authenticators, 64 and more for others), so a decoy of a fixed
length would stand out against a deployment's real ids. The lengths of a sample of stored ids
(``DECOY_SAMPLE`` rows) are read at most every ``DECOY_REFRESH`` seconds per process; each
email picks one of them by its MAC, so the decoys follow the stored distribution and an email
keeps its length while the distribution stands (WebAuthn L3 §14.6.2, "Username
Enumeration")."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import attrs

from application.ports import SecretSealer, Storage

__all__ = ["DECOY_REFRESH", "DECOY_SAMPLE", "DEFAULT_DECOY_BYTES", "DecoyIds"]

DEFAULT_DECOY_BYTES = 32
"""The decoy length while no passkey is stored (Chromium's and most platform ids)."""
DECOY_SAMPLE = 1000
"""How many stored credential ids the length distribution is read from."""
DECOY_REFRESH = 300.0
"""Seconds a process reuses the distribution it read."""


@attrs.define
class DecoyIds:
    """``await decoys.for_email(canonical)`` → one decoy credential id (bytes) for an email
    with no passkey. ``DecoyIds(storage, sealer, monotonic)``; one per process."""

    _storage: Storage
    _sealer: SecretSealer
    _monotonic: Callable[[], float] = time.monotonic
    _lengths: tuple[int, ...] = ()
    _read_at: float | None = None
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)

    async def _distribution(self) -> tuple[int, ...]:
        now = self._monotonic()
        if self._read_at is not None and now - self._read_at < DECOY_REFRESH:
            return self._lengths
        async with self._lock:
            if self._read_at is None or now - self._read_at >= DECOY_REFRESH:
                async with self._storage.read() as uow:
                    sample = await uow.passkeys.credential_id_lengths(DECOY_SAMPLE)
                self._lengths = tuple(sorted(n for n in sample if 16 <= n <= 1023))
                self._read_at = now
        return self._lengths

    async def for_email(self, canonical: str) -> bytes:
        """The decoy id of ``canonical`` (a normalized email): a length picked from the stored
        ids' lengths (``DEFAULT_DECOY_BYTES`` while none is stored) by the email's MAC, bytes
        from the MAC expanded to that length (HMAC-SHA-256 blocks under the sealer's key)."""
        lengths = await self._distribution()
        seed = self._sealer.mac(f"authsvc passkey decoy {canonical}".encode())
        pick = int.from_bytes(seed[:8], "big")
        length = lengths[pick % len(lengths)] if lengths else DEFAULT_DECOY_BYTES
        out = b""
        block = 0
        while len(out) < length:
            out += self._sealer.mac(seed + block.to_bytes(4, "big"))
            block += 1
        return out[:length]
