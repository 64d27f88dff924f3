"""The SQLite unit-of-work connection: storage faults translated (``StorageFault``, contract
section 12, ADR 0014), row converters, and the query helpers every repository uses."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import aiosqlite

from adapters.persistence._rows import from_micros, to_micros
from adapters.persistence.purge_sql import bounded_delete
from domain.errors import StorageFault
from domain.model import Group, GroupSummary, RefreshToken, Role, Session, User

if TYPE_CHECKING:
    from adapters.persistence.sqlite.storage import SqliteStorage


def _user(row: Iterable[Any]) -> User:
    id_, email, password_hash, role, org_id, created_at, disabled, verified, mfa, keys = row
    return User(
        id_,
        email,
        password_hash,
        Role(role),
        org_id,
        from_micros(created_at),
        bool(disabled),
        bool(verified),
        bool(mfa),
        int(keys),
    )


def _session(row: Iterable[Any]) -> Session:
    id_, user_id, created_at, last_used_at, expires_at, user_agent, client_address, client = row
    return Session(
        id_,
        user_id,
        from_micros(created_at),
        from_micros(last_used_at),
        from_micros(expires_at),
        user_agent,
        client_address,
        client,
    )


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


log = logging.getLogger("authsvc.storage")

WRITE_FAULT_CODES = {
    sqlite3.SQLITE_FULL: "the disk is full",
    sqlite3.SQLITE_READONLY: "the database is read-only",
    sqlite3.SQLITE_IOERR: "a disk I/O error occurred",
    sqlite3.SQLITE_CANTOPEN: "the database file cannot be opened",
}
"""Primary SQLite result codes meaning the file cannot be written now: ``StorageFault`` with
``Retry-After`` ``WRITE_RETRY_AFTER``, and readiness DOWN until a probe write succeeds."""

BUSY_CODES = {
    sqlite3.SQLITE_BUSY: "the database is locked by another writer",
    sqlite3.SQLITE_LOCKED: "the database is locked by another writer",
}
"""Contention that outlasted the busy timeout: ``StorageFault`` with ``Retry-After``
``BUSY_RETRY_AFTER``; readiness is not affected (the next unit may well get the lock)."""

WRITE_RETRY_AFTER = 5
"""``Retry-After`` (s) for a file that cannot be written: an operator has to act."""
BUSY_RETRY_AFTER = 1
"""``Retry-After`` (s) for a lock held past the busy timeout."""

_PROBE = "authsvc-write-probe:" + "0" * 8192
"""The key of the probe row: 8 KiB, so that inserting it needs new pages (a full disk or a
page limit shows), unlike a row that fits in a page already there."""


def _primary(exc: sqlite3.Error) -> int:
    """The primary result code of a driver error (its extended code's low byte); 0 for an
    error the sqlite3 module raised by itself (a closed connection ...)."""
    return int(getattr(exc, "sqlite_errorcode", 0)) & 0xFF


def storage_fault(exc: sqlite3.Error) -> tuple[StorageFault, bool] | None:
    """The ``StorageFault`` for a driver error that means "cannot write or use the file now"
    (by its primary result code), with whether it is a write fault rather than contention; None
    for any other error (a constraint, a programming error), which the caller handles or lets
    through."""
    primary = _primary(exc)
    if primary in WRITE_FAULT_CODES:
        detail = f"the database cannot write now: {WRITE_FAULT_CODES[primary]}"
        return StorageFault(detail, WRITE_RETRY_AFTER), True
    if primary in BUSY_CODES:
        return StorageFault(f"{BUSY_CODES[primary]}; retry", BUSY_RETRY_AFTER), False
    return None


def _rowcount(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> int:
    return max(0, conn.execute(sql, args).rowcount)


class _Statements:
    """What every unit shares: its storage and the fault translation. After a storage fault the
    unit is finished (its transaction rolled back) and every later statement raises the same
    ``StorageFault``."""

    def __init__(self, storage: SqliteStorage) -> None:
        self._storage = storage
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
            self._storage._record_fault(exc, self._fault, is_write_fault)
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


class _Unit(_Statements):
    """The connections one unit of work runs on (ADR 0022). Each transaction begins on the
    storage's writer, a ``sqlite3`` connection used on the event loop's thread, when it gets the
    write lock at once; then every statement of that transaction runs there (it holds the lock:
    no statement can wait). When another process holds the lock, the transaction runs on the
    aiosqlite connection instead, whose thread waits up to the busy timeout.

    Every statement goes through ``fetchall`` or ``count``, which begin the next transaction
    after a commit and turn storage faults into ``StorageFault``."""

    def __init__(
        self, storage: SqliteStorage, conn: aiosqlite.Connection, writer: sqlite3.Connection
    ) -> None:
        super().__init__(storage)
        self.conn = conn
        self._writer = writer

    def in_transaction(self) -> bool:
        """Whether a transaction of this unit is open."""
        return self._writer.in_transaction or self.conn.in_transaction

    async def _start(self, sql: str) -> None:
        try:
            self._writer.execute(sql)  # busy timeout 0: the lock now, or busy
            return
        except sqlite3.OperationalError as exc:
            if _primary(exc) not in BUSY_CODES:
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
                if _primary(exc) != sqlite3.SQLITE_READONLY:
                    raise
                fault, _ = storage_fault(exc) or (StorageFault(), True)
                self._storage._record_fault(exc, fault, True)
                await self._start("BEGIN")

    async def fetchall(self, sql: str, args: tuple[Any, ...]) -> Iterable[Any]:
        """Run one statement in the unit's transaction (begun first if a commit ended it);
        its rows."""
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
        self._storage._write_fault = None
        if on_writer:
            await self._storage._committed_on_writer()


class _ReadUnit(_Statements):
    """A read-only unit (``SqliteStorage.read()``): each statement on its own (autocommit), on
    the storage's reader, a second connection used on the event loop's thread. An indexed read
    takes microseconds there, less than a hop to aiosqlite's thread costs; WAL lets it read
    beside a writer, so it takes no lock and waits for no unit of work. Should the file be busy
    all the same (a WAL reset under way), the statement goes through the storage's aiosqlite
    connection instead, which waits up to the busy timeout without blocking the loop.
    ``commit()`` does nothing: nothing is written."""

    def __init__(self, storage: SqliteStorage, reader: sqlite3.Connection) -> None:
        super().__init__(storage)
        self._reader = reader

    async def fetchall(self, sql: str, args: tuple[Any, ...]) -> Iterable[Any]:
        """The statement's rows, read on the loop's thread (see the class)."""
        with self.translated():
            try:
                return self._reader.execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                if _primary(exc) not in BUSY_CODES:
                    raise
            async with self._storage._locked() as conn:
                return await conn.execute_fetchall(sql, args)

    async def count(self, sql: str, args: tuple[Any, ...], *, bulk: bool = False) -> int:
        """Writes are refused: ``RuntimeError`` (use ``SqliteStorage.begin()``)."""
        raise RuntimeError("a read-only unit cannot write")

    async def commit(self) -> None:
        """Nothing to commit in a read-only unit."""


class _SqlQueries:
    """Query helpers over a unit (``_Unit`` or ``_ReadUnit``): every statement is one
    ``fetchall`` or ``count`` (on aiosqlite, one hop to its thread, ~0.1 ms, where cursor +
    fetch + close would be three)."""

    def __init__(self, unit: _Statements) -> None:
        self._u = unit

    async def _all(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        return list(await self._u.fetchall(sql, tuple(params)))

    async def _one(self, sql: str, params: Iterable[Any] = ()) -> Any:
        rows = await self._all(sql, params)
        return rows[0] if rows else None

    async def _count(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Run an INSERT, UPDATE or DELETE; the rows it changed (``_Unit.count``)."""
        return await self._u.count(sql, tuple(params))

    async def _purge(self, sql: str, params: Iterable[Any] = ()) -> int:
        """``_count`` for a statement with no bound on its rows (housekeeping's purges)."""
        return await self._u.count(sql, tuple(params), bulk=True)

    async def _purge_where(
        self, table: str, condition: str, params: Iterable[Any], limit: int | None
    ) -> int:
        """Delete up to ``limit`` rows (all with None) of ``table`` meeting ``condition``
        (``purge_sql.bounded_delete``); the rows deleted."""
        return await self._purge(bounded_delete("sqlite", table, condition, limit), params)
