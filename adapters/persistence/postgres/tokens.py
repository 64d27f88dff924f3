"""The PostgreSQL refresh tokens (live and rotated, with the reuse interval's count) and
sessions (contract sections 2 and 7)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

from datetime import datetime

import asyncpg

from adapters.persistence import _columns as cols
from adapters.persistence._rows import require_aware
from adapters.persistence.postgres.session import (
    _session,
    _SqlQueries,
    _token,
    _token_params,
)
from application.ports import SessionStore, TokenStore
from domain.errors import (
    Conflict,
    NotFound,
)
from domain.model import RefreshToken, Session


class PostgresTokenStore(_SqlQueries, TokenStore):
    """``TokenStore`` in the unit's transaction (``refresh_tokens``, ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        params = _token_params(token)
        try:
            n = await self._run(
                f"INSERT INTO refresh_tokens ({cols.TOKENS})"
                " SELECT $1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz,"
                " $6::timestamptz WHERE EXISTS (SELECT 1 FROM users WHERE id = $2::text)"
                " ON CONFLICT DO NOTHING",
                *params,
            )
        except asyncpg.ForeignKeyViolationError:  # the user went meanwhile
            raise NotFound(f"user {token.user_id} not found") from None
        if n == 0:
            if await self._one("SELECT 1 FROM users WHERE id = $1", token.user_id) is None:
                raise NotFound(f"user {token.user_id} not found")
            raise Conflict("refresh token hash exists")

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash (``DELETE ... RETURNING``), or None."""
        row = await self._one(
            f"DELETE FROM refresh_tokens WHERE token_hash = $1 RETURNING {cols.TOKENS}",
            token_hash,
            write=True,
        )
        return None if row is None else _token(row)

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._one(
            f"SELECT {cols.TOKENS} FROM refresh_tokens WHERE token_hash = $1", token_hash
        )
        return None if row is None else _token(row)

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        params = _token_params(token)
        try:
            await self._run_guarded(
                f"INSERT INTO rotated_refresh_tokens ({cols.ROTATED})"
                " VALUES ($1, $2, $3, $4, $5, $6, $7)" + cols.ROTATED_UPSERT,
                *params,
                require_aware(rotated_at),
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._one(
            f"SELECT {cols.TOKENS} FROM rotated_refresh_tokens WHERE token_hash = $1", token_hash
        )
        return None if row is None else _token(row)

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """Count one more reuse if rotated at or after ``rotated_since`` and reused fewer than
        ``max_reuses`` times, else None. One ``UPDATE ... RETURNING``: a concurrent claim waits
        for the row lock and re-checks the count, so the cap holds across processes."""
        row = await self._one(
            "UPDATE rotated_refresh_tokens SET reuse_count = reuse_count + 1"
            " WHERE token_hash = $1 AND rotated_at >= $2 AND reuse_count < $3"
            f" RETURNING {cols.TOKENS}",
            token_hash,
            require_aware(rotated_since),
            max_reuses,
            write=True,
        )
        return None if row is None else _token(row)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records with ``expires_at <= now`` (up to ``limit`` of
        each); returns how many."""
        require_aware(now)
        live = await self._purge_where("refresh_tokens", "expires_at <= $1", limit, now)
        return live + await self._purge_where(
            "rotated_refresh_tokens", "expires_at <= $1", limit, now
        )


class PostgresSessionStore(_SqlQueries, SessionStore):
    """``SessionStore`` in the unit's transaction (table ``sessions``; ``last_used_at`` is kept
    by the trigger ``refresh_tokens_touch_session``)."""

    async def add(self, session: Session) -> None:
        """Store a new session. Raises ``Conflict`` (id exists) or ``NotFound`` (no such user)."""
        for at in (session.created_at, session.last_used_at, session.expires_at):
            require_aware(at)
        try:
            n = await self._run_guarded(
                f"INSERT INTO sessions ({cols.SESSIONS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                " ON CONFLICT DO NOTHING",
                session.id,
                session.user_id,
                session.created_at,
                session.last_used_at,
                session.expires_at,
                session.user_agent,
                session.client_address,
                session.client_id,
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {session.user_id} not found") from None
        if n == 0:
            raise Conflict(f"session {session.id} exists")

    async def get(self, session_id: str) -> Session | None:
        """The session with this id, or None."""
        row = await self._one(f"SELECT {cols.SESSIONS} FROM sessions WHERE id = $1", session_id)
        return None if row is None else _session(row)

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first."""
        rows = await self._all(
            f"SELECT {cols.SESSIONS} FROM sessions WHERE user_id = $1 AND "
            + cols.LIVE_SESSION.format(now="$2")
            + " ORDER BY created_at DESC, id DESC",
            user_id,
            require_aware(now),
        )
        return [_session(r) for r in rows]

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        revoked = await self._run("DELETE FROM refresh_tokens WHERE family_id = $1", session_id)
        await self._run("DELETE FROM sessions WHERE id = $1", session_id)
        return revoked

    async def end_all(self, user_id: str) -> list[str]:
        """End every session of the user; returns their ids, sorted."""
        await self._run("DELETE FROM refresh_tokens WHERE user_id = $1", user_id)
        rows = await self._s.run(
            lambda c: c.fetch("DELETE FROM sessions WHERE user_id = $1 RETURNING id", user_id),
            write=True,
        )
        return sorted(r[0] for r in rows)

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id`` (their hosted sessions go by
        cascade); returns their ids, sorted."""
        await self._run(
            "DELETE FROM refresh_tokens WHERE family_id IN"
            " (SELECT id FROM sessions WHERE user_id = $1 AND client_id = $2)",
            user_id,
            client_id,
        )
        rows = await self._s.run(
            lambda c: c.fetch(
                "DELETE FROM sessions WHERE user_id = $1 AND client_id = $2 RETURNING id",
                user_id,
                client_id,
            ),
            write=True,
        )
        return sorted(r[0] for r in rows)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) sessions past ``expires_at`` or without a live token or
        hosted session."""
        dead = "NOT (" + cols.LIVE_SESSION.format(now="$1") + ")"
        return await self._purge_where("sessions", dead, limit, require_aware(now))
