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
from application.ports import GroupRepo, LoginAttempts, Storage, TokenStore, UnitOfWork, UserRepo
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, RefreshToken, Role, User

__all__ = [
    "MemoryGroupRepo",
    "MemoryLoginAttempts",
    "MemoryStorage",
    "MemoryTokenStore",
    "MemoryUnitOfWork",
    "MemoryUserRepo",
]


class _Tables:
    """The committed state: plain dicts of frozen domain objects.

    ``members`` maps group id to ``{user id: membership created_at}``.
    """

    def __init__(self) -> None:
        self.users: dict[str, User] = {}
        self.tokens: dict[str, RefreshToken] = {}
        self.rotated: dict[str, RefreshToken] = {}
        self.groups: dict[str, Group] = {}
        self.members: dict[str, dict[str, datetime]] = {}


class _Stage:
    """The working copy of one unit of work: reads see the committed tables until a table is
    first written, which copies it (copy-on-write). ``publish()`` hands the result back."""

    _TABLES = ("users", "tokens", "rotated", "groups", "members")

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
        """How many users hold ``role``."""
        return sum(1 for u in self._s.view.users.values() if u.role == role)


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

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash, or None."""
        if token_hash not in self._s.view.tokens:
            return None
        token: RefreshToken = self._s.write("tokens").pop(token_hash)
        return token

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        return self._s.view.tokens.get(token_hash)

    async def remember_rotated(self, token: RefreshToken) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        if token.user_id not in self._s.view.users:
            raise NotFound(f"user {token.user_id} not found")
        self._s.write("rotated")[token.token_hash] = token

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        return self._s.view.rotated.get(token_hash)

    async def revoke_family(self, family_id: str) -> int:
        """Delete the family's live tokens; returns how many."""
        gone = [h for h, t in self._s.view.tokens.items() if t.family_id == family_id]
        return self._delete(gone)

    async def revoke_user(self, user_id: str) -> int:
        """Delete the user's live tokens; returns how many."""
        gone = [h for h, t in self._s.view.tokens.items() if t.user_id == user_id]
        return self._delete(gone)

    def _delete(self, hashes: list[str]) -> int:
        if hashes:
            table = self._s.write("tokens")
            for h in hashes:
                del table[h]
        return len(hashes)

    async def purge_expired(self, now: datetime) -> int:
        """Delete live and rotated records with ``expires_at <= now``; returns how many."""
        count = 0
        for name in ("tokens", "rotated"):
            table: dict[str, RefreshToken] = getattr(self._s.view, name)
            gone = [h for h, t in table.items() if t.expires_at <= now]
            if gone:
                writable = self._s.write(name)
                for h in gone:
                    del writable[h]
            count += len(gone)
        return count


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
