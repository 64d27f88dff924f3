"""The PostgreSQL OAuth client registry and revocation list (contract section 14): tables
``oauth_clients`` and ``revoked_access_tokens`` (migration 0008)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from adapters.persistence._client_rows import CLIENT_UPDATE, CLIENTS, client_params, client_row
from adapters.persistence._rows import require_aware
from adapters.persistence.postgres.session import _SqlQueries
from application.ports import ClientRepo
from domain.clients import Client
from domain.errors import Conflict, NotFound

_COUNT = len(CLIENTS.split(","))
_MARKS = ", ".join(f"${n}" for n in range(1, _COUNT + 1))
_SETS = ", ".join(f"{c.strip()} = ${n}" for n, c in enumerate(CLIENT_UPDATE.split(","), 2))


def _same(value: Any) -> Any:
    return value


class PostgresClientRepo(_SqlQueries, ClientRepo):
    """``ClientRepo`` in the current transaction."""

    async def add(self, client: Client) -> None:
        """Insert; ``Conflict`` if the id exists."""
        try:
            await self._run_guarded(
                f"INSERT INTO oauth_clients ({CLIENTS}) VALUES ({_MARKS})",
                *client_params(client, require_aware),
            )
        except asyncpg.UniqueViolationError:
            raise Conflict("client id exists") from None

    async def get(self, client_id: str) -> Client | None:
        """The client, or None."""
        row = await self._one(f"SELECT {CLIENTS} FROM oauth_clients WHERE id = $1", client_id)
        return None if row is None else client_row(tuple(row), _same)

    async def update(self, client: Client) -> None:
        """Replace every column of the client ``client.id``; ``NotFound`` if there is none."""
        params = client_params(client, require_aware)
        if not await self._run(f"UPDATE oauth_clients SET {_SETS} WHERE id = $1", *params):
            raise NotFound("no such client")

    async def delete(self, client_id: str) -> bool:
        """Delete with its consents and codes (by cascade) and the sessions it started (with
        their live tokens; their hosted sessions by cascade); False if it did not exist."""
        await self._run(
            "DELETE FROM refresh_tokens WHERE family_id IN"
            " (SELECT id FROM sessions WHERE client_id = $1)",
            client_id,
        )
        await self._run("DELETE FROM sessions WHERE client_id = $1", client_id)
        return bool(await self._run("DELETE FROM oauth_clients WHERE id = $1", client_id))

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Client]:
        """Clients with ``id > after`` of ``org_id`` (None: all), ordered by id."""
        rows = await self._all(
            f"SELECT {CLIENTS} FROM oauth_clients WHERE ($1::text IS NULL OR org_id = $1)"
            " AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3",
            org_id,
            after,
            limit,
        )
        return [client_row(tuple(r), _same) for r in rows]

    async def revoke(self, jti: str, client_id: str, expires_at: datetime) -> None:
        """Record the revocation of ``jti`` until ``expires_at``; idempotent."""
        await self._run(
            "INSERT INTO revoked_access_tokens (jti, client_id, expires_at) VALUES ($1, $2, $3)"
            " ON CONFLICT (jti) DO NOTHING",
            jti,
            client_id,
            require_aware(expires_at),
        )

    async def is_revoked(self, jti: str) -> bool:
        """True if ``jti`` is recorded as revoked."""
        return (
            await self._one("SELECT 1 FROM revoked_access_tokens WHERE jti = $1", jti) is not None
        )

    async def purge_revoked(self, now: datetime, limit: int | None = None) -> int:
        """Forget revocations of tokens expired by ``now`` and proof ids past their window (up
        to ``limit`` of each)."""
        at = require_aware(now)
        gone = await self._purge_where("revoked_access_tokens", "expires_at <= $1", limit, at)
        return gone + await self._purge_where("dpop_proofs", "expires_at <= $1", limit, at)

    async def claim_proof_jti(self, jti: str, expires_at: datetime) -> bool:
        """Remember ``jti``; False if a record of it exists (a replay)."""
        return bool(
            await self._run(
                "INSERT INTO dpop_proofs (jti, expires_at) VALUES ($1, $2)"
                " ON CONFLICT (jti) DO NOTHING",
                jti,
                require_aware(expires_at),
            )
        )
