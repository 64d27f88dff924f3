"""The SQLite ``Storage``: one connection for units of work and a reader for read-only units,
migrations, the readiness probe, and the failed-login counts."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

import aiosqlite

from adapters.persistence.errors import StorageUnavailable
from adapters.persistence.migrate import apply_sqlite_migrations, prepare_sqlite_path
from adapters.persistence.sql import login_attempts
from adapters.persistence.sql.unit_of_work import SqlUnitOfWork
from adapters.persistence.sqlite.faults import PROBE_KEY, FaultRecorder, log
from adapters.persistence.sqlite.unit import SqliteReadUnit, SqliteWriteUnit
from adapters.persistence.times import from_micros, require_aware, to_micros
from application.ports import AttemptClaim, LoginAttempts, Storage

CHECKPOINT_EVERY = 200
"""Commits on the writer between two WAL checkpoints (SQLite's automatic one comes after about
1,000 pages; a rotation writes a few)."""


class SqliteStorage(Storage):
    """``Storage`` over one SQLite file (``path``; ``~`` expanded, parent made mode 0700).

    ``busy_timeout_ms``: how long a unit waits for another process's write lock before failing
    with ``sqlite3.OperationalError`` ("database is locked"). ``open()`` applies migrations, then
    connects; ``begin()`` before ``open()`` raises ``RuntimeError``. Do not nest ``begin()`` in
    one task (it would wait for itself).
    """

    def __init__(self, path: str, busy_timeout_ms: int = 5000) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._conn: aiosqlite.Connection | None = None
        self._writer: sqlite3.Connection | None = None  # units of work, on the loop's thread
        self._reader: sqlite3.Connection | None = None  # read() units, on the loop's thread
        self._commits = 0  # on the writer since the last checkpoint
        self._lock = asyncio.Lock()
        self._faults = FaultRecorder()  # its units report their faults to it

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
        plain: list[sqlite3.Connection] = []  # the writer and the reader (ADR 0022)
        writes = ("foreign_keys = ON", "synchronous = NORMAL")  # both connections that write
        try:
            busy = f"busy_timeout = {int(self._busy_timeout_ms)}"
            for pragma in ("journal_mode = WAL", busy, *writes):
                await conn.execute(f"PRAGMA {pragma}")
            for _ in range(2):
                plain.append(
                    sqlite3.connect(db, timeout=0, isolation_level=None, check_same_thread=False)
                )
            writer, reader = plain
            for pragma in (*writes, "wal_autocheckpoint = 0"):  # see _committed_on_writer
                writer.execute(f"PRAGMA {pragma}")
            reader.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            for opened in plain:
                opened.close()
            await conn.close()
            raise StorageUnavailable("storage.sqlite_path", str(exc), str(db)) from None
        self._conn, self._writer, self._reader = conn, writer, reader

    async def close(self) -> None:
        """Close the connections (waits for a running unit of work to finish)."""
        async with self._lock:
            for plain in (self._writer, self._reader):
                if plain is not None:
                    plain.close()
            self._writer = self._reader = None
            if self._conn is not None:
                conn, self._conn = self._conn, None
                await conn.close()

    async def ping(self) -> None:
        """``SELECT 1``; after a write fault (disk full, read-only, I/O error) also a probe: a
        row of 8 KiB inserted and deleted in one committed transaction. Raises ``RuntimeError``
        when not open, ``sqlite3.Error`` when the query fails, ``StorageFault`` while the probe
        cannot commit (a successful probe or commit ends the fault)."""
        async with self._locked() as conn:
            async with conn.execute("SELECT 1") as cur:
                await cur.fetchone()
            if not self._faults.healthy():
                await self._probe_write(conn)

    async def _probe_write(self, conn: aiosqlite.Connection) -> None:
        unit = self._unit(conn)
        try:
            await unit.count(login_attempts.INSERT, (PROBE_KEY, 0))
            await unit.count(login_attempts.RESET, (PROBE_KEY,))
            await unit.commit()
        finally:
            await self._rollback(conn)

    def _unit(self, conn: aiosqlite.Connection) -> SqliteWriteUnit:
        if self._writer is None:
            raise RuntimeError("SqliteStorage is not open; call open() first")
        return SqliteWriteUnit(self._faults, conn, self._writer, self._committed_on_writer)

    async def _committed_on_writer(self) -> None:
        """Count a commit on the writer; every ``CHECKPOINT_EVERY`` commits, checkpoint the WAL
        (``PASSIVE``: it waits for nobody) on aiosqlite's thread, where its disk writes and
        fsync cannot hold up the loop. The writer's own automatic checkpoint is off for that
        reason. A failed checkpoint is logged; the next one catches up."""
        self._commits += 1
        if self._commits < CHECKPOINT_EVERY or self._conn is None:
            return
        self._commits = 0
        try:
            await self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as exc:
            log.warning("WAL checkpoint failed: %s", exc)

    async def _rollback(self, conn: aiosqlite.Connection) -> None:
        """Roll back an open transaction; a failure is logged (SQLite rolls back by itself
        when it cannot go on), never raised."""
        if self._writer is not None and self._writer.in_transaction:
            try:
                self._writer.execute("ROLLBACK")
            except sqlite3.Error as exc:
                log.warning("rollback failed: %s", exc)
        if conn.in_transaction:
            try:
                await asyncio.shield(conn.execute("ROLLBACK"))
            except sqlite3.Error as exc:
                log.warning("rollback failed: %s", exc)

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            if self._conn is None:
                raise RuntimeError("SqliteStorage is not open; call open() first")
            yield self._conn

    @asynccontextmanager
    async def _write_unit(self) -> AsyncIterator[SqliteWriteUnit]:
        """A write unit holding the lock, its transaction begun (rolled back on leaving)."""
        async with self._locked() as conn:
            await self._rollback(conn)  # left over by a cancelled unit
            unit = self._unit(conn)
            await unit.begin()  # the write lock, from the start
            try:
                yield unit
            finally:
                await self._rollback(conn)

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[SqlUnitOfWork]:
        async with self._write_unit() as unit:
            yield SqlUnitOfWork(unit)

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[SqlUnitOfWork]:
        if self._reader is None:
            raise RuntimeError("SqliteStorage is not open; call open() first")
        yield SqlUnitOfWork(SqliteReadUnit(self._faults, self._reader, self._locked))

    def read(self) -> AbstractAsyncContextManager[SqlUnitOfWork]:
        """A read-only unit: each statement in autocommit on the storage's reader connection,
        on the event loop's thread, beside any unit of work (WAL; see ``SqliteReadUnit``, ADR 0022).
        Nothing may be written through it (the reader is ``query_only``)."""
        return self._read()

    def begin(self) -> AbstractAsyncContextManager[SqlUnitOfWork]:
        """Start a unit of work: ``async with storage.begin() as uow: ...; await uow.commit()``.

        Leaving without ``commit()`` rolls back. Waits for this process's other units, then for
        other processes' write locks (up to ``busy_timeout_ms``; then ``StorageFault``).
        """
        return self._begin()

    def login_attempts(self, max_age: float = 86_400.0) -> SqliteLoginAttempts:
        """A ``LoginAttempts`` sharing this file (so every worker process sees the same counts)."""
        return SqliteLoginAttempts(self, max_age)


class SqliteLoginAttempts(LoginAttempts):
    """``LoginAttempts`` in the ``login_failures`` table of a ``SqliteStorage``.

    ``max_age`` (s) bounds how long a failure is kept; it must exceed
    ``auth.login_failure_window``. Each call is its own short transaction.
    """

    def __init__(self, storage: SqliteStorage, max_age: float = 86_400.0) -> None:
        self._storage = storage
        self._max_age = timedelta(seconds=max_age)

    async def claim(self, key: str, at: datetime, since: datetime, limit: int) -> AttemptClaim:
        """Count ``key``'s records since ``since`` and, below ``limit``, insert one at ``at`` —
        in one write transaction (``begin()`` takes SQLite's write lock first, so claims from
        every process on this file are serialized); forget records older than ``max_age``."""
        require_aware(at)
        async with self._storage._write_unit() as unit:
            rows = await unit.fetchall(
                login_attempts.SINCE,
                (key, to_micros(since)),
            )
            counted = tuple(from_micros(r[0]) for r in rows)
            if len(counted) >= limit:
                return AttemptClaim(None, counted)
            [row] = await unit.fetchall(
                login_attempts.CLAIM,
                (key, to_micros(at)),
            )
            await unit.count(login_attempts.FORGET_BEFORE, (to_micros(at - self._max_age),))
            await unit.commit()
        return AttemptClaim(int(row[0]), tuple(sorted([*counted, at])))

    async def release(self, key: str, attempt_id: int) -> None:
        """Forget the record ``attempt_id`` of ``key``."""
        async with self._storage._write_unit() as unit:
            await unit.count(login_attempts.RELEASE, (key, attempt_id))
            await unit.commit()

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key``."""
        async with self._storage._write_unit() as unit:
            await unit.count(login_attempts.RESET, (key,))
            await unit.commit()
