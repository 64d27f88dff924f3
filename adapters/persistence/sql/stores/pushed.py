"""The SQL pushed authorization request store (RFC 9126; docs/reference/oauth-and-oidc.md): table
``oidc_pushed_requests`` (migration 0022). The parameters are stored as a JSON array of
``[name, value]`` pairs."""

from __future__ import annotations

import json
from datetime import datetime

from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.pushed import INSERT_PUSHED, TAKE_PUSHED
from adapters.persistence.sql.queries import SqlStore
from application.ports.pushed import PushedRequestStore
from domain.errors import Conflict, NotFound
from domain.pushed import PushedRequest


class SqlPushedRequestStore(SqlStore, PushedRequestStore):
    """``PushedRequestStore`` in the current transaction."""

    async def add(self, pushed: PushedRequest) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such client)."""
        params = json.dumps([list(p) for p in pushed.params], separators=(",", ":"))
        values = (pushed.uri_hash, pushed.client_id, params, self._d.to_db(pushed.created_at),
                  self._d.to_db(pushed.expires_at))  # fmt: skip
        try:
            await self._q.execute(INSERT_PUSHED, values, guarded=True)
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"client {pushed.client_id} not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("pushed request hash exists") from None
            raise

    async def take(self, uri_hash: str, now: datetime) -> PushedRequest | None:
        """Delete and return it if unexpired; None otherwise."""
        row = await self._q.one(TAKE_PUSHED, (uri_hash, self._d.to_db(now)), write=True)
        if row is None:
            return None
        uri, client_id, params, created_at, expires_at = row
        pairs = tuple((str(k), str(v)) for k, v in json.loads(params))
        return PushedRequest(
            uri, client_id, pairs, self._d.from_db(created_at), self._d.from_db(expires_at)
        )

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) expired pushed requests."""
        return await self._q.purge("oidc_pushed_requests", EXPIRED, (self._d.to_db(now),), limit)
