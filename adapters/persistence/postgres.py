"""PostgreSQL storage over asyncpg (``storage.backend = "postgres"``, ``storage.postgres_dsn``).

A pool of ``min_size``..``max_size`` connections; each unit of work holds one connection and one
READ COMMITTED transaction. ``take()`` is ``DELETE ... RETURNING``: of concurrent takes of one
hash (any connection, any process) the row lock lets exactly one return the token. Times are
``timestamptz``. Driver errors become domain errors (``EmailTaken``, ``Conflict``, ``NotFound``)
before they leave this module; statements that may fail on purpose run under a savepoint or
``ON CONFLICT DO NOTHING`` so the transaction stays usable after such an error.
"""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from adapters.persistence._rows import require_aware
from adapters.persistence.errors import StorageUnavailable, redact_dsn, safe_reason
from adapters.persistence.migrate import apply_postgres_migrations, validate_schema_name
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, RefreshToken, Role, User

__all__ = [
    "PostgresGroupRepo",
    "PostgresLoginAttempts",
    "PostgresTokenStore",
    "PostgresTransaction",
    "PostgresUnitOfWork",
    "PostgresUserRepo",
]

_USER_COLS = "id, email, password_hash, role, org_id, created_at"
_TOKEN_COLS = "token_hash, user_id, family_id, expires_at, session_expires_at, created_at"  # noqa: S105
_GROUP_SUMMARY = (
    "SELECT g.id, g.name, g.org_id, g.created_at,"
    " (SELECT count(*) FROM group_members m WHERE m.group_id = g.id) FROM groups g"
)
_KEY = "storage.postgres_dsn"


def _user(r: asyncpg.Record) -> User:
    return User(r[0], r[1], r[2], Role(r[3]), r[4], r[5])


def _token(r: asyncpg.Record) -> RefreshToken:
    return RefreshToken(r[0], r[1], r[2], r[3], r[4], r[5])


def _token_params(t: RefreshToken) -> tuple[Any, ...]:
    for at in (t.expires_at, t.session_expires_at, t.created_at):
        require_aware(at)
    return (t.token_hash, t.user_id, t.family_id, t.expires_at, t.session_expires_at, t.created_at)


def _summary(r: asyncpg.Record) -> GroupSummary:
    return GroupSummary(Group(r[0], r[1], r[2], r[3]), int(r[4]))


def _affected(status: str) -> int:
    """Rows affected, from a command tag such as ``DELETE 3`` or ``INSERT 0 1``."""
    try:
        return int(status.rsplit(" ", 1)[-1])
    except ValueError:
        return 0


class _Base:
    def __init__(self, conn: asyncpg.Connection) -> None:
        self._c = conn

    async def _run(self, sql: str, *args: Any) -> int:
        return _affected(await self._c.execute(sql, *args))

    async def _all(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        return list(await self._c.fetch(sql, *args))

    async def _one(self, sql: str, *args: Any) -> asyncpg.Record | None:
        return await self._c.fetchrow(sql, *args)


class PostgresUserRepo(_Base):
    """``UserRepo`` in the unit's transaction. Emails are stored lower-case (unique index)."""

    async def add(self, user: User) -> None:
        """Insert. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        email = user.email.lower()
        n = await self._run(
            f"INSERT INTO users ({_USER_COLS}) VALUES ($1, $2, $3, $4, $5, $6)"
            " ON CONFLICT DO NOTHING",
            user.id,
            email,
            user.password_hash,
            user.role.value,
            user.org_id,
            require_aware(user.created_at),
        )
        if n == 0:
            if await self._one("SELECT 1 FROM users WHERE email = $1", email) is not None:
                raise EmailTaken()
            raise Conflict(f"user id {user.id} exists")

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        row = await self._one(f"SELECT {_USER_COLS} FROM users WHERE id = $1", user_id)
        return None if row is None else _user(row)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        row = await self._one(f"SELECT {_USER_COLS} FROM users WHERE email = $1", email.lower())
        return None if row is None else _user(row)

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound`` or ``EmailTaken``."""
        try:
            async with self._c.transaction():  # savepoint: a violation leaves the unit usable
                n = await self._run(
                    "UPDATE users SET email = $1, password_hash = $2, role = $3, org_id = $4"
                    " WHERE id = $5",
                    user.email.lower(),
                    user.password_hash,
                    user.role.value,
                    user.org_id,
                    user.id,
                )
        except asyncpg.UniqueViolationError:
            raise EmailTaken() from None
        if n == 0:
            raise NotFound(f"user {user.id} not found")

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"SELECT {_USER_COLS} FROM users WHERE ($1::text IS NULL OR org_id = $1)"
            " AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3",
            org_id,
            after,
            max(0, limit),
        )
        return [_user(r) for r in rows]

    async def count_by_role(self, role: Role) -> int:
        """How many users hold ``role``."""
        row = await self._one("SELECT count(*) FROM users WHERE role = $1", role.value)
        return 0 if row is None else int(row[0])


class PostgresTokenStore(_Base):
    """``TokenStore`` in the unit's transaction (``refresh_tokens``, ``rotated_refresh_tokens``)."""

    async def add(self, token: RefreshToken) -> None:
        """Store a live token. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        params = _token_params(token)
        try:
            n = await self._run(
                f"INSERT INTO refresh_tokens ({_TOKEN_COLS})"
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
            f"DELETE FROM refresh_tokens WHERE token_hash = $1 RETURNING {_TOKEN_COLS}",
            token_hash,
        )
        return None if row is None else _token(row)

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None."""
        row = await self._one(
            f"SELECT {_TOKEN_COLS} FROM refresh_tokens WHERE token_hash = $1", token_hash
        )
        return None if row is None else _token(row)

    async def remember_rotated(self, token: RefreshToken) -> None:
        """Remember a rotated token (replacing an earlier record of the same hash).

        Raises ``NotFound`` if its user does not exist.
        """
        params = _token_params(token)
        try:
            async with self._c.transaction():
                await self._run(
                    f"INSERT INTO rotated_refresh_tokens ({_TOKEN_COLS})"
                    " VALUES ($1, $2, $3, $4, $5, $6)"
                    " ON CONFLICT (token_hash) DO UPDATE SET user_id = excluded.user_id,"
                    " family_id = excluded.family_id, expires_at = excluded.expires_at,"
                    " session_expires_at = excluded.session_expires_at,"
                    " created_at = excluded.created_at",
                    *params,
                )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"user {token.user_id} not found") from None

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        row = await self._one(
            f"SELECT {_TOKEN_COLS} FROM rotated_refresh_tokens WHERE token_hash = $1", token_hash
        )
        return None if row is None else _token(row)

    async def revoke_family(self, family_id: str) -> int:
        """Delete the family's live tokens; returns how many."""
        return await self._run("DELETE FROM refresh_tokens WHERE family_id = $1", family_id)

    async def revoke_user(self, user_id: str) -> int:
        """Delete the user's live tokens; returns how many."""
        return await self._run("DELETE FROM refresh_tokens WHERE user_id = $1", user_id)

    async def purge_expired(self, now: datetime) -> int:
        """Delete live and rotated records with ``expires_at <= now``; returns how many."""
        require_aware(now)
        live = await self._run("DELETE FROM refresh_tokens WHERE expires_at <= $1", now)
        rotated = await self._run("DELETE FROM rotated_refresh_tokens WHERE expires_at <= $1", now)
        return live + rotated


class PostgresGroupRepo(_Base):
    """``GroupRepo`` in the unit's transaction. Names are unique per organization (exact)."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        n = await self._run(
            "INSERT INTO groups (id, name, org_id, created_at) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT DO NOTHING",
            group.id,
            group.name,
            group.org_id,
            require_aware(group.created_at),
        )
        if n == 0:
            raise Conflict(f"group {group.name!r} or id {group.id} exists in {group.org_id!r}")

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        row = await self._one(f"{_GROUP_SUMMARY} WHERE g.id = $1", group_id)
        return None if row is None else _summary(row)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        try:
            async with self._c.transaction():
                n = await self._run("UPDATE groups SET name = $1 WHERE id = $2", name, group_id)
        except asyncpg.UniqueViolationError:
            raise Conflict(f"group {name!r} exists in this organization") from None
        if n == 0:
            raise NotFound(f"group {group_id} not found")

    async def delete(self, group_id: str) -> bool:
        """Delete the group and (by cascade) its memberships; False if it did not exist."""
        return await self._run("DELETE FROM groups WHERE id = $1", group_id) > 0

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"{_GROUP_SUMMARY} WHERE ($1::text IS NULL OR g.org_id = $1)"
            " AND ($2::text IS NULL OR g.id > $2) ORDER BY g.id LIMIT $3",
            org_id,
            after,
            max(0, limit),
        )
        return [_summary(r) for r in rows]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        try:
            async with self._c.transaction():
                n = await self._run(
                    "INSERT INTO group_members (group_id, user_id, created_at)"
                    " VALUES ($1, $2, $3) ON CONFLICT (group_id, user_id) DO NOTHING",
                    group_id,
                    user_id,
                    require_aware(now),
                )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"group {group_id} or user {user_id} not found") from None
        return n > 0

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        n = await self._run(
            "DELETE FROM group_members WHERE group_id = $1 AND user_id = $2", group_id, user_id
        )
        return n > 0

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        cols = ", ".join(f"u.{c.strip()}" for c in _USER_COLS.split(","))
        rows = await self._all(
            f"SELECT {cols} FROM group_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.group_id = $1 ORDER BY u.id",
            group_id,
        )
        return [_user(r) for r in rows]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        rows = await self._all(
            "SELECT group_id FROM group_members WHERE user_id = $1 ORDER BY group_id", user_id
        )
        return [r[0] for r in rows]

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        return await self._run(
            "DELETE FROM group_members WHERE user_id = $1"
            " AND group_id IN (SELECT id FROM groups WHERE org_id = $2)",
            user_id,
            org_id,
        )


class PostgresTransaction:
    """One transaction on one pooled connection.

    ``commit()`` commits the changes so far and starts the next transaction: the unit goes on,
    and later changes need another ``commit()``.
    """

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._tx: Any = None
        self.users = PostgresUserRepo(conn)
        self.tokens = PostgresTokenStore(conn)
        self.groups = PostgresGroupRepo(conn)

    async def _start(self) -> None:
        self._tx = self._conn.transaction()
        await self._tx.start()

    async def _rollback(self) -> None:
        if self._tx is not None:
            tx, self._tx = self._tx, None
            await tx.rollback()

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        tx, self._tx = self._tx, None
        if tx is not None:
            await tx.commit()
        await self._start()


class PostgresUnitOfWork:
    """``UnitOfWork`` over a PostgreSQL database.

    ``dsn``: a ``postgresql://`` URI. ``min_size``/``max_size``: the asyncpg pool's bounds
    (``storage.pool_min_size``/``pool_max_size``). ``schema``: tables live in this schema
    (created by the migrations; used by tests to isolate runs), else the DSN's default
    ``search_path``. ``open()`` applies migrations then creates the pool; it raises
    ``StorageUnavailable`` (naming ``storage.postgres_dsn``, the reason and the redacted DSN) if
    the DSN is malformed or the server cannot be reached.
    """

    def __init__(self, dsn: str, min_size: int, max_size: int, schema: str | None = None) -> None:
        if schema is not None:
            validate_schema_name(schema)
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ValueError(
                f"storage.pool_min_size ({min_size}) must be between 0 and "
                f"storage.pool_max_size ({max_size}), which must be at least 1"
            )
        self._dsn = dsn
        self._min = min_size
        self._max = max_size
        self._schema = schema
        self._pool: asyncpg.Pool | None = None

    def _unavailable(self, exc: BaseException) -> StorageUnavailable:
        return StorageUnavailable(_KEY, safe_reason(exc, self._dsn), redact_dsn(self._dsn))

    async def open(self) -> None:
        """Apply pending migrations (in a thread), then create the pool."""
        if self._pool is not None:
            return
        await asyncio.to_thread(apply_postgres_migrations, self._dsn, self._schema)
        settings = {"search_path": self._schema} if self._schema else None
        try:
            self._pool = await asyncpg.create_pool(
                self._dsn,
                min_size=self._min,
                max_size=self._max,
                server_settings=settings,
                timeout=10,
            )
        except (
            OSError,
            TimeoutError,
            ValueError,
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
        ) as exc:
            raise self._unavailable(exc) from None

    async def close(self) -> None:
        """Close the pool, waiting up to 10 s for connections in use, then terminate them."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                await asyncio.wait_for(pool.close(), 10)
            except TimeoutError:
                pool.terminate()

    def _require_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise RuntimeError("PostgresUnitOfWork is not open; call open() first")
        return self._pool

    async def ping(self) -> None:
        """``SELECT 1`` on a pooled connection; raises on failure."""
        await self._require_pool().fetchval("SELECT 1")

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[PostgresTransaction]:
        async with self._require_pool().acquire() as conn:
            tx = PostgresTransaction(conn)
            await tx._start()
            try:
                yield tx
            finally:
                await asyncio.shield(tx._rollback())

    def begin(self) -> AbstractAsyncContextManager[PostgresTransaction]:
        """Start a unit of work on its own pooled connection (waits for a free one).

        ``async with uow.begin() as tx: ...; await tx.commit()``; leaving without ``commit()``
        rolls back.
        """
        return self._begin()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        async with self._require_pool().acquire() as conn:
            yield conn

    def login_attempts(self, max_age: float = 86_400.0) -> PostgresLoginAttempts:
        """A ``LoginAttempts`` in this database (shared by every worker process)."""
        return PostgresLoginAttempts(self, max_age)


class PostgresLoginAttempts:
    """``LoginAttempts`` in the ``login_failures`` table of a ``PostgresUnitOfWork``.

    ``max_age`` (s) bounds how long a failure is kept; it must exceed
    ``auth.login_failure_window``. Each call is its own short statement or transaction.
    """

    def __init__(self, uow: PostgresUnitOfWork, max_age: float = 86_400.0) -> None:
        self._uow = uow
        self._max_age = timedelta(seconds=max_age)

    async def failures_since(self, key: str, since: datetime) -> list[datetime]:
        """Failures of ``key`` at or after ``since``, oldest first."""
        async with self._uow._connection() as conn:
            rows: Iterable[asyncpg.Record] = await conn.fetch(
                "SELECT at FROM login_failures WHERE key = $1 AND at >= $2 ORDER BY at, id",
                key,
                require_aware(since),
            )
        return [r[0] for r in rows]

    async def record_failure(self, key: str, at: datetime) -> None:
        """Record one failure of ``key`` at ``at``; forget failures older than ``max_age``."""
        require_aware(at)
        async with self._uow._connection() as conn, conn.transaction():
            await conn.execute("INSERT INTO login_failures (key, at) VALUES ($1, $2)", key, at)
            await conn.execute("DELETE FROM login_failures WHERE at < $1", at - self._max_age)

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key``."""
        async with self._uow._connection() as conn:
            await conn.execute("DELETE FROM login_failures WHERE key = $1", key)
