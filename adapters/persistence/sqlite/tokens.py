"""The SQLite refresh tokens (live and rotated, with the reuse interval's count) and
sessions (docs/reference/tokens-and-sessions.md)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from adapters.persistence.sql import sessions, tokens
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sqlite.rows import (
    is_foreign_key,
    session_row,
    token_params,
    token_row,
)
from adapters.persistence.sqlite.unit import SqlQueries
from adapters.persistence.times import to_micros
from application.ports import SessionStore, TokenStore
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken, Session


class SqliteTokenStore(SqlQueries, TokenStore):
    """``TokenStore`` in the current transaction (tables ``refresh_tokens`` and
    ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            await self._count(tokens.INSERT, token_params(token))
        except sqlite3.IntegrityError as exc:
            if is_foreign_key(exc):
                raise NotFound(f"user {token.user_id} not found") from None
            raise Conflict("refresh token hash exists") from None

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash (``DELETE ... RETURNING``), or None."""
        rows = await self._all(tokens.TAKE, (token_hash,))
        return token_row(rows[0]) if rows else None

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._one(tokens.FIND, (token_hash,))
        return None if row is None else token_row(row)

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        try:
            await self._count(
                tokens.REMEMBER_ROTATED, (*token_params(token), to_micros(rotated_at))
            )
        except sqlite3.IntegrityError:
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._one(tokens.FIND_ROTATED, (token_hash,))
        return None if row is None else token_row(row)

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """Count one more reuse if rotated at or after ``rotated_since`` and reused fewer than
        ``max_reuses`` times (one ``UPDATE ... RETURNING`` under the write lock), else None."""
        rows = await self._all(
            tokens.CLAIM_REUSE, (token_hash, to_micros(rotated_since), max_reuses)
        )
        return token_row(rows[0]) if rows else None

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records with ``expires_at <= now`` (up to ``limit`` of
        each); returns how many."""
        cutoff = (to_micros(now),)
        live = await self._purge_where("refresh_tokens", EXPIRED, cutoff, limit)
        return live + await self._purge_where("rotated_refresh_tokens", EXPIRED, cutoff, limit)


class SqliteSessionStore(SqlQueries, SessionStore):
    """``SessionStore`` in the current transaction (table ``sessions``; ``last_used_at`` is
    kept by the trigger ``refresh_tokens_touch_session``)."""

    async def add(self, session: Session) -> None:
        """Store a new session. Raises ``Conflict`` (id exists) or ``NotFound`` (no such user)."""
        try:
            await self._count(
                sessions.INSERT,
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
            if is_foreign_key(exc):
                raise NotFound(f"user {session.user_id} not found") from None
            raise Conflict(f"session {session.id} exists") from None

    async def get(self, session_id: str) -> Session | None:
        """The session with this id, or None."""
        row = await self._one(sessions.BY_ID, (session_id,))
        return None if row is None else session_row(row)

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first."""
        rows = await self._all(sessions.LIVE, (user_id, to_micros(now)))
        return [session_row(r) for r in rows]

    async def count_live(self, org_id: str | None, now: datetime) -> int:
        """How many sessions of ``org_id``'s users (None: every org) are live at ``now``."""
        row = await self._one(sessions.COUNT_LIVE, (org_id, to_micros(now)))
        return 0 if row is None else int(row[0])

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        revoked = await self._count(tokens.END_FAMILY, (session_id,))
        await self._count(sessions.DELETE, (session_id,))
        return revoked

    async def end_all(self, user_id: str) -> list[str]:
        """End every session of the user; returns their ids, sorted."""
        await self._count(tokens.END_USER, (user_id,))
        rows = await self._all(sessions.DELETE_OF_USER, (user_id,))
        return sorted(r[0] for r in rows)

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id`` (their hosted sessions go by
        cascade); returns their ids, sorted."""
        await self._count(sessions.TOKENS_OF_CLIENT, (user_id, client_id))
        rows = await self._all(sessions.DELETE_OF_CLIENT, (user_id, client_id))
        return sorted(r[0] for r in rows)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) sessions past ``expires_at`` or without a live token or
        hosted session."""
        return await self._purge_where("sessions", sessions.DEAD, (to_micros(now),), limit)
