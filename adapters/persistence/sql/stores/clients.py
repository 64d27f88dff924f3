"""The SQL OAuth client registry and revocation list (docs/reference/oauth-and-oidc.md): tables
``oauth_clients`` and ``revoked_access_tokens`` (migration 0008)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.rows.clients import client_params, client_row
from adapters.persistence.sql import clients
from adapters.persistence.sql.paging import keyset_args
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SqlStore
from application.ports import ClientRepo
from domain.clients import Client
from domain.errors import Conflict, NotFound


class SqlClientRepo(SqlStore, ClientRepo):
    """``ClientRepo`` in the current transaction."""

    async def add(self, client: Client) -> None:
        """Insert; ``Conflict`` if the id exists."""
        try:
            await self._q.execute(
                clients.INSERT, client_params(client, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
            raise Conflict("client id exists") from None

    async def get(self, client_id: str) -> Client | None:
        """The client, or None."""
        row = await self._q.one(clients.BY_ID, (client_id,))
        return None if row is None else client_row(row, self._d.from_db)

    async def update(self, client: Client) -> None:
        """Replace every column of the client ``client.id``; ``NotFound`` if there is none."""
        if not await self._q.execute(clients.UPDATE, client_params(client, self._d.to_db)):
            raise NotFound("no such client")

    async def delete(self, client_id: str) -> bool:
        """Delete with its consents and codes (by cascade) and the sessions it started (with
        their live tokens; their hosted sessions by cascade); False if it did not exist."""
        await self._q.execute(clients.TOKENS_OF_CLIENT, (client_id,))
        await self._q.execute(clients.SESSIONS_OF_CLIENT, (client_id,))
        return bool(await self._q.execute(clients.DELETE, (client_id,)))

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Client]:
        """Clients with ``id > after`` of ``org_id`` (None: all), ordered by id."""
        rows = await self._q.all(
            clients.page(by_org=org_id is not None, after=after is not None),
            keyset_args(org_id, after, limit),
        )
        return [client_row(r, self._d.from_db) for r in rows]

    async def revoke(self, jti: str, client_id: str, expires_at: datetime) -> None:
        """Record the revocation of ``jti`` until ``expires_at``; idempotent."""
        await self._q.execute(clients.REVOKE, (jti, client_id, self._d.to_db(expires_at)))

    async def is_revoked(self, jti: str) -> bool:
        """True if ``jti`` is recorded as revoked."""
        return await self._q.one(clients.IS_REVOKED, (jti,)) is not None

    async def purge_revoked(self, now: datetime, limit: int | None = None) -> int:
        """Forget revocations of tokens expired by ``now`` and proof ids past their window (up
        to ``limit`` of each)."""
        at = (self._d.to_db(now),)
        gone = await self._q.purge("revoked_access_tokens", EXPIRED, at, limit)
        return gone + await self._q.purge("dpop_proofs", EXPIRED, at, limit)

    async def claim_proof_jti(self, jti: str, expires_at: datetime) -> bool:
        """Remember ``jti``; False if a live record of it exists (a replay)."""
        return bool(
            await self._q.execute(clients.CLAIM_PROOF_JTI, (jti, self._d.to_db(expires_at)))
        )
