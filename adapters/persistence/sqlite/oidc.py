"""The SQLite OpenID Connect provider stores (docs/reference/oauth-and-oidc.md): tables
``oidc_codes``, ``oidc_consents`` and ``oidc_hosted_sessions`` (migration 0015; statements in
``sql.oidc``, rows in ``rows.oidc``). Times are INTEGER microseconds."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import attrs

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
from adapters.persistence.sqlite.rows import is_foreign_key
from adapters.persistence.sqlite.unit import SqlQueries
from adapters.persistence.times import from_micros, to_micros
from application.ports.oidc import AuthorizationCodeStore, ConsentStore, HostedSessionStore
from domain.errors import Conflict, NotFound
from domain.oidc import AuthorizationCode, Consent, HostedSession


class SqliteAuthorizationCodeStore(SqlQueries, AuthorizationCodeStore):
    """``AuthorizationCodeStore`` in the current transaction (one writer at a time: ``take``'s
    ``UPDATE ... WHERE used_at IS NULL`` is atomic)."""

    async def add(self, code: AuthorizationCode) -> None:
        """Store a code. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user or
        client)."""
        try:
            await self._count(oidc.INSERT_CODE, code_params(code, to_micros))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound(
                    f"user {code.user_id} or client {code.client_id} not found"
                ) from None
            raise Conflict("authorization code hash exists") from None

    async def take(self, code_hash: str, now: datetime) -> AuthorizationCode | None:
        """Mark the code used at ``now`` and return it; a used one unchanged; None if unknown."""
        row = await self._one(oidc.TAKE_CODE, (code_hash, to_micros(now)))
        if row is None:
            row = await self._one(oidc.CODE, (code_hash,))
        return None if row is None else code_row(row, from_micros)

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the family issued from the code."""
        await self._count(oidc.SET_CODE_FAMILY, (code_hash, family_id))

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) codes with ``expires_at <= now``."""
        return await self._purge_where("oidc_codes", EXPIRED, (to_micros(now),), limit)


class SqliteConsentStore(SqlQueries, ConsentStore):
    """``ConsentStore`` in the current transaction."""

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The consent, or None."""
        row = await self._one(oidc.CONSENT, (user_id, client_id))
        return None if row is None else consent_row(row, from_micros)

    async def grant(self, consent: Consent) -> None:
        """Insert, else write the union of the scopes (read and write in the unit's write
        transaction, which holds SQLite's write lock). Raises ``NotFound`` (no such user or
        client)."""
        try:
            if await self._count(oidc.INSERT_CONSENT, consent_params(consent, to_micros)):
                return
        except sqlite3.IntegrityError:
            raise NotFound(
                f"user {consent.user_id} or client {consent.client_id} not found"
            ) from None
        old = await self.get(consent.user_id, consent.client_id)
        scopes = consent.scopes if old is None else (*old.scopes, *consent.scopes)
        union = attrs.evolve(consent, scopes=scopes)
        await self._count(oidc.UPDATE_CONSENT, consent_params(union, to_micros))

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first."""
        rows = await self._all(oidc.CONSENTS_OF_USER, (user_id,))
        return [consent_row(r, from_micros) for r in rows]

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the consent; False if there was none."""
        return bool(await self._count(oidc.DELETE_CONSENT, (user_id, client_id)))


class SqliteHostedSessionStore(SqlQueries, HostedSessionStore):
    """``HostedSessionStore`` in the current transaction (a row goes with its ``sessions`` row
    by ``ON DELETE CASCADE``)."""

    async def add(self, hosted: HostedSession) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user or session)."""
        try:
            await self._count(oidc.INSERT_HOSTED, hosted_params(hosted, to_micros))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound(f"session {hosted.session_id} not found") from None
            raise Conflict("hosted session hash exists") from None

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session, or None (expired, or its sessions row ended)."""
        row = await self._one(oidc.LIVE_HOSTED, (id_hash, to_micros(now)))
        return None if row is None else hosted_row(row, from_micros)

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on (capped at the absolute end)."""
        await self._count(oidc.TOUCH_HOSTED, (id_hash, to_micros(idle_expires_at)))

    async def end(self, id_hash: str) -> str | None:
        """End it and its sessions row (with the row's live tokens); its session id or None."""
        row = await self._one(oidc.DELETE_HOSTED, (id_hash,))
        if row is None:
            return None
        session_id: str = row[0]
        await self._count(tokens.END_FAMILY, (session_id,))
        await self._count(sessions.DELETE, (session_id,))
        return session_id

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) hosted sessions past their idle or absolute end."""
        return await self._purge_where(
            "oidc_hosted_sessions", oidc.HOSTED_EXPIRED, (to_micros(now),), limit
        )
