"""SQLite storage over aiosqlite (``storage.backend = "sqlite"``, file ``storage.sqlite_path``).

One connection per ``SqliteUnitOfWork``, guarded by an ``asyncio.Lock``: units of work of one
process run one at a time. Each unit is a ``BEGIN IMMEDIATE`` transaction, so it holds SQLite's
write lock from its start and several processes sharing the file stay atomic (a waiting process
retries for ``busy_timeout`` ms). The file is in WAL mode. Times are stored as integer
microseconds since the Unix epoch and read back as timezone-aware UTC datetimes.
"""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import aiosqlite

from adapters.persistence._rows import from_micros, require_aware, to_micros
from adapters.persistence.errors import StorageUnavailable
from adapters.persistence.migrate import apply_sqlite_migrations, prepare_sqlite_path
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, RefreshToken, Role, User

__all__ = [
    "SqliteGroupRepo",
    "SqliteLoginAttempts",
    "SqliteTokenStore",
    "SqliteTransaction",
    "SqliteUnitOfWork",
    "SqliteUserRepo",
]

_USER_COLS = "id, email, password_hash, role, org_id, created_at"
_TOKEN_COLS = "token_hash, user_id, family_id, expires_at, session_expires_at, created_at"  # noqa: S105
_GROUP_SUMMARY = (
    "SELECT g.id, g.name, g.org_id, g.created_at,"
    " (SELECT count(*) FROM group_members m WHERE m.group_id = g.id) FROM groups g"
)


def _user(row: Iterable[Any]) -> User:
    id_, email, password_hash, role, org_id, created_at = row
    return User(id_, email, password_hash, Role(role), org_id, from_micros(created_at))


def _token(row: Iterable[Any]) -> RefreshToken:
    token_hash, user_id, family_id, expires_at, session_expires_at, created_at = row
    return RefreshToken(
        token_hash,
        user_id,
        family_id,
        from_micros(expires_at),
        from_micros(session_expires_at),
        from_micros(created_at),
    )


def _token_params(t: RefreshToken) -> tuple[Any, ...]:
    return (
        t.token_hash,
        t.user_id,
        t.family_id,
        to_micros(t.expires_at),
        to_micros(t.session_expires_at),
        to_micros(t.created_at),
    )


def _summary(row: Iterable[Any]) -> GroupSummary:
    id_, name, org_id, created_at, count = row
    return GroupSummary(Group(id_, name, org_id, from_micros(created_at)), int(count))


def _is_fk(exc: sqlite3.IntegrityError) -> bool:
    return "FOREIGN KEY" in str(exc)


class _Base:
    """Query helpers. Every aiosqlite call is a hop to its thread (~0.1 ms): ``execute_fetchall``
    runs a statement and fetches its rows in one hop (cursor + fetch + close would be three)."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._c = conn

    async def _all(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        return list(await self._c.execute_fetchall(sql, tuple(params)))

    async def _one(self, sql: str, params: Iterable[Any] = ()) -> Any:
        rows = list(await self._c.execute_fetchall(sql, tuple(params)))
        return rows[0] if rows else None

    async def _count(self, sql: str, params: Iterable[Any] = ()) -> int:
        async with self._c.execute(sql, tuple(params)) as cur:
            return max(0, cur.rowcount)


class SqliteUserRepo(_Base):
    """``UserRepo`` in the current transaction. Emails are stored lower-case (unique index)."""

    async def add(self, user: User) -> None:
        """Insert. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        try:
            await self._count(
                f"INSERT INTO users ({_USER_COLS}) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    user.id,
                    user.email.lower(),
                    user.password_hash,
                    user.role.value,
                    user.org_id,
                    to_micros(user.created_at),
                ),
            )
        except sqlite3.IntegrityError as exc:
            if "users.email" in str(exc):
                raise EmailTaken() from None
            raise Conflict(f"user id {user.id} exists") from None

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        row = await self._one(f"SELECT {_USER_COLS} FROM users WHERE id = ?", (user_id,))
        return None if row is None else _user(row)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        row = await self._one(f"SELECT {_USER_COLS} FROM users WHERE email = ?", (email.lower(),))
        return None if row is None else _user(row)

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound`` or ``EmailTaken``."""
        try:
            n = await self._count(
                "UPDATE users SET email = ?, password_hash = ?, role = ?, org_id = ? WHERE id = ?",
                (user.email.lower(), user.password_hash, user.role.value, user.org_id, user.id),
            )
        except sqlite3.IntegrityError:
            raise EmailTaken() from None
        if n == 0:
            raise NotFound(f"user {user.id} not found")

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"SELECT {_USER_COLS} FROM users WHERE (?1 IS NULL OR org_id = ?1)"
            " AND (?2 IS NULL OR id > ?2) ORDER BY id LIMIT ?3",
            (org_id, after, max(0, limit)),
        )
        return [_user(r) for r in rows]

    async def count_by_role(self, role: Role) -> int:
        """How many users hold ``role``."""
        row = await self._one("SELECT count(*) FROM users WHERE role = ?", (role.value,))
        return int(row[0])


class SqliteTokenStore(_Base):
    """``TokenStore`` in the current transaction (tables ``refresh_tokens`` and
    ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        try:
            await self._count(
                f"INSERT INTO refresh_tokens ({_TOKEN_COLS}) VALUES (?, ?, ?, ?, ?, ?)",
                _token_params(token),
            )
        except sqlite3.IntegrityError as exc:
            if _is_fk(exc):
                raise NotFound(f"user {token.user_id} not found") from None
            raise Conflict("refresh token hash exists") from None

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Delete and return the live token with this hash (``DELETE ... RETURNING``), or None."""
        rows = await self._all(
            f"DELETE FROM refresh_tokens WHERE token_hash = ? RETURNING {_TOKEN_COLS}",
            (token_hash,),
        )
        return _token(rows[0]) if rows else None

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._one(
            f"SELECT {_TOKEN_COLS} FROM refresh_tokens WHERE token_hash = ?", (token_hash,)
        )
        return None if row is None else _token(row)

    async def remember_rotated(self, token: RefreshToken) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        try:
            await self._count(
                f"INSERT INTO rotated_refresh_tokens ({_TOKEN_COLS}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (token_hash) DO UPDATE SET user_id = excluded.user_id,"
                " family_id = excluded.family_id, expires_at = excluded.expires_at,"
                " session_expires_at = excluded.session_expires_at,"
                " created_at = excluded.created_at",
                _token_params(token),
            )
        except sqlite3.IntegrityError:
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._one(
            f"SELECT {_TOKEN_COLS} FROM rotated_refresh_tokens WHERE token_hash = ?",
            (token_hash,),
        )
        return None if row is None else _token(row)

    async def revoke_family(self, family_id: str) -> int:
        """Delete the family's live tokens; returns how many."""
        return await self._count("DELETE FROM refresh_tokens WHERE family_id = ?", (family_id,))

    async def revoke_user(self, user_id: str) -> int:
        """Delete the user's live tokens; returns how many."""
        return await self._count("DELETE FROM refresh_tokens WHERE user_id = ?", (user_id,))

    async def purge_expired(self, now: datetime) -> int:
        """Delete live and rotated records with ``expires_at <= now``; returns how many."""
        cutoff = to_micros(now)
        live = await self._count("DELETE FROM refresh_tokens WHERE expires_at <= ?", (cutoff,))
        rotated = await self._count(
            "DELETE FROM rotated_refresh_tokens WHERE expires_at <= ?", (cutoff,)
        )
        return live + rotated


class SqliteGroupRepo(_Base):
    """``GroupRepo`` in the current transaction. Names are unique per organization (exact)."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        try:
            await self._count(
                "INSERT INTO groups (id, name, org_id, created_at) VALUES (?, ?, ?, ?)",
                (group.id, group.name, group.org_id, to_micros(group.created_at)),
            )
        except sqlite3.IntegrityError as exc:
            if "groups.id" in str(exc):
                raise Conflict(f"group id {group.id} exists") from None
            raise Conflict(
                f"group {group.name!r} exists in organization {group.org_id!r}"
            ) from None

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        row = await self._one(f"{_GROUP_SUMMARY} WHERE g.id = ?", (group_id,))
        return None if row is None else _summary(row)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        try:
            n = await self._count("UPDATE groups SET name = ? WHERE id = ?", (name, group_id))
        except sqlite3.IntegrityError:
            raise Conflict(f"group {name!r} exists in this organization") from None
        if n == 0:
            raise NotFound(f"group {group_id} not found")

    async def delete(self, group_id: str) -> bool:
        """Delete the group and (by cascade) its memberships; False if it did not exist."""
        return await self._count("DELETE FROM groups WHERE id = ?", (group_id,)) > 0

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"{_GROUP_SUMMARY} WHERE (?1 IS NULL OR g.org_id = ?1)"
            " AND (?2 IS NULL OR g.id > ?2) ORDER BY g.id LIMIT ?3",
            (org_id, after, max(0, limit)),
        )
        return [_summary(r) for r in rows]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        try:
            n = await self._count(
                "INSERT INTO group_members (group_id, user_id, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT (group_id, user_id) DO NOTHING",
                (group_id, user_id, to_micros(now)),
            )
        except sqlite3.IntegrityError:
            raise NotFound(f"group {group_id} or user {user_id} not found") from None
        return n > 0

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        n = await self._count(
            "DELETE FROM group_members WHERE group_id = ? AND user_id = ?", (group_id, user_id)
        )
        return n > 0

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        cols = ", ".join(f"u.{c.strip()}" for c in _USER_COLS.split(","))
        rows = await self._all(
            f"SELECT {cols} FROM group_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.group_id = ? ORDER BY u.id",
            (group_id,),
        )
        return [_user(r) for r in rows]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        rows = await self._all(
            "SELECT group_id FROM group_members WHERE user_id = ? ORDER BY group_id", (user_id,)
        )
        return [r[0] for r in rows]

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        return await self._count(
            "DELETE FROM group_members WHERE user_id = ?"
            " AND group_id IN (SELECT id FROM groups WHERE org_id = ?)",
            (user_id, org_id),
        )


class SqliteTransaction:
    """One ``BEGIN IMMEDIATE`` transaction on the unit of work's connection.

    ``commit()`` commits the changes so far and starts the next transaction at once: the unit
    goes on, and later changes need another ``commit()``.
    """

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        self.users = SqliteUserRepo(conn)
        self.tokens = SqliteTokenStore(conn)
        self.groups = SqliteGroupRepo(conn)

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        await self._conn.execute("COMMIT")
        await self._conn.execute("BEGIN IMMEDIATE")


class SqliteUnitOfWork:
    """``UnitOfWork`` over one SQLite file (``path``; ``~`` expanded, parent made mode 0700).

    ``busy_timeout_ms``: how long a unit waits for another process's write lock before failing
    with ``sqlite3.OperationalError`` ("database is locked"). ``open()`` applies migrations, then
    connects; ``begin()`` before ``open()`` raises ``RuntimeError``. Do not nest ``begin()`` in
    one task (it would wait for itself).
    """

    def __init__(self, path: str, busy_timeout_ms: int = 5000) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    @property
    def path(self) -> str:
        """The database file (``~`` expanded)."""
        return str(Path(self._path).expanduser())

    async def open(self) -> None:
        """Apply pending migrations (in a thread), then connect and set the pragmas.

        Raises ``StorageUnavailable`` naming ``storage.sqlite_path`` if the file is unusable.
        """
        if self._conn is not None:
            return
        await asyncio.to_thread(apply_sqlite_migrations, self._path)
        db = prepare_sqlite_path(self._path)
        try:
            conn = await aiosqlite.connect(
                db, timeout=self._busy_timeout_ms / 1000, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise StorageUnavailable("storage.sqlite_path", str(exc), str(db)) from None
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            await conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            await conn.execute("PRAGMA foreign_keys = ON")
            await conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            await conn.close()
            raise StorageUnavailable("storage.sqlite_path", str(exc), str(db)) from None
        self._conn = conn

    async def close(self) -> None:
        """Close the connection (waits for a running unit of work to finish)."""
        async with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                await conn.close()

    async def ping(self) -> None:
        """``SELECT 1``; raises ``RuntimeError`` when not open, ``sqlite3.Error`` on failure."""
        async with self._locked() as conn, conn.execute("SELECT 1") as cur:
            await cur.fetchone()

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            if self._conn is None:
                raise RuntimeError("SqliteUnitOfWork is not open; call open() first")
            yield self._conn

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[SqliteTransaction]:
        async with self._locked() as conn:
            if conn.in_transaction:  # left over by a cancelled unit
                await conn.execute("ROLLBACK")
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield SqliteTransaction(conn)
            finally:
                if conn.in_transaction:
                    await asyncio.shield(conn.execute("ROLLBACK"))

    def begin(self) -> AbstractAsyncContextManager[SqliteTransaction]:
        """Start a unit of work: ``async with uow.begin() as tx: ...; await tx.commit()``.

        Leaving without ``commit()`` rolls back. Waits for this process's other units, then for
        other processes' write locks (up to ``busy_timeout_ms``).
        """
        return self._begin()

    def login_attempts(self, max_age: float = 86_400.0) -> SqliteLoginAttempts:
        """A ``LoginAttempts`` sharing this file (so every worker process sees the same counts)."""
        return SqliteLoginAttempts(self, max_age)


class SqliteLoginAttempts:
    """``LoginAttempts`` in the ``login_failures`` table of a ``SqliteUnitOfWork``.

    ``max_age`` (s) bounds how long a failure is kept; it must exceed
    ``auth.login_failure_window``. Each call is its own short transaction.
    """

    def __init__(self, uow: SqliteUnitOfWork, max_age: float = 86_400.0) -> None:
        self._uow = uow
        self._max_age = timedelta(seconds=max_age)

    async def failures_since(self, key: str, since: datetime) -> list[datetime]:
        """Failures of ``key`` at or after ``since``, oldest first."""
        async with self._uow.begin() as tx:
            rows = await _Base(tx._conn)._all(
                "SELECT at FROM login_failures WHERE key = ? AND at >= ? ORDER BY at, id",
                (key, to_micros(since)),
            )
        return [from_micros(r[0]) for r in rows]

    async def record_failure(self, key: str, at: datetime) -> None:
        """Record one failure of ``key`` at ``at``; forget failures older than ``max_age``."""
        require_aware(at)
        async with self._uow.begin() as tx:
            await _Base(tx._conn)._count(
                "INSERT INTO login_failures (key, at) VALUES (?, ?)", (key, to_micros(at))
            )
            await _Base(tx._conn)._count(
                "DELETE FROM login_failures WHERE at < ?", (to_micros(at - self._max_age),)
            )
            await tx.commit()

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key``."""
        async with self._uow.begin() as tx:
            await _Base(tx._conn)._count("DELETE FROM login_failures WHERE key = ?", (key,))
            await tx.commit()
