"""The SQL refresh tokens (live and rotated, with the reuse interval's count) and
sessions (docs/reference/tokens-and-sessions.md)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.rows.tokens import session_row, token_params, token_row
from adapters.persistence.sql import sessions, tokens, users
from adapters.persistence.sql.purge import EXPIRED
from adapters.persistence.sql.queries import SKIP_CONFLICT, SqlStore
from application.ports import SessionStore, TokenStore
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken, Session


class SqlTokenStore(SqlStore, TokenStore):
    """``TokenStore`` in the current transaction (tables ``refresh_tokens`` and
    ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            n = await self._q.execute(tokens.INSERT_IF_USER, token_params(token, self._d.to_db))
        except Exception as exc:  # the user went meanwhile
            if not self._d.is_foreign_key_violation(exc):
                raise
            raise NotFound(f"user {token.user_id} not found") from None
        if n == 0:
            if await self._q.one(users.EXISTS, (token.user_id,)) is None:
                raise NotFound(f"user {token.user_id} not found")
            raise Conflict("refresh token hash exists")

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash (``DELETE ... RETURNING``), or None."""
        row = await self._q.one(tokens.TAKE, (token_hash,), write=True)
        return None if row is None else token_row(row, self._d.from_db)

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._q.one(tokens.FIND, (token_hash,))
        return None if row is None else token_row(row, self._d.from_db)

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        try:
            await self._q.execute(
                tokens.REMEMBER_ROTATED,
                (*token_params(token, self._d.to_db), self._d.to_db(rotated_at)),
                guarded=True,
            )
        except Exception as exc:
            if not self._d.is_foreign_key_violation(exc):
                raise
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._q.one(tokens.FIND_ROTATED, (token_hash,))
        return None if row is None else token_row(row, self._d.from_db)

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """Count one more reuse if rotated at or after ``rotated_since`` and reused fewer than
        ``max_reuses`` times, else None. One ``UPDATE ... RETURNING``: under SQLite's write
        lock, or PostgreSQL's row lock (a concurrent claim waits and re-checks the count), so the
        cap holds across processes."""
        row = await self._q.one(
            tokens.CLAIM_REUSE, (token_hash, self._d.to_db(rotated_since), max_reuses), write=True
        )
        return None if row is None else token_row(row, self._d.from_db)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records with ``expires_at <= now`` (up to ``limit`` of
        each); returns how many."""
        cutoff = (self._d.to_db(now),)
        live = await self._q.purge("refresh_tokens", EXPIRED, cutoff, limit)
        return live + await self._q.purge("rotated_refresh_tokens", EXPIRED, cutoff, limit)


class SqlSessionStore(SqlStore, SessionStore):
    """``SessionStore`` in the current transaction (table ``sessions``; ``last_used_at`` is
    kept by the trigger ``refresh_tokens_touch_session``)."""

    async def add(self, session: Session) -> None:
        """Store a new session. Raises ``Conflict`` (id exists) or ``NotFound`` (no such user)."""
        try:
            n = await self._q.execute(
                sessions.INSERT + SKIP_CONFLICT,
                (
                    session.id,
                    session.user_id,
                    self._d.to_db(session.created_at),
                    self._d.to_db(session.last_used_at),
                    self._d.to_db(session.expires_at),
                    session.user_agent,
                    session.client_address,
                    session.client_id,
                    session.sid,
                ),
                guarded=True,
            )
        except Exception as exc:
            if not self._d.is_foreign_key_violation(exc):
                raise
            raise NotFound(f"user {session.user_id} not found") from None
        if n == 0:
            raise Conflict(f"session {session.id} exists")

    async def get(self, session_id: str) -> Session | None:
        """The session with this id, or None."""
        row = await self._q.one(sessions.BY_ID, (session_id,))
        return None if row is None else session_row(row, self._d.from_db)

    async def touch(self, session_id: str, at: datetime) -> None:
        """``last_used_at`` moves on to ``at`` (never back)."""
        await self._q.execute(sessions.TOUCH, (session_id, self._d.to_db(at)))

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first."""
        rows = await self._q.all(sessions.LIVE, (user_id, self._d.to_db(now)))
        return [session_row(r, self._d.from_db) for r in rows]

    async def of_user(self, user_id: str) -> list[Session]:
        """Every record of the user, live or not, oldest first."""
        rows = await self._q.all(sessions.OF_USER, (user_id,))
        return [session_row(r, self._d.from_db) for r in rows]

    async def count_live(self, org_id: str | None, now: datetime) -> int:
        """How many sessions of ``org_id``'s users (None: every org) are live at ``now``."""
        row = await self._q.one(sessions.COUNT_LIVE, (org_id, self._d.to_db(now)))
        return 0 if row is None else int(row[0])

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        revoked = await self._q.execute(tokens.END_FAMILY, (session_id,))
        await self._q.execute(sessions.DELETE, (session_id,))
        return revoked

    async def end_all(self, user_id: str, keep: str | None = None) -> list[str]:
        """End every session of the user but ``keep``; returns their ids, sorted."""
        if keep is None:
            await self._q.execute(tokens.END_USER, (user_id,))
            rows = await self._q.all(sessions.DELETE_OF_USER, (user_id,), write=True)
        else:
            await self._q.execute(tokens.END_USER_OTHERS, (user_id, keep))
            rows = await self._q.all(sessions.DELETE_OTHERS_OF_USER, (user_id, keep), write=True)
        return sorted(r[0] for r in rows)

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id`` (their hosted sessions go by
        cascade); returns their ids, sorted."""
        await self._q.execute(sessions.TOKENS_OF_CLIENT, (user_id, client_id))
        rows = await self._q.all(sessions.DELETE_OF_CLIENT, (user_id, client_id), write=True)
        return sorted(r[0] for r in rows)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) sessions past ``expires_at`` or without a live token or
        hosted session."""
        return await self._q.purge("sessions", sessions.DEAD, (self._d.to_db(now),), limit)
