"""The SQLite OpenID Connect provider stores (contract section 15): tables ``oidc_codes``,
``oidc_consents`` and ``oidc_hosted_sessions`` (migration 0015). Times are INTEGER
microseconds; scopes and ``amr`` are space-separated."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from adapters.persistence._rows import from_micros, to_micros
from adapters.persistence.sqlite.unit import _is_fk, _SqlQueries
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


def _code(row: Sequence[Any]) -> AuthorizationCode:
    (code_hash, client_id, user_id, redirect_uri, challenge, nonce, scopes, session_id,
     auth_time, amr, acr, created_at, expires_at, used_at, family_id) = row  # fmt: skip
    return AuthorizationCode(
        code_hash, client_id, user_id, redirect_uri, challenge, nonce, tuple(scopes.split()),
        session_id, from_micros(auth_time), tuple(amr.split()), acr, from_micros(created_at),
        from_micros(expires_at), None if used_at is None else from_micros(used_at), family_id,
    )  # fmt: skip


def _consent(row: Sequence[Any]) -> Consent:
    user_id, client_id, scopes, granted_at = row
    return Consent(user_id, client_id, tuple(scopes.split()), from_micros(granted_at))


def _hosted(row: Sequence[Any]) -> HostedSession:
    id_hash, session_id, user_id, auth_time, amr, acr, idle, expires = row
    return HostedSession(
        id_hash, session_id, user_id, from_micros(auth_time), tuple(amr.split()), acr,
        from_micros(idle), from_micros(expires),
    )  # fmt: skip


class SqliteAuthorizationCodeStore(_SqlQueries, AuthorizationCodeStore):
    """``AuthorizationCodeStore`` in the current transaction (one writer at a time: ``take``'s
    ``UPDATE ... WHERE used_at IS NULL`` is atomic)."""

    async def add(self, code: AuthorizationCode) -> None:
        """Store a code. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user or
        client)."""
        used = None if code.used_at is None else to_micros(code.used_at)
        try:
            await self._count(
                f"INSERT INTO oidc_codes ({CODES}) VALUES ({', '.join('?' * 15)})",
                (
                    code.code_hash, code.client_id, code.user_id, code.redirect_uri,
                    code.code_challenge, code.nonce, " ".join(code.scopes), code.session_id,
                    to_micros(code.auth_time), " ".join(code.amr), code.acr,
                    to_micros(code.created_at), to_micros(code.expires_at), used, code.family_id,
                ),
            )  # fmt: skip
        except sqlite3.IntegrityError as exc:
            if _is_fk(exc):
                raise NotFound(
                    f"user {code.user_id} or client {code.client_id} not found"
                ) from None
            raise Conflict("authorization code hash exists") from None

    async def take(self, code_hash: str, now: datetime) -> AuthorizationCode | None:
        """Mark the code used at ``now`` and return it; a used one unchanged; None if unknown."""
        row = await self._one(
            f"UPDATE oidc_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL"
            f" RETURNING {CODES}",
            (to_micros(now), code_hash),
        )
        if row is None:
            row = await self._one(
                f"SELECT {CODES} FROM oidc_codes WHERE code_hash = ?", (code_hash,)
            )
        return None if row is None else _code(row)

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the family issued from the code."""
        await self._count(
            "UPDATE oidc_codes SET family_id = ? WHERE code_hash = ?", (family_id, code_hash)
        )

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) codes with ``expires_at <= now``."""
        return await self._purge_where("oidc_codes", "expires_at <= ?", (to_micros(now),), limit)


class SqliteConsentStore(_SqlQueries, ConsentStore):
    """``ConsentStore`` in the current transaction."""

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The consent, or None."""
        row = await self._one(
            f"SELECT {CONSENTS} FROM oidc_consents WHERE user_id = ? AND client_id = ?",
            (user_id, client_id),
        )
        return None if row is None else _consent(row)

    async def grant(self, consent: Consent) -> None:
        """Upsert with the union of the scopes (read and write in the unit's write
        transaction). Raises ``NotFound`` (no such user or client)."""
        at = to_micros(consent.granted_at)
        old = await self.get(consent.user_id, consent.client_id)
        scopes = consent.scopes if old is None else (*old.scopes, *consent.scopes)
        try:
            await self._count(
                f"INSERT INTO oidc_consents ({CONSENTS}) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes,"
                " granted_at = excluded.granted_at",
                (consent.user_id, consent.client_id, " ".join(dict.fromkeys(scopes)), at),
            )
        except sqlite3.IntegrityError:
            raise NotFound(
                f"user {consent.user_id} or client {consent.client_id} not found"
            ) from None

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first."""
        rows = await self._all(
            f"SELECT {CONSENTS} FROM oidc_consents WHERE user_id = ?"
            " ORDER BY granted_at DESC, client_id",
            (user_id,),
        )
        return [_consent(r) for r in rows]

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the consent; False if there was none."""
        return bool(
            await self._count(
                "DELETE FROM oidc_consents WHERE user_id = ? AND client_id = ?",
                (user_id, client_id),
            )
        )


class SqliteHostedSessionStore(_SqlQueries, HostedSessionStore):
    """``HostedSessionStore`` in the current transaction (a row goes with its ``sessions`` row
    by ``ON DELETE CASCADE``)."""

    async def add(self, hosted: HostedSession) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user or session)."""
        try:
            await self._count(
                f"INSERT INTO oidc_hosted_sessions ({HOSTED}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    hosted.id_hash, hosted.session_id, hosted.user_id,
                    to_micros(hosted.auth_time), " ".join(hosted.amr), hosted.acr,
                    to_micros(hosted.idle_expires_at), to_micros(hosted.expires_at),
                ),
            )  # fmt: skip
        except sqlite3.IntegrityError as exc:
            if _is_fk(exc):
                raise NotFound(f"session {hosted.session_id} not found") from None
            raise Conflict("hosted session hash exists") from None

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session, or None (expired, or its sessions row ended)."""
        row = await self._one(
            f"SELECT {_HOSTED_H} FROM oidc_hosted_sessions h JOIN sessions s"
            " ON s.id = h.session_id WHERE h.id_hash = ?1 AND h.idle_expires_at > ?2"
            " AND h.expires_at > ?2 AND s.expires_at > ?2",
            (id_hash, to_micros(now)),
        )
        return None if row is None else _hosted(row)

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on (capped at the absolute end)."""
        await self._count(
            "UPDATE oidc_hosted_sessions SET idle_expires_at = min(?, expires_at)"
            " WHERE id_hash = ?",
            (to_micros(idle_expires_at), id_hash),
        )

    async def end(self, id_hash: str) -> str | None:
        """End it and its sessions row (with the row's live tokens); its session id or None."""
        row = await self._one(
            "DELETE FROM oidc_hosted_sessions WHERE id_hash = ? RETURNING session_id", (id_hash,)
        )
        if row is None:
            return None
        session_id: str = row[0]
        await self._count("DELETE FROM refresh_tokens WHERE family_id = ?", (session_id,))
        await self._count("DELETE FROM sessions WHERE id = ?", (session_id,))
        return session_id

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) hosted sessions past their idle or absolute end."""
        return await self._purge_where(
            "oidc_hosted_sessions",
            "idle_expires_at <= ?1 OR expires_at <= ?1",
            (to_micros(now),),
            limit,
        )
