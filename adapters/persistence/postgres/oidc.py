"""The PostgreSQL OpenID Connect provider stores (docs/reference/oauth-and-oidc.md): tables
``oidc_codes``, ``oidc_consents`` and ``oidc_hosted_sessions`` (migration 0015; statements in
``sql.oidc``, rows in ``rows.oidc``). Times are ``timestamptz``."""

from __future__ import annotations

from datetime import datetime

import asyncpg
import attrs

from adapters.persistence.postgres.session import SqlQueries
from adapters.persistence.rows.oidc import (
    code_params,
    code_row,
    consent_params,
    consent_row,
    hosted_params,
    hosted_row,
)
from adapters.persistence.sql import oidc, sessions, tokens
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.times import require_aware
from application.ports.oidc import AuthorizationCodeStore, ConsentStore, HostedSessionStore
from domain.errors import Conflict, NotFound
from domain.oidc import AuthorizationCode, Consent, HostedSession


def _as_is(at: datetime) -> datetime:
    return at


_LOCKED = " FOR UPDATE"
"""Appended to ``oidc.CONSENT``: the row stays locked until the unit commits."""


class PostgresAuthorizationCodeStore(SqlQueries, AuthorizationCodeStore):
    """``AuthorizationCodeStore`` in the unit's transaction: ``take`` is one ``UPDATE ...
    WHERE used_at IS NULL RETURNING`` (of concurrent takes, the row lock lets exactly one see
    it unused; the others re-check the condition after it commits and read it used)."""

    async def add(self, code: AuthorizationCode) -> None:
        """Store a code. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user or
        client)."""
        try:
            await self._run_guarded(oidc.INSERT_CODE, *code_params(code, require_aware))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {code.user_id} or client {code.client_id} not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("authorization code hash exists") from None

    async def take(self, code_hash: str, now: datetime) -> AuthorizationCode | None:
        """Mark the code used at ``now`` and return it; a used one unchanged; None if unknown."""
        row = await self._one(oidc.TAKE_CODE, code_hash, require_aware(now), write=True)
        if row is None:
            row = await self._one(oidc.CODE, code_hash)
        return None if row is None else code_row(row, _as_is)

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the family issued from the code."""
        await self._run(oidc.SET_CODE_FAMILY, code_hash, family_id)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) codes with ``expires_at <= now``."""
        return await self._purge_where("oidc_codes", EXPIRED, limit, require_aware(now))


class PostgresConsentStore(SqlQueries, ConsentStore):
    """``ConsentStore`` in the unit's transaction."""

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The consent, or None."""
        row = await self._one(oidc.CONSENT, user_id, client_id)
        return None if row is None else consent_row(row, _as_is)

    async def grant(self, consent: Consent) -> None:
        """Upsert with the union of the scopes: insert, else lock the row (``FOR UPDATE``: a
        concurrent grant waits) and write the union. Raises ``NotFound`` (no such user or
        client)."""
        try:
            inserted = await self._run_guarded(
                oidc.INSERT_CONSENT, *consent_params(consent, require_aware)
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(
                f"user {consent.user_id} or client {consent.client_id} not found"
            ) from None
        if inserted:
            return
        row = await self._one(
            oidc.CONSENT + _LOCKED, consent.user_id, consent.client_id, write=True
        )
        old = () if row is None else consent_row(row, _as_is).scopes
        union = attrs.evolve(consent, scopes=(*old, *consent.scopes))
        await self._run(oidc.UPDATE_CONSENT, *consent_params(union, require_aware))

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first."""
        rows = await self._all(oidc.CONSENTS_OF_USER, user_id)
        return [consent_row(r, _as_is) for r in rows]

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the consent; False if there was none."""
        return bool(await self._run(oidc.DELETE_CONSENT, user_id, client_id))


class PostgresHostedSessionStore(SqlQueries, HostedSessionStore):
    """``HostedSessionStore`` in the unit's transaction (a row goes with its ``sessions`` row
    by ``ON DELETE CASCADE``)."""

    async def add(self, hosted: HostedSession) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user or session)."""
        try:
            await self._run_guarded(oidc.INSERT_HOSTED, *hosted_params(hosted, require_aware))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"session {hosted.session_id} not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("hosted session hash exists") from None

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session, or None (expired, or its sessions row ended)."""
        row = await self._one(oidc.LIVE_HOSTED, id_hash, require_aware(now))
        return None if row is None else hosted_row(row, _as_is)

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on (capped at the absolute end)."""
        await self._run(oidc.TOUCH_HOSTED, id_hash, require_aware(idle_expires_at))

    async def end(self, id_hash: str) -> str | None:
        """End it and its sessions row (with the row's live tokens); its session id or None."""
        row = await self._one(oidc.DELETE_HOSTED, id_hash, write=True)
        if row is None:
            return None
        session_id: str = row[0]
        await self._run(tokens.END_FAMILY, session_id)
        await self._run(sessions.DELETE, session_id)
        return session_id

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) hosted sessions past their idle or absolute end."""
        return await self._purge_where(
            "oidc_hosted_sessions", oidc.HOSTED_EXPIRED, limit, require_aware(now)
        )
