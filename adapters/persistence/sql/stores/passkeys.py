"""The SQL passkey store (docs/reference/mfa-and-passkeys.md): tables ``passkeys``,
``webauthn_user_handles`` and ``webauthn_ceremonies`` (migration 0009)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.rows.passkeys import (
    ceremony_params,
    ceremony_row,
    change_params,
    passkey_params,
    passkey_row,
    use_params,
)
from adapters.persistence.sql import passkeys
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SqlStore
from application.ports import PasskeyRepo
from domain.errors import Conflict, NotFound
from domain.passkeys import Ceremony, Passkey


class SqlPasskeyRepo(SqlStore, PasskeyRepo):
    """``PasskeyRepo`` in the current transaction."""

    async def add(self, passkey: Passkey) -> None:
        """Insert; ``Conflict`` for a known credential id or id, ``NotFound`` without the user."""
        try:
            await self._q.execute(
                passkeys.INSERT, passkey_params(passkey, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound("user not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("passkey exists") from None
            raise

    async def get(self, passkey_id: str) -> Passkey | None:
        """The passkey, or None."""
        row = await self._q.one(passkeys.BY_ID, (passkey_id,))
        return None if row is None else passkey_row(row, self._d.from_db)

    async def by_credential_id(self, credential_id: bytes) -> Passkey | None:
        """The passkey of ``credential_id``, or None."""
        row = await self._q.one(passkeys.BY_CREDENTIAL_ID, (credential_id,))
        return None if row is None else passkey_row(row, self._d.from_db)

    async def list_for_user(self, user_id: str) -> list[Passkey]:
        """The user's passkeys, newest first."""
        rows = await self._q.all(passkeys.OF_USER, (user_id,))
        return [passkey_row(r, self._d.from_db) for r in rows]

    async def credential_id_lengths(self, limit: int) -> list[int]:
        """A sample of the stored credential ids' lengths."""
        rows = await self._q.all(passkeys.ID_LENGTHS, (limit,))
        return [int(r[0]) for r in rows]

    async def update(self, passkey: Passkey) -> None:
        """Store the changeable fields; ``NotFound`` if there is none."""
        params = (*change_params(passkey, self._d.to_db), passkey.id)
        if not await self._q.execute(passkeys.UPDATE, params):
            raise NotFound("passkey not found")

    async def record_use(self, used: Passkey, old_sign_count: int) -> bool:
        """Compare-and-set on the counter; see ``PasskeyRepo.record_use``."""
        params = (*use_params(used, self._d.to_db), used.id, old_sign_count)
        return bool(await self._q.execute(passkeys.RECORD_USE, params))

    async def delete(self, passkey_id: str) -> bool:
        """Delete; False if it did not exist."""
        return bool(await self._q.execute(passkeys.DELETE, (passkey_id,)))

    async def user_handle(self, user_id: str, new_handle: bytes) -> bytes:
        """The stored handle, or ``new_handle`` stored now."""
        try:
            await self._q.execute(passkeys.ADD_USER_HANDLE, (user_id, new_handle), guarded=True)
        except Exception as exc:
            if not self._d.is_foreign_key_violation(exc):
                raise
            raise NotFound("user not found") from None
        row = await self._q.one(passkeys.USER_HANDLE, (user_id,))
        return bytes(row[0])

    async def user_for_handle(self, handle: bytes) -> str | None:
        """The user of ``handle``, or None."""
        row = await self._q.one(passkeys.USER_OF_HANDLE, (handle,))
        return None if row is None else str(row[0])

    async def put_ceremony(self, ceremony: Ceremony) -> None:
        """Store; ``Conflict`` if the id exists."""
        try:
            await self._q.execute(
                passkeys.INSERT_CEREMONY, ceremony_params(ceremony, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
            raise Conflict("ceremony exists") from None

    async def take_ceremony(self, ceremony_id: str) -> Ceremony | None:
        """Remove and return the ceremony, or None."""
        row = await self._q.one(passkeys.TAKE_CEREMONY, (ceremony_id,), write=True)
        return None if row is None else ceremony_row(row, self._d.from_db)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the ceremonies expired by ``now`` (up to ``limit``); returns how many."""
        return await self._q.purge("webauthn_ceremonies", EXPIRED, (self._d.to_db(now),), limit)
