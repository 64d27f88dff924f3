"""The SQLite OAuth client registry and revocation list (contract section 14): tables
``oauth_clients`` and ``revoked_access_tokens`` (migration 0008)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from adapters.persistence._client_rows import CLIENT_UPDATE, CLIENTS, client_params, client_row
from adapters.persistence._rows import from_micros, to_micros
from adapters.persistence.sqlite.unit import _SqlQueries
from application.ports import ClientRepo
from domain.clients import Client
from domain.errors import Conflict, NotFound

_MARKS = ", ".join("?" * len(CLIENTS.split(",")))


def _when(value: Any) -> datetime | None:
    return None if value is None else from_micros(value)


class SqliteClientRepo(_SqlQueries, ClientRepo):
    """``ClientRepo`` in the current transaction."""

    async def add(self, client: Client) -> None:
        """Insert; ``Conflict`` if the id exists."""
        try:
            await self._count(
                f"INSERT INTO oauth_clients ({CLIENTS}) VALUES ({_MARKS})",
                client_params(client, to_micros),
            )
        except sqlite3.IntegrityError:
            raise Conflict("client id exists") from None

    async def get(self, client_id: str) -> Client | None:
        """The client, or None."""
        row = await self._one(f"SELECT {CLIENTS} FROM oauth_clients WHERE id = ?", (client_id,))
        return None if row is None else client_row(row, _when)

    async def update(self, client: Client) -> None:
        """Replace every column of the client ``client.id``; ``NotFound`` if there is none."""
        sets = ", ".join(f"{c.strip()} = ?" for c in CLIENT_UPDATE.split(","))
        id_, *values = client_params(client, to_micros)
        if not await self._count(f"UPDATE oauth_clients SET {sets} WHERE id = ?", (*values, id_)):
            raise NotFound("no such client")

    async def delete(self, client_id: str) -> bool:
        """Delete with its consents and codes (by cascade) and the sessions it started (with
        their live tokens; their hosted sessions by cascade); False if it did not exist."""
        await self._count(
            "DELETE FROM refresh_tokens WHERE family_id IN"
            " (SELECT id FROM sessions WHERE client_id = ?)",
            (client_id,),
        )
        await self._count("DELETE FROM sessions WHERE client_id = ?", (client_id,))
        return bool(await self._count("DELETE FROM oauth_clients WHERE id = ?", (client_id,)))

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Client]:
        """Clients with ``id > after`` of ``org_id`` (None: all), ordered by id."""
        rows = await self._all(
            f"SELECT {CLIENTS} FROM oauth_clients WHERE (? IS NULL OR org_id = ?)"
            " AND (? IS NULL OR id > ?) ORDER BY id LIMIT ?",
            (org_id, org_id, after, after, limit),
        )
        return [client_row(r, _when) for r in rows]

    async def revoke(self, jti: str, client_id: str, expires_at: datetime) -> None:
        """Record the revocation of ``jti`` until ``expires_at``; idempotent."""
        await self._count(
            "INSERT INTO revoked_access_tokens (jti, client_id, expires_at) VALUES (?, ?, ?)"
            " ON CONFLICT (jti) DO NOTHING",
            (jti, client_id, to_micros(expires_at)),
        )

    async def is_revoked(self, jti: str) -> bool:
        """True if ``jti`` is recorded as revoked."""
        return (
            await self._one("SELECT 1 FROM revoked_access_tokens WHERE jti = ?", (jti,)) is not None
        )

    async def purge_revoked(self, now: datetime, limit: int | None = None) -> int:
        """Forget revocations of tokens expired by ``now`` and proof ids past their window (up
        to ``limit`` of each)."""
        at = (to_micros(now),)
        gone = await self._purge_where("revoked_access_tokens", "expires_at <= ?", at, limit)
        return gone + await self._purge_where("dpop_proofs", "expires_at <= ?", at, limit)

    async def claim_proof_jti(self, jti: str, expires_at: datetime) -> bool:
        """Remember ``jti``; False if a live record of it exists (a replay)."""
        return bool(
            await self._count(
                "INSERT INTO dpop_proofs (jti, expires_at) VALUES (?, ?)"
                " ON CONFLICT (jti) DO NOTHING",
                (jti, to_micros(expires_at)),
            )
        )
