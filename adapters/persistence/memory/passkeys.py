"""The in-memory passkey store (docs/reference/mfa-and-passkeys.md): passkeys, user handles,
ceremonies."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import PasskeyRepo
from domain.errors import Conflict, NotFound
from domain.passkeys import Ceremony, Passkey


class MemoryPasskeyRepo(PasskeyRepo):
    """``PasskeyRepo`` over the working copy."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, passkey: Passkey) -> None:
        """Insert; ``Conflict`` for a known credential id or id, ``NotFound`` without the user."""
        require_aware(passkey.created_at)
        view = self._s.view
        if passkey.user_id not in view.users:
            raise NotFound("user not found")
        if passkey.id in view.passkeys or any(
            p.credential_id == passkey.credential_id for p in view.passkeys.values()
        ):
            raise Conflict("passkey exists")
        self._s.write("passkeys")[passkey.id] = passkey

    async def get(self, passkey_id: str) -> Passkey | None:
        """The passkey, or None."""
        return self._s.view.passkeys.get(passkey_id)

    async def by_credential_id(self, credential_id: bytes) -> Passkey | None:
        """The passkey of ``credential_id``, or None."""
        return next(
            (p for p in self._s.view.passkeys.values() if p.credential_id == credential_id), None
        )

    async def list_for_user(self, user_id: str) -> list[Passkey]:
        """The user's passkeys, newest first."""
        mine = [p for p in self._s.view.passkeys.values() if p.user_id == user_id]
        return sorted(mine, key=lambda p: (p.created_at, p.id), reverse=True)

    async def credential_id_lengths(self, limit: int) -> list[int]:
        """A sample of the stored credential ids' lengths."""
        return [len(p.credential_id) for p in list(self._s.view.passkeys.values())[:limit]]

    async def update(self, passkey: Passkey) -> None:
        """Store the changeable fields; ``NotFound`` if there is none."""
        stored = self._s.view.passkeys.get(passkey.id)
        if stored is None:
            raise NotFound("passkey not found")
        self._s.write("passkeys")[passkey.id] = passkey

    async def record_use(self, used: Passkey, old_sign_count: int) -> bool:
        """Compare-and-set on the counter; see ``PasskeyRepo.record_use``."""
        stored = self._s.view.passkeys.get(used.id)
        if stored is None or stored.suspected_clone or stored.sign_count != old_sign_count:
            return False
        self._s.write("passkeys")[used.id] = attrs.evolve(
            stored,
            sign_count=used.sign_count,
            backed_up=used.backed_up,
            last_used_at=require_aware(used.last_used_at) if used.last_used_at else None,
        )
        return True

    async def delete(self, passkey_id: str) -> bool:
        """Delete; False if it did not exist."""
        if passkey_id not in self._s.view.passkeys:
            return False
        del self._s.write("passkeys")[passkey_id]
        return True

    async def user_handle(self, user_id: str, new_handle: bytes) -> bytes:
        """The stored handle, or ``new_handle`` stored now."""
        stored = self._s.view.user_handles.get(user_id)
        if stored is not None:
            return stored
        if user_id not in self._s.view.users:
            raise NotFound("user not found")
        self._s.write("user_handles")[user_id] = new_handle
        return new_handle

    async def user_for_handle(self, handle: bytes) -> str | None:
        """The user of ``handle``, or None."""
        return next((u for u, h in self._s.view.user_handles.items() if h == handle), None)

    async def put_ceremony(self, ceremony: Ceremony) -> None:
        """Store; ``Conflict`` if the id exists."""
        require_aware(ceremony.expires_at)
        if ceremony.id in self._s.view.ceremonies:
            raise Conflict("ceremony exists")
        self._s.write("ceremonies")[ceremony.id] = ceremony

    async def take_ceremony(self, ceremony_id: str) -> Ceremony | None:
        """Remove and return the ceremony, or None."""
        if ceremony_id not in self._s.view.ceremonies:
            return None
        return self._s.write("ceremonies").pop(ceremony_id)  # type: ignore[no-any-return]

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) ceremonies expired by ``now``."""
        require_aware(now)
        return self._s.purge("ceremonies", lambda c: c.is_expired(now), limit)
