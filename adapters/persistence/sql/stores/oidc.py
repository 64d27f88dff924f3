"""The SQL OpenID Connect provider stores (docs/reference/oauth-and-oidc.md): tables
``oidc_codes``, ``oidc_consents`` and ``oidc_hosted_sessions`` (migration 0015; statements in
``sql.oidc``, rows in ``rows.oidc``)."""

from __future__ import annotations

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
from adapters.persistence.sql.queries import SqlStore
from application.ports.oidc import (
    AuthorizationCodeStore,
    ConsentStore,
    HostedSessionStore,
    TakenCode,
)
from domain.errors import Conflict, NotFound
from domain.oidc import AuthorizationCode, Consent, HostedSession


class SqlAuthorizationCodeStore(SqlStore, AuthorizationCodeStore):
    """``AuthorizationCodeStore`` in the current transaction: ``take`` is one ``UPDATE ...
    WHERE used_at IS NULL RETURNING`` (of concurrent takes exactly one sees the code unused:
    SQLite's write lock or PostgreSQL's row lock orders them)."""

    async def add(self, code: AuthorizationCode) -> None:
        """Store a code. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user or
        client)."""
        try:
            await self._q.execute(oidc.INSERT_CODE, code_params(code, self._d.to_db), guarded=True)
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(
                    f"user {code.user_id} or client {code.client_id} not found"
                ) from None
            if self._d.is_unique_violation(exc):
                raise Conflict("authorization code hash exists") from None
            raise

    async def take(self, code_hash: str, now: datetime) -> TakenCode | None:
        """Mark the code used at ``now`` (first use); a used one unchanged; None if unknown."""
        row = await self._q.one(oidc.TAKE_CODE, (code_hash, self._d.to_db(now)), write=True)
        if row is not None:
            return TakenCode(code_row(row, self._d.from_db), first_use=True)
        row = await self._q.one(oidc.CODE, (code_hash,))
        return None if row is None else TakenCode(code_row(row, self._d.from_db), first_use=False)

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the family issued from the code."""
        await self._q.execute(oidc.SET_CODE_FAMILY, (code_hash, family_id))

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) codes with ``expires_at <= now``."""
        return await self._q.purge("oidc_codes", EXPIRED, (self._d.to_db(now),), limit)


class SqlConsentStore(SqlStore, ConsentStore):
    """``ConsentStore`` in the current transaction."""

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The consent, or None."""
        row = await self._q.one(oidc.CONSENT, (user_id, client_id))
        return None if row is None else consent_row(row, self._d.from_db)

    async def grant(self, consent: Consent) -> None:
        """Insert, else read the row locked (``Dialect.lock_rows``: PostgreSQL's ``FOR UPDATE``,
        a concurrent grant waits; SQLite's unit holds the write lock already) and write the
        union of the scopes. Raises ``NotFound`` (no such user or client)."""
        try:
            inserted = await self._q.execute(
                oidc.INSERT_CONSENT, consent_params(consent, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if not self._d.is_foreign_key_violation(exc):
                raise
            raise NotFound(
                f"user {consent.user_id} or client {consent.client_id} not found"
            ) from None
        if inserted:
            return
        row = await self._q.one(
            oidc.CONSENT + self._d.lock_rows, (consent.user_id, consent.client_id), write=True
        )
        old = () if row is None else consent_row(row, self._d.from_db).scopes
        union = attrs.evolve(consent, scopes=(*old, *consent.scopes))
        await self._q.execute(oidc.UPDATE_CONSENT, consent_params(union, self._d.to_db))

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first."""
        rows = await self._q.all(oidc.CONSENTS_OF_USER, (user_id,))
        return [consent_row(r, self._d.from_db) for r in rows]

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the consent; False if there was none."""
        return bool(await self._q.execute(oidc.DELETE_CONSENT, (user_id, client_id)))


class SqlHostedSessionStore(SqlStore, HostedSessionStore):
    """``HostedSessionStore`` in the current transaction (a row goes with its ``sessions`` row
    by ``ON DELETE CASCADE``)."""

    async def add(self, hosted: HostedSession) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user or session)."""
        try:
            await self._q.execute(
                oidc.INSERT_HOSTED, hosted_params(hosted, self._d.to_db), guarded=True
            )
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"session {hosted.session_id} not found") from None
            if self._d.is_unique_violation(exc):
                raise Conflict("hosted session hash exists") from None
            raise

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session, or None (expired, or its sessions row ended)."""
        row = await self._q.one(oidc.LIVE_HOSTED, (id_hash, self._d.to_db(now)))
        return None if row is None else hosted_row(row, self._d.from_db)

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on (capped at the absolute end)."""
        await self._q.execute(oidc.TOUCH_HOSTED, (id_hash, self._d.to_db(idle_expires_at)))

    async def reauthenticated(self, id_hash: str, auth_time: datetime) -> None:
        """Set its ``auth_time`` (a re-authentication)."""
        await self._q.execute(oidc.REAUTHENTICATED, (id_hash, self._d.to_db(auth_time)))

    async def end(self, id_hash: str) -> str | None:
        """End it and its sessions row (with the row's live tokens); its session id or None."""
        row = await self._q.one(oidc.DELETE_HOSTED, (id_hash,), write=True)
        if row is None:
            return None
        session_id: str = row[0]
        await self._q.execute(tokens.END_FAMILY, (session_id,))
        await self._q.execute(sessions.DELETE, (session_id,))
        return session_id

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) hosted sessions past their idle or absolute end."""
        return await self._q.purge(
            "oidc_hosted_sessions", oidc.HOSTED_EXPIRED, (self._d.to_db(now),), limit
        )
