"""The in-memory refresh tokens (live and rotated, with the reuse interval's count) and sessions
over a unit's working copy (docs/reference/tokens-and-sessions.md)."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit, RotatedToken
from adapters.persistence.times import require_aware
from application.ports import SessionStore, TokenStore
from domain.errors import Conflict, NotFound
from domain.model import RefreshToken, Session


class MemoryTokenStore(TokenStore):
    """``TokenStore`` over the working copy (live tokens and rotated hashes, keyed by hash)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        for at in (token.expires_at, token.session_expires_at, token.created_at):
            require_aware(at)
        if token.user_id not in self._s.view.users:
            raise NotFound(f"user {token.user_id} not found")
        if token.token_hash in self._s.view.tokens:
            raise Conflict("refresh token hash exists")
        self._s.write("tokens")[token.token_hash] = token
        session = self._s.view.sessions.get(token.family_id)
        if session is not None:  # last_used_at follows the family's newest token
            self._s.write("sessions")[session.id] = attrs.evolve(
                session, last_used_at=token.created_at
            )

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash, or None."""
        if token_hash not in self._s.view.tokens:
            return None
        token: RefreshToken = self._s.write("tokens").pop(token_hash)
        return token

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        return self._s.view.tokens.get(token_hash)

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        require_aware(rotated_at)
        if token.user_id not in self._s.view.users:
            raise NotFound(f"user {token.user_id} not found")
        self._s.write("rotated")[token.token_hash] = RotatedToken(token, rotated_at)

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        found = self._s.view.rotated.get(token_hash)
        return None if found is None else found.token

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """Count one more reuse if rotated at or after ``rotated_since`` and reused fewer than
        ``max_reuses`` times (units run one at a time: the check and the count are atomic)."""
        require_aware(rotated_since)
        found = self._s.view.rotated.get(token_hash)
        if found is None or found.rotated_at < rotated_since or found.reuse_count >= max_reuses:
            return None
        self._s.write("rotated")[token_hash] = attrs.evolve(
            found, reuse_count=found.reuse_count + 1
        )
        return found.token

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records with ``expires_at <= now`` (up to ``limit`` of
        each); returns how many."""
        live = self._s.purge("tokens", lambda t: t.expires_at <= now, limit)
        return live + self._s.purge("rotated", lambda r: r.token.expires_at <= now, limit)


class MemorySessionStore(SessionStore):
    """``SessionStore`` over the working copy (sessions keyed by id = family id)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, session: Session) -> None:
        """Store a new session. Raises ``Conflict`` (id exists) or ``NotFound`` (no such user)."""
        for at in (session.created_at, session.last_used_at, session.expires_at):
            require_aware(at)
        if session.user_id not in self._s.view.users:
            raise NotFound(f"user {session.user_id} not found")
        if session.id in self._s.view.sessions:
            raise Conflict(f"session {session.id} exists")
        self._s.write("sessions")[session.id] = session

    async def get(self, session_id: str) -> Session | None:
        """The session with this id, or None."""
        return self._s.view.sessions.get(session_id)

    async def touch(self, session_id: str, at: datetime) -> None:
        """``last_used_at`` moves on to ``at`` (never back)."""
        require_aware(at)
        session = self._s.view.sessions.get(session_id)
        if session is not None and session.last_used_at < at:
            self._s.write("sessions")[session_id] = attrs.evolve(session, last_used_at=at)

    def _live(self, session: Session, now: datetime) -> bool:
        view = self._s.view
        return session.expires_at > now and (
            any(t.family_id == session.id and t.expires_at > now for t in view.tokens.values())
            or any(
                h.session_id == session.id and not h.is_expired(now) for h in view.hosted.values()
            )
        )

    async def of_user(self, user_id: str) -> list[Session]:
        """Every record of the user, live or not, oldest first."""
        found = [s for s in self._s.view.sessions.values() if s.user_id == user_id]
        return sorted(found, key=lambda s: (s.created_at, s.id))

    async def count_live(self, org_id: str | None, now: datetime) -> int:
        """How many sessions of ``org_id``'s users (None: every org) are live at ``now``."""
        require_aware(now)
        users = self._s.view.users
        return sum(
            1
            for s in self._s.view.sessions.values()
            if self._live(s, now)
            and (org_id is None or (s.user_id in users and users[s.user_id].org_id == org_id))
        )

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first."""
        require_aware(now)
        found = [
            s for s in self._s.view.sessions.values() if s.user_id == user_id and self._live(s, now)
        ]
        found.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return found

    def _end(self, session_ids: set[str]) -> int:
        if not session_ids:
            return 0
        if any(sid in self._s.view.sessions for sid in session_ids):
            sessions = self._s.write("sessions")
            for sid in session_ids:
                sessions.pop(sid, None)
        hosted = [h for h, row in self._s.view.hosted.items() if row.session_id in session_ids]
        if hosted:  # a hosted session ends with its sessions row (the SQL's ON DELETE CASCADE)
            table = self._s.write("hosted")
            for h in hosted:
                del table[h]
        gone = [h for h, t in self._s.view.tokens.items() if t.family_id in session_ids]
        if gone:
            tokens = self._s.write("tokens")
            for h in gone:
                del tokens[h]
        return len(gone)

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        return self._end({session_id})

    async def end_all(self, user_id: str, keep: str | None = None) -> list[str]:
        """End every session of the user but ``keep``; returns their ids, sorted."""
        ids = {s.id for s in self._s.view.sessions.values() if s.user_id == user_id} - {keep}
        orphans = {t.family_id for t in self._s.view.tokens.values() if t.user_id == user_id}
        self._end((ids | orphans) - {keep})
        return sorted(ids)

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id``; returns their ids, sorted."""
        ids = {
            s.id
            for s in self._s.view.sessions.values()
            if s.user_id == user_id and s.client_id == client_id
        }
        self._end(ids)
        return sorted(ids)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) sessions past ``expires_at`` or without a live token or
        hosted session."""
        gone = self._s.purge("sessions", lambda s: not self._live(s, now), limit)
        ended = [h for h, row in self._s.view.hosted.items()
                 if row.session_id not in self._s.view.sessions]  # fmt: skip
        if ended:  # the SQL's ON DELETE CASCADE
            table = self._s.write("hosted")
            for h in ended:
                del table[h]
        return gone
