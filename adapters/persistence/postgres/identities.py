"""The PostgreSQL federated identity store (docs/reference/federation.md): tables
``federated_identities``, ``federation_flows`` and ``federation_nonces`` (migrations 0016,
0018)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from adapters.persistence.postgres.session import SqlQueries
from adapters.persistence.rows.identities import (
    flow_params,
    flow_row,
    identity_params,
    identity_row,
)
from adapters.persistence.sql import identities
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.times import require_aware
from application.ports import FederatedIdentityRepo
from domain.errors import Conflict, NotFound
from domain.federation import FederatedIdentity, FederationFlow


def _same(value: Any) -> Any:
    return value


class PostgresFederatedIdentityRepo(SqlQueries, FederatedIdentityRepo):
    """``FederatedIdentityRepo`` in the current transaction."""

    async def add(self, identity: FederatedIdentity) -> None:
        """Insert; ``Conflict`` for a linked identity or provider, ``NotFound`` without the user."""
        try:
            await self._run_guarded(identities.INSERT, *identity_params(identity, require_aware))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound("user not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("identity already linked") from None

    async def find(self, issuer: str, subject: str) -> FederatedIdentity | None:
        """The identity, or None."""
        row = await self._one(identities.FIND, issuer, subject)
        return None if row is None else identity_row(tuple(row), _same)

    async def list_for_user(self, user_id: str) -> list[FederatedIdentity]:
        """The user's identities, oldest link first."""
        rows = await self._all(identities.OF_USER, user_id)
        return [identity_row(tuple(r), _same) for r in rows]

    async def record_use(self, issuer: str, subject: str, email: str | None, at: datetime) -> None:
        """``last_used_at`` and the email now."""
        await self._run(identities.RECORD_USE, issuer, subject, require_aware(at), email)

    async def delete(self, user_id: str, provider: str) -> FederatedIdentity | None:
        """Unlink; the removed identity or None."""
        row = await self._one(identities.DELETE, user_id, provider, write=True)
        return None if row is None else identity_row(tuple(row), _same)

    async def remove_unproven(self, user_id: str) -> list[FederatedIdentity]:
        """Unlink the identities linked while the email was unverified; the removed ones."""
        rows = await self._s.run(lambda c: c.fetch(identities.REMOVE_UNPROVEN, user_id), write=True)
        return [identity_row(tuple(r), _same) for r in rows]

    async def spend_nonce(
        self, issuer: str, nonce_hash: str, expires_at: datetime, now: datetime
    ) -> bool:
        """True the first time (until ``expires_at``), False for a live one."""
        until, at = require_aware(expires_at), require_aware(now)
        row = await self._one(identities.SPEND_NONCE, issuer, nonce_hash, until, at, write=True)
        return row is not None

    async def put_flow(self, flow: FederationFlow) -> None:
        """Store; ``Conflict`` if the state hash exists, ``NotFound`` without the linking user."""
        try:
            await self._run_guarded(identities.INSERT_FLOW, *flow_params(flow, require_aware))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound("user not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("state exists") from None

    async def take_flow(self, state_hash: str, browser_hash: str) -> FederationFlow | None:
        """Remove and return it when bound to ``browser_hash``, or None."""
        row = await self._one(identities.TAKE_FLOW, state_hash, browser_hash, write=True)
        return None if row is None else flow_row(tuple(row), _same)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the started logins and nonces expired by ``now`` (up to ``limit`` each)."""
        at = require_aware(now)
        flows = await self._purge_where("federation_flows", EXPIRED, limit, at)
        return flows + await self._purge_where("federation_nonces", EXPIRED, limit, at)
