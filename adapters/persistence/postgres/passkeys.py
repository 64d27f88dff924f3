"""The PostgreSQL passkey store (docs/reference/mfa-and-passkeys.md): tables ``passkeys``,
``webauthn_user_handles`` and ``webauthn_ceremonies`` (migration 0009)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from adapters.persistence.postgres.session import SqlQueries
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
from adapters.persistence.times import require_aware
from application.ports import PasskeyRepo
from domain.errors import Conflict, NotFound
from domain.passkeys import Ceremony, Passkey


def _same(value: Any) -> Any:
    return value


class PostgresPasskeyRepo(SqlQueries, PasskeyRepo):
    """``PasskeyRepo`` in the current transaction."""

    async def add(self, passkey: Passkey) -> None:
        """Insert; ``Conflict`` for a known credential id or id, ``NotFound`` without the user."""
        try:
            await self._run_guarded(passkeys.INSERT, *passkey_params(passkey, require_aware))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound("user not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("passkey exists") from None

    async def get(self, passkey_id: str) -> Passkey | None:
        """The passkey, or None."""
        row = await self._one(passkeys.BY_ID, passkey_id)
        return None if row is None else passkey_row(tuple(row), _same)

    async def by_credential_id(self, credential_id: bytes) -> Passkey | None:
        """The passkey of ``credential_id``, or None."""
        row = await self._one(passkeys.BY_CREDENTIAL_ID, credential_id)
        return None if row is None else passkey_row(tuple(row), _same)

    async def list_for_user(self, user_id: str) -> list[Passkey]:
        """The user's passkeys, newest first."""
        rows = await self._all(passkeys.OF_USER, user_id)
        return [passkey_row(tuple(r), _same) for r in rows]

    async def credential_id_lengths(self, limit: int) -> list[int]:
        """A sample of the stored credential ids' lengths."""
        rows = await self._all(passkeys.ID_LENGTHS, limit)
        return [int(r[0]) for r in rows]

    async def update(self, passkey: Passkey) -> None:
        """Store the changeable fields; ``NotFound`` if there is none."""
        params = (*change_params(passkey, require_aware), passkey.id)
        if not await self._run(passkeys.UPDATE, *params):
            raise NotFound("passkey not found")

    async def record_use(self, used: Passkey, old_sign_count: int) -> bool:
        """Compare-and-set on the counter; see ``PasskeyRepo.record_use``."""
        params = (*use_params(used, require_aware), used.id, old_sign_count)
        return bool(await self._run(passkeys.RECORD_USE, *params))

    async def delete(self, passkey_id: str) -> bool:
        """Delete; False if it did not exist."""
        return bool(await self._run(passkeys.DELETE, passkey_id))

    async def user_handle(self, user_id: str, new_handle: bytes) -> bytes:
        """The stored handle, or ``new_handle`` stored now."""
        try:
            await self._run_guarded(passkeys.ADD_USER_HANDLE, user_id, new_handle)
        except asyncpg.ForeignKeyViolationError:
            raise NotFound("user not found") from None
        row = await self._one(passkeys.USER_HANDLE, user_id)
        assert row is not None
        return bytes(row[0])

    async def user_for_handle(self, handle: bytes) -> str | None:
        """The user of ``handle``, or None."""
        row = await self._one(passkeys.USER_OF_HANDLE, handle)
        return None if row is None else str(row[0])

    async def put_ceremony(self, ceremony: Ceremony) -> None:
        """Store; ``Conflict`` if the id exists."""
        try:
            await self._run_guarded(
                passkeys.INSERT_CEREMONY, *ceremony_params(ceremony, require_aware)
            )
        except asyncpg.UniqueViolationError:
            raise Conflict("ceremony exists") from None

    async def take_ceremony(self, ceremony_id: str) -> Ceremony | None:
        """Remove and return the ceremony, or None."""
        row = await self._one(passkeys.TAKE_CEREMONY, ceremony_id, write=True)
        return None if row is None else ceremony_row(tuple(row), _same)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the ceremonies expired by ``now`` (up to ``limit``); returns how many."""
        return await self._purge_where("webauthn_ceremonies", EXPIRED, limit, require_aware(now))
