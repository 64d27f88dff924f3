"""The SQLite passkey store (docs/reference/mfa-and-passkeys.md): tables ``passkeys``,
``webauthn_user_handles`` and ``webauthn_ceremonies`` (migration 0009)."""

from __future__ import annotations

import sqlite3
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
from adapters.persistence.sqlite.rows import is_foreign_key
from adapters.persistence.sqlite.unit import SqlQueries
from adapters.persistence.times import from_micros, to_micros
from application.ports import PasskeyRepo
from domain.errors import Conflict, NotFound
from domain.passkeys import Ceremony, Passkey


class SqlitePasskeyRepo(SqlQueries, PasskeyRepo):
    """``PasskeyRepo`` in the current transaction."""

    async def add(self, passkey: Passkey) -> None:
        """Insert; ``Conflict`` for a known credential id or id, ``NotFound`` without the user."""
        try:
            await self._count(passkeys.INSERT, passkey_params(passkey, to_micros))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound("user not found") from None
            raise Conflict("passkey exists") from None

    async def get(self, passkey_id: str) -> Passkey | None:
        """The passkey, or None."""
        row = await self._one(passkeys.BY_ID, (passkey_id,))
        return None if row is None else passkey_row(row, from_micros)

    async def by_credential_id(self, credential_id: bytes) -> Passkey | None:
        """The passkey of ``credential_id``, or None."""
        row = await self._one(passkeys.BY_CREDENTIAL_ID, (credential_id,))
        return None if row is None else passkey_row(row, from_micros)

    async def list_for_user(self, user_id: str) -> list[Passkey]:
        """The user's passkeys, newest first."""
        rows = await self._all(passkeys.OF_USER, (user_id,))
        return [passkey_row(r, from_micros) for r in rows]

    async def credential_id_lengths(self, limit: int) -> list[int]:
        """A sample of the stored credential ids' lengths."""
        rows = await self._all(passkeys.ID_LENGTHS, (limit,))
        return [int(r[0]) for r in rows]

    async def update(self, passkey: Passkey) -> None:
        """Store the changeable fields; ``NotFound`` if there is none."""
        params = (*change_params(passkey, to_micros), passkey.id)
        if not await self._count(passkeys.UPDATE, params):
            raise NotFound("passkey not found")

    async def record_use(self, used: Passkey, old_sign_count: int) -> bool:
        """Compare-and-set on the counter; see ``PasskeyRepo.record_use``."""
        params = (*use_params(used, to_micros), used.id, old_sign_count)
        return bool(await self._count(passkeys.RECORD_USE, params))

    async def delete(self, passkey_id: str) -> bool:
        """Delete; False if it did not exist."""
        return bool(await self._count(passkeys.DELETE, (passkey_id,)))

    async def user_handle(self, user_id: str, new_handle: bytes) -> bytes:
        """The stored handle, or ``new_handle`` stored now."""
        try:
            await self._count(passkeys.ADD_USER_HANDLE, (user_id, new_handle))
        except sqlite3.IntegrityError:
            raise NotFound("user not found") from None
        row = await self._one(passkeys.USER_HANDLE, (user_id,))
        return bytes(row[0])

    async def user_for_handle(self, handle: bytes) -> str | None:
        """The user of ``handle``, or None."""
        row = await self._one(passkeys.USER_OF_HANDLE, (handle,))
        return None if row is None else str(row[0])

    async def put_ceremony(self, ceremony: Ceremony) -> None:
        """Store; ``Conflict`` if the id exists."""
        try:
            await self._count(passkeys.INSERT_CEREMONY, ceremony_params(ceremony, to_micros))
        except sqlite3.IntegrityError:
            raise Conflict("ceremony exists") from None

    async def take_ceremony(self, ceremony_id: str) -> Ceremony | None:
        """Remove and return the ceremony, or None."""
        row = await self._one(passkeys.TAKE_CEREMONY, (ceremony_id,))
        return None if row is None else ceremony_row(row, from_micros)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the ceremonies expired by ``now`` (up to ``limit``); returns how many."""
        return await self._purge_where("webauthn_ceremonies", EXPIRED, (to_micros(now),), limit)
