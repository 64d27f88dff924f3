"""The SQLite federated identity store (``docs/reference/federation.md``): tables
``federated_identities``, ``federation_flows`` and ``federation_nonces`` (migrations 0016, 0018)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from adapters.persistence.rows.identities import (
    flow_params,
    flow_row,
    identity_params,
    identity_row,
)
from adapters.persistence.sql import identities
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sqlite.rows import is_foreign_key
from adapters.persistence.sqlite.unit import SqlQueries
from adapters.persistence.times import from_micros, to_micros
from application.ports import FederatedIdentityRepo
from domain.errors import Conflict, NotFound
from domain.federation import FederatedIdentity, FederationFlow


class SqliteFederatedIdentityRepo(SqlQueries, FederatedIdentityRepo):
    """``FederatedIdentityRepo`` in the current transaction."""

    async def add(self, identity: FederatedIdentity) -> None:
        """Insert; ``Conflict`` for a linked identity or provider, ``NotFound`` without the user."""
        try:
            await self._count(identities.INSERT, identity_params(identity, to_micros))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound("user not found") from None
            raise Conflict("identity already linked") from None

    async def find(self, issuer: str, subject: str) -> FederatedIdentity | None:
        """The identity, or None."""
        row = await self._one(identities.FIND, (issuer, subject))
        return None if row is None else identity_row(row, from_micros)

    async def list_for_user(self, user_id: str) -> list[FederatedIdentity]:
        """The user's identities, oldest link first."""
        rows = await self._all(identities.OF_USER, (user_id,))
        return [identity_row(r, from_micros) for r in rows]

    async def record_use(self, issuer: str, subject: str, email: str | None, at: datetime) -> None:
        """``last_used_at`` and the email now."""
        await self._count(identities.RECORD_USE, (issuer, subject, to_micros(at), email))

    async def delete(self, user_id: str, provider: str) -> FederatedIdentity | None:
        """Unlink; the removed identity or None."""
        row = await self._one(identities.DELETE, (user_id, provider))
        return None if row is None else identity_row(row, from_micros)

    async def remove_unproven(self, user_id: str) -> list[FederatedIdentity]:
        """Unlink the identities linked while the email was unverified; the removed ones."""
        rows = await self._all(identities.REMOVE_UNPROVEN, (user_id,))
        return [identity_row(r, from_micros) for r in rows]

    async def spend_nonce(
        self, issuer: str, nonce_hash: str, expires_at: datetime, now: datetime
    ) -> bool:
        """True the first time (until ``expires_at``), False for a live one."""
        params = (issuer, nonce_hash, to_micros(expires_at), to_micros(now))
        return await self._one(identities.SPEND_NONCE, params) is not None

    async def put_flow(self, flow: FederationFlow) -> None:
        """Store; ``Conflict`` if the state hash exists, ``NotFound`` without the linking user."""
        try:
            await self._count(identities.INSERT_FLOW, flow_params(flow, to_micros))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound("user not found") from None
            raise Conflict("state exists") from None

    async def take_flow(self, state_hash: str, browser_hash: str) -> FederationFlow | None:
        """Remove and return it when bound to ``browser_hash``, or None."""
        row = await self._one(identities.TAKE_FLOW, (state_hash, browser_hash))
        return None if row is None else flow_row(row, from_micros)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the started logins and nonces expired by ``now`` (up to ``limit`` each)."""
        at = (to_micros(now),)
        flows = await self._purge_where("federation_flows", EXPIRED, at, limit)
        return flows + await self._purge_where("federation_nonces", EXPIRED, at, limit)
