"""In-memory storage: a real adapter (``storage.backend = "memory"``) and the tests' fake.

One ``asyncio.Lock`` serializes units of work, so a unit sees no other unit's changes while it
runs. Changes are staged on copy-on-write copies of the tables and published on ``commit()``
only; leaving ``begin()`` without committing (or by an exception) discards them (rollback).

Nothing here survives the process, and nothing is shared between processes: with several worker
processes use SQLite or PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import attrs

from adapters.persistence._rows import require_aware
from application.ports import (
    GroupRepo,
    LoginAttempts,
    SessionStore,
    Storage,
    TokenStore,
    UnitOfWork,
    UserRepo,
)
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, RefreshToken, Role, Session, User

__all__ = [
    "MemoryGroupRepo",
    "MemoryLoginAttempts",
    "MemorySessionStore",
    "MemoryStorage",
    "MemoryTokenStore",
    "MemoryUnitOfWork",
    "MemoryUserRepo",
]


class _Tables:
    """The committed state: plain dicts of frozen domain objects.

    ``members`` maps group id to ``{user id: membership created_at}``; ``rotated`` maps a
    rotated token's hash to ``_Rotated`` (the token, when it was rotated, how often reused).
    """

    def __init__(self) -> None:
        self.users: dict[str, User] = {}
        self.tokens: dict[str, RefreshToken] = {}
        self.rotated: dict[str, _Rotated] = {}
        self.sessions: dict[str, Session] = {}
        self.groups: dict[str, Group] = {}
        self.members: dict[str, dict[str, datetime]] = {}


@attrs.frozen
class _Rotated:
    """A remembered rotated token: the record, when it was rotated, how often reused since."""

    token: RefreshToken
    rotated_at: datetime
    reuse_count: int = 0


class _Stage:
    """The working copy of one unit of work: reads see the committed tables until a table is
    first written, which copies it (copy-on-write). ``publish()`` hands the result back."""

    _TABLES = ("users", "tokens", "rotated", "sessions", "groups", "members")

    def __init__(self, base: _Tables) -> None:
        self._base = base
        self._copied: set[str] = set()
        self._copied_groups: set[str] = set()
        self.view = _Tables()
        self.reset()

    def reset(self) -> None:
        """Start again from the committed tables (after a commit)."""
        for name in self._TABLES:
            setattr(self.view, name, getattr(self._base, name))
        self._copied.clear()
        self._copied_groups.clear()

    def write(self, name: str) -> Any:
        """The table ``name``, copied on first write."""
        if name not in self._copied:
            setattr(self.view, name, dict(getattr(self.view, name)))
            self._copied.add(name)
        return getattr(self.view, name)

    def write_members(self, group_id: str) -> dict[str, datetime]:
        """The member dict of ``group_id`` (created if absent), copied on first write."""
        members: dict[str, dict[str, datetime]] = self.write("members")
        if group_id not in self._copied_groups:
            members[group_id] = dict(members.get(group_id, {}))
            self._copied_groups.add(group_id)
        return members[group_id]

    def publish(self) -> None:
        """Make the working copy the committed state."""
        for name in self._copied:
            setattr(self._base, name, getattr(self.view, name))
        self.reset()


class MemoryUserRepo(UserRepo):
    """``UserRepo`` over the working copy. Emails are stored lower-case; uniqueness is by email."""

    def __init__(self, stage: _Stage) -> None:
        self._s = stage

    def _email_owner(self, email: str) -> str | None:
        for user in self._s.view.users.values():
            if user.email == email:
                return user.id
        return None

    async def add(self, user: User) -> None:
        """Insert ``user``. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        user = attrs.evolve(user, email=user.email.lower())
        require_aware(user.created_at)
        if self._email_owner(user.email) is not None:
            raise EmailTaken()
        if user.id in self._s.view.users:
            raise Conflict(f"user id {user.id} exists")
        self._s.write("users")[user.id] = user

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        return self._s.view.users.get(user_id)

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user and the sorted ids of its groups, or None."""
        user = self._s.view.users.get(user_id)
        if user is None:
            return None
        return user, sorted(g for g, m in self._s.view.members.items() if user_id in m)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        owner = self._email_owner(email.lower())
        return None if owner is None else self._s.view.users[owner]

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound``, or ``EmailTaken``."""
        user = attrs.evolve(user, email=user.email.lower())
        if user.id not in self._s.view.users:
            raise NotFound(f"user {user.id} not found")
        owner = self._email_owner(user.email)
        if owner is not None and owner != user.id:
            raise EmailTaken()
        self._s.write("users")[user.id] = user

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = [
            u
            for u in self._s.view.users.values()
            if (org_id is None or u.org_id == org_id) and (after is None or u.id > after)
        ]
        rows.sort(key=lambda u: u.id)
        return rows[: max(0, limit)]

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role``."""
        return sum(1 for u in self._s.view.users.values() if u.role == role and not u.disabled)

    async def delete(self, user_id: str) -> bool:
        """Delete the user with its sessions, tokens, rotated records and memberships."""
        view = self._s.view
        if user_id not in view.users:
            return False
        del self._s.write("users")[user_id]
        for name in ("tokens", "rotated", "sessions"):
            table = getattr(view, name)
            gone = [k for k, row in table.items() if _user_of(row) == user_id]
            if gone:
                writable = self._s.write(name)
                for k in gone:
                    del writable[k]
        for group_id, members in list(view.members.items()):
            if user_id in members:
                del self._s.write_members(group_id)[user_id]
        return True


def _user_of(row: RefreshToken | _Rotated | Session) -> str:
    return row.token.user_id if isinstance(row, _Rotated) else row.user_id


class MemoryTokenStore(TokenStore):
    """``TokenStore`` over the working copy (live tokens and rotated hashes, keyed by hash)."""

    def __init__(self, stage: _Stage) -> None:
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
        self._s.write("rotated")[token.token_hash] = _Rotated(token, rotated_at)

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

    async def purge_expired(self, now: datetime) -> int:
        """Delete live and rotated records with ``expires_at <= now``; returns how many."""
        live = [h for h, t in self._s.view.tokens.items() if t.expires_at <= now]
        rotated = [h for h, r in self._s.view.rotated.items() if r.token.expires_at <= now]
        for name, gone in (("tokens", live), ("rotated", rotated)):
            if gone:
                writable = self._s.write(name)
                for h in gone:
                    del writable[h]
        return len(live) + len(rotated)


class MemorySessionStore(SessionStore):
    """``SessionStore`` over the working copy (sessions keyed by id = family id)."""

    def __init__(self, stage: _Stage) -> None:
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

    def _live(self, session: Session, now: datetime) -> bool:
        return session.expires_at > now and any(
            t.family_id == session.id and t.expires_at > now for t in self._s.view.tokens.values()
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
        gone = [h for h, t in self._s.view.tokens.items() if t.family_id in session_ids]
        if gone:
            tokens = self._s.write("tokens")
            for h in gone:
                del tokens[h]
        return len(gone)

    async def end(self, session_id: str) -> int:
        """Delete the session and its live tokens; returns how many tokens went."""
        return self._end({session_id})

    async def end_all(self, user_id: str) -> list[str]:
        """End every session of the user; returns their ids, sorted."""
        ids = {s.id for s in self._s.view.sessions.values() if s.user_id == user_id}
        orphans = {t.family_id for t in self._s.view.tokens.values() if t.user_id == user_id}
        self._end(ids | orphans)
        return sorted(ids)

    async def purge_expired(self, now: datetime) -> int:
        """Delete sessions past ``expires_at`` or without a live token."""
        gone = [sid for sid, s in self._s.view.sessions.items() if not self._live(s, now)]
        if gone:
            sessions = self._s.write("sessions")
            for sid in gone:
                del sessions[sid]
        return len(gone)


class MemoryGroupRepo(GroupRepo):
    """``GroupRepo`` over the working copy. Group names are unique per organization (exact)."""

    def __init__(self, stage: _Stage) -> None:
        self._s = stage

    def _name_owner(self, org_id: str, name: str) -> str | None:
        for g in self._s.view.groups.values():
            if g.org_id == org_id and g.name == name:
                return g.id
        return None

    def _summary(self, group: Group) -> GroupSummary:
        return GroupSummary(group, len(self._s.view.members.get(group.id, {})))

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        require_aware(group.created_at)
        if self._name_owner(group.org_id, group.name) is not None:
            raise Conflict(f"group {group.name!r} exists in organization {group.org_id!r}")
        if group.id in self._s.view.groups:
            raise Conflict(f"group id {group.id} exists")
        self._s.write("groups")[group.id] = group

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        group = self._s.view.groups.get(group_id)
        return None if group is None else self._summary(group)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        group = self._s.view.groups.get(group_id)
        if group is None:
            raise NotFound(f"group {group_id} not found")
        owner = self._name_owner(group.org_id, name)
        if owner is not None and owner != group_id:
            raise Conflict(f"group {name!r} exists in organization {group.org_id!r}")
        self._s.write("groups")[group_id] = attrs.evolve(group, name=name)

    async def delete(self, group_id: str) -> bool:
        """Delete the group and its memberships; False if it did not exist."""
        if group_id not in self._s.view.groups:
            return False
        del self._s.write("groups")[group_id]
        self._s.write("members").pop(group_id, None)
        return True

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = [
            g
            for g in self._s.view.groups.values()
            if (org_id is None or g.org_id == org_id) and (after is None or g.id > after)
        ]
        rows.sort(key=lambda g: g.id)
        return [self._summary(g) for g in rows[: max(0, limit)]]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        require_aware(now)
        if group_id not in self._s.view.groups:
            raise NotFound(f"group {group_id} not found")
        if user_id not in self._s.view.users:
            raise NotFound(f"user {user_id} not found")
        if user_id in self._s.view.members.get(group_id, {}):
            return False
        self._s.write_members(group_id)[user_id] = now
        return True

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        if user_id not in self._s.view.members.get(group_id, {}):
            return False
        del self._s.write_members(group_id)[user_id]
        return True

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        ids = sorted(self._s.view.members.get(group_id, {}))
        return [self._s.view.users[i] for i in ids if i in self._s.view.users]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        return sorted(g for g, m in self._s.view.members.items() if user_id in m)

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        count = 0
        for group_id, members in list(self._s.view.members.items()):
            group = self._s.view.groups.get(group_id)
            if group is not None and group.org_id == org_id and user_id in members:
                del self._s.write_members(group_id)[user_id]
                count += 1
        return count


class MemoryUnitOfWork(UnitOfWork):
    """One unit of work over the in-memory tables (``UnitOfWork`` port).

    ``commit()`` publishes the changes made so far; the unit then goes on from the new state, and
    later changes need another ``commit()``.
    """

    def __init__(self, stage: _Stage) -> None:
        self._stage = stage
        self.users = MemoryUserRepo(stage)
        self.tokens = MemoryTokenStore(stage)
        self.sessions = MemorySessionStore(stage)
        self.groups = MemoryGroupRepo(stage)

    async def commit(self) -> None:
        """Publish every staged change at once."""
        self._stage.publish()


class MemoryStorage(Storage):
    """``Storage`` holding everything in process memory.

    ``begin()`` waits for the one lock, so units run one at a time (do not nest ``begin()`` in
    one task: it would wait for itself). ``open``/``close``/``ping`` do nothing; ``begin()`` works
    without ``open()``.
    """

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._tables = _Tables()

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[MemoryUnitOfWork]:
        async with self._lock:
            # Rollback is simply dropping the stage: nothing reached the tables.
            yield MemoryUnitOfWork(_Stage(self._tables))

    def begin(self) -> AbstractAsyncContextManager[MemoryUnitOfWork]:
        """Start a unit of work: ``async with storage.begin() as uow: ...; await uow.commit()``."""
        return self._begin()

    def read(self) -> AbstractAsyncContextManager[MemoryUnitOfWork]:
        """A read-only unit: a unit of work that is never committed."""
        return self._begin()

    async def open(self) -> None:
        """Nothing to connect."""

    async def close(self) -> None:
        """Nothing to release."""

    async def ping(self) -> None:
        """Always healthy."""


class MemoryLoginAttempts(LoginAttempts):
    """``LoginAttempts`` in process memory (per process: not shared between workers).

    ``max_age`` (s, default one day) bounds how long a failure is kept; it must exceed
    ``auth.login_failure_window``. Old failures are swept as new ones are recorded.
    """

    def __init__(self, max_age: float = 86_400.0) -> None:
        self._max_age = timedelta(seconds=max_age)
        self._failures: dict[str, list[datetime]] = {}
        self._records_since_sweep = 0

    async def failures_since(self, key: str, since: datetime) -> list[datetime]:
        """Failures of ``key`` at or after ``since``, oldest first."""
        return sorted(t for t in self._failures.get(key, ()) if t >= since)

    async def record_failure(self, key: str, at: datetime) -> None:
        """Record one failure of ``key`` at ``at`` (timezone-aware)."""
        require_aware(at)
        self._failures.setdefault(key, []).append(at)
        self._records_since_sweep += 1
        if self._records_since_sweep >= 1000:
            self._sweep(at - self._max_age)
        else:
            self._failures[key] = [t for t in self._failures[key] if t >= at - self._max_age]

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key``."""
        self._failures.pop(key, None)

    def _sweep(self, cutoff: datetime) -> None:
        self._records_since_sweep = 0
        for key in list(self._failures):
            kept = [t for t in self._failures[key] if t >= cutoff]
            if kept:
                self._failures[key] = kept
            else:
                del self._failures[key]
