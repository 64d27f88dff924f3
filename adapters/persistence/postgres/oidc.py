"""The PostgreSQL OpenID Connect provider stores (contract section 15): tables
``oidc_codes``, ``oidc_consents`` and ``oidc_hosted_sessions`` (migration 0015). Scopes and
``amr`` are space-separated."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from adapters.persistence._rows import require_aware
from adapters.persistence.postgres.session import _SqlQueries
from application.ports.oidc import AuthorizationCodeStore, ConsentStore, HostedSessionStore
from domain.errors import Conflict, NotFound
from domain.oidc import AuthorizationCode, Consent, HostedSession

CODES = (
    "code_hash, client_id, user_id, redirect_uri, code_challenge, nonce, scopes, session_id,"
    " auth_time, amr, acr, created_at, expires_at, used_at, family_id"
)
"""The columns of ``oidc_codes`` in the order of ``AuthorizationCode``'s fields."""
CONSENTS = "user_id, client_id, scopes, granted_at"
"""The columns of ``oidc_consents`` in the order of ``Consent``'s fields."""
HOSTED = "id_hash, session_id, user_id, auth_time, amr, acr, idle_expires_at, expires_at"
"""The columns of ``oidc_hosted_sessions`` in the order of ``HostedSession``'s fields."""
_HOSTED_H = ", ".join(f"h.{c.strip()}" for c in HOSTED.split(","))


def _code(r: Sequence[Any]) -> AuthorizationCode:
    return AuthorizationCode(
        r[0], r[1], r[2], r[3], r[4], r[5], tuple(r[6].split()), r[7], r[8],
        tuple(r[9].split()), r[10], r[11], r[12], r[13], r[14],
    )  # fmt: skip


def _consent(r: Sequence[Any]) -> Consent:
    return Consent(r[0], r[1], tuple(r[2].split()), r[3])


def _hosted(r: Sequence[Any]) -> HostedSession:
    return HostedSession(r[0], r[1], r[2], r[3], tuple(r[4].split()), r[5], r[6], r[7])


class PostgresAuthorizationCodeStore(_SqlQueries, AuthorizationCodeStore):
    """``AuthorizationCodeStore`` in the unit's transaction: ``take`` is one ``UPDATE ...
    WHERE used_at IS NULL RETURNING`` (of concurrent takes, the row lock lets exactly one see
    it unused; the others re-check the condition after it commits and read it used)."""

    async def add(self, code: AuthorizationCode) -> None:
        """Store a code. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user or
        client)."""
        for at in (code.auth_time, code.created_at, code.expires_at):
            require_aware(at)
        try:
            await self._run_guarded(
                f"INSERT INTO oidc_codes ({CODES}) VALUES"
                " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                code.code_hash, code.client_id, code.user_id, code.redirect_uri,
                code.code_challenge, code.nonce, " ".join(code.scopes), code.session_id,
                code.auth_time, " ".join(code.amr), code.acr, code.created_at, code.expires_at,
                code.used_at, code.family_id,
            )  # fmt: skip
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {code.user_id} or client {code.client_id} not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("authorization code hash exists") from None

    async def take(self, code_hash: str, now: datetime) -> AuthorizationCode | None:
        """Mark the code used at ``now`` and return it; a used one unchanged; None if unknown."""
        row = await self._one(
            f"UPDATE oidc_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL"
            f" RETURNING {CODES}",
            code_hash,
            require_aware(now),
            write=True,
        )
        if row is None:
            row = await self._one(f"SELECT {CODES} FROM oidc_codes WHERE code_hash = $1", code_hash)
        return None if row is None else _code(row)

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the family issued from the code."""
        await self._run(
            "UPDATE oidc_codes SET family_id = $2 WHERE code_hash = $1", code_hash, family_id
        )

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) codes with ``expires_at <= now``."""
        return await self._purge_where("oidc_codes", "expires_at <= $1", limit, require_aware(now))


class PostgresConsentStore(_SqlQueries, ConsentStore):
    """``ConsentStore`` in the unit's transaction."""

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The consent, or None."""
        row = await self._one(
            f"SELECT {CONSENTS} FROM oidc_consents WHERE user_id = $1 AND client_id = $2",
            user_id,
            client_id,
        )
        return None if row is None else _consent(row)

    async def grant(self, consent: Consent) -> None:
        """Upsert with the union of the scopes: insert, else lock the row (``FOR UPDATE``: a
        concurrent grant waits) and write the union. Raises ``NotFound`` (no such user or
        client)."""
        at = require_aware(consent.granted_at)
        scopes = " ".join(dict.fromkeys(consent.scopes))
        try:
            inserted = await self._run_guarded(
                f"INSERT INTO oidc_consents ({CONSENTS}) VALUES ($1, $2, $3, $4)"
                " ON CONFLICT (user_id, client_id) DO NOTHING",
                consent.user_id,
                consent.client_id,
                scopes,
                at,
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(
                f"user {consent.user_id} or client {consent.client_id} not found"
            ) from None
        if inserted:
            return
        row = await self._one(
            "SELECT scopes FROM oidc_consents WHERE user_id = $1 AND client_id = $2 FOR UPDATE",
            consent.user_id,
            consent.client_id,
            write=True,
        )
        old = () if row is None else tuple(row[0].split())
        await self._run(
            f"INSERT INTO oidc_consents ({CONSENTS}) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes,"
            " granted_at = excluded.granted_at",
            consent.user_id,
            consent.client_id,
            " ".join(dict.fromkeys((*old, *consent.scopes))),
            at,
        )

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first."""
        rows = await self._all(
            f"SELECT {CONSENTS} FROM oidc_consents WHERE user_id = $1"
            " ORDER BY granted_at DESC, client_id",
            user_id,
        )
        return [_consent(r) for r in rows]

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the consent; False if there was none."""
        return bool(
            await self._run(
                "DELETE FROM oidc_consents WHERE user_id = $1 AND client_id = $2",
                user_id,
                client_id,
            )
        )


class PostgresHostedSessionStore(_SqlQueries, HostedSessionStore):
    """``HostedSessionStore`` in the unit's transaction (a row goes with its ``sessions`` row
    by ``ON DELETE CASCADE``)."""

    async def add(self, hosted: HostedSession) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user or session)."""
        for at in (hosted.auth_time, hosted.idle_expires_at, hosted.expires_at):
            require_aware(at)
        try:
            await self._run_guarded(
                f"INSERT INTO oidc_hosted_sessions ({HOSTED})"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                hosted.id_hash, hosted.session_id, hosted.user_id, hosted.auth_time,
                " ".join(hosted.amr), hosted.acr, hosted.idle_expires_at, hosted.expires_at,
            )  # fmt: skip
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"session {hosted.session_id} not found") from None
        except asyncpg.UniqueViolationError:
            raise Conflict("hosted session hash exists") from None

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session, or None (expired, or its sessions row ended)."""
        row = await self._one(
            f"SELECT {_HOSTED_H} FROM oidc_hosted_sessions h JOIN sessions s"
            " ON s.id = h.session_id WHERE h.id_hash = $1 AND h.idle_expires_at > $2"
            " AND h.expires_at > $2 AND s.expires_at > $2",
            id_hash,
            require_aware(now),
        )
        return None if row is None else _hosted(row)

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on (capped at the absolute end)."""
        await self._run(
            "UPDATE oidc_hosted_sessions SET idle_expires_at = LEAST($2, expires_at)"
            " WHERE id_hash = $1",
            id_hash,
            require_aware(idle_expires_at),
        )

    async def end(self, id_hash: str) -> str | None:
        """End it and its sessions row (with the row's live tokens); its session id or None."""
        row = await self._one(
            "DELETE FROM oidc_hosted_sessions WHERE id_hash = $1 RETURNING session_id",
            id_hash,
            write=True,
        )
        if row is None:
            return None
        session_id: str = row[0]
        await self._run("DELETE FROM refresh_tokens WHERE family_id = $1", session_id)
        await self._run("DELETE FROM sessions WHERE id = $1", session_id)
        return session_id

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) hosted sessions past their idle or absolute end."""
        return await self._purge_where(
            "oidc_hosted_sessions",
            "idle_expires_at <= $1 OR expires_at <= $1",
            limit,
            require_aware(now),
        )
