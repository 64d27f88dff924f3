"""The SQL federated identity store (``docs/reference/federation.md``): tables
``federated_identities``, ``federation_flows`` and ``federation_nonces`` (migrations 0016, 0018)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.rows.identities import (
    flow_params,
    flow_row,
    identity_params,
    identity_row,
)
from adapters.persistence.sql import identities
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SqlStore
from application.ports import FederatedIdentityRepo
from domain.errors import Conflict, NotFound
from domain.federation import FederatedIdentity, FederationFlow


class SqlFederatedIdentityRepo(SqlStore, FederatedIdentityRepo):
    """``FederatedIdentityRepo`` in the current transaction."""

    async def add(self, identity: FederatedIdentity) -> None:
        """Insert; ``Conflict`` for a linked identity or provider, ``NotFound`` without the user."""
        try:
            await self._q.execute(
                identities.INSERT, identity_params(identity, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound("user not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("identity already linked") from None
            raise

    async def find(self, issuer: str, subject: str) -> FederatedIdentity | None:
        """The identity, or None."""
        row = await self._q.one(identities.FIND, (issuer, subject))
        return None if row is None else identity_row(row, self._d.from_db)

    async def list_for_user(self, user_id: str) -> list[FederatedIdentity]:
        """The user's identities, oldest link first."""
        rows = await self._q.all(identities.OF_USER, (user_id,))
        return [identity_row(r, self._d.from_db) for r in rows]

    async def record_use(self, issuer: str, subject: str, email: str | None, at: datetime) -> None:
        """``last_used_at`` and the email now."""
        await self._q.execute(identities.RECORD_USE, (issuer, subject, self._d.to_db(at), email))

    async def delete(self, user_id: str, provider: str) -> FederatedIdentity | None:
        """Unlink; the removed identity or None."""
        row = await self._q.one(identities.DELETE, (user_id, provider), write=True)
        return None if row is None else identity_row(row, self._d.from_db)

    async def remove_unproven(self, user_id: str) -> list[FederatedIdentity]:
        """Unlink the identities linked while the email was unverified; the removed ones."""
        rows = await self._q.all(identities.REMOVE_UNPROVEN, (user_id,), write=True)
        return [identity_row(r, self._d.from_db) for r in rows]

    async def spend_nonce(
        self, issuer: str, nonce_hash: str, expires_at: datetime, now: datetime
    ) -> bool:
        """True the first time (until ``expires_at``), False for a live one."""
        params = (issuer, nonce_hash, self._d.to_db(expires_at), self._d.to_db(now))
        return await self._q.one(identities.SPEND_NONCE, params, write=True) is not None

    async def put_flow(self, flow: FederationFlow) -> None:
        """Store; ``Conflict`` if the state hash exists, ``NotFound`` without the linking user."""
        try:
            await self._q.execute(
                identities.INSERT_FLOW, flow_params(flow, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound("user not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("state exists") from None
            raise

    async def take_flow(self, state_hash: str, browser_hash: str) -> FederationFlow | None:
        """Remove and return it when bound to ``browser_hash``, or None."""
        row = await self._q.one(identities.TAKE_FLOW, (state_hash, browser_hash), write=True)
        return None if row is None else flow_row(row, self._d.from_db)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the started logins and nonces expired by ``now`` (up to ``limit`` each)."""
        at = (self._d.to_db(now),)
        flows = await self._q.purge("federation_flows", EXPIRED, at, limit)
        return flows + await self._q.purge("federation_nonces", EXPIRED, at, limit)
