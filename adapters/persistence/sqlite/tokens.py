"""The SQLite refresh tokens (live and rotated, with the reuse interval's count) and
sessions (contract sections 2 and 7)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from datetime import datetime

from adapters.persistence import _columns as cols
from adapters.persistence._rows import to_micros
from adapters.persistence.sqlite.unit import (
    _is_fk,
    _session,
    _SqlQueries,
    _token,
    _token_params,
)
from application.ports import SessionStore, TokenStore
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken, Session


class SqliteTokenStore(_SqlQueries, TokenStore):
    """``TokenStore`` in the current transaction (tables ``refresh_tokens`` and
    ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            await self._count(
                f"INSERT INTO refresh_tokens ({cols.TOKENS}) VALUES (?, ?, ?, ?, ?, ?)",
                _token_params(token),
            )
        except sqlite3.IntegrityError as exc:
            if _is_fk(exc):
                raise NotFound(f"user {token.user_id} not found") from None
            raise Conflict("refresh token hash exists") from None

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash (``DELETE ... RETURNING``), or None."""
        rows = await self._all(
            f"DELETE FROM refresh_tokens WHERE token_hash = ? RETURNING {cols.TOKENS}",
            (token_hash,),
        )
        return _token(rows[0]) if rows else None

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._one(
            f"SELECT {cols.TOKENS} FROM refresh_tokens WHERE token_hash = ?", (token_hash,)
        )
        return None if row is None else _token(row)

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        try:
            await self._count(
                f"INSERT INTO rotated_refresh_tokens ({cols.ROTATED})"
                " VALUES (?, ?, ?, ?, ?, ?, ?)" + cols.ROTATED_UPSERT,
                (*_token_params(token), to_micros(rotated_at)),
            )
        except sqlite3.IntegrityError:
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._one(
            f"SELECT {cols.TOKENS} FROM rotated_refresh_tokens WHERE token_hash = ?",
            (token_hash,),
        )
        return None if row is None else _token(row)

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """Count one more reuse if rotated at or after ``rotated_since`` and reused fewer than
        ``max_reuses`` times (one ``UPDATE ... RETURNING`` under the write lock), else None."""
        rows = await self._all(
            "UPDATE rotated_refresh_tokens SET reuse_count = reuse_count + 1"
            " WHERE token_hash = ? AND rotated_at >= ? AND reuse_count < ?"
            f" RETURNING {cols.TOKENS}",
            (token_hash, to_micros(rotated_since), max_reuses),
        )
        return _token(rows[0]) if rows else None

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records with ``expires_at <= now`` (up to ``limit`` of
        each); returns how many."""
        cutoff = (to_micros(now),)
        live = await self._purge_where("refresh_tokens", "expires_at <= ?", cutoff, limit)
        return live + await self._purge_where(
            "rotated_refresh_tokens", "expires_at <= ?", cutoff, limit
        )


class SqliteSessionStore(_SqlQueries, SessionStore):
    """``SessionStore`` in the current transaction (table ``sessions``; ``last_used_at`` is
    kept by the trigger ``refresh_tokens_touch_session``)."""

    async def add(self, session: Session) -> None:
        """Store a new session. Raises ``Conflict`` (id exists) or ``NotFound`` (no such user)."""
        try:
            await self._count(
                f"INSERT INTO sessions ({cols.SESSIONS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session.id,
                    session.user_id,
                    to_micros(session.created_at),
                    to_micros(session.last_used_at),
                    to_micros(session.expires_at),
                    session.user_agent,
                    session.client_address,
                    session.client_id,
                ),
            )
        except sqlite3.IntegrityError as exc:
            if _is_fk(exc):
                raise NotFound(f"user {session.user_id} not found") from None
            raise Conflict(f"session {session.id} exists") from None

    async def get(self, session_id: str) -> Session | None:
        """The session with this id, or None."""
        row = await self._one(f"SELECT {cols.SESSIONS} FROM sessions WHERE id = ?", (session_id,))
        return None if row is None else _session(row)

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first."""
        rows = await self._all(
            f"SELECT {cols.SESSIONS} FROM sessions WHERE user_id = ?1 AND "
            + cols.LIVE_SESSION.format(now="?2")
            + " ORDER BY created_at DESC, id DESC",
            (user_id, to_micros(now)),
        )
        return [_session(r) for r in rows]

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        revoked = await self._count("DELETE FROM refresh_tokens WHERE family_id = ?", (session_id,))
        await self._count("DELETE FROM sessions WHERE id = ?", (session_id,))
        return revoked

    async def end_all(self, user_id: str) -> list[str]:
        """End every session of the user; returns their ids, sorted."""
        await self._count("DELETE FROM refresh_tokens WHERE user_id = ?", (user_id,))
        rows = await self._all("DELETE FROM sessions WHERE user_id = ? RETURNING id", (user_id,))
        return sorted(r[0] for r in rows)

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id`` (their hosted sessions go by
        cascade); returns their ids, sorted."""
        await self._count(
            "DELETE FROM refresh_tokens WHERE family_id IN"
            " (SELECT id FROM sessions WHERE user_id = ?1 AND client_id = ?2)",
            (user_id, client_id),
        )
        rows = await self._all(
            "DELETE FROM sessions WHERE user_id = ? AND client_id = ? RETURNING id",
            (user_id, client_id),
        )
        return sorted(r[0] for r in rows)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) sessions past ``expires_at`` or without a live token or
        hosted session."""
        dead = "NOT (" + cols.LIVE_SESSION.format(now="?1") + ")"
        return await self._purge_where("sessions", dead, (to_micros(now),), limit)
