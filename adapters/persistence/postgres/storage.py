"""The PostgreSQL ``Storage``: the pool, migrations, units of work, the health ping, and the
failed-login counts."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from adapters.persistence.errors import StorageUnavailable, redact_dsn, safe_reason
from adapters.persistence.migrate import apply_postgres_migrations, validate_schema_name
from adapters.persistence.postgres.connections import ConnectionSource
from adapters.persistence.postgres.faults import DSN_KEY
from adapters.persistence.postgres.pool_log import install_pool_log_filter
from adapters.persistence.postgres.unit import PostgresUnit
from adapters.persistence.sql import login_attempts
from adapters.persistence.sql.unit_of_work import SqlUnitOfWork
from adapters.persistence.times import require_aware
from application.ports import AttemptClaim, LoginAttempts, Storage

PING_TIMEOUT = 1.0
"""Seconds the health ``ping`` may take to connect and to run ``SELECT 1`` (each): readiness
turns DOWN within about this long of an outage (docs/reference/operations.md)."""


class PostgresStorage(Storage):
    """``Storage`` over a PostgreSQL database.

    ``dsn``: a ``postgresql://`` URI. ``min_size``/``max_size``: the asyncpg pool's bounds
    (``storage.pool_min_size``/``pool_max_size``). ``schema``: tables live in this schema
    (created by the migrations; used by tests to isolate runs), else the DSN's default
    ``search_path``. ``open()`` applies migrations then creates the pool; it raises
    ``StorageUnavailable`` (naming ``storage.postgres_dsn``, the reason and the redacted DSN) if
    the DSN is malformed or the server cannot be reached. Once open, losing the server is a
    ``StorageFault`` per request, never a restart: the pool reconnects as the server comes back.
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
        self._connections = ConnectionSource(dsn)  # its sessions draw from it
        self._opened = False
        self._ping_conn: Any = None
        self._ping_lock = asyncio.Lock()

    def _unavailable(self, exc: BaseException) -> StorageUnavailable:
        return StorageUnavailable(DSN_KEY, safe_reason(exc, self._dsn), redact_dsn(self._dsn))

    def _server_settings(self) -> dict[str, str] | None:
        return {"search_path": self._schema} if self._schema else None

    async def open(self) -> None:
        """Apply pending migrations (in a thread), then create the pool."""
        if self._opened:
            return
        await asyncio.to_thread(apply_postgres_migrations, self._dsn, self._schema)
        install_pool_log_filter()
        try:
            pool = await asyncpg.create_pool(
                self._dsn,
                min_size=self._min,
                max_size=self._max,
                server_settings=self._server_settings(),
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
        self._connections.attach(pool)
        self._opened = True

    async def close(self) -> None:
        """Close the pool, waiting up to 10 s for connections in use, then terminate them; close
        the health check's connection."""
        self._drop_ping_connection()
        pool = self._connections.detach()
        self._opened = False
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), 10)
            except TimeoutError:
                pool.terminate()

    def _drop_ping_connection(self) -> None:
        conn, self._ping_conn = self._ping_conn, None
        if conn is not None:
            conn.terminate()

    async def ping(self) -> None:
        """``SELECT 1`` on a connection of its own, outside the pool (so a busy pool never
        makes the service look DOWN, and no broken pooled connection makes it look DOWN
        after the server is back): connected on first use and again after any failure,
        each step limited to ``PING_TIMEOUT`` seconds. Raises the driver's error, or
        ``TimeoutError``; ``RuntimeError`` when not open."""
        self._connections.require_pool()
        async with self._ping_lock:
            try:
                if self._ping_conn is None or self._ping_conn.is_closed():
                    self._drop_ping_connection()
                    self._ping_conn = await asyncpg.connect(
                        self._dsn, timeout=PING_TIMEOUT, server_settings=self._server_settings()
                    )
                await self._ping_conn.fetchval("SELECT 1", timeout=PING_TIMEOUT)
            except BaseException:  # cancelled by the indicator's time limit included
                self._drop_ping_connection()
                raise

    @asynccontextmanager
    async def _session(self, *, transactional: bool) -> AsyncIterator[PostgresUnit]:
        conn = await self._connections.acquire()
        session = PostgresUnit(self._connections, conn, transactional=transactional)
        try:
            yield session
        finally:
            await asyncio.shield(session.close())

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[SqlUnitOfWork]:
        async with self._session(transactional=True) as session:
            yield SqlUnitOfWork(session)

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[SqlUnitOfWork]:
        async with self._session(transactional=False) as session:
            yield SqlUnitOfWork(session)

    def read(self) -> AbstractAsyncContextManager[SqlUnitOfWork]:
        """A read-only unit on a pooled connection without a transaction: each statement is
        its own snapshot and one round trip. Nothing may be written through it."""
        return self._read()

    def begin(self) -> AbstractAsyncContextManager[SqlUnitOfWork]:
        """Start a unit of work on its own pooled connection (waits for a free one).

        ``async with storage.begin() as uow: ...; await uow.commit()``; leaving without ``commit()``
        rolls back. Raises ``StorageFault`` when no connection can be made.
        """
        return self._begin()

    def login_attempts(self, max_age: float = 86_400.0) -> PostgresLoginAttempts:
        """A ``LoginAttempts`` in this database (shared by every worker process)."""
        return PostgresLoginAttempts(self, max_age)


_CLAIM_LOCK_CLASS = 0x6C6F6769  # "logi": the advisory-lock class of login-attempt claims


class PostgresLoginAttempts(LoginAttempts):
    """``LoginAttempts`` in the ``login_failures`` table of a ``PostgresStorage``.

    ``max_age`` (s) bounds how long a failure is kept; it must exceed
    ``auth.login_failure_window``. Each call is its own short statement or transaction.
    """

    def __init__(self, storage: PostgresStorage, max_age: float = 86_400.0) -> None:
        self._storage = storage
        self._max_age = timedelta(seconds=max_age)

    async def claim(self, key: str, at: datetime, since: datetime, limit: int) -> AttemptClaim:
        """Count ``key``'s records since ``since`` and, below ``limit``, insert one at ``at`` —
        in one transaction holding a transaction-scoped advisory lock on the key, so claims
        on one key from every connection, process and instance are serialized (READ
        COMMITTED: each sees the rows the one before committed); forget records older than
        ``max_age``. Raises ``StorageFault``."""
        require_aware(at)
        require_aware(since)

        async def op(conn: Any) -> AttemptClaim:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))",
                                   _CLAIM_LOCK_CLASS, key)  # fmt: skip
                rows = await conn.fetch(
                    login_attempts.SINCE,
                    key,
                    since,
                )
                counted = tuple(r[0] for r in rows)
                if len(counted) >= limit:
                    return AttemptClaim(None, counted)
                attempt_id = await conn.fetchval(login_attempts.CLAIM, key, at)
                await conn.execute(login_attempts.FORGET_BEFORE, at - self._max_age)
            return AttemptClaim(int(attempt_id), tuple(sorted([*counted, at])))

        async with self._storage._session(transactional=False) as session:
            claimed: AttemptClaim = await session.run(op, write=True)
        return claimed

    async def release(self, key: str, attempt_id: int) -> None:
        """Forget the record ``attempt_id`` of ``key``. Raises ``StorageFault``."""
        async with self._storage._session(transactional=False) as session:
            await session.run(
                lambda c: c.execute(login_attempts.RELEASE, key, attempt_id),
                write=True,
            )

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key``. Raises ``StorageFault``."""
        async with self._storage._session(transactional=False) as session:
            await session.run(lambda c: c.execute(login_attempts.RESET, key), write=True)
