"""The PostgreSQL refresh tokens (live and rotated, with the reuse interval's count) and
sessions (docs/reference/tokens-and-sessions.md)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

from datetime import datetime

import asyncpg

from adapters.persistence.postgres.rows import session_row, token_params, token_row
from adapters.persistence.postgres.session import SKIP_CONFLICT, SqlQueries
from adapters.persistence.sql import columns as cols
from adapters.persistence.sql import sessions, tokens, users
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.times import require_aware
from application.ports import SessionStore, TokenStore
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken, Session

_INSERT_IF_USER = (
    f"INSERT INTO refresh_tokens ({cols.TOKENS})"
    " SELECT $1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz,"
    " $6::timestamptz WHERE EXISTS (SELECT 1 FROM users WHERE id = $2::text)" + SKIP_CONFLICT
)
"""``tokens.INSERT`` that inserts nothing for a missing user or a known hash (no error: the
transaction stays usable)."""


class PostgresTokenStore(SqlQueries, TokenStore):
    """``TokenStore`` in the unit's transaction (``refresh_tokens``, ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            n = await self._run(_INSERT_IF_USER, *token_params(token))
        except asyncpg.ForeignKeyViolationError:  # the user went meanwhile
            raise NotFound(f"user {token.user_id} not found") from None
        if n == 0:
            if await self._one(users.EXISTS, token.user_id) is None:
                raise NotFound(f"user {token.user_id} not found")
            raise Conflict("refresh token hash exists")

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash (``DELETE ... RETURNING``), or None."""
        row = await self._one(tokens.TAKE, token_hash, write=True)
        return None if row is None else token_row(row)

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._one(tokens.FIND, token_hash)
        return None if row is None else token_row(row)

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        params = token_params(token)
        try:
            await self._run_guarded(tokens.REMEMBER_ROTATED, *params, require_aware(rotated_at))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._one(tokens.FIND_ROTATED, token_hash)
        return None if row is None else token_row(row)

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """Count one more reuse if rotated at or after ``rotated_since`` and reused fewer than
        ``max_reuses`` times, else None. One ``UPDATE ... RETURNING``: a concurrent claim waits
        for the row lock and re-checks the count, so the cap holds across processes."""
        row = await self._one(
            tokens.CLAIM_REUSE,
            token_hash,
            require_aware(rotated_since),
            max_reuses,
            write=True,
        )
        return None if row is None else token_row(row)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records with ``expires_at <= now`` (up to ``limit`` of
        each); returns how many."""
        require_aware(now)
        live = await self._purge_where("refresh_tokens", EXPIRED, limit, now)
        return live + await self._purge_where("rotated_refresh_tokens", EXPIRED, limit, now)


class PostgresSessionStore(SqlQueries, SessionStore):
    """``SessionStore`` in the unit's transaction (table ``sessions``; ``last_used_at`` is kept
    by the trigger ``refresh_tokens_touch_session``)."""

    async def add(self, session: Session) -> None:
        """Store a new session. Raises ``Conflict`` (id exists) or ``NotFound`` (no such user)."""
        for at in (session.created_at, session.last_used_at, session.expires_at):
            require_aware(at)
        try:
            n = await self._run_guarded(
                sessions.INSERT + SKIP_CONFLICT,
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
        row = await self._one(sessions.BY_ID, session_id)
        return None if row is None else session_row(row)

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first."""
        rows = await self._all(sessions.LIVE, user_id, require_aware(now))
        return [session_row(r) for r in rows]

    async def count_live(self, org_id: str | None, now: datetime) -> int:
        """How many sessions of ``org_id``'s users (None: every org) are live at ``now``."""
        row = await self._one(sessions.COUNT_LIVE, org_id, require_aware(now))
        return 0 if row is None else int(row[0])

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        revoked = await self._run(tokens.END_FAMILY, session_id)
        await self._run(sessions.DELETE, session_id)
        return revoked

    async def end_all(self, user_id: str) -> list[str]:
        """End every session of the user; returns their ids, sorted."""
        await self._run(tokens.END_USER, user_id)
        rows = await self._s.run(
            lambda c: c.fetch(sessions.DELETE_OF_USER, user_id),
            write=True,
        )
        return sorted(r[0] for r in rows)

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id`` (their hosted sessions go by
        cascade); returns their ids, sorted."""
        await self._run(sessions.TOKENS_OF_CLIENT, user_id, client_id)
        rows = await self._s.run(
            lambda c: c.fetch(sessions.DELETE_OF_CLIENT, user_id, client_id), write=True
        )
        return sorted(r[0] for r in rows)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) sessions past ``expires_at`` or without a live token or
        hosted session."""
        return await self._purge_where("sessions", sessions.DEAD, limit, require_aware(now))
