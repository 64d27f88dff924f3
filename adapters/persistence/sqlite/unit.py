"""The SQLite units of work (a write unit, a read-only unit): statements with storage faults
translated (``StorageFault``, docs/reference/operations.md, ADR 0014); both offer the shared stores
``SqlQueries`` with SQLite's ``Dialect`` (ADR 0039)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any

import aiosqlite

from adapters.persistence.sql.dialect import Dialect, render
from adapters.persistence.sql.purge import bounded_delete
from adapters.persistence.sqlite.faults import (
    BUSY_CODES,
    FaultRecorder,
    primary_code,
    storage_fault,
)
from adapters.persistence.times import from_micros, to_micros
from domain.errors import StorageFault

_UNIQUE = {sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY}


def _violates(codes: set[int]) -> Callable[[BaseException], bool]:
    def check(exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and exc.sqlite_errorcode in codes

    return check


SQLITE = Dialect(
    "sqlite",
    to_db=to_micros,
    from_db=lambda micros: None if micros is None else from_micros(micros),
    bool_to_db=int,
    is_unique_violation=_violates(_UNIQUE),
    is_foreign_key_violation=_violates({sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY}),
    lock_rows="",
    skip_locked="",
)
"""SQLite's ``Dialect``: times as integer microseconds since the epoch, booleans as 0 or 1."""


def _rowcount(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> int:
    return max(0, conn.execute(sql, args).rowcount)


class SqliteUnit:
    """What every unit shares: the fault translation, reporting to the storage's ``FaultRecorder``.
    SqliteUnit are given with ``adapters.persistence.sql``'s ``$n`` placeholders (or SQLite's own);
    each is rendered for SQLite before it runs. After a storage fault the unit is finished (its
    transaction rolled back) and every later statement raises the same ``StorageFault``."""

    def __init__(self, faults: FaultRecorder) -> None:
        self._faults = faults
        self._fault: StorageFault | None = None

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Raise ``StorageFault`` in place of a driver error that is one."""
        if self._fault is not None:
            raise self._fault
        try:
            yield
        except sqlite3.Error as exc:
            found = storage_fault(exc)
            if found is None:
                raise
            self._fault, is_write_fault = found
            self._faults.record(exc, write_fault=is_write_fault)
            raise self._fault from None

    async def fetchall(self, sql: str, args: tuple[Any, ...]) -> Iterable[Any]:
        """Run one statement; its rows."""
        raise NotImplementedError

    async def count(self, sql: str, args: tuple[Any, ...], *, bulk: bool = False) -> int:
        """Run an INSERT, UPDATE or DELETE; the rows it changed."""
        raise NotImplementedError

    async def commit(self) -> None:
        """Commit what the unit did so far."""
        raise NotImplementedError

    # ``SqlQueries`` (adapters.persistence.sql.queries): every statement is one ``fetchall`` or
    # ``count`` (on aiosqlite, one hop to its thread, ~0.1 ms, where cursor + fetch + close
    # would be three). SQLite undoes a failed statement alone: no savepoint is needed.

    dialect = SQLITE

    async def all(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> list[Any]:
        """Every row of the statement (``SqlQueries.all``)."""
        return list(await self.fetchall(sql, tuple(params)))

    async def one(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> Any:
        """The first row of the statement, or None (``SqlQueries.one``)."""
        rows = list(await self.fetchall(sql, tuple(params)))
        return rows[0] if rows else None

    async def execute(self, sql: str, params: Sequence[Any] = (), *, guarded: bool = False) -> int:
        """Run an INSERT, UPDATE or DELETE; the rows it changed (``count``)."""
        return await self.count(sql, tuple(params))

    async def purge(
        self, table: str, condition: str, params: Sequence[Any], limit: int | None
    ) -> int:
        """Delete up to ``limit`` rows of ``table`` meeting ``condition`` (``bulk``: on a
        worker thread); the rows deleted."""
        return await self.count(
            bounded_delete("sqlite", table, condition, limit), tuple(params), bulk=True
        )


class SqliteWriteUnit(SqliteUnit):
    """The connections one unit of work runs on (ADR 0022). Each transaction begins on the
    storage's writer, a ``sqlite3`` connection used on the event loop's thread, when it gets the
    write lock at once; then every statement of that transaction runs there (it holds the lock:
    no statement can wait). When another process holds the lock, the transaction runs on the
    aiosqlite connection instead, whose thread waits up to the busy timeout.

    Every statement goes through ``fetchall`` or ``count``, which begin the next transaction
    after a commit and turn storage faults into ``StorageFault``. ``on_writer_commit`` is awaited
    after each commit on the writer (the storage's WAL checkpoints)."""

    def __init__(
        self,
        faults: FaultRecorder,
        conn: aiosqlite.Connection,
        writer: sqlite3.Connection,
        on_writer_commit: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(faults)
        self.conn = conn
        self._writer = writer
        self._on_writer_commit = on_writer_commit

    def in_transaction(self) -> bool:
        """Whether a transaction of this unit is open."""
        return self._writer.in_transaction or self.conn.in_transaction

    async def _start(self, sql: str) -> None:
        try:
            self._writer.execute(sql)  # busy timeout 0: the lock now, or busy
            return
        except sqlite3.OperationalError as exc:
            if primary_code(exc) not in BUSY_CODES:
                raise
        await self.conn.execute(sql)  # waits on aiosqlite's thread

    async def begin(self) -> None:
        """``BEGIN IMMEDIATE`` (waits up to the busy timeout for the write lock). On a read-only
        database a deferred ``BEGIN`` instead: reads are still served, writes raise
        ``StorageFault`` (and the fault counts for readiness)."""
        with self.translated():
            try:
                await self._start("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                if primary_code(exc) != sqlite3.SQLITE_READONLY:
                    raise
                self._faults.record(exc, write_fault=True)
                await self._start("BEGIN")

    async def fetchall(self, sql: str, args: tuple[Any, ...]) -> Iterable[Any]:
        """Run one statement in the unit's transaction (begun first if a commit ended it);
        its rows."""
        sql = render(sql, "sqlite")
        if not self.in_transaction():
            await self.begin()
        with self.translated():
            if self._writer.in_transaction:
                return self._writer.execute(sql, args).fetchall()
            rows: Iterable[Any] = await self.conn.execute_fetchall(sql, args)
            return rows

    async def count(self, sql: str, args: tuple[Any, ...], *, bulk: bool = False) -> int:
        """Run an INSERT, UPDATE or DELETE in the unit's transaction; the rows it changed (as
        ``rowcount``: direct changes only, not those of triggers or foreign-key actions). On the
        writer a ``bulk`` statement (a purge: no bound on its rows) runs on a worker thread, so
        a large one cannot hold up the loop; on aiosqlite, ``RETURNING 1`` counts the rows in
        the statement's one hop (a cursor would need a second one to close)."""
        sql = render(sql, "sqlite")
        if not self.in_transaction():
            await self.begin()
        with self.translated():
            if self._writer.in_transaction:
                if bulk:
                    return await asyncio.to_thread(_rowcount, self._writer, sql, args)
                return _rowcount(self._writer, sql, args)
            return len(list(await self.conn.execute_fetchall(sql + " RETURNING 1", args)))

    async def commit(self) -> None:
        """Commit what the unit did so far (the next statement begins the next transaction)."""
        if not self.in_transaction():
            return
        on_writer = self._writer.in_transaction
        with self.translated():
            if on_writer:
                self._writer.execute("COMMIT")
            else:
                await self.conn.execute("COMMIT")
        self._faults.committed()
        if on_writer:
            await self._on_writer_commit()


class SqliteReadUnit(SqliteUnit):
    """A read-only unit (``SqliteStorage.read()``): each statement on its own (autocommit), on
    the storage's reader, a second connection used on the event loop's thread. An indexed read
    takes microseconds there, less than a hop to aiosqlite's thread costs; WAL lets it read
    beside a writer, so it takes no lock and waits for no unit of work. Should the file be busy
    all the same (a WAL reset under way), the statement goes through the storage's aiosqlite
    connection instead (``fallback``: it lends the connection between units of work), which waits
    up to the busy timeout without blocking the loop. ``commit()`` does nothing: nothing is
    written."""

    def __init__(
        self,
        faults: FaultRecorder,
        reader: sqlite3.Connection,
        fallback: Callable[[], AbstractAsyncContextManager[aiosqlite.Connection]],
    ) -> None:
        super().__init__(faults)
        self._reader = reader
        self._fallback = fallback

    async def fetchall(self, sql: str, args: tuple[Any, ...]) -> Iterable[Any]:
        """The statement's rows, read on the loop's thread (see the class)."""
        sql = render(sql, "sqlite")
        with self.translated():
            try:
                return self._reader.execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                if primary_code(exc) not in BUSY_CODES:
                    raise
            async with self._fallback() as conn:
                return await conn.execute_fetchall(sql, args)

    async def count(self, sql: str, args: tuple[Any, ...], *, bulk: bool = False) -> int:
        """Writes are refused: ``RuntimeError`` (use ``SqliteStorage.begin()``)."""
        raise RuntimeError("a read-only unit cannot write")

    async def commit(self) -> None:
        """Nothing to commit in a read-only unit."""
